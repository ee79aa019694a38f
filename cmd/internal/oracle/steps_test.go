package oracle_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/internal/testutil"
)

// A step is one thing that happens: a person works the bot, an attendee
// or the owner changes something outside it, the service misbehaves, the
// bot restarts. Every choice is the seed's.

// pick chooses the next step.
func (w *world) pick() func() {
	type choice struct {
		weight int
		can    bool
		do     func()
	}
	t := w.truth
	choices := []choice{
		{40, true, w.createStep},
		{16, true, w.cancelStep},
		{6, true, w.pageBook},
		{5, len(t.live()) > 0, w.attendeeCancel},
		{6, len(t.live()) > 0, w.attendeeMove},
		{4, len(w.sb.Pending(owner)) > 0, w.confirmEmail},
		{4, len(t.live()) < 115, w.fill},
		{3, len(t.fillers()) > 0, w.unfill},
		{4, true, w.setting},
		{2, true, w.restart},
		{2, true, func() { w.killStep(bookingtest.EndpointCreateBooking) }},
		{1, len(t.live()) > 0, func() { w.killStep(bookingtest.EndpointCancelBooking) }},
		{3, len(t.rechecks) > 0, w.recheckStep},
		{2, len(t.reviews) > 0, w.markChecked},
		{2, true, w.jump},
	}
	total := 0
	for _, c := range choices {
		if c.can {
			total += c.weight
		}
	}
	n := w.rng.IntN(total)
	for _, c := range choices {
		if !c.can {
			continue
		}
		if n < c.weight {
			return c.do
		}
		n -= c.weight
	}
	panic("unreachable")
}

// one picks one of list.
func one[T any](w *world, list []T) T { return list[w.rng.IntN(len(list))] }

// fault is what the sandbox is told to do to a write, or to the lists
// around it.
type fault string

const (
	noFault     fault = ""
	fHTML       fault = "an HTML 5xx, nothing committed"
	fCommitHTML fault = "committed, then an HTML 5xx"
	fDrop       fault = "connection dropped, nothing committed"
	fCommitDrop fault = "committed, then the connection dropped"
	fCommitHang fault = "committed, then no answer until the bot gave up"
	fMalformed  fault = "committed, then a JSON body cut short"
	f409        fault = `409 {"status":409}`
	f409OK      fault = `409 {"status":200}`
	f429        fault = "429 without Retry-After"
	f403        fault = `403 {"error":"forbidden"}`
	f400        fault = `400 {"status":400}`
	f404        fault = `404 {"error":"no such event type"}`
	f413        fault = "413 in plain text"
)

// unclear reports whether the sandbox's answer leaves the outcome open:
// no answer, or one that is not the service's JSON.
func (f fault) unclear() bool {
	switch f {
	case fHTML, fCommitHTML, fDrop, fCommitDrop, fCommitHang, fMalformed:
		return true
	}
	return false
}

// queue tells the sandbox to do f to the next call of endpoint.
func (w *world) queue(endpoint string, f fault) {
	sb := w.sb
	switch f {
	case fHTML:
		sb.FailNext(endpoint, bookingtest.HTMLError(one(w, []int{http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout})))
	case fCommitHTML:
		sb.CommitThenFail(endpoint, bookingtest.HTMLError(http.StatusServiceUnavailable))
	case fDrop:
		sb.DropNext(endpoint)
	case fCommitDrop:
		sb.CommitThenDrop(endpoint)
	case fCommitHang:
		sb.CommitThenHang(endpoint)
	case fMalformed:
		sb.CommitThenFail(endpoint, bookingtest.MalformedJSON(http.StatusCreated))
	case f409:
		sb.FailNext(endpoint, bookingtest.JSONError(http.StatusConflict, "not booked", http.StatusConflict))
	case f409OK:
		sb.FailNext(endpoint, bookingtest.JSONError(http.StatusConflict, "not booked", http.StatusOK))
	case f429:
		sb.FailNext(endpoint, bookingtest.JSONError(http.StatusTooManyRequests, "not booked", http.StatusTooManyRequests))
	case f403:
		sb.FailNext(endpoint, bookingtest.JSONError(http.StatusForbidden, "forbidden", 0))
	case f400:
		sb.FailNext(endpoint, bookingtest.JSONError(http.StatusBadRequest, "not booked", http.StatusBadRequest))
	case f404:
		sb.FailNext(endpoint, bookingtest.JSONError(http.StatusNotFound, "no such event type", 0))
	case f413:
		sb.FailNext(endpoint, bookingtest.PlainText(http.StatusRequestEntityTooLarge, "request too large"))
	}
}

// failLists makes the next n reads of the bookings list fail.
func (w *world) failLists(n int) {
	for range n {
		w.sb.FailNext(bookingtest.EndpointListBookings, bookingtest.HTMLError(http.StatusServiceUnavailable))
	}
}

// readTries is how often the bot tries a read of the list before it gives
// up: four failures make it fail.
const readTries = 4

// plan is what the sandbox does to a write and the reads around it.
type plan struct {
	write  fault
	before int  // reads of the list failing before the write
	after  bool // the reads that settle the write fail
}

func (p plan) String() string {
	var s []string
	if p.write != noFault {
		s = append(s, string(p.write))
	}
	if p.before > 0 {
		s = append(s, fmt.Sprintf("%d list reads fail before", p.before))
	}
	if p.after {
		s = append(s, "the list reads after fail")
	}
	if len(s) == 0 {
		return "no fault"
	}
	return strings.Join(s, ", ")
}

func (w *world) plan(faults []fault) plan {
	var p plan
	if w.rng.IntN(2) == 0 {
		p.write = one(w, faults)
	}
	switch n := w.rng.IntN(20); {
	case n < 2:
		p.before = 1 + w.rng.IntN(readTries)
	case n < 4:
		p.after = true
	}
	return p
}

// The faults of a write, each as likely as the others but the hang, which
// costs a second of real time (writeTimeout).
var (
	createFaults = []fault{fHTML, fHTML, fCommitHTML, fCommitHTML, fDrop, fDrop, fCommitDrop, fCommitDrop, fCommitHang,
		fMalformed, fMalformed, f409, f409, f409OK, f409OK, f429, f429, f400, f400, f404, f404, f413, f413}
	cancelFaults = []fault{fHTML, fHTML, fCommitHTML, fCommitHTML, fDrop, fDrop, fCommitDrop, fCommitDrop, fCommitHang,
		f429, f429, f403, f403}
)

// send does p to the write to endpoint that submit starts: the faults
// queued before, the settling reads failed once it has arrived.
func (w *world) send(endpoint string, p plan, submit func()) {
	w.failLists(p.before)
	w.queue(endpoint, p.write)
	if !p.after {
		submit()
		return
	}
	release := w.sb.HoldNext(endpoint)
	defer release()
	submit()
	if w.arrived(endpoint) {
		w.failLists(readTries)
	}
}

// waitFor looks at cond every few milliseconds until it holds: for what the
// sandbox and the bot's journal do, which tell no one.
func (w *world) waitFor(what string, cond func() bool) {
	ctx, cancel := w.ctx()
	defer cancel()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			w.fatal("waiting for %s: %v", what, ctx.Err())
		case <-tick.C:
		}
	}
}

// arrived waits until a call of endpoint has reached the sandbox, or the
// bot's work has ended without one; it reports whether one came.
func (w *world) arrived(endpoint string) bool {
	idle := make(chan struct{})
	ctx, cancel := w.ctx()
	defer cancel()
	go func() {
		defer close(idle)
		_ = w.gen.app.Bot.Idle(ctx)
	}()
	came := false
	w.waitFor("a call of "+endpoint+" or the bot's work ending", func() bool {
		for _, r := range w.sb.Requests() {
			if r.Endpoint == endpoint {
				came = true
				return true
			}
		}
		select {
		case <-idle:
			return true
		default:
			return false
		}
	})
	return came
}

// Creates.

// createStep is a person booking through the form, as they mostly do, or
// at an edge: the attendee again at a time they had, two windows at once,
// a form left open, a time taken meanwhile.
func (w *world) createStep() {
	user := one(w, []string{ada, ada, bob})
	event := one(w, []string{"intro-call", "intro-call", "consultation", "consultation", "deep-dive", "office-hours"})
	switch n := w.rng.IntN(20); {
	case n < 2:
		w.twice(user, event)
	default:
		w.book(user, event, n)
	}
}

// book opens the form, picks a time and submits it; variant (0–19) picks
// the edge.
func (w *world) book(user, event string, variant int) {
	var again *attempt
	if variant >= 2 && variant < 4 {
		again = w.truth.earlier(w.rng)
		if again != nil {
			event = again.event
		}
	}
	v, ok := w.openForm(user, event, nil)
	if !ok {
		return
	}
	start := ""
	if again != nil {
		if v, ok = w.showDay(user, v, dayOf(again.at, user)); ok && slices.Contains(slotOptions(v), again.start) {
			start = again.start
		}
	}
	if start == "" {
		again = nil
		v = w.anyDay(user, v)
		start = one(w, slotOptions(v))
	}
	a := w.truth.attempt(user, event, start, w.email(again))
	a.note = w.rng.IntN(3) > 0
	if again != nil {
		a.variant = fmt.Sprintf("Guest %d's booking again", again.n)
	}
	p := w.plan(createFaults)
	a.fault = p.write
	switch variant {
	case 4:
		// The form was left open: its times are re-read at submit.
		w.clock.Advance(3 * time.Minute)
		a.variant = "form left open 3 minutes"
	case 5:
		// Someone takes the time on the booking page meanwhile.
		if id, err := w.sb.BookAsAttendee(owner, event, a.at, w.truth.walkIn(), w.truth.walkInEmail()); err == nil {
			w.truth.made(id, "page", "")
			a.variant = "time taken on the booking page meanwhile"
		}
	}
	w.note("create by %s: %s, %s plan: %s", user, a, a.variant, p)
	w.send(bookingtest.EndpointCreateBooking, p, func() { w.submit(a, v) })
}

// twice is two windows of the form at once, the same booking submitted
// from each, one after the other.
func (w *world) twice(user, event string) {
	first, ok := w.openForm(user, event, nil)
	if !ok {
		return
	}
	second, ok := w.openForm(user, event, map[string]bool{first.ID: true})
	if !ok {
		return
	}
	start := one(w, slotOptions(first))
	if !slices.Contains(slotOptions(second), start) {
		return
	}
	a := w.truth.attempt(user, event, start, w.email(nil))
	b := w.truth.attempt(user, event, start, a.email)
	b.variant = "the same booking from a second window"
	w.note("create by %s twice: %s, then %s", user, a, b)
	w.submit(a, first)
	w.idle()
	w.submit(b, second)
}

// email is a new attendee's address, or again's, or one the owner's block
// list refuses when it is on.
func (w *world) email(again *attempt) string {
	if again != nil {
		return again.email
	}
	n := w.truth.nextGuest
	if w.rng.IntN(10) == 0 {
		return fmt.Sprintf("guest%d@%s", n, blocked)
	}
	return fmt.Sprintf("guest%d@example.com", n)
}

// openForm types `/booking new event` and waits for its times; false when
// it shows none (the form is closed again).
func (w *world) openForm(user, event string, seen map[string]bool) (slacktest.View, bool) {
	if seen == nil {
		seen = map[string]bool{}
	}
	for _, v := range w.sl.ViewsFrom(w.views) {
		seen[v.ID] = true
	}
	w.slash(user, "new "+event)
	v := w.form(user, seen)
	if len(slotOptions(v)) == 0 {
		w.note("the form of %s by %s shows no times: %s", event, user, strings.ReplaceAll(textOf(v.Blocks), "\n", " "))
		ctx, cancel := w.ctx()
		defer cancel()
		if _, err := w.sl.Cancel(ctx, user, v.ID); err != nil {
			w.fatal("closing the form: %v", err)
		}
		return v, false
	}
	return v, true
}

// slotOptions are the times a form offers.
func slotOptions(v slacktest.View) []string {
	els := elements(v.Blocks, "slot")
	if len(els) == 0 {
		return nil
	}
	return optionValues(els[0])
}

// dayOf is the form's key of the day of t, in user's zone.
func dayOf(t time.Time, user string) string {
	return t.In(testutil.Zone(zoneOf[user])).Format(time.DateOnly)
}

// anyDay shows one of the form's days, picked at random.
func (w *world) anyDay(user string, v slacktest.View) slacktest.View {
	days := elements(v.Blocks, "slot_day")
	if len(days) == 0 {
		return v
	}
	shown, _ := w.showDay(user, v, one(w, optionValues(days[0])))
	return shown
}

// showDay picks day in the form's day select and waits for its times;
// false when the form does not offer that day.
func (w *world) showDay(user string, v slacktest.View, day string) (slacktest.View, bool) {
	days := elements(v.Blocks, "slot_day")
	if len(days) == 0 || !slices.Contains(optionValues(days[0]), day) {
		return v, false
	}
	if slotBlock(v) == "slot_"+day {
		return v, true
	}
	w.press(slacktest.BlockAction(user, "slot_day", day, slacktest.InView(v)))
	w.until("the form's times of "+day, func() bool {
		v = w.view(v.ID)
		return slotBlock(v) == "slot_"+day && ready(v)
	})
	return v, true
}

var attendeeZones = []string{"Europe/London", "America/New_York", "Asia/Tokyo", "Europe/Berlin"}

// submit fills the form with a's booking and submits it.
func (w *world) submit(a *attempt, v slacktest.View) {
	inputs := map[string]string{
		"slot":      a.start,
		"name":      a.name,
		"email":     a.email,
		"booker_tz": one(w, attendeeZones),
	}
	if a.note {
		inputs["note"] = "Agenda for " + a.name
	}
	ctx, cancel := w.ctx()
	defer cancel()
	ack, err := w.sl.SubmitInputs(ctx, a.user, v.ID, inputs)
	if err != nil {
		w.fatal("submitting %s: %v", a, err)
	}
	if strings.Contains(string(ack.Payload), `"errors"`) {
		w.note("the form refused %s: %s", a, ack.Payload)
		return
	}
	a.submitted = true
}

// Cancels.

// cancelStep is a person cancelling a booking by its ID: mostly an
// upcoming one, sometimes one beyond the first 100, one cancelled already
// or no booking at all.
func (w *world) cancelStep() {
	user := one(w, []string{ada, bob})
	id := w.cancelTarget()
	c := w.truth.cancel(user, id)
	p := w.plan(cancelFaults)
	c.fault = p.write
	w.note("cancel by %s: %s, plan: %s", user, c, p)
	confirm, ok := w.askCancel(c)
	if !ok {
		return
	}
	w.send(bookingtest.EndpointCancelBooking, p, func() {
		c.pressed = true
		w.press(slacktest.BlockAction(user, "cancel_booking", id, slacktest.InMessage(confirm)))
	})
}

func (w *world) cancelTarget() string {
	t := w.truth
	live, beyond, gone := t.live(), t.beyond(), t.gone()
	switch n := w.rng.IntN(20); {
	case n < 2 && len(beyond) > 0:
		return one(w, beyond)
	case n < 5 && len(gone) > 0:
		return one(w, gone)
	case n < 6:
		return "0000dead-0000-4000-8000-" + fmt.Sprintf("%012d", w.rng.IntN(1e9))
	case len(live) > 0:
		return one(w, live)
	}
	return bookingtest.OtherBookingID
}

// askCancel types `/booking cancel ID` and returns the confirmation it
// answers with, if it offers to cancel.
func (w *world) askCancel(c *cancelAttempt) (slacktest.Message, bool) {
	w.slash(c.user, "cancel "+c.id)
	w.idle()
	for _, m := range w.stepMessages() {
		if m.Kind == "response_url" && m.User == c.user && buttonValue(m.Blocks, "cancel_booking") == c.id {
			return m, true
		}
	}
	return slacktest.Message{}, false
}

// Restarts, and writes in flight when the bot stops.

func (w *world) restart() {
	w.note("restart")
	w.stop()
	w.start()
}

// killStep stops the bot as SIGKILL would while a create or a cancel is
// in flight, the sandbox committing it or not, and starts it again: the
// new process settles the write by the list and reports it.
func (w *world) killStep(endpoint string) {
	commit := w.rng.IntN(2) == 0
	var write func()
	switch endpoint {
	case bookingtest.EndpointCreateBooking:
		user, event := one(w, []string{ada, bob}), one(w, []string{"intro-call", "consultation", "deep-dive"})
		v, ok := w.openForm(user, event, nil)
		if !ok {
			return
		}
		v = w.anyDay(user, v)
		a := w.truth.attempt(user, event, one(w, slotOptions(v)), w.email(nil))
		a.killed, a.variant = true, "bookbot killed while it is in flight"
		w.note("create by %s: %s, killed in flight, committed: %v", user, a, commit)
		write = func() { w.submit(a, v) }
	default:
		live := w.truth.live()
		user := one(w, []string{ada, bob})
		c := w.truth.cancel(user, one(w, live))
		c.killed = true
		w.note("cancel by %s: %s, killed in flight, committed: %v", user, c, commit)
		confirm, ok := w.askCancel(c)
		if !ok {
			return
		}
		write = func() {
			c.pressed = true
			w.press(slacktest.BlockAction(user, "cancel_booking", c.id, slacktest.InMessage(confirm)))
		}
	}
	release := w.sb.HoldNext(endpoint)
	defer release()
	write()
	if !w.arrived(endpoint) {
		w.note("nothing was sent, so nothing is in flight")
		return
	}
	g := w.gen
	w.kill()
	if !commit {
		// Its connection dropped before the sandbox did anything.
		w.sb.DropNext(endpoint)
	}
	release()
	// The stopped process's write ends, answered or cut off, and reaches
	// its journal, which no longer records anything.
	w.waitFor("the stopped generation's write to reach its journal", func() bool { return g.journal.stuck() > 0 })
	w.start()
}

// Checking again, and marking reviews checked.

// recheckStep is a person pressing Check again on an unclear outcome.
func (w *world) recheckStep() {
	t := w.truth
	i := w.rng.IntN(len(t.rechecks))
	r := t.rechecks[i]
	t.rechecks = slices.Delete(t.rechecks, i, i+1)
	value := buttonValue(w.messageNow(r.msg).Blocks, "recheck")
	if value == "" {
		return
	}
	if w.rng.IntN(4) == 0 {
		w.failLists(readTries)
		w.note("check again by %s of Guest %d, the list reads failing", r.user, r.guest)
	} else {
		w.note("check again by %s of Guest %d", r.user, r.guest)
	}
	t.cur.recheck = r.guest
	w.press(slacktest.BlockAction(r.user, "recheck", value, slacktest.InMessage(r.msg)))
}

// markChecked is a reviewer marking a review checked: a create it held
// back may be sent again.
func (w *world) markChecked() {
	t := w.truth
	i := w.rng.IntN(len(t.reviews))
	r := t.reviews[i]
	t.reviews = slices.Delete(t.reviews, i, i+1)
	value := buttonValue(w.messageNow(r.msg).Blocks, "review_checked")
	if value == "" {
		return
	}
	w.note("%s marks a review checked: %s", r.user, r.msg.Text)
	w.press(slacktest.BlockAction(r.user, "review_checked", value, slacktest.InMessage(r.msg)))
}

// messageNow is m as it reads now: a reply may have replaced it.
func (w *world) messageNow(m slacktest.Message) slacktest.Message {
	var now slacktest.Message
	for _, n := range w.sl.MessagesFrom(0) {
		if n.TS == m.TS && n.Kind != "delete" {
			now = n
		}
	}
	return now
}

// Outside bookbot: attendees on the booking page and in their mail, the
// owner's settings, and time.

func (w *world) pageBook() {
	event := one(w, []string{"intro-call", "consultation", "deep-dive"})
	slots := w.sb.Slots(owner, event)
	if len(slots) == 0 {
		return
	}
	s := one(w, slots)
	name, email := w.truth.walkIn(), w.truth.walkInEmail()
	id, err := w.sb.BookAsAttendee(owner, event, s.Start, name, email)
	if err != nil {
		w.note("%s could not book %s on the page: %v", name, event, err)
		return
	}
	w.truth.made(id, "page", "")
	w.note("%s books %s %s on the booking page: %s", name, event, s.Start.UTC().Format(time.RFC3339), id)
}

func (w *world) attendeeCancel() {
	id := one(w, w.truth.live())
	if err := w.sb.CancelAsAttendee(id); err != nil {
		w.fatal("cancelling %s as its attendee: %v", id, err)
	}
	w.truth.cancelledOutside(id)
	w.note("the attendee of %s cancels it", id)
}

func (w *world) attendeeMove() {
	id := one(w, w.truth.live())
	b := w.truth.now[id]
	if b.EventType == nil {
		return
	}
	slots := w.sb.Slots(owner, *b.EventType)
	if len(slots) == 0 {
		return
	}
	to := one(w, slots).Start
	if err := w.sb.MoveAsAttendee(id, to); err != nil {
		w.note("the attendee of %s could not move it: %v", id, err)
		return
	}
	w.truth.moved(id)
	w.note("the attendee of %s moves it to %s", id, to.UTC().Format(time.RFC3339))
}

func (w *world) confirmEmail() {
	p := one(w, w.sb.Pending(owner))
	id, err := w.sb.ConfirmEmail(owner, *p.EventType, p.Start, *p.BookerEmail)
	if err != nil {
		w.note("%s follows the confirmation link for %s: %v", *p.BookerEmail, p.Start.UTC().Format(time.RFC3339), err)
		return
	}
	w.truth.made(id, "email", "")
	w.note("%s follows the confirmation link for %s: %s", *p.BookerEmail, p.Start.UTC().Format(time.RFC3339), id)
}

// fill adds bookings at night, as other tools of the owner's do, so that
// the list's first 100 end before the times people book.
func (w *world) fill() {
	ids := w.addFillers(1 + w.rng.IntN(8))
	for _, id := range ids {
		w.truth.made(id, "filler", "")
	}
	w.note("another tool adds %d bookings at night", len(ids))
}

// addFillers adds up to n bookings at night, each at a time no other
// takes, and returns their IDs.
func (w *world) addFillers(n int) []string {
	berlin := testutil.Zone("Europe/Berlin")
	var ids []string
	for range n {
		d := w.clock.Now().In(berlin)
		day := time.Date(d.Year(), d.Month(), d.Day()+1+w.rng.IntN(12), 0, 0, 0, 0, berlin)
		start := day.Add(time.Duration(w.rng.IntN(28)) * 15 * time.Minute)
		if w.truth.startTaken(start) {
			continue
		}
		name := w.truth.filler()
		ids = append(ids, w.sb.AddBooking(owner, bookingtest.Booking{
			EventType: testutil.Ptr("intro-call"), Start: start,
			BookerName: testutil.Ptr(name), BookerEmail: testutil.Ptr(strings.ToLower(strings.ReplaceAll(name, " ", "")) + "@example.org"),
		}))
	}
	return ids
}

func (w *world) unfill() {
	fillers := w.truth.fillers()
	n := min(len(fillers), 1+w.rng.IntN(8))
	for _, i := range w.rng.Perm(len(fillers))[:n] {
		id := fillers[i]
		if err := w.sb.CancelAsAttendee(id); err != nil {
			w.fatal("cancelling %s: %v", id, err)
		}
		w.truth.cancelledOutside(id)
	}
	w.note("another tool cancels %d of its bookings", n)
}

// setting changes what the owner set in the web application.
func (w *world) setting() {
	t := w.truth
	switch w.rng.IntN(4) {
	case 0:
		if t.ceiling {
			w.sb.SetCeiling(owner, -1)
			w.note("the owner lifts the ceiling of bookings")
		} else {
			n := t.upcoming() + w.rng.IntN(3)
			w.sb.SetCeiling(owner, n)
			w.note("the owner sets a ceiling of %d bookings", n)
		}
		t.ceiling = !t.ceiling
	case 1:
		if t.blocking {
			w.sb.SetBlocked(owner)
			w.note("the owner empties the block list")
		} else {
			w.sb.SetBlocked(owner, blocked)
			w.note("the owner blocks %s", blocked)
		}
		t.blocking = !t.blocking
	case 2:
		for _, et := range w.sb.EventTypes(owner) {
			if et.Slug == "consultation" {
				et.RequiresNote = !et.RequiresNote
				w.sb.AddEventType(owner, et)
				w.note("the consultation's note is now required: %v", et.RequiresNote)
			}
		}
	default:
		event := one(w, []string{"intro-call", "consultation", "deep-dive", "office-hours"})
		w.sb.ExhaustEventLimit(owner, event)
		w.note("the booking page's visitors use up the hour of %s", event)
	}
}

// jump lets an hour or two pass.
func (w *world) jump() {
	d := time.Duration(30+w.rng.IntN(120)) * time.Minute
	w.clock.Advance(d)
	w.note("%s pass", d)
}

package oracle_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/notices"
)

// truth is what the oracle knows happened: the sandbox's own record of
// every booking of the owner's calendar (what it committed), its request
// log (what it was asked and answered), and who made each change.
type truth struct {
	w *world

	now   map[string]bookingtest.Booking // the calendar's bookings as the sandbox holds them, cancelled ones too
	recs  map[string]*record
	order []string // booking IDs in the order first seen: picks are the seed's, not the IDs'

	attempts  []*attempt // Guest n is attempts[n-1]
	cancels   []*cancelAttempt
	nextGuest int
	walkIns   int
	fillerN   int

	cur *stepTruth
	// polled is the list as the notices' last read saw it.
	polled view

	// What people can press later: outcomes to check again, reviews to
	// mark checked.
	rechecks []pressable
	reviews  []pressable

	// The owner's settings, as the steps set them.
	ceiling, blocking bool
	// counted are the creates the sandbox counted against its limit per
	// address.
	counted []countedCreate
}

// record is what happened to one booking.
type record struct {
	id    string
	kind  string // seed, bot, page, email (an attendee's confirmation link), filler (another tool)
	actor string // bot: who asked
	guest int    // bot: the attempt that made it
	step  int    // when it was made; 0: before the notices' first read

	cancelled  string // "", "bot", "outside"
	cancelBy   string // bot: who asked
	cancelStep int
	moves      int

	told map[notices.Kind]int // notices of each kind
}

func (r *record) String() string {
	s := r.kind
	switch r.kind {
	case "bot":
		s = fmt.Sprintf("bookbot's create of Guest %d by %s", r.guest, r.actor)
	case "page":
		s = "an attendee on the booking page"
	case "email":
		s = "an attendee's email confirmation link"
	case "filler":
		s = "another tool"
	case "seed":
		s = "the sandbox's seed"
	}
	return fmt.Sprintf("%s (made %s at step %d)", r.id, s, r.step)
}

// attempt is one submission of the booking form.
type attempt struct {
	n                  int
	step               int
	user               string
	event, start, name string
	at                 time.Time
	email              string
	note               bool
	fault              fault
	variant            string // the edge it meets, for the step log
	killed             bool   // the bot was stopped with it in flight
	submitted          bool   // the form took it

	posted       bool      // its POST /bookings reached the sandbox
	sent         time.Time // when, by the sandbox's clock
	status       int       // the sandbox's answer to it (0: none)
	committed    string
	settleFailed bool   // every list read after its POST failed
	prior        string // a live booking of its event, start and attendee before its step

	told []string
}

func (a *attempt) String() string {
	return fmt.Sprintf("Guest %d, %s %s <%s>", a.n, a.event, a.start, a.email)
}

// matches reports whether b is a booking of a's event, start and attendee
// email, as the API matches them.
func (a *attempt) matches(b bookingtest.Booking) bool {
	return b.EventType != nil && *b.EventType == a.event && b.Start.Equal(a.at) &&
		b.BookerEmail != nil && strings.EqualFold(*b.BookerEmail, a.email)
}

// unclear reports whether the sandbox's answer to it left the outcome
// open: none came before the bot stopped, or the one that came was not
// the service's JSON.
func (a *attempt) unclear() bool { return a.killed || a.fault.unclear() }

// cancelAttempt is one press of Cancel booking.
type cancelAttempt struct {
	step   int
	user   string
	id     string
	fault  fault
	killed bool

	pressed bool // Cancel booking was pressed
	live    bool // not cancelled, not started, before the press
	listed  bool // among the first 100 the list shows, before the press

	posted       bool
	status       int
	preFailed    bool // every list read before its POST failed
	settleFailed bool

	told []string
}

func (c *cancelAttempt) String() string {
	return fmt.Sprintf("booking %s (live %v, among the first 100 %v)", c.id, c.live, c.listed)
}

func (c *cancelAttempt) unclear() bool { return c.killed || c.fault.unclear() }

// stepTruth is one step's share.
type stepTruth struct {
	before   map[string]bookingtest.Booking
	first100 map[string]bool // listed before the step
	attempts []*attempt
	cancel   *cancelAttempt
	recheck  int             // the Guest whose outcome is checked again
	moved    map[string]bool // by attendees, in the step
}

// pressable is a message with a button someone can press later.
type pressable struct {
	msg   slacktest.Message
	user  string
	guest int // the attempt it tells of, 0 for none
}

// countedCreate is a create the sandbox counted against its limit per
// address.
type countedCreate struct {
	at time.Time
}

func newTruth(w *world) *truth {
	return &truth{w: w, recs: map[string]*record{}, nextGuest: 1}
}

// refresh reads the sandbox's record of the calendar.
func (t *truth) refresh() {
	t.now = map[string]bookingtest.Booking{}
	for _, b := range t.w.sb.Bookings(owner) {
		t.now[b.ID] = b
	}
}

// baseline records the bookings the sandbox was seeded with.
func (t *truth) baseline() {
	t.refresh()
	// By start and name, not by ID: the sandbox draws IDs at random, and
	// the seed alone picks the steps.
	ids := slices.SortedFunc(maps.Keys(t.now), func(a, b string) int {
		if c := t.now[a].Start.Compare(t.now[b].Start); c != 0 {
			return c
		}
		return strings.Compare(str(t.now[a].BookerName), str(t.now[b].BookerName))
	})
	for _, id := range ids {
		kind := "seed"
		if strings.HasPrefix(str(t.now[id].BookerName), "Filler ") {
			kind = "filler"
		}
		t.recs[id] = &record{id: id, kind: kind, told: map[notices.Kind]int{}}
		t.order = append(t.order, id)
	}
}

func (t *truth) begin() {
	t.refresh()
	t.cur = &stepTruth{before: maps.Clone(t.now), first100: map[string]bool{}, moved: map[string]bool{}}
	for _, id := range t.first100() {
		t.cur.first100[id] = true
	}
}

// upcomingIDs are the live bookings that have not started, by start (then
// ID), as GET /bookings orders them.
func (t *truth) upcomingIDs() []string {
	now := t.w.clock.Now()
	var ids []string
	for id, b := range t.now {
		if !b.Cancelled && b.Start.After(now) {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b string) int {
		if c := t.now[a].Start.Compare(t.now[b].Start); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return ids
}

// first100 are the bookings GET /bookings shows now.
func (t *truth) first100() []string {
	ids := t.upcomingIDs()
	return ids[:min(len(ids), 100)]
}

// shows reports whether the list, as it is now, settles whether a booking
// starting at start exists: it is not full, or start lies before its last.
func (t *truth) shows(start time.Time) bool {
	if !start.After(t.w.clock.Now()) {
		return false // started: the list shows only what has not
	}
	ids := t.first100()
	return len(ids) < 100 || start.Before(t.now[ids[len(ids)-1]].Start)
}

func (t *truth) upcoming() int { return len(t.upcomingIDs()) }

// live are the bookings a person or an attendee can still cancel, in the
// order first seen.
func (t *truth) live() []string {
	now := t.w.clock.Now()
	var out []string
	for _, id := range t.order {
		if b, ok := t.now[id]; ok && !b.Cancelled && b.Start.After(now.Add(10*time.Minute)) {
			out = append(out, id)
		}
	}
	return out
}

// beyond are the live bookings the list does not show.
func (t *truth) beyond() []string {
	shown := map[string]bool{}
	for _, id := range t.first100() {
		shown[id] = true
	}
	return slices.DeleteFunc(t.live(), func(id string) bool { return shown[id] })
}

// gone are the cancelled bookings.
func (t *truth) gone() []string {
	var out []string
	for _, id := range t.order {
		if b, ok := t.now[id]; ok && b.Cancelled {
			out = append(out, id)
		}
	}
	return out
}

func (t *truth) fillers() []string {
	return slices.DeleteFunc(t.live(), func(id string) bool { return t.recs[id].kind != "filler" })
}

// startTaken reports whether a live booking starts at start.
func (t *truth) startTaken(start time.Time) bool {
	for _, b := range t.w.sb.Bookings(owner) {
		if !b.Cancelled && b.Start.Equal(start) {
			return true
		}
	}
	return false
}

// earlier is an earlier attempt to repeat, nil when there is none.
func (t *truth) earlier(rng *rand.Rand) *attempt {
	if len(t.attempts) == 0 {
		return nil
	}
	a := t.attempts[rng.IntN(len(t.attempts))]
	if a.event == "" || !a.at.After(t.w.clock.Now().Add(time.Hour)) {
		return nil
	}
	return a
}

// attempt is a new submission of the form, by user.
func (t *truth) attempt(user, event, start, email string) *attempt {
	at, err := time.Parse(time.RFC3339, start)
	if err != nil {
		t.w.fatal("the form offers a time %q that is not one", start)
	}
	a := &attempt{n: t.nextGuest, step: t.w.step, user: user, event: event, start: start, at: at, email: email}
	a.name = fmt.Sprintf("Guest %d", a.n)
	t.nextGuest++
	t.attempts = append(t.attempts, a)
	t.cur.attempts = append(t.cur.attempts, a)
	for id, b := range t.cur.before {
		if !b.Cancelled && a.matches(b) {
			a.prior = id
		}
	}
	return a
}

// cancel is a new press of Cancel booking for id, by user.
func (t *truth) cancel(user, id string) *cancelAttempt {
	b, ok := t.now[id]
	c := &cancelAttempt{step: t.w.step, user: user, id: id}
	c.live = ok && !b.Cancelled && b.Start.After(t.w.clock.Now())
	c.listed = t.cur.first100[id]
	t.cur.cancel = c
	t.cancels = append(t.cancels, c)
	return c
}

func (t *truth) walkIn() string {
	t.walkIns++
	return fmt.Sprintf("Walk-in %d", t.walkIns)
}

func (t *truth) walkInEmail() string { return fmt.Sprintf("walkin%d@example.net", t.walkIns) }

func (t *truth) filler() string {
	t.fillerN++
	return fmt.Sprintf("Filler %d", t.fillerN)
}

// made records a booking made outside bookbot.
func (t *truth) made(id, kind, actor string) {
	t.recs[id] = &record{id: id, kind: kind, actor: actor, step: t.w.step, told: map[notices.Kind]int{}}
	t.order = append(t.order, id)
}

func (t *truth) cancelledOutside(id string) {
	r := t.recs[id]
	r.cancelled, r.cancelStep = "outside", t.w.step
}

func (t *truth) moved(id string) {
	t.recs[id].moves++
	t.cur.moved[id] = true
}

// end reads what the step did to the calendar, tells each change to whoever
// made it, then holds every message of the step to it.
func (t *truth) end(reqs []bookingtest.Request) {
	w := t.w
	t.refresh()
	t.account(reqs)
	w.check(reqs)
}

// account gives every change of the step its maker: the steps record what
// they did outside bookbot; the rest must be bookbot's own writes, found
// in the sandbox's request log.
func (t *truth) account(reqs []bookingtest.Request) {
	w := t.w
	byName := map[string]*attempt{}
	for _, a := range t.cur.attempts {
		byName[a.name] = a
	}
	for i, r := range reqs {
		switch r.Endpoint {
		case bookingtest.EndpointCreateBooking:
			a := byName[r.Form.Get("name")]
			if a == nil {
				w.fatal("a create of %q reached the sandbox, and no one in this step asked for it", r.Form.Get("name"))
			}
			a.posted, a.status, a.sent = true, r.Status, r.At
			a.settleFailed = failedAfter(reqs, i)
			switch a.fault {
			case noFault, fCommitHTML, fCommitDrop, fCommitHang, fMalformed:
				// The sandbox counts what reaches its limits, refused
				// or not, but for a refusal of the address's limit.
				if r.Status != http.StatusTooManyRequests || !t.minuteFull(a) {
					t.counted = append(t.counted, countedCreate{at: r.At})
				}
			}
		case bookingtest.EndpointCancelBooking:
			c := t.cur.cancel
			if c == nil || !strings.HasSuffix(r.Path, "/bookings/"+c.id+"/cancel") {
				w.fatal("a cancel (%s) reached the sandbox, and no one in this step asked for it", r.Path)
			}
			c.posted, c.status = true, r.Status
			c.settleFailed = failedAfter(reqs, i)
			c.preFailed = failedBefore(reqs, i)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(t.now)) {
		b := t.now[id]
		was, existed := t.cur.before[id]
		rec := t.recs[id]
		if !existed && rec == nil {
			var maker *attempt
			for _, a := range t.cur.attempts {
				if b.BookerName != nil && *b.BookerName == a.name && a.posted && a.matches(b) {
					maker = a
				}
			}
			if maker == nil {
				w.fatal("booking %s appeared, and nothing this step did made it: %+v", id, b)
			}
			maker.committed = id
			rec = &record{id: id, kind: "bot", actor: maker.user, guest: maker.n, step: w.step, told: map[notices.Kind]int{}}
			t.recs[id] = rec
			t.order = append(t.order, id)
		}
		if b.Cancelled && (!existed || !was.Cancelled) && rec.cancelled == "" {
			c := t.cur.cancel
			if c == nil || c.id != id || !c.posted {
				w.fatal("booking %s was cancelled, and nothing this step did cancelled it", id)
			}
			rec.cancelled, rec.cancelBy, rec.cancelStep = "bot", c.user, w.step
		}
		if existed && !b.Start.Equal(was.Start) && !t.cur.moved[id] {
			w.fatal("booking %s moved, and nothing this step moved it", id)
		}
	}
}

// failedAfter reports whether the reads of the list after request i all
// failed (there were some).
func failedAfter(reqs []bookingtest.Request, i int) bool {
	return allFailed(reqs[i+1:])
}

func failedBefore(reqs []bookingtest.Request, i int) bool {
	// The reads since the confirmation was shown: from the last one that
	// answered, back.
	var before []bookingtest.Request
	for j := i - 1; j >= 0; j-- {
		if reqs[j].Endpoint != bookingtest.EndpointListBookings {
			continue
		}
		if reqs[j].Status == 200 {
			break
		}
		before = append(before, reqs[j])
	}
	return len(before) >= readTries
}

func allFailed(reqs []bookingtest.Request) bool {
	n := 0
	for _, r := range reqs {
		if r.Endpoint != bookingtest.EndpointListBookings {
			continue
		}
		if r.Status == 200 {
			return false
		}
		n++
	}
	return n > 0
}

// unclearBy reports whether user made an attempt that may have made a
// change of kind to b, and was told its outcome was unclear: a create of
// b's event, start and attendee, or a cancel of b.
func (t *truth) unclearBy(kind notices.Kind, b bookingtest.Booking, user string) bool {
	unclear := func(told []string) bool {
		return slices.ContainsFunc(told, func(s string) bool {
			return strings.HasPrefix(s, cUnknown) || strings.HasPrefix(s, cProbablyNot) || s == cCancelUnsure
		})
	}
	switch kind {
	case notices.New:
		for _, a := range t.attempts {
			if a.user == user && a.matches(b) && unclear(a.told) {
				return true
			}
		}
	case notices.Cancelled:
		for _, c := range t.cancels {
			if c.user == user && c.id == b.ID && unclear(c.told) {
				return true
			}
		}
	}
	return false
}

// final ends the run.
func (t *truth) final() {
	t.w.note("the end: %d attempts, %d bookings seen, %d generations", len(t.attempts), len(t.recs), t.w.gens)
}

// view is what a read of the list showed: its bookings, and whether it was
// full, and then its last start, beyond which it could not see.
type view struct {
	listed  map[string]bool
	full    bool
	horizon time.Time
}

// seen is the list as a read now shows it.
func (t *truth) seen() view {
	ids := t.first100()
	v := view{listed: map[string]bool{}, full: len(ids) == 100}
	for _, id := range ids {
		v.listed[id] = true
	}
	if v.full {
		v.horizon = t.now[ids[len(ids)-1]].Start
	}
	return v
}

// shows reports whether a read that saw v would have listed a booking
// starting at start.
func (v view) shows(start time.Time) bool { return !v.full || start.Before(v.horizon) }

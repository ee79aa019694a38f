package oracle_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/notices"
)

// Every message the bot posts is read as a person reads it and turned
// into a claim: booked, not booked, unknown, already booked, cancelled, not
// cancelled, a notice of a new, moved or cancelled booking. Each claim is
// then held against the truth.

// What a message claims.
const (
	cBooked       = "booked"
	cExists       = "already booked"
	cNotSent      = "nothing sent"
	cNotBooked    = "not booked"
	cProbablyNot  = "probably not booked"
	cUnknown      = "unknown"
	cCancelled    = "cancelled"
	cCancelledAny = "cancelled (a report)"
	cCancelHedged = "cancel answered, may have changed nothing"
	cNotCancelled = "not cancelled"
	cNotFound     = "not found"
	cCancelUnsure = "unclear whether cancelled"
	cConfirm      = "asks to cancel"
	cNothing      = "nothing to cancel"
)

// said is a claim, as a message makes it.
type said struct {
	kind   string
	detail string // which refusal, which limit
	id     string // the booking it names
	by     string // who it says made it: a user ID, "outside", "slack", "email"
	beyond bool   // it says the booking lies beyond the list's first 100
	unread bool   // it says the list could not be read to check it
	hedged bool   // it says the booking may have been cancelled already
	sent   bool   // it says the create was sent (and refused again)
	text   string // the message, for the report
}

var (
	guestRE   = regexp.MustCompile(`\bGuest (\d+)\b`)
	idRE      = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	byUserRE  = regexp.MustCompile(`(?:booked|Booked|Cancelled\*) by <@(U[A-Z0-9]+)> in Slack`)
	unclearRE = regexp.MustCompile(`bookbot's (?:attempt|cancel) by <@(U[A-Z0-9]+)> in Slack [^.]* had no clear answer`)
	burstRE   = regexp.MustCompile(`^\d+ booking changes? `)
	outcomeRE = regexp.MustCompile(`(?m)^\*Outcome:\* (.*)$`)
)

// The headlines of a create's outcome, as a message's notification text
// begins; longer ones first where one begins another.
var createHeads = []struct{ head, kind, detail string }{
	{"Booked. ", cBooked, ""},
	{"Already booked, at another time. ", cExists, "moved"},
	{"Already booked. ", cExists, ""},
	{"Already being booked. ", cNotSent, "in flight"},
	{"Not sent: an earlier attempt needs checking first. ", cNotSent, "an unclear attempt before"},
	{"Not sent: the booking limit could not be checked. ", cNotSent, "limit unchecked"},
	{"Not sent. ", cNotSent, "held back"},
	{"Booked before. ", cNotSent, "booked before"},
	{"Not booked: that time is not free. ", cNotBooked, "409"},
	{"Not booked yet: the attendee may need to confirm by email. ", cNotBooked, "409/200"},
	{"Not booked: the booking service takes no new bookings. ", cNotBooked, "full"},
	{"Not booked: the booking service refused this booking for this attendee. ", cNotBooked, "403"},
	{"Not booked: the booking service refused the form. ", cNotBooked, "400"},
	{"Not confirmed. ", cNotBooked, "null"},
	{"Refused by the booking service. ", cNotBooked, "4xx"},
	{"Refused by the booking service: too many attempts for this event type. ", cNotBooked, "429 event"},
	{"Refused by the booking service: too many attempts a minute. ", cNotBooked, "429 minute"},
	{"Refused by the booking service: too many attempts. ", cNotBooked, "429"},
	{"Probably not booked: check before trying again. ", cProbablyNot, ""},
	{"Outcome unknown: a person must check. ", cUnknown, ""},
	{"Not booked. ", cNotBooked, ""}, // read again below: sent and refused, or never sent
}

// createSaid reads a create's outcome; false when the message is not one.
// raw is its blocks as Slack has them: what people read names no booking,
// its buttons' values do.
func createSaid(text, body, raw string) (said, bool) {
	for _, h := range createHeads {
		if !strings.HasPrefix(text, h.head) {
			continue
		}
		s := said{kind: h.kind, detail: h.detail, text: oneLine(body)}
		switch {
		case h.head == "Not booked. " && strings.Contains(body, "bookbot does not resubmit it"):
			s.detail = "409?"
		case h.head == "Not booked. ":
			s.kind, s.detail = cNotSent, "an error before sending"
		}
		// People read no ID: the controls that act on the booking carry it.
		if ids := idRE.FindAllString(text+" "+body+" "+raw, -1); len(ids) > 0 {
			s.id = ids[len(ids)-1]
		}
		s.beyond = strings.Contains(body, "lies beyond them")
		s.unread = strings.Contains(body, "which could not be read just then")
		s.sent = strings.Contains(body, "refused to book it again")
		if m := byUserRE.FindStringSubmatch(body); m != nil {
			s.by = m[1]
		} else if strings.Contains(body, "booked outside bookbot") {
			s.by = "outside"
		}
		return s, true
	}
	return said{}, false
}

// reviewSaid reads a review report's outcome line, of a create or a
// cancel.
func reviewSaid(body string, cancel bool) (said, bool) {
	m := outcomeRE.FindStringSubmatch(body)
	if m == nil {
		return said{}, false
	}
	o := m[1]
	s := said{text: oneLine(body)}
	if ids := idRE.FindAllString(body, -1); len(ids) > 0 {
		s.id = ids[len(ids)-1]
	}
	s.beyond = strings.Contains(o, "beyond the first 100")
	s.unread = strings.Contains(o, "could not be read")
	switch {
	case cancel && strings.HasPrefix(o, "cancelled"):
		s.kind = cCancelledAny
	case cancel && strings.HasPrefix(o, "not cancelled"):
		s.kind = cNotCancelled
	case cancel && strings.HasPrefix(o, "not found"):
		s.kind = cNotFound
	case cancel && strings.HasPrefix(o, "unknown"):
		s.kind = cCancelUnsure
	case strings.HasPrefix(o, "booked"):
		s.kind = cBooked
	case strings.HasPrefix(o, "probably not booked"):
		s.kind = cProbablyNot
	case strings.HasPrefix(o, "unknown"):
		s.kind = cUnknown
	case strings.HasPrefix(o, "not sent"):
		s.kind = cNotSent
	case strings.HasPrefix(o, "not booked"), strings.HasPrefix(o, "not confirmed"), strings.HasPrefix(o, "refused"):
		s.kind = cNotBooked
	default:
		return said{}, false
	}
	return s, true
}

// cancelSaid reads what a cancel press was answered with.
func cancelSaid(text, body string) (said, bool) {
	s := said{text: oneLine(body)}
	// A head, then what was cancelled when the list showed it, or nothing.
	starts := func(head string) bool { return strings.HasPrefix(text, head+": ") || text == head+"." }
	switch {
	case strings.HasPrefix(text, "Cancel booking "):
		s.kind, s.detail = cConfirm, "listed"
		if strings.Contains(body, "it may be a later one") {
			s.detail = "beyond"
		}
	case starts("Nothing to cancel"):
		s.kind = cNothing
	case starts("Cancel answered"):
		s.kind = cCancelHedged
	case starts("Cancelled"):
		s.kind = cCancelled
		s.beyond = strings.Contains(body, "lies beyond them")
		s.unread = strings.Contains(body, "could not read the bookings list before the cancel")
		s.hedged = strings.Contains(body, "unless it was cancelled already")
	case starts("Not found"):
		s.kind = cNotFound
	case starts("Not cancelled"):
		s.kind, s.detail = cNotCancelled, "refused"
		if strings.Contains(body, "is still listed") {
			s.detail = "listed"
		}
	case starts("Unclear whether it was cancelled"):
		s.kind = cCancelUnsure
	case strings.HasPrefix(text, "Nothing was cancelled. "):
		s.kind = cNotSent
	default:
		return said{}, false
	}
	return s, true
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// check reads every message of the step and holds its claims to the
// truth, then checks that every change the notices' read could see was
// announced.
func (w *world) check(reqs []bookingtest.Request) {
	t := w.truth
	listsFailed := allFailed(reqs)
	for _, m := range w.stepMessages() {
		switch {
		case m.Channel == notes && m.Kind == "message":
			w.notice(m)
		case m.Channel == notes:
			// A first notice rewritten to show the booking as it is now;
			// its reply tells the change.
		case m.Kind == "message" && (m.Channel == ada || m.Channel == bob):
			w.direct(m)
		case m.Kind == "response_url":
			w.reply(m, listsFailed)
		}
	}
	w.told()
	w.complete()
	t.polled = t.seen()
}

// told checks that everyone who submitted a booking or pressed Cancel
// booking in this step was told what came of it.
func (w *world) told() {
	t := w.truth
	for _, a := range t.cur.attempts {
		if a.submitted && len(a.told) == 0 {
			w.disagree("%s was never told what came of it", a)
		}
	}
	if c := t.cur.cancel; c != nil && c.pressed && !slices.ContainsFunc(c.told, func(k string) bool { return k != cConfirm && k != cNothing }) {
		w.disagree("%s: the cancel's outcome was never told", c)
	}
}

// direct reads a direct message: an outcome, a review report, an alert.
func (w *world) direct(m slacktest.Message) {
	t := w.truth
	body := textOf(m.Blocks)
	switch {
	case strings.HasPrefix(m.Text, "A booking needs a human look: "):
		a := w.guest(m.Text)
		s, ok := reviewSaid(body, false)
		if !ok {
			w.fatal("a review report the oracle cannot read: %s", oneLine(body))
		}
		recovered := strings.Contains(body, "bookbot stopped while this booking was in flight")
		if recovered != a.killed {
			w.disagree("%s: the report says bookbot stopped with it in flight: %v; it did: %v\n%s", a, recovered, a.killed, s.text)
		}
		w.holdCreate(a, s, a.step == w.step && !a.killed, false)
		w.keep(m, m.Channel, a.n)
	case strings.HasPrefix(m.Text, "A cancellation needs a human look: "):
		c := t.cur.cancel
		s, ok := reviewSaid(body, true)
		if !ok || c == nil || !strings.Contains(m.Text+" "+body, c.id) {
			w.fatal("a cancel's review report the oracle cannot place: %s", oneLine(body))
		}
		w.holdCancel(c, s)
		w.keep(m, m.Channel, 0)
	case strings.Contains(body, "Booking notices"):
		w.note("alert to %s: %s", m.Channel, oneLine(body))
	default:
		s, ok := createSaid(m.Text, body, string(m.Blocks))
		if !ok {
			w.fatal("a direct message the oracle cannot read: %q", m.Text)
		}
		a := w.guest(m.Text)
		if a.step != w.step {
			w.disagree("%s was told its outcome at step %d, long after its step %d: %s", a, w.step, a.step, s.text)
		}
		if a.user != m.Channel {
			w.disagree("%s's outcome went to %s, and %s asked: %s", a, m.Channel, a.user, s.text)
		}
		w.holdCreate(a, s, true, false)
		w.keep(m, m.Channel, a.n)
	}
}

// keep notes what user can press later on a message: Check again, Mark
// as checked.
func (w *world) keep(m slacktest.Message, user string, guest int) {
	t := w.truth
	if buttonValue(m.Blocks, "recheck") != "" && guest != 0 {
		t.rechecks = append(t.rechecks, pressable{msg: m, user: user, guest: guest})
	}
	if buttonValue(m.Blocks, "review_checked") != "" {
		t.reviews = append(t.reviews, pressable{msg: m, user: user})
	}
}

// reply reads what replaced a message after a press: a cancel's steps and
// outcome, a look again.
func (w *world) reply(m slacktest.Message, listsFailed bool) {
	t := w.truth
	body := textOf(m.Blocks)
	switch {
	case strings.HasPrefix(m.Text, "A booking needs a human look: "), strings.HasPrefix(m.Text, "A cancellation needs a human look: "):
		// A report marked checked: it says again what it said.
	case strings.HasPrefix(m.Text, "Cancelling booking "), strings.HasPrefix(m.Text, "Kept: "):
	case t.cur.recheck != 0:
		s, ok := createSaid(m.Text, body, string(m.Blocks))
		if !ok {
			w.fatal("a look again the oracle cannot read: %q", m.Text)
		}
		a := t.attempts[t.cur.recheck-1]
		if s.kind == cUnknown && !listsFailed && t.shows(a.at) {
			w.disagree("%s: checking again says unknown, and the list answered and could show it: %s", a, s.text)
		}
		w.holdCreate(a, s, false, true)
		w.keep(m, m.User, a.n)
	case t.cur.cancel != nil:
		s, ok := cancelSaid(m.Text, body)
		if !ok {
			w.note("answered %s: %s", m.User, oneLine(body))
			return
		}
		w.holdCancel(t.cur.cancel, s)
	default:
		w.note("answered %s: %s", m.User, oneLine(body))
	}
}

// guest is the attempt a message names.
func (w *world) guest(text string) *attempt {
	m := guestRE.FindStringSubmatch(text)
	if m == nil {
		w.fatal("a message names no attempt: %q", text)
	}
	n, _ := strconv.Atoi(m[1])
	if n < 1 || n > len(w.truth.attempts) {
		w.fatal("a message names Guest %d, who never was", n)
	}
	return w.truth.attempts[n-1]
}

// holdCreate holds what a person was told of a's booking to the truth.
// fresh: it is the outcome of a's own write, told in its step; again: a
// look at the list since, which never writes.
func (w *world) holdCreate(a *attempt, s said, fresh, again bool) {
	t := w.truth
	a.told = append(a.told, s.kind+" "+s.detail)
	w.note("told: %s: %s %s", a, s.kind, s.detail)
	var live []string
	for _, id := range slices.Sorted(maps.Keys(t.now)) {
		if b := t.now[id]; !b.Cancelled && a.matches(b) {
			live = append(live, id)
		}
	}
	if again && a.posted && a.step == w.step {
		w.disagree("%s: looking again sent a create", a)
	}
	switch s.kind {
	case cBooked:
		b, ok := t.now[s.id]
		switch {
		case s.id == "":
			w.disagree("%s: told it is booked, and no booking is named: %s", a, s.text)
		case !ok || b.Cancelled:
			w.disagree("%s: told it is booked as %s, and the sandbox holds no such booking: %s", a, s.id, s.text)
		case !a.matches(b):
			w.disagree("%s: told it is booked as %s, which is another booking (%s %v %v): %s", a, s.id, str(b.EventType), b.Start, str(b.BookerEmail), s.text)
		case fresh && t.recs[s.id].guest != a.n && s.id != a.prior:
			w.disagree("%s: told it is booked, as %s, which %s made: %s", a, s.id, t.recs[s.id], s.text)
		case s.beyond && t.shows(b.Start):
			w.disagree("%s: told its booking lies beyond the list's first 100, and the list shows its time: %s", a, s.text)
		case s.unread && fresh && !a.settleFailed:
			w.disagree("%s: told the list could not be read to check it, and the list answered after its create: %s", a, s.text)
		}
	case cExists:
		if s.id == "" {
			// It names the booking as people know it, by event, attendee
			// and time (its new time, when moved): the sandbox's of that.
			for _, id := range slices.Sorted(maps.Keys(t.now)) {
				if b := t.now[id]; !b.Cancelled && b.EventType != nil && *b.EventType == a.event &&
					strings.EqualFold(str(b.BookerEmail), a.email) && (s.detail == "moved" || b.Start.Equal(a.at)) {
					s.id = id
					break
				}
			}
		}
		b, ok := t.now[s.id]
		switch {
		case !ok || b.Cancelled:
			w.disagree("%s: told it is booked already, as %s, and the sandbox holds no such booking: %s", a, s.id, s.text)
		case *b.EventType != a.event || !strings.EqualFold(str(b.BookerEmail), a.email) || (s.detail != "moved" && !b.Start.Equal(a.at)):
			w.disagree("%s: told it is booked already, as %s, which is another booking: %s", a, s.id, s.text)
		case a.committed != "":
			w.disagree("%s: told it was booked already, and its own create made %s: %s", a, a.committed, s.text)
		case s.sent && (!a.posted || a.status != http.StatusConflict):
			w.disagree("%s: told the service refused to book it again, and the sandbox answered %d (sent: %v): %s", a, a.status, a.posted, s.text)
		case !s.sent && a.posted:
			w.disagree("%s: told nothing was sent, and its create reached the sandbox: %s", a, s.text)
		case s.by == "outside" && t.recs[s.id].kind == "bot":
			w.disagree("%s: told the booking was made outside bookbot, and %s made it: %s", a, t.recs[s.id], s.text)
		case s.by != "" && s.by != "outside" && (t.recs[s.id].kind != "bot" || t.recs[s.id].actor != s.by):
			w.disagree("%s: told %s booked it in Slack, and %s made it: %s", a, s.by, t.recs[s.id], s.text)
		}
	case cNotSent:
		if a.posted && a.step == w.step {
			w.disagree("%s: told nothing was sent, and its create reached the sandbox (answered %d): %s", a, a.status, s.text)
		}
	case cNotBooked:
		switch {
		case a.committed != "":
			w.disagree("%s: told it was not booked, and its create made %s: %s", a, a.committed, s.text)
		case len(live) > 0:
			w.disagree("%s: told it was not booked, and the attendee is booked then, as %s: %s", a, live[0], s.text)
		case fresh && !a.posted:
			w.disagree("%s: told the service refused it, and its create never reached the sandbox: %s", a, s.text)
		case fresh:
			w.holdRefusal(a, s)
		}
	case cProbablyNot:
		switch {
		case len(live) > 0:
			w.disagree("%s: told it is probably not booked, and it is, as %s (made by %s): %s", a, live[0], t.recs[live[0]], s.text)
		case fresh && !a.unclear():
			w.disagree("%s: told the answer was unclear, and the sandbox answered %d (%s): %s", a, a.status, a.fault, s.text)
		}
	case cUnknown:
		switch {
		case fresh && !a.unclear():
			w.disagree("%s: told its outcome is unknown, and the sandbox answered %d (%s): %s", a, a.status, a.fault, s.text)
		case fresh && !a.settleFailed && t.shows(a.at):
			w.disagree("%s: told its outcome is unknown, and the list answered after it and shows its time (the sandbox holds %v): %s", a, live, s.text)
		}
	}
}

// holdRefusal holds a plain refusal to what the sandbox answered.
func (w *world) holdRefusal(a *attempt, s said) {
	want := map[string]func(int) bool{
		"409":     func(st int) bool { return st == http.StatusConflict },
		"409/200": func(st int) bool { return st == http.StatusConflict },
		"409?":    func(st int) bool { return st == http.StatusConflict },
		"full":    func(st int) bool { return st == http.StatusServiceUnavailable && a.fault == noFault },
		"403":     func(st int) bool { return st == http.StatusForbidden },
		"400":     func(st int) bool { return st == http.StatusBadRequest && !a.note },
		"4xx":     func(st int) bool { return st >= 400 && st < 500 },
		"null":    func(st int) bool { return st == http.StatusCreated },
	}
	if ok, known := want[s.detail]; known {
		if !ok(a.status) {
			w.disagree("%s: told %s (%s), and the sandbox answered %d (%s): %s", a, s.kind, s.detail, a.status, a.fault, s.text)
		}
		return
	}
	if a.status != http.StatusTooManyRequests {
		w.disagree("%s: told the service refused too many attempts, and the sandbox answered %d: %s", a, a.status, s.text)
		return
	}
	if a.fault != noFault {
		return // a 429 the sandbox was told to answer says neither limit
	}
	minute := w.truth.minuteFull(a)
	switch {
	case s.detail == "429 event" && minute:
		w.disagree("%s: told the event type's hourly limit refused it, and it was the limit of 5 a minute: %s", a, s.text)
	case s.detail == "429 minute" && !minute:
		w.disagree("%s: told the limit of 5 a minute refused it, and it was the event type's hourly limit: %s", a, s.text)
	}
}

// minuteFull reports whether the sandbox had counted 5 creates in the
// minute before a's: its limit per address, not its event type's, refused
// it.
func (t *truth) minuteFull(a *attempt) bool {
	n := 0
	for _, c := range t.counted {
		if c.at.Before(a.sent) && a.sent.Sub(c.at) < time.Minute {
			n++
		}
	}
	return n >= bookingtest.DefaultPerIPPerMinute
}

// holdCancel holds what a person was told of a cancel to the truth.
func (w *world) holdCancel(c *cancelAttempt, s said) {
	t := w.truth
	b, ok := t.now[c.id]
	cancelled := ok && b.Cancelled
	w.note("told: %s: %s", c, s.kind)
	c.told = append(c.told, s.kind)
	switch s.kind {
	case cConfirm:
		if s.detail == "listed" && !(c.live && c.listed) {
			w.disagree("%s: shown as listed, to be cancelled, and the list does not show it: %s", c, s.text)
		}
		if s.detail == "beyond" && c.listed {
			w.disagree("%s: said not to be among the first 100, and it is: %s", c, s.text)
		}
	case cNothing:
		if c.live && c.listed {
			w.disagree("%s: told there is nothing to cancel, and it is upcoming and listed: %s", c, s.text)
		}
	case cCancelled:
		switch {
		case !cancelled:
			w.disagree("%s: told it is cancelled, and it is not: %s", c, s.text)
		case s.unread && !c.preFailed:
			w.disagree("%s: told the list could not be read before the cancel, and it was: %s", c, s.text)
		case s.unread, s.beyond && s.hedged:
			// It says it cannot tell whether this press cancelled it.
		case !c.live:
			w.disagree("%s: told this press cancelled it, and it was cancelled before: %s", c, s.text)
		case s.beyond && c.listed:
			w.disagree("%s: told it lies beyond the list's first 100, and the list showed it: %s", c, s.text)
		}
	case cCancelledAny:
		if !cancelled {
			w.disagree("%s: reported cancelled, and it is not: %s", c, s.text)
		}
	case cCancelHedged:
		switch {
		case !cancelled:
			w.disagree("%s: told the service answers it is cancelled, and it is not: %s", c, s.text)
		case c.live:
			w.disagree("%s: told this cancel most likely changed nothing, as it was cancelled already, and it cancelled a booking that was upcoming (made by %s): %s", c, t.recs[c.id], s.text)
		}
	case cNotFound:
		if ok {
			w.disagree("%s: told there is no such booking, and the sandbox holds it: %s", c, s.text)
		}
	case cNotCancelled:
		r := t.recs[c.id]
		switch {
		case s.detail == "listed" && cancelled:
			w.disagree("%s: told it is not cancelled, still listed, and it is cancelled: %s", c, s.text)
		case r != nil && r.cancelled == "bot" && r.cancelStep == w.step:
			w.disagree("%s: told it was not cancelled, and this press cancelled it: %s", c, s.text)
		}
	case cCancelUnsure:
		switch {
		case !c.unclear():
			w.disagree("%s: told it is unclear whether it was cancelled, and the sandbox answered %d (%s): %s", c, c.status, c.fault, s.text)
		case c.listed && !c.settleFailed && !c.preFailed:
			w.disagree("%s: told it is unclear whether it was cancelled, and the lists around it answered and show its time: %s", c, s.text)
		}
	case cNotSent:
		if c.posted {
			w.disagree("%s: told nothing was cancelled, and its cancel reached the sandbox: %s", c, s.text)
		}
	}
}

// notice holds a notice to the change it names. People read names and
// times; which booking it is, and whether it may be a move across the end
// of a full list, the oracle reads where machines do: the message's
// metadata.
func (w *world) notice(m slacktest.Message) {
	body := textOf(m.Blocks)
	kinds := map[string]notices.Kind{
		"New booking": notices.New, "Cancelled": notices.Cancelled, "Moved": notices.Moved,
		// Where a full list ended: new or moved into it, cancelled or moved
		// beyond it.
		"New booking or moved": notices.New, "Cancelled or moved": notices.Cancelled,
	}
	var meta struct {
		EventType    string         `json:"event_type"`
		EventPayload map[string]any `json:"event_payload"`
	}
	if len(m.Metadata) > 0 {
		if err := json.Unmarshal(m.Metadata, &meta); err != nil {
			w.fatal("a notice's metadata the oracle cannot read: %s", m.Metadata)
		}
	}
	switch {
	case burstRE.MatchString(m.Text):
		// A burst's summary: its thread lists each change.
	case meta.EventType == "bookbot_booking_changes":
		for key, kind := range map[string]notices.Kind{"new": notices.New, "moved": notices.Moved, "cancelled": notices.Cancelled} {
			for _, hedged := range []bool{false, true} {
				k := key
				if hedged {
					k += "_or_moved"
				}
				ids, _ := meta.EventPayload[k].(string)
				for _, id := range strings.Fields(ids) {
					w.holdNotice(kind, id, "", k+" "+id, hedged)
				}
			}
		}
	default:
		word, _, _ := strings.Cut(m.Text, ":")
		kind, ok := kinds[word]
		id, _ := meta.EventPayload["booking_id"].(string)
		if !ok || id == "" {
			w.fatal("a notice the oracle cannot read: %q (metadata %s)", m.Text, m.Metadata)
		}
		orMoved := strings.HasSuffix(word, " or moved")
		if hedged := meta.EventPayload["or_moved"] == true; hedged != orMoved {
			w.disagree("a notice says %q, and its metadata or_moved is %v: %s", word, hedged, oneLine(body))
		}
		if strings.Contains(m.Text, id) || strings.Contains(body, id) {
			w.disagree("a notice shows its booking's ID where people read it: %s", oneLine(body))
		}
		by := "outside"
		switch u, unclear := byUserRE.FindStringSubmatch(body), unclearRE.FindStringSubmatch(body); {
		case strings.Contains(body, "Booked once the attendee confirmed by email"):
			by = "email"
		case unclear != nil:
			by = "unclear:" + unclear[1]
		case u != nil:
			by = u[1]
		case strings.Contains(body, "Booked in Slack"), strings.Contains(body, "Cancelled* in Slack"):
			by = "slack"
		}
		if orMoved && by == "outside" {
			by = "" // it names no one
		}
		w.holdNotice(kind, id, by, oneLine(body), orMoved)
	}
}

// orMovedKind marks a notice's kind as hedged: the change may be a move
// across the end of a full list instead.
const orMovedKind = " or moved"

// holdNotice holds a notice of kind about id, made (it says) by by, to
// what happened; orMoved: it says the change may be a move across the
// end of a full list instead.
func (w *world) holdNotice(kind notices.Kind, id, by, text string, orMoved bool) {
	t := w.truth
	r := t.recs[id]
	if r == nil {
		w.disagree("a notice (%s) names booking %s, which is not the calendar's: %s", kind, id, text)
		return
	}
	// Each notice once: a hedged one, and later a sure one of the same
	// kind, are two.
	told := kind
	if orMoved {
		told += orMovedKind
	}
	r.told[told]++
	w.note("notice: %s %s, by %q", kind, r, by)
	b := t.now[id]
	if u, ok := strings.CutPrefix(by, "unclear:"); ok {
		if !t.unclearBy(kind, b, u) {
			w.disagree("booking %s was announced %s, matching an attempt of %s's that had no clear answer, and there was none: %s", r, kind, u, text)
		}
		by = "" // it credits no one, and calls the change no stranger's
	}
	switch kind {
	case notices.New:
		switch {
		case !orMoved && r.told[told] > 1, orMoved && r.told[told] > r.moves+1:
			w.disagree("booking %s was announced new %d times (moved %d times): %s", r, r.told[told], r.moves, text)
		case orMoved && r.step != w.step && r.moves == 0:
			w.disagree("booking %s was announced new or moved into the list, long after it was made, and never moved: %s", r, text)
		case orMoved:
		case r.step == 0:
			w.disagree("booking %s, there before the first read, was announced new: %s", r, text)
		case r.step != w.step:
			w.disagree("booking %s was announced new at step %d, long after it was made (moved %d times): %s", r, w.step, r.moves, text)
		case b.Cancelled:
			w.disagree("booking %s was announced new, and it is cancelled: %s", r, text)
		case by == "outside" && r.kind == "bot":
			w.disagree("booking %s was announced as booked outside bookbot, and bookbot made it: %s", r, text)
		case by == "email" && r.kind != "email":
			w.disagree("booking %s was announced as booked by an email confirmation: %s", r, text)
		case by == "slack" && r.kind != "bot":
			w.disagree("booking %s was announced as booked in Slack: %s", r, text)
		case by != "" && by != "outside" && by != "email" && by != "slack" && (r.kind != "bot" || r.actor != by):
			w.disagree("booking %s was announced as booked by %s in Slack: %s", r, by, text)
		}
	case notices.Cancelled:
		switch {
		case !orMoved && r.told[told] > 1, orMoved && r.told[told] > r.moves+1:
			// Each time it leaves a full list, by a move or its cancel,
			// it may be said to have: never more often.
			w.disagree("booking %s was announced cancelled %d times (moved %d times): %s", r, r.told[told], r.moves, text)
		case orMoved && r.cancelled == "" && r.moves == 0:
			w.disagree("booking %s was announced cancelled or moved, and it was neither: %s", r, text)
		case r.cancelled == "" && !orMoved:
			w.disagree("booking %s was announced cancelled, and it is not (moved %d times): %s", r, r.moves, text)
		case by == "outside" && r.cancelled == "bot":
			w.disagree("booking %s was announced as cancelled outside Slack, and %s cancelled it through bookbot: %s", r, r.cancelBy, text)
		case by != "" && by != "outside" && (r.cancelled != "bot" || (by != "slack" && r.cancelBy != by)):
			w.disagree("booking %s was announced as cancelled by %s in Slack, and it was cancelled %s by %q: %s", r, by, r.cancelled, r.cancelBy, text)
		}
	case notices.Moved:
		if r.told[kind] > r.moves {
			w.disagree("booking %s was announced moved %d times, and moved %d: %s", r, r.told[kind], r.moves, text)
		}
	}
}

// complete checks that the notices' read of this step announced every
// change it could see: a booking made since the read before, a booking
// cancelled that the read before listed, a listed booking moved.
func (w *world) complete() {
	t := w.truth
	prev, cur := t.polled, t.seen()
	now := w.clock.Now()
	for _, id := range t.order {
		r, b := t.recs[id], t.now[id]
		switch {
		case r.step == w.step && cur.listed[id] && prev.shows(b.Start) && r.told[notices.New]+r.told[notices.New+orMovedKind] == 0:
			w.disagree("booking %s is listed, and was not announced", r)
		case r.cancelStep == w.step && prev.listed[id] && b.Start.After(now.Add(2*notices.StartSlack)) && cur.shows(b.Start) && r.told[notices.Cancelled]+r.told[notices.Cancelled+orMovedKind] == 0:
			w.disagree("booking %s was cancelled, and it was not announced", r)
		case t.cur.moved[id] && prev.listed[id] && cur.listed[id] && !t.cur.before[id].Start.Equal(b.Start) && r.told[notices.Moved] == 0:
			w.disagree("booking %s was moved, and it was not announced", r)
		}
	}
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

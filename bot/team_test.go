package bot_test

import (
	"time"

	"strings"
	"sync"
	"testing"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/internal/testutil"
	"github.com/bookbot/bookbot/offer"
	"github.com/bookbot/bookbot/store/bolt"
)

// A team on two calendars: bob on the owner's, ada on her own (and kiri,
// when a test connects her, on one of the two). Every write is journaled,
// as in bookbot: the owner's through the harness's client, people's own
// through their calendars' clients.

// teamHarness is journaledHarness with own calendars whose writes are
// journaled too, and the owner's key known to the bot.
func teamHarness(t *testing.T, inChannel bool) (*harness, *ownCalendars, *bolt.Journal) {
	t.Helper()
	var own ownCalendars
	var journal *bolt.Journal
	h, j := journaledHarness(t, inChannel, withOwnCalendars(&own), func(h *harness, c *bot.Config) {
		c.Calendars = calendarsFor{booking.NewCalendars(h.sb.URL, booking.NewGuard(booking.DefaultLimits, h.clock.Now),
			func(user string, key booking.Key) { h.bot.KeyRefused(user, key) },
			booking.WithClock(h.clock.Now), booking.WithJournal(c.Journal.(*bolt.Journal)))}
		c.IsOwnerKey = h.client.Holds
	})
	journal = j
	return h, &own, journal
}

// bookAs has user book email on the calendar they act on, as the form
// does; unclear answers the create with an HTML 503, an outcome a person
// must check.
func bookAs(h *harness, user, name, email string, unclear bool) {
	h.t.Helper()
	v := h.openModal(user, "intro-call")
	if unclear {
		h.sb.FailNext(bookingtest.EndpointCreateBooking, bookingtest.HTMLError(503))
	}
	// The first time still free on their calendar.
	in := bookingInputs(options(elements(v.Blocks, "slot")[0])[0].value, email)
	in["name"] = name
	h.submit(user, v.ID, in)
	want := "Booked"
	if unclear {
		want = "Probably not booked"
	}
	h.waitView("the outcome for "+user, func(w slacktest.View) bool {
		return w.ID == v.ID && strings.Contains(textOf(w.Blocks), want)
	})
	h.drain()
}

// seenBy is everything user can see of bookbot's: their DMs, the answers
// only they see, their modals and their App Home.
func seenBy(h *harness, user string) string {
	var b strings.Builder
	for _, m := range h.sl.Messages() {
		mine := (m.Kind == "message" || m.Kind == "update") && m.Channel == user ||
			(m.Kind == "response_url" || m.Kind == "ephemeral" || m.Kind == "ack") && m.User == user
		if mine {
			b.WriteString(m.Text + "\n" + textOf(m.Blocks) + "\n")
		}
	}
	for _, v := range h.sl.Views() {
		if v.TriggerUser == user {
			b.WriteString(textOf(v.Blocks) + "\n")
		}
	}
	return b.String()
}

// Nothing one person can see names another calendar's attendees: not the
// audit, not a review, not App Home, the list or a form. Ada books on her
// own calendar (one confirmed, one unclear); bob, on the owner's, books
// one that is unclear too, and each looks at everything they can.
func TestOnePersonSeesNoOtherCalendarsAttendees(t *testing.T) {
	t.Parallel()
	h, own, _ := teamHarness(t, false) // reviews by DM; bob is the first reviewer
	own.connectDirect(t, h, ada, adaKey)
	bookAs(h, ada, "Annie Adasguest", "annie@ada.example", false)
	bookAs(h, ada, "Alice Adasguest", "alice@ada.example", true)
	bookAs(h, bob, "Oscar Ownersguest", "oscar@owner.example", true)
	h.dm(ada, "A booking needs a human look") // hers, to her
	h.dm(bob, "A booking needs a human look") // the owner's, to bob
	for _, user := range []string{ada, bob} {
		h.slash(user, "audit")
		h.reply(user, "last 24 hours")
		h.slash(user, "list")
		h.reply(user, "Upcoming")
		if _, err := h.sl.OpenAppHome(h.ctx(), user); err != nil {
			t.Fatal(err)
		}
	}
	h.waitView("bob's App Home", func(v slacktest.View) bool { return v.Type == "home" && v.TriggerUser == bob })
	h.waitView("ada's App Home", func(v slacktest.View) bool { return v.Type == "home" && v.TriggerUser == ada })
	h.drain()

	for _, c := range []struct {
		user         string
		sees, others []string
	}{
		{bob, []string{"Oscar Ownersguest", "oscar@owner.example"}, []string{"Adasguest", "ada.example"}},
		{ada, []string{"Annie Adasguest", "Alice Adasguest", "alice@ada.example"}, []string{"Ownersguest", "owner.example"}},
	} {
		seen := seenBy(h, c.user)
		for _, s := range c.sees {
			if !strings.Contains(seen, s) {
				t.Errorf("%s does not see %q of the calendar they act on", c.user, s)
			}
		}
		for _, s := range c.others {
			if strings.Contains(seen, s) {
				t.Errorf("%s sees %q, of another calendar:\n%s", c.user, s, seen)
			}
		}
	}
}

// A review of a write on a person's own calendar goes to everyone acting
// on it (ada, and kiri, who connected the same key), not to the review
// channel, which keeps the owner's calendar's; and only they may mark it
// checked: bob's press changes nothing and tells him why.
func TestReviewGoesToThePeopleOfItsCalendar(t *testing.T) {
	t.Parallel()
	h, own, j := teamHarness(t, true)
	own.connectDirect(t, h, ada, adaKey)
	own.connectDirect(t, h, kiw, adaKey)
	bookAs(h, ada, "Alice Adasguest", "alice@ada.example", true)
	report := h.dm(ada, "A booking needs a human look")
	h.dm(kiw, "A booking needs a human look")
	bookAs(h, bob, "Oscar Ownersguest", "oscar@owner.example", true)
	h.waitMessage("the owner's in the review channel", func(m slacktest.Message) bool {
		return m.Kind == "message" && m.Channel == reviewChannel && strings.Contains(textOf(m.Blocks), "Oscar")
	})
	h.drain()
	if n := len(messagesIn(h, reviewChannel, "Alice")); n != 0 {
		t.Errorf("ada's calendar's review went to the review channel (%d)", n)
	}
	if n := len(messagesIn(h, bob, "Alice")); n != 0 {
		t.Errorf("ada's calendar's review went to bob (%d)", n)
	}

	h.interact(slacktest.BlockAction(bob, "review_checked", "", slacktest.InMessage(report)))
	h.reply(bob, "Only people acting on")
	h.interact(slacktest.BlockAction(bob, "recheck", "", slacktest.InMessage(report)))
	h.drain()
	if n, _ := j.AwaitingReview(); n != 2 {
		t.Fatalf("%d await review after bob's press, want 2", n)
	}
	for _, m := range h.sl.Messages() {
		if m.OriginalTS == report.TS && m.ReplaceOriginal {
			t.Errorf("bob's press replaced ada's report:\n%s", textOf(m.Blocks))
		}
	}
	h.interact(slacktest.BlockAction(kiw, "review_checked", "", slacktest.InMessage(report)))
	h.waitMessage("kiri's check", func(m slacktest.Message) bool {
		return m.OriginalTS == report.TS && strings.Contains(textOf(m.Blocks), "Checked by <@"+kiw+">")
	})
	if n, _ := j.AwaitingReview(); n != 1 {
		t.Errorf("%d await review after kiri checked hers, want 1 (the owner's)", n)
	}
}

// One calendar is booked once, whoever asks through whichever key: with
// ada's create held in flight, the same booking asked for by kiri, who
// connected the same key, is not sent; and so for bob and kiri on the
// owner's calendar, which kiri reaches through the owner's key.
func TestOneCalendarBooksOnceWhoeverAsks(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name          string
		first, second string
		key           string // the key kiri connects
	}{
		{"two people's own key", ada, kiw, adaKey},
		{"the owner's key", bob, kiw, testKey},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h, own, _ := teamHarness(t, true)
			own.connectDirect(t, h, ada, adaKey)
			own.connectDirect(t, h, kiw, c.key)
			first, second := h.openModal(c.first, "intro-call"), h.openModal(c.second, "intro-call")
			release := h.sb.HoldNext(bookingtest.EndpointCreateBooking)
			var once sync.Once
			t.Cleanup(func() { once.Do(release) })
			h.submit(c.first, first.ID, bookingInputs(firstSlot, "grace@example.com"))
			testutil.Until(h.ctx(), t, "the first create in flight", func() bool { return len(h.requests("POST /bookings")) == 1 })
			h.submit(c.second, second.ID, bookingInputs(firstSlot, "grace@example.com"))
			h.waitView("the second told it is being booked", func(v slacktest.View) bool {
				return v.ID == second.ID && strings.Contains(textOf(v.Blocks), "Already being booked")
			})
			once.Do(release)
			h.waitView("the first booked", func(v slacktest.View) bool {
				return v.ID == first.ID && strings.Contains(textOf(v.Blocks), "Booked.")
			})
			h.drain()
			if n := len(h.requests("POST /bookings")); n != 1 {
				t.Errorf("%d POST /bookings for one booking of one calendar, want 1", n)
			}
		})
	}
}

// Someone who asked for a write on a calendar they do not act on (a guest
// booking from ada's offer) and never heard its outcome, because bookbot
// stopped, is told in one plain sentence; the review, with the attendee
// and Mark as checked, goes to ada alone.
func TestRecoveredWriteTellsItsGuestPlainly(t *testing.T) {
	t.Parallel()
	h, own, j := teamHarness(t, false)
	own.connectDirect(t, h, ada, adaKey)
	key, err := booking.NewKey(adaKey)
	if err != nil {
		t.Fatal(err)
	}
	w := booking.Write{Op: booking.OpCreate, Actor: eve, Calendar: ada, CalendarID: own.sealer.CalendarID(key),
		EventType: "intro-call", Start: firstSlot, End: "2026-03-23T10:30:00Z", Name: "Eve Mallory", Email: "eve@example.com"}
	if _, err := j.Begin(h.ctx(), w); err != nil {
		t.Fatal(err)
	}
	entries, err := j.Since(time.Time{})
	if err != nil || len(entries) != 1 {
		t.Fatal(entries, err)
	}
	if _, err := j.Finish(entries[0].Seq, &booking.Result{Outcome: booking.ProbablyNotBooked}, true); err != nil {
		t.Fatal(err)
	}
	h.bot.ReportReviews(h.ctx())
	report := h.dm(ada, "A booking needs a human look")
	if len(elements(report.Blocks, "review_checked")) != 1 {
		t.Errorf("ada's report has no Mark as checked:\n%s", textOf(report.Blocks))
	}
	told := h.dm(eve, "Probably not booked")
	if text := textOf(told.Blocks); strings.Contains(text, "human look") || len(elements(told.Blocks, "review_checked")) != 0 ||
		!strings.Contains(text, "<@"+ada+"> has been asked to check") {
		t.Errorf("the guest was told:\n%s", text)
	}
	h.drain()
	if n := len(messagesIn(h, bob, "")); n != 0 {
		t.Errorf("bob, the first reviewer, got %d messages about ada's calendar", n)
	}
}

// An unclear booking from ada's offer on her own calendar reaches her once:
// as the review, which she alone may check; the guest is told it is not
// sure, and is not sent the review.
func TestUnclearOfferBookingReachesItsOffererOnce(t *testing.T) {
	t.Parallel()
	h, own, _ := teamHarness(t, false)
	own.connectDirect(t, h, ada, adaKey)
	h.sl.AddChannel(slacktest.Channel{ID: "C0TEAM", Name: "team", Members: []string{ada, bob, eve}})
	card := h.offerCard("intro-call")
	h.pick(eve, card, values(elements(card.Blocks, "offer_slot"))[0])
	form := h.waitView("eve's form", func(v slacktest.View) bool { return v.TriggerUser == eve && v.CallbackID == "offer_book" })
	h.sb.FailNext(bookingtest.EndpointCreateBooking, bookingtest.HTMLError(503))
	h.submit(eve, form.ID, map[string]string{"name": "Eve Mallory", "email": "eve@example.com"})
	h.waitView("eve told it is not sure", func(v slacktest.View) bool {
		return v.ID == form.ID && strings.Contains(textOf(v.Blocks), "Not sure it was booked")
	})
	h.dm(ada, "A booking needs a human look")
	h.drain()
	if n := len(messagesIn(h, ada, "")); n != 1 {
		t.Errorf("ada got %d DMs about one unclear booking from her offer, want 1 (the review)", n)
	}
	for _, u := range []string{eve, bob} {
		if n := len(messagesIn(h, u, "human look")); n != 0 {
			t.Errorf("%s got the review of ada's calendar", u)
		}
	}
}

// A guest (eve: not allowed, no account) whose booking from an offer on the
// owner's calendar was settled after a restart is no reviewer, though she
// resolves to the owner's calendar as everyone without one of their own
// does: the review goes to bob, the first reviewer on it; she is told in
// one plain sentence, as a guest of a person's own calendar is.
func TestRecoveredOwnerWriteTellsItsGuestPlainly(t *testing.T) {
	t.Parallel()
	h, _, j := teamHarness(t, false)
	w := booking.Write{Op: booking.OpCreate, Actor: eve, Calendar: booking.Owner, CalendarID: booking.Owner,
		EventType: "intro-call", Start: firstSlot, End: "2026-03-23T10:30:00Z", Name: "Eve Mallory", Email: "eve@example.com"}
	if _, err := j.Begin(h.ctx(), w); err != nil {
		t.Fatal(err)
	}
	entries, err := j.Since(time.Time{})
	if err != nil || len(entries) != 1 {
		t.Fatal(entries, err)
	}
	if _, err := j.Finish(entries[0].Seq, &booking.Result{Outcome: booking.ProbablyNotBooked}, true); err != nil {
		t.Fatal(err)
	}
	h.bot.ReportReviews(h.ctx())
	h.dm(bob, "A booking needs a human look")
	told := h.dm(eve, "Probably not booked")
	if text := textOf(told.Blocks); strings.Contains(text, "human look") || strings.Contains(text, "eve@example.com") ||
		len(elements(told.Blocks, "review_checked")) != 0 || len(elements(told.Blocks, "recheck")) != 0 ||
		!strings.Contains(text, "The calendar's owner has been asked to check") {
		t.Errorf("the guest was told:\n%s", text)
	}
	h.drain()
	if n := len(messagesIn(h, eve, "")); n != 1 {
		t.Errorf("the guest got %d DMs, want 1 (the plain sentence)", n)
	}
}

// A guest who types the address of someone bookbot booked at the time
// they pick is not handed that booking: bob booked Grace, Grace moved it
// on the booking page, and eve, booking the same time from ada's offer
// with Grace's address, is told in one sentence that the time she picked
// is already booked for that address, with nothing of Grace's booking (its
// time now, its ID) and no Cancel; the time
// goes back to the offer, and Grace's booking stays.
func TestGuestIsNotHandedAnothersBooking(t *testing.T) {
	t.Parallel()
	var offers offer.Store
	h, _ := journaledHarness(t, false, func(h *harness, c *bot.Config) {
		db, err := bolt.Open(t.TempDir(), bolt.Options{Beside: true})
		if err != nil {
			t.Fatal(err)
		}
		offers = db.Offers()
		c.Offers = offers
	})
	h.sl.AddChannel(slacktest.Channel{ID: "C0TEAM", Name: "team", Members: []string{ada, eve, bob}})
	v := h.openModal(bob, "intro-call")
	h.submit(bob, v.ID, bookingInputs(firstSlot, "grace@example.com"))
	h.waitView("bob's booking", func(w slacktest.View) bool { return w.ID == v.ID && strings.Contains(textOf(w.Blocks), "Booked") })
	h.drain()
	id := bookedFor(h, "grace@example.com")
	if id == "" {
		t.Fatal("bob's booking of Grace is not listed")
	}
	var to time.Time
	for _, s := range h.sb.Slots(bookingtest.DemoOwner, "intro-call") {
		if s.Start.After(time.Date(2026, 3, 24, 0, 0, 0, 0, time.UTC)) {
			to = s.Start
			break
		}
	}
	if err := h.sb.MoveAsAttendee(id, to); err != nil {
		t.Fatal(err)
	}

	card := h.offerCard("intro-call")
	first := values(elements(card.Blocks, "offer_slot"))[0]
	if !strings.Contains(first, firstSlot) {
		t.Fatalf("the card's first time %q", first)
	}
	h.pick(eve, card, first)
	form := h.waitView("eve's form", func(v slacktest.View) bool { return v.TriggerUser == eve && v.CallbackID == "offer_book" })
	h.submit(eve, form.ID, map[string]string{"name": "Eve Mallory", "email": "grace@example.com"})
	done := h.waitView("eve's outcome", func(w slacktest.View) bool {
		return w.ID == form.ID && !strings.Contains(textOf(w.Blocks), "Booking for")
	})
	h.drain()
	text := textOf(done.Blocks)
	if !strings.Contains(text, "already booked for that email address") || !strings.Contains(text, "Ask <@"+ada+">") || !strings.Contains(text, "10:15") ||
		strings.Contains(text, "24 Mar") || strings.Contains(text, "Booked:") || strings.Contains(string(done.Blocks), id) ||
		len(elements(done.Blocks, "offer_cancel")) != 0 {
		t.Errorf("eve was told:\n%s", text)
	}
	if n := len(h.requests("POST /bookings")); n != 1 {
		t.Errorf("%d POST /bookings, want bob's alone", n)
	}
	o, err := offers.Get(t.Context(), values(elements(card.Blocks, "offer_more"))[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Booked()) != 0 || len(o.Pending()) != 0 {
		t.Errorf("the offer holds %d bookings and %d times being booked, want its time given back", len(o.Booked()), len(o.Pending()))
	}
	for _, b := range h.sb.Bookings(bookingtest.DemoOwner) {
		if b.ID == id && b.Cancelled {
			t.Errorf("Grace's booking was cancelled")
		}
	}
}

// unclear records w in j as sent and answered unclearly, as the write
// path does, and reports the review queue.
func unclear(t *testing.T, h *harness, j *bolt.Journal, w booking.Write) {
	t.Helper()
	finish, err := j.Begin(h.ctx(), w)
	if err != nil {
		t.Fatal(err)
	}
	if err := finish(&booking.Result{Outcome: booking.ProbablyNotBooked}); err != nil {
		t.Fatal(err)
	}
	h.bot.ReportReviews(h.ctx())
}

// A review of a person's own calendar that nobody acts on any more goes
// to that person, who disconnected it, and they may mark it checked:
// whoever a review is sent to may check it.
func TestDisconnectedCalendarsReviewIsCheckedByItsPerson(t *testing.T) {
	t.Parallel()
	h, own, j := teamHarness(t, false)
	own.connectDirect(t, h, ada, adaKey)
	key, err := booking.NewKey(adaKey)
	if err != nil {
		t.Fatal(err)
	}
	h.slash(ada, "disconnect")
	h.reply(ada, "Disconnected")
	unclear(t, h, j, booking.Write{Op: booking.OpCreate, Actor: ada, Calendar: ada, CalendarID: own.sealer.CalendarID(key),
		EventType: "intro-call", Start: firstSlot, End: "2026-03-23T10:30:00Z", Name: "Alice Adasguest", Email: "alice@ada.example"})
	report := h.dm(ada, "A booking needs a human look")
	h.interact(slacktest.BlockAction(ada, "review_checked", "", slacktest.InMessage(report)))
	h.waitMessage("ada's check", func(m slacktest.Message) bool {
		return m.OriginalTS == report.TS && strings.Contains(textOf(m.Blocks), "Checked by <@"+ada+">")
	})
	if n, _ := j.AwaitingReview(); n != 0 {
		t.Errorf("%d await review after ada checked hers, want 0", n)
	}
	h.drain()
	if n := len(messagesIn(h, bob, "")); n != 0 {
		t.Errorf("bob, on the owner's calendar, got %d messages about ada's", n)
	}
}

// With no review channel and no reviewer acting on the owner's calendar
// (bob and ada on their own), a review of the owner's calendar goes to the
// first reviewer, bob, who may mark it checked; ada, second, may not.
func TestOwnersReviewWithNobodyOnItIsCheckedByTheFirstReviewer(t *testing.T) {
	t.Parallel()
	h, own, j := teamHarness(t, false)
	const bobsKey = "sandbox_bob_own_key_1a2b3c"
	h.sb.AddOwner(bobsKey, "owner-bob", time.UTC, bookingtest.Weekdays(9*time.Hour, 17*time.Hour))
	own.connectDirect(t, h, ada, adaKey)
	own.connectDirect(t, h, bob, bobsKey)
	unclear(t, h, j, booking.Write{Op: booking.OpCreate, Actor: eve, Calendar: booking.Owner, CalendarID: booking.Owner,
		EventType: "intro-call", Start: firstSlot, End: "2026-03-23T10:30:00Z", Name: "Oscar Ownersguest", Email: "oscar@owner.example"})
	report := h.dm(bob, "A booking needs a human look")
	h.interact(slacktest.BlockAction(ada, "review_checked", "", slacktest.InMessage(report)))
	h.reply(ada, "Only people acting on")
	h.interact(slacktest.BlockAction(bob, "review_checked", "", slacktest.InMessage(report)))
	h.waitMessage("bob's check", func(m slacktest.Message) bool {
		return m.OriginalTS == report.TS && strings.Contains(textOf(m.Blocks), "Checked by <@"+bob+">")
	})
	if n, _ := j.AwaitingReview(); n != 0 {
		t.Errorf("%d await review after bob checked it, want 0", n)
	}
}

// A review names the event type by its title on the calendar the write
// went to, whoever acts on what now: ada's "Ada's intro", read through
// kiri's key once ada is back on the owner's calendar (whose intro-call is
// "Intro call"); its slug once no key reaches her calendar.
func TestReviewTitlesComeFromTheEntrysCalendar(t *testing.T) {
	t.Parallel()
	h, own, j := teamHarness(t, false)
	own.connectDirect(t, h, ada, adaKey)
	own.connectDirect(t, h, kiw, adaKey)
	key, err := booking.NewKey(adaKey)
	if err != nil {
		t.Fatal(err)
	}
	h.slash(ada, "disconnect")
	h.reply(ada, "Disconnected")
	w := booking.Write{Op: booking.OpCreate, Actor: ada, Calendar: ada, CalendarID: own.sealer.CalendarID(key),
		EventType: "intro-call", Start: firstSlot, End: "2026-03-23T10:30:00Z", Name: "Alice Adasguest", Email: "alice@ada.example"}
	unclear(t, h, j, w)
	if text := textOf(h.dm(kiw, "A booking needs a human look").Blocks); !strings.Contains(text, "*Ada's intro*") {
		t.Errorf("the review on ada's calendar, to kiri:\n%s", text)
	}
	h.slash(kiw, "disconnect")
	h.reply(kiw, "Disconnected")
	w.Email = "alan@ada.example"
	unclear(t, h, j, w)
	if text := textOf(h.dm(ada, "alan@ada.example").Blocks); !strings.Contains(text, "*intro-call*") {
		t.Errorf("the review on ada's calendar, which no key reaches, to ada:\n%s", text)
	}
}

// A review that nobody may check (its calendar's person is no longer
// allowed, and nobody acts on it) is sent to nobody, and said once in the
// log, where the operator looks, however often the queue is read.
func TestReviewNobodyMayCheckIsLoggedOnce(t *testing.T) {
	t.Parallel()
	h, _, j := teamHarness(t, false)
	unclear(t, h, j, booking.Write{Op: booking.OpCreate, Actor: eve, Calendar: eve, CalendarID: "gone-calendar",
		EventType: "intro-call", Start: firstSlot, End: "2026-03-23T10:30:00Z", Name: "Gina Goneguest", Email: "gina@gone.example"})
	h.bot.ReportReviews(h.ctx())
	h.drain()
	if n := strings.Count(h.logs.String(), "has nobody who may check it"); n != 1 {
		t.Errorf("said %d times in the log that nobody may check the review, want once:\n%s", n, h.logs.String())
	}
	for _, who := range []string{ada, bob, eve} {
		if n := len(messagesIn(h, who, "")); n != 0 {
			t.Errorf("%s got %d messages about a review nobody may check", who, n)
		}
	}
	if n, _ := j.AwaitingReview(); n != 1 {
		t.Errorf("%d await review, want the one nobody checked", n)
	}
}

// With a review channel, the owner's calendar's reviews are the channel's
// and its checkers are the people acting on the owner's calendar: bob,
// the first reviewer but on his own calendar, may not mark one checked,
// ada, on the owner's, may; once nobody allowed acts on it, bob may.
func TestOwnersReviewInTheChannelIsCheckedByThePeopleOnIt(t *testing.T) {
	t.Parallel()
	h, own, j := teamHarness(t, true)
	const bobsKey = "sandbox_bob_own_key_1a2b3c"
	h.sb.AddOwner(bobsKey, "owner-bob", time.UTC, bookingtest.Weekdays(9*time.Hour, 17*time.Hour))
	own.connectDirect(t, h, bob, bobsKey)
	bookAs(h, ada, "Oscar Ownersguest", "oscar@owner.example", true)
	report := h.waitMessage("the owner's in the review channel", func(m slacktest.Message) bool {
		return m.Kind == "message" && m.Channel == reviewChannel && strings.Contains(textOf(m.Blocks), "Oscar")
	})
	h.interact(slacktest.BlockAction(bob, "review_checked", "", slacktest.InMessage(report)))
	h.reply(bob, "Only people acting on")
	if n, _ := j.AwaitingReview(); n != 1 {
		t.Fatalf("%d await review after bob's press, want 1", n)
	}
	h.interact(slacktest.BlockAction(ada, "review_checked", "", slacktest.InMessage(report)))
	h.waitMessage("ada's check", func(m slacktest.Message) bool {
		return m.OriginalTS == report.TS && strings.Contains(textOf(m.Blocks), "Checked by <@"+ada+">")
	})

	// With ada on her own calendar too, nobody allowed acts on the
	// owner's: bob, the first reviewer, may check its reviews, so that
	// someone can.
	own.connectDirect(t, h, ada, adaKey)
	unclear(t, h, j, booking.Write{Op: booking.OpCreate, Actor: eve, Calendar: booking.Owner, CalendarID: booking.Owner,
		EventType: "intro-call", Start: firstSlot, End: "2026-03-23T10:30:00Z", Name: "Olga Ownersguest", Email: "olga@owner.example"})
	report = h.waitMessage("the owner's second in the review channel", func(m slacktest.Message) bool {
		return m.Kind == "message" && m.Channel == reviewChannel && strings.Contains(textOf(m.Blocks), "Olga")
	})
	h.interact(slacktest.BlockAction(bob, "review_checked", "", slacktest.InMessage(report)))
	h.waitMessage("bob's check", func(m slacktest.Message) bool {
		return m.OriginalTS == report.TS && strings.Contains(textOf(m.Blocks), "Checked by <@"+bob+">")
	})
}

package bot_test

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/internal/testutil"
	"github.com/bookbot/bookbot/store/bolt"
)

// adaKey opens Ada's own calendar in the sandbox: an owner of its own,
// with an event type the owner's calendar has too.
const (
	adaKey   = "sandbox_ada_own_key_4f1c9e"
	adaOwner = "owner-ada"
)

// ownCalendars is what the harness keeps of people's own calendars.
type ownCalendars struct {
	accounts *bolt.Accounts
	sealer   *account.Sealer
	dir      string // of the embedded store
}

// calendarsFor adapts *booking.Calendars to bot.Calendars.
type calendarsFor struct{ *booking.Calendars }

func (c calendarsFor) For(user, id string, key booking.Key) (bot.Booker, error) {
	cl, err := c.Calendars.For(user, id, key)
	if err != nil {
		return nil, err
	}
	return cl, nil
}

// withOwnCalendars sets up connecting own calendars on the harness, an
// embedded store for accounts and offers, and Ada's own calendar in the
// sandbox; the returned value is filled in when the bot is made.
func withOwnCalendars(own *ownCalendars) func(*harness, *bot.Config) {
	return func(h *harness, c *bot.Config) {
		own.dir = h.t.TempDir()
		db, err := bolt.Open(own.dir, bolt.Options{Beside: true})
		if err != nil {
			h.t.Fatal(err)
		}
		secret := make([]byte, 32)
		_, _ = rand.Read(secret)
		sealer, err := account.NewSealer(secret)
		if err != nil {
			h.t.Fatal(err)
		}
		h.sb.AddOwner(adaKey, adaOwner, berlin, bookingtest.Weekdays(9*time.Hour, 17*time.Hour))
		h.sb.AddEventType(adaOwner, bookingtest.EventType{Slug: "intro-call", Title: "Ada's intro", DurationMinutes: 15, Kind: bookingtest.KindSolo})
		own.accounts, own.sealer = db.Accounts(), sealer
		c.Accounts, c.Sealer, c.Offers = own.accounts, sealer, db.Offers()
		c.Calendars = calendarsFor{booking.NewCalendars(h.sb.URL, booking.NewGuard(booking.DefaultLimits, h.clock.Now), func(user string, key booking.Key) { h.bot.KeyRefused(user, key) }, booking.WithClock(h.clock.Now))}
	}
}

// connectDirect stores user's key as connected at the bot's now, as a
// connect from another replica does: this bot learns of it at its next
// read of the account.
func (o *ownCalendars) connectDirect(t *testing.T, h *harness, user, raw string) {
	t.Helper()
	key, err := booking.NewKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := o.sealer.Seal(user, key)
	if err != nil {
		t.Fatal(err)
	}
	now := h.clock.Now()
	if err := o.accounts.Put(context.Background(), account.Account{User: user, Sealed: sealed, ConnectedAt: now, LastUsed: now, State: account.OK}); err != nil {
		t.Fatal(err)
	}
}

// An offer is booked on the calendar it was made on, or not at all: made
// on the owner's calendar, it is refused once its offerer has connected
// their own, with no booking API call.
func TestOfferRefusedAfterItsCalendarChanged(t *testing.T) {
	t.Parallel()
	var own ownCalendars
	h := newHarness(t, withOwnCalendars(&own))
	h.sl.AddChannel(slacktest.Channel{ID: "C0TEAM", Name: "team", Members: []string{ada, bob}})
	card := h.offerCard("intro-call")
	times := values(elements(card.Blocks, "offer_slot"))
	if len(times) == 0 {
		t.Fatalf("no times on the card:\n%s", card.Blocks)
	}
	h.pick(bob, card, times[0])
	form := h.waitView("the offer's form", func(v slacktest.View) bool {
		return v.TriggerUser == bob && v.CallbackID == "offer_book"
	})
	own.connectDirect(t, h, ada, adaKey)
	h.drain()
	before := len(h.sb.Requests())
	h.submit(bob, form.ID, map[string]string{"email": "bob@example.com"})
	h.waitView("the refusal", func(v slacktest.View) bool {
		return v.ID == form.ID && strings.Contains(string(v.Blocks), "no longer connected")
	})
	h.drain()
	if n := len(h.sb.Requests()); n != before {
		t.Errorf("a click on an offer of a calendar no longer connected made %d booking API calls", n-before)
	}
}

// A booking form books on the calendar whose times it showed, or not at
// all: opened on the owner's calendar, it is refused once the person has
// connected their own, with no booking API call, and they are offered the
// form again.
func TestFormRefusedAfterItsCalendarChanged(t *testing.T) {
	t.Parallel()
	var own ownCalendars
	h := newHarness(t, withOwnCalendars(&own))
	v := h.openModal(ada, "intro-call")
	own.connectDirect(t, h, ada, adaKey)
	h.drain()
	before := len(h.sb.Requests())
	h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
	out := h.waitView("the refusal", func(w slacktest.View) bool {
		return w.ID == v.ID && strings.Contains(string(w.Blocks), "Not booked")
	})
	if txt := string(out.Blocks); !strings.Contains(txt, "calendar you act on changed") || !strings.Contains(txt, "Open the form again") {
		t.Errorf("the refusal does not say why, or offer the form again:\n%s", out.Blocks)
	}
	h.drain()
	if n := len(h.sb.Requests()); n != before {
		t.Errorf("a form of a calendar no longer acted on made %d booking API calls", n-before)
	}

	// Opened again, the form shows her own calendar, and books on it.
	h.interact(slacktest.BlockAction(ada, "edit_booking", "", slacktest.InView(out)))
	again := h.waitView("the form of her own calendar", func(w slacktest.View) bool {
		return w.ID == v.ID && strings.Contains(string(w.Blocks), "Ada's intro") && len(elements(w.Blocks, "slot")) == 1
	})
	h.submit(ada, again.ID, bookingInputs(firstSlot, "grace@example.com"))
	h.waitView("booked", func(w slacktest.View) bool {
		return w.ID == v.ID && strings.Contains(string(w.Blocks), "Booked")
	})
	posts := h.requests("POST /bookings")
	if len(posts) != 1 || posts[0].Owner != adaOwner {
		t.Errorf("POST /bookings: %+v; want one, on Ada's calendar", posts)
	}
}

// A form whose person's calendar cannot be read now says so when they pick
// another event type, and shows no times: Bob's form read the owner's
// calendar, then the accounts could no longer be read (the store's file
// is gone), so which calendar he acts on is not known.
func TestFormSaysItsCalendarCannotBeRead(t *testing.T) {
	t.Parallel()
	var own ownCalendars
	h := newHarness(t, withOwnCalendars(&own))
	v := h.openModal(bob, "intro-call")
	if err := os.Remove(filepath.Join(own.dir, bolt.FileName)); err != nil {
		t.Fatal(err)
	}
	h.interact(slacktest.BlockAction(bob, "event_type", "consultation", slacktest.InView(v)))
	out := h.waitView("the problem", func(w slacktest.View) bool {
		return w.ID == v.ID && strings.Contains(textOf(w.Blocks), "Free slots could not be loaded")
	})
	if len(elements(out.Blocks, "slot")) != 0 {
		t.Errorf("the form offers times of a calendar it could not read:\n%s", textOf(out.Blocks))
	}
}

// The booking form shows the event types of the calendar the person acts
// on, never another's cached ones: the owner's are cached (Bob used
// them), Ada connected hers elsewhere, and her form never shows the
// owner's.
func TestFormNeverShowsAnotherCalendarsTypes(t *testing.T) {
	t.Parallel()
	var own ownCalendars
	h := newHarness(t, withOwnCalendars(&own))
	h.openModal(bob, "intro-call") // the owner's types are cached now
	own.connectDirect(t, h, ada, adaKey)
	v := h.openModal(ada, "intro-call")
	for _, w := range h.sl.Views() {
		if w.ID == v.ID && strings.Contains(string(w.Blocks), "consultation") {
			t.Errorf("Ada's form showed the owner's event types:\n%s", w.Blocks)
		}
	}
	if txt := string(v.Blocks); !strings.Contains(txt, "Ada's intro") {
		t.Errorf("Ada's form does not show her own event type:\n%s", txt)
	}
}

// A refusal of an old key never deletes the key connected since: Ada's
// calendar is read with her first key (as her notices are), she connects
// again with a new one (the old one is rotated away), and the old
// client's 401 leaves the new key in place.
func TestOldKeysRefusalKeepsTheNewKey(t *testing.T) {
	t.Parallel()
	var own ownCalendars
	h := newHarness(t, withOwnCalendars(&own))
	own.connectDirect(t, h, ada, adaKey)
	_, old, err := h.bot.CalendarOf(h.ctx(), ada)
	if err != nil {
		t.Fatal(err)
	}
	const newKey = "sandbox_ada_new_key_77c0d1"
	h.sb.AddOwner(newKey, adaOwner, berlin, bookingtest.Weekdays(9*time.Hour, 17*time.Hour))
	h.clock.Advance(time.Minute)
	own.connectDirect(t, h, ada, newKey)
	if _, err := old.Bookings(h.ctx()); err == nil {
		t.Fatal("the old key was not refused")
	}
	testutil.Until(h.ctx(), t, "the refusal handled", func() bool {
		l := h.logs.String()
		return strings.Contains(l, "key deleted") || strings.Contains(l, "not the account's key")
	})
	a, ok, err := own.accounts.Get(h.ctx(), ada)
	if err != nil || !ok || a.State != account.OK {
		t.Fatalf("after the old key's 401 the account is %+v, %v, %v", a, ok, err)
	}
	if k, err := own.sealer.Open(ada, a.Sealed); err != nil || !k.Equal(mustKey(t, newKey)) {
		t.Errorf("after the old key's 401 the account's key is not the new one (%v)", err)
	}
}

func mustKey(t *testing.T, raw string) booking.Key {
	t.Helper()
	k, err := booking.NewKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// A stored key that does not open under the secret key is the operator's
// mistake (BOOKBOT_SECRET_KEY changed without a rotation): the person is
// told so, not that the booking service refused their key; the record is
// kept for the operator to fix, and the log says it loudly.
func TestUnopenedKeyIsTheOperatorsToFix(t *testing.T) {
	t.Parallel()
	var own ownCalendars
	h := newHarness(t, withOwnCalendars(&own))
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	other, err := account.NewSealer(secret)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := other.Seal(ada, mustKey(t, adaKey))
	if err != nil {
		t.Fatal(err)
	}
	stored := account.Account{User: ada, Sealed: sealed, ConnectedAt: t0, State: account.OK}
	if err := own.accounts.Put(h.ctx(), stored); err != nil {
		t.Fatal(err)
	}
	h.slash(ada, "types")
	msg := h.reply(ada, "secret key")
	if strings.Contains(msg.Text, "refused") {
		t.Errorf("an unopened key is said to be refused: %q", msg.Text)
	}
	a, ok, err := own.accounts.Get(h.ctx(), ada)
	if err != nil || !ok || a.State != account.OK || string(a.Sealed) != string(sealed) {
		t.Errorf("the account was changed: %+v, %v, %v", a, ok, err)
	}
	if !strings.Contains(h.logs.String(), "level=ERROR") || !strings.Contains(h.logs.String(), "BOOKBOT_SECRET_KEY") {
		t.Errorf("the operator is not told loudly:\n%s", h.logs)
	}
}

// Deactivating a person in Slack deletes their key and tells whoever
// follows the accounts at once (the notices of own calendars), so their
// watcher stops now, not at its next look; as a refused key does.
func TestDeactivationStopsTheirNotices(t *testing.T) {
	t.Parallel()
	var own ownCalendars
	var changed atomic.Int32
	h := newHarness(t, withOwnCalendars(&own), func(_ *harness, c *bot.Config) {
		c.AccountsChanged = func() { changed.Add(1) }
	})
	own.connectDirect(t, h, ada, adaKey)
	if _, err := h.sl.SendEvent(h.ctx(), map[string]any{"type": "user_change", "user": map[string]any{"id": ada, "deleted": true}}); err != nil {
		t.Fatal(err)
	}
	testutil.Until(h.ctx(), t, "the accounts' followers told", func() bool { return changed.Load() > 0 })
	if _, ok, _ := own.accounts.Get(h.ctx(), ada); ok {
		t.Error("a deactivated person's key was kept")
	}
}

// A refused key is marked, and whoever follows the accounts is told at
// once: the notices read with it stop now.
func TestRefusedKeyStopsTheirNotices(t *testing.T) {
	t.Parallel()
	var own ownCalendars
	var changed atomic.Int32
	h := newHarness(t, withOwnCalendars(&own), func(_ *harness, c *bot.Config) {
		c.AccountsChanged = func() { changed.Add(1) }
	})
	own.connectDirect(t, h, ada, adaKey)
	_, cal, err := h.bot.CalendarOf(h.ctx(), ada)
	if err != nil {
		t.Fatal(err)
	}
	h.sb.AddOwner("sandbox_ada_rotated_key_0a9f31", adaOwner, berlin, bookingtest.Weekdays(9*time.Hour, 17*time.Hour))
	if _, err := cal.Bookings(h.ctx()); err == nil {
		t.Fatal("the rotated key was not refused")
	}
	testutil.Until(h.ctx(), t, "the accounts' followers told", func() bool { return changed.Load() > 0 })
	if a, _, _ := own.accounts.Get(h.ctx(), ada); a.State != account.Reconnect || len(a.Sealed) != 0 {
		t.Errorf("after the 401 the account is %+v", a)
	}
}

// Two calendars' bookings of the same event slug, time and attendee are
// two bookings: one being made on Ada's calendar does not hold up Bob's
// on the owner's.
func TestCreateLockIsPerCalendar(t *testing.T) {
	t.Parallel()
	var own ownCalendars
	h := newHarness(t, withOwnCalendars(&own))
	own.connectDirect(t, h, ada, adaKey)
	mine, theirs := h.openModal(ada, "intro-call"), h.openModal(bob, "intro-call")
	h.sb.SetLatency("POST /bookings", time.Hour) // Ada's create stays in flight until the bot stops
	h.submit(ada, mine.ID, bookingInputs(firstSlot, "grace@example.com"))
	testutil.Until(h.ctx(), t, "Ada's create on its way", func() bool { return len(h.requests("POST /bookings")) == 1 })
	ack := parseSubmissionAck(t, h.submit(bob, theirs.ID, bookingInputs(firstSlot, "grace@example.com")))
	if len(ack.Errors) != 0 {
		t.Errorf("Bob's booking on another calendar was held up by Ada's: %v", ack.Errors)
	}
}

// An outcome on a person's own calendar says a booking that may appear
// gets a notice while their notices are on (by direct message unless they
// chose), and not once they turned them off.
func TestOwnCalendarsOutcomePromisesANoticeOnlyWhileOn(t *testing.T) {
	t.Parallel()
	var own ownCalendars
	h := newHarness(t, withOwnCalendars(&own))
	own.connectDirect(t, h, ada, adaKey)
	for i, on := range []bool{true, false} {
		if !on {
			if _, err := own.accounts.SetNotices(t.Context(), ada, account.NoticesOff); err != nil {
				t.Fatal(err)
			}
		}
		v := h.openModal(ada, "intro-call")
		h.sb.FailNext(bookingtest.EndpointCreateBooking, bookingtest.JSONError(409, "not booked", 200))
		h.submit(ada, v.ID, bookingInputs(v.Options("slot")[i].Value, "grace@example.com"))
		out := h.waitView("the outcome", func(x slacktest.View) bool {
			return x.ID == v.ID && strings.Contains(string(x.Blocks), "Not booked yet")
		})
		if promised := strings.Contains(textOf(out.Blocks), "its notice says it came after this attempt"); promised != on {
			t.Errorf("notices on: %v; a notice promised: %v\n%s", on, promised, textOf(out.Blocks))
		}
	}
}

// When the offerer's own key is revoked, whoever books from their offer is
// told in their own words that it cannot be booked now and that nothing
// was sent, never "your calendar" or "connect"; the offerer is told once
// an offer, however many people are turned away.
func TestOfferOfARevokedKeyTurnsBookersAwayInTheirWords(t *testing.T) {
	t.Parallel()
	var own ownCalendars
	h := newHarness(t, withOwnCalendars(&own))
	h.sl.AddChannel(slacktest.Channel{ID: "C0TEAM", Name: "team", Members: []string{ada, eve, bob}})
	own.connectDirect(t, h, ada, adaKey)
	card := h.offerCard("intro-call n=2")
	times := values(elements(card.Blocks, "offer_slot"))
	id := values(elements(card.Blocks, "offer_more"))[0]
	// Ada rotates her key on the booking service: the one bookbot holds is
	// refused from now on.
	h.sb.AddOwner("sandbox_ada_rotated_key_5b2e90", adaOwner, berlin, bookingtest.Weekdays(9*time.Hour, 17*time.Hour))

	for _, c := range []struct{ user, time, email string }{{eve, times[0], "eve@example.com"}, {bob, times[1], "bob@example.com"}} {
		h.pick(c.user, card, c.time)
		form := h.waitView("the offer's form", func(v slacktest.View) bool {
			return v.TriggerUser == c.user && v.CallbackID == "offer_book"
		})
		h.submit(c.user, form.ID, map[string]string{"email": c.email})
		out := h.waitView("the form's outcome", func(v slacktest.View) bool {
			return v.ID == form.ID && strings.Contains(textOf(v.Blocks), "cannot be booked now")
		})
		txt := textOf(out.Blocks)
		if !strings.Contains(txt, "Nothing was sent") || !strings.Contains(txt, "<@UADA>") || strings.Contains(strings.ToLower(txt), "your calendar") ||
			strings.Contains(txt, "Connect") || len(elements(out.Blocks, "connect_calendar")) > 0 {
			t.Errorf("%s was told:\n%s", c.user, txt)
		}
	}
	h.interact(slacktest.BlockAction(eve, "offer_more", id, slacktest.InMessage(card)))
	h.waitView("more times", func(v slacktest.View) bool {
		return v.TriggerUser == eve && v.CallbackID == "offer_more_times" && strings.Contains(textOf(v.Blocks), "cannot be booked now")
	})
	h.dm(ada, "tried to book your offer of *Ada's intro*")
	h.drain()
	told := 0
	for _, m := range h.sl.Messages() {
		if m.Kind == "message" && m.Channel == ada && strings.Contains(m.Text, "tried to book your offer") {
			told++
		}
	}
	if told != 1 {
		t.Errorf("Ada was told %d times that her offer turned people away, want once", told)
	}
	if n := len(h.requests("POST /bookings")); n != 0 {
		t.Errorf("%d POST /bookings on a revoked key", n)
	}
}

package bot_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/internal/testutil"
	"github.com/bookbot/bookbot/offer"
	"github.com/bookbot/bookbot/store/bolt"
)

// stopped names the process that took a time and stopped.
const stopped = "pid 1 on a host that stopped"

// leftWorld is Ada's offer, Grace's form of its first time, and the offer
// store and journal that a stopped bookbot shared with this one.
type leftWorld struct {
	h       *harness
	offers  offer.Store
	jr      *bolt.Journal
	card    slacktest.Message
	id      string // the offer's
	form    slacktest.View
	start   string // the time Grace picked, as GET /slots wrote it
	cardURL string // the response_url of her click
}

func newLeftWorld(t *testing.T, opts ...func(*harness, *bot.Config)) *leftWorld {
	t.Helper()
	db, err := bolt.Open(t.TempDir(), bolt.Options{Beside: true})
	if err != nil {
		t.Fatal(err)
	}
	w := &leftWorld{offers: db.Offers(), jr: db.Journal()}
	w.h = newHarnessWith(t, []booking.Option{booking.WithJournal(w.jr)}, append([]func(*harness, *bot.Config){func(h *harness, c *bot.Config) {
		w.jr.Now = h.clock.Now
		c.Offers, c.Journal = w.offers, w.jr
	}}, opts...)...)
	h := w.h
	h.sl.AddUser(slacktest.User{ID: grace, Name: "grace", RealName: "Grace Hopper", TZ: "America/New_York", Email: "grace@example.com"})
	h.sl.AddChannel(slacktest.Channel{ID: "C0TEAM", Name: "team", Members: []string{ada, grace, bob}})
	w.card = h.offerCard("intro-call")
	w.id = values(elements(w.card.Blocks, "offer_more"))[0]
	w.start = strings.TrimPrefix(values(elements(w.card.Blocks, "offer_slot"))[0], w.id+" ")
	h.pick(grace, w.card, w.id+" "+w.start)
	w.form = h.waitView("the offer's form", func(v slacktest.View) bool {
		return v.TriggerUser == grace && v.CallbackID == "offer_book"
	})
	// The form carries the card's response_url, signed: the signature,
	// a dot, then the metadata.
	_, meta, _ := strings.Cut(w.form.PrivateMetadata, ".")
	var m struct {
		Card string `json:"u"`
	}
	if err := json.Unmarshal([]byte(meta), &m); err != nil || m.Card == "" {
		t.Fatalf("the form's metadata %q: %v", w.form.PrivateMetadata, err)
	}
	w.cardURL = m.Card
	h.drain()
	return w
}

// take takes Grace's time as owner did, sent to the write path or not.
func (w *leftWorld) take(owner string, sent bool) {
	w.h.t.Helper()
	ctx, now := w.h.t.Context(), w.h.clock.Now()
	u := offer.Use{Key: w.form.ID, By: grace, Name: "Grace Hopper", Start: w.start, At: now, Owner: owner, Card: w.cardURL}
	if _, err := w.offers.Update(ctx, w.id, offer.Take(u)); err != nil {
		w.h.t.Fatal(err)
	}
	if !sent {
		return
	}
	if _, err := w.offers.Update(ctx, w.id, offer.Send(u.Key, now)); err != nil {
		w.h.t.Fatal(err)
	}
}

// begin records Grace's create in the journal as the stopped bookbot
// began it, and returns what records its outcome.
func (w *leftWorld) begin() func(*booking.Result) error {
	w.h.t.Helper()
	return w.beginOn(booking.Owner)
}

// beginOn is begin on the calendar labelled calendar.
func (w *leftWorld) beginOn(calendar string) func(*booking.Result) error {
	w.h.t.Helper()
	start, _ := time.Parse(time.RFC3339, w.start)
	gone := *w.jr
	gone.Owner = stopped
	finish, err := gone.Begin(w.h.t.Context(), booking.Write{
		Op: booking.OpCreate, Actor: grace, Calendar: calendar, EventType: "intro-call",
		Start: w.start, End: start.Add(15 * time.Minute).UTC().Format(time.RFC3339), Name: "Grace Hopper", Email: "grace@example.com",
	})
	if err != nil {
		w.h.t.Fatal(err)
	}
	return finish
}

// book books Grace's time in the sandbox, as the stopped bookbot's create
// did.
func (w *leftWorld) book() *booking.Booking {
	start, _ := time.Parse(time.RFC3339, w.start)
	id := w.h.sb.AddBooking(bookingtest.DemoOwner, bookingtest.Booking{
		EventType: testutil.Ptr("intro-call"), Start: start, BookerName: testutil.Ptr("Grace Hopper"), BookerEmail: testutil.Ptr("grace@example.com"),
	})
	return &booking.Booking{ID: id, Start: start, End: start.Add(15 * time.Minute)}
}

// recover settles the journal's writes left in flight, as a start does,
// by what the sandbox lists.
func (w *leftWorld) recover() {
	w.h.t.Helper()
	if _, err := w.jr.Recover(w.h.t.Context(), w.h.client.Reconcile); err != nil {
		w.h.t.Fatal(err)
	}
}

func (w *leftWorld) pending() int {
	w.h.t.Helper()
	o, err := w.offers.Get(w.h.t.Context(), w.id)
	if err != nil {
		w.h.t.Fatal(err)
	}
	return len(o.Pending())
}

func (w *leftWorld) booked() int {
	w.h.t.Helper()
	o, _ := w.offers.Get(w.h.t.Context(), w.id)
	return len(o.Booked())
}

// dms are the direct messages to user containing want.
func (w *leftWorld) dms(user, want string) int {
	n := 0
	for _, m := range w.h.sl.Messages() {
		if m.Kind == "message" && m.Channel == user && strings.Contains(textOf(m.Blocks)+m.Text, want) {
			n++
		}
	}
	return n
}

// settle runs the sweep and waits for what it started.
func (w *leftWorld) settle() {
	w.h.bot.SettleOffers(w.h.t.Context())
	w.h.drain()
}

// A time a stopped bookbot left taken is settled by what its write did:
// given back when nothing was sent, recorded as booked when the journal
// says so, left while the write is in flight or unclear and unchecked.
// The card shows it, and whoever the stopped bookbot did not tell is told.
func TestOfferTimeLeftByAStoppedBookbotIsSettled(t *testing.T) {
	t.Parallel()
	givenBack := func(why string) func(t *testing.T, w *leftWorld) {
		return func(t *testing.T, w *leftWorld) {
			if n := w.pending(); n != 0 {
				t.Errorf("%d times still being booked", n)
			}
			w.h.dm(grace, why)
			w.h.dm(grace, "The time is free again")
			fresh := w.h.waitMessage("the card, open", func(m slacktest.Message) bool {
				return m.OriginalTS == w.card.TS && strings.HasPrefix(m.Text, "Offer")
			})
			if got := values(elements(fresh.Blocks, "offer_slot")); len(got) == 0 || got[0] != w.id+" "+w.start {
				t.Errorf("the card does not offer Grace's time again: %v", got)
			}
		}
	}
	left := func(t *testing.T, w *leftWorld) {
		if n := w.pending(); n != 1 {
			t.Errorf("%d times being booked, want Grace's still", n)
		}
		if n := w.dms(grace, "booked"); n != 0 {
			t.Errorf("Grace was told %d times", n)
		}
	}
	booked := func(toGrace int) func(t *testing.T, w *leftWorld) {
		return func(t *testing.T, w *leftWorld) {
			if n := w.booked(); n != 1 {
				t.Errorf("%d bookings recorded in the offer, want 1", n)
			}
			w.h.waitMessage("the card, booked", func(m slacktest.Message) bool {
				return m.OriginalTS == w.card.TS && strings.HasPrefix(m.Text, "Booked") && strings.Contains(textOf(m.Blocks), "booked by <@UGRACE>")
			})
			w.h.dm(ada, "Booked from your offer")
			if n := w.dms(grace, "Booked:"); n != toGrace {
				t.Errorf("Grace was told %d times it is booked, want %d", n, toGrace)
			}
		}
	}
	// The list showed a booking at that time for that address that Grace
	// did not ask for (a write the journal refuses records nothing): not
	// hers to see or cancel.
	bookedAlready := func(t *testing.T, w *leftWorld) {
		if p, b := w.pending(), w.booked(); p != 0 || b != 0 {
			t.Errorf("%d times being booked and %d booked, want the time given back", p, b)
		}
		told := w.h.dm(grace, "already booked for that email address")
		if len(elements(told.Blocks, "offer_cancel")) != 0 || w.dms(grace, "The time is free again") != 0 {
			t.Errorf("Grace was told:\n%s", textOf(told.Blocks))
		}
		if n := w.dms(ada, "Booked from your offer"); n != 0 {
			t.Errorf("Ada was told %d times it was booked from her offer", n)
		}
	}
	for _, c := range []struct {
		name  string
		opts  []func(*harness, *bot.Config)
		setup func(w *leftWorld)
		check func(t *testing.T, w *leftWorld)
	}{
		{"never sent", nil, func(w *leftWorld) { w.take(stopped, false) }, givenBack("bookbot stopped before it sent your booking")},
		{"sent, never begun", nil, func(w *leftWorld) { w.take(stopped, true) }, givenBack("bookbot stopped before it sent your booking")},
		{"taken before bookbot recorded sending", nil, func(w *leftWorld) { w.take("", false) }, givenBack("bookbot stopped before it sent your booking")},
		{"in flight", nil, func(w *leftWorld) { w.take(stopped, true); w.begin() }, left},
		{"booked, then stopped", nil, func(w *leftWorld) {
			w.take(stopped, true)
			_ = w.begin()(&booking.Result{Outcome: booking.Confirmed, Booking: w.book(), Verified: true})
		}, booked(1)},
		{"another calendar's booking of the same time, then stopped", nil, func(w *leftWorld) {
			w.take(stopped, true)
			_ = w.beginOn(bob)(&booking.Result{Outcome: booking.Confirmed, Booking: &booking.Booking{ID: "bobs-own"}, Verified: true})
		}, givenBack("bookbot stopped before it sent your booking")},
		{"settled after a restart", nil, func(w *leftWorld) {
			w.take(stopped, true)
			w.begin()
			w.book()
			w.recover()
		}, booked(0)},
		{"already booked for that address, then stopped", nil, func(w *leftWorld) {
			w.take(stopped, true)
			_ = w.begin()(&booking.Result{Outcome: booking.AlreadyBooked, Booking: w.book(), Verified: true})
		}, bookedAlready},
		{"not booked, then stopped", nil, func(w *leftWorld) {
			w.take(stopped, true)
			_ = w.begin()(&booking.Result{Outcome: booking.NotBooked})
		}, givenBack("the booking service did not book it")},
		{"unclear, not checked", nil, func(w *leftWorld) {
			w.take(stopped, true)
			_ = w.begin()(&booking.Result{Outcome: booking.Unknown})
		}, left},
		{"unclear, checked, not listed", nil, func(w *leftWorld) {
			w.take(stopped, true)
			_ = w.begin()(&booking.Result{Outcome: booking.Unknown})
			entries, _ := w.jr.Since(time.Time{})
			if _, err := w.jr.MarkReviewed(entries[len(entries)-1].Seq, ada); err != nil {
				w.h.t.Fatal(err)
			}
		}, givenBack("the bookings list does not show it")},
		{"another replica's, lately", []func(*harness, *bot.Config){func(_ *harness, c *bot.Config) { c.OffersShared = true }},
			func(w *leftWorld) { w.take(stopped, false) }, left},
		{"another replica's, long ago", []func(*harness, *bot.Config){func(_ *harness, c *bot.Config) { c.OffersShared = true }},
			func(w *leftWorld) { w.take(stopped, false); w.h.clock.Advance(6 * time.Minute) }, givenBack("bookbot stopped before it sent your booking")},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newLeftWorld(t, c.opts...)
			c.setup(w)
			w.settle()
			c.check(t, w)
			if n := len(w.h.requests("POST /bookings")); n != 0 {
				t.Errorf("settling sent %d POST /bookings", n)
			}
		})
	}
}

// Replicas settling one time at once tell of it once.
func TestOfferTimeLeftIsToldOnce(t *testing.T) {
	t.Parallel()
	w := newLeftWorld(t)
	w.take(stopped, true)
	_ = w.begin()(&booking.Result{Outcome: booking.Confirmed, Booking: w.book(), Verified: true})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { w.h.bot.SettleOffers(t.Context()) })
	}
	wg.Wait()
	w.settle()
	w.h.dm(ada, "Booked from your offer")
	if a, g := w.dms(ada, "Booked from your offer"), w.dms(grace, "Booked:"); a != 1 || g != 1 {
		t.Errorf("Ada told %d times, Grace %d; want once each", a, g)
	}
}

// A time settled after a restart is reported for review; when the report
// reaches the offerer, the sweep does not tell them again.
func TestOfferTimeRecoveredIsNotToldTwice(t *testing.T) {
	t.Parallel()
	w := newLeftWorld(t, func(_ *harness, c *bot.Config) { c.Reviewers = []string{ada} })
	w.take(stopped, true)
	w.begin()
	w.book()
	w.recover()
	w.settle()
	if n := w.booked(); n != 1 {
		t.Fatalf("%d bookings recorded in the offer, want 1", n)
	}
	w.h.bot.ReportReviews(t.Context())
	w.h.dm(ada, "needs a human look")
	if n := w.dms(ada, "Booked from your offer"); n != 0 {
		t.Errorf("Ada, who gets the review report, was also told %d times it is booked", n)
	}
}

// A time its own form could not settle (the store failed it) is left to
// that form while it may be at work, then settled without telling anyone
// again: the form told them.
func TestOfferTimeItsFormCouldNotSettleIsSettledLater(t *testing.T) {
	t.Parallel()
	var s *failingUpdates
	w := newLeftWorld(t, func(_ *harness, c *bot.Config) {
		s = &failingUpdates{Store: c.Offers}
		s.ok.Store(2) // the take, and its mark as sent
		c.Offers = s
	})
	w.h.sb.FailNext(bookingtest.EndpointCreateBooking, bookingtest.JSONError(409, "not booked", 409))
	w.h.submit(grace, w.form.ID, map[string]string{})
	w.h.waitView("the form's outcome", func(v slacktest.View) bool {
		return v.ID == w.form.ID && strings.Contains(string(v.Blocks), "Not booked")
	})
	w.h.drain()
	s.ok.Store(100)
	w.settle()
	if n := w.pending(); n != 1 {
		t.Fatalf("%d times being booked right after the form, want its own left to it", n)
	}
	w.h.clock.Advance(6 * time.Minute)
	w.settle()
	if n := w.pending(); n != 0 {
		t.Errorf("%d times still being booked", n)
	}
	if n := w.dms(grace, "Not booked"); n != 0 {
		t.Errorf("Grace, told by her form, was told again %d times", n)
	}
}

// A time whose booking was unclear stays taken until a person has checked
// it; then what the bookings list shows settles it, and the person who
// took it, told only that it was unclear, is told how it ended.
func TestOfferTimeCheckedByAPersonIsSettledByTheList(t *testing.T) {
	t.Parallel()
	w := newLeftWorld(t)
	w.h.sb.FailNext(bookingtest.EndpointCreateBooking, bookingtest.HTMLError(503))
	w.h.submit(grace, w.form.ID, map[string]string{})
	w.h.waitView("the form's outcome", func(v slacktest.View) bool {
		return v.ID == w.form.ID && strings.Contains(string(v.Blocks), "Not sure it was booked")
	})
	w.h.drain()
	w.h.clock.Advance(6 * time.Minute)
	w.settle()
	if n := w.pending(); n != 1 {
		t.Fatalf("%d times being booked before anyone checked, want 1", n)
	}
	entries, err := w.jr.Since(time.Time{})
	if err != nil || len(entries) != 1 {
		t.Fatalf("journal: %+v, %v", entries, err)
	}
	if _, err := w.jr.MarkReviewed(entries[0].Seq, ada); err != nil {
		t.Fatal(err)
	}
	w.settle()
	if n := w.pending(); n != 0 {
		t.Errorf("%d times still being booked once checked", n)
	}
	w.h.dm(grace, "the bookings list does not show it")
	if n := len(w.h.requests("POST /bookings")); n != 1 {
		t.Errorf("%d POST /bookings, want the form's one", n)
	}
}

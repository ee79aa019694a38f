package bot_test

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/internal/fakeclock"
	"github.com/bookbot/bookbot/store/bolt"
)

// The reminders and the live notices of one connected calendar take each
// other's recent read, as the owner's do: one GET /bookings on its key
// between them, not one each, and none on anyone else's key.
func TestCalendarReadersShareOneRead(t *testing.T) {
	t.Parallel()
	const adaKey, bobKey = "bk_ada_own_key_5e1c", "bk_bob_own_key_93af"
	const adaOwner, bobOwner = "ada-owner", "bob-owner"
	clk := fakeclock.New(t0)
	sb := bookingtest.NewServer(t, bookingtest.WithClock(func() time.Time { return t0 }))
	hours := bookingtest.Weekdays(9*time.Hour, 17*time.Hour)
	sb.AddOwner(testKey, bookingtest.DemoOwner, berlin, hours)
	sb.AddOwner(adaKey, adaOwner, berlin, hours)
	sb.AddOwner(bobKey, bobOwner, newYork, hours)

	db, err := bolt.Open(t.TempDir(), bolt.Options{Beside: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	sealer, err := account.NewSealer(secret)
	if err != nil {
		t.Fatal(err)
	}
	for user, text := range map[string]string{ada: adaKey, bob: bobKey} {
		key, err := booking.NewKey(text)
		if err != nil {
			t.Fatal(err)
		}
		sealed, err := sealer.Seal(user, key)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Accounts().Put(t.Context(), account.Account{User: user, Sealed: sealed, ConnectedAt: t0, State: account.OK}); err != nil {
			t.Fatal(err)
		}
	}
	ownerKey, err := booking.NewKey(testKey)
	if err != nil {
		t.Fatal(err)
	}
	owner, err := booking.NewClient(sb.URL, ownerKey, booking.WithClock(clk.Now))
	if err != nil {
		t.Fatal(err)
	}
	b := bot.New(bot.Config{
		Accounts: db.Accounts(), Sealer: sealer,
		Calendars:  calendarsFor{booking.NewCalendars(sb.URL, booking.NewGuard(booking.DefaultLimits, clk.Now), nil, booking.WithClock(clk.Now))},
		RecentList: 15 * time.Second,
		Now:        clk.Now,
	}, owner, nil)

	reads := func() map[string]int {
		n := map[string]int{}
		for _, r := range sb.Requests() {
			if r.Endpoint == bookingtest.EndpointListBookings {
				n[r.Owner]++
			}
		}
		return n
	}
	want := func(what string, ownerReads, adaReads, bobReads int) {
		t.Helper()
		got := reads()
		if got[bookingtest.DemoOwner] != ownerReads || got[adaOwner] != adaReads || got[bobOwner] != bobReads {
			t.Errorf("%s: GET /bookings by key = %v, want %s %d, %s %d, %s %d",
				what, got, bookingtest.DemoOwner, ownerReads, adaOwner, adaReads, bobOwner, bobReads)
		}
	}

	label, reminders, err := b.CalendarOf(t.Context(), ada)
	if err != nil || label != ada {
		t.Fatalf("CalendarOf(ada) = %q, %v; want her own calendar", label, err)
	}
	accountOf := func(user string) account.Account {
		t.Helper()
		a, ok, err := db.Accounts().Get(t.Context(), user)
		if err != nil || !ok {
			t.Fatalf("%s's account: %v, %v", user, ok, err)
		}
		return a
	}
	adaKeyOpened, _ := booking.NewKey(adaKey)
	id, notices, err := b.NoticesOf(t.Context(), accountOf(ada))
	if err != nil || id != sealer.CalendarID(adaKeyOpened) {
		t.Fatalf("NoticesOf(ada) = %q, %v; want her own calendar", id, err)
	}
	first, err := reminders.Bookings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want("ada's reminders", 0, 1, 0)
	clk.Advance(10 * time.Second)
	// The notices date the list they took by when it was asked for, not
	// by now: what it no longer shows was gone by then.
	asker, ok := notices.(interface {
		BookingsAsked(context.Context) ([]booking.Booking, time.Time, error)
	})
	if !ok {
		t.Fatal("the notices' reader does not say when its list was asked for")
	}
	second, asked, err := asker.BookingsAsked(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := clk.Now().Add(-10 * time.Second); !asked.Equal(want) {
		t.Errorf("the shared list is dated %v, want %v, when the reminders asked for it", asked, want)
	}
	if len(second) != len(first) {
		t.Errorf("the notices got %d bookings, the reminders %d", len(second), len(first))
	}
	want("ada's notices 10 s after her reminders", 0, 1, 0)

	// Each look asks again; the readers are the calendar's, kept.
	if _, again, _ := b.CalendarOf(t.Context(), ada); again != reminders {
		t.Error("a second CalendarOf gave another reader: it would not know the list it had")
	}
	if _, again, _ := b.NoticesOf(t.Context(), accountOf(ada)); again != notices {
		t.Error("a second NoticesOf gave another reader: a person's notices would restart at every look")
	}

	// Another calendar's readers share among themselves, not with ada's.
	_, bobReminders, err := b.CalendarOf(t.Context(), bob)
	if err != nil {
		t.Fatal(err)
	}
	_, bobNotices, err := b.NoticesOf(t.Context(), accountOf(bob))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bobNotices.Bookings(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := bobReminders.Bookings(t.Context()); err != nil {
		t.Fatal(err)
	}
	want("bob's notices and reminders", 0, 1, 1)

	// Past 15 s the list is too old to take: the next reader reads.
	clk.Advance(16 * time.Second)
	if _, err := reminders.Bookings(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := notices.Bookings(t.Context()); err != nil {
		t.Fatal(err)
	}
	want("ada's reminders 26 s after her first read, then her notices", 0, 2, 1)
}

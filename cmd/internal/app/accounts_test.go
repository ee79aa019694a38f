package app

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/notices"
	"github.com/bookbot/bookbot/store/bolt"
)

// Each calendar's notices are told only of that calendar's writes: bob's
// unclear attempt on his own calendar at the time and address a booking
// of the owner's calendar has is not named in the owner's channel ("may
// be the booking bob asked for"), while ada's on the owner's calendar is;
// entries older than calendar IDs go by the calendar's person.
func TestEachCalendarsNoticesAreToldOfItsWritesOnly(t *testing.T) {
	t.Parallel()
	db, err := bolt.Open(t.TempDir(), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	jr := db.Journal()
	at := time.Date(2026, 3, 23, 10, 0, 0, 0, time.UTC)
	unclear := func(w booking.Write) {
		t.Helper()
		w.Op, w.End = booking.OpCreate, at.Add(15*time.Minute).Format(time.RFC3339)
		finish, err := jr.Begin(t.Context(), w)
		if err != nil {
			t.Fatal(err)
		}
		if err := finish(&booking.Result{Outcome: booking.ProbablyNotBooked}); err != nil {
			t.Fatal(err)
		}
	}
	start := at.Format(time.RFC3339)
	unclear(booking.Write{Actor: "UBOB", Calendar: "UBOB", CalendarID: "cal-bob", EventType: "intro-call", Start: start, Name: "Grace Hopper", Email: "grace@example.com"})
	unclear(booking.Write{Actor: "UADA", Calendar: booking.Owner, CalendarID: booking.Owner, EventType: "consultation", Start: start, Name: "Alan Turing", Email: "alan@example.com"})
	unclear(booking.Write{Actor: "UKIW", Calendar: "UKIW", EventType: "intro-call", Start: start, Name: "Kiri", Email: "kiri@example.com"})

	for _, c := range []struct {
		id, label string
		want      []string // the actors of the entries its watcher is told of
	}{
		{booking.Owner, booking.Owner, []string{"UADA"}},
		{"cal-bob", "UBOB", []string{"UBOB"}},
		{"cal-kiri", "UKIW", []string{"UKIW"}},
	} {
		got, err := writesOn(jr, c.id, c.label).Since(time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		var actors []string
		for _, e := range got {
			actors = append(actors, e.Actor)
		}
		if len(actors) != len(c.want) || (len(actors) > 0 && actors[0] != c.want[0]) {
			t.Errorf("the watcher of %s is told of the writes of %v, want %v", c.id, actors, c.want)
		}
	}

	// The owner's watcher, as NewWatcher makes it, on two bookings made on
	// the owner's page at that time: Grace's and Alan's.
	list := &bookings{}
	pub := &published{}
	w := notices.NewWatcher(notices.Config{
		List: list, Store: db.Notices(), Publisher: pub, Writes: writesOn(jr, booking.Owner, booking.Owner),
		Channel: "CNOTIFY", Now: func() time.Time { return at.Add(-time.Hour) }, Log: slog.New(slog.DiscardHandler),
		Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }, // an empty first read is read again at once
	})
	if err := w.Poll(t.Context()); err != nil {
		t.Fatal(err)
	}
	list.set([]booking.Booking{
		{ID: "b-grace", Start: at, End: at.Add(15 * time.Minute), Status: "confirmed", EventType: booking.Some("intro-call"), BookerName: booking.Some("Grace Hopper"), BookerEmail: booking.Some("grace@example.com")},
		{ID: "b-alan", Start: at, End: at.Add(15 * time.Minute), Status: "confirmed", EventType: booking.Some("consultation"), BookerName: booking.Some("Alan Turing"), BookerEmail: booking.Some("alan@example.com")},
	})
	if err := w.Poll(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := pub.byID()
	if n, ok := got["b-grace"]; !ok || n.Unclear != nil || n.By != nil {
		t.Errorf("Grace's booking on the owner's calendar: posted %v, by %+v, unclear %+v; want a stranger's, bob's attempt on his own calendar not named", ok, n.By, n.Unclear)
	}
	if n, ok := got["b-alan"]; !ok || n.Unclear == nil || n.Unclear.Actor != "UADA" {
		t.Errorf("Alan's booking on the owner's calendar: posted %v, unclear %+v; want ada's attempt on it named", ok, n.Unclear)
	}
}

// bookings is a bookings list a test sets.
type bookings struct {
	mu   sync.Mutex
	list []booking.Booking
}

func (b *bookings) set(l []booking.Booking) { b.mu.Lock(); b.list = l; b.mu.Unlock() }

func (b *bookings) Bookings(context.Context) ([]booking.Booking, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.list, nil
}

func (b *bookings) EventTypes(context.Context) ([]booking.EventType, error) { return nil, nil }

// published keeps the notices posted, by booking ID.
type published struct {
	mu sync.Mutex
	ns []notices.Notice
}

func (p *published) add(ns ...notices.Notice) {
	p.mu.Lock()
	p.ns = append(p.ns, ns...)
	p.mu.Unlock()
}

func (p *published) byID() map[string]notices.Notice {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]notices.Notice{}
	for _, n := range p.ns {
		out[n.Booking.ID] = n
	}
	return out
}

func (p *published) Post(_ context.Context, channel string, n notices.Notice) (notices.Message, error) {
	p.add(n)
	return notices.Message{Channel: channel, TS: "1.0"}, nil
}

func (p *published) Reply(_ context.Context, thread notices.Message, n notices.Notice) (notices.Message, error) {
	p.add(n)
	return thread, nil
}

func (p *published) Update(context.Context, notices.Message, notices.Notice) error { return nil }

func (p *published) Burst(_ context.Context, channel string, ns []notices.Notice) []notices.Sent {
	p.add(ns...)
	out := make([]notices.Sent, len(ns))
	for i := range out {
		out[i].Message = notices.Message{Channel: channel, TS: "1.0"}
	}
	return out
}

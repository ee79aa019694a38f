package personal_test

// Rules of the booking API text (shared/booking-api.md) held against the
// reminder runner.

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/personal"
)

// zoneShifting lists through a Lister and, once on, gives every time as
// the same instant in +05:30, as an API answer in another offset parses.
type zoneShifting struct {
	personal.Lister
	on atomic.Bool
}

func (z *zoneShifting) Bookings(ctx context.Context) ([]booking.Booking, error) {
	list, err := z.Lister.Bookings(ctx)
	if err != nil || !z.on.Load() {
		return list, err
	}
	ist := time.FixedZone("IST", 5*3600+1800)
	for i := range list {
		list[i].Start, list[i].End = list[i].Start.In(ist), list[i].End.In(ist)
	}
	return list, nil
}

// §2: timestamps are instants. A reminder already sent is not sent again
// when the next read lists the same booking in another offset, also after
// a restart (each tick is a new Runner).
func TestAPIRuleReminderOnceWhateverTheOffset(t *testing.T) {
	t.Parallel()
	p := newPlace(t)
	shift := &zoneShifting{Lister: p.cfg.List}
	p.cfg.List = shift
	p.set("UADA", personal.Settings{Remind: 15 * time.Minute})
	b := p.first()

	p.clock.Set(b.Start.Add(-15 * time.Minute))
	p.tick()
	if got := of(p.send.take(), b.ID); len(got) != 1 {
		t.Fatalf("at the time: %v, want one reminder", got)
	}
	shift.on.Store(true)
	p.clock.Advance(30 * time.Second)
	p.tick()
	if got := of(p.send.take(), b.ID); len(got) != 0 {
		t.Errorf("the same start in another offset was reminded of again: %v", got)
	}
	shift.on.Store(false)
	p.clock.Advance(30 * time.Second)
	p.tick()
	if got := of(p.send.take(), b.ID); len(got) != 0 {
		t.Errorf("back in UTC, reminded of again: %v", got)
	}
}

// §2 Booking and §3: listings hold only confirmed bookings, with status
// confirmed; cancelled ones are not listed. A booking the attendee has
// cancelled, listed all the same with status "cancelled", is neither
// reminded of nor counted in the day's agenda: the list is not read
// (ErrBadResponse), and once it reads as documented the agenda counts only
// the confirmed bookings and the cancelled one is never reminded of.
func TestAPIRuleListedStatusOtherThanConfirmedIsNotRemindedOf(t *testing.T) {
	t.Parallel()
	p := newPlace(t)
	p.set("UADA", personal.Settings{Remind: 15 * time.Minute, Agenda: &personal.Agenda{Minute: 7 * 60}})
	b := p.first()
	// The attendee's cancel is listed first against the text, as an entry
	// with status cancelled, and then as documented, by leaving it out.
	p.sb.EditAnswers(bookingtest.EndpointListBookings, bookingtest.ListedStatus(map[string]string{b.ID: "cancelled"}))
	tick := func() error { return personal.NewRunner(p.cfg).Tick(t.Context()) }

	local := b.Start.In(berlin)
	morning := time.Date(local.Year(), local.Month(), local.Day(), 7, 0, 0, 0, berlin)
	if !morning.Before(b.Start.Add(-15 * time.Minute)) {
		t.Fatalf("the agenda at %s does not come before the reminder of %s", morning, b.Start)
	}
	for _, at := range []time.Time{morning, b.Start.Add(-15 * time.Minute)} {
		p.clock.Set(at)
		if err := tick(); !errors.Is(err, booking.ErrBadResponse) {
			t.Fatalf("at %s: tick over a cancelled entry = %v, want ErrBadResponse", at, err)
		}
		if got := p.send.take(); len(got) != 0 {
			t.Fatalf("at %s, over a list with a cancelled entry: %+v", at, got)
		}
	}

	if err := p.sb.CancelAsAttendee(b.ID); err != nil {
		t.Fatal(err)
	}
	p.sb.EditAnswers(bookingtest.EndpointListBookings, nil)
	p.clock.Set(morning.Add(time.Minute))
	if err := tick(); err != nil {
		t.Fatal(err)
	}
	got := p.send.take()
	want := p.onDay(local.Year(), local.Month(), local.Day(), berlin)
	if len(got) != 1 || got[0].kind != personal.AgendaKind || got[0].n != want {
		t.Errorf("agenda once listed as documented: %+v, want %d bookings", got, want)
	}
	p.clock.Set(b.Start.Add(-14 * time.Minute))
	if err := tick(); err != nil {
		t.Fatal(err)
	}
	if got := of(p.send.take(), b.ID); len(got) != 0 {
		t.Errorf("the cancelled booking was reminded of: %v", got)
	}
}

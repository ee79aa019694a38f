package personal_test

// Rules of the booking API text (shared/booking-api.md) held against the
// reminder runner.

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
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

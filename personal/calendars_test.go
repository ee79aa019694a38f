package personal_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/personal"
)

// countingList counts the reads of a calendar's list.
type countingList struct {
	personal.Lister
	reads int
}

func (c *countingList) Bookings(ctx context.Context) ([]booking.Booking, error) {
	c.reads++
	return c.Lister.Bookings(ctx)
}

// With a Calendar, each person's reminders come from their own calendar,
// each calendar's list is read once a look, claims name the calendar, and
// a person whose calendar cannot be read is left out, not the others.
func TestRunnerPerCalendar(t *testing.T) {
	t.Parallel()
	p := newPlace(t)
	key, _ := booking.NewKey(bookingtest.OtherKey)
	other, err := booking.NewClient(p.sb.URL, key, booking.WithClock(p.clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	owner, own := &countingList{Lister: p.cfg.List}, &countingList{Lister: other}
	p.allowed["UCAT"] = true
	p.cfg.Calendar = func(_ context.Context, user string) (string, personal.Lister, error) {
		switch user {
		case "UADA":
			return "UADA", own, nil
		case "UCAT":
			return "", nil, errors.New("connect your calendar")
		}
		return personal.Owner, owner, nil
	}
	p.cfg.List = nil
	for _, u := range []string{"UADA", "UBOB", "UCAT"} {
		p.set(u, personal.Settings{Remind: 48 * time.Hour})
	}
	p.tick()
	got := p.send.take()
	ids := map[string]map[string]bool{}
	for _, s := range got {
		if ids[s.user] == nil {
			ids[s.user] = map[string]bool{}
		}
		ids[s.user][s.id] = true
	}
	if !ids["UADA"][bookingtest.OtherBookingID] || len(ids["UADA"]) != 1 {
		t.Errorf("UADA was reminded of %v; want only her own calendar's %s", ids["UADA"], bookingtest.OtherBookingID)
	}
	if len(ids["UBOB"]) == 0 || ids["UBOB"][bookingtest.OtherBookingID] {
		t.Errorf("UBOB was reminded of %v; want the owner's bookings", ids["UBOB"])
	}
	if len(ids["UCAT"]) != 0 {
		t.Errorf("UCAT, with no calendar, was reminded of %v", ids["UCAT"])
	}
	if owner.reads != 1 || own.reads != 1 {
		t.Errorf("lists read %d (owner's) and %d (UADA's) times; want once each", owner.reads, own.reads)
	}
	// Claims hold: a second look sends nothing again.
	p.tick()
	if again := p.send.take(); len(again) != 0 {
		t.Errorf("a second look sent %d again", len(again))
	}
}

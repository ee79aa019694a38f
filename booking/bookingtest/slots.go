package bookingtest

import (
	"slices"
	"time"
)

// slotsLocked computes the slots GET /slots offers at now: within the window
// [now, now+14 days) shortened by the event's PeriodDays, inside the owner's
// weekly hours, stepping by the event's duration from the start of each
// range, starting strictly after now and not overlapping any confirmed
// booking of the owner, whatever its event type; for a round robin, of
// one of its hosts.
func (s *Sandbox) slotsLocked(o *owner, et *EventType, now time.Time) []Slot {
	dur := time.Duration(et.DurationMinutes) * time.Minute
	window := slotWindow
	if et.PeriodDays > 0 && time.Duration(et.PeriodDays)*24*time.Hour < window {
		window = time.Duration(et.PeriodDays) * 24 * time.Hour
	}
	end := now.Add(window)
	var busy [][]*Booking // each host's calendar
	for _, h := range o.hosts(et) {
		busy = append(busy, s.ownerBookingsLocked(h, true))
	}
	taken := func(st time.Time) bool {
		for _, b := range busy {
			if !overlapsAny(b, st, st.Add(dur)) {
				return false
			}
		}
		return true
	}

	out := []Slot{} // never null in JSON
	y, m, d := now.In(o.zone).Date()
	// Begin a day early: a range of yesterday may run past midnight.
	for i := -1; ; i++ {
		if !time.Date(y, m, d+i, 0, 0, 0, 0, o.zone).Before(end) {
			break
		}
		// Noon is never skipped by a DST change, so its weekday is the day's.
		wd := time.Date(y, m, d+i, 12, 0, 0, 0, o.zone).Weekday()
		for _, r := range o.hours[wd] {
			// Wall-clock times built with time.Date, so 09:00 stays 09:00
			// on both sides of a DST change.
			from, to := localTime(y, m, d+i, r.From, o.zone), localTime(y, m, d+i, r.To, o.zone)
			for st := from; !st.Add(dur).After(to) && st.Before(end); st = st.Add(dur) {
				if !st.After(now) || taken(st) {
					continue
				}
				out = append(out, Slot{Start: st, End: st.Add(dur)})
			}
		}
	}
	slices.SortFunc(out, func(a, b Slot) int { return a.Start.Compare(b.Start) })
	// Overlapping ranges in the hours would offer a slot twice.
	return slices.CompactFunc(out, func(a, b Slot) bool { return a.Start.Equal(b.Start) })
}

// localTime is the instant at wall-clock offset off after midnight of the
// given day in zone. Normalising the clock fields in time.Date keeps it
// correct on days with a DST change, unlike adding off to midnight.
func localTime(y int, m time.Month, d int, off time.Duration, zone *time.Location) time.Time {
	h := off / time.Hour
	off -= h * time.Hour
	mi := off / time.Minute
	off -= mi * time.Minute
	sec := off / time.Second
	off -= sec * time.Second
	return time.Date(y, m, d, int(h), int(mi), int(sec), int(off), zone)
}

func overlapsAny(busy []*Booking, start, end time.Time) bool {
	for _, b := range busy {
		if b.Start.Before(end) && start.Before(b.End) {
			return true
		}
	}
	return false
}

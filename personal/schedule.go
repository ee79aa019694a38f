package personal

import (
	"cmp"
	"slices"
	"time"

	"github.com/bookbot/bookbot/booking"
)

// Due is a message due to one person.
type Due struct {
	Kind Kind   // Reminder or AgendaKind
	User string // the person's Slack user ID
	Key  string // ReminderKey or AgendaKey: what Store.Claim is given
	At   time.Time
	// Late is set when now is more than LateAfter past At: bookbot was
	// down, or the setting came after At.
	Late bool

	// Booking is what a Reminder reminds of.
	Booking booking.Booking

	// Day is an agenda's local date in the person's zone.
	Day Date
	// Bookings are the agenda's: the listed bookings starting on Day, in
	// start order.
	Bookings []booking.Booking
	// Incomplete is set when the list was full (booking.MaxListed) and
	// Day may go on past its last booking: bookings of Day may be missing.
	Incomplete bool
}

// Kind is what a Due is.
type Kind string

const (
	Reminder   Kind = "reminder"
	AgendaKind Kind = "agenda"
)

// LateAfter is how long past its time a message may go out and still not
// be late.
const LateAfter = 2 * time.Minute

// Reminders are the reminders due to user at now: one for each listed
// booking whose start minus s.Remind is at or before now and whose start
// is after now. A reminder missed while bookbot was down still goes out
// while the meeting has not started, and never after. None when s.Remind
// is 0 (or negative).
//
// They come in the order of their times, then booking IDs; a booking
// listed twice with the same ID and start is reminded of once.
func Reminders(user string, s Settings, list []booking.Booking, now time.Time) []Due {
	if s.Remind <= 0 {
		return nil
	}
	var due []Due
	seen := map[string]bool{}
	for _, b := range list {
		at := b.Start.Add(-s.Remind)
		if at.After(now) || !b.Start.After(now) {
			continue
		}
		key := ReminderKey(user, b.ID, b.Start)
		if seen[key] {
			continue
		}
		seen[key] = true
		due = append(due, Due{
			Kind:    Reminder,
			User:    user,
			Key:     key,
			At:      at,
			Late:    late(at, now),
			Booking: b,
		})
	}
	slices.SortStableFunc(due, func(a, b Due) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.Booking.ID, b.Booking.ID))
	})
	return due
}

// NextReminder is the first reminder time strictly after now for the
// listed bookings, and the booking it is for; zero and nil when there is
// none, or s.Remind is 0.
func NextReminder(s Settings, list []booking.Booking, now time.Time) (time.Time, *booking.Booking) {
	if s.Remind <= 0 {
		return time.Time{}, nil
	}
	var next time.Time
	var of *booking.Booking
	for i, b := range list {
		at := b.Start.Add(-s.Remind)
		if at.After(now) && (next.IsZero() || at.Before(next)) {
			next, of = at, &list[i]
		}
	}
	return next, of
}

// AgendaTime is the instant of an agenda on local date d in loc: that
// wall-clock minute; when the clocks skip it (spring forward), the first
// instant after the gap; when they repeat it (fall back), the first of the
// two. A Minute outside 0–1439 is taken as the nearest of those.
func AgendaTime(a Agenda, d Date, loc *time.Location) time.Time {
	return localInstant(d, clampMinute(a.Minute), loc)
}

// AgendaDeadline is when a missed agenda stops going out: local noon of its
// day, or an hour after its time when that is later, but never past the
// day's end (the next local midnight). The agenda is due before the
// deadline, not at it.
func AgendaDeadline(a Agenda, d Date, loc *time.Location) time.Time {
	deadline := localInstant(d, 12*60, loc)
	if t := AgendaTime(a, d, loc).Add(time.Hour); t.After(deadline) {
		deadline = t
	}
	if end := dayStart(d.next(), loc); end.Before(deadline) {
		deadline = end
	}
	return deadline
}

// AgendaDue is user's agenda if it is due at now in loc: today's (local)
// agenda time is at or before now, its deadline is after now, and with
// Weekdays it is Monday to Friday locally. Its Bookings are the listed
// ones starting on that local date, from its first instant (local
// midnight, or the end of a gap that skips it) to the next day's.
func AgendaDue(user string, s Settings, list []booking.Booking, loc *time.Location, now time.Time) (Due, bool) {
	if s.Agenda == nil {
		return Due{}, false
	}
	a := *s.Agenda
	d := DateOf(now, loc)
	if a.Weekdays && weekend(d) {
		return Due{}, false
	}
	at := AgendaTime(a, d, loc)
	if now.Before(at) || !now.Before(AgendaDeadline(a, d, loc)) {
		return Due{}, false
	}
	bookings, incomplete := DayBookings(list, d, loc)
	return Due{
		Kind:       AgendaKind,
		User:       user,
		Key:        AgendaKey(user, d),
		At:         at,
		Late:       late(at, now),
		Day:        d,
		Bookings:   bookings,
		Incomplete: incomplete,
	}, true
}

// NextAgenda is the first agenda time strictly after now (on a weekday,
// with Weekdays); zero when the agenda is off.
func NextAgenda(s Settings, loc *time.Location, now time.Time) time.Time {
	if s.Agenda == nil {
		return time.Time{}
	}
	a := *s.Agenda
	d := DateOf(now, loc)
	// Today's may have passed, and a weekend is at most two days: a week
	// is more than enough, even where a day is skipped.
	for range 8 {
		if !a.Weekdays || !weekend(d) {
			if t := AgendaTime(a, d, loc); t.After(now) {
				return t
			}
		}
		d = d.next()
	}
	return time.Time{}
}

// DayBookings are the bookings of list starting on d in loc, from its
// first instant (local midnight, or the end of a gap that skips it) to the
// next day's, in start order, and whether the list was full and may have
// cut d's short: its latest start is before d's end, so bookings cut off
// it may start on d.
func DayBookings(list []booking.Booking, d Date, loc *time.Location) ([]booking.Booking, bool) {
	start, end := dayStart(d, loc), dayStart(d.next(), loc)
	var (
		day    []booking.Booking
		latest time.Time
	)
	for i, b := range list {
		if i == 0 || b.Start.After(latest) {
			latest = b.Start
		}
		if !b.Start.Before(start) && b.Start.Before(end) {
			day = append(day, b)
		}
	}
	slices.SortStableFunc(day, func(a, b booking.Booking) int { return a.Start.Compare(b.Start) })
	return day, len(list) >= booking.MaxListed && latest.Before(end)
}

func late(at, now time.Time) bool { return now.Sub(at) > LateAfter }

func clampMinute(m int) int { return min(max(m, 0), 24*60-1) }

// dayStart is the first instant of d in loc: local midnight, or the end of
// a gap that skips it.
func dayStart(d Date, loc *time.Location) time.Time { return localInstant(d, 0, loc) }

// localInstant is the instant of wall-clock minute min (0–1439) of local
// date d in loc. When the clocks skip that minute it is the first instant
// after the gap; when they repeat it, the first of the two. (time.Date
// promises neither: it picks one of the zones at a transition.)
func localInstant(d Date, minute int, loc *time.Location) time.Time {
	want := time.Date(d.Year, d.Month, d.Day, 0, minute, 0, 0, time.UTC) // the wall clock
	guess := time.Date(d.Year, d.Month, d.Day, 0, minute, 0, 0, loc)

	// The wall clock is read in the zone (offset) in effect at the guess,
	// or in the one just before or after it. Those that give it back are
	// the instants it names.
	var (
		best  time.Time
		found bool
	)
	try := func(t time.Time) {
		_, offset := t.Zone()
		at := want.Add(-time.Duration(offset) * time.Second).In(loc)
		if wall(at).Equal(want) && (!found || at.Before(best)) {
			best, found = at, true
		}
	}
	try(guess)
	start, end := guess.ZoneBounds()
	if !start.IsZero() {
		try(start.Add(-1))
	}
	if !end.IsZero() {
		try(end)
	}
	if found {
		return best
	}

	// A gap: it ends at the change between the zone of the guess and its
	// neighbour. A guess past the wall clock is in the later zone.
	if wall(guess).After(want) && !start.IsZero() {
		return start
	}
	if !end.IsZero() {
		return end
	}
	return guess
}

// wall is t's wall clock as if it were UTC.
func wall(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

// next is the day after d.
func (d Date) next() Date {
	y, m, day := time.Date(d.Year, d.Month, d.Day+1, 12, 0, 0, 0, time.UTC).Date()
	return Date{y, m, day}
}

func weekend(d Date) bool {
	switch time.Date(d.Year, d.Month, d.Day, 12, 0, 0, 0, time.UTC).Weekday() {
	case time.Saturday, time.Sunday:
		return true
	}
	return false
}

package personal_test

import (
	"fmt"
	"slices"
	"testing"
	"time"
	_ "time/tzdata" // the zones below, even without a zoneinfo database

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/internal/testutil"
	"github.com/bookbot/bookbot/personal"
)

var (
	berlin   = testutil.Zone("Europe/Berlin")
	newYork  = testutil.Zone("America/New_York")
	auckland = testutil.Zone("Pacific/Auckland")
	kolkata  = testutil.Zone("Asia/Kolkata")
	santiago = testutil.Zone("America/Santiago")
	lordHowe = testutil.Zone("Australia/Lord_Howe")
)

// ts parses an RFC 3339 time; it panics on a typo in a table.
func ts(s string) time.Time {
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return v
}

// bk is a 30-minute booking starting at start (RFC 3339, any offset).
func bk(id, start string) booking.Booking {
	s := ts(start)
	return booking.Booking{
		ID: id, Start: s, End: s.Add(30 * time.Minute), Status: "confirmed",
		BookerName: booking.Some("Ada"), BookerEmail: booking.Some("ada@example.com"), EventType: booking.Some("intro"),
	}
}

func date(s string) personal.Date {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return personal.DateOf(t, time.UTC)
}

func agenda(hhmm string, weekdays bool) *personal.Agenda {
	var h, m int
	if _, err := fmt.Sscanf(hhmm, "%d:%d", &h, &m); err != nil {
		panic(err)
	}
	return &personal.Agenda{Minute: h*60 + m, Weekdays: weekdays}
}

func ids(list []booking.Booking) []string {
	out := []string{}
	for _, b := range list {
		out = append(out, b.ID)
	}
	return out
}

// same fails unless got is the instant want names, in the same offset:
// the wall clock a person reads, not just the instant.
func same(t *testing.T, what string, got time.Time, loc *time.Location, want string) {
	t.Helper()
	if want == "" {
		if !got.IsZero() {
			t.Errorf("%s = %v, want zero", what, got)
		}
		return
	}
	w := ts(want)
	if !got.Equal(w) || got.In(loc).Format(time.RFC3339Nano) != want {
		t.Errorf("%s = %s, want %s", what, got.In(loc).Format(time.RFC3339Nano), want)
	}
}

const user = "U123"

func TestReminders(t *testing.T) {
	t.Parallel()
	at10 := bk("b1", "2026-11-24T10:00:00Z")
	type due struct {
		id   string
		at   string
		late bool
	}
	cases := []struct {
		name   string
		remind time.Duration
		list   []booking.Booking
		now    string
		want   []due
	}{
		{name: "remind off", remind: 0, list: []booking.Booking{at10}, now: "2026-11-24T09:59:00Z"},
		{name: "remind negative", remind: -time.Minute, list: []booking.Booking{at10}, now: "2026-11-24T09:59:00Z"},
		{name: "no bookings", remind: 15 * time.Minute, now: "2026-11-24T09:50:00Z"},
		{name: "one ns before start minus remind", remind: 15 * time.Minute, list: []booking.Booking{at10},
			now: "2026-11-24T09:44:59.999999999Z"},
		{name: "exactly at start minus remind", remind: 15 * time.Minute, list: []booking.Booking{at10},
			now: "2026-11-24T09:45:00Z", want: []due{{"b1", "2026-11-24T09:45:00Z", false}}},
		{name: "late after exactly LateAfter is not late", remind: 15 * time.Minute, list: []booking.Booking{at10},
			now: "2026-11-24T09:47:00Z", want: []due{{"b1", "2026-11-24T09:45:00Z", false}}},
		{name: "a ns past LateAfter is late", remind: 15 * time.Minute, list: []booking.Booking{at10},
			now: "2026-11-24T09:47:00.000000001Z", want: []due{{"b1", "2026-11-24T09:45:00Z", true}}},
		{name: "missed while down, before the start: late", remind: 15 * time.Minute, list: []booking.Booking{at10},
			now: "2026-11-24T09:59:59.999999999Z", want: []due{{"b1", "2026-11-24T09:45:00Z", true}}},
		{name: "at the start: none", remind: 15 * time.Minute, list: []booking.Booking{at10}, now: "2026-11-24T10:00:00Z"},
		{name: "after the start: none", remind: 15 * time.Minute, list: []booking.Booking{at10}, now: "2026-11-24T10:10:00Z"},
		{name: "minimum remind", remind: personal.MinRemind, list: []booking.Booking{at10},
			now: "2026-11-24T09:59:00Z", want: []due{{"b1", "2026-11-24T09:59:00Z", false}}},
		{name: "maximum remind", remind: personal.MaxRemind, list: []booking.Booking{at10},
			now: "2026-11-23T10:00:00Z", want: []due{{"b1", "2026-11-23T10:00:00Z", false}}},
		{name: "maximum remind, a ns early", remind: personal.MaxRemind, list: []booking.Booking{at10},
			now: "2026-11-23T09:59:59.999999999Z"},
		{name: "start in another zone", remind: time.Hour, list: []booking.Booking{bk("b1", "2026-11-24T15:30:00+05:30")},
			now: "2026-11-24T09:00:00Z", want: []due{{"b1", "2026-11-24T09:00:00Z", false}}},
		{name: "unordered list, only those in their window", remind: time.Hour,
			list: []booking.Booking{
				bk("later", "2026-11-24T10:40:00Z"), // due 09:40
				bk("past", "2026-11-24T09:00:00Z"),  // started
				bk("soon", "2026-11-24T10:00:00Z"),  // due 09:00
				bk("far", "2026-11-24T12:00:00Z"),   // due 11:00
				bk("b", "2026-11-24T10:20:00Z"),     // due 09:20, same as a
				bk("a", "2026-11-24T10:20:00Z"),
			},
			now: "2026-11-24T09:41:00Z",
			want: []due{
				{"soon", "2026-11-24T09:00:00Z", true},
				{"a", "2026-11-24T09:20:00Z", true},
				{"b", "2026-11-24T09:20:00Z", true},
				{"later", "2026-11-24T09:40:00Z", false},
			}},
		{name: "listed twice: reminded once", remind: time.Hour,
			list: []booking.Booking{at10, at10}, now: "2026-11-24T09:30:00Z",
			want: []due{{"b1", "2026-11-24T09:00:00Z", true}}},
		{name: "same ID at two starts: both", remind: time.Hour,
			list: []booking.Booking{at10, bk("b1", "2026-11-24T10:30:00Z")}, now: "2026-11-24T09:30:00Z",
			want: []due{{"b1", "2026-11-24T09:00:00Z", true}, {"b1", "2026-11-24T09:30:00Z", false}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := personal.Settings{Remind: c.remind}
			got := personal.Reminders(user, s, c.list, ts(c.now))
			if len(got) != len(c.want) {
				t.Fatalf("%d reminders %+v, want %d", len(got), got, len(c.want))
			}
			for i, w := range c.want {
				g := got[i]
				if g.Kind != personal.Reminder || g.User != user || g.Booking.ID != w.id || !g.At.Equal(ts(w.at)) || g.Late != w.late {
					t.Errorf("reminder %d = {%s %s %s %s late %v}, want {reminder %s %s %s late %v}",
						i, g.Kind, g.User, g.Booking.ID, g.At.Format(time.RFC3339Nano), g.Late, user, w.id, w.at, w.late)
				}
				if want := personal.ReminderKey(user, g.Booking.ID, g.Booking.Start); g.Key != want {
					t.Errorf("reminder %d key %q, want %q", i, g.Key, want)
				}
				if !g.At.Equal(g.Booking.Start.Add(-c.remind)) {
					t.Errorf("reminder %d at %v, want its start less %v", i, g.At, c.remind)
				}
				if g.Bookings != nil || g.Day != (personal.Date{}) || g.Incomplete {
					t.Errorf("reminder %d has agenda fields: %+v", i, g)
				}
			}
		})
	}
}

func TestReminderOfAMovedBooking(t *testing.T) {
	t.Parallel()
	s := personal.Settings{Remind: 15 * time.Minute}
	before := bk("b1", "2026-11-24T10:00:00Z")
	moved := bk("b1", "2026-11-24T11:00:00Z")

	first := personal.Reminders(user, s, []booking.Booking{before}, ts("2026-11-24T09:50:00Z"))
	// Moved an hour later after the first reminder went out: reminded again.
	second := personal.Reminders(user, s, []booking.Booking{moved}, ts("2026-11-24T10:50:00Z"))
	if len(first) != 1 || len(second) != 1 {
		t.Fatalf("reminders %+v and %+v, want one each", first, second)
	}
	if first[0].Key == second[0].Key {
		t.Errorf("a booking moved to another start has the same key %q", first[0].Key)
	}
	if second[0].Key != personal.ReminderKey(user, "b1", moved.Start) {
		t.Errorf("key %q, want the moved start's", second[0].Key)
	}
	// The same start in another zone is the same reminder.
	zoned := moved
	zoned.Start = moved.Start.In(kolkata)
	again := personal.Reminders(user, s, []booking.Booking{zoned}, ts("2026-11-24T10:50:00Z"))
	if len(again) != 1 || again[0].Key != second[0].Key {
		t.Errorf("the same start in another zone: %+v, want key %q", again, second[0].Key)
	}
	// Another person's reminder of the same booking is theirs.
	other := personal.Reminders("U999", s, []booking.Booking{moved}, ts("2026-11-24T10:50:00Z"))
	if len(other) != 1 || other[0].Key == second[0].Key {
		t.Errorf("another person's reminder: %+v, want a key other than %q", other, second[0].Key)
	}
}

func TestNextReminder(t *testing.T) {
	t.Parallel()
	list := []booking.Booking{
		bk("c", "2026-11-24T12:00:00Z"),
		bk("a", "2026-11-24T10:00:00Z"),
		bk("b", "2026-11-24T11:00:00Z"),
	}
	cases := []struct {
		name   string
		remind time.Duration
		list   []booking.Booking
		now    string
		want   string
		of     string // the booking's ID
	}{
		{"off", 0, list, "2026-11-24T08:00:00Z", "", ""},
		{"no bookings", time.Hour, nil, "2026-11-24T08:00:00Z", "", ""},
		{"earliest of an unordered list", time.Hour, list, "2026-11-24T08:00:00Z", "2026-11-24T09:00:00Z", "a"},
		{"strictly after now", time.Hour, list, "2026-11-24T09:00:00Z", "2026-11-24T10:00:00Z", "b"},
		{"one due now is not next", time.Hour, list, "2026-11-24T09:30:00Z", "2026-11-24T10:00:00Z", "b"},
		{"all passed", time.Hour, list, "2026-11-24T11:00:00Z", "", ""},
		{"a ns before the last", time.Hour, list, "2026-11-24T10:59:59.999999999Z", "2026-11-24T11:00:00Z", "c"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, of := personal.NextReminder(personal.Settings{Remind: c.remind}, c.list, ts(c.now))
			same(t, "NextReminder", got, time.UTC, c.want)
			id := ""
			if of != nil {
				id = of.ID
			}
			if id != c.of {
				t.Errorf("NextReminder is for booking %q, want %q", id, c.of)
			}
		})
	}
}

func TestAgendaTime(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		loc    *time.Location
		day    string
		minute int
		want   string
	}{
		{"UTC midnight", time.UTC, "2026-11-24", 0, "2026-11-24T00:00:00Z"},
		{"UTC last minute", time.UTC, "2026-11-24", 1439, "2026-11-24T23:59:00Z"},
		{"below range is midnight", time.UTC, "2026-11-24", -5, "2026-11-24T00:00:00Z"},
		{"past range is the last minute", time.UTC, "2026-11-24", 1440, "2026-11-24T23:59:00Z"},
		{"Berlin winter", berlin, "2026-01-15", 8 * 60, "2026-01-15T08:00:00+01:00"},
		{"Berlin summer", berlin, "2026-07-15", 8 * 60, "2026-07-15T08:00:00+02:00"},
		{"Berlin spring forward: before the gap", berlin, "2026-03-29", 1*60 + 59, "2026-03-29T01:59:00+01:00"},
		{"Berlin spring forward: 02:00 skipped", berlin, "2026-03-29", 2 * 60, "2026-03-29T03:00:00+02:00"},
		{"Berlin spring forward: 02:30 skipped", berlin, "2026-03-29", 2*60 + 30, "2026-03-29T03:00:00+02:00"},
		{"Berlin spring forward: 02:59 skipped", berlin, "2026-03-29", 2*60 + 59, "2026-03-29T03:00:00+02:00"},
		{"Berlin spring forward: 03:00", berlin, "2026-03-29", 3 * 60, "2026-03-29T03:00:00+02:00"},
		{"Berlin spring forward: 08:00", berlin, "2026-03-29", 8 * 60, "2026-03-29T08:00:00+02:00"},
		{"Berlin fall back: 01:59", berlin, "2026-10-25", 1*60 + 59, "2026-10-25T01:59:00+02:00"},
		{"Berlin fall back: 02:00 repeated, first", berlin, "2026-10-25", 2 * 60, "2026-10-25T02:00:00+02:00"},
		{"Berlin fall back: 02:30 repeated, first", berlin, "2026-10-25", 2*60 + 30, "2026-10-25T02:30:00+02:00"},
		{"Berlin fall back: 02:59 repeated, first", berlin, "2026-10-25", 2*60 + 59, "2026-10-25T02:59:00+02:00"},
		{"Berlin fall back: 03:00", berlin, "2026-10-25", 3 * 60, "2026-10-25T03:00:00+01:00"},
		{"New York spring forward: 02:30 skipped", newYork, "2026-03-08", 2*60 + 30, "2026-03-08T03:00:00-04:00"},
		{"New York spring forward: 08:00", newYork, "2026-03-08", 8 * 60, "2026-03-08T08:00:00-04:00"},
		{"New York fall back: 01:30 repeated, first", newYork, "2026-11-01", 1*60 + 30, "2026-11-01T01:30:00-04:00"},
		{"New York fall back: 08:00", newYork, "2026-11-01", 8 * 60, "2026-11-01T08:00:00-05:00"},
		{"Auckland winter", auckland, "2026-06-01", 8 * 60, "2026-06-01T08:00:00+12:00"},
		{"Auckland summer", auckland, "2026-01-05", 8 * 60, "2026-01-05T08:00:00+13:00"},
		{"Auckland fall back: 02:30 repeated, first", auckland, "2026-04-05", 2*60 + 30, "2026-04-05T02:30:00+13:00"},
		{"Auckland spring forward: 02:30 skipped", auckland, "2026-09-27", 2*60 + 30, "2026-09-27T03:00:00+13:00"},
		{"Kolkata", kolkata, "2026-03-29", 8 * 60, "2026-03-29T08:00:00+05:30"},
		{"Kolkata midnight", kolkata, "2026-03-29", 0, "2026-03-29T00:00:00+05:30"},
		{"Santiago midnight skipped", santiago, "2026-09-06", 0, "2026-09-06T01:00:00-03:00"},
		{"Santiago 00:30 skipped", santiago, "2026-09-06", 30, "2026-09-06T01:00:00-03:00"},
		{"Santiago 23:30 repeated, first", santiago, "2026-04-04", 23*60 + 30, "2026-04-04T23:30:00-03:00"},
		{"Lord Howe half-hour gap", lordHowe, "2026-10-04", 2*60 + 15, "2026-10-04T02:30:00+11:00"},
		{"Lord Howe half-hour fold, first", lordHowe, "2026-04-05", 1*60 + 45, "2026-04-05T01:45:00+11:00"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := personal.AgendaTime(personal.Agenda{Minute: c.minute}, date(c.day), c.loc)
			same(t, "AgendaTime", got, c.loc, c.want)
		})
	}
}

// wallOf is t's wall clock in loc, as if it were UTC.
func wallOf(t time.Time, loc *time.Location) time.Time {
	t = t.In(loc)
	y, m, d := t.Date()
	return time.Date(y, m, d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

// TestAgendaTimeEveryQuarterHour holds AgendaTime to its rule for every
// quarter hour of 2026 in zones with whole, half-hour and midnight clock
// changes.
func TestAgendaTimeEveryQuarterHour(t *testing.T) {
	t.Parallel()
	for _, loc := range []*time.Location{time.UTC, berlin, newYork, auckland, kolkata, santiago, lordHowe} {
		gaps, folds := 0, 0
		for day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC); day.Year() == 2026; day = day.AddDate(0, 0, 1) {
			d := personal.DateOf(day, time.UTC)
			for minute := 0; minute < 24*60; minute += 15 {
				want := day.Add(time.Duration(minute) * time.Minute) // the wall clock
				got := personal.AgendaTime(personal.Agenda{Minute: minute}, d, loc)
				switch w := wallOf(got, loc); {
				case w.Equal(want):
					// The first of the instants that read so.
					for _, back := range []time.Duration{30 * time.Minute, time.Hour, 2 * time.Hour} {
						if wallOf(got.Add(-back), loc).Equal(want) {
							folds++
							t.Errorf("%s %s: %v, but %v earlier reads the same", loc, want.Format("2006-01-02 15:04"), got, back)
						}
					}
					if wallOf(got.Add(time.Hour), loc).Equal(want) || wallOf(got.Add(30*time.Minute), loc).Equal(want) {
						folds++
					}
				case w.After(want) && wallOf(got.Add(-1), loc).Before(want):
					gaps++ // the first instant after a gap
				default:
					t.Errorf("%s %s: %v, reads %v", loc, want.Format("2006-01-02 15:04"), got, w)
				}
			}
		}
		if loc != time.UTC && loc != kolkata && (gaps == 0 || folds == 0) {
			t.Errorf("%s: %d gaps and %d folds, want some of each", loc, gaps, folds)
		}
	}
}

func TestAgendaDeadline(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		loc    *time.Location
		day    string
		agenda string
		want   string
	}{
		{"08:00 until noon", time.UTC, "2026-11-24", "08:00", "2026-11-24T12:00:00Z"},
		{"00:00 until noon", time.UTC, "2026-11-24", "00:00", "2026-11-24T12:00:00Z"},
		{"11:00 until noon", time.UTC, "2026-11-24", "11:00", "2026-11-24T12:00:00Z"},
		{"11:30 until an hour later", time.UTC, "2026-11-24", "11:30", "2026-11-24T12:30:00Z"},
		{"13:00 until 14:00", time.UTC, "2026-11-24", "13:00", "2026-11-24T14:00:00Z"},
		{"22:59 until 23:59", time.UTC, "2026-11-24", "22:59", "2026-11-24T23:59:00Z"},
		{"23:00 until midnight", time.UTC, "2026-11-24", "23:00", "2026-11-25T00:00:00Z"},
		{"23:30 until midnight, not the next day", time.UTC, "2026-11-24", "23:30", "2026-11-25T00:00:00Z"},
		{"23:59 until midnight", time.UTC, "2026-11-24", "23:59", "2026-11-25T00:00:00Z"},
		{"Berlin 08:00", berlin, "2026-11-24", "08:00", "2026-11-24T12:00:00+01:00"},
		{"Berlin spring forward 02:30", berlin, "2026-03-29", "02:30", "2026-03-29T12:00:00+02:00"},
		{"Berlin fall back 23:30 until the local midnight", berlin, "2026-10-25", "23:30", "2026-10-26T00:00:00+01:00"},
		{"Kolkata 23:30", kolkata, "2026-11-24", "23:30", "2026-11-25T00:00:00+05:30"},
		{"Santiago 23:30 before a skipped midnight", santiago, "2026-09-05", "23:30", "2026-09-06T01:00:00-03:00"},
		{"Santiago 23:30 repeated: an hour later is the second", santiago, "2026-04-04", "23:30", "2026-04-04T23:30:00-04:00"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := personal.AgendaDeadline(*agenda(c.agenda, false), date(c.day), c.loc)
			same(t, "AgendaDeadline", got, c.loc, c.want)
		})
	}
}

func TestAgendaDue(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		loc    *time.Location
		agenda *personal.Agenda
		now    string
		want   bool
		day    string // and the rest, when want
		at     string
		late   bool
	}{
		{name: "off", loc: time.UTC, now: "2026-11-24T08:00:00Z"},
		{name: "before its time", loc: time.UTC, agenda: agenda("08:00", false), now: "2026-11-24T07:59:59.999999999Z"},
		{name: "at its time", loc: time.UTC, agenda: agenda("08:00", false), now: "2026-11-24T08:00:00Z",
			want: true, day: "2026-11-24", at: "2026-11-24T08:00:00Z"},
		{name: "LateAfter past its time: not late", loc: time.UTC, agenda: agenda("08:00", false), now: "2026-11-24T08:02:00Z",
			want: true, day: "2026-11-24", at: "2026-11-24T08:00:00Z"},
		{name: "a ns more: late", loc: time.UTC, agenda: agenda("08:00", false), now: "2026-11-24T08:02:00.000000001Z",
			want: true, day: "2026-11-24", at: "2026-11-24T08:00:00Z", late: true},
		{name: "08:00 still due before noon", loc: time.UTC, agenda: agenda("08:00", false), now: "2026-11-24T11:59:59.999999999Z",
			want: true, day: "2026-11-24", at: "2026-11-24T08:00:00Z", late: true},
		{name: "08:00 not due at noon", loc: time.UTC, agenda: agenda("08:00", false), now: "2026-11-24T12:00:00Z"},
		{name: "08:00 not due in the evening", loc: time.UTC, agenda: agenda("08:00", false), now: "2026-11-24T20:00:00Z"},
		{name: "13:00 due at 13:59", loc: time.UTC, agenda: agenda("13:00", false), now: "2026-11-24T13:59:00Z",
			want: true, day: "2026-11-24", at: "2026-11-24T13:00:00Z", late: true},
		{name: "13:00 not due at 14:00", loc: time.UTC, agenda: agenda("13:00", false), now: "2026-11-24T14:00:00Z"},
		{name: "23:30 due at 23:59", loc: time.UTC, agenda: agenda("23:30", false), now: "2026-11-24T23:59:59Z",
			want: true, day: "2026-11-24", at: "2026-11-24T23:30:00Z", late: true},
		{name: "23:30 not due after midnight", loc: time.UTC, agenda: agenda("23:30", false), now: "2026-11-25T00:00:00Z"},
		{name: "23:30 not due the next morning", loc: time.UTC, agenda: agenda("23:30", false), now: "2026-11-25T00:30:00Z"},
		{name: "weekdays: Saturday", loc: time.UTC, agenda: agenda("08:00", true), now: "2026-11-28T08:00:00Z"},
		{name: "weekdays: Sunday", loc: time.UTC, agenda: agenda("08:00", true), now: "2026-11-29T08:00:00Z"},
		{name: "weekdays: Monday", loc: time.UTC, agenda: agenda("08:00", true), now: "2026-11-30T08:00:00Z",
			want: true, day: "2026-11-30", at: "2026-11-30T08:00:00Z"},
		{name: "weekdays: Friday", loc: time.UTC, agenda: agenda("08:00", true), now: "2026-11-27T09:00:00Z",
			want: true, day: "2026-11-27", at: "2026-11-27T08:00:00Z", late: true},
		{name: "every day: Saturday", loc: time.UTC, agenda: agenda("08:00", false), now: "2026-11-28T08:00:00Z",
			want: true, day: "2026-11-28", at: "2026-11-28T08:00:00Z"},
		{name: "weekdays: local Monday, Sunday in UTC", loc: auckland, agenda: agenda("08:00", true), now: "2026-06-07T20:00:00Z",
			want: true, day: "2026-06-08", at: "2026-06-08T08:00:00+12:00"},
		{name: "weekdays: local Sunday, Monday in UTC", loc: newYork, agenda: agenda("23:30", true), now: "2026-11-30T04:45:00Z"},
		{name: "weekdays: local Friday, Saturday in UTC", loc: newYork, agenda: agenda("23:30", true), now: "2026-11-28T04:45:00Z",
			want: true, day: "2026-11-27", at: "2026-11-27T23:30:00-05:00", late: true},
		{name: "Kolkata", loc: kolkata, agenda: agenda("08:00", false), now: "2026-06-01T02:30:00Z",
			want: true, day: "2026-06-01", at: "2026-06-01T08:00:00+05:30"},
		{name: "Kolkata, a ns early", loc: kolkata, agenda: agenda("08:00", false), now: "2026-06-01T02:29:59.999999999Z"},
		{name: "Auckland, the day before in UTC", loc: auckland, agenda: agenda("08:00", false), now: "2026-05-31T20:00:00Z",
			want: true, day: "2026-06-01", at: "2026-06-01T08:00:00+12:00"},
		{name: "Berlin spring forward: before the gap", loc: berlin, agenda: agenda("02:30", false), now: "2026-03-29T01:59:59+01:00"},
		{name: "Berlin spring forward: 02:30 at 03:00", loc: berlin, agenda: agenda("02:30", false), now: "2026-03-29T03:00:00+02:00",
			want: true, day: "2026-03-29", at: "2026-03-29T03:00:00+02:00"},
		{name: "Berlin fall back: the first 02:30", loc: berlin, agenda: agenda("02:30", false), now: "2026-10-25T02:30:00+02:00",
			want: true, day: "2026-10-25", at: "2026-10-25T02:30:00+02:00"},
		{name: "Berlin fall back: the second 02:30 is the same agenda, late", loc: berlin, agenda: agenda("02:30", false),
			now: "2026-10-25T02:30:00+01:00", want: true, day: "2026-10-25", at: "2026-10-25T02:30:00+02:00", late: true},
		{name: "Berlin fall back: 08:00 an hour later in UTC", loc: berlin, agenda: agenda("08:00", false), now: "2026-10-25T06:59:00Z"},
		{name: "Berlin fall back: 08:00", loc: berlin, agenda: agenda("08:00", false), now: "2026-10-25T07:00:00Z",
			want: true, day: "2026-10-25", at: "2026-10-25T08:00:00+01:00"},
		{name: "New York spring forward: 02:30 at 03:00", loc: newYork, agenda: agenda("02:30", false), now: "2026-03-08T03:00:00-04:00",
			want: true, day: "2026-03-08", at: "2026-03-08T03:00:00-04:00"},
		{name: "New York fall back: the second 01:30", loc: newYork, agenda: agenda("01:30", false), now: "2026-11-01T01:30:00-05:00",
			want: true, day: "2026-11-01", at: "2026-11-01T01:30:00-04:00", late: true},
		{name: "Santiago: 23:30 at the skipped midnight's end", loc: santiago, agenda: agenda("23:30", false), now: "2026-09-06T01:00:00-03:00"},
		{name: "Santiago: 23:30 a ns before the day ends", loc: santiago, agenda: agenda("23:30", false),
			now: "2026-09-05T23:59:59.999999999-04:00", want: true, day: "2026-09-05", at: "2026-09-05T23:30:00-04:00", late: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := personal.Settings{Agenda: c.agenda}
			got, ok := personal.AgendaDue(user, s, nil, c.loc, ts(c.now))
			if ok != c.want {
				t.Fatalf("AgendaDue = %+v, %v; want due %v", got, ok, c.want)
			}
			if !ok {
				if !got.At.IsZero() || got.Key != "" {
					t.Errorf("not due, but %+v", got)
				}
				return
			}
			d := date(c.day)
			if got.Kind != personal.AgendaKind || got.User != user || got.Day != d || got.Key != personal.AgendaKey(user, d) || got.Late != c.late {
				t.Errorf("AgendaDue = {%s %s %q %v late %v}, want {agenda %s %q %v late %v}",
					got.Kind, got.User, got.Key, got.Day, got.Late, user, personal.AgendaKey(user, d), d, c.late)
			}
			same(t, "At", got.At, c.loc, c.at)
			if got.Booking != (booking.Booking{}) || len(got.Bookings) != 0 || got.Incomplete {
				t.Errorf("an agenda of no list has bookings: %+v", got)
			}
		})
	}
}

func TestAgendaBookings(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		loc  *time.Location
		now  string // at an 00:00 agenda, or later that morning
		list []booking.Booking
		want []string
	}{
		{name: "from local midnight to the next, excluding it", loc: berlin, now: "2026-11-24T00:00:00+01:00",
			list: []booking.Booking{
				bk("before", "2026-11-23T23:59:59.999999999+01:00"),
				bk("midnight", "2026-11-24T00:00:00+01:00"),
				bk("last", "2026-11-24T23:59:59.999999999+01:00"),
				bk("next midnight", "2026-11-25T00:00:00+01:00"),
				bk("utc same date", "2026-11-24T23:30:00Z"),
			},
			want: []string{"midnight", "last"}},
		{name: "in start order", loc: time.UTC, now: "2026-11-24T00:00:00Z",
			list: []booking.Booking{
				bk("c", "2026-11-24T15:00:00Z"),
				bk("a", "2026-11-24T09:00:00Z"),
				bk("tomorrow", "2026-11-25T09:00:00Z"),
				bk("b", "2026-11-24T12:00:00+01:00"), // 11:00Z
			},
			want: []string{"a", "b", "c"}},
		{name: "Berlin 23-hour day", loc: berlin, now: "2026-03-29T00:00:00+01:00",
			list: []booking.Booking{
				bk("before", "2026-03-28T23:59:00+01:00"),
				bk("midnight", "2026-03-29T00:00:00+01:00"),
				bk("after the gap", "2026-03-29T03:00:00+02:00"),
				bk("late", "2026-03-29T23:30:00+02:00"),
				bk("next midnight", "2026-03-30T00:00:00+02:00"),
				bk("24h after midnight", "2026-03-30T00:30:00+02:00"), // within 24 hours of the day's start
			},
			want: []string{"midnight", "after the gap", "late"}},
		{name: "Berlin 25-hour day", loc: berlin, now: "2026-10-25T00:00:00+02:00",
			list: []booking.Booking{
				bk("midnight", "2026-10-25T00:00:00+02:00"),
				bk("first 02:30", "2026-10-25T02:30:00+02:00"),
				bk("second 02:30", "2026-10-25T02:30:00+01:00"),
				bk("late", "2026-10-25T23:30:00+01:00"), // more than 24 hours after the day's start
				bk("next midnight", "2026-10-26T00:00:00+01:00"),
			},
			want: []string{"midnight", "first 02:30", "second 02:30", "late"}},
		{name: "New York 23-hour day", loc: newYork, now: "2026-03-08T00:00:00-05:00",
			list: []booking.Booking{
				bk("midnight", "2026-03-08T00:00:00-05:00"),
				bk("late", "2026-03-08T23:30:00-04:00"),
				bk("next midnight", "2026-03-09T00:00:00-04:00"),
			},
			want: []string{"midnight", "late"}},
		{name: "New York 25-hour day", loc: newYork, now: "2026-11-01T00:00:00-04:00",
			list: []booking.Booking{
				bk("first 01:30", "2026-11-01T01:30:00-04:00"),
				bk("second 01:30", "2026-11-01T01:30:00-05:00"),
				bk("late", "2026-11-01T23:30:00-05:00"),
				bk("next midnight", "2026-11-02T00:00:00-05:00"),
			},
			want: []string{"first 01:30", "second 01:30", "late"}},
		{name: "Santiago day starting at 01:00", loc: santiago, now: "2026-09-06T01:00:00-03:00",
			list: []booking.Booking{
				bk("day before", "2026-09-05T23:30:00-04:00"),
				bk("start", "2026-09-06T01:00:00-03:00"),
			},
			want: []string{"start"}},
		{name: "Auckland", loc: auckland, now: "2026-06-01T00:00:00+12:00",
			list: []booking.Booking{
				bk("utc day before", "2026-05-31T21:00:00Z"), // 09:00 on the 1st
				bk("utc same day", "2026-06-01T09:00:00Z"),   // 21:00 on the 1st
				bk("utc same day, late", "2026-06-01T13:00:00Z"),
			},
			want: []string{"utc day before", "utc same day"}},
		{name: "Kolkata", loc: kolkata, now: "2026-06-01T00:00:00+05:30",
			list: []booking.Booking{
				bk("day before", "2026-05-31T18:29:00Z"),
				bk("midnight", "2026-05-31T18:30:00Z"),
				bk("late", "2026-06-01T18:29:59Z"),
				bk("next midnight", "2026-06-01T18:30:00Z"),
			},
			want: []string{"midnight", "late"}},
		{name: "no bookings that day", loc: time.UTC, now: "2026-11-24T00:00:00Z",
			list: []booking.Booking{bk("tomorrow", "2026-11-25T09:00:00Z")}, want: []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := personal.Settings{Agenda: agenda("00:00", false)}
			list := slices.Clone(c.list)
			got, ok := personal.AgendaDue(user, s, c.list, c.loc, ts(c.now))
			if !ok {
				t.Fatal("not due")
			}
			if g := ids(got.Bookings); !slices.Equal(g, c.want) {
				t.Errorf("bookings %q, want %q", g, c.want)
			}
			if got.Incomplete {
				t.Error("a short list is incomplete")
			}
			if !slices.EqualFunc(list, c.list, func(a, b booking.Booking) bool { return a == b }) {
				t.Error("the list was changed")
			}
		})
	}
}

func TestAgendaIncomplete(t *testing.T) {
	t.Parallel()
	day := ts("2026-11-24T00:00:00+01:00")
	// full is a list of n bookings, 10 minutes apart from 08:00 of the day
	// before, then last.
	full := func(n int, last string) []booking.Booking {
		list := make([]booking.Booking, 0, n)
		for i := range n - 1 {
			b := bk(fmt.Sprintf("b%03d", i), "2026-11-23T08:00:00+01:00")
			b.Start = b.Start.Add(time.Duration(i) * 10 * time.Minute)
			list = append(list, b)
		}
		return append(list, bk("last", last))
	}
	cases := []struct {
		name string
		list []booking.Booking
		want bool
	}{
		{"full, last on the day", full(booking.MaxListed, "2026-11-24T23:59:59.999999999+01:00"), true},
		{"full, last at its start", full(booking.MaxListed, "2026-11-24T00:00:00+01:00"), true},
		{"full, last at the next midnight", full(booking.MaxListed, "2026-11-25T00:00:00+01:00"), false},
		{"full, last the next day", full(booking.MaxListed, "2026-11-25T12:00:00+01:00"), false},
		{"full, last the day before", full(booking.MaxListed, "2026-11-23T23:59:00+01:00"), true},
		{"one short of full, last on the day", full(booking.MaxListed-1, "2026-11-24T12:00:00+01:00"), false},
		{"over full, last on the day", full(booking.MaxListed+1, "2026-11-24T12:00:00+01:00"), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The list's order does not matter: its latest start does.
			list := slices.Clone(c.list)
			slices.Reverse(list)
			for _, list := range [][]booking.Booking{c.list, list} {
				got, ok := personal.AgendaDue(user, personal.Settings{Agenda: agenda("08:00", false)}, list, berlin, day.Add(8*time.Hour))
				if !ok {
					t.Fatal("not due")
				}
				if got.Incomplete != c.want {
					t.Errorf("Incomplete = %v, want %v (%d bookings of the day)", got.Incomplete, c.want, len(got.Bookings))
				}
			}
		})
	}
}

func TestNextAgenda(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		loc    *time.Location
		agenda *personal.Agenda
		now    string
		want   string
	}{
		{"off", time.UTC, nil, "2026-11-24T07:00:00Z", ""},
		{"later today", time.UTC, agenda("08:00", false), "2026-11-24T07:00:00Z", "2026-11-24T08:00:00Z"},
		{"a ns before", time.UTC, agenda("08:00", false), "2026-11-24T07:59:59.999999999Z", "2026-11-24T08:00:00Z"},
		{"at it: tomorrow", time.UTC, agenda("08:00", false), "2026-11-24T08:00:00Z", "2026-11-25T08:00:00Z"},
		{"after it: tomorrow", time.UTC, agenda("08:00", false), "2026-11-24T09:00:00Z", "2026-11-25T08:00:00Z"},
		{"Friday after it: Saturday", time.UTC, agenda("08:00", false), "2026-11-27T09:00:00Z", "2026-11-28T08:00:00Z"},
		{"weekdays: Friday after it: Monday", time.UTC, agenda("08:00", true), "2026-11-27T09:00:00Z", "2026-11-30T08:00:00Z"},
		{"weekdays: Saturday: Monday", time.UTC, agenda("08:00", true), "2026-11-28T07:00:00Z", "2026-11-30T08:00:00Z"},
		{"weekdays: Sunday evening: Monday", time.UTC, agenda("08:00", true), "2026-11-29T23:00:00Z", "2026-11-30T08:00:00Z"},
		{"weekdays: Friday before it: Friday", time.UTC, agenda("08:00", true), "2026-11-27T07:00:00Z", "2026-11-27T08:00:00Z"},
		{"Berlin across spring forward", berlin, agenda("08:00", false), "2026-03-28T09:00:00+01:00", "2026-03-29T08:00:00+02:00"},
		{"Berlin weekdays across spring forward", berlin, agenda("08:00", true), "2026-03-27T09:00:00+01:00", "2026-03-30T08:00:00+02:00"},
		{"Berlin 02:30 on the skipped day", berlin, agenda("02:30", false), "2026-03-28T03:00:00+01:00", "2026-03-29T03:00:00+02:00"},
		{"Berlin 02:30 after the skipped day's", berlin, agenda("02:30", false), "2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00"},
		{"Berlin 02:30 after the first: not the repeated one", berlin, agenda("02:30", false), "2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"},
		{"Berlin across fall back", berlin, agenda("08:00", false), "2026-10-24T09:00:00+02:00", "2026-10-25T08:00:00+01:00"},
		{"New York weekdays across a weekend and fall back", newYork, agenda("08:00", true), "2026-10-30T09:00:00-04:00", "2026-11-02T08:00:00-05:00"},
		{"New York across spring forward", newYork, agenda("07:00", false), "2026-03-07T07:00:00-05:00", "2026-03-08T07:00:00-04:00"},
		{"Auckland weekdays: local Saturday, Friday in UTC", auckland, agenda("08:00", true), "2026-06-05T21:00:00Z", "2026-06-08T08:00:00+12:00"},
		{"Kolkata", kolkata, agenda("08:00", false), "2026-06-01T03:00:00Z", "2026-06-02T08:00:00+05:30"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := personal.NextAgenda(personal.Settings{Agenda: c.agenda}, c.loc, ts(c.now))
			same(t, "NextAgenda", got, c.loc, c.want)
		})
	}
}

// TestAgendaAgrees walks 2026 in uneven steps and holds the agenda
// functions to one another: the next agenda is due at its time and not a
// ns before, and a due agenda's time has passed and is today's.
func TestAgendaAgrees(t *testing.T) {
	t.Parallel()
	for _, loc := range []*time.Location{berlin, newYork, auckland, kolkata, santiago, lordHowe} {
		for _, a := range []*personal.Agenda{agenda("00:00", false), agenda("02:30", true), agenda("08:00", true), agenda("23:30", false)} {
			s := personal.Settings{Agenda: a}
			for now := ts("2026-01-01T00:00:00Z"); now.Year() == 2026; now = now.Add(247 * time.Minute) {
				next := personal.NextAgenda(s, loc, now)
				if !next.After(now) || next.Sub(now) > 4*24*time.Hour {
					t.Fatalf("%s %d: NextAgenda(%v) = %v", loc, a.Minute, now, next)
				}
				due, ok := personal.AgendaDue(user, s, nil, loc, next)
				if !ok || !due.At.Equal(next) || due.Late {
					t.Fatalf("%s %d: at NextAgenda %v: %+v, %v; want due then", loc, a.Minute, next, due, ok)
				}
				if before, ok := personal.AgendaDue(user, s, nil, loc, next.Add(-1)); ok && before.Day == due.Day {
					t.Fatalf("%s %d: a ns before %v: due %+v", loc, a.Minute, next, before)
				}
				if due, ok := personal.AgendaDue(user, s, nil, loc, now); ok {
					if due.At.After(now) || due.Day != personal.DateOf(now, loc) ||
						!due.At.Equal(personal.AgendaTime(*a, due.Day, loc)) || !now.Before(personal.AgendaDeadline(*a, due.Day, loc)) {
						t.Fatalf("%s %d: AgendaDue(%v) = %+v", loc, a.Minute, now, due)
					}
				}
			}
		}
	}
}

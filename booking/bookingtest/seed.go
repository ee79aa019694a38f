package bookingtest

import (
	"time"
	_ "time/tzdata" // the sandbox also runs in minimal containers without a zoneinfo database
)

// Seed data, loaded by Options.Seed and by NewServer.
const (
	// DemoKey is the API key of DemoOwner, printed by `bookbot sandbox`.
	DemoKey = "sandbox_demo_key_8f3a1c"
	// OtherKey is the API key of OtherOwner, a second account with its own
	// event type and booking, to prove owner scoping.
	OtherKey = "sandbox_other_key_2b7e90"

	DemoOwner  = "owner_demo"
	OtherOwner = "owner_other"
	// DemoTeammate is the host who shares the seeded round robin, team-sync,
	// with DemoOwner: a booking goes to whichever of them is free and has
	// the fewer upcoming bookings, so the teammate, with none, takes them
	// until it is as busy as the owner. Its bookings are in
	// Bookings(DemoTeammate), never seen by DemoKey.
	DemoTeammate = "host_teammate"
	// OtherBookingID is OtherOwner's booking; DemoKey gets 404 for it.
	OtherBookingID = "5eed0000-0000-4000-8000-000000002001"
)

type seedBooking struct {
	id                string
	day, hour, minute int    // day indexes seedDays
	slug, name, email string // "" is null, as in legacy records
	minutes           int    // length when there is no event type
	cancelled         bool
}

// Seeded IDs are UUIDs like upstream's, numbered so tests can name them:
// 5eed0000-0000-4000-8000-000000000001 is Ada Lovelace's.
//
// Upcoming bookings sit on slot-aligned times inside working hours, so they
// visibly remove slots; deep-dive ones stay within its 7-day period.
var demoBookings = []seedBooking{
	{id: "5eed0000-0000-4000-8000-000000000001", day: 1, hour: 9, slug: "intro-call", name: "Ada Lovelace", email: "ada.lovelace@example.com"},
	{id: "5eed0000-0000-4000-8000-000000000002", day: 1, hour: 10, minute: 30, slug: "consultation", name: "Grace Hopper", email: "grace.hopper@example.org"},
	{id: "5eed0000-0000-4000-8000-000000000003", day: 1, hour: 14, slug: "deep-dive", name: "Alan Turing", email: "alan.turing@example.com"},
	{id: "5eed0000-0000-4000-8000-000000000004", day: 2, hour: 9, minute: 30, slug: "consultation", name: "Katherine Johnson", email: "katherine.johnson@example.org"},
	{id: "5eed0000-0000-4000-8000-000000000005", day: 2, hour: 11, slug: "team-sync", name: "Margaret Hamilton", email: "margaret.hamilton@example.com"},
	{id: "5eed0000-0000-4000-8000-000000000006", day: 2, hour: 15, minute: 15, slug: "intro-call", name: "Radia Perlman", email: "radia.perlman@example.org"},
	{id: "5eed0000-0000-4000-8000-000000000007", day: 3, hour: 10, slug: "deep-dive", name: "Barbara Liskov", email: "barbara.liskov@example.com"},
	{id: "5eed0000-0000-4000-8000-000000000008", day: 3, hour: 13, minute: 30, slug: "board-review", name: "Edsger Dijkstra", email: "edsger.dijkstra@example.org"},
	{id: "5eed0000-0000-4000-8000-000000000009", day: 4, hour: 16, slug: "consultation", name: "Frances Allen", email: "frances.allen@example.com"},
	{id: "5eed0000-0000-4000-8000-000000000010", day: 5, hour: 9, slug: "intro-call", name: "Donald Knuth", email: "donald.knuth@example.org"},
	// Legacy records: everything null, and only the email null.
	{id: "5eed0000-0000-4000-8000-000000000011", day: 3, hour: 16, minute: 30, minutes: 30},
	{id: "5eed0000-0000-4000-8000-000000000012", day: 4, hour: 11, minute: 30, slug: "consultation", name: "Hedy Lamarr"},
	// Never listed: one past, one cancelled (its slot is free again).
	{id: "5eed0000-0000-4000-8000-000000000013", day: 0, hour: 10, slug: "consultation", name: "Charles Babbage", email: "charles.babbage@example.org"},
	{id: "5eed0000-0000-4000-8000-000000000014", day: 2, hour: 13, slug: "consultation", name: "John Backus", email: "john.backus@example.com", cancelled: true},
}

func seed(s *Sandbox, now time.Time) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		panic("bookingtest: " + err.Error()) // cannot happen: time/tzdata is embedded
	}
	hours := Weekdays(9*time.Hour, 17*time.Hour)

	s.AddOwner(DemoKey, DemoOwner, berlin, hours)
	for _, et := range []EventType{
		{Slug: "intro-call", Title: "Intro call", DurationMinutes: 15, Kind: KindSolo, ScheduleID: "sch_1001", AsksForNote: true},
		{Slug: "consultation", Title: "Consultation", DurationMinutes: 30, Kind: KindSolo, ScheduleID: "sch_1002", AsksForNote: true},
		// Its form has no note question: a note sent is dropped.
		{Slug: "deep-dive", Title: "Deep dive", DurationMinutes: 60, Kind: KindSolo, ScheduleID: "sch_1003", PeriodDays: 7},
		{Slug: "team-sync", Title: "Team sync", DurationMinutes: 30, Kind: KindRoundRobin, ScheduleID: "sch_1004", Hosts: []string{DemoTeammate, DemoOwner}},
		{Slug: "board-review", Title: "Board review", DurationMinutes: 45, Kind: KindCollective, ScheduleID: "sch_1005"},
		{Slug: "legacy-demo", Title: "Legacy demo", DurationMinutes: 30, Kind: KindSolo, ScheduleID: "sch_1006", Removed: true},
		// Solo, as the API lists it, but every create answers 409.
		{Slug: "office-hours", Title: "Office hours", DurationMinutes: 30, Kind: KindSolo, ScheduleID: "sch_1007", AsksForNote: true, RequiresEmailVerification: true},
	} {
		s.AddEventType(DemoOwner, et)
	}
	days := seedDays(now, berlin)
	for _, sb := range demoBookings {
		s.AddBooking(DemoOwner, sb.booking(days, berlin))
	}

	s.AddOwner(OtherKey, OtherOwner, berlin, hours)
	s.AddEventType(OtherOwner, EventType{Slug: "other-call", Title: "Other call", DurationMinutes: 30, Kind: KindSolo, ScheduleID: "sch_2001"})
	other := seedBooking{id: OtherBookingID, day: 1, hour: 10, slug: "other-call", name: "Oskar Schmidt", email: "oskar.schmidt@example.org"}
	s.AddBooking(OtherOwner, other.booking(days, berlin))
}

func (sb seedBooking) booking(days []time.Time, zone *time.Location) Booking {
	d := days[sb.day]
	b := Booking{
		ID:          sb.id,
		EventType:   nullable(sb.slug),
		Start:       time.Date(d.Year(), d.Month(), d.Day(), sb.hour, sb.minute, 0, 0, zone),
		BookerName:  nullable(sb.name),
		BookerEmail: nullable(sb.email),
		Cancelled:   sb.cancelled,
	}
	if sb.minutes > 0 {
		b.End = b.Start.Add(time.Duration(sb.minutes) * time.Minute)
	}
	if b.EventType != nil {
		b.BookerTZ = "Europe/Berlin"
	}
	return b
}

// seedDays returns, at noon in zone, the weekday before today (index 0) and
// the next six weekdays after today (1 to 6). Leaving today out keeps every
// upcoming booking in the future whatever the time of day, and the sixth
// weekday is at most 8 days away, well inside the 14-day window.
func seedDays(now time.Time, zone *time.Location) []time.Time {
	y, m, d := now.In(zone).Date()
	day := func(i int) time.Time { return time.Date(y, m, d+i, 12, 0, 0, 0, zone) }
	isWeekday := func(t time.Time) bool { return t.Weekday() != time.Saturday && t.Weekday() != time.Sunday }
	var days []time.Time
	for i := -1; ; i-- {
		if t := day(i); isWeekday(t) {
			days = append(days, t)
			break
		}
	}
	for i := 1; len(days) < 7; i++ {
		if t := day(i); isWeekday(t) {
			days = append(days, t)
		}
	}
	return days
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Package digest builds and posts the next-day digest: the owner's bookings
// of one local day, posted once to a channel every evening.
//
// Everything about "which day" is computed in the configured zone, never on
// the server's clock or zone: [Tomorrow] is the local date after today's,
// and [Build] takes the bookings that start between two local midnights, so
// 23- and 25-hour days and days whose midnight does not exist come out right.
//
// A [Ledger] makes posting exactly-once per date across restarts and
// overlapping processes (in the embedded store's file, or PostgreSQL for
// several replicas); a [Runner] builds, posts and records one day;
// a [Scheduler] fires the runner on a cron schedule and catches up on a
// missed firing at start. Slack types stay out of this package: rendering
// to Block Kit lives in package bot, behind [Publisher].
package digest

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/internal/plaintext"
)

// NotRecorded is shown for fields that legacy records leave null.
const NotRecorded = "not recorded"

// Digest is the bookings of one local day, ready to render.
type Digest struct {
	Date    time.Time // local midnight of the day, in Zone
	Zone    *time.Location
	Entries []Entry // in start order
	// MaybeIncomplete is set when GET /bookings returned booking.MaxListed
	// bookings and the last one starts before the day ends: later ones may
	// be missing.
	MaybeIncomplete bool
}

// Entry is one booking of the day.
type Entry struct {
	BookingID  string
	Start, End time.Time // in Zone
	// EventTitle is the title from GET /event-types by slug; the slug when
	// the type is gone (removed, or the types could not be read); "" when
	// the booking's event_type is null (legacy).
	EventTitle string
	EventKnown bool // false for a legacy null event_type

	AttendeeName, AttendeeEmail booking.NullString
}

// Build is pure: it returns the bookings starting within [local midnight of
// day, next local midnight) in zone, in start order. The day is day's
// calendar date as written in day's own location (Tomorrow and ParseDate
// return it in zone already). Instants are compared, so the offsets the API
// used in its timestamps do not matter. A nil zone means UTC.
//
// User-provided text (names, emails, titles) is cleaned of control and
// bidirectional-override characters, so it cannot fake extra lines.
func Build(bookings []booking.Booking, types []booking.EventType, day time.Time, zone *time.Location) Digest {
	zone = zoneOr(zone)
	start := DayStart(day, zone)
	end := nextDayStart(start, zone)
	d := Digest{Date: start, Zone: zone}

	titles := make(map[string]string, len(types))
	for _, t := range types {
		titles[t.Slug] = t.Title
	}
	var last time.Time
	for i, b := range bookings {
		if i == 0 || b.Start.After(last) {
			last = b.Start
		}
		if b.Start.Before(start) || !b.Start.Before(end) {
			continue
		}
		e := Entry{
			BookingID:     b.ID,
			Start:         b.Start.In(zone),
			End:           b.End.In(zone),
			EventKnown:    b.EventType.Valid,
			AttendeeName:  cleanNull(b.BookerName),
			AttendeeEmail: cleanNull(b.BookerEmail),
		}
		if e.EventKnown {
			e.EventTitle = b.EventType.String
			if t, ok := titles[b.EventType.String]; ok && strings.TrimSpace(t) != "" {
				e.EventTitle = t
			}
			e.EventTitle = plaintext.Line(e.EventTitle)
		}
		d.Entries = append(d.Entries, e)
	}
	slices.SortStableFunc(d.Entries, func(a, b Entry) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return strings.Compare(a.BookingID, b.BookingID)
	})
	// The API lists at most MaxListed upcoming bookings, in start order. A
	// full list whose last booking starts before the day ends may have cut
	// off bookings of this day; one whose last booking starts later cannot.
	d.MaybeIncomplete = len(bookings) >= booking.MaxListed && last.Before(end)
	return d
}

// Tomorrow is the local date after now's local date in zone, as local
// midnight (or the first instant of that date, when a DST change skips
// midnight). A nil zone means UTC.
func Tomorrow(now time.Time, zone *time.Location) time.Time {
	zone = zoneOr(zone)
	y, m, d := now.In(zone).Date()
	return localMidnight(y, m, d+1, zone)
}

// ParseDate parses YYYY-MM-DD as local midnight in zone. A nil zone means UTC.
func ParseDate(s string, zone *time.Location) (time.Time, error) {
	t, err := time.Parse(time.DateOnly, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, fmt.Errorf("date %q is not a valid YYYY-MM-DD date", s)
	}
	y, m, d := t.Date()
	return localMidnight(y, m, d, zoneOr(zone)), nil
}

// DayStart is the first instant of day's calendar date (as written in day's
// own location) in zone: local midnight, or the moment the clocks jump to
// when a DST change skips midnight.
func DayStart(day time.Time, zone *time.Location) time.Time {
	y, m, d := day.Date()
	return localMidnight(y, m, d, zoneOr(zone))
}

// End is the first instant of the next day: the digest covers [Date, End).
func (d Digest) End() time.Time { return nextDayStart(d.Date, zoneOr(d.Zone)) }

func nextDayStart(start time.Time, zone *time.Location) time.Time {
	y, m, d := start.In(zone).Date()
	return localMidnight(y, m, d+1, zone)
}

// localMidnight is the first instant of the date in zone. time.Date picks
// an instant of the previous day when midnight falls in a DST gap (as in
// America/Santiago each September); the day then starts when the gap ends.
func localMidnight(y int, m time.Month, d int, zone *time.Location) time.Time {
	t := time.Date(y, m, d, 0, 0, 0, 0, zone)
	want := time.Date(y, m, d, 0, 0, 0, 0, time.UTC) // normalizes d+1 overflow
	if ty, tm, td := t.Date(); time.Date(ty, tm, td, 0, 0, 0, 0, time.UTC).Before(want) {
		if _, end := t.ZoneBounds(); !end.IsZero() {
			return end
		}
	}
	return t
}

func zoneOr(z *time.Location) *time.Location {
	if z == nil {
		return time.UTC
	}
	return z
}

// DayTitle names a day for people: "Tuesday, 24 November 2026 (Europe/Berlin)".
func DayTitle(day time.Time, zone *time.Location) string {
	zone = zoneOr(zone)
	return day.In(zone).Format("Monday, 2 January 2006") + " (" + zone.String() + ")"
}

// Header is the digest's title line.
func (d Digest) Header() string { return "Bookings for " + DayTitle(d.Date, d.Zone) }

// CountLine says how many bookings there are, or that there are none.
func (d Digest) CountLine() string {
	switch n := len(d.Entries); {
	case n == 0 && d.MaybeIncomplete:
		return "None of the bookings listed is tomorrow."
	case n == 0:
		return "No bookings tomorrow."
	case n == 1:
		return "1 booking"
	default:
		return fmt.Sprintf("%d bookings", n)
	}
}

// IncompleteWarning is the warning for a digest that may miss bookings, or
// "" when it is complete.
func (d Digest) IncompleteWarning() string {
	if !d.MaybeIncomplete {
		return ""
	}
	return fmt.Sprintf("Warning: the booking service shows bookbot only the next %d bookings, and there are that many, "+
		"so later bookings on this day may be missing. Check the calendar.", booking.MaxListed)
}

// ClockChange reports whether the zone's offset changes during the day (a
// 23- or 25-hour day), when bare wall-clock times would be ambiguous.
func (d Digest) ClockChange() bool {
	zone := zoneOr(d.Zone)
	start := d.Date.In(zone)
	_, boundary := start.ZoneBounds()
	return !boundary.IsZero() && boundary.Before(d.End())
}

// TimeRange renders an entry's times in the digest zone: "09:00–09:30". On
// a day with a clock change each time carries its zone abbreviation
// ("02:30 CEST–03:00 CEST", later "02:30 CET–03:00 CET"), and an end on a
// later date carries that date.
func (d Digest) TimeRange(e Entry) string {
	zone := zoneOr(d.Zone)
	start, end := e.Start.In(zone), e.End.In(zone)
	layout := "15:04"
	if d.ClockChange() {
		layout = "15:04 MST"
	}
	endLayout := layout
	if sy, sm, sd := start.Date(); !sameDate(end, sy, sm, sd) {
		endLayout = "Mon 2 Jan " + layout
	}
	return start.Format(layout) + "–" + end.Format(endLayout)
}

func sameDate(t time.Time, y int, m time.Month, d int) bool {
	ty, tm, td := t.Date()
	return ty == y && tm == m && td == d
}

// Title is the entry's event title, or NotRecorded for a legacy null.
func (e Entry) Title() string {
	if !e.EventKnown {
		return NotRecorded
	}
	if e.EventTitle == "" {
		return "(untitled event)"
	}
	return e.EventTitle
}

// Name is the attendee's name, NotRecorded for a legacy null.
func (e Entry) Name() string {
	if !e.AttendeeName.Valid {
		return NotRecorded
	}
	if e.AttendeeName.String == "" {
		return "(no name)"
	}
	return e.AttendeeName.String
}

// Email is the attendee's email, or "email not recorded" for a legacy null.
func (e Entry) Email() string {
	if !e.AttendeeEmail.Valid || e.AttendeeEmail.String == "" {
		return "email " + NotRecorded
	}
	return e.AttendeeEmail.String
}

// Line renders one entry as plain text:
// "09:00–09:30  Intro call — Ada Lovelace", plus " <ada@example.com>" when
// includeEmails.
func (d Digest) Line(e Entry, includeEmails bool) string {
	s := d.TimeRange(e) + "  " + e.Title() + " — " + e.Name()
	if includeEmails {
		if e.AttendeeEmail.Valid && e.AttendeeEmail.String != "" {
			s += " <" + e.AttendeeEmail.String + ">"
		} else {
			s += " (" + e.Email() + ")"
		}
	}
	return s
}

// Text renders the digest as plain text, for -dry-run and as the
// notification fallback: the header with weekday, date and zone, the count,
// one line per booking, and the may-be-incomplete warning.
func (d Digest) Text(includeEmails bool) string {
	var b strings.Builder
	b.WriteString(d.Header())
	b.WriteByte('\n')
	b.WriteString(d.CountLine())
	if d.ClockChange() && len(d.Entries) > 0 {
		b.WriteString(" (the clocks change on this day; times show the zone abbreviation)")
	}
	b.WriteByte('\n')
	for _, e := range d.Entries {
		b.WriteString(d.Line(e, includeEmails))
		b.WriteByte('\n')
	}
	if w := d.IncompleteWarning(); w != "" {
		b.WriteString(w)
		b.WriteByte('\n')
	}
	return b.String()
}

func cleanNull(n booking.NullString) booking.NullString {
	if n.Valid {
		n.String = plaintext.Line(n.String)
	}
	return n
}

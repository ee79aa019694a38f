package digest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/internal/testutil"
)

var (
	berlin   = testutil.Zone("Europe/Berlin")
	newYork  = testutil.Zone("America/New_York")
	santiago = testutil.Zone("America/Santiago")
)

// ts parses an API timestamp exactly as the client does.
func ts(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// bk is a 30-minute booking starting at start (RFC 3339, any offset).
func bk(t testing.TB, id, start string) booking.Booking {
	t.Helper()
	s := ts(t, start)
	return booking.Booking{
		ID: id, Start: s, End: s.Add(30 * time.Minute), Status: "confirmed",
		EventType:   booking.Some("intro-call"),
		BookerName:  booking.Some("Ada Lovelace"),
		BookerEmail: booking.Some("ada@example.com"),
	}
}

var testTypes = []booking.EventType{
	{Slug: "intro-call", Title: "Intro call", DurationMinutes: 15, SchedulingKind: booking.KindSolo},
	{Slug: "consultation", Title: "Consultation", DurationMinutes: 30, SchedulingKind: booking.KindSolo},
}

func date(t testing.TB, s string, zone *time.Location) time.Time {
	t.Helper()
	d, err := ParseDate(s, zone)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func ids(d Digest) []string {
	var out []string
	for _, e := range d.Entries {
		out = append(out, e.BookingID)
	}
	return out
}

func TestBuildSelectsTheLocalDay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		zone     *time.Location
		day      string
		hours    int // length of the local day
		bookings []string
		want     []string // IDs in order
	}{
		{
			name: "boundaries", zone: berlin, day: "2026-11-24", hours: 24,
			bookings: []string{
				"a=2026-11-23T23:30:00+01:00", // the evening before: out
				"b=2026-11-24T00:00:00+01:00", // local midnight: in
				"c=2026-11-24T23:59:00+01:00", // last minute: in
				"d=2026-11-25T00:00:00+01:00", // next midnight: out
				"e=2026-11-23T22:59:59.999999999Z",
				"f=2026-11-23T23:00:00Z", // midnight, written in UTC
			},
			want: []string{"b", "f", "c"},
		},
		{
			name: "mixed offsets and fractions for one instant", zone: berlin, day: "2026-11-24", hours: 24,
			bookings: []string{
				"z=2026-11-24T08:00:00Z",
				"p=2026-11-24T09:00:00+01:00",
				"m=2026-11-24T03:00:00-05:00",
				"f=2026-11-24T08:00:00.000Z",
				"g=2026-11-24T09:00:00.5+01:00", // half a second later
				"h=2026-11-24T13:30:00+05:30",
			},
			want: []string{"f", "h", "m", "p", "z", "g"},
		},
		{
			name: "Berlin spring forward: 23 hours", zone: berlin, day: "2026-03-29", hours: 23,
			bookings: []string{
				"before=2026-03-28T23:30:00+01:00",
				"midnight=2026-03-29T00:00:00+01:00",
				"early=2026-03-29T01:30:00+01:00",
				"after=2026-03-29T03:30:00+02:00",
				"late=2026-03-29T23:59:00+02:00",
				"next=2026-03-30T00:00:00+02:00",
				"nextutc=2026-03-29T22:00:00Z",
			},
			want: []string{"midnight", "early", "after", "late"},
		},
		{
			name: "Berlin fall back: 25 hours, 02:30 twice", zone: berlin, day: "2026-10-25", hours: 25,
			bookings: []string{
				"before=2026-10-24T23:59:00+02:00",
				"midnight=2026-10-25T00:00:00+02:00",
				"first0230=2026-10-25T02:30:00+02:00",
				"second0230=2026-10-25T02:30:00+01:00",
				"late=2026-10-25T23:59:00+01:00",
				"next=2026-10-26T00:00:00+01:00",
			},
			want: []string{"midnight", "first0230", "second0230", "late"},
		},
		{
			name: "New York spring forward", zone: newYork, day: "2026-03-08", hours: 23,
			bookings: []string{
				"before=2026-03-07T23:59:00-05:00",
				"midnight=2026-03-08T05:00:00Z",
				"early=2026-03-08T01:30:00-05:00",
				"after=2026-03-08T03:00:00-04:00",
				"late=2026-03-08T23:59:00-04:00",
				"next=2026-03-09T04:00:00Z",
			},
			want: []string{"midnight", "early", "after", "late"},
		},
		{
			name: "New York fall back", zone: newYork, day: "2026-11-01", hours: 25,
			bookings: []string{
				"before=2026-11-01T03:59:59Z",
				"midnight=2026-11-01T00:00:00-04:00",
				"first0130=2026-11-01T01:30:00-04:00",
				"second0130=2026-11-01T01:30:00-05:00",
				"late=2026-11-01T23:59:00-05:00",
				"next=2026-11-02T00:00:00-05:00",
			},
			want: []string{"midnight", "first0130", "second0130", "late"},
		},
		{
			name: "Santiago: midnight does not exist", zone: santiago, day: "2026-09-06", hours: 23,
			bookings: []string{
				"before=2026-09-05T23:30:00-04:00",
				"first=2026-09-06T01:00:00-03:00", // the day's first instant
				"late=2026-09-06T23:59:00-03:00",
				"next=2026-09-07T00:00:00-03:00",
			},
			want: []string{"first", "late"},
		},
		{name: "empty day", zone: berlin, day: "2026-11-29", hours: 24, bookings: []string{"x=2026-11-24T09:00:00+01:00"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var list []booking.Booking
			for _, s := range tt.bookings {
				id, start, _ := strings.Cut(s, "=")
				list = append(list, bk(t, id, start))
			}
			day := date(t, tt.day, tt.zone)
			d := Build(list, testTypes, day, tt.zone)
			if got := ids(d); !slices.Equal(got, tt.want) {
				t.Errorf("entries = %q, want %q", got, tt.want)
			}
			if got := d.End().Sub(d.Date); got != time.Duration(tt.hours)*time.Hour {
				t.Errorf("day length = %v, want %dh", got, tt.hours)
			}
			if y, m, dd := d.Date.In(tt.zone).Date(); fmt.Sprintf("%04d-%02d-%02d", y, m, dd) != tt.day {
				t.Errorf("Date = %v, not on %s", d.Date, tt.day)
			}
			if d.Zone != tt.zone {
				t.Errorf("Zone = %v", d.Zone)
			}
			for _, e := range d.Entries {
				if e.Start.Location() != tt.zone || e.End.Location() != tt.zone {
					t.Errorf("entry %s not in the digest zone: %v", e.BookingID, e.Start)
				}
			}
			if d.MaybeIncomplete {
				t.Error("MaybeIncomplete for a short list")
			}
			if len(tt.want) == 0 && !strings.Contains(d.Text(false), "No bookings tomorrow.") {
				t.Errorf("empty day text:\n%s", d.Text(false))
			}
		})
	}
}

func TestBuildFallBackRendersBothTimes(t *testing.T) {
	t.Parallel()
	list := []booking.Booking{
		bk(t, "first", "2026-10-25T02:30:00+02:00"),
		bk(t, "second", "2026-10-25T02:30:00+01:00"),
	}
	d := Build(list, testTypes, date(t, "2026-10-25", berlin), berlin)
	if !d.ClockChange() {
		t.Fatal("ClockChange false on the fall-back day")
	}
	text := d.Text(false)
	for _, want := range []string{"02:30 CEST–02:00 CET  Intro call", "02:30 CET–03:00 CET  Intro call", "Sunday, 25 October 2026 (Europe/Berlin)"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if plain := Build(list, testTypes, date(t, "2026-10-26", berlin), berlin); plain.ClockChange() {
		t.Error("ClockChange true on an ordinary day")
	}
}

func TestBuildFields(t *testing.T) {
	t.Parallel()
	legacy := bk(t, "legacy", "2026-11-24T09:00:00+01:00")
	legacy.EventType, legacy.BookerName, legacy.BookerEmail = booking.NullString{}, booking.NullString{}, booking.NullString{}
	removed := bk(t, "removed", "2026-11-24T10:00:00+01:00")
	removed.EventType = booking.Some("legacy-demo")
	noEmail := bk(t, "noemail", "2026-11-24T11:00:00+01:00")
	noEmail.BookerEmail = booking.NullString{}
	noEmail.EventType = booking.Some("consultation")
	evil := bk(t, "evil", "2026-11-24T12:00:00+01:00")
	evil.BookerName = booking.Some("Mallory\n12:00–13:00  Fake line\u202e")

	d := Build([]booking.Booking{evil, noEmail, removed, legacy}, testTypes, date(t, "2026-11-24", berlin), berlin)
	if got := ids(d); !slices.Equal(got, []string{"legacy", "removed", "noemail", "evil"}) {
		t.Fatalf("order = %q", got)
	}
	e := d.Entries
	if e[0].EventKnown || e[0].EventTitle != "" || e[0].AttendeeName.Valid || e[0].AttendeeEmail.Valid {
		t.Errorf("legacy entry = %+v", e[0])
	}
	if !e[1].EventKnown || e[1].EventTitle != "legacy-demo" {
		t.Errorf("removed type entry = %+v, want the slug", e[1])
	}
	if e[2].EventTitle != "Consultation" {
		t.Errorf("title = %q", e[2].EventTitle)
	}
	if got := e[3].AttendeeName.String; got != "Mallory 12:00–13:00 Fake line" {
		t.Errorf("name not cleaned: %q", got)
	}

	// Without event types (they failed to load) titles fall back to slugs.
	if got := Build([]booking.Booking{noEmail}, nil, d.Date, berlin).Entries[0].EventTitle; got != "consultation" {
		t.Errorf("title without types = %q", got)
	}

	want := "Bookings for Tuesday, 24 November 2026 (Europe/Berlin)\n" +
		"4 bookings\n" +
		"09:00–09:30  not recorded — not recorded\n" +
		"10:00–10:30  legacy-demo — Ada Lovelace\n" +
		"11:00–11:30  Consultation — Ada Lovelace\n" +
		"12:00–12:30  Intro call — Mallory 12:00–13:00 Fake line\n"
	if got := d.Text(false); got != want {
		t.Errorf("Text(false) =\n%s\nwant\n%s", got, want)
	}
	withEmails := d.Text(true)
	for _, want := range []string{
		"09:00–09:30  not recorded — not recorded (email not recorded)\n",
		"10:00–10:30  legacy-demo — Ada Lovelace <ada@example.com>\n",
		"11:00–11:30  Consultation — Ada Lovelace (email not recorded)\n",
	} {
		if !strings.Contains(withEmails, want) {
			t.Errorf("Text(true) lacks %q:\n%s", want, withEmails)
		}
	}
	if strings.Contains(d.Text(false), "@") {
		t.Error("Text(false) shows an email")
	}
}

func TestBuildCap(t *testing.T) {
	t.Parallel()
	day := date(t, "2026-11-24", berlin)
	list := func(n int, lastStart string) []booking.Booking {
		var out []booking.Booking
		start := ts(t, "2026-11-20T08:00:00+01:00")
		for i := range n - 1 {
			out = append(out, bk(t, fmt.Sprintf("b%03d", i), start.Add(time.Duration(i)*time.Hour).Format(time.RFC3339)))
		}
		return append(out, bk(t, "last", lastStart))
	}
	tests := []struct {
		name       string
		list       []booking.Booking
		incomplete bool
	}{
		{"100, last starts within the day", list(booking.MaxListed, "2026-11-24T18:00:00+01:00"), true},
		{"100, last starts before the day", list(booking.MaxListed, "2026-11-23T10:00:00+01:00"), true},
		{"100, last starts after the day", list(booking.MaxListed, "2026-11-25T00:00:00+01:00"), false},
		{"99, last within the day", list(booking.MaxListed-1, "2026-11-24T18:00:00+01:00"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := Build(tt.list, testTypes, day, berlin)
			if d.MaybeIncomplete != tt.incomplete {
				t.Errorf("MaybeIncomplete = %v, want %v", d.MaybeIncomplete, tt.incomplete)
			}
			if has := strings.Contains(d.Text(false), "may be missing"); has != tt.incomplete {
				t.Errorf("warning shown = %v:\n%s", has, d.Text(false))
			}
		})
	}
}

func TestTomorrow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		now  string
		zone *time.Location
		want string // local midnight, RFC 3339
	}{
		{"2026-11-23T22:59:00Z", berlin, "2026-11-24T00:00:00+01:00"},
		{"2026-11-23T23:00:00Z", berlin, "2026-11-25T00:00:00+01:00"},  // already the 24th in Berlin
		{"2026-11-24T03:00:00Z", newYork, "2026-11-24T00:00:00-05:00"}, // still the 23rd in New York
		{"2026-03-28T18:00:00+01:00", berlin, "2026-03-29T00:00:00+01:00"},
		{"2026-03-29T18:00:00+02:00", berlin, "2026-03-30T00:00:00+02:00"},
		{"2026-10-24T18:00:00+02:00", berlin, "2026-10-25T00:00:00+02:00"},
		{"2026-12-31T20:00:00+01:00", berlin, "2027-01-01T00:00:00+01:00"},
		{"2026-09-05T20:00:00-04:00", santiago, "2026-09-06T01:00:00-03:00"}, // midnight is skipped
		{"2026-11-23T23:30:00-08:00", nil, "2026-11-25T00:00:00Z"},
	}
	for _, tt := range tests {
		got := Tomorrow(ts(t, tt.now), tt.zone)
		if !got.Equal(ts(t, tt.want)) || got.Format(time.RFC3339) != tt.want {
			t.Errorf("Tomorrow(%s, %v) = %s, want %s", tt.now, tt.zone, got.Format(time.RFC3339), tt.want)
		}
	}
}

func TestParseDate(t *testing.T) {
	t.Parallel()
	got, err := ParseDate(" 2026-03-29 ", berlin)
	if err != nil || got.Format(time.RFC3339) != "2026-03-29T00:00:00+01:00" {
		t.Errorf("ParseDate = %v, %v", got, err)
	}
	if got, _ := ParseDate("2026-09-06", santiago); got.Format(time.RFC3339) != "2026-09-06T01:00:00-03:00" {
		t.Errorf("Santiago = %v", got)
	}
	for _, bad := range []string{"", "2026-02-30", "29.03.2026", "2026-3-29", "2026-03-29T00:00:00Z", "tomorrow"} {
		if _, err := ParseDate(bad, berlin); err == nil {
			t.Errorf("ParseDate(%q) accepted", bad)
		}
	}
}

func TestTimeRangeAcrossMidnight(t *testing.T) {
	t.Parallel()
	b := bk(t, "late", "2026-11-24T23:30:00+01:00")
	b.End = b.Start.Add(time.Hour)
	d := Build([]booking.Booking{b}, testTypes, date(t, "2026-11-24", berlin), berlin)
	if got := d.TimeRange(d.Entries[0]); got != "23:30–Wed 25 Nov 00:30" {
		t.Errorf("TimeRange = %q", got)
	}
	if got := (Digest{Date: d.Date, Zone: berlin, Entries: d.Entries[:1]}).CountLine(); got != "1 booking" {
		t.Errorf("CountLine = %q", got)
	}
}

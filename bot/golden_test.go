package bot

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/journal"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/digest"
	"github.com/bookbot/bookbot/internal/testutil"
	"github.com/bookbot/bookbot/notices"
	"github.com/bookbot/bookbot/personal"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestGolden renders every message, view and App Home bookbot builds, from
// fixed data full of hostile names, as text a person can read, and compares
// it with bot/testdata/golden. Whatever the snapshot says, every case is
// also held to Slack's limits and to the escaping rule.
func TestGolden(t *testing.T) {
	cases := goldenCases()
	names := map[string]bool{}
	for _, c := range cases {
		names[c.name+".txt"] = true
		t.Run(c.name, func(t *testing.T) {
			docs := c.docs(t)
			goldenCheck(t, c, docs)
			goldenCompare(t, c.name, goldenRender(docs))
		})
	}
	// A golden file no case writes is left over from a renamed one.
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.txt"))
	for _, f := range files {
		switch {
		case names[filepath.Base(f)]:
		case *update:
			if err := os.Remove(f); err != nil {
				t.Error(err)
			}
		default:
			t.Errorf("%s belongs to no case: run go test ./bot -run TestGolden -update to remove it", f)
		}
	}
}

// The fixed world of the cases: a Monday morning in Berlin.
var (
	goldenBerlin  = goldenZone("Europe/Berlin")
	goldenNewYork = goldenZone("America/New_York")
	goldenNow     = time.Date(2026, 3, 23, 9, 30, 0, 0, goldenBerlin)
)

const (
	goldenCmd  = "/booking"
	goldenPage = "https://cal.example.com/owner"
)

func goldenZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

func goldenAt(day, hour, minute int) time.Time {
	return time.Date(2026, 3, day, hour, minute, 0, 0, goldenBerlin)
}

var goldenTypes = []booking.EventType{
	{Slug: "intro-call", Title: "Intro call", DurationMinutes: 15, SchedulingKind: booking.KindSolo},
	{Slug: "consultation", Title: "Consultation", DurationMinutes: 30, SchedulingKind: booking.KindSolo},
	{Slug: "deep_dive", Title: "Deep *dive* _under_score_ `code`", DurationMinutes: 60, SchedulingKind: booking.KindSolo},
	{Slug: "all-hands", Title: "<!channel> all hands @here", DurationMinutes: 45, SchedulingKind: booking.KindSolo},
	{Slug: "team-sync", Title: "Team sync", DurationMinutes: 30, SchedulingKind: booking.KindRoundRobin},
	{Slug: "board-review", Title: "Board review", DurationMinutes: 90, SchedulingKind: booking.KindCollective},
}

// Hostile names and values.
var (
	goldenLongName = strings.Repeat("Very Long Name & <Sons> ", 125) // 3,000 characters
	goldenMention  = "<!channel> @here Eve <!everyone>"
	goldenAttendee = "<!here> Ada *bold*\nLovelace\t_under_score_"
)

func goldenBooking(id string, start time.Time, minutes int, event, name, email *string) booking.Booking {
	b := booking.Booking{ID: id, Start: start.UTC(), End: start.Add(time.Duration(minutes) * time.Minute).UTC(), Status: "confirmed"}
	if event != nil {
		b.EventType = booking.Some(*event)
	}
	if name != nil {
		b.BookerName = booking.Some(*name)
	}
	if email != nil {
		b.BookerEmail = booking.Some(*email)
	}
	return b
}

// goldenList is the upcoming bookings: every kind of hostile data, legacy
// records, and a night the clocks change.
func goldenList() []booking.Booking {
	s := testutil.Ptr[string]
	return []booking.Booking{
		goldenBooking("bk_10015a1bdb", goldenAt(23, 11, 0), 30, s("consultation"), s("Ada Lovelace"), s("first_last@example.com")),
		goldenBooking("bk_long", goldenAt(23, 14, 0), 15, s("intro-call"), s(goldenLongName), s("long&<sons>@example.com")),
		goldenBooking("bk_newline", goldenAt(24, 9, 0), 60, s("deep_dive"), s("Grace\nHopper\tjr"), s("grace@example.com")),
		goldenBooking("bk_channel", goldenAt(24, 10, 0), 45, s("all-hands"), s(goldenMention), s("eve@example.com")),
		goldenBooking("bk_legacy", goldenAt(24, 15, 0), 30, nil, nil, nil),
		goldenBooking("bk_`tick`_*bold*", goldenAt(25, 12, 0), 30, s("removed-type"), s("*bold* _under_score_ `code`"), s("under_score@example.com")),
		goldenBooking("bk_empty", goldenAt(27, 16, 0), 30, s("consultation"), s(""), s("")),
		// 01:30 CET to 03:30 CEST: the clocks go forward in between.
		goldenBooking("bk_dst", time.Date(2026, 3, 29, 0, 30, 0, 0, time.UTC).In(goldenBerlin), 60, s("intro-call"), s("Night Owl & <Co>"), s("owl@example.com")),
	}
}

// goldenFullList is the longest list the API gives: 100 bookings, six a
// day, with long names that need escaping.
func goldenFullList() []booking.Booking {
	var list []booking.Booking
	for i := range booking.MaxListed {
		start := goldenAt(23+i/6, 10+i%6, 15)
		name := fmt.Sprintf("%03d ", i) + strings.Repeat("Ünïcødé & <Sons> ", 8)
		list = append(list, goldenBooking(fmt.Sprintf("bk_%03d", i), start, 30, testutil.Ptr("consultation"), &name, testutil.Ptr(fmt.Sprintf("attendee_%03d@example.com", i))))
	}
	return list
}

// goldenBusyDay is 100 bookings today, every five minutes, with names and
// titles as long as they get.
func goldenBusyDay() []booking.Booking {
	var list []booking.Booking
	for i := range booking.MaxListed {
		start := goldenAt(23, 10, 0).Add(time.Duration(i) * 5 * time.Minute)
		name := fmt.Sprintf("%03d ", i) + strings.Repeat("&<>", 60)
		list = append(list, goldenBooking(fmt.Sprintf("bk_busy_%03d", i), start, 30, testutil.Ptr(strings.Repeat("&", 150)), &name, testutil.Ptr("busy@example.com")))
	}
	return list
}

// goldenSlots are free slots as the API gives them: Client.Slots is the
// only maker of slots, so it reads them from a canned answer.
func goldenSlots(t *testing.T, slug string, minutes int, starts ...time.Time) []booking.Slot {
	t.Helper()
	type wire struct {
		Start string `json:"start"`
		End   string `json:"end"`
	}
	list := []wire{}
	for _, s := range starts {
		list = append(list, wire{s.UTC().Format(time.RFC3339), s.Add(time.Duration(minutes) * time.Minute).UTC().Format(time.RFC3339)})
	}
	body, err := json.Marshal(map[string]any{"slots": list})
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: goldenTransport(func(r *http.Request) (*http.Response, error) {
		return &http.Response{
			StatusCode: http.StatusOK,
			Header:     http.Header{"Content-Type": {"application/json"}},
			Body:       io.NopCloser(bytes.NewReader(body)),
			Request:    r,
		}, nil
	})}
	key, err := booking.NewKey("golden-key")
	if err != nil {
		t.Fatal(err)
	}
	c, err := booking.NewClient("https://api.example.test", key, booking.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	slots, err := c.Slots(context.Background(), slug)
	if err != nil {
		t.Fatal(err)
	}
	return slots
}

type goldenTransport func(*http.Request) (*http.Response, error)

func (f goldenTransport) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// goldenSlotTimes is six days of free slots, the clock change among them:
// a page and a half of slotsMessage.
func goldenSlotTimes() []time.Time {
	var out []time.Time
	for _, d := range []struct{ day, hour, n int }{{24, 8, 12}, {25, 13, 3}, {26, 17, 1}, {27, 9, 4}, {30, 10, 2}, {31, 11, 2}} {
		for i := range d.n {
			out = append(out, goldenAt(d.day, d.hour, 0).Add(time.Duration(i)*30*time.Minute))
		}
	}
	return out
}

// goldenForward is free slots around the night the clocks go forward:
// 02:00 to 03:00 does not happen on Sun 29 Mar.
func goldenForward() []time.Time {
	utc := func(day, hour, minute int) time.Time { return time.Date(2026, 3, day, hour, minute, 0, 0, time.UTC) }
	return []time.Time{utc(28, 9, 0), utc(29, 0, 0), utc(29, 0, 30), utc(29, 1, 0), utc(29, 1, 30), utc(30, 8, 0)}
}

// goldenBack is free slots around the night the clocks go back: 02:00 to
// 03:00 happens twice on Sun 25 Oct, first in CEST, then in CET.
func goldenBack() []time.Time {
	utc := func(day, hour, minute int) time.Time { return time.Date(2026, 10, day, hour, minute, 0, 0, time.UTC) }
	return []time.Time{utc(24, 8, 0), utc(25, 0, 0), utc(25, 0, 30), utc(25, 1, 0), utc(25, 1, 30), utc(26, 9, 0)}
}

// goldenMeta is a booking form as submitted, for the outcome of a create.
func goldenMeta() modalMeta {
	return modalMeta{
		Zone:  "Europe/Berlin",
		Event: "consultation",
		Start: "2026-03-24T08:00:00Z",
		Name:  goldenAttendee,
		Email: "first_last@example.com",
		TZ:    "America/New_York",
		Note:  "Agenda: <!here> *bold* & more",
	}
}

func goldenCreated(id string) *booking.Booking {
	b := goldenBooking(id, time.Date(2026, 3, 24, 8, 0, 0, 0, time.UTC), 30, testutil.Ptr("consultation"), testutil.Ptr(goldenAttendee), testutil.Ptr("first_last@example.com"))
	return &b
}

func goldenConflict(bodyStatus int) error {
	return &booking.APIError{Endpoint: "POST /bookings", StatusCode: http.StatusConflict, Message: "conflict <!here>", BodyStatus: bodyStatus}
}

// goldenNotBooked is the create's JSON refusal with status, as the
// service sends it for a full calendar, a blocked attendee, a required
// question and a limit.
func goldenNotBooked(status int) error {
	return &booking.APIError{Endpoint: "POST /bookings", StatusCode: status, Message: "not booked", BodyStatus: status}
}

func goldenEntries() []journal.Entry {
	at := func(min int) time.Time { return goldenNow.Add(-time.Duration(min) * time.Minute).UTC() }
	create := func(name string) booking.Write {
		return booking.Write{Op: booking.OpCreate, Actor: "U012ADA", EventType: "consultation", Start: "2026-03-24T08:00:00Z", End: "2026-03-24T08:30:00Z", Name: name, Email: "first_last@example.com"}
	}
	cancel := booking.Write{Op: booking.OpCancel, Actor: "U034GRACE", EventType: "all-hands", Start: "2026-03-24T09:00:00Z", BookingID: "bk_`tick`_*bold*"}
	return []journal.Entry{
		{Seq: 1, At: at(600), Write: create("Ada Lovelace"), Outcome: booking.Confirmed, Created: "bk_10015a1bdb", Verified: true},
		{Seq: 2, At: at(500), Write: cancel, Outcome: booking.Cancelled, Verified: true},
		{Seq: 3, At: at(400), Write: create(goldenMention), Outcome: booking.NotBooked, Conflict: booking.ConflictTimeNotFree},
		{Seq: 4, At: at(300), Write: create(goldenLongName), Outcome: booking.RateLimited, Held: true},
		{Seq: 5, At: at(200), Write: booking.Write{Op: booking.OpCreate, EventType: "deep_dive", Start: "not a time <!here>", Name: "Grace\nHopper", Email: "grace@example.com", DryRun: true}, Outcome: booking.DryRun},
		{Seq: 6, At: at(100), Write: create(goldenAttendee), Outcome: booking.ProbablyNotBooked, NeedsReview: true, ReviewedAt: at(50), ReviewedBy: "U012OWNER"},
		{Seq: 7, At: at(20), Write: create(goldenAttendee), Outcome: booking.Unknown, NeedsReview: true,
			Seen: []string{"POST /bookings: no answer in time", "GET /bookings: 503 <!here> *down*", strings.Repeat("retrying & <waiting> ", 200)}},
		{Seq: 8, At: at(5), Write: cancel, Outcome: booking.NotCancelled, Recovered: true, NeedsReview: true},
		{Seq: 9, At: at(1), Write: create("In Flight"), Outcome: ""},
	}
}

// goldenPlainEntries are writes the booking service answered plainly, as
// the journal keeps them.
func goldenPlainEntries() []journal.Entry {
	at := func(min int) time.Time { return goldenNow.Add(-time.Duration(min) * time.Minute).UTC() }
	create := booking.Write{Op: booking.OpCreate, Actor: "U012ADA", EventType: "consultation", Start: "2026-03-24T08:00:00Z", End: "2026-03-24T08:30:00Z", Name: "Ada Lovelace", Email: "first_last@example.com"}
	cancel := booking.Write{Op: booking.OpCancel, Actor: "U034GRACE", BookingID: "bk_beyond_2"}
	return []journal.Entry{
		{Seq: 11, At: at(70), Write: create, Outcome: booking.NotBooked, Reason: booking.ReasonFull},
		{Seq: 12, At: at(60), Write: create, Outcome: booking.Rejected, Reason: booking.ReasonBlocked},
		{Seq: 13, At: at(50), Write: create, Outcome: booking.Rejected, Reason: booking.ReasonUnanswered},
		{Seq: 14, At: at(40), Write: create, Outcome: booking.NotBooked, Conflict: booking.ConflictRefused},
		{Seq: 15, At: at(30), Write: create, Outcome: booking.RateLimited, Reason: booking.ReasonEventLimit, RetryAfter: time.Hour},
		{Seq: 16, At: at(20), Write: create, Outcome: booking.RateLimited, Reason: booking.ReasonMinuteLimit, RetryAfter: time.Minute},
		{Seq: 17, At: at(10), Write: create, Outcome: booking.Confirmed, Reason: booking.ReasonBeyondList, Created: "bk_beyond", NeedsReview: true},
		{Seq: 18, At: at(5), Write: cancel, Outcome: booking.Cancelled, Reason: booking.ReasonBeyondList},
		{Seq: 19, At: at(4), Write: create, Outcome: booking.Confirmed, Reason: booking.ReasonListUnread, Created: "bk_unread", NeedsReview: true},
		{Seq: 20, At: at(3), Write: cancel, Outcome: booking.Cancelled, Reason: booking.ReasonListUnread},
	}
}

func goldenManyEntries() []journal.Entry {
	var out []journal.Entry
	for i := range 150 {
		out = append(out, journal.Entry{
			Seq: uint64(i + 1), At: goldenNow.Add(-time.Duration(150-i) * 5 * time.Minute).UTC(),
			Write:   booking.Write{Op: booking.OpCreate, Actor: "U012ADA", EventType: "consultation", Start: "2026-03-24T08:00:00Z", Name: fmt.Sprintf("%03d %s", i, goldenLongName), Email: "first_last@example.com"},
			Outcome: booking.Confirmed, Created: fmt.Sprintf("bk_%03d", i), Verified: true,
		})
	}
	return out
}

// rowRule is what the lines of a case's sections must look like.
type rowRule int

const (
	rowsFree  rowRule = iota
	rowsOne           // a list: every section is one line
	rowsDated         // every line of a section with times starts with one
)

type goldenCase struct {
	name string
	rows rowRule
	docs func(t *testing.T) []goldenDoc
}

// goldenDoc is one thing Slack shows: a message, a modal or App Home.
type goldenDoc struct {
	kind   string // "message", "modal" or "home"
	text   string // a message's notification text
	blocks []slack.Block
	meta   *slack.SlackMetadata // a message's metadata
	view   *slack.ModalViewRequest
	// summary marks a burst's summary, held to a budget: it is what a
	// channel shows of many changes at once.
	summary bool
}

func msgDoc(m message) []goldenDoc {
	return []goldenDoc{{kind: "message", text: m.Text, blocks: m.Blocks, meta: m.Metadata}}
}

// burstDocs are a burst's summaries, each followed by the list in its
// thread.
func burstDocs(parts []burstPart) []goldenDoc {
	var docs []goldenDoc
	for _, p := range parts {
		docs = append(docs, goldenDoc{kind: "message", text: p.Text, blocks: p.Blocks, meta: p.Metadata, summary: true})
		for _, m := range p.thread {
			docs = append(docs, msgDoc(m)...)
		}
	}
	return docs
}

func viewDoc(v slack.ModalViewRequest) []goldenDoc { return []goldenDoc{{kind: "modal", view: &v}} }

func goldenCases() []goldenCase {
	list := goldenList()
	types := goldenTypes
	berlin, now := goldenBerlin, goldenNow
	full := goldenFullList()

	var cases []goldenCase
	add := func(name string, rows rowRule, docs func(t *testing.T) []goldenDoc) {
		cases = append(cases, goldenCase{name, rows, docs})
	}
	msg := func(name string, rows rowRule, m func(t *testing.T) message) {
		add(name, rows, func(t *testing.T) []goldenDoc { return msgDoc(m(t)) })
	}
	fixed := func(name string, rows rowRule, m message) {
		msg(name, rows, func(*testing.T) message { return m })
	}

	// The list.
	fixed("list_page", rowsOne, listMessage(list, types, berlin, 0, now, listMark{}))
	fixed("list_page_new_york", rowsOne, listMessage(list, types, goldenNewYork, 0, now, listMark{}))
	fixed("list_asking", rowsOne, listMessage(list, types, berlin, 0, now, listMark{asking: "bk_channel"}))
	cancelled := list[3]
	rest := append(append([]booking.Booking(nil), list[:3]...), list[4:]...)
	fixed("list_cancelled", rowsOne, listMessage(rest, types, berlin, 0, now, listMark{cancelled: &cancelled}))
	// The list the cancel was settled by may still hold the booking.
	fixed("list_cancelled_still_listed", rowsOne, listMessage(list, types, berlin, 0, now, listMark{cancelled: &cancelled}))
	fullCancelled := full[3]
	fullRest := append(append([]booking.Booking(nil), full[:3]...), full[4:]...)
	fixed("list_cancelled_earlier_page", rowsOne, listMessage(fullRest, types, berlin, 1, now, listMark{cancelled: &fullCancelled}))
	notCancelled := cancelOutcomeMessage(list[0].ID, "U012ADA", &booking.Result{Outcome: booking.NotCancelled, Booking: &list[0]}, types, berlin, now)
	fixed("list_cancel_failed", rowsOne, listMessage(list, types, berlin, 0, now, listMark{note: notCancelled.Blocks[0]}))
	fixed("list_full_page_0", rowsOne, listMessage(full, types, berlin, 0, now, listMark{}))
	fixed("list_full_page_6", rowsOne, listMessage(full, types, berlin, 6, now, listMark{}))
	legacy := []booking.Booking{
		goldenBooking("bk_legacy_1", goldenAt(23, 12, 0), 30, nil, nil, nil),
		goldenBooking("bk_legacy_2", goldenAt(24, 12, 0), 30, testutil.Ptr("consultation"), nil, testutil.Ptr("only_email@example.com")),
		goldenBooking("bk_legacy_3", goldenAt(25, 12, 0), 30, nil, testutil.Ptr("Only A Name"), nil),
	}
	fixed("list_legacy", rowsOne, listMessage(legacy, nil, berlin, 0, now, listMark{}))
	fixed("list_empty", rowsOne, listMessage(nil, types, berlin, 0, now, listMark{}))

	// Asking before a cancel.
	fixed("cancel_confirm_found", rowsFree, cancelConfirmMessage("bk_channel", &list[3], types, berlin, false))
	fixed("cancel_confirm_found_legacy", rowsFree, cancelConfirmMessage("bk_legacy", &list[4], types, berlin, false))
	fixed("cancel_confirm_not_found", rowsFree, cancelConfirmMessage("bk_`tick`_<!here>", nil, types, berlin, false))
	fixed("cancel_confirm_list_full", rowsFree, cancelConfirmMessage("bk_999", nil, types, berlin, true))

	// Event types and free slots.
	fixed("types", rowsFree, typesMessage(types, goldenPage, 0))
	fixed("types_no_page", rowsFree, typesMessage(types, "", 0))
	var many []booking.EventType
	for i := range 30 {
		many = append(many, booking.EventType{Slug: fmt.Sprintf("type-%02d", i), Title: fmt.Sprintf("Type %02d", i), DurationMinutes: 30, SchedulingKind: booking.KindSolo})
	}
	fixed("types_too_many", rowsFree, typesMessage(many, goldenPage, 0))
	fixed("types_too_many_page_1", rowsFree, typesMessage(many, goldenPage, 1))
	fixed("types_none", rowsFree, typesMessage(nil, goldenPage, 0))
	msg("slots_several_days", rowsFree, func(t *testing.T) message {
		return slotsMessage(types[1], goldenSlots(t, "consultation", 30, goldenSlotTimes()...), berlin, now, 0)
	})
	msg("slots_several_days_page_1", rowsFree, func(t *testing.T) message {
		return slotsMessage(types[1], goldenSlots(t, "consultation", 30, goldenSlotTimes()...), berlin, now, 1)
	})
	msg("slots_hostile_title_new_york", rowsFree, func(t *testing.T) message {
		return slotsMessage(types[3], goldenSlots(t, "all-hands", 45, goldenSlotTimes()[:5]...), goldenNewYork, now, 0)
	})
	msg("slots_one_slot", rowsFree, func(t *testing.T) message {
		return slotsMessage(types[0], goldenSlots(t, "intro-call", 15, goldenAt(24, 16, 45)), berlin, now, 0)
	})
	fixed("slots_none", rowsFree, slotsMessage(types[0], nil, berlin, now, 0))
	msg("slots_clocks_go_forward", rowsFree, func(t *testing.T) message {
		return slotsMessage(types[1], goldenSlots(t, "consultation", 30, goldenForward()...), berlin, now, 0)
	})
	msg("slots_clocks_go_back", rowsFree, func(t *testing.T) message {
		return slotsMessage(types[1], goldenSlots(t, "consultation", 30, goldenBack()...), berlin, now, 0)
	})

	// What a create did.
	meta := goldenMeta()
	create := func(name string, res *booking.Result, err error) {
		fixed("create_"+name, rowsFree, createOutcome(meta, res, err, berlin, now, types, goldenPage, true))
	}
	create("confirmed", &booking.Result{Outcome: booking.Confirmed, Booking: goldenCreated("bk_10015a1bdb"), Verified: true}, nil)
	create("confirmed_reconciled", &booking.Result{Outcome: booking.Confirmed, Booking: goldenCreated("bk_`tick`_*bold*"), Verified: true, Reconciled: true}, nil)
	long := meta
	long.Name, long.Note = goldenLongName, strings.Repeat("note ", 400)
	fixed("create_confirmed_long_name", rowsFree, createOutcome(long, &booking.Result{Outcome: booking.Confirmed, Booking: goldenCreated("bk_long")}, nil, berlin, now, types, goldenPage, true))
	create("dry_run", &booking.Result{Outcome: booking.DryRun, WouldSend: &booking.Request{Method: "POST", Path: "/api/v1/bookings", Form: url.Values{
		"event_type": {meta.Event}, "start": {meta.Start}, "end": {"2026-03-24T08:30:00Z"},
		"name": {meta.Name}, "email": {meta.Email}, "booker_tz": {meta.TZ}, "q:booking-note": {meta.Note},
	}}}, nil)
	prior := func(outcome booking.Outcome, actor string) *booking.Prior {
		return &booking.Prior{Seq: 41, Actor: actor, At: now.Add(-2 * time.Hour), Outcome: outcome, BookingID: "bk_prior_1"}
	}
	create("already_in_flight", &booking.Result{Outcome: booking.AlreadyBooked, Prior: prior("", "U012ADA")}, nil)
	create("already_unclear", &booking.Result{Outcome: booking.AlreadyBooked, Prior: prior(booking.Unknown, "")}, nil)
	create("already_listed_after_409", &booking.Result{Outcome: booking.AlreadyBooked, Booking: goldenCreated("bk_10015a1bdb"), Err: goldenConflict(http.StatusOK)}, nil)
	create("already_listed", &booking.Result{Outcome: booking.AlreadyBooked, Booking: goldenCreated("bk_10015a1bdb"), Prior: prior(booking.Confirmed, "U012ADA")}, nil)
	moved := goldenCreated("bk_moved")
	moved.Start, moved.End = moved.Start.Add(26*time.Hour), moved.End.Add(26*time.Hour)
	create("already_moved", &booking.Result{Outcome: booking.AlreadyBooked, Booking: moved, Prior: prior(booking.Confirmed, "U012ADA")}, nil)
	create("already_booked_before", &booking.Result{Outcome: booking.AlreadyBooked, Prior: prior(booking.Confirmed, "")}, nil)
	create("not_booked_time_not_free", &booking.Result{Outcome: booking.NotBooked, Err: goldenConflict(http.StatusConflict)}, nil)
	// A repeat, or an email check whose link may still book this time.
	create("not_booked_email_check", &booking.Result{Outcome: booking.NotBooked, Err: goldenConflict(http.StatusOK)}, nil)
	fixed("create_not_booked_email_check_unnoticed", rowsFree, createOutcome(meta, &booking.Result{Outcome: booking.NotBooked, Err: goldenConflict(http.StatusOK)}, nil, berlin, now, types, goldenPage, false))
	create("not_booked_full", &booking.Result{Outcome: booking.NotBooked, Reason: booking.ReasonFull, Err: goldenNotBooked(http.StatusServiceUnavailable)}, nil)
	create("refused_blocked", &booking.Result{Outcome: booking.Rejected, Reason: booking.ReasonBlocked, Err: goldenNotBooked(http.StatusForbidden)}, nil)
	noNote := meta
	noNote.Note = ""
	fixed("create_refused_unanswered", rowsFree, createOutcome(noNote, &booking.Result{Outcome: booking.Rejected, Reason: booking.ReasonUnanswered, Err: goldenNotBooked(http.StatusBadRequest)}, nil, berlin, now, types, goldenPage, true))
	create("not_booked_unstated", &booking.Result{Outcome: booking.NotBooked, Err: goldenConflict(0)}, nil)
	create("not_confirmed", &booking.Result{Outcome: booking.NotConfirmed}, nil)
	create("rejected", &booking.Result{Outcome: booking.Rejected, Err: &booking.APIError{Endpoint: "POST /bookings", StatusCode: http.StatusBadRequest, Message: "invalid <!here>"}}, nil)
	create("rejected_validation", &booking.Result{Outcome: booking.Rejected, Err: booking.ValidationError{{Field: "email", Problem: "\"<!channel>\" is not an email address"}}}, nil)
	create("rate_limited_held", &booking.Result{Outcome: booking.RateLimited, Held: true, RetryAfter: 42 * time.Second}, nil)
	create("limit_unchecked", &booking.Result{Outcome: booking.RateLimited, Held: true, RetryAfter: time.Minute, Err: fmt.Errorf("%w: connection refused", booking.ErrLimitUnchecked)}, nil)
	create("rate_limited", &booking.Result{Outcome: booking.RateLimited}, nil)
	create("rate_limited_event", &booking.Result{Outcome: booking.RateLimited, Reason: booking.ReasonEventLimit, RetryAfter: time.Hour, Err: goldenNotBooked(http.StatusTooManyRequests)}, nil)
	create("rate_limited_minute", &booking.Result{Outcome: booking.RateLimited, Reason: booking.ReasonMinuteLimit, RetryAfter: 2 * time.Minute, Err: goldenNotBooked(http.StatusTooManyRequests)}, nil)
	create("confirmed_beyond_list", &booking.Result{Outcome: booking.Confirmed, Reason: booking.ReasonBeyondList, Booking: goldenCreated("bk_beyond"),
		Receipt: &booking.Receipt{ID: "bk_beyond", Start: goldenCreated("bk_beyond").Start, End: goldenCreated("bk_beyond").End}}, nil)
	create("confirmed_list_unread", &booking.Result{Outcome: booking.Confirmed, Reason: booking.ReasonListUnread, Booking: goldenCreated("bk_unread"),
		Receipt: &booking.Receipt{ID: "bk_unread", Start: goldenCreated("bk_unread").Start, End: goldenCreated("bk_unread").End}}, nil)
	create("probably_not_booked", &booking.Result{Outcome: booking.ProbablyNotBooked}, nil)
	reviewed := meta
	reviewed.Review = 7
	fixed("create_probably_not_booked_from_review", rowsFree, createOutcome(reviewed, &booking.Result{Outcome: booking.ProbablyNotBooked}, nil, berlin, now, types, goldenPage, true))
	create("unknown", &booking.Result{Outcome: booking.Unknown}, nil)
	create("not_sent", nil, &booking.TransportError{Endpoint: "GET /bookings", Timeout: true, Err: errors.New("i/o timeout")})
	create("not_sent_unexpected_error", nil, errors.New("journal: disk full <!here>"))

	// What a cancel did.
	cancel := func(name string, res *booking.Result) {
		fixed("cancel_"+name, rowsFree, cancelOutcomeMessage("bk_`tick`_*bold*", "U012ADA", res, types, berlin, now))
	}
	cancel("dry_run", &booking.Result{Outcome: booking.DryRun, Booking: &list[5], WouldSend: &booking.Request{Method: "DELETE", Path: "/api/v1/bookings/bk_%60tick%60_%2Abold%2A"}})
	cancel("dry_run_not_listed", &booking.Result{Outcome: booking.DryRun, WouldSend: &booking.Request{Method: "DELETE", Path: "/api/v1/bookings/bk_%60tick%60_%2Abold%2A"}})
	cancel("cancelled", &booking.Result{Outcome: booking.Cancelled, Verified: true, Booking: &list[0]})
	cancel("cancelled_hostile", &booking.Result{Outcome: booking.Cancelled, Verified: true, Booking: &list[3]})
	cancel("cancelled_legacy", &booking.Result{Outcome: booking.Cancelled, Verified: true, Booking: &list[4]})
	cancel("cancelled_unverified", &booking.Result{Outcome: booking.Cancelled, Booking: &list[0]})
	// The service answers a repeat cancel as it does the first.
	cancel("cancelled_not_listed_before", &booking.Result{Outcome: booking.Cancelled})
	// Beyond the first 100: the full list could not show it before or after.
	cancel("cancelled_beyond_list", &booking.Result{Outcome: booking.Cancelled, Reason: booking.ReasonBeyondList})
	// The list before could not be read: which booking it was is not known.
	cancel("cancelled_list_unread", &booking.Result{Outcome: booking.Cancelled, Reason: booking.ReasonListUnread})
	cancel("not_found", &booking.Result{Outcome: booking.NotFound})
	cancel("not_cancelled", &booking.Result{Outcome: booking.NotCancelled, Booking: &list[0]})
	cancel("rate_limited", &booking.Result{Outcome: booking.RateLimited, RetryAfter: 3*time.Minute + 10*time.Second, Booking: &list[0]})
	cancel("rejected", &booking.Result{Outcome: booking.Rejected, Err: &booking.APIError{Endpoint: "DELETE /bookings/{id}", StatusCode: http.StatusForbidden}})
	cancel("unknown", &booking.Result{Outcome: booking.Unknown, Booking: &list[0]})
	cancel("unknown_not_listed", &booking.Result{Outcome: booking.Unknown})
	fixed("kept", rowsFree, keptMessage())
	fixed("cancelling", rowsFree, cancellingMessage(&list[3], types, berlin, now))
	fixed("cancelling_not_listed", rowsFree, cancellingMessage(nil, types, berlin, now))
	fixed("booking_id", rowsFree, bookingIDMessage("a2972a0c-5697-4400-90ba-c80b6a7d56fc"))

	// Refusals, help and errors.
	fixed("refusal", rowsFree, refusalMessage("U0STRANGER", ""))
	fixed("refusal_contact", rowsFree, refusalMessage("U0STRANGER", "U012OWNER"))
	fixed("help", rowsFree, helpMessage(goldenCmd, ""))
	fixed("help_problem", rowsFree, helpMessage(goldenCmd, fmt.Sprintf("Say which event type: `%s slots &lt;event&gt;` (see `%s types`).", goldenCmd, goldenCmd)))
	// As route.go asks for an unknown subcommand.
	fixed("help_unknown_command", rowsFree, helpMessage(goldenCmd, unknownCommand("<!channel> & `friends`")))
	fixed("error", rowsFree, errorMessage("The bookings could not be loaded", &booking.APIError{Endpoint: "GET /bookings", StatusCode: http.StatusServiceUnavailable}, tryAgain(actionListPage, "0")))
	fixed("error_unexpected", rowsFree, errorMessage("Nothing was cancelled", errors.New("journal: <!here> *disk* full"), upcomingButton()))

	// The review queue and the audit.
	entries := goldenEntries()
	fixed("review_unknown", rowsFree, reviewMessage(entries[6], types, berlin))
	fixed("review_cancel_recovered", rowsFree, reviewMessage(entries[7], types, berlin))
	fixed("review_checked", rowsFree, reviewMessage(entries[5], types, berlin))
	confirmed := entries[0]
	confirmed.Recovered, confirmed.NeedsReview = true, true
	fixed("review_confirmed_after_restart", rowsFree, reviewMessage(confirmed, types, berlin))
	beyond := entries[0]
	beyond.Reason, beyond.Verified, beyond.NeedsReview, beyond.Created = booking.ReasonBeyondList, false, true, "bk_beyond"
	beyond.Seen = []string{"POST /bookings answered 201 with receipt bk_beyond", "GET /bookings is full (100) and the slot lies beyond its last booking, so it cannot check the receipt: booked as the service answered"}
	fixed("review_confirmed_beyond_list", rowsFree, reviewMessage(beyond, types, berlin))
	unread := entries[0]
	unread.Reason, unread.Verified, unread.NeedsReview, unread.Created = booking.ReasonListUnread, false, true, "bk_unread"
	unread.Seen = []string{"POST /bookings answered 201 with receipt bk_unread", "GET /bookings could not be read, so the receipt could not be checked: booked as the service answered"}
	fixed("review_confirmed_list_unread", rowsFree, reviewMessage(unread, types, berlin))
	// An outcome this bookbot does not know, from a journal written by
	// another version.
	strange := entries[6]
	strange.Outcome = "settled <!here> & *more*"
	fixed("review_outcome_unknown_to_bookbot", rowsFree, reviewMessage(strange, types, berlin))
	// What someone who asked, and does not act on the calendar (a guest
	// of an offer), is told of a write settled after a restart.
	for _, o := range []booking.Outcome{booking.Confirmed, booking.ProbablyNotBooked, booking.Unknown} {
		e := entries[0]
		e.Recovered, e.Outcome, e.Calendar, e.CalendarID = true, o, "U012ADA", "cal-ada"
		fixed("review_recovered_to_guest_"+string(o), rowsFree, recoveredMessage(e, types))
	}
	fixed("review_not_yours", rowsFree, notYoursToCheck(entries[6]))
	fixed("audit", rowsDated, auditMessage(entries, false, types, berlin, now))
	fixed("audit_own", rowsDated, auditMessage(entries, true, types, berlin, now))
	fixed("audit_plain_answers", rowsDated, auditMessage(goldenPlainEntries(), false, types, berlin, now))
	fixed("audit_new_york", rowsDated, auditMessage(entries, false, types, goldenNewYork, now))
	fixed("audit_empty", rowsDated, auditMessage(nil, false, types, berlin, now))
	fixed("audit_long", rowsDated, auditMessage(goldenManyEntries(), false, types, berlin, now))
	fixed("pruned", rowsFree, prunedMessage(90*24*time.Hour))
	fixed("pruned_keep_unknown", rowsFree, prunedMessage(0))

	// App Home.
	home := func(name string, list []booking.Booking, err error, loc *time.Location) {
		add("home_"+name, rowsDated, func(*testing.T) []goldenDoc {
			return []goldenDoc{{kind: "home", blocks: homeBlocks(list, err, types, loc, now, nil)}}
		})
	}
	home("normal", list, nil, berlin)
	home("new_york", list, nil, goldenNewYork)
	home("empty", nil, nil, berlin)
	home("error", nil, &booking.APIError{Endpoint: "GET /bookings", StatusCode: http.StatusServiceUnavailable, Message: "down <!here>"}, berlin)
	home("busy_day", goldenBusyDay(), nil, berlin)

	// App Home as the person's desk: their reminders and agenda too.
	on := personal.Settings{Remind: 15 * time.Minute, Agenda: &personal.Agenda{Minute: 8 * 60, Weekdays: true}}
	deskCase := func(name string, list []booking.Booking, err error, loc *time.Location, d desk) {
		add("home_desk_"+name, rowsDated, func(*testing.T) []goldenDoc {
			return []goldenDoc{{kind: "home", blocks: homeBlocks(list, err, types, loc, now, &d)}}
		})
	}
	deskCase("settings_on", list, nil, berlin, desk{settings: on, known: true})
	deskCase("settings_off", list, nil, berlin, desk{known: true})
	deskCase("busy_day", goldenBusyDay(), nil, berlin, desk{settings: on, known: true})
	deskCase("bookings_error", nil, &booking.APIError{Endpoint: "GET /bookings", StatusCode: http.StatusServiceUnavailable}, berlin, desk{settings: on, known: true})
	deskCase("settings_unreadable", list, nil, berlin, desk{err: errors.New("bolt: timeout <!here>"), known: true})
	deskCase("zone_unknown", list, nil, time.UTC, desk{settings: on})

	// Reminders and agendas: the direct messages.
	reminder := func(bk booking.Booking, lead time.Duration) personal.Due {
		return personal.Due{Kind: personal.Reminder, User: "U012ADA", Key: "k", At: bk.Start.Add(-lead), Booking: bk}
	}
	due := reminder(list[0], 15*time.Minute)
	fixed("reminder", rowsFree, reminderMessage(due, types, berlin, due.At.Add(20*time.Second)))
	fixed("reminder_new_york", rowsFree, reminderMessage(due, types, goldenNewYork, due.At))
	lateDue := due
	lateDue.Late = true
	fixed("reminder_late", rowsFree, reminderMessage(lateDue, types, berlin, list[0].Start.Add(-3*time.Minute)))
	hostile := reminder(list[3], 24*time.Hour)
	fixed("reminder_hostile", rowsFree, reminderMessage(hostile, types, berlin, hostile.At))
	fixed("reminder_long_name", rowsFree, reminderMessage(reminder(list[1], 90*time.Minute), types, berlin, list[1].Start.Add(-90*time.Minute)))
	fixed("reminder_legacy", rowsFree, reminderMessage(reminder(list[4], time.Hour), types, berlin, list[4].Start.Add(-30*time.Second)))
	tomorrowDate := personal.Date{Year: 2026, Month: time.March, Day: 24}
	agendaDue := personal.Due{Kind: personal.AgendaKind, User: "U012ADA", Key: "k", Day: tomorrowDate, At: goldenAt(24, 8, 0), Bookings: list[2:5]}
	fixed("agenda", rowsDated, agendaMessage(agendaDue, types, berlin))
	fixed("agenda_empty", rowsDated, agendaMessage(personal.Due{Kind: personal.AgendaKind, Day: tomorrowDate, At: goldenAt(24, 8, 0)}, types, berlin))
	lateAgenda := agendaDue
	lateAgenda.Late = true
	fixed("agenda_late", rowsDated, agendaMessage(lateAgenda, types, berlin))
	busy := goldenBusyDay()
	fixed("agenda_incomplete", rowsDated, agendaMessage(personal.Due{Kind: personal.AgendaKind, Day: personal.Date{Year: 2026, Month: time.March, Day: 23}, At: goldenAt(23, 7, 0), Bookings: busy, Incomplete: true}, types, berlin))
	dstDate := personal.Date{Year: 2026, Month: time.March, Day: 29}
	fixed("agenda_clocks_go_forward", rowsDated, agendaMessage(personal.Due{Kind: personal.AgendaKind, Day: dstDate, At: goldenAt(29, 8, 0), Bookings: list[7:]}, types, berlin))

	// `today`.
	fixed("today", rowsDated, todayMessage(list, types, berlin, now))
	fixed("today_new_york", rowsDated, todayMessage(list, types, goldenNewYork, now))
	fixed("today_empty", rowsDated, todayMessage(nil, types, berlin, now))
	fixed("today_busy_day", rowsDated, todayMessage(busy, types, berlin, now))

	// `remind` and `agenda`: what they say.
	next := reminderNext{at: list[1].Start.Add(-15 * time.Minute), booking: &list[1], types: types}
	fixed("remind_set", rowsFree, remindSetting(goldenCmd, on, true, next, berlin, true))
	fixed("remind_shown", rowsFree, remindSetting(goldenCmd, personal.Settings{Remind: 90 * time.Minute}, false, reminderNext{at: list[0].Start.Add(-90 * time.Minute)}, berlin, true))
	fixed("remind_none_to_come", rowsFree, remindSetting(goldenCmd, personal.Settings{Remind: 24 * time.Hour}, false, reminderNext{}, berlin, true))
	fixed("remind_list_error", rowsFree, remindSetting(goldenCmd, personal.Settings{Remind: time.Minute}, true, reminderNext{err: booking.ErrUnavailable}, berlin, true))
	fixed("remind_off", rowsFree, remindSetting(goldenCmd, personal.Settings{}, true, reminderNext{}, berlin, true))
	fixed("remind_shown_off", rowsFree, remindSetting(goldenCmd, personal.Settings{}, false, reminderNext{}, berlin, true))
	fixed("remind_zone_unknown", rowsFree, remindSetting(goldenCmd, on, true, next, time.UTC, false))
	fixed("agenda_set", rowsFree, agendaSetting(goldenCmd, personal.Settings{Agenda: &personal.Agenda{Minute: 8 * 60}}, true, goldenAt(24, 8, 0), berlin, true))
	fixed("agenda_set_weekdays", rowsFree, agendaSetting(goldenCmd, on, true, goldenAt(24, 8, 0), berlin, true))
	fixed("agenda_shown", rowsFree, agendaSetting(goldenCmd, on, false, goldenAt(24, 8, 0), goldenNewYork, true))
	fixed("agenda_off", rowsFree, agendaSetting(goldenCmd, personal.Settings{Remind: 15 * time.Minute}, true, time.Time{}, berlin, true))
	fixed("agenda_shown_off", rowsFree, agendaSetting(goldenCmd, personal.Settings{}, false, time.Time{}, berlin, true))
	fixed("agenda_zone_unknown", rowsFree, agendaSetting(goldenCmd, on, true, time.Time{}, time.UTC, false))
	fixed("personal_not_set_up", rowsFree, notSetUpMessage())
	_, leadProblem := parseLead("<!here> & soon", goldenCmd)
	fixed("help_remind_problem", rowsFree, helpMessage(goldenCmd, leadProblem))
	_, rangeProblem := parseLead("2d", goldenCmd)
	fixed("help_remind_out_of_range", rowsFree, helpMessage(goldenCmd, rangeProblem))
	_, agendaProblem := parseAgenda([]string{"25:00", "<!channel>"}, goldenCmd)
	fixed("help_agenda_problem", rowsFree, helpMessage(goldenCmd, agendaProblem))

	// The settings modal.
	add("settings_modal_off", rowsFree, func(*testing.T) []goldenDoc { return viewDoc(settingsModal(personal.Settings{}, berlin, true)) })
	add("settings_modal_on", rowsFree, func(*testing.T) []goldenDoc { return viewDoc(settingsModal(on, berlin, true)) })
	add("settings_modal_custom", rowsFree, func(*testing.T) []goldenDoc {
		return viewDoc(settingsModal(personal.Settings{Remind: 45 * time.Minute, Agenda: &personal.Agenda{Minute: 8*60 + 15}}, goldenNewYork, true))
	})
	add("settings_modal_zone_unknown", rowsFree, func(*testing.T) []goldenDoc { return viewDoc(settingsModal(on, time.UTC, false)) })

	// Own calendars.
	add("account_connect_modal", rowsFree, func(*testing.T) []goldenDoc { return viewDoc(connectModal()) })
	fixed("account_connected", rowsFree, connectedMessage(3, false, nil, ""))
	fixed("account_connected_shared", rowsFree, connectedMessage(3, false, []string{"U012BOB"}, ""))
	fixed("account_connected_owners", rowsFree, connectedMessage(3, true, nil, ""))
	fixed("account_connected_page", rowsFree, connectedMessage(3, false, nil, "https://book.example.com/grace"))
	fixed("account_owner", rowsFree, accountMessage(account.Account{}, false, true))
	fixed("account_own", rowsFree, accountMessage(account.Account{User: "U012ADA", ConnectedAt: goldenAt(20, 10, 0), LastUsed: goldenAt(23, 9, 0), State: account.OK}, true, true))
	fixed("account_reconnect", rowsFree, reconnectMessage())
	fixed("account_none", rowsFree, noCalendarMessage(&NoCalendarError{}))
	fixed("account_disconnected", rowsFree, disconnectedMessage(true, true))
	add("home_no_calendar", rowsFree, func(*testing.T) []goldenDoc {
		return []goldenDoc{{kind: "home", blocks: homeBlocks(nil, &NoCalendarError{}, nil, berlin, now, nil)}}
	})
	fixed("account_notices_dm", rowsFree, noticesMessage(account.NoticesDM, false))
	fixed("account_notices_channel", rowsFree, noticesMessage("C0TEAM", true))

	// The digest.
	digestCase := func(name string, d digest.Digest, emails bool) {
		add("digest_"+name, rowsDated, func(*testing.T) []goldenDoc {
			var docs []goldenDoc
			for _, m := range DigestMessages(d, emails) {
				docs = append(docs, goldenDoc{kind: "message", text: m.Text, blocks: m.Blocks})
			}
			return docs
		})
	}
	tomorrow := digest.Tomorrow(now, berlin)
	digestCase("day", digest.Build(list, types, tomorrow, berlin), true)
	digestCase("day_without_emails", digest.Build(list, types, tomorrow, berlin), false)
	digestCase("empty", digest.Build(nil, types, tomorrow, berlin), true)
	// A full list, every booking on it before the day: none shown, and the
	// day may have some beyond the list.
	var before []booking.Booking
	for i := range booking.MaxListed {
		start := goldenAt(23, 10, 0).Add(time.Duration(i) * time.Minute)
		before = append(before, goldenBooking(fmt.Sprintf("bk_before_%03d", i), start, 1, testutil.Ptr("intro-call"), testutil.Ptr("Ada"), testutil.Ptr("ada@example.com")))
	}
	digestCase("none_listed_maybe_beyond", digest.Build(before, types, tomorrow, berlin), false)
	digestCase("clock_change", digest.Build(list, types, goldenAt(29, 0, 0), berlin), true)
	var crowd []booking.Booking
	for i := range booking.MaxListed {
		start := goldenAt(24, 8, 0).Add(time.Duration(i) * 5 * time.Minute)
		name := fmt.Sprintf("%03d ", i) + strings.Repeat("<Ünïcødé & Sons> ", 10)
		crowd = append(crowd, goldenBooking(fmt.Sprintf("bk_%03d", i), start, 30, testutil.Ptr("all-hands"), &name, testutil.Ptr(fmt.Sprintf("first_last_%03d@example.com", i))))
	}
	digestCase("full_day", digest.Build(crowd, types, tomorrow, berlin), true)

	// The booking form and its views.
	add("form_loading", rowsFree, func(*testing.T) []goldenDoc {
		return viewDoc(bookingForm(form{meta: modalMeta{Zone: "Europe/Berlin"}, requester: berlin, now: now}))
	})
	add("form_loading_slots", rowsFree, func(*testing.T) []goldenDoc {
		return viewDoc(bookingForm(form{meta: modalMeta{Zone: "Europe/Berlin", Event: "consultation"}, types: types, requester: berlin, now: now}))
	})
	add("form_slots", rowsFree, func(t *testing.T) []goldenDoc {
		slots := goldenSlots(t, "consultation", 30, goldenSlotTimes()...)
		m := meta
		m.Start = slots[3].RawStart()
		return viewDoc(bookingForm(form{meta: m, types: types, slots: slots, loadedAt: true, requester: berlin, now: now, page: goldenPage}))
	})
	add("form_slots_new_york", rowsFree, func(t *testing.T) []goldenDoc {
		slots := goldenSlots(t, "consultation", 30, goldenSlotTimes()...)
		m := modalMeta{Zone: "America/New_York", Event: "consultation", Day: "2026-03-27"}
		return viewDoc(bookingForm(form{meta: m, types: types, slots: slots, loadedAt: true, requester: goldenNewYork, now: now}))
	})
	add("form_clocks_go_back", rowsFree, func(t *testing.T) []goldenDoc {
		slots := goldenSlots(t, "consultation", 30, goldenBack()...)
		m := modalMeta{Zone: "Europe/Berlin", Event: "consultation", Day: "2026-10-25"}
		return viewDoc(bookingForm(form{meta: m, types: types, slots: slots, loadedAt: true, requester: berlin, now: now}))
	})
	add("form_problem", rowsFree, func(*testing.T) []goldenDoc {
		m := modalMeta{Zone: "Europe/Berlin", Event: "consultation"}
		// As refreshForm leaves it when the slots cannot be read.
		return viewDoc(bookingForm(form{meta: m, types: types, loadedAt: true, slotsErr: true, problem: "Free slots could not be loaded. " + failureText(booking.ErrUnavailable), requester: berlin, now: now}))
	})
	add("form_unknown_event", rowsFree, func(*testing.T) []goldenDoc {
		// As refreshForm leaves it for `new <!channel>`.
		return viewDoc(bookingForm(form{meta: modalMeta{Zone: "Europe/Berlin"}, types: types, problem: fmt.Sprintf("There is no event type %q.", "<!channel>"), requester: berlin, now: now}))
	})
	add("form_no_bookable_types", rowsFree, func(*testing.T) []goldenDoc {
		return viewDoc(bookingForm(form{meta: modalMeta{Zone: "Europe/Berlin"}, types: types[4:], requester: berlin, now: now, page: goldenPage}))
	})
	add("pending", rowsFree, func(*testing.T) []goldenDoc {
		return viewDoc(*pendingView(meta, berlin, now, types))
	})
	add("pending_no_time", rowsFree, func(*testing.T) []goldenDoc {
		m := meta
		m.Start = "later <!here>"
		return viewDoc(*pendingView(m, berlin, now, types))
	})
	add("outcome_view", rowsFree, func(*testing.T) []goldenDoc {
		res := &booking.Result{Outcome: booking.Confirmed, Booking: goldenCreated("bk_10015a1bdb"), Verified: true}
		return viewDoc(outcomeView(meta, createOutcome(meta, res, nil, berlin, now, types, goldenPage, true)))
	})
	add("outcome_view_unknown", rowsFree, func(*testing.T) []goldenDoc {
		return viewDoc(outcomeView(meta, createOutcome(meta, &booking.Result{Outcome: booking.Unknown}, nil, berlin, now, types, goldenPage, true)))
	})

	// Live notices: a booking's first notice, its state after a move or a
	// cancel, the replies in its thread, and a burst.
	notice := func(kind notices.Kind, bk booking.Booking, by *notices.By) notices.Notice {
		return notices.Notice{Change: notices.Change{Kind: kind, Booking: bk}, Title: titleOf(bk.EventType, types), By: by}
	}
	movedN := notice(notices.Moved, list[1], nil)
	movedN.Was = list[1]
	movedN.Was.Start, movedN.Was.End = list[1].Start.Add(-2*time.Hour), list[1].End.Add(-2*time.Hour)
	byAda := &notices.By{Actor: "U012ADA", At: now.Add(-time.Minute)}
	fixed("notice_new_outside_bookbot", rowsFree, noticeMessage(notice(notices.New, list[3], nil), berlin, false, now))
	afterCheck := notice(notices.New, list[0], nil)
	afterCheck.EmailCheck = &notices.By{Actor: "U012ADA", At: now.Add(-3 * time.Hour)}
	fixed("notice_new_after_email_check", rowsFree, noticeMessage(afterCheck, berlin, true, now))
	fixed("notice_new_in_slack", rowsFree, noticeMessage(notice(notices.New, list[0], byAda), berlin, true, now))
	// bookbot's own write, whose answer was unclear, may have made it.
	unclearBy := &notices.By{Actor: "U012ADA", At: now.Add(-2 * time.Hour)}
	mayBe := notice(notices.New, list[0], nil)
	mayBe.Unclear = unclearBy
	fixed("notice_new_unclear_attempt", rowsFree, noticeMessage(mayBe, berlin, false, now))
	mayBeGone := notice(notices.Cancelled, list[0], nil)
	mayBeGone.Unclear = unclearBy
	fixed("notice_cancelled_unclear_cancel", rowsFree, noticeMessage(mayBeGone, berlin, false, now))
	fixed("notice_cancelled_reply_unclear_cancel", rowsFree, noticeReply(mayBeGone, berlin, now))
	// Gone from a full list before its end: cancelled, or moved beyond it.
	outOfView := notice(notices.Cancelled, list[2], nil)
	outOfView.Unsure = true
	fixed("notice_cancelled_or_moved_out", rowsFree, noticeMessage(outOfView, berlin, false, now))
	fixed("notice_cancelled_or_moved_out_reply", rowsFree, noticeReply(outOfView, berlin, now))
	// And an unclear cancel of bookbot's may have cancelled it.
	outOfView.Unclear = unclearBy
	fixed("notice_cancelled_or_moved_out_unclear_cancel", rowsFree, noticeMessage(outOfView, berlin, false, now))
	fixed("notice_cancelled_or_moved_out_reply_unclear_cancel", rowsFree, noticeReply(outOfView, berlin, now))
	// A rescheduled booking appearing where a full list ended: new, or
	// moved in from beyond.
	movedIn := notice(notices.New, list[4], nil)
	movedIn.Unsure = true
	fixed("notice_new_or_moved_in", rowsFree, noticeMessage(movedIn, berlin, false, now))
	// One bookbot booked beyond the list's end, moved into it since.
	bookedBefore := notice(notices.New, list[0], &notices.By{Actor: "U012ADA", At: now.Add(-26 * time.Hour)})
	bookedBefore.Unsure = true
	fixed("notice_new_booked_before_moved_in", rowsFree, noticeMessage(bookedBefore, berlin, false, now))
	fixed("notice_new_legacy", rowsFree, noticeMessage(notice(notices.New, list[4], nil), berlin, true, now))
	fixed("notice_moved", rowsFree, noticeMessage(movedN, berlin, false, now))
	fixed("notice_moved_reply", rowsFree, noticeReply(movedN, berlin, now))
	fixed("notice_cancelled", rowsFree, noticeMessage(notice(notices.Cancelled, list[3], nil), berlin, false, now))
	fixed("notice_cancelled_reply_in_slack", rowsFree, noticeReply(notice(notices.Cancelled, list[0], byAda), berlin, now))
	add("notice_burst", rowsFree, func(*testing.T) []goldenDoc {
		var ns []notices.Notice
		for i, bk := range full {
			kind := []notices.Kind{notices.Cancelled, notices.New, notices.Moved}[i%3]
			n := notice(kind, bk, nil)
			n.Was = bk
			n.Was.Start = bk.Start.Add(-time.Hour)
			n.Since = now.Add(-time.Minute)
			ns = append(ns, n)
		}
		return burstDocs(burstMessages(ns, berlin, false, now))
	})
	// A few changes, all today or tomorrow, two of them to legacy records;
	// with emails, which the thread's lines show and the summary's do not.
	add("notice_burst_near", rowsFree, func(t *testing.T) []goldenDoc {
		var ns []notices.Notice
		for i, bk := range list[:6] {
			kind := []notices.Kind{notices.New, notices.Cancelled, notices.Moved}[i%3]
			n := notice(kind, bk, nil)
			n.Was = bk
			n.Was.Start, n.Was.End = bk.Start.Add(-26*time.Hour), bk.End.Add(-26*time.Hour)
			n.Since = now.Add(-3 * time.Hour)
			ns = append(ns, n)
		}
		parts := burstMessages(ns, berlin, true, now)
		for _, p := range parts {
			if b, _ := json.Marshal(p.message); strings.Contains(string(b), "example.com") {
				t.Errorf("a burst's summary shows an email: %s", b)
			}
		}
		return burstDocs(parts)
	})

	return append(append(cases, goldenOfferCases()...), goldenRealisticCases()...)
}

// Rendering.

var goldenToken = regexp.MustCompile(`<!date\^\d+\^[^|<>]*\|([^<>]*)>`)

// goldenRender is the docs as text: a message's notification text, then
// its blocks, and a count of both.
func goldenRender(docs []goldenDoc) string {
	var w strings.Builder
	for i, d := range docs {
		if len(docs) > 1 {
			if i > 0 {
				w.WriteString("\n")
			}
			fmt.Fprintf(&w, "##### message %d of %d\n", i+1, len(docs))
		}
		var blocks []any
		switch d.kind {
		case "modal":
			v, _ := goldenJSON(d.view).(map[string]any)
			fmt.Fprintf(&w, "modal: %s\n", goldenText(v["title"]))
			if v["submit"] != nil {
				fmt.Fprintf(&w, "submit: %s\n", goldenText(v["submit"]))
			}
			if v["close"] != nil {
				fmt.Fprintf(&w, "close: %s\n", goldenText(v["close"]))
			}
			blocks, _ = v["blocks"].([]any)
		case "home":
			w.WriteString("home tab\n")
			blocks, _ = goldenJSON(d.blocks).([]any)
		default:
			fmt.Fprintf(&w, "text: %s\n", strings.ReplaceAll(goldenTokens(d.text), "\n", "\n      "))
			if d.meta != nil {
				fmt.Fprintf(&w, "metadata: %s\n", goldenMetaLine(d.meta))
			}
			blocks, _ = goldenJSON(d.blocks).([]any)
		}
		for _, b := range blocks {
			w.WriteString("\n")
			goldenBlock(&w, b.(map[string]any))
		}
		fmt.Fprintf(&w, "\n-- %d blocks, %d chars of text\n", len(blocks), goldenTextBytes(blocks))
	}
	return w.String()
}

// goldenMetaLine is message metadata on one line: its event type, then its
// payload's fields by name.
func goldenMetaLine(m *slack.SlackMetadata) string {
	keys := slices.Sorted(maps.Keys(m.EventPayload))
	fields := make([]string, len(keys))
	for i, k := range keys {
		fields[i] = fmt.Sprintf("%s=%v", k, m.EventPayload[k])
	}
	return m.EventType + " {" + strings.Join(fields, ", ") + "}"
}

func goldenJSON(v any) any {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		panic(err)
	}
	return out
}

func goldenTokens(s string) string { return goldenToken.ReplaceAllString(s, "⟨$1⟩") }

// goldenText is a text object's text, date tokens as their fallbacks.
func goldenText(v any) string {
	m, _ := v.(map[string]any)
	s, _ := m["text"].(string)
	return goldenTokens(s)
}

func goldenObjects(v any) []map[string]any {
	l, _ := v.([]any)
	out := make([]map[string]any, 0, len(l))
	for _, e := range l {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func goldenBlock(w *strings.Builder, b map[string]any) {
	switch b["type"] {
	case "header":
		fmt.Fprintf(w, "== %s ==\n", goldenText(b["text"]))
	case "section":
		if b["text"] != nil {
			w.WriteString(goldenText(b["text"]) + "\n")
		}
		for _, f := range goldenObjects(b["fields"]) {
			w.WriteString("  | " + goldenText(f) + "\n")
		}
		if acc, ok := b["accessory"].(map[string]any); ok {
			w.WriteString("    " + goldenElement(acc) + "\n")
		}
	case "context":
		var parts []string
		for _, e := range goldenObjects(b["elements"]) {
			parts = append(parts, "("+goldenText(e)+")")
		}
		w.WriteString(strings.Join(parts, " ") + "\n")
	case "actions":
		var parts []string
		for _, e := range goldenObjects(b["elements"]) {
			parts = append(parts, goldenElement(e))
		}
		w.WriteString(strings.Join(parts, " ") + "\n")
	case "input":
		el, _ := b["element"].(map[string]any)
		line := fmt.Sprintf("%s: <%s>", goldenText(b["label"]), el["type"])
		if init := goldenInitial(el); init != "" {
			line += " (" + goldenControls.Replace(init) + ")"
		}
		if opt, _ := b["optional"].(bool); opt {
			line += " optional"
		}
		w.WriteString(line + "\n")
		if b["hint"] != nil {
			w.WriteString("    hint: " + goldenText(b["hint"]) + "\n")
		}
		if strings.HasSuffix(fmt.Sprint(el["type"]), "_select") {
			w.WriteString("    " + goldenElement(el) + "\n")
		}
	case "divider":
		w.WriteString("---\n")
	default:
		fmt.Fprintf(w, "<%v block>\n", b["type"])
	}
}

// goldenControls shows the control characters of an input's value, which
// is shown as typed, not as mrkdwn.
var goldenControls = strings.NewReplacer("\n", `\n`, "\t", `\t`, "\r", `\r`)

func goldenInitial(el map[string]any) string {
	if s, ok := el["initial_value"].(string); ok {
		return s
	}
	if o, ok := el["initial_option"].(map[string]any); ok {
		return goldenText(o["text"])
	}
	return ""
}

func goldenElement(e map[string]any) string {
	switch t := fmt.Sprint(e["type"]); {
	case t == "button":
		s := "[" + goldenText(e["text"])
		switch e["style"] {
		case "danger":
			s += "!"
		case "primary":
			s += "*"
		}
		s += "]"
		if c, ok := e["confirm"].(map[string]any); ok {
			s += " (confirm: " + goldenText(c["title"]) + ")"
		}
		return s
	case t == "overflow":
		return "[⋯ " + strings.Join(goldenOptions(e, len(goldenObjects(e["options"]))), " | ") + "]"
	case strings.HasSuffix(t, "_select"):
		opts := goldenOptions(e, 5)
		if len(opts) == 0 {
			opts = []string{"(" + strings.TrimSuffix(t, "_select") + ")"}
		}
		return "[select " + goldenText(e["placeholder"]) + ": " + strings.Join(opts, " | ") + "]"
	default:
		return "<" + t + ">"
	}
}

// goldenOptions is the first n option texts, and how many more there are.
func goldenOptions(e map[string]any, n int) []string {
	opts := goldenObjects(e["options"])
	var out []string
	for i, o := range opts {
		if i == n {
			out = append(out, fmt.Sprintf("… (+%d)", len(opts)-n))
			break
		}
		out = append(out, goldenText(o["text"]))
	}
	return out
}

// goldenTexts calls fn with every text object in v.
func goldenTexts(v any, fn func(obj map[string]any, text string)) {
	switch x := v.(type) {
	case map[string]any:
		if s, ok := x["text"].(string); ok && (x["type"] == "mrkdwn" || x["type"] == "plain_text") {
			fn(x, s)
		}
		for _, k := range []string{"text", "title", "submit", "close", "label", "hint", "placeholder", "fields", "elements", "element", "accessory", "options", "initial_option", "confirm", "deny", "option_groups", "description", "blocks"} {
			if x[k] != nil {
				goldenTexts(x[k], fn)
			}
		}
	case []any:
		for _, e := range x {
			goldenTexts(e, fn)
		}
	}
}

func goldenTextBytes(blocks []any) int {
	n := 0
	goldenTexts(blocks, func(_ map[string]any, s string) { n += len(s) })
	return n
}

// Invariants.

var (
	goldenRawMention = regexp.MustCompile(`<!(channel|here|everyone)[|>]`)
	// goldenMarkup is the markup bookbot writes itself: date tokens, user
	// mentions and links. Any other < or > in mrkdwn is data left unescaped.
	goldenTwice  = regexp.MustCompile(`&amp;(amp|lt|gt);`)
	goldenMarkup = regexp.MustCompile(`<!date\^\d+\^[^|<>]*\|[^<>]*>|<@[A-Z0-9]+>|<https?://[^|<>\s]+\|[^<>]*>`)
	// goldenClock is a time of day as bookbot writes it; with seconds it is
	// a raw value (2026-03-24T08:00:00Z), not a time said to a person.
	goldenClock = regexp.MustCompile(`\d{1,2}:\d{2}(:\d{2})?`)
	// goldenIDSpan is a booking ID as a code span: every booking of the
	// cases has an ID that begins bk_.
	goldenIDSpan = regexp.MustCompile("`bk_[^`]*`")
	// goldenOnDay is "on" before a day Slack's token writes as "Today" or
	// "Tomorrow": "Consultation on Tomorrow 09:00".
	goldenOnDay = regexp.MustCompile(`\bon (<!date\^\d+\^\{date_short_pretty\}|Today\b|Tomorrow\b)`)
	// goldenOwnDay is a day in bookbot's own words, "Thu 26 Mar", and
	// goldenSlackDay a token Slack writes a day in, "Mar 26, 2026": a
	// message says days one way.
	goldenOwnDay   = regexp.MustCompile(`\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\b`)
	goldenSlackDay = regexp.MustCompile(`<!date\^\d+\^[^|]*\{date`)
	// goldenBookingID is a booking ID as the cases have them: bk_…, or a
	// UUID as the booking service gives them.
	goldenBookingID = regexp.MustCompile("bk_[A-Za-z0-9_*`ˋ]+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
	// goldenHole is where a sentence lost a value it was built with: a
	// mention of nobody, two spaces between words, a space before a comma
	// or a full stop ("with  today", "Ask <@>.", "with , today"). Two
	// spaces after a time are a list row's layout.
	goldenHole = regexp.MustCompile(`<@>|[\p{L}\p{N}]  +[\p{L}\p{N}]| [,.;]`)
)

// goldenNoIDs reports whether the case is one people read where a booking
// ID has no place, in its text or its notification: they know a booking by
// its event, attendee and time, and machines read the ID in the metadata.
// A confirmation of `cancel <id>` for a booking the list does not show is
// named by the ID the person typed, and nothing else.
func goldenNoIDs(name string) bool {
	if name == "cancel_confirm_not_found" || name == "cancel_confirm_list_full" {
		return false
	}
	for _, p := range []string{"list", "today", "agenda", "home_", "notice_", "reminder", "create_", "cancel_", "cancelling", "offer_", "kept", "outcome_view", "pending", "realistic_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// goldenQuietIDs reports whether the case's lines name bookings where an
// ID must be the quietest thing on a line: notices, reminders, agendas,
// today and App Home.
func goldenQuietIDs(name string) bool {
	for _, p := range []string{"notice_", "reminder", "remind_", "agenda", "today", "home_", "list", "create_", "cancel_", "offer_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// goldenMetaEvent is the metadata event type the case's messages carry, as
// the contract has it, with the booking's ID: "" where none is promised.
func goldenMetaEvent(name string) string {
	name = strings.TrimPrefix(name, "realistic_")
	for _, e := range []struct{ prefix, event string }{
		{"notice_new", eventBookingNew}, {"notice_cancelled", eventBookingCancelled}, {"notice_moved", eventBookingMoved},
		{"reminder", eventReminder}, {"offer_card_booked", eventOfferBooked},
	} {
		if strings.HasPrefix(name, e.prefix) {
			return e.event
		}
	}
	return ""
}

// goldenRowCap is the most bookings the case's i-th doc may show a line
// of, 0 for no cap: today and the agenda show the day's first, and the
// digest's message in the channel its first, on a phone without scrolling
// far; the rest are a press away, or in the thread.
func goldenRowCap(name string, i int) int {
	switch {
	case strings.HasPrefix(name, "today"), strings.HasPrefix(name, "agenda"), strings.HasPrefix(name, "realistic_today"), strings.HasPrefix(name, "realistic_agenda"):
		return dayRows
	case (strings.HasPrefix(name, "digest") || strings.HasPrefix(name, "realistic_digest")) && i == 0:
		return digestRows
	}
	return 0
}

// goldenRowCount is how many bookings blocks show a line of: the lines of
// sections that start with a time.
func goldenRowCount(blocks []any) int {
	n := 0
	for _, b := range goldenObjects(blocks) {
		if b["type"] != "section" {
			continue
		}
		raw, _ := b["text"].(map[string]any)
		text, _ := raw["text"].(string)
		for line := range strings.SplitSeq(text, "\n") {
			if strings.HasPrefix(line, "<!date^") || strings.HasPrefix(line, "*<!date^") || strings.HasPrefix(line, "~<!date^") {
				n++
			}
		}
	}
	return n
}

// goldenMustAct reports whether the case is an outcome a person must act
// on: a refusal, an error, an empty result. Each needs a next step.
func goldenMustAct(name string) bool {
	for _, p := range []string{"error", "refusal_contact", "list_empty", "slots_none", "types_none", "today_empty", "agenda_empty",
		"home_empty", "home_error", "home_desk_bookings_error", "cancel_", "create_", "help_problem", "help_unknown_command", "remind_list_error",
		"offer_refused_not_named", "offer_refused_booked", "offer_refused_withdrawn", "offer_refused_expired", "offer_card_withdrawn", "offer_card_expired", "offer_unclear",
		"offer_not_booked", "offer_guest_cancel_", "offer_not_yours", "offer_outcome_not_booked"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// goldenPlain reports whether the case tells a plain answer of the booking
// service: a refusal it gave in so many words, or a booking or cancel it
// confirmed that only the list could not check. None of them may read as
// an unclear answer, an outage or a problem of access.
func goldenPlain(name string) bool {
	return slices.Contains([]string{
		"create_not_booked_email_check", "create_not_booked_full", "create_not_booked_time_not_free",
		"create_refused_blocked", "create_refused_unanswered", "create_rate_limited_event", "create_rate_limited_minute",
		"create_confirmed_beyond_list", "cancel_cancelled_beyond_list", "review_confirmed_beyond_list", "audit_plain_answers",
		"create_confirmed_list_unread", "cancel_cancelled_list_unread", "review_confirmed_list_unread",
		"offer_not_booked_email_check", "offer_not_booked_full", "offer_not_booked_blocked", "offer_not_booked_unanswered",
		"offer_not_booked_event_limit",
	}, name)
}

// goldenUnplain are words that call an answer unclear, an outage or a
// refusal of access, or promise that minutes will help.
var goldenUnplain = []string{"unclear", "clear answer", "answer clearly", "access", "try again in a few minutes", "not answering", " down"}

// goldenNextStep reports whether blocks offer a next step: a control, or a
// person to ask.
func goldenNextStep(blocks []any) bool {
	raw, _ := json.Marshal(blocks)
	s := string(raw)
	for _, t := range []string{`"type":"button"`, `"type":"overflow"`, `_select"`} {
		if strings.Contains(s, t) {
			return true
		}
	}
	asks := false
	goldenTexts(blocks, func(_ map[string]any, text string) { asks = asks || strings.Contains(text, "<@") })
	return asks
}

// goldenClocks are the times of day text s shows as plain text, and those
// its date tokens show (as their fallbacks have them).
func goldenClocks(s string) (plain, tokens []string) {
	for _, m := range goldenToken.FindAllStringSubmatch(s, -1) {
		tokens = append(tokens, goldenClockValues(m[1])...)
	}
	return goldenClockValues(goldenToken.ReplaceAllString(s, "")), tokens
}

func goldenClockValues(s string) []string {
	var out []string
	for _, m := range goldenClock.FindAllStringSubmatch(s, -1) {
		if m[1] == "" {
			out = append(out, m[0])
		}
	}
	return out
}

// goldenCheck holds every doc to Slack's limits, as the stand-in checks
// them on every test's messages and views, and to what slacktest cannot
// know: bookbot's own rules for text and rows, and the escaping of data.
// App Home's budget: what fits a screenful or two on a phone.
const (
	goldenHomeBlocks = 40
	goldenHomeText   = 15000
	// A burst's summary: a headline and a day or two of lines; the list
	// is in its thread.
	goldenBurstBlocks = 6
	goldenBurstText   = 3000
)

// goldenPrimaries counts the primary buttons in v: Slack's guidance is one
// per message, the step most people take.
func goldenPrimaries(v any) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		if x["type"] == "button" && x["style"] == "primary" {
			n++
		}
		for _, e := range x {
			n += goldenPrimaries(e)
		}
	case []any:
		for _, e := range x {
			n += goldenPrimaries(e)
		}
	}
	return n
}

// goldenReporter is where goldenCheck reports: the test, or a recorder
// when the check itself is tested.
type goldenReporter interface {
	Helper()
	Error(args ...any)
}

func goldenCheck(t goldenReporter, c goldenCase, docs []goldenDoc) {
	t.Helper()
	for i, d := range docs {
		where := d.kind
		if len(docs) > 1 {
			where = fmt.Sprintf("message %d of %d", i+1, len(docs))
		}
		fail := func(format string, args ...any) {
			t.Helper()
			t.Error(where + ": " + fmt.Sprintf(format, args...))
		}
		var blocks []any
		var breaches []string
		switch d.kind {
		case "modal":
			v, _ := goldenJSON(d.view).(map[string]any)
			blocks, _ = v["blocks"].([]any)
			breaches = slacktest.ValidateView(v, "modal")
		case "home":
			blocks, _ = goldenJSON(d.blocks).([]any)
			breaches = slacktest.ValidateView(map[string]any{"type": "home", "blocks": blocks}, "home")
			// App Home is read in one screenful or two: the list is for
			// the rest.
			if n, size := len(blocks), goldenTextBytes(blocks); n > goldenHomeBlocks || size > goldenHomeText {
				fail("App Home takes %d blocks and %d characters; at most %d and %d", n, size, goldenHomeBlocks, goldenHomeText)
			}
			// What to do comes first, not a screenful down.
			if raw, _ := json.Marshal(blocks[:min(3, len(blocks))]); !strings.Contains(string(raw), `"type":"button"`) {
				fail("App Home's first three blocks hold no button")
			}
		default:
			blocks, _ = goldenJSON(d.blocks).([]any)
			breaches = slacktest.ValidateMessage(d.text, blocks)
			// Slack takes blocks alone, but a notification then says nothing.
			if d.text == "" {
				fail("no notification text")
			}
			if m := goldenRawMention.FindString(d.text); m != "" {
				fail("notification text holds %s unescaped: %q", m, goldenClip(d.text))
			}
			if m := goldenHole.FindString(d.text); m != "" {
				fail("notification text has a hole where a value is missing, %q: %q", m, goldenClip(d.text))
			}
			if m := goldenBookingID.FindString(d.text); m != "" && goldenNoIDs(c.name) {
				fail("notification text shows booking ID %s: %q", m, goldenClip(d.text))
			}
			// Machines read the booking in the metadata.
			if want := goldenMetaEvent(c.name); want != "" {
				if d.meta == nil || d.meta.EventType != want {
					fail("metadata %v, want event type %s", d.meta, want)
				} else if id, _ := d.meta.EventPayload["booking_id"].(string); id == "" {
					fail("metadata %s carries no booking_id", goldenMetaLine(d.meta))
				}
			}
			if d.meta != nil && (d.meta.EventType == "" || len(d.meta.EventPayload) == 0) {
				fail("metadata without an event type or a payload: Slack refuses it")
			}
		}
		for _, b := range breaches {
			fail("Slack would refuse it: %s", goldenClip(b))
		}
		if len(blocks) == 0 {
			fail("no blocks")
		}
		if d.summary {
			if n, size := len(blocks), goldenTextBytes(blocks); n > goldenBurstBlocks || size > goldenBurstText {
				fail("a burst's summary takes %d blocks and %d characters; at most %d and %d", n, size, goldenBurstBlocks, goldenBurstText)
			}
		}
		if limit := goldenRowCap(c.name, i); limit > 0 {
			if n := goldenRowCount(blocks); n > limit {
				fail("shows %d bookings; at most %d, and how many more", n, limit)
			}
		}
		if n := goldenPrimaries(blocks); n > 1 {
			fail("%d primary buttons; at most one, the step most people take", n)
		}
		if goldenMustAct(c.name) && d.kind != "modal" && !goldenNextStep(blocks) {
			fail("an outcome a person must act on ends without a next step: no button, menu or person to ask")
		}

		if goldenPlain(c.name) {
			all := strings.ToLower(d.text)
			goldenTexts(blocks, func(_ map[string]any, s string) { all += "\n" + strings.ToLower(s) })
			for _, w := range goldenUnplain {
				if i := strings.Index(all, w); i >= 0 {
					fail("a plain answer says %q, as if it were unclear, an outage or a problem of access: %q", w, goldenClip(all[max(i-60, 0):]))
				}
			}
		}

		if m := goldenOnDay.FindString(d.text); m != "" {
			fail("notification text says %q: Slack writes the day as Today or Tomorrow", m)
		}
		total := 0
		var ownDay, slackDay string
		goldenTexts(blocks, func(obj map[string]any, s string) {
			total += utf8.RuneCountInString(s)
			if m := goldenOnDay.FindString(s); m != "" {
				fail("says %q: Slack writes the day as Today or Tomorrow, so it reads \"on Tomorrow\": %q", goldenTokens(m), goldenClip(goldenTokens(s)))
			}
			if m := goldenOwnDay.FindString(goldenToken.ReplaceAllString(s, "")); m != "" && ownDay == "" {
				ownDay = m
			}
			if m := goldenSlackDay.FindString(s); m != "" && slackDay == "" {
				slackDay = goldenClip(goldenTokens(s))
			}
			// A time is said once, as a date token: beside it, the same
			// time as text reads as another time to whoever sees the
			// token as 2:00 PM.
			if plain, tokens := goldenClocks(s); len(tokens) > 0 {
				for _, clock := range plain {
					if slices.Contains(tokens, clock) {
						fail("shows %s both as a date token and as plain text: %q", clock, goldenClip(goldenTokens(s)))
						break
					}
				}
			}
			if m := goldenHole.FindString(s); m != "" {
				fail("has a hole where a value is missing, %q: %q", m, goldenClip(goldenTokens(s)))
			}
			if goldenQuietIDs(c.name) {
				if m := goldenIDSpan.FindString(s); m != "" {
					fail("a booking ID is a code span, not the quietest thing on its line: %s in %q", m, goldenClip(goldenTokens(s)))
				}
			}
			if m := goldenBookingID.FindString(s); m != "" && goldenNoIDs(c.name) {
				fail("shows booking ID %s where people read: %q", m, goldenClip(goldenTokens(s)))
			}
			// plain_text is never read for mentions or links: data goes
			// there as it is, and "&lt;" would show as such.
			if obj["type"] != "mrkdwn" {
				return
			}
			if v, _ := obj["verbatim"].(bool); !v {
				fail("mrkdwn text is not verbatim: %q", goldenClip(s))
			}
			if m := goldenRawMention.FindString(s); m != "" {
				fail("mrkdwn text holds %s unescaped: %q", m, goldenClip(s))
			}
			if rest := goldenMarkup.ReplaceAllString(s, ""); strings.ContainsAny(rest, "<>") {
				fail("mrkdwn text holds a < or > that is no markup of bookbot's: %q", goldenClip(s))
			}
			// No case's data holds an entity, so one escaped again is an
			// escape applied twice.
			if goldenTwice.MatchString(s) {
				fail("mrkdwn text is escaped twice: %q", goldenClip(s))
			}
			// Every & is one bookbot escaped: a cut or clip must not split it.
			if strings.Count(s, "&") != strings.Count(s, "&amp;")+strings.Count(s, "&lt;")+strings.Count(s, "&gt;") {
				fail("mrkdwn text holds a broken entity or a bare &: %q", goldenClip(s))
			}
		})
		if ownDay != "" && slackDay != "" {
			fail("says days two ways: %q in bookbot's words, and in a date token Slack writes as \"Mar 26, 2026\" or \"Tomorrow\": %q", ownDay, slackDay)
		}
		if d.kind == "message" && total > 12000 {
			fail("%d characters of text in all, over 12,000", total)
		}

		for _, b := range goldenObjects(blocks) {
			if b["type"] == "section" {
				raw, _ := b["text"].(map[string]any)
				rawText, _ := raw["text"].(string)
				goldenRows(fail, c.rows, rawText, goldenText(b["text"]))
			}
		}
	}
}

// goldenRows holds a section's lines to the case's rule: a list row is
// one line whatever the name; each line of a day's bookings starts with
// its time.
func goldenRows(fail func(string, ...any), rule rowRule, raw, shown string) {
	switch rule {
	case rowsOne:
		if strings.Contains(raw, "\n") {
			fail("a list row spans lines: %q", goldenClip(shown))
		}
	case rowsDated:
		if !strings.Contains(raw, "<!date^") {
			return
		}
		for i, line := range strings.Split(raw, "\n") {
			heading := i == 0 && strings.HasPrefix(line, "*") && strings.HasSuffix(line, "*") && !strings.Contains(line, "<!date^")
			if !heading && !strings.HasPrefix(line, "<!date^") && !strings.HasPrefix(line, "*<!date^") {
				fail("line %d does not start with a time: %q", i+1, goldenClip(goldenTokens(line)))
			}
		}
	}
}

func goldenClip(s string) string {
	if utf8.RuneCountInString(s) <= 200 {
		return s
	}
	return string([]rune(s)[:200]) + "…"
}

// Golden files.

func goldenCompare(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".txt")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./bot -run TestGolden -update to write it)", err)
	}
	if string(want) == got {
		return
	}
	t.Errorf("%s differs from what is rendered now (- expected, + got):\n%s\nIf the change is intended, run go test ./bot -run TestGolden -update and review the diff.",
		path, goldenDiff(string(want), got))
}

// goldenDiff lists the lines that differ, a few of them, with their line
// numbers: enough to see what changed.
func goldenDiff(want, got string) string {
	a, b := strings.Split(want, "\n"), strings.Split(got, "\n")
	var out []string
	shown := 0
	for i := 0; i < max(len(a), len(b)); i++ {
		var x, y string
		okA, okB := i < len(a), i < len(b)
		if okA {
			x = a[i]
		}
		if okB {
			y = b[i]
		}
		if okA == okB && x == y {
			continue
		}
		if shown == 20 {
			out = append(out, "…")
			break
		}
		shown++
		if okA {
			out = append(out, fmt.Sprintf("%4d - %s", i+1, goldenClip(x)))
		}
		if okB {
			out = append(out, fmt.Sprintf("%4d + %s", i+1, goldenClip(y)))
		}
	}
	return strings.Join(out, "\n")
}

// goldenProblems records what goldenCheck reports.
type goldenProblems []string

func (*goldenProblems) Helper()             {}
func (p *goldenProblems) Error(args ...any) { *p = append(*p, fmt.Sprint(args...)) }

// The golden check fails a message with two primary buttons, a burst's
// summary over its budget, a time shown both as a token and as text, a
// plain answer of the booking service said as if it were unclear, an outage
// or a problem of access, a booking ID where people read it (text or
// notification), "on Today" or "on Tomorrow", days said two ways, an App
// Home whose first three blocks hold no button, today, an agenda or the
// digest's message in the channel over its cap, a notice without the
// contract's metadata, and a sentence with a hole where a value was
// missing (a mention of nobody, two spaces, a space before a comma).
func TestGoldenCheckCatches(t *testing.T) {
	t.Parallel()
	at := goldenAt(23, 14, 0)
	primary := button(actionNewBooking, "New booking", "").WithStyle(slack.StylePrimary)
	var long []slack.Block
	for range 7 {
		long = append(long, section("*Today*"))
	}
	var rows []string
	for i := range dayRows + 1 {
		rows = append(rows, hours(at.Add(time.Duration(i)*time.Minute), at.Add(time.Duration(i+30)*time.Minute), goldenBerlin)+"  Consultation · Ada Lovelace")
	}
	day := []slack.Block{section(strings.Join(rows, "\n")), slack.NewActionBlock("a", upcomingButton())}
	uuid := "a2972a0c-5697-4400-90ba-c80b6a7d56fc"
	for _, c := range []struct {
		name string
		kind string // the case's name; the default is a plain answer's
		doc  goldenDoc
		want string
	}{
		{"a booking ID in a row", "list_page", goldenDoc{kind: "message", text: "Upcoming bookings", blocks: []slack.Block{
			section("*" + hours(at, at.Add(30*time.Minute), goldenBerlin) + "* · Consultation · Ada Lovelace · ID " + uuid),
		}}, "shows booking ID " + uuid + " where people read"},
		{"a booking ID in a notification", "reminder", goldenDoc{kind: "message", text: "Reminder: Consultation at 14:00 (booking bk_1)", blocks: []slack.Block{
			section("Consultation"), slack.NewActionBlock("a", upcomingButton()),
		}, meta: bookingMeta(eventReminder, booking.Booking{ID: "bk_1"})}, "notification text shows booking ID bk_1"},
		{"on Tomorrow", "", goldenDoc{kind: "message", text: "x", blocks: []slack.Block{
			section("Consultation on " + moment(at, goldenBerlin) + " for Ada."), slack.NewActionBlock("a", upcomingButton()),
		}}, "Slack writes the day as Today or Tomorrow"},
		{"days two ways", "", goldenDoc{kind: "message", text: "x", blocks: []slack.Block{
			section("*Thu 26 Mar*"), section(span(at, at.Add(30*time.Minute), goldenBerlin)), slack.NewActionBlock("a", upcomingButton()),
		}}, "says days two ways"},
		{"App Home with what to do last", "home_normal", goldenDoc{kind: "home", blocks: []slack.Block{
			slack.NewHeaderBlock(plain("Upcoming bookings")), contextLine("5 bookings today and tomorrow."), section("Nothing booked today or tomorrow."),
			slack.NewActionBlock("home_actions", primary),
		}}, "App Home's first three blocks hold no button"},
		{"today over its cap", "today", goldenDoc{kind: "message", text: "x", blocks: day}, fmt.Sprintf("shows %d bookings; at most %d", dayRows+1, dayRows)},
		{"an agenda over its cap", "agenda", goldenDoc{kind: "message", text: "Agenda", blocks: day}, fmt.Sprintf("shows %d bookings; at most %d", dayRows+1, dayRows)},
		{"the digest's message over its cap", "digest_day", goldenDoc{kind: "message", text: "Digest", blocks: day}, fmt.Sprintf("shows %d bookings; at most %d", dayRows+1, digestRows)},
		{"a notice without its metadata", "notice_new_in_slack", goldenDoc{kind: "message", text: "New booking: Consultation", blocks: []slack.Block{
			section("New booking"),
		}}, "want event type bookbot_booking_new"},
		{"two primary buttons", "", goldenDoc{kind: "message", text: "x", blocks: []slack.Block{
			section("Booked."), slack.NewActionBlock("a", primary, button(actionShowList, "Upcoming bookings", "").WithStyle(slack.StylePrimary)),
		}}, "2 primary buttons"},
		{"a burst's summary over budget", "", goldenDoc{kind: "message", text: "x", blocks: long, summary: true}, "a burst's summary takes 7 blocks"},
		{"a time twice", "", goldenDoc{kind: "message", text: "x", blocks: []slack.Block{
			section(span(at, at.Add(30*time.Minute), goldenBerlin) + " · 14:00"),
		}}, "shows 14:00 both as a date token and as plain text"},
		// A full service's refusal said as the old words said it.
		{"a plain answer called unclear", "", goldenDoc{kind: "message", text: "Probably not booked", blocks: []slack.Block{
			section(":warning: *Probably not booked.* The booking API did not answer clearly."),
			slack.NewActionBlock("a", button(actionShowList, "Upcoming bookings", "")),
		}}, `a plain answer says "answer clearly"`},
		{"a plain answer called an outage", "", goldenDoc{kind: "message", text: "Not booked", blocks: []slack.Block{
			section("Nothing was booked. Try again in a few minutes."),
		}}, `a plain answer says "try again in a few minutes"`},
		{"a block called a refusal of access", "", goldenDoc{kind: "message", text: "The booking service refused access.", blocks: []slack.Block{
			section("Refused."),
		}}, `a plain answer says "access"`},
		// An offer nobody made, told as if someone had.
		{"a mention of nobody", "", goldenDoc{kind: "message", text: "Cancelled.", blocks: []slack.Block{
			section("Cancelled. " + mention("") + " has been told."),
		}}, `has a hole where a value is missing, "<@>"`},
		{"a name missing from the notification", "", goldenDoc{kind: "message", text: "Cancelled: Intro call with  today at 06:15.", blocks: []slack.Block{
			section("Cancelled."),
		}}, "notification text has a hole where a value is missing"},
		{"a name missing before a comma", "", goldenDoc{kind: "message", text: "Cancelled", blocks: []slack.Block{
			section("*Cancelled:* Intro call with , today."),
		}}, `has a hole where a value is missing, " ,"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got goldenProblems
			goldenCheck(&got, goldenCase{name: cmp.Or(c.kind, "create_not_booked_full")}, []goldenDoc{c.doc})
			if !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, c.want) }) {
				t.Errorf("problems %q, want one saying %q", got, c.want)
			}
		})
	}
}

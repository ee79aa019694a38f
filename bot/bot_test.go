package bot_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/digest"
)

// ephemeralAck is a slash command's ack payload.
type ephemeralAck struct {
	ResponseType string          `json:"response_type"`
	Text         string          `json:"text"`
	Blocks       json.RawMessage `json:"blocks"`
}

func parseEphemeral(t *testing.T, ack slacktest.Ack) ephemeralAck {
	t.Helper()
	var e ephemeralAck
	if len(ack.Payload) == 0 {
		t.Fatalf("ack for %s has no payload", ack.EnvelopeID)
	}
	if err := json.Unmarshal(ack.Payload, &e); err != nil {
		t.Fatalf("ack payload %s: %v", ack.Payload, err)
	}
	return e
}

func values(els []map[string]any) []string {
	var out []string
	for _, el := range els {
		out = append(out, str(el, "value"))
	}
	return out
}

// slotRaw is a slot's start as GET /slots writes it.
func slotRaw(s bookingtest.Slot) string { return s.Start.UTC().Format(time.RFC3339) }

// upcoming is what GET /bookings lists at t0, in order (at most 100).
func upcoming(h *harness) []bookingtest.Booking {
	var out []bookingtest.Booking
	for _, b := range h.sb.Bookings(bookingtest.DemoOwner) {
		if !b.Cancelled && b.End.After(t0) && len(out) < 100 {
			out = append(out, b)
		}
	}
	return out
}

func titles(h *harness) map[string]string {
	m := map[string]string{}
	for _, et := range h.sb.EventTypes(bookingtest.DemoOwner) {
		m[et.Slug] = et.Title
	}
	return m
}

func ptr(s string) *string { return &s }

// 1. Help, unknown subcommands and bad arguments are answered in the ack,
// with the help, and cost no booking API request.
func TestHelpAndBadArgumentsAnsweredInAck(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, tc := range []struct{ text, want string }{
		{"", ""},
		{"help", ""},
		{"HELP", ""},
		{"frobnicate now", "I don't know `frobnicate now`"},
		{"slots", "Say which event type"},
		{"slots a b", "Say which event type"},
		{"cancel", "Say which booking"},
		{"cancel a/b", "That is not a booking ID"},
		{"cancel a b", "Say which booking"},
		{"list everything", "I don't know"},
		{"new a b", "I don't know"},
	} {
		ack := h.slash(ada, tc.text)
		e := parseEphemeral(t, ack)
		text := textOf(e.Blocks)
		if e.ResponseType != "ephemeral" {
			t.Errorf("%q: response_type %q, want ephemeral", tc.text, e.ResponseType)
		}
		if !strings.Contains(text, "`/booking types` – event types") || !strings.Contains(text, "`/booking cancel <booking-id>`") {
			t.Errorf("%q: ack has no help:\n%s", tc.text, text)
		}
		for _, id := range []string{"new_booking", "list_page", "show_types"} {
			if len(elements(e.Blocks, id)) != 1 {
				t.Errorf("%q: help has no %s button", tc.text, id)
			}
		}
		if tc.want != "" && !strings.Contains(text, tc.want) {
			t.Errorf("%q: ack does not explain %q:\n%s", tc.text, tc.want, text)
		}
		if tc.want == "" && strings.Contains(text, ":warning:") {
			t.Errorf("%q: help shows a problem:\n%s", tc.text, text)
		}
	}
	h.drain()
	if reqs := h.requests(""); len(reqs) != 0 {
		t.Errorf("help and bad arguments made %d booking API requests, want none: %+v", len(reqs), reqs)
	}
	for _, m := range h.sl.Messages() {
		if m.Kind != "ack" {
			t.Errorf("unexpected %s message: %s", m.Kind, m.Text)
		}
	}
}

// 2. People not on the allow-list are refused politely and cost no booking
// API request; payloads from another workspace are ignored.
func TestAllowListAndOtherTeamRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)

	e := parseEphemeral(t, h.slash(eve, "list"))
	if text := textOf(e.Blocks); !strings.Contains(text, "Sorry, bookbot is only open to") || !strings.Contains(text, eve) || !strings.Contains(text, "Ask <@"+ada+"> to add it") {
		t.Errorf("refusal for /booking list:\n%s", text)
	}

	// Ada's list, with cancel buttons; Eve presses one.
	h.slash(ada, "list")
	list := h.reply(ada, "5eed0000-0000-4000-8000-000000000001")
	h.drain()
	h.sb.ResetRequests()

	h.interact(slacktest.BlockAction(eve, "cancel_booking", "5eed0000-0000-4000-8000-000000000001", slacktest.InMessage(list)))
	h.reply(eve, "Sorry, bookbot is only open to")

	if _, err := h.sl.OpenAppHome(h.ctx(), eve); err != nil {
		t.Fatal(err)
	}
	home := h.waitView("Eve's home", func(v slacktest.View) bool { return v.Type == "home" && v.TriggerUser == eve })
	if text := textOf(home.Blocks); !strings.Contains(text, "only open to") || strings.Contains(text, "5eed0000-") {
		t.Errorf("Eve's home:\n%s", text)
	}
	// The shortcut has no response_url: Eve's refusal comes as a DM and no
	// modal opens.
	h.interact(slack.InteractionCallback{Type: slack.InteractionTypeShortcut, CallbackID: "book_meeting", User: slack.User{ID: eve}})
	h.dm(eve, "Sorry, bookbot is only open to")
	// A submission of a modal Eve somehow has is cleared, suggestions are empty.
	h.drain()
	for _, v := range h.sl.Views() {
		if v.Type == "modal" {
			t.Errorf("a modal opened for Eve: %s", v.ID)
		}
	}
	if reqs := h.requests(""); len(reqs) != 0 {
		t.Errorf("refused people caused %d booking API requests: %+v", len(reqs), reqs)
	}
	for _, b := range h.sb.Bookings(bookingtest.DemoOwner) {
		if b.ID == "5eed0000-0000-4000-8000-000000000001" && b.Cancelled {
			t.Error("Eve's press cancelled 5eed0000-0000-4000-8000-000000000001")
		}
	}

	// Another workspace: nothing at all happens.
	messages, calls := len(h.sl.Messages()), len(h.sl.Calls())
	ack, err := h.sl.SendSlashCommand(h.ctx(), slacktest.SlashCommand{Command: "/booking", Text: "list", UserID: ada, TeamID: "TOTHER"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ack.Payload) != 0 {
		t.Errorf("other team's slash command acked with %s", ack.Payload)
	}
	press := slacktest.BlockAction(ada, "cancel_booking", "5eed0000-0000-4000-8000-000000000001", slacktest.InMessage(list))
	press.Team.ID = "TOTHER"
	h.interact(press)
	if _, err := h.sl.SendEvent(h.ctx(), map[string]any{
		"type": "event_callback", "team_id": "TOTHER",
		"event": map[string]any{"type": "app_home_opened", "user": ada, "tab": "home"},
	}); err != nil {
		t.Fatal(err)
	}
	h.drain()
	if reqs := h.requests(""); len(reqs) != 0 {
		t.Errorf("another team's payloads caused %d booking API requests", len(reqs))
	}
	if got := h.sl.Messages()[messages:]; len(got) != 0 {
		t.Errorf("another team's payloads were answered: %+v", got)
	}
	for _, c := range h.sl.Calls()[calls:] {
		if c.Method != "apps.connections.open" {
			t.Errorf("another team's payloads caused %s", c.Method)
		}
	}
	if !strings.Contains(h.logs.String(), "another workspace") {
		t.Error("the other team's payloads were not logged")
	}
}

// 3. `types` lists every event type; solo ones can be booked from there.
func TestTypesList(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.slash(ada, "types")
	m := h.reply(ada, "Event types")
	text := textOf(m.Blocks)
	for _, title := range []string{"Intro call", "Consultation", "Deep dive", "Team sync", "Board review", "Office hours"} {
		if !strings.Contains(text, "*"+title+"*") {
			t.Errorf("types reply lacks %q:\n%s", title, text)
		}
	}
	if strings.Contains(text, "Legacy demo") {
		t.Error("a removed event type is listed")
	}
	// office-hours needs email verification, which the API does not show.
	solo := []string{"intro-call", "consultation", "deep-dive", "office-hours"}
	if got := values(elements(m.Blocks, "show_slots")); !slices.Equal(got, solo) {
		t.Errorf("Free slots buttons for %v, want %v", got, solo)
	}
	if got := values(elements(m.Blocks, "new_booking")); !slices.Equal(got, solo) {
		t.Errorf("Book buttons for %v, want %v", got, solo)
	}
	blocks, _ := decodeJSON(m.Blocks).([]any)
	for _, title := range []string{"Team sync", "Board review"} {
		found := false
		for _, b := range blocks {
			bm, _ := b.(map[string]any)
			if s := sectionText(bm); strings.Contains(s, "*"+title+"*") {
				found = true
				if !strings.Contains(s, "public booking page") {
					t.Errorf("%s does not point to the public booking page: %q", title, s)
				}
			}
		}
		if !found {
			t.Errorf("no section for %s", title)
		}
	}

	// Free slots of one type, from its button.
	h.interact(slacktest.BlockAction(ada, "show_slots", "consultation", slacktest.InMessage(m), slacktest.WithBlockID("type_consultation")))
	h.reply(ada, "Free slots: Consultation (30 min)")

	// Book, from the same list: the modal opens with the type chosen.
	h.interact(slacktest.BlockAction(ada, "new_booking", "deep-dive", slacktest.InMessage(m), slacktest.WithBlockID("type_deep-dive")))
	v := h.waitView("for deep-dive", func(v slacktest.View) bool {
		return v.TriggerUser == ada && len(elements(v.Blocks, "slot")) == 1
	})
	if init, _ := elements(v.Blocks, "event_type")[0]["initial_option"].(map[string]any); str(init, "value") != "deep-dive" {
		t.Errorf("event type chosen: %v", init)
	}
}

// 4. Slots are grouped by day in the requester's zone, each day bookable.
func TestSlotsGroupedByDayInRequesterZone(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	want := map[string]bool{}
	for _, s := range h.sb.Slots(bookingtest.DemoOwner, "intro-call") {
		want[slotRaw(s)] = true
	}
	if !want[firstSlot] {
		t.Fatalf("the sandbox does not offer %s", firstSlot)
	}
	var adaMsg slacktest.Message
	days := map[string]int{}
	for _, u := range []struct {
		user        string
		loc         *time.Location
		zone, first string
	}{
		{ada, berlin, "Europe/Berlin (CET)", "11:15–11:30"},
		{bob, newYork, "America/New_York (EDT)", "06:15–06:30"},
		{kiw, auckland, "Pacific/Auckland (NZDT)", "23:15–23:30"},
	} {
		h.slash(u.user, "slots intro-call")
		m := h.reply(u.user, "Free slots: Intro call")
		if u.user == ada {
			adaMsg = m
		}
		if n := blockCount(m.Blocks); n > 50 {
			t.Errorf("%s: %d blocks", u.user, n)
		}
		if text := textOf(m.Blocks); !strings.Contains(text, "Times in "+u.zone) {
			t.Errorf("%s: zone not named:\n%s", u.user, text)
		}
		secs := sectionsWith(m.Blocks, "book_slot")
		days[u.user] = len(secs)
		if len(secs) < 10 {
			t.Fatalf("%s: %d days, want the 10 working days of the next 14", u.user, len(secs))
		}
		seen := map[string]bool{}
		var labels []string
		for i, sec := range secs {
			lines := strings.Split(sectionText(sec), "\n")
			label := strings.Trim(lines[0], "*")
			labels = append(labels, label)
			acc, _ := sec["accessory"].(map[string]any)
			opts := options(acc)
			var times []string
			for j, o := range opts {
				ev, raw, _ := strings.Cut(o.value, " ")
				start, err := time.Parse(time.RFC3339Nano, raw)
				if ev != "intro-call" || err != nil {
					t.Errorf("%s: option value %q", u.user, o.value)
					continue
				}
				if got := start.In(u.loc).Format("Mon 2 Jan"); got != label {
					t.Errorf("%s: slot %s (%s there) listed under %q", u.user, raw, got, label)
				}
				wantText := start.In(u.loc).Format("15:04") + "–" + start.Add(15*time.Minute).In(u.loc).Format("15:04")
				if o.text != wantText {
					t.Errorf("%s: option %s reads %q, want %q", u.user, raw, o.text, wantText)
				}
				if i == 0 && j == 0 && (raw != firstSlot || o.text != u.first) {
					t.Errorf("%s: first option %q %q, want %s %q", u.user, raw, o.text, firstSlot, u.first)
				}
				if seen[raw] {
					t.Errorf("%s: slot %s offered twice", u.user, raw)
				}
				seen[raw] = true
				times = append(times, start.In(u.loc).Format("15:04"))
			}
			if len(lines) < 2 || lines[1] != strings.Join(times, " · ") {
				t.Errorf("%s: day %q lists %q, its select offers %q", u.user, label, lines[1:], times)
			}
		}
		if len(seen) != len(want) {
			t.Errorf("%s: %d slots offered, the API has %d", u.user, len(seen), len(want))
		}
		for raw := range want {
			if !seen[raw] {
				t.Errorf("%s: slot %s missing", u.user, raw)
			}
		}
		if len(slices.Compact(slices.Clone(labels))) != len(labels) {
			t.Errorf("%s: a day appears twice: %q", u.user, labels)
		}
	}

	if days[kiw] <= days[ada] || days[bob] != days[ada] {
		t.Errorf("days per reader %v: the owner's working day spans two days in Auckland", days)
	}

	// Picking a slot opens the modal with it chosen.
	h.interact(slacktest.BlockAction(ada, "book_slot", "intro-call "+firstSlot, slacktest.InMessage(adaMsg)))
	v := h.waitView("with the picked slot", func(v slacktest.View) bool {
		els := elements(v.Blocks, "slot")
		if v.TriggerUser != ada || len(els) != 1 {
			return false
		}
		init, _ := els[0]["initial_option"].(map[string]any)
		return str(init, "value") == firstSlot
	})
	if init, _ := elements(v.Blocks, "event_type")[0]["initial_option"].(map[string]any); str(init, "value") != "intro-call" {
		t.Errorf("event type preselected: %v", init)
	}

	h.slash(ada, "slots team-sync")
	h.reply(ada, "book it through the public booking page")
	h.slash(ada, "slots nope")
	h.reply(ada, `There is no event type "nope"`)
	h.drain()
	for _, r := range h.requests(bookingtest.EndpointSlots) {
		if q := r.Form.Get("event_type"); q != "intro-call" {
			t.Errorf("GET /slots for %q; only bookable, known types should be asked for", q)
		}
	}
}

// 5. The list shows every upcoming booking, in the reader's zone, each with
// a Cancel button that warns before it acts.
func TestListShowsEveryUpcomingBooking(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	want := upcoming(h)
	if len(want) != 12 {
		t.Fatalf("sandbox has %d upcoming bookings, want the 12 seeded", len(want))
	}
	title := titles(h)
	for _, u := range []struct {
		user string
		loc  *time.Location
	}{{ada, berlin}, {bob, newYork}} {
		h.slash(u.user, "list")
		m := h.reply(u.user, "Upcoming bookings (12)")
		secs := sectionsWith(m.Blocks, "cancel_booking")
		if len(secs) != len(want) {
			t.Fatalf("%s: %d bookings listed, want %d", u.user, len(secs), len(want))
		}
		for i, b := range want {
			text := sectionText(secs[i])
			acc, _ := secs[i]["accessory"].(map[string]any)
			if str(acc, "value") != b.ID {
				t.Errorf("%s: row %d cancels %q, want %s", u.user, i, str(acc, "value"), b.ID)
			}
			// Berlin moves to CEST on the 29th: each time names its own offset.
			when := b.Start.In(u.loc).Format("Mon 2 Jan, 15:04") + "–" + b.End.In(u.loc).Format("15:04 MST")
			wantParts := []string{"`" + b.ID + "`", when}
			if b.EventType != nil {
				wantParts = append(wantParts, title[*b.EventType])
			} else {
				wantParts = append(wantParts, "event not recorded")
			}
			if b.BookerName != nil {
				wantParts = append(wantParts, *b.BookerName)
			} else {
				wantParts = append(wantParts, "not recorded ·")
			}
			if b.BookerEmail != nil {
				wantParts = append(wantParts, *b.BookerEmail)
			} else {
				wantParts = append(wantParts, "email not recorded")
			}
			for _, p := range wantParts {
				if !strings.Contains(text, p) {
					t.Errorf("%s: row for %s lacks %q: %q", u.user, b.ID, p, text)
				}
			}
			confirm := textOf(mustJSON(acc["confirm"]))
			if !strings.Contains(confirm, "notified") || !strings.Contains(confirm, "series") || !strings.Contains(confirm, "Grouped") {
				t.Errorf("%s: confirm dialog of %s: %q", u.user, b.ID, confirm)
			}
		}
		text := textOf(m.Blocks)
		for _, id := range []string{"5eed0000-0000-4000-8000-000000000013", "5eed0000-0000-4000-8000-000000000014"} {
			if strings.Contains(text, id) {
				t.Errorf("%s: past or cancelled %s listed", u.user, id)
			}
		}
		if len(elements(m.Blocks, "list_page")) != 0 {
			t.Errorf("%s: one page has page buttons", u.user)
		}
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// 5b. A full list (the API's 100) says so and pages.
func TestListOfManyBookingsPages(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for i := range 118 {
		h.sb.AddBooking(bookingtest.DemoOwner, bookingtest.Booking{
			EventType: ptr("consultation"), Start: time.Date(2026, 4, 6, 7, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour),
			BookerName: ptr(fmt.Sprintf("Attendee %03d", i)), BookerEmail: ptr(fmt.Sprintf("a%03d@example.com", i)),
		})
	}
	want := upcoming(h)
	if len(want) != 100 {
		t.Fatalf("%d listed", len(want))
	}
	h.slash(ada, "list")
	m := h.reply(ada, "Upcoming bookings (first 100)")
	text := textOf(m.Blocks)
	for _, s := range []string{"Page 1 of 7", "at most 100 upcoming bookings", "later ones may be missing"} {
		if !strings.Contains(text, s) {
			t.Errorf("first page lacks %q:\n%s", s, text)
		}
	}
	if got := values(elements(m.Blocks, "cancel_booking")); len(got) != 15 || got[0] != want[0].ID {
		t.Errorf("first page cancels %v", got)
	}
	nav := elements(m.Blocks, "list_page")
	if len(nav) != 1 || str(nav[0], "value") != "1" || !strings.Contains(textOf(mustJSON(nav[0])), "Next") {
		t.Fatalf("first page navigation: %v", nav)
	}

	h.interact(slacktest.BlockAction(ada, "list_page", "1", slacktest.InMessage(m)))
	p2 := h.waitMessage("page 2", func(x slacktest.Message) bool {
		return x.Kind == "response_url" && strings.Contains(textOf(x.Blocks), "Page 2 of 7")
	})
	if !p2.ReplaceOriginal || p2.OriginalTS != m.TS {
		t.Errorf("page 2 did not replace the list: replace=%v original=%q, list ts %q", p2.ReplaceOriginal, p2.OriginalTS, m.TS)
	}
	var ids []string
	for _, b := range want[15:30] {
		ids = append(ids, b.ID)
	}
	if got := values(elements(p2.Blocks, "cancel_booking")); !slices.Equal(got, ids) {
		t.Errorf("page 2 cancels %v, want %v", got, ids)
	}
	if got := values(elements(p2.Blocks, "list_page")); !slices.Equal(got, []string{"2"}) {
		t.Errorf("page 2 Next %v, want 2", got)
	}
	if got := values(elements(p2.Blocks, "list_page_prev")); !slices.Equal(got, []string{"0"}) {
		t.Errorf("page 2 Previous %v, want 0", got)
	}
	h.interact(slacktest.BlockAction(ada, "list_page_prev", "0", slacktest.InMessage(p2)))
	h.waitMessage("page 1 again", func(x slacktest.Message) bool {
		return x.Kind == "response_url" && x.ReplaceOriginal && x.OriginalTS == m.TS && strings.Contains(textOf(x.Blocks), "Page 1 of 7")
	})
}

// 6. Cancelling from the list replaces the row's message with the outcome,
// and a double press cancels once.
func TestCancelFromListOnceOnDoublePress(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.slash(ada, "list")
	list := h.reply(ada, "5eed0000-0000-4000-8000-000000000002")
	h.drain()
	// Both presses arrive before the first press's "Cancelling…" replaces
	// the list, as with a quick double click.
	release := h.sl.Hold("response_url")

	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for range 2 {
		wg.Go(func() {
			_, err := h.sl.SendInteraction(h.ctx(), slacktest.BlockAction(ada, "cancel_booking", "5eed0000-0000-4000-8000-000000000002", slacktest.InMessage(list)))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	release()
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	done := h.waitMessage("cancelled", func(m slacktest.Message) bool {
		return m.Kind == "response_url" && strings.Contains(textOf(m.Blocks), "cancelled by you")
	})
	if !done.ReplaceOriginal || done.OriginalTS != list.TS {
		t.Errorf("outcome did not replace the list message: %+v", done)
	}
	// The list stays, the cancelled booking struck through and without its
	// button, the others as they were.
	text := textOf(done.Blocks)
	if !strings.Contains(text, "~") || !strings.Contains(text, "5eed0000-0000-4000-8000-000000000001") || !strings.Contains(done.Text, "is cancelled") {
		t.Errorf("the list after the cancel:\n%s\n(text %q)", text, done.Text)
	}
	for _, el := range elements(done.Blocks, "cancel_booking") {
		if str(el, "value") == "5eed0000-0000-4000-8000-000000000002" {
			t.Errorf("the cancelled booking still has a Cancel button")
		}
	}
	if n := len(elements(done.Blocks, "cancel_booking")); n < 2 {
		t.Errorf("%d Cancel buttons left in the list", n)
	}
	h.drain()
	if n := len(h.requests(bookingtest.EndpointCancelBooking)); n != 1 {
		t.Errorf("%d POST cancel requests for a double press, want 1", n)
	}
	for _, b := range h.sb.Bookings(bookingtest.DemoOwner) {
		if b.Cancelled != (b.ID == "5eed0000-0000-4000-8000-000000000002" || b.ID == "5eed0000-0000-4000-8000-000000000014") {
			t.Errorf("%s cancelled = %v", b.ID, b.Cancelled)
		}
	}
}

// 7. `cancel <id>` asks first; nothing is cancelled before the press.
func TestCancelCommandAsksFirst(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.slash(ada, "cancel 5eed0000-0000-4000-8000-000000000003")
	m := h.reply(ada, "Cancel this booking?")
	text := textOf(m.Blocks)
	for _, s := range []string{"`5eed0000-0000-4000-8000-000000000003`", "Deep dive", "Alan Turing", "Tue 24 Mar, 14:00–15:00 CET"} {
		if !strings.Contains(text, s) {
			t.Errorf("confirmation lacks %q:\n%s", s, text)
		}
	}
	if got := values(elements(m.Blocks, "cancel_booking")); !slices.Equal(got, []string{"5eed0000-0000-4000-8000-000000000003"}) {
		t.Errorf("cancel buttons %v", got)
	}
	// The message asks once: its button opens no second question.
	if confirm := elements(m.Blocks, "cancel_booking")[0]["confirm"]; confirm != nil {
		t.Errorf("the confirmation's button asks again: %v", confirm)
	}
	h.drain()
	if n := len(h.requests(bookingtest.EndpointCancelBooking)); n != 0 {
		t.Fatalf("%d cancel requests before the button was pressed", n)
	}

	// Keep it: nothing is cancelled, and the question is answered.
	h.slash(ada, "cancel 5eed0000-0000-4000-8000-000000000004")
	asked := h.reply(ada, "5eed0000-0000-4000-8000-000000000004")
	h.interact(slacktest.BlockAction(ada, "cancel_keep", "5eed0000-0000-4000-8000-000000000004", slacktest.InMessage(asked)))
	if kept := h.reply(ada, "is not cancelled"); !kept.ReplaceOriginal {
		t.Errorf("Keep it did not answer in place of the question")
	}
	h.drain()
	if n := len(h.requests(bookingtest.EndpointCancelBooking)); n != 0 {
		t.Fatalf("%d cancel requests after Keep it", n)
	}

	h.interact(slacktest.BlockAction(ada, "cancel_booking", "5eed0000-0000-4000-8000-000000000003", slacktest.InMessage(m)))
	h.reply(ada, "`5eed0000-0000-4000-8000-000000000003` is cancelled")
	h.drain()
	if n := len(h.requests(bookingtest.EndpointCancelBooking)); n != 1 {
		t.Errorf("%d cancel requests after one press", n)
	}

	h.slash(ada, "cancel bk_nosuchid01")
	m = h.reply(ada, "bk_nosuchid01")
	if text := textOf(m.Blocks); !strings.Contains(text, "is not among the upcoming bookings") {
		t.Errorf("unknown ID:\n%s", text)
	}
	h.drain()
	if n := len(h.requests(bookingtest.EndpointCancelBooking)); n != 1 {
		t.Errorf("asking about an unknown ID sent a cancel")
	}
}

// 8. The booking modal from open to outcome.
func TestBookingModalFullFlow(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ack := h.slash(ada, "new intro-call")
	if len(ack.Payload) != 0 {
		t.Errorf("/booking new acked with %s", ack.Payload)
	}
	open, err := h.sl.WaitCall(h.ctx(), "views.open")
	if err != nil || open.Error != "" {
		t.Fatalf("views.open: %v %q", err, open.Error)
	}
	v := h.waitView("with slots", func(v slacktest.View) bool {
		return v.TriggerUser == ada && len(elements(v.Blocks, "slot")) == 1
	})
	if v.CallbackID != "booking_create" || v.ID != h.sl.Views()[0].ID {
		t.Errorf("modal callback_id %q", v.CallbackID)
	}
	ev := elements(v.Blocks, "event_type")
	if len(ev) != 1 {
		t.Fatalf("event_type selects: %d", len(ev))
	}
	var slugs []string
	for _, o := range options(ev[0]) {
		slugs = append(slugs, o.value)
	}
	if !slices.Equal(slugs, []string{"intro-call", "consultation", "deep-dive", "office-hours"}) {
		t.Errorf("event types offered %v, want the solo ones", slugs)
	}
	if init, _ := ev[0]["initial_option"].(map[string]any); str(init, "value") != "intro-call" {
		t.Errorf("event type not preselected: %v", init)
	}
	if len(elements(v.Blocks, "slot_day")) != 1 {
		t.Error("no day select")
	}
	slotOpts := options(elements(v.Blocks, "slot")[0])
	if len(slotOpts) == 0 || slotOpts[0] != (option{firstSlot, "11:15–11:30"}) {
		t.Errorf("slot options start %v", slotOpts[:min(1, len(slotOpts))])
	}

	// The attendee's zone is searched for, as a person types.
	sug, err := h.sl.Suggest(h.ctx(), ada, v.ID, "booker_tz", "new york")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sug.Payload), `"value":"America/New_York"`) {
		t.Errorf("suggestions for \"new york\": %s", sug.Payload)
	}

	in := bookingInputs(firstSlot, "grace@example.com")
	in["name"] = "Grace <!here> Hopper"
	sa := parseSubmissionAck(t, h.submit(ada, v.ID, in))
	if sa.ResponseAction != "update" || !strings.Contains(textOf(sa.View), "Booking *Intro call*") {
		t.Errorf("submission ack: %s %s", sa.ResponseAction, textOf(sa.View))
	}

	done := h.waitView("Booked", func(x slacktest.View) bool {
		return x.ID == v.ID && strings.Contains(textOf(x.Blocks), "Booked")
	})
	var made []bookingtest.Booking
	for _, b := range h.sb.Bookings(bookingtest.DemoOwner) {
		if b.BookerEmail != nil && *b.BookerEmail == in["email"] {
			made = append(made, b)
		}
	}
	if len(made) != 1 {
		t.Fatalf("%d bookings made, want 1", len(made))
	}
	bk := made[0]
	text := textOf(done.Blocks)
	for _, s := range []string{"`" + bk.ID + "`", "Mon 23 Mar, 11:15–11:30 CET", "Mon 23 Mar, 06:15–06:30 EDT (America/New_York)", "Grace &lt;!here&gt; Hopper (grace@example.com)"} {
		if !strings.Contains(text, s) {
			t.Errorf("outcome lacks %q:\n%s", s, text)
		}
	}
	if strings.Contains(text, "<!here>") {
		t.Error("the attendee's name is not escaped: it would ping the channel")
	}
	dm := h.dm(ada, "Booked")
	if !strings.Contains(textOf(dm.Blocks), bk.ID) {
		t.Errorf("DM lacks the booking ID: %s", textOf(dm.Blocks))
	}
	// The message the person keeps says what can come next; the modal,
	// about to close, does not.
	if values(elements(dm.Blocks, "cancel_booking"))[0] != bk.ID || len(elements(dm.Blocks, "show_list")) != 1 || len(elements(dm.Blocks, "new_booking")) != 1 {
		t.Errorf("the DM lacks the next actions:\n%s", dm.Blocks)
	}
	if len(elements(done.Blocks, "show_list")) != 0 {
		t.Errorf("the modal shows the next actions")
	}
	h.interact(slacktest.BlockAction(ada, "show_list", "", slacktest.InMessage(dm)))
	h.reply(ada, bk.ID)

	h.drain()
	posts := h.requests(bookingtest.EndpointCreateBooking)
	if len(posts) != 1 {
		t.Fatalf("%d POST /bookings, want 1", len(posts))
	}
	wantForm := url.Values{
		"event_type": {"intro-call"}, "start": {firstSlot}, "end": {"2026-03-23T10:30:00Z"},
		"name": {"Grace <!here> Hopper"}, "email": {"grace@example.com"}, "booker_tz": {"America/New_York"},
		"q:booking-note": {in["note"]},
	}
	if got := posts[0].Form; got.Encode() != wantForm.Encode() {
		t.Errorf("POST /bookings form\n got %v\nwant %v", got, wantForm)
	}
	if bk.BookerTZ != "America/New_York" || bk.Note != in["note"] || !bk.Start.Equal(time.Date(2026, 3, 23, 10, 15, 0, 0, time.UTC)) {
		t.Errorf("stored booking %+v", bk)
	}
}

// 9. Field problems are shown next to the fields, and nothing is sent.
func TestBookingModalFieldErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	v := h.openModal(ada, "intro-call")
	note := strings.Repeat("😀", 1001) // 1001 characters, 2002 UTF-16 units
	sa := parseSubmissionAck(t, h.submit(ada, v.ID, map[string]string{
		"slot": firstSlot, "name": "   ", "email": "ada@example", "booker_tz": "Europe/Berlin", "note": note,
	}))
	if sa.ResponseAction != "errors" {
		t.Fatalf("response_action %q, want errors", sa.ResponseAction)
	}
	for _, k := range []string{"name", "email", "note"} {
		if sa.Errors[k] == "" {
			t.Errorf("no error for %s: %v", k, sa.Errors)
		}
	}
	if !strings.Contains(sa.Errors["note"], "2002") {
		t.Errorf("note error %q does not count UTF-16 units", sa.Errors["note"])
	}
	if len(sa.Errors) != 3 {
		t.Errorf("errors %v", sa.Errors)
	}
	cur, _ := h.sl.View(v.ID)
	if cur.Closed || len(cur.Errors) != 3 {
		t.Errorf("view after errors: closed=%v errors=%v", cur.Closed, cur.Errors)
	}
	// 1000 emoji are exactly the 2000 units allowed.
	sa = parseSubmissionAck(t, h.submit(ada, v.ID, map[string]string{
		"slot": firstSlot, "name": " ", "email": "ada@example.com", "booker_tz": "Europe/Berlin", "note": strings.Repeat("😀", 1000),
	}))
	if _, bad := sa.Errors["note"]; bad || sa.Errors["name"] == "" || len(sa.Errors) != 1 {
		t.Errorf("2000-unit note: %v", sa.Errors)
	}
	// A time zone typed rather than picked from the list.
	sa = parseSubmissionAck(t, h.submit(ada, v.ID, map[string]string{
		"slot": firstSlot, "name": "Ada", "email": "ada@example.com", "booker_tz": "Mars/Olympus_Mons",
	}))
	if sa.ResponseAction != "errors" || sa.Errors["booker_tz"] == "" {
		t.Errorf("bad zone: %+v", sa)
	}
	h.drain()
	if n := len(h.requests(bookingtest.EndpointCreateBooking)); n != 0 {
		t.Errorf("%d POST /bookings for invalid input", n)
	}
}

// 10. A redelivered submission and two windows booking the same slot for
// the same attendee make one POST.
func TestBookingIsMadeOnce(t *testing.T) {
	t.Parallel()
	t.Run("redelivered", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		v := h.openModal(ada, "intro-call")
		ack := h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
		again, err := h.sl.Redeliver(h.ctx(), ack.EnvelopeID)
		if err != nil {
			t.Fatal(err)
		}
		if string(again.Payload) != string(ack.Payload) {
			t.Errorf("redelivery acked differently:\n%s\n%s", again.Payload, ack.Payload)
		}
		h.dm(ada, "Booked")
		h.drain()
		if n := len(h.requests(bookingtest.EndpointCreateBooking)); n != 1 {
			t.Errorf("%d POST /bookings, want 1", n)
		}
		dms := 0
		for _, m := range h.sl.Messages() {
			if m.Kind == "message" && m.Channel == ada {
				dms++
			}
		}
		if dms != 1 {
			t.Errorf("%d outcome DMs, want 1", dms)
		}
	})
	t.Run("two windows", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		va := h.openModal(ada, "intro-call")
		vb := h.openModal(bob, "intro-call")
		h.sb.SetLatency(bookingtest.EndpointCreateBooking, 500*time.Millisecond)
		acks := make([]slacktest.Ack, 2)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i, x := range []struct {
			user string
			v    slacktest.View
		}{{ada, va}, {bob, vb}} {
			wg.Go(func() {
				acks[i], errs[i] = h.sl.SubmitInputs(h.ctx(), x.user, x.v.ID, bookingInputs(firstSlot, "grace@example.com"))
			})
		}
		wg.Wait()
		var actions []string
		for i := range acks {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			sa := parseSubmissionAck(t, acks[i])
			actions = append(actions, sa.ResponseAction)
			if sa.ResponseAction == "errors" {
				want := slotBlockIDOf(t, []slacktest.View{va, vb}[i])
				for k, msg := range sa.Errors {
					if k != want || !strings.Contains(msg, "being made right now") {
						t.Errorf("error at %s: %q, want at the time select %s", k, msg, want)
					}
				}
			}
		}
		slices.Sort(actions)
		if !slices.Equal(actions, []string{"errors", "update"}) {
			t.Errorf("acks %v, want one update and one errors", actions)
		}
		h.waitView("Booked", func(v slacktest.View) bool { return strings.Contains(textOf(v.Blocks), "Booked") })
		h.drain()
		if n := len(h.requests(bookingtest.EndpointCreateBooking)); n != 1 {
			t.Errorf("%d POST /bookings, want 1", n)
		}
	})
	t.Run("a fresh form after the first finished", func(t *testing.T) {
		t.Parallel()
		h, _ := journaledHarness(t, true)
		vb := h.openModal(bob, "intro-call")
		h.submit(ada, h.openModal(ada, "intro-call").ID, bookingInputs(firstSlot, "grace@example.com"))
		h.dm(ada, "Booked")
		h.drain()
		var id string
		for _, b := range upcoming(h) {
			if b.Start.Equal(mustTime(firstSlot)) {
				id = b.ID
			}
		}

		// Bob, moments later, books the same attendee at the same time from
		// the form he had open.
		h.submit(bob, vb.ID, bookingInputs(firstSlot, "Grace@Example.com"))
		m := h.dm(bob, "Already booked")
		text := textOf(m.Blocks)
		for _, want := range []string{id, "<@" + ada + ">", "Nothing was sent"} {
			if !strings.Contains(text, want) {
				t.Errorf("the answer does not say %q:\n%s", want, text)
			}
		}
		h.drain()
		if n := len(h.requests(bookingtest.EndpointCreateBooking)); n != 1 {
			t.Errorf("%d POST /bookings, want 1", n)
		}
	})
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

// A slow re-check of the slot leaves the create its own time, and the
// person is told the outcome even when the work's time is up.
func TestSlowRecheckLeavesTheCreateItsTime(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(_ *harness, cfg *bot.Config) { cfg.WorkTimeout = 700 * time.Millisecond })
	v := h.openModal(ada, "intro-call")
	h.clock.Advance(3 * time.Minute) // the form's slots are stale: they are checked again
	h.sb.SetLatency(bookingtest.EndpointSlots, 500*time.Millisecond)
	h.sb.SetLatency(bookingtest.EndpointCreateBooking, 400*time.Millisecond)
	h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
	h.dm(ada, "Booked")
	h.drain()
	if n := len(h.requests(bookingtest.EndpointCreateBooking)); n != 1 {
		t.Errorf("%d POST /bookings, want 1", n)
	}
}

// 11. Every outcome of a create is told as it is.
func TestBookingOutcomes(t *testing.T) {
	t.Parallel()
	outcome := func(h *harness, viewID, want string) slacktest.View {
		h.t.Helper()
		return h.waitView(fmt.Sprintf("%s saying %q", viewID, want), func(v slacktest.View) bool {
			return v.ID == viewID && strings.Contains(textOf(v.Blocks), want)
		})
	}

	t.Run("slot taken since the list", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		v := h.openModal(ada, "intro-call")
		takeSlot(h, "someone@example.com")
		h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
		out := outcome(h, v.ID, "Not booked: that time is not free.")
		if len(elements(out.Blocks, "pick_another")) != 1 {
			t.Errorf("no Pick another time button:\n%s", textOf(out.Blocks))
		}
		h.dm(ada, "Not booked")
		if n := len(h.requests(bookingtest.EndpointCreateBooking)); n != 1 {
			t.Errorf("%d POST /bookings", n)
		}
		// Pick another time: fresh slots, without the taken one.
		h.interact(slacktest.BlockAction(ada, "pick_another", "", slacktest.InView(out)))
		again := h.waitView("with fresh slots", func(x slacktest.View) bool {
			return x.ID == v.ID && len(elements(x.Blocks, "slot")) == 1
		})
		opts := options(elements(again.Blocks, "slot")[0])
		if len(opts) == 0 || opts[0].value == firstSlot {
			t.Errorf("fresh slots still offer the taken one: %v", opts[:min(2, len(opts))])
		}
		if name := elements(again.Blocks, "name"); len(name) != 1 || str(name[0], "initial_value") != "Grace Hopper" {
			t.Errorf("the attendee's name is not kept: %v", name)
		}

		// The same button in the message the person keeps opens a new modal.
		dm := h.dm(ada, "Not booked")
		modals := len(h.sl.Views())
		h.interact(slacktest.BlockAction(ada, "pick_another", "", slacktest.InMessage(dm)))
		fresh := h.waitView("opened from the DM", func(x slacktest.View) bool {
			return x.ID != v.ID && x.TriggerUser == ada && len(elements(x.Blocks, "slot")) == 1
		})
		if len(h.sl.Views()) != modals+1 {
			t.Errorf("%d views, want one more", len(h.sl.Views()))
		}
		if init, _ := elements(fresh.Blocks, "event_type")[0]["initial_option"].(map[string]any); str(init, "value") != "intro-call" {
			t.Errorf("event type of the new modal: %v", init)
		}
		// The form comes back as it was, but for the time.
		kept := map[string]string{"name": "Grace Hopper", "email": "grace@example.com", "note": "Agenda: compilers & <b>bold</b> ideas"}
		for action, want := range kept {
			if els := elements(fresh.Blocks, action); len(els) != 1 || str(els[0], "initial_value") != want {
				t.Errorf("%s of the new modal: %v, want %q", action, els, want)
			}
		}
		if tz := elements(fresh.Blocks, "booker_tz"); len(tz) != 1 || str(tz[0]["initial_option"].(map[string]any), "value") != "America/New_York" {
			t.Errorf("the attendee's zone of the new modal: %v", tz)
		}
	})
	t.Run("slot gone and list stale", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		v := h.openModal(ada, "intro-call")
		takeSlot(h, "someone@example.com")
		h.clock.Advance(3 * time.Minute)
		h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
		outcome(h, v.ID, "no longer free")
		h.drain()
		if n := len(h.requests(bookingtest.EndpointCreateBooking)); n != 0 {
			t.Errorf("%d POST /bookings for a slot the re-check found gone", n)
		}
		if n := len(h.requests(bookingtest.EndpointSlots)); n != 2 {
			t.Errorf("%d GET /slots, want the modal's and the re-check", n)
		}
	})
	t.Run("committed then 503", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		v := h.openModal(ada, "intro-call")
		h.sb.CommitThenFail(bookingtest.EndpointCreateBooking, bookingtest.HTMLError(503))
		h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
		out := outcome(h, v.ID, "Booked.")
		if !strings.Contains(textOf(out.Blocks), "confirmed by finding it in the bookings list") {
			t.Errorf("reconciled booking not explained:\n%s", textOf(out.Blocks))
		}
	})
	t.Run("503 then check again", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		v := h.openModal(ada, "intro-call")
		h.sb.FailNext(bookingtest.EndpointCreateBooking, bookingtest.HTMLError(503))
		h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
		out := outcome(h, v.ID, "Probably not booked")
		rc := elements(out.Blocks, "recheck")
		if len(rc) != 1 || !strings.Contains(textOf(mustJSON(rc[0])), "Check again") {
			t.Fatalf("no Check again button:\n%s", textOf(out.Blocks))
		}
		unclear := h.dm(ada, "Probably not booked")
		// Someone finds it was booked after all.
		id := takeSlot(h, "grace@example.com")
		h.interact(slacktest.BlockAction(ada, "recheck", "", slacktest.InView(out)))
		done := outcome(h, v.ID, "Booked.")
		if !strings.Contains(textOf(done.Blocks), id) {
			t.Errorf("recheck outcome lacks %s:\n%s", id, textOf(done.Blocks))
		}
		h.dm(ada, id)
		// Check again from the message the person keeps replaces it.
		h.interact(slacktest.BlockAction(ada, "recheck", "", slacktest.InMessage(unclear)))
		replaced := h.waitMessage("recheck from the DM", func(m slacktest.Message) bool {
			return m.Kind == "response_url" && m.OriginalTS == unclear.TS && strings.Contains(textOf(m.Blocks), "Booked.")
		})
		if !replaced.ReplaceOriginal || !strings.Contains(textOf(replaced.Blocks), id) {
			t.Errorf("recheck from the DM: %+v", replaced)
		}
		h.drain()
		if n := len(h.requests(bookingtest.EndpointCreateBooking)); n != 1 {
			t.Errorf("%d POST /bookings; Check again must never book", n)
		}
	})
	t.Run("429", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		v := h.openModal(ada, "intro-call")
		f := bookingtest.JSONError(429, "not booked", 429)
		f.RetryAfter = "120"
		h.sb.FailNext(bookingtest.EndpointCreateBooking, f)
		h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
		out := outcome(h, v.ID, "Refused by the booking service: too many attempts.")
		if text := textOf(out.Blocks); !strings.Contains(text, "Nothing was booked. Try again in 2 minutes") {
			t.Errorf("429 outcome:\n%s", text)
		}
	})
	t.Run("rebooking after a cancel", func(t *testing.T) {
		t.Parallel()
		h, _ := journaledHarness(t, true)
		h.submit(ada, h.openModal(ada, "intro-call").ID, bookingInputs(firstSlot, "grace@example.com"))
		h.dm(ada, "Booked")
		h.drain()
		var id string
		for _, b := range upcoming(h) {
			if b.BookerEmail != nil && *b.BookerEmail == "grace@example.com" {
				id = b.ID
			}
		}
		if res, err := h.client.Cancel(booking.WithActor(t.Context(), ada), id); err != nil || res.Outcome != booking.Cancelled {
			t.Fatalf("cancel: %+v, %v", res, err)
		}
		// The time is free again, and the service still refuses Grace at it.
		v := h.openModal(ada, "intro-call")
		h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
		text := textOf(outcome(h, v.ID, "refuses this attendee at this time").Blocks)
		if !strings.Contains(text, "even one cancelled since") || strings.Contains(text, "check the bookings list") {
			t.Errorf("outcome:\n%s", text)
		}
		h.drain()
		if n := len(h.requests(bookingtest.EndpointCreateBooking)); n != 2 {
			t.Errorf("%d POST /bookings, want 2", n)
		}
	})
	t.Run("the service's own 429", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.sb.SetLimits(1, 20) // stricter than bookbot's guard: the service answers first
		h.submit(ada, h.openModal(ada, "intro-call").ID, bookingInputs(firstSlot, "grace@example.com"))
		h.dm(ada, "Booked")
		v := h.openModal(ada, "intro-call")
		h.submit(ada, v.ID, bookingInputs(v.Options("slot")[0].Value, "ada@example.com"))
		text := textOf(outcome(h, v.ID, "Refused by the booking service: too many attempts.").Blocks)
		if strings.Contains(text, "Not sent") {
			t.Errorf("a request the service refused is said not to have been sent:\n%s", text)
		}
	})
	// Each kind of 409 says what it means; none is sent twice.
	for _, tt := range []struct {
		name  string
		fault func(*bookingtest.Server)
		want  []string
	}{
		{"409, the time not free", func(s *bookingtest.Server) {
			s.FailNext(bookingtest.EndpointCreateBooking, bookingtest.JSONError(409, "not booked", 409))
		}, []string{"Not booked: that time is not free.", "Pick another time"}},
		{"409, this attendee refused at this time", func(s *bookingtest.Server) {
			s.FailNext(bookingtest.EndpointCreateBooking, bookingtest.JSONError(409, "not booked", 200))
		}, []string{"refuses this attendee at this time", "even one cancelled since", "public booking page"}},
		{"409, and the list shows it booked", func(s *bookingtest.Server) {
			s.CommitThenFail(bookingtest.EndpointCreateBooking, bookingtest.JSONError(409, "not booked", 200))
		}, []string{"Already booked.", "refused to book it again"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			v := h.openModal(ada, "intro-call")
			tt.fault(h.sb)
			h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
			text := textOf(outcome(h, v.ID, tt.want[0]).Blocks)
			for _, want := range tt.want[1:] {
				if !strings.Contains(text, want) {
					t.Errorf("outcome lacks %q:\n%s", want, text)
				}
			}
			if strings.Contains(tt.name, "list shows") {
				id := upcoming(h)[0].ID
				for _, b := range upcoming(h) {
					if b.BookerEmail != nil && *b.BookerEmail == "grace@example.com" {
						id = b.ID
					}
				}
				if !strings.Contains(text, id) {
					t.Errorf("outcome lacks the booking ID %s:\n%s", id, text)
				}
			}
			h.drain()
			if n := len(h.requests(bookingtest.EndpointCreateBooking)); n != 1 {
				t.Errorf("%d POST /bookings, want 1", n)
			}
		})
	}
}

// 12. A slow booking API does not delay the ack or the modal.
func TestSlowBookingAPIModalOpensAtOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.sb.SetLatency(bookingtest.EndpointEventTypes, 2*time.Second)
	h.sb.SetLatency(bookingtest.EndpointSlots, 2*time.Second)
	start := time.Now()
	ack := h.slash(ada, "new intro-call")
	if ack.Delay > 500*time.Millisecond {
		t.Errorf("ack took %v", ack.Delay)
	}
	open, err := h.sl.WaitCall(h.ctx(), "views.open")
	if err != nil || open.Error != "" {
		t.Fatalf("views.open: %v %q", err, open.Error)
	}
	if d := open.At.Sub(start); d > time.Second {
		t.Errorf("views.open %v after the command, the event types take 2 s", d)
	}
	var req struct {
		View json.RawMessage `json:"view"`
	}
	_ = json.Unmarshal(open.JSON, &req)
	if text := textOf(req.View); !strings.Contains(text, "Loading event types") {
		t.Errorf("first view:\n%s", text)
	}
	v := h.waitView("filled in", func(v slacktest.View) bool { return len(elements(v.Blocks, "slot")) == 1 })
	if v.Updates == 0 {
		t.Error("the modal was not updated")
	}
}

// 13. After Slack asks the bot to reconnect, it serves on the new socket.
func TestReconnect(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.sl.Disconnect("warning")
	if err := h.sl.WaitConnections(h.ctx(), 2); err != nil {
		t.Fatal(err)
	}
	h.slash(ada, "types")
	h.reply(ada, "Intro call")
}

// 14. App Home shows the next days' bookings.
func TestAppHome(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if _, err := h.sl.OpenAppHome(h.ctx(), ada); err != nil {
		t.Fatal(err)
	}
	home := h.waitView("Ada's home", func(v slacktest.View) bool { return v.Type == "home" && v.TriggerUser == ada })
	text := textOf(home.Blocks)
	for i := 1; i <= 6; i++ {
		if id := fmt.Sprintf("5eed0000-0000-4000-8000-%012d", i); !strings.Contains(text, id) {
			t.Errorf("home lacks %s", id)
		}
	}
	for _, id := range []string{"5eed0000-0000-4000-8000-000000000007", "5eed0000-0000-4000-8000-000000000013", "5eed0000-0000-4000-8000-000000000014"} {
		if strings.Contains(text, id) {
			t.Errorf("home shows %s", id)
		}
	}
	for _, s := range []string{"6 in the next 3 days", "Europe/Berlin (CET)", "Tuesday 24 March", "09:00–09:15  Intro call · Ada Lovelace"} {
		if !strings.Contains(text, s) {
			t.Errorf("home lacks %q:\n%s", s, text)
		}
	}
	if len(elements(home.Blocks, "new_booking")) != 1 || len(elements(home.Blocks, "home_refresh")) != 1 {
		t.Error("home lacks New booking or Refresh")
	}
	h.interact(slacktest.BlockAction(ada, "home_refresh", "", slacktest.InView(home)))
	h.waitView("refreshed", func(v slacktest.View) bool { return v.ID == home.ID && v.Updates >= 1 })
	h.interact(slacktest.BlockAction(ada, "new_booking", "", slacktest.InView(home)))
	h.waitView("modal from home", func(v slacktest.View) bool { return v.Type == "modal" && v.TriggerUser == ada })
}

// 15. The booking key and the Slack tokens never leave the process.
func TestSecretsNeverShown(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	echo := "<html><body><h1>502 Bad Gateway</h1><pre>Authorization: Bearer " + testKey + "</pre></body></html>"
	for range 4 { // every retry of the read
		h.sb.FailNext(bookingtest.EndpointListBookings, bookingtest.Fault{Status: 502, ContentType: "text/html", Body: echo})
	}
	h.slash(ada, "list")
	h.reply(ada, "could not be loaded")

	v := h.openModal(ada, "intro-call")
	h.sb.FailNext(bookingtest.EndpointCreateBooking, bookingtest.PlainText(503, "upstream failed; request had Authorization: Bearer "+testKey))
	h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
	h.waitView("unclear outcome", func(x slacktest.View) bool {
		return x.ID == v.ID && strings.Contains(textOf(x.Blocks), "Probably not booked")
	})
	h.sb.FailNext(bookingtest.EndpointCancelBooking, bookingtest.JSONError(500, "key "+testKey+" rejected", 0))
	h.slash(ada, "cancel 5eed0000-0000-4000-8000-000000000001")
	m := h.reply(ada, "Cancel this booking?")
	h.interact(slacktest.BlockAction(ada, "cancel_booking", "5eed0000-0000-4000-8000-000000000001", slacktest.InMessage(m)))
	h.reply(ada, "5eed0000-0000-4000-8000-000000000001")
	h.sl.FailNext("views.open", "expired_trigger_id")
	h.slash(ada, "new")
	h.reply(ada, "could not be opened")
	h.drain()

	logs := h.logs.String()
	if !strings.Contains(logs, "booking create finished") {
		t.Errorf("the log buffer did not capture the bot's log:\n%s", logs)
	}
	var where []string
	check := func(what string, s string) {
		for _, secret := range []string{testKey, testBotToken, testAppToken} {
			if strings.Contains(s, secret) {
				where = append(where, fmt.Sprintf("%s holds %.12s…", what, secret))
			}
		}
	}
	check("the log", logs)
	for _, m := range h.sl.Messages() {
		check(m.Kind+" message", m.Text+string(m.Blocks))
	}
	for _, v := range h.sl.Views() {
		check("view "+v.ID, string(v.Raw)+string(v.Blocks)+v.PrivateMetadata+string(mustJSON(v.State)))
	}
	for _, a := range h.sl.Acks() {
		check("ack", string(a.Raw)+string(a.Payload))
	}
	for _, c := range h.sl.Calls() {
		check(c.Method+" call", c.Form.Encode()+string(c.JSON))
	}
	for _, r := range h.sb.Requests() {
		if r.LeakedKey {
			where = append(where, "booking API request "+r.Endpoint+" carries the key outside the Authorization header")
		}
	}
	for _, w := range where {
		t.Error(w)
	}
	// The key the API echoed reached the log, redacted; people get words,
	// not the API's answer.
	if !strings.Contains(logs, "Bearer [REDACTED]") {
		t.Error("the log does not show the echoed key redacted; did the faults fire?")
	}
	for _, m := range h.sl.Messages() {
		if strings.Contains(string(m.Blocks), "Bearer") {
			t.Errorf("a message shows the API's answer: %s", m.Blocks)
		}
	}
}

// 16. The global shortcut opens the booking modal.
func TestShortcutOpensModal(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.interact(slack.InteractionCallback{Type: slack.InteractionTypeShortcut, CallbackID: "book_meeting", User: slack.User{ID: ada}})
	v := h.waitView("from the shortcut", func(v slacktest.View) bool {
		return v.TriggerUser == ada && v.CallbackID == "booking_create" && len(elements(v.Blocks, "event_type")) == 1
	})
	if len(elements(v.Blocks, "name")) != 1 || len(elements(v.Blocks, "email")) != 1 {
		t.Error("modal lacks the attendee inputs")
	}
}

// The day and event type selects reload the modal's time choices.
func TestBookingModalSwitchDayAndEvent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	v := h.openModal(ada, "intro-call")
	if days := options(elements(v.Blocks, "slot_day")[0]); len(days) < 10 || days[1].value != "2026-03-24" {
		t.Fatalf("days offered: %v", days)
	}

	// The person takes a while: the bot's cached event types have expired.
	h.clock.Advance(3 * time.Minute)
	h.interact(slacktest.BlockAction(ada, "slot_day", "2026-03-24", slacktest.InView(v)))
	tue := h.waitView("Tuesday's times", func(x slacktest.View) bool {
		els := elements(x.Blocks, "slot")
		return x.ID == v.ID && len(els) == 1 && len(options(els[0])) > 0 && options(els[0])[0].text == "09:15–09:30"
	})
	for _, o := range options(elements(tue.Blocks, "slot")[0]) {
		start, _ := time.Parse(time.RFC3339Nano, o.value)
		if start.In(berlin).Format("2006-01-02") != "2026-03-24" {
			t.Errorf("Tuesday offers %s", o.value)
		}
	}

	h.interact(slacktest.BlockAction(ada, "event_type", "consultation", slacktest.InView(tue)))
	cons := h.waitView("consultation's times", func(x slacktest.View) bool {
		els := elements(x.Blocks, "slot")
		return x.ID == v.ID && len(els) == 1 && len(options(els[0])) > 0 && options(els[0])[0].text == "11:30–12:00"
	})
	h.submit(ada, cons.ID, bookingInputs("2026-03-23T10:30:00Z", "grace@example.com"))
	h.waitView("Booked", func(x slacktest.View) bool { return x.ID == v.ID && strings.Contains(textOf(x.Blocks), "Booked") })
	h.drain()
	posts := h.requests(bookingtest.EndpointCreateBooking)
	if len(posts) != 1 || posts[0].Form.Get("event_type") != "consultation" || posts[0].Form.Get("end") != "2026-03-23T11:00:00Z" {
		t.Errorf("POST /bookings: %+v", posts)
	}

	// An event type the API cannot book is explained in the modal.
	h.slash(ada, "new team-sync")
	h.waitView("team-sync explained", func(x slacktest.View) bool {
		return x.ID != v.ID && strings.Contains(textOf(x.Blocks), "book it through the public booking page")
	})
	h.drain()
	for _, r := range h.requests(bookingtest.EndpointSlots) {
		if q := r.Form.Get("event_type"); q != "intro-call" && q != "consultation" {
			t.Errorf("GET /slots for %q", q)
		}
	}
}

// A Slack hiccup when looking up someone's zone shows UTC (named) once, and
// does not stick.
func TestUserZoneLookupFailureDoesNotStick(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.sl.FailNext("users.info", "internal_error")
	h.slash(bob, "slots intro-call")
	h.reply(bob, "Times in UTC.")
	h.slash(bob, "slots intro-call")
	h.reply(bob, "Times in America/New_York (EDT)")
}

// Redelivered slash commands and button presses are acted on once.
func TestRedeliveredEnvelopesActOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ack := h.slash(ada, "list")
	list := h.reply(ada, "Upcoming bookings")
	if _, err := h.sl.Redeliver(h.ctx(), ack.EnvelopeID); err != nil {
		t.Fatal(err)
	}
	press := h.interact(slacktest.BlockAction(ada, "cancel_booking", "5eed0000-0000-4000-8000-000000000004", slacktest.InMessage(list)))
	if _, err := h.sl.Redeliver(h.ctx(), press.EnvelopeID); err != nil {
		t.Fatal(err)
	}
	h.reply(ada, "`5eed0000-0000-4000-8000-000000000004` is cancelled")
	h.drain()
	if n := len(h.requests(bookingtest.EndpointCancelBooking)); n != 1 {
		t.Errorf("%d cancels", n)
	}
	lists := 0
	for _, m := range h.sl.Messages() {
		// The list shown again after the cancel, struck through, is not a reply.
		if text := textOf(m.Blocks); strings.Contains(text, "Upcoming bookings (") && !strings.Contains(text, "cancelled by you") {
			lists++
		}
	}
	if lists != 1 {
		t.Errorf("%d list replies for one redelivered command", lists)
	}
	if !strings.Contains(h.logs.String(), "redelivered envelope ignored") {
		t.Error("redelivery not logged")
	}
}

// A modal without event types (the API failed) can still be submitted by
// a person; the answer must be an error Slack can show, not a broken ack.
func TestSubmitWithoutEventTypes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for range 4 {
		h.sb.FailNext(bookingtest.EndpointEventTypes, bookingtest.HTMLError(503))
	}
	h.slash(ada, "new")
	v := h.waitView("explaining the failure", func(x slacktest.View) bool {
		return strings.Contains(textOf(x.Blocks), "Event types could not be loaded")
	})
	if strings.Contains(textOf(v.Blocks), "Loading") {
		t.Errorf("the failed modal still says Loading:\n%s", textOf(v.Blocks))
	}
	ack, err := h.sl.SubmitInputs(h.ctx(), ada, v.ID, map[string]string{"name": "Ada", "email": "ada@example.com"})
	if err != nil {
		t.Fatalf("submission: %v", err)
	}
	if sa := parseSubmissionAck(t, ack); sa.ResponseAction != "errors" {
		t.Errorf("ack %s", ack.Payload)
	}
	h.drain()
	if n := len(h.requests(bookingtest.EndpointCreateBooking)); n != 0 {
		t.Errorf("%d POST /bookings", n)
	}
}

// The help's buttons work from the ack message; a reply whose response_url
// fails comes as a direct message instead.
func TestHelpButtonsAndReplyFallback(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.slash(ada, "help")
	help := h.waitMessage("help", func(m slacktest.Message) bool { return m.Kind == "ack" && m.User == ada })

	h.interact(slacktest.BlockAction(ada, "show_types", "", slacktest.InMessage(help)))
	h.reply(ada, "Event types")
	h.interact(slacktest.BlockAction(ada, "new_booking", "", slacktest.InMessage(help)))
	h.waitView("modal from the help", func(v slacktest.View) bool {
		return v.TriggerUser == ada && len(elements(v.Blocks, "event_type")) == 1
	})
	h.interact(slacktest.BlockAction(ada, "list_page", "0", slacktest.InMessage(help)))
	list := h.reply(ada, "Upcoming bookings (12)")
	if !list.ReplaceOriginal || list.OriginalTS != help.TS {
		t.Errorf("the list did not replace the help: %+v", list)
	}

	h.sl.FailNext("response_url", "expired_url")
	h.slash(ada, "slots deep-dive")
	h.dm(ada, "Free slots: Deep dive")

	h.slash(ada, "digest")
	h.reply(ada, "The next-day digest is not set up")
}

// Shutting down waits for a booking in flight and still tells the person.
func TestShutdownFinishesBookingInFlight(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	v := h.openModal(ada, "intro-call")
	h.sb.SetLatency(bookingtest.EndpointCreateBooking, 500*time.Millisecond)
	h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
	h.stop()
	found := false
	for _, m := range h.sl.Messages() {
		found = found || (m.Kind == "message" && m.Channel == ada && strings.Contains(m.Text, "Booked."))
	}
	if !found {
		t.Error("the outcome was not sent before Run returned")
	}
	if cur, _ := h.sl.View(v.ID); !strings.Contains(textOf(cur.Blocks), "Booked.") {
		t.Errorf("modal after shutdown:\n%s", textOf(cur.Blocks))
	}
}

// A refused app token stops Run with an error naming it, not a retry loop.
func TestRunStopsOnRefusedAppToken(t *testing.T) {
	t.Parallel()
	sl := slacktest.NewServer(t)
	api := slack.New(sl.BotToken(), slack.OptionAPIURL(sl.APIURL), slack.OptionAppLevelToken("xapp-1-revoked"))
	b := bot.New(bot.Config{TeamID: sl.TeamID()}, nil, api)
	done := make(chan error, 1)
	go func() { done <- b.Run(t.Context(), socketmode.New(api), time.Second) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "SLACK_APP_TOKEN") {
			t.Errorf("Run = %v, want an error naming SLACK_APP_TOKEN", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run keeps retrying a refused app token")
	}
}

// slotBlockIDOf is the block ID of the modal's time select.
func slotBlockIDOf(t *testing.T, v slacktest.View) string {
	t.Helper()
	blocks, _ := decodeJSON(v.Blocks).([]any)
	for _, b := range blocks {
		bm, _ := b.(map[string]any)
		if el, _ := bm["element"].(map[string]any); str(el, "action_id") == "slot" {
			return str(bm, "block_id")
		}
	}
	t.Fatalf("view %s has no slot select", v.ID)
	return ""
}

// "Choose a time." is shown at the time select, not at the day select next
// to it, however the submission's state is ordered.
func TestMissingTimeErrorAtTimeSelect(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	v := h.openModal(ada, "intro-call")
	slotBlock := slotBlockIDOf(t, v)
	for range 12 { // map order is random: one lucky pass proves nothing
		// Sent as a raw payload: Slack's client would refuse the empty
		// required select, but a stale client or automation may not.
		ack := h.interact(slacktest.ViewSubmission(ada, v, map[string]map[string]slack.BlockAction{
			"name":  {"name": {Type: "plain_text_input", Value: "Ada"}},
			"email": {"email": {Type: "email_text_input", Value: "ada@example.com"}},
		}))
		sa := parseSubmissionAck(t, ack)
		if sa.ResponseAction != "errors" || sa.Errors[slotBlock] != "Choose a time." || len(sa.Errors) != 1 {
			t.Fatalf("errors %v, want \"Choose a time.\" at %s", sa.Errors, slotBlock)
		}
	}
	h.drain()
	if n := len(h.requests(bookingtest.EndpointCreateBooking)); n != 0 {
		t.Errorf("%d POST /bookings", n)
	}
}

// A busy day fills several App Home sections rather than losing bookings
// past Slack's 3000-character section limit.
func TestAppHomeBusyDayShowsEveryBooking(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	long := strings.Repeat("Long Attendee Name ", 4)
	for i := range 60 {
		h.sb.AddBooking(bookingtest.DemoOwner, bookingtest.Booking{
			ID: fmt.Sprintf("bk_busy%03d", i), EventType: ptr("consultation"),
			Start:      time.Date(2026, 3, 24, 7, 0, 0, 0, time.UTC).Add(time.Duration(i) * 5 * time.Minute),
			BookerName: ptr(fmt.Sprintf("%s%03d", long, i)), BookerEmail: ptr(fmt.Sprintf("a%03d@example.com", i)),
		})
	}
	if _, err := h.sl.OpenAppHome(h.ctx(), ada); err != nil {
		t.Fatal(err)
	}
	home := h.waitView("Ada's home", func(v slacktest.View) bool { return v.Type == "home" && v.TriggerUser == ada })
	text := textOf(home.Blocks)
	for i := range 60 {
		if id := fmt.Sprintf("bk_busy%03d", i); !strings.Contains(text, id) {
			t.Errorf("home lacks %s", id)
		}
	}
	if n := strings.Count(text, "*Tuesday 24 March*"); n != 1 {
		t.Errorf("the day heading appears %d times", n)
	}
}

// `/booking digest` shows the asker tomorrow's digest, in the digest's zone,
// and posts nothing in a channel.
func TestDigestPreview(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(h *harness, cfg *bot.Config) {
		cfg.Digest = &digest.Runner{Source: h.client, Channel: "CDIGEST", Zone: berlin, Now: h.clock.Now}
		cfg.DigestZone = berlin
	})
	h.slash(ada, "digest")
	m := h.reply(ada, "Bookings for Tuesday, 24 March 2026")
	text := textOf(m.Blocks)
	for _, s := range []string{"Europe/Berlin", "3 bookings", "*09:00–09:15*", "Intro call — Ada Lovelace"} {
		if !strings.Contains(text, s) {
			t.Errorf("preview lacks %q:\n%s", s, text)
		}
	}
	if strings.Contains(text, "@example.com") {
		t.Errorf("preview shows emails though DIGEST_INCLUDE_EMAILS is off:\n%s", text)
	}
	h.drain()
	for _, msg := range h.sl.Messages() {
		if msg.Kind == "message" {
			t.Errorf("the preview posted to %s", msg.Channel)
		}
	}
}

// Data is shown as data: a name with newlines stays on its line, a typed
// mention pings no one, and the notification text keeps every character of
// a name and an ID.
func TestHostileDataStaysData(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	start := t0.Add(26 * time.Hour)
	h.sb.AddBooking(bookingtest.DemoOwner, bookingtest.Booking{
		EventType: ptr("intro-call"), Start: start, End: start.Add(15 * time.Minute),
		BookerName: ptr("Eve\nMallory\r\n*boss* @channel <!channel>"), BookerEmail: ptr("eve@example.com"),
	})
	h.slash(ada, "list")
	m := h.reply(ada, "Eve Mallory")
	text := textOf(m.Blocks)
	for _, bad := range []string{"Eve\nMallory", "<!channel>"} {
		if strings.Contains(text, bad) {
			t.Errorf("the list shows %q:\n%s", bad, text)
		}
	}
	if !strings.Contains(text, "&lt;!channel&gt;") {
		t.Errorf("the typed mention is not escaped:\n%s", text)
	}
	var raw []map[string]any
	if err := json.Unmarshal(m.Blocks, &raw); err != nil {
		t.Fatal(err)
	}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["type"] == "mrkdwn" && v["verbatim"] != true {
				t.Errorf("mrkdwn text without verbatim: %v", v["text"])
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(raw)

	v := h.openModal(ada, "intro-call")
	in := bookingInputs(firstSlot, "first_last@example.com")
	in["name"] = "Grace first_last *Hopper*"
	h.submit(ada, v.ID, in)
	dm := h.dm(ada, "Booked")
	var id string
	for _, b := range upcoming(h) {
		if b.BookerEmail != nil && *b.BookerEmail == "first_last@example.com" {
			id = b.ID
		}
	}
	for _, want := range []string{"Booked.", "Grace first_last *Hopper*", id} {
		if !strings.Contains(dm.Text, want) {
			t.Errorf("the notification text %q lacks %q", dm.Text, want)
		}
	}
}

// Where bookbot sends people to the public booking page, it links it when
// the owner has said where it is.
func TestPublicBookingPageIsLinked(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(_ *harness, cfg *bot.Config) { cfg.BookingPage = "https://cal.example.com/ada?x=1|2" })
	h.slash(ada, "types")
	m := h.reply(ada, "Team sync")
	if text := textOf(m.Blocks); !strings.Contains(text, "<https://cal.example.com/ada?x=1%7C2|the public booking page>") {
		t.Errorf("no link to the booking page:\n%s", text)
	}
	h.slash(ada, "slots team-sync")
	if text := textOf(h.reply(ada, "is a round robin event").Blocks); !strings.Contains(text, "|the public booking page>") {
		t.Errorf("no link to the booking page:\n%s", text)
	}
}

// A failure says what happened and what to do in words; the API's answer
// is for the log.
func TestFailuresAreSaidInWords(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.sb.FailNext(bookingtest.EndpointListBookings, bookingtest.JSONError(401, "invalid token", 0))
	h.slash(ada, "list")
	m := h.reply(ada, "could not be loaded")
	text := textOf(m.Blocks)
	if !strings.Contains(text, "refused bookbot's key") || strings.Contains(text, "401") || strings.Contains(text, "GET /bookings") {
		t.Errorf("the failure reads like a log line:\n%s", text)
	}
	if !strings.Contains(h.logs.String(), "401") {
		t.Errorf("the log lacks the API's answer:\n%s", h.logs)
	}
}

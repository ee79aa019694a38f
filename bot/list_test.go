package bot_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/internal/testutil"
)

// The list shows every upcoming booking, in the reader's zone, by what
// people know it by, each with a menu to cancel it (which asks first),
// book the attendee again, or see its ID, which no row shows.
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
		secs := sectionsWith(m.Blocks, "cancel_booking") // each row's menu
		if len(secs) != len(want) {
			t.Fatalf("%s: %d bookings listed, want %d", u.user, len(secs), len(want))
		}
		for i, b := range want {
			text := sectionText(secs[i])
			acc, _ := secs[i]["accessory"].(map[string]any)
			menu := options(acc)
			if str(acc, "type") != "overflow" || len(menu) == 0 || menu[0].value != b.ID || menu[0].text != "Cancel…" {
				t.Errorf("%s: row %d menu %v, want Cancel… of %s first", u.user, i, menu, b.ID)
			}
			if again := len(menu) == 3 && menu[1].text == "Book again" && strings.HasPrefix(menu[1].value, "book-again:"); again != (b.EventType != nil) {
				t.Errorf("%s: row %d menu %v: Book again offered %v, want %v", u.user, i, menu, again, b.EventType != nil)
			}
			if last := menu[len(menu)-1]; last.text != "Booking ID" || last.value != "booking-id:"+b.ID {
				t.Errorf("%s: row %d menu %v, want Booking ID of %s last", u.user, i, menu, b.ID)
			}
			if strings.Contains(text, b.ID) {
				t.Errorf("%s: row %q shows the booking's ID", u.user, text)
			}
			// Berlin moves to CEST on the 29th: each time names its own offset.
			when := b.Start.In(u.loc).Format("15:04") + "–" + b.End.In(u.loc).Format("15:04 MST")
			wantParts := []string{when}
			switch {
			case b.EventType == nil && (b.BookerName == nil || *b.BookerName == ""):
				wantParts = append(wantParts, "* · _no event or attendee on record_")
			case b.EventType != nil:
				wantParts = append(wantParts, title[*b.EventType])
			default:
				wantParts = append(wantParts, "* · — ·") // no event: a dash after the time
			}
			if b.BookerName != nil {
				wantParts = append(wantParts, *b.BookerName)
			}
			if b.BookerEmail != nil {
				wantParts = append(wantParts, *b.BookerEmail)
			}
			for _, p := range wantParts {
				if !strings.Contains(text, p) {
					t.Errorf("%s: row for %s lacks %q: %q", u.user, b.ID, p, text)
				}
			}
			if strings.Contains(text, "\n") {
				t.Errorf("%s: row for %s is more than one line: %q", u.user, b.ID, text)
			}
			// The row sits under its day, named in the reader's zone.
			if day := dayOf(m.Blocks, b.ID); day != wantDay(b.Start, u.loc) {
				t.Errorf("%s: %s listed under %q, want %q", u.user, b.ID, day, wantDay(b.Start, u.loc))
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

// A full list (the API's 100) says so and pages.
func TestListOfManyBookingsPages(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for i := range 118 {
		h.sb.AddBooking(bookingtest.DemoOwner, bookingtest.Booking{
			EventType: testutil.Ptr("consultation"), Start: time.Date(2026, 4, 6, 7, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour),
			BookerName: testutil.Ptr(fmt.Sprintf("Attendee %03d", i)), BookerEmail: testutil.Ptr(fmt.Sprintf("a%03d@example.com", i)),
		})
	}
	want := upcoming(h)
	if len(want) != 100 {
		t.Fatalf("%d listed", len(want))
	}
	h.slash(ada, "list")
	m := h.reply(ada, "Upcoming bookings (first 100)")
	text := textOf(m.Blocks)
	for _, s := range []string{"1–15 of 100", "only the next 100 bookings", "later ones may be missing"} {
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
		return x.Kind == "response_url" && strings.Contains(textOf(x.Blocks), "16–30 of 100")
	})
	if strings.Contains(textOf(p2.Blocks), "at most 100") {
		t.Errorf("the warning about the list's 100 is repeated on page 2")
	}
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
		return x.Kind == "response_url" && x.ReplaceOriginal && x.OriginalTS == m.TS && strings.Contains(textOf(x.Blocks), "1–15 of 100")
	})
}

// Cancelling from the list shows the list again with the booking struck
// through, and a double press cancels once.
func TestCancelFromListOnceOnDoublePress(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.slash(ada, "list")
	list := h.askCancel(ada, h.reply(ada, "Upcoming bookings ("), "5eed0000-0000-4000-8000-000000000002")
	h.drain()
	listed := len(h.requests(bookingtest.EndpointListBookings))
	// Both presses arrive before the first press's "Cancelling…" replaces
	// the list, as with a quick double click.
	release := h.sl.Hold("response_url")

	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for range 2 {
		wg.Go(func() {
			_, err := h.sl.SendInteraction(h.ctx(), confirmCancel(ada, list, "5eed0000-0000-4000-8000-000000000002"))
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
	if !strings.Contains(text, "~") || rowOf(done.Blocks, "5eed0000-0000-4000-8000-000000000001") == "" || !strings.HasPrefix(done.Text, "Cancelled: ") {
		t.Errorf("the list after the cancel:\n%s\n(text %q)", text, done.Text)
	}
	// Counted are the bookings still upcoming, not the struck one.
	if !strings.Contains(text, "Upcoming bookings (11)") || !strings.Contains(text, "1–11 of 11") {
		t.Errorf("the list after the cancel counts the cancelled booking:\n%s", text)
	}
	if got := values(elements(done.Blocks, "cancel_booking")); slices.Contains(got, "5eed0000-0000-4000-8000-000000000002") || len(got) != 11 {
		t.Errorf("the list after the cancel has menus for %v, want the 11 others", got)
	}
	h.drain()
	if n := len(h.requests(bookingtest.EndpointCancelBooking)); n != 1 {
		t.Errorf("%d POST cancel requests for a double press, want 1", n)
	}
	// The booking looked up before the cancel, and the list that settled
	// it, which the page shown again is made of.
	if n := len(h.requests(bookingtest.EndpointListBookings)) - listed; n != 2 {
		t.Errorf("%d GET /bookings for one cancel from the list, want 2", n)
	}
	for _, b := range h.sb.Bookings(bookingtest.DemoOwner) {
		if b.Cancelled != (b.ID == "5eed0000-0000-4000-8000-000000000002" || b.ID == "5eed0000-0000-4000-8000-000000000014") {
			t.Errorf("%s cancelled = %v", b.ID, b.Cancelled)
		}
	}
}

// A cancel from the list that does not go through keeps the list, with
// what happened above its rows.
func TestCancelFromListFailedKeepsTheList(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.slash(ada, "list")
	id := "5eed0000-0000-4000-8000-000000000002"
	ask := h.askCancel(ada, h.reply(ada, "Upcoming bookings ("), id)
	h.sb.FailNext(bookingtest.EndpointCancelBooking, bookingtest.JSONError(403, "forbidden", 0))
	h.interact(confirmCancel(ada, ask, id))
	done := h.waitMessage("not cancelled", func(m slacktest.Message) bool {
		return m.Kind == "response_url" && strings.Contains(textOf(m.Blocks), "Not cancelled")
	})
	text := textOf(done.Blocks)
	if !done.ReplaceOriginal || !strings.Contains(text, "Upcoming bookings (12)") || len(elements(done.Blocks, "cancel_booking")) != 12 {
		t.Errorf("the list after a refused cancel:\n%s", text)
	}
}

// `cancel <id>` asks first; nothing is cancelled before the press.
func TestCancelCommandAsksFirst(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.slash(ada, "cancel 5eed0000-0000-4000-8000-000000000003")
	m := h.reply(ada, "Cancel this booking?")
	text := textOf(m.Blocks)
	for _, s := range []string{"Deep dive", "Alan Turing", "Tue 24 Mar, 14:00–15:00 CET"} {
		if !strings.Contains(text, s) {
			t.Errorf("confirmation lacks %q:\n%s", s, text)
		}
	}
	if strings.Contains(text, "5eed0000-0000-4000-8000-000000000003") {
		t.Errorf("the confirmation names the booking by its ID:\n%s", text)
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
	asked := h.reply(ada, "Katherine Johnson")
	h.interact(slacktest.BlockAction(ada, "cancel_keep", "5eed0000-0000-4000-8000-000000000004", slacktest.InMessage(asked)))
	if kept := h.reply(ada, "Nothing was cancelled"); !kept.ReplaceOriginal {
		t.Errorf("Keep it did not answer in place of the question")
	}
	h.drain()
	if n := len(h.requests(bookingtest.EndpointCancelBooking)); n != 0 {
		t.Fatalf("%d cancel requests after Keep it", n)
	}

	h.interact(slacktest.BlockAction(ada, "cancel_booking", "5eed0000-0000-4000-8000-000000000003", slacktest.InMessage(m)))
	// What was cancelled, named, its time struck through, who cancelled
	// it; booking the attendee again one press away; no ID.
	done := h.reply(ada, "Cancelled: Deep dive with Alan Turing, tomorrow 14:00.")
	if text := textOf(done.Blocks); !strings.Contains(text, "\n~tomorrow, 14:00–15:00 CET~\nCancelled by <@UADA> ") ||
		!strings.HasSuffix(strings.TrimSpace(text), ".\nBook again\nUpcoming bookings") || strings.Contains(text, "5eed0000-0000-4000-8000-000000000003") {
		t.Errorf("the outcome:\n%s", text)
	}
	h.drain()
	if n := len(h.requests(bookingtest.EndpointCancelBooking)); n != 1 {
		t.Errorf("%d cancel requests after one press", n)
	}

	h.slash(ada, "cancel bk_nosuchid01")
	m = h.reply(ada, "bk_nosuchid01")
	if text := textOf(m.Blocks); !strings.Contains(text, "not among the upcoming bookings") {
		t.Errorf("unknown ID:\n%s", text)
	}
	h.drain()
	if n := len(h.requests(bookingtest.EndpointCancelBooking)); n != 1 {
		t.Errorf("asking about an unknown ID sent a cancel")
	}
}

// Asking again to cancel a booking that was cancelled offers no Cancel:
// the service answers a repeat cancel as it answers the first, so nothing
// would change but another notice to the attendees. A Cancel pressed on an
// older question after all is not reported as cancelling it.
func TestCancelAgainSaysItWasCancelledAlready(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const id = "5eed0000-0000-4000-8000-000000000003"
	h.slash(ada, "cancel "+id)
	first := h.reply(ada, "Cancel this booking?")
	h.slash(ada, "cancel "+id)
	stale := h.waitMessage("a second question", func(m slacktest.Message) bool {
		return m.Kind == "response_url" && m.TS != first.TS && strings.Contains(textOf(m.Blocks), "Cancel this booking?")
	})
	h.interact(slacktest.BlockAction(ada, "cancel_booking", id, slacktest.InMessage(first)))
	h.reply(ada, "Cancelled: Deep dive with Alan Turing, tomorrow 14:00.")
	h.drain()

	h.slash(ada, "cancel "+id)
	again := h.reply(ada, "Nothing to cancel")
	if text := textOf(again.Blocks); !strings.Contains(text, "cancelled already") || !strings.Contains(text, id) {
		t.Errorf("asked again:\n%s", text)
	}
	if els := elements(again.Blocks, "cancel_booking"); len(els) != 0 {
		t.Errorf("asked again, it offers a cancel: %v", els)
	}
	if els := elements(again.Blocks, "show_list"); len(els) != 1 {
		t.Errorf("asked again, no Upcoming bookings: %s", again.Blocks)
	}

	// The older question's button: the service answers cancelled, as it
	// does for any repeat.
	h.interact(slacktest.BlockAction(ada, "cancel_booking", id, slacktest.InMessage(stale)))
	answered := h.reply(ada, "may have changed nothing")
	if strings.HasPrefix(answered.Text, "Cancelled") || strings.Contains(textOf(answered.Blocks), "Cancelled:") {
		t.Errorf("a repeat cancel is reported as cancelling the booking: %q\n%s", answered.Text, textOf(answered.Blocks))
	}
	h.drain()
	if n := len(h.requests(bookingtest.EndpointCancelBooking)); n != 2 {
		t.Errorf("%d cancels sent, want the first and the older question's", n)
	}
}

// dayOf is the day heading the list shows above the row of booking id.
func dayOf(blocks []byte, id string) string {
	var raw []map[string]any
	_ = json.Unmarshal(blocks, &raw)
	day := ""
	for _, b := range raw {
		text, _ := b["text"].(map[string]any)
		s, _ := text["text"].(string)
		if b["type"] != "section" {
			continue
		}
		if _, row := b["accessory"]; !row && strings.HasPrefix(s, "*") && strings.HasSuffix(s, "*") {
			day = strings.Trim(s, "*")
		}
		if strings.HasSuffix(str(b, "block_id"), ":"+id) {
			return day
		}
	}
	return ""
}

// wantDay is how the list names the day of t for a reader in loc at t0.
func wantDay(t time.Time, loc *time.Location) string {
	switch d, n := t.In(loc), t0.In(loc); {
	case d.Format("2006-01-02") == n.Format("2006-01-02"):
		return "Today, " + d.Format("Mon 2 Jan")
	case d.Format("2006-01-02") == n.AddDate(0, 0, 1).Format("2006-01-02"):
		return "Tomorrow, " + d.Format("Mon 2 Jan")
	default:
		return d.Format("Mon 2 Jan")
	}
}

// A row's menu: Cancel… asks in the row and Keep it puts the row back,
// with nothing cancelled; Book again opens the form with the event and
// the attendee filled in; Booking ID tells the person alone the ID, and
// leaves the list as it was.
func TestListRowMenu(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const id = "5eed0000-0000-4000-8000-000000000002"
	h.slash(ada, "list")
	list := h.reply(ada, "Upcoming bookings (")

	h.interact(slacktest.BlockAction(ada, "cancel_booking", "booking-id:"+id, slacktest.InMessage(list), slacktest.WithBlockID(rowOf(list.Blocks, id))))
	shown := h.reply(ada, "This booking's ID")
	if !strings.Contains(textOf(shown.Blocks), id) || shown.ReplaceOriginal || !strings.Contains(shown.Text, id) {
		t.Errorf("Booking ID answered %+v: want the ID, in a reply of its own", shown)
	}

	ask := h.askCancel(ada, list, id)
	text := textOf(ask.Blocks)
	for _, s := range []string{"Cancel this booking?", "notified", "Grouped or series", "Grace Hopper", "Upcoming bookings (12)"} {
		if !strings.Contains(text, s) {
			t.Errorf("the asking list lacks %q:\n%s", s, text)
		}
	}
	if ask.OriginalTS != list.TS {
		t.Errorf("the question did not replace the list: %+v", ask)
	}
	if menus := len(sectionsWith(ask.Blocks, "cancel_booking")); menus != 11 {
		t.Errorf("%d rows keep their menu while one asks, want 11", menus)
	}
	if got := values(elements(ask.Blocks, "cancel_keep")); !slices.Equal(got, []string{id}) {
		t.Errorf("Keep it buttons %v", got)
	}
	h.interact(slacktest.BlockAction(ada, "cancel_keep", id, slacktest.InMessage(ask), slacktest.WithBlockID(rowOf(ask.Blocks, id))))
	back := h.waitMessage("the list again", func(m slacktest.Message) bool {
		return m.Kind == "response_url" && m.ReplaceOriginal && len(sectionsWith(m.Blocks, "cancel_booking")) == 12
	})
	if strings.Contains(textOf(back.Blocks), "Cancel this booking?") {
		t.Errorf("the row still asks after Keep it:\n%s", textOf(back.Blocks))
	}
	h.drain()
	if n := len(h.requests(bookingtest.EndpointCancelBooking)); n != 0 {
		t.Errorf("%d cancels sent without Cancel booking pressed", n)
	}

	var again string
	for _, o := range options(sectionsWith(back.Blocks, "cancel_booking")[1]["accessory"].(map[string]any)) {
		if o.text == "Book again" {
			again = o.value
		}
	}
	h.interact(slacktest.BlockAction(ada, "cancel_booking", again, slacktest.InMessage(back), slacktest.WithBlockID(rowOf(back.Blocks, id))))
	form := h.waitView("the form for Grace again", func(v slacktest.View) bool {
		return v.Type == "modal" && v.TriggerUser == ada && len(elements(v.Blocks, "slot")) == 1
	})
	for action, want := range map[string]string{"name": "Grace Hopper", "email": "grace.hopper@example.org"} {
		if els := elements(form.Blocks, action); len(els) != 1 || str(els[0], "initial_value") != want {
			t.Errorf("%s field: %v, want %q", action, els, want)
		}
	}
	if ev := elements(form.Blocks, "event_type"); len(ev) != 1 || !strings.Contains(string(mustJSON(ev[0]["initial_option"])), `"consultation"`) {
		t.Errorf("event type field: %v", ev)
	}
}

// The row asking about a cancel names event types as the list did, also
// once the event types read for the list are no longer recent.
func TestListAskingNamesEventTypes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const id = "5eed0000-0000-4000-8000-000000000002"
	h.slash(ada, "list")
	list := h.reply(ada, "Upcoming bookings (")
	h.clock.Advance(time.Hour)
	ask := h.askCancel(ada, list, id)
	if text := textOf(ask.Blocks); !strings.Contains(text, "Consultation") {
		t.Errorf("the asking list does not name the event type:\n%s", text)
	}
}

// A cancel whose outcome is unclear (its answer lost, the list unreadable
// after it) offers Check again, which asks the list afresh and sends
// nothing: here the cancel went through, so there is nothing to cancel.
func TestUnclearCancelChecksAgain(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const id = "5eed0000-0000-4000-8000-000000000003"
	h.slash(ada, "cancel "+id)
	ask := h.reply(ada, "Cancel this booking?")
	h.sb.CommitThenDrop(bookingtest.EndpointCancelBooking)
	for range 12 { // every try of the reads that settle it
		h.sb.FailNext(bookingtest.EndpointListBookings, bookingtest.HTMLError(502))
	}
	h.interact(slacktest.BlockAction(ada, "cancel_booking", id, slacktest.InMessage(ask)))
	unclear := h.waitMessage("an unclear outcome", func(m slacktest.Message) bool {
		return m.Kind == "response_url" && len(elements(m.Blocks, "cancel_check")) == 1
	})
	h.drain()
	h.sb.ClearFaults()
	h.interact(slacktest.BlockAction(ada, "cancel_check", id, slacktest.InMessage(unclear)))
	checked := h.reply(ada, "Nothing to cancel")
	if !checked.ReplaceOriginal || !strings.Contains(textOf(checked.Blocks), "cancelled already") {
		t.Errorf("Check again:\n%s", textOf(checked.Blocks))
	}
	h.drain()
	if n := len(h.requests(bookingtest.EndpointCancelBooking)); n != 1 {
		t.Errorf("%d cancels sent, want the one", n)
	}
}

// While the booking service works on a cancel, the message the Cancel
// was pressed in says what is being cancelled, by event, attendee and
// time, not by ID; the outcome then takes its place.
func TestCancellingSaysWhatItCancels(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const id = "5eed0000-0000-4000-8000-000000000003"
	h.slash(ada, "cancel "+id)
	m := h.reply(ada, "Cancel this booking?")
	release := h.sb.HoldNext(bookingtest.EndpointCancelBooking)
	h.interact(slacktest.BlockAction(ada, "cancel_booking", id, slacktest.InMessage(m)))
	working := h.waitMessage("cancelling", func(x slacktest.Message) bool {
		return x.Kind == "response_url" && x.ReplaceOriginal && strings.HasPrefix(x.Text, "Cancelling")
	})
	release()
	if text := textOf(working.Blocks); !strings.Contains(text, "*Cancelling:* Deep dive with Alan Turing, tomorrow, 14:00–15:00 CET…") || strings.Contains(text+working.Text, id) {
		t.Errorf("while cancelling: %q\n%s", working.Text, text)
	}
	h.reply(ada, "Cancelled: Deep dive with Alan Turing")
}

package bot_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/bot/slacktest"
)

// `types` lists every event type; solo ones can be booked from there.
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
	// In the API's order: by slug.
	solo := []string{"consultation", "deep-dive", "intro-call", "office-hours"}
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

// Slots are grouped by day in the requester's zone, each day bookable.
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
		// A few days at a time; "More days" shows the next ones in place.
		secs := sectionsWith(m.Blocks, "book_slot")
		if len(secs) > 5 {
			t.Errorf("%s: %d days in one message, want a few", u.user, len(secs))
		}
		for cur := m; ; {
			next := ""
			if more := elements(cur.Blocks, "slots_more"); len(more) == 1 {
				next = str(more[0], "value")
			}
			if next == "" {
				break
			}
			h.interact(slacktest.BlockAction(u.user, "slots_more", next, slacktest.InMessage(cur)))
			prev := string(cur.Blocks)
			cur = h.waitMessage("more days for "+u.user, func(x slacktest.Message) bool {
				return x.Kind == "response_url" && x.User == u.user && x.ReplaceOriginal && string(x.Blocks) != prev && len(sectionsWith(x.Blocks, "book_slot")) > 0
			})
			secs = append(secs, sectionsWith(cur.Blocks, "book_slot")...)
		}
		days[u.user] = len(secs)
		if len(secs) < 10 {
			t.Fatalf("%s: %d days, want the 10 working days of the next 14", u.user, len(secs))
		}
		seen := map[string]bool{}
		var labels []string
		for i, sec := range secs {
			lines := strings.Split(sectionText(sec), "\n")
			// A day in another zone abbreviation than the page's first
			// names it: "*Mon 6 Apr* (NZST)".
			heading, note, _ := strings.Cut(lines[0], " (")
			label := strings.Trim(heading, "*")
			note = strings.TrimSuffix(note, ")")
			labels = append(labels, label)
			acc, _ := sec["accessory"].(map[string]any)
			opts := options(acc)
			var times, ends []string
			for j, o := range opts {
				ev, raw, _ := strings.Cut(o.value, " ")
				start, err := time.Parse(time.RFC3339Nano, raw)
				if ev != "intro-call" || err != nil {
					t.Errorf("%s: option value %q", u.user, o.value)
					continue
				}
				if got := wantDay(start, u.loc); got != label {
					t.Errorf("%s: slot %s (%s there) listed under %q", u.user, raw, got, label)
				}
				if abbr := start.In(u.loc).Format("MST"); note != "" && note != abbr {
					t.Errorf("%s: slot %s (%s there) listed under a day noted %q", u.user, raw, abbr, note)
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
				ends = append(ends, start.Add(15*time.Minute).In(u.loc).Format("15:04"))
			}
			// From the first start to the last end: each meeting lies between.
			summary := fmt.Sprintf("%d free times between %s and %s", len(times), times[0], ends[len(ends)-1])
			if len(times) == 1 {
				summary = "1 free time, " + times[0] + "–" + ends[0]
			}
			if len(lines) != 2 || lines[1] != summary {
				t.Errorf("%s: day %q reads %q, its select offers %q", u.user, label, lines[1:], times)
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

	// Picking a slot opens the modal with it chosen (from a first page:
	// Ada's has moved on to later days).
	h.slash(ada, "slots intro-call")
	adaMsg = h.waitMessage("a first page of slots", func(x slacktest.Message) bool {
		return x.Kind == "response_url" && x.User == ada && !x.ReplaceOriginal && x.TS != adaMsg.TS && strings.Contains(textOf(x.Blocks), "Free slots")
	})
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

// Many event types come a page at a time, and Next reaches every one of
// them: none is hidden.
func TestTypesPages(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for i := range 20 {
		h.sb.AddEventType(bookingtest.DemoOwner, bookingtest.EventType{Slug: fmt.Sprintf("extra-%02d", i), Title: fmt.Sprintf("Extra %02d", i), DurationMinutes: 30})
	}
	h.slash(ada, "types")
	cur := h.reply(ada, "event types")
	seen := map[string]bool{}
	for {
		for _, b := range elements(cur.Blocks, "show_slots") {
			seen[str(b, "value")] = true
		}
		var next string
		for _, b := range elements(cur.Blocks, "types_page") {
			if str(b["text"].(map[string]any), "text") == "Next" {
				next = str(b, "value")
			}
		}
		if next == "" {
			break
		}
		h.interact(slacktest.BlockAction(ada, "types_page", next, slacktest.InMessage(cur), slacktest.WithBlockID("types_nav")))
		n, _ := strconv.Atoi(next)
		first := fmt.Sprintf("%d–", n*8+1) // the page's count: "9–16 of 26."
		cur = h.waitMessage("page "+next, func(x slacktest.Message) bool {
			return x.Kind == "response_url" && x.User == ada && x.ReplaceOriginal && strings.Contains(textOf(x.Blocks), first)
		})
	}
	for i := range 20 {
		if slug := fmt.Sprintf("extra-%02d", i); !seen[slug] {
			t.Errorf("%s is on no page; seen %v", slug, seen)
		}
	}
}

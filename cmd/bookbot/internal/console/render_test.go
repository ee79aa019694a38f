package console

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestMrkdwn(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 23, 23, 30, 0, 0, berlin) // 22:30 UTC: the 24th is tomorrow in Berlin, today in UTC
	r := &Renderer{Zone: berlin, Now: func() time.Time { return now }}
	for _, tc := range []struct{ in, want string }{
		{"<!date^1774339200^{date_short_pretty} {time}|Tue 24 Mar, 09:00>", "Tomorrow 09:00"},
		{"<!date^1774339200^{date_short_pretty}|Tue 24 Mar>", "Tomorrow"},
		{"<!date^1774252800^{date_short_pretty} {time}|Mon 23 Mar, 09:00>", "Today 09:00"},
		{"<!date^1774166400^{date_short_pretty}|Sun 22 Mar>", "Yesterday"},
		{"<!date^1774425600^{date_short_pretty} {time}|Wed 25 Mar, 09:00>", "Wed 25 Mar 09:00"},
		{"<!date^1774340100^{time}|09:15 CET>", "09:15"},
		{"<!date^1774340100^{date_pretty}|the fallback>", "the fallback"},
		{"<https://example.com|the page>", "the page (https://example.com)"},
		{"<mailto:a@example.com>", "mailto:a@example.com"},
		{"hi <@UADA> and <!here>", "hi @UADA and @here"},
		{":white_check_mark: *Booked.* a &lt;b&gt; &amp; c", "✅ *Booked.* a <b> & c"},
	} {
		if got := r.Mrkdwn(tc.in); got != tc.want {
			t.Errorf("Mrkdwn(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestBlocksNumberControls(t *testing.T) {
	raw := json.RawMessage(`[
		{"type":"header","text":{"type":"plain_text","text":"Upcoming bookings"}},
		{"type":"section","block_id":"b1","text":{"type":"mrkdwn","text":"*Tue* Ada"},
		 "accessory":{"type":"button","action_id":"cancel_booking","value":"bk_1","text":{"type":"plain_text","text":"Cancel"},
		  "confirm":{"title":{"type":"plain_text","text":"Cancel this booking?"},"text":{"type":"mrkdwn","text":"Attendees may be notified."}}}},
		{"type":"context","elements":[{"type":"mrkdwn","text":"Times in Europe/Berlin"}]},
		{"type":"divider"},
		{"type":"input","block_id":"slot_block","label":{"type":"plain_text","text":"Time"},
		 "element":{"type":"static_select","action_id":"slot","options":[
		   {"text":{"type":"plain_text","text":"09:00–09:15"},"value":"s1"},
		   {"text":{"type":"plain_text","text":"09:15–09:30"},"value":"s2"}]}},
		{"type":"input","block_id":"email","label":{"type":"plain_text","text":"Email"},"hint":{"type":"plain_text","text":"A real invitation goes here."},
		 "element":{"type":"email_text_input","action_id":"email"}},
		{"type":"actions","block_id":"acts","elements":[{"type":"button","action_id":"more","value":"2","text":{"type":"plain_text","text":"Next"}}]}
	]`)
	r := &Renderer{Typed: map[string]string{"email": "grace@example.com"}}
	got := r.Blocks(raw, Where{Message: -1, ViewID: "V1"},
		map[string]map[string]string{"slot_block": {"slot": "s2"}},
		map[string]string{"email": "Enter an email address."})
	for _, want := range []string{
		"== Upcoming bookings ==", "*Tue* Ada", "  [1] Cancel", "  (Times in Europe/Berlin)", "----",
		"  [2] Time: 09:15–09:30", " 1) 09:00–09:15 2) 09:15–09:30",
		"  [3] Email: grace@example.com", "      A real invitation goes here.", "      ! Enter an email address.",
		"  [4] Next",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rendering lacks %q:\n%s", want, got)
		}
	}
	if len(r.Controls) != 4 {
		t.Fatalf("%d controls: %+v", len(r.Controls), r.Controls)
	}
	c := r.Controls
	if c[0].Kind != "button" || c[0].Value != "bk_1" || !strings.Contains(c[0].Confirm, "Attendees may be notified") || c[0].BlockID != "b1" {
		t.Errorf("cancel button: %+v", c[0])
	}
	if c[1].Kind != "select" || len(c[1].Options) != 2 || c[1].Dispatch || c[1].Where.ViewID != "V1" {
		t.Errorf("slot select: %+v", c[1])
	}
	if c[2].Kind != "input" || c[2].ActionID != "email" {
		t.Errorf("email input: %+v", c[2])
	}
	if !c[3].Dispatch || c[3].N != 4 {
		t.Errorf("actions button: %+v", c[3])
	}
}

func TestBlocksToleratesJunk(t *testing.T) {
	r := &Renderer{}
	for _, raw := range []string{``, `null`, `{}`, `[{"type":"section"}]`, `[{"type":"unknown","text":{"type":"mrkdwn","text":"x"}}]`, `[1,"a"]`} {
		_ = r.Blocks(json.RawMessage(raw), Where{}, nil, nil) // must not panic
	}
}

package bot_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/bot/slacktest"
)

// Help, unknown subcommands and bad arguments are answered in the ack,
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
		if !strings.Contains(text, "`/booking types` – event types") || !strings.Contains(text, "`/booking cancel &lt;booking-id&gt;`") {
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

// People not on the allow-list are refused politely and cost no booking
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
	list := h.reply(ada, "Upcoming bookings (")
	h.drain()
	h.sb.ResetRequests()

	h.interact(chooseCancel(eve, list, "5eed0000-0000-4000-8000-000000000001"))
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
	press := chooseCancel(ada, list, "5eed0000-0000-4000-8000-000000000001")
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

// After Slack asks the bot to reconnect, it serves on the new socket.
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

// The booking key and the Slack tokens never leave the process.
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
	h.reply(ada, "Not cancelled")
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

// Redelivered slash commands and button presses are acted on once.
func TestRedeliveredEnvelopesActOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ack := h.slash(ada, "list")
	list := h.reply(ada, "Upcoming bookings")
	if _, err := h.sl.Redeliver(h.ctx(), ack.EnvelopeID); err != nil {
		t.Fatal(err)
	}
	ask := h.askCancel(ada, list, "5eed0000-0000-4000-8000-000000000004")
	press := h.interact(confirmCancel(ada, ask, "5eed0000-0000-4000-8000-000000000004"))
	if _, err := h.sl.Redeliver(h.ctx(), press.EnvelopeID); err != nil {
		t.Fatal(err)
	}
	h.reply(ada, "Cancelled: ")
	h.drain()
	if n := len(h.requests(bookingtest.EndpointCancelBooking)); n != 1 {
		t.Errorf("%d cancels", n)
	}
	lists := 0
	for _, m := range h.sl.Messages() {
		// The list shown again, its row asking or struck through, is not a reply.
		if text := textOf(m.Blocks); strings.Contains(text, "Upcoming bookings (") && !m.ReplaceOriginal {
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

package bot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
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
	"github.com/bookbot/bookbot/internal/blockkit"
	"github.com/bookbot/bookbot/internal/fakeclock"
	"github.com/bookbot/bookbot/internal/testutil"
)

// Secrets the harness runs with. They are distinctive, so a test can prove
// that none of them ever reaches a log line, Slack or a Web API call.
const (
	testKey      = "bk_live_7Qz9XkeyW4tq2Lm8sEcr3t"
	testBotToken = "xoxb-20260323-botSECRET-9f8e7d6c5b4a"
	testAppToken = "xapp-1-A0TEST-appSECRET-1a2b3c4d5e6f"
)

// Test users: two allowed, in different zones, and one who is not allowed.
const (
	ada = "UADA" // Europe/Berlin
	bob = "UBOB" // America/New_York
	eve = "UEVE" // not on the allow-list
	kiw = "UKIW" // Pacific/Auckland: the owner's working day spans two of hers
)

// t0 is Monday 2026-03-23 10:07 UTC: 11:07 in Berlin (CET, DST starts on
// the 29th) and 06:07 in New York (EDT since the 8th). The sandbox owner
// works 09:00–17:00 Berlin time.
var t0 = time.Date(2026, 3, 23, 10, 7, 0, 0, time.UTC)

var (
	berlin   = testutil.Zone("Europe/Berlin")
	newYork  = testutil.Zone("America/New_York")
	auckland = testutil.Zone("Pacific/Auckland")
)

// firstSlot is the first intro-call slot GET /slots offers at t0, exactly as
// the sandbox writes it (UTC, no fraction): 11:15 Berlin, 06:15 New York.
const firstSlot = "2026-03-23T10:15:00Z"

// harness is the real wiring: slack-go's Socket Mode client against the
// Slack stand-in, the real booking client against the sandbox, and the bot
// between them, running until the test ends.
type harness struct {
	t      testing.TB
	sl     *slacktest.Server
	sb     *bookingtest.Server
	clock  *fakeclock.Clock // the bot's and the booking client's; tests move it
	bot    *bot.Bot
	client *booking.Client // the bot's booking client
	logs   *testutil.Buffer

	stopOnce sync.Once
	cancel   context.CancelFunc
	done     chan error // Run's result
}

// newHarness starts the bot; opts adjust its configuration (the client is
// already wired to the sandbox, so options can use it too).
func newHarness(t testing.TB, opts ...func(*harness, *bot.Config)) *harness {
	t.Helper()
	return newHarnessWith(t, nil, opts...)
}

// newHarnessWith starts the bot with a booking client built with extra
// options (a journal, a dry run).
func newHarnessWith(t testing.TB, clientOpts []booking.Option, opts ...func(*harness, *bot.Config)) *harness {
	t.Helper()
	h := &harness{t: t, clock: fakeclock.New(t0), logs: &testutil.Buffer{}}

	// The sandbox's clock stays at t0; the bot's may move.
	h.sb = bookingtest.NewServer(t, bookingtest.WithClock(func() time.Time { return t0 }))
	// Give the demo owner a key of our own; the demo key stops working.
	h.sb.AddOwner(testKey, bookingtest.DemoOwner, berlin, bookingtest.Weekdays(9*time.Hour, 17*time.Hour))

	h.sl = slacktest.NewServer(t, func(o *slacktest.Options) {
		o.BotToken, o.AppToken = testBotToken, testAppToken
	})
	h.sl.AddUser(slacktest.User{ID: ada, Name: "ada", RealName: "Ada Lovelace", TZ: "Europe/Berlin"})
	h.sl.AddUser(slacktest.User{ID: bob, Name: "bob", RealName: "Bob Kahn", TZ: "America/New_York"})
	h.sl.AddUser(slacktest.User{ID: kiw, Name: "kiri", RealName: "Kiri Te Kanawa", TZ: "Pacific/Auckland"})
	h.sl.AddUser(slacktest.User{ID: eve, Name: "eve", RealName: "Eve Mallory", TZ: "Europe/London"})

	key, err := booking.NewKey(testKey)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	client, err := booking.NewClient(h.sb.URL, key, append([]booking.Option{
		booking.WithClock(h.clock.Now),
		booking.WithSleep(func(context.Context, time.Duration) error { return nil }),
		booking.WithLogger(log),
	}, clientOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	// Calls to Slack have a transport of their own, as bookbot's do: the
	// default one is shared with the package's other tests, and each
	// httptest.Server.Close closes its idle connections, under a post
	// about to reuse one.
	toSlack := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone(), Timeout: 10 * time.Second}
	t.Cleanup(toSlack.CloseIdleConnections)
	api := slack.New(h.sl.BotToken(), slack.OptionAPIURL(h.sl.APIURL), slack.OptionAppLevelToken(h.sl.AppToken()), slack.OptionHTTPClient(toSlack))
	sm := socketmode.New(api)
	cfg := bot.Config{
		Command:    "/booking",
		Allowed:    func(id string) bool { return id == ada || id == bob || id == kiw },
		Contact:    ada,
		TeamID:     h.sl.TeamID(),
		Now:        h.clock.Now,
		Log:        log,
		HTTPClient: toSlack,
	}
	h.client = client
	for _, o := range opts {
		o(h, &cfg)
	}
	h.bot = bot.New(cfg, client, api)

	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan error, 1)
	go func() { h.done <- h.bot.Run(ctx, sm, 5*time.Second) }()
	// Registered after the servers' cleanups, so it runs before them.
	t.Cleanup(func() {
		h.stop()
		if t.Failed() {
			t.Logf("the bot's log:\n%s", h.logs)
		}
	})
	if err := h.sl.WaitConnected(h.ctx()); err != nil {
		t.Fatalf("the bot did not connect: %v", err)
	}
	return h
}

// stop shuts the bot down as SIGTERM does and waits for Run to return.
func (h *harness) stop() {
	h.stopOnce.Do(func() {
		h.cancel()
		select {
		case err := <-h.done:
			if err != nil {
				h.t.Errorf("Run: %v", err)
			}
		case <-time.After(15 * time.Second):
			h.t.Errorf("Run did not return 15 s after its context was cancelled")
		}
	})
}

// ctx bounds one wait.
func (h *harness) ctx() context.Context {
	ctx, cancel := context.WithTimeout(h.t.Context(), 10*time.Second)
	h.t.Cleanup(cancel)
	return ctx
}

// slash runs the slash command as user and returns its ack.
func (h *harness) slash(user, text string) slacktest.Ack {
	h.t.Helper()
	ack, err := h.sl.SendSlashCommand(h.ctx(), slacktest.SlashCommand{Command: "/booking", Text: text, UserID: user})
	if err != nil {
		h.t.Fatalf("/booking %s: %v", text, err)
	}
	return ack
}

// interact delivers an interaction and returns its ack.
func (h *harness) interact(payload any) slacktest.Ack {
	h.t.Helper()
	ack, err := h.sl.SendInteraction(h.ctx(), payload)
	if err != nil {
		h.t.Fatalf("interaction: %v", err)
	}
	return ack
}

// drain waits for all the work the bot started to finish.
func (h *harness) drain() {
	h.t.Helper()
	if !h.bot.Drain(10 * time.Second) {
		h.t.Fatal("the bot's work did not finish within 10 s")
	}
}

// requests returns the sandbox requests to endpoint ("" for all).
func (h *harness) requests(endpoint string) []bookingtest.Request {
	var out []bookingtest.Request
	for _, r := range h.sb.Requests() {
		if endpoint == "" || r.Endpoint == endpoint {
			out = append(out, r)
		}
	}
	return out
}

func (h *harness) waitMessage(what string, match func(slacktest.Message) bool) slacktest.Message {
	h.t.Helper()
	m, err := h.sl.WaitMessage(h.ctx(), match)
	if err != nil {
		var seen []string
		for _, m := range h.sl.Messages() {
			seen = append(seen, fmt.Sprintf("[%s to %s/%s] %s", m.Kind, m.Channel, m.User, clipText(textOf(m.Blocks)+" | "+m.Text, 400)))
		}
		h.t.Fatalf("no message %s: %v\nmessages:\n%s", what, err, strings.Join(seen, "\n"))
	}
	return m
}

func (h *harness) waitView(what string, match func(slacktest.View) bool) slacktest.View {
	h.t.Helper()
	v, err := h.sl.WaitView(h.ctx(), match)
	if err != nil {
		var seen []string
		for _, v := range h.sl.Views() {
			seen = append(seen, fmt.Sprintf("[%s %s %s closed=%v updates=%d] %s", v.Type, v.ID, v.TriggerUser, v.Closed, v.Updates, clipText(textOf(v.Blocks), 600)))
		}
		h.t.Fatalf("no view %s: %v\nviews:\n%s", what, err, strings.Join(seen, "\n"))
	}
	return v
}

// reply waits for a response_url message to user containing want. Every
// reply is ephemeral: only the person who asked sees it.
func (h *harness) reply(user, want string) slacktest.Message {
	h.t.Helper()
	m := h.waitMessage(fmt.Sprintf("to %s containing %q", user, want), func(m slacktest.Message) bool {
		return m.Kind == "response_url" && m.User == user && strings.Contains(textOf(m.Blocks)+"\n"+m.Text, want)
	})
	if m.ResponseType != "ephemeral" {
		h.t.Errorf("reply %q is %q, want ephemeral", clipText(m.Text, 60), m.ResponseType)
	}
	return m
}

// dm waits for a direct message (chat.postMessage to the user) containing want.
func (h *harness) dm(user, want string) slacktest.Message {
	h.t.Helper()
	return h.waitMessage(fmt.Sprintf("DM to %s containing %q", user, want), func(m slacktest.Message) bool {
		return m.Kind == "message" && m.Channel == user && strings.Contains(textOf(m.Blocks)+m.Text, want)
	})
}

// openModal runs `/booking new <event>` as user and returns the booking
// modal once its slots are shown.
func (h *harness) openModal(user, event string) slacktest.View {
	h.t.Helper()
	before := map[string]bool{}
	for _, v := range h.sl.Views() {
		before[v.ID] = true
	}
	h.slash(user, strings.TrimSpace("new "+event))
	return h.waitView("with the slots of "+event+" for "+user, func(v slacktest.View) bool {
		return !before[v.ID] && v.TriggerUser == user && v.CallbackID == "booking_create" &&
			len(elements(v.Blocks, "slot")) == 1
	})
}

// submit fills the booking modal and submits it.
func (h *harness) submit(user, viewID string, inputs map[string]string) slacktest.Ack {
	h.t.Helper()
	ack, err := h.sl.SubmitInputs(h.ctx(), user, viewID, inputs)
	if err != nil {
		h.t.Fatalf("submitting %v: %v", inputs, err)
	}
	return ack
}

// bookingInputs are a complete, valid submission for slot.
func bookingInputs(slot, email string) map[string]string {
	return map[string]string{
		"slot":      slot,
		"name":      "Grace Hopper",
		"email":     email,
		"booker_tz": "America/New_York",
		"note":      "Agenda: compilers & <b>bold</b> ideas",
	}
}

// submissionAck is a view_submission ack payload.
type submissionAck struct {
	ResponseAction string            `json:"response_action"`
	View           json.RawMessage   `json:"view"`
	Errors         map[string]string `json:"errors"`
}

func parseSubmissionAck(t *testing.T, ack slacktest.Ack) submissionAck {
	t.Helper()
	var sa submissionAck
	if err := json.Unmarshal(ack.Payload, &sa); err != nil {
		t.Fatalf("view_submission ack %s: %v", ack.Payload, err)
	}
	return sa
}

// Block Kit JSON helpers (internal/blockkit), by their short names.
var (
	decodeJSON = blockkit.Decode
	walk       = blockkit.Walk
	fallbacks  = blockkit.Fallbacks
	textOf     = blockkit.Text
	elements   = blockkit.Elements
)

// sectionsWith returns the section blocks whose accessory has actionID.
func sectionsWith(raw []byte, actionID string) []map[string]any {
	var out []map[string]any
	blocks, _ := decodeJSON(raw).([]any)
	for _, b := range blocks {
		bm, _ := b.(map[string]any)
		acc, _ := bm["accessory"].(map[string]any)
		if s, _ := acc["action_id"].(string); bm["type"] == "section" && s == actionID {
			out = append(out, bm)
		}
	}
	return out
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// sectionText is a section's mrkdwn text.
func sectionText(b map[string]any) string {
	t, _ := b["text"].(map[string]any)
	return fallbacks(str(t, "text"))
}

// option is a select option: value and text.
type option struct{ value, text string }

func options(el map[string]any) []option {
	var out []option
	add := func(list any) {
		l, _ := list.([]any)
		for _, o := range l {
			om, _ := o.(map[string]any)
			t, _ := om["text"].(map[string]any)
			out = append(out, option{str(om, "value"), str(t, "text")})
		}
	}
	add(el["options"])
	groups, _ := el["option_groups"].([]any)
	for _, g := range groups {
		gm, _ := g.(map[string]any)
		add(gm["options"])
	}
	return out
}

func blockCount(raw []byte) int {
	blocks, _ := decodeJSON(raw).([]any)
	return len(blocks)
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// takeSlot books the first intro-call slot for email behind bookbot's back,
// as the public booking page would, and returns the booking's ID.
func takeSlot(h *harness, email string) string {
	return h.sb.AddBooking(bookingtest.DemoOwner, bookingtest.Booking{
		EventType: testutil.Ptr("intro-call"), Start: time.Date(2026, 3, 23, 10, 15, 0, 0, time.UTC),
		BookerName: testutil.Ptr("Someone Else"), BookerEmail: testutil.Ptr(email),
	})
}

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

// values are the elements' values; an overflow menu's is its first
// option's, which for a list row's menu is the booking it cancels.
func values(els []map[string]any) []string {
	var out []string
	for _, el := range els {
		if opts := options(el); str(el, "type") == "overflow" && len(opts) > 0 {
			out = append(out, opts[0].value)
			continue
		}
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

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
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

// bookedFor is the ID of the upcoming booking of the attendee with email,
// "" when there is none.
func bookedFor(h *harness, email string) string {
	id := ""
	for _, b := range upcoming(h) {
		if b.BookerEmail != nil && *b.BookerEmail == email {
			id = b.ID
		}
	}
	return id
}

// wantPosts waits for the work the bot started and checks how many POST
// /bookings reached the sandbox: each one is a real invitation.
func (h *harness) wantPosts(want int) {
	h.t.Helper()
	h.drain()
	if n := len(h.requests(bookingtest.EndpointCreateBooking)); n != want {
		h.t.Errorf("%d POST /bookings, want %d", n, want)
	}
}

// rowOf is the block ID of the list row that holds id's menu or buttons.
func rowOf(raw []byte, id string) string {
	blocks, _ := decodeJSON(raw).([]any)
	for _, b := range blocks {
		bm, _ := b.(map[string]any)
		if bid := str(bm, "block_id"); strings.HasPrefix(bid, "row:") && strings.HasSuffix(bid, ":"+id) {
			return bid
		}
	}
	return ""
}

// chooseCancel is choosing Cancel… in the menu of id's row in a list.
func chooseCancel(user string, list slacktest.Message, id string) slack.InteractionCallback {
	return slacktest.BlockAction(user, "cancel_booking", id, slacktest.InMessage(list), slacktest.WithBlockID(rowOf(list.Blocks, id)))
}

// askCancel chooses Cancel… in the menu of id's row and returns the list
// as it comes back, that row asking.
func (h *harness) askCancel(user string, list slacktest.Message, id string) slacktest.Message {
	h.t.Helper()
	h.interact(chooseCancel(user, list, id))
	return h.waitMessage("the row of "+id+" asking", func(m slacktest.Message) bool {
		if m.Kind != "response_url" || m.User != user || !m.ReplaceOriginal {
			return false
		}
		for _, el := range elements(m.Blocks, "cancel_booking") {
			if str(el, "type") == "button" && str(el, "value") == id {
				return true
			}
		}
		return false
	})
}

// confirmCancel is pressing Cancel booking in the row that asks.
func confirmCancel(user string, ask slacktest.Message, id string) slack.InteractionCallback {
	return slacktest.BlockAction(user, "cancel_booking", id, slacktest.InMessage(ask), slacktest.WithBlockID(rowOf(ask.Blocks, id)))
}

// metaOf is a message's metadata: its event type and payload.
func metaOf(m slacktest.Message) (string, map[string]any) {
	var meta struct {
		EventType    string         `json:"event_type"`
		EventPayload map[string]any `json:"event_payload"`
	}
	_ = json.Unmarshal(m.Metadata, &meta)
	return meta.EventType, meta.EventPayload
}

// carriesBooking reports whether m's metadata is of event and names the
// booking id.
func carriesBooking(m slacktest.Message, event, id string) bool {
	e, p := metaOf(m)
	return e == event && p["booking_id"] == id
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
)

// Where scheduling starts, with the real binary: a link pasted in a
// conversation, a message's menu, a Workflow Builder step. Each books
// through an offer, once.

const bookingPage = "https://book.example.com/ada"

// talkWorld is the stand-ins for people talking in #team: Ada (allowed),
// Grace (not), bookbot a member, and the booking page's domain unfurled.
func talkWorld(t *testing.T, opts ...func(*slacktest.Options)) (*bookingtest.Server, *slacktest.Server) {
	t.Helper()
	sb := bookingtest.NewServer(t)
	sl := slacktest.NewServer(t, append([]func(*slacktest.Options){func(o *slacktest.Options) { o.UnfurlDomains = []string{"example.com"} }}, opts...)...)
	sl.AddUser(slacktest.User{ID: "UADA", Name: "ada", RealName: "Ada Lovelace", TZ: "Europe/Berlin"})
	sl.AddUser(slacktest.User{ID: "UGRACE", Name: "grace", RealName: "Grace Hopper", TZ: "America/New_York", Email: "grace@example.com"})
	sl.AddChannel(slacktest.Channel{ID: "C0TEAM", Name: "team", Members: []string{"UADA", "UGRACE", sl.BotUserID()}})
	return sb, sl
}

func postsSince(sb *bookingtest.Server, before int) []bookingtest.Request {
	var out []bookingtest.Request
	for _, r := range sb.Requests()[before:] {
		if r.Endpoint == bookingtest.EndpointCreateBooking {
			out = append(out, r)
		}
	}
	return out
}

// bookFrom presses the first time on a card as Grace and submits her form
// as her profile fills it.
func bookFrom(ctx context.Context, t *testing.T, sl *slacktest.Server, out *logLines, card slacktest.Message, in slacktest.ActionOption) {
	t.Helper()
	times := offerButtons(card, "offer_slot")
	if len(times) == 0 {
		t.Fatalf("a card without times:\n%s", card.Blocks)
	}
	if _, err := sl.SendInteraction(ctx, slacktest.BlockAction("UGRACE", "offer_slot", times[0], in)); err != nil {
		t.Fatal(err)
	}
	form, err := sl.WaitView(ctx, func(v slacktest.View) bool { return v.TriggerUser == "UGRACE" && v.CallbackID == "offer_book" })
	if err != nil {
		t.Fatalf("no form: %v\n%s", err, out.String())
	}
	if _, err := sl.SubmitInputs(ctx, "UGRACE", form.ID, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sl.WaitView(ctx, func(v slacktest.View) bool { return v.ID == form.ID && strings.Contains(string(v.Blocks), "Booked") }); err != nil {
		t.Fatalf("the form never said Booked: %v\n%s", err, out.String())
	}
}

// A link to the owner's page unfurls into a card that Grace, not on the
// allow-list, books with one POST; a link outside the page and one to an
// unknown event type get no card with buttons. The page is set by the
// contract's name, with no warning (config's tests hold its former name).
func TestRunBookingLinkUnfurledAndBooked(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	sb, sl := talkWorld(t)
	cmd, out := startRun(ctx, t, sl, env(sb, sl, "BOOKING_PAGE_URL="+bookingPage))

	link, other, unknown := bookingPage+"/intro-call", "https://other.example.com/ada/intro-call", bookingPage+"/no-such-type"
	msg, err := sl.Say(ctx, "UGRACE", "C0TEAM", "<"+link+"> <"+other+"> <"+unknown+">")
	if err != nil {
		t.Fatal(err)
	}
	card, err := sl.WaitUnfurl(ctx, msg, link, nil)
	if err != nil {
		t.Fatalf("no unfurl: %v\n%s", err, out.String())
	}
	before := len(sb.Requests())
	bookFrom(ctx, t, sl, out, card, slacktest.InUnfurl(card))
	if p := postsSince(sb, before); len(p) != 1 || p[0].Form.Get("email") != "grace@example.com" {
		t.Errorf("POST /bookings: %+v, want one for Grace", p)
	}
	if _, err := sl.WaitUnfurl(ctx, msg, link, func(u slacktest.Message) bool { return strings.Contains(string(u.Blocks), "Booked so far") }); err != nil {
		t.Errorf("the card never showed the booking: %v", err)
	}
	u, ok := sl.Unfurl(msg, unknown)
	if !ok || len(offerButtons(u, "offer_slot")) != 0 {
		t.Errorf("the unknown event type's unfurl: %v %s", ok, u.Blocks)
	}
	if _, ok := sl.Unfurl(msg, other); ok {
		t.Error("a link outside the page was unfurled")
	}
	stopRun(t, cmd, out)
	if strings.Contains(out.String(), "former name") {
		t.Errorf("the contract's variable is taken for a former name:\n%s", out.String())
	}
	noSecrets(t, sb, sl, out.String())
}

// "Offer times…" on Grace's message posts a card for her in the
// conversation; she books it, and the card says so, its booking's ID in
// its metadata.
func TestRunOfferTimesFromAMessagesMenu(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	sb, sl := talkWorld(t)
	cmd, out := startRun(ctx, t, sl, env(sb, sl))
	msg, err := sl.Say(ctx, "UGRACE", "C0TEAM", "Can we talk this week?")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sl.SendInteraction(ctx, slacktest.MessageShortcut("UADA", "offer_times", msg)); err != nil {
		t.Fatal(err)
	}
	form, err := sl.WaitView(ctx, func(v slacktest.View) bool {
		return v.CallbackID == "offer_compose" && len(v.Options("event_type")) > 0
	})
	if err != nil {
		t.Fatalf("no form: %v\n%s", err, out.String())
	}
	if got := form.State["people"]["people"].SelectedUsers; len(got) != 1 || got[0] != "UGRACE" {
		t.Errorf("the form picks %v, want the message's author", got)
	}
	if _, err := sl.SubmitInputs(ctx, "UADA", form.ID, map[string]string{"event_type": "intro-call"}); err != nil {
		t.Fatal(err)
	}
	card, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Kind == "message" && m.Channel == "C0TEAM" && strings.HasPrefix(m.Text, "Offer")
	})
	if err != nil {
		t.Fatalf("no card: %v\n%s", err, out.String())
	}
	before := len(sb.Requests())
	bookFrom(ctx, t, sl, out, card, slacktest.InMessage(card))
	if p := postsSince(sb, before); len(p) != 1 {
		t.Errorf("%d POST /bookings, want 1", len(p))
	}
	booked, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Kind == "update" && m.TS == card.TS && strings.HasPrefix(m.Text, "Booked")
	})
	if err != nil {
		t.Fatalf("the card never said Booked: %v\n%s", err, out.String())
	}
	var meta struct {
		EventType    string            `json:"event_type"`
		EventPayload map[string]string `json:"event_payload"`
	}
	if err := json.Unmarshal(booked.Metadata, &meta); err != nil || meta.EventType != "bookbot_offer_booked" || meta.EventPayload["booking_id"] == "" ||
		strings.Contains(booked.Text, meta.EventPayload["booking_id"]) {
		t.Errorf("the booked card's metadata %s, %v; its notification %q (the ID is for machines only)", booked.Metadata, err, booked.Text)
	}
	stopRun(t, cmd, out)
	noSecrets(t, sb, sl, out.String())
}

// The Workflow Builder step, declared as the manifest declares it, ends
// with the booking made from its card; one of an unknown event type ends
// at once with why, and nothing is posted or booked.
func TestRunWorkflowStep(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	sb, sl := talkWorld(t)
	cmd, out := startRun(ctx, t, sl, env(sb, sl))
	step := manifestStep(t)

	run, err := sl.RunFunction(ctx, step, map[string]any{"event_type": "no-such-type", "channel_id": "C0TEAM"})
	if err != nil {
		t.Fatal(err)
	}
	ended, err := sl.WaitStepEnded(ctx, run.ExecutionID)
	if err != nil || ended.State != "failed" || !strings.Contains(ended.Error, `no event type "no-such-type"`) {
		t.Errorf("the step of an unknown event type ended %+v, %v", ended, err)
	}
	if p := postsSince(sb, 0); len(p) != 0 {
		t.Errorf("%d POST /bookings for an unknown event type", len(p))
	}

	run, err = sl.RunFunction(ctx, step, map[string]any{"event_type": "intro-call", "channel_id": "C0TEAM", "people": []string{"UGRACE"}})
	if err != nil {
		t.Fatal(err)
	}
	card, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Kind == "message" && m.Channel == "C0TEAM" && strings.HasPrefix(m.Text, "Offer")
	})
	if err != nil {
		t.Fatalf("no card: %v\n%s", err, out.String())
	}
	bookFrom(ctx, t, sl, out, card, slacktest.InMessage(card))
	ended, err = sl.WaitStepEnded(ctx, run.ExecutionID)
	p := postsSince(sb, 0)
	if err != nil || len(p) != 1 {
		t.Fatalf("the step ended %+v, %v, after %d POST /bookings\n%s", ended, err, len(p), out.String())
	}
	start, _ := time.Parse(time.RFC3339, p[0].Form.Get("start"))
	var id string
	for _, b := range sb.Bookings(bookingtest.DemoOwner) {
		if b.BookerEmail != nil && *b.BookerEmail == "grace@example.com" {
			id = b.ID
		}
	}
	if ended.State != "completed" || id == "" || ended.Outputs["booking_id"] != id || ended.Outputs["start_time"] != float64(start.Unix()) || ended.Outputs["attendee"] != "UGRACE" {
		t.Errorf("the step ended %+v; want booking %q at %d by UGRACE", ended, id, start.Unix())
	}
	stopRun(t, cmd, out)
	noSecrets(t, sb, sl, out.String())
}

// Two replicas on one database: the step's event, delivered to one, again
// to the other (the same envelope), and once more as a new envelope, posts
// one card, and its booking ends the step once, whichever replica books
// it and however many sweep.
func TestReplicasEndAStepOnce(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	rs, sb, sl := startReplicas(ctx, t, 2)
	sl.AddUser(slacktest.User{ID: "UGRACE", Name: "grace", RealName: "Grace Hopper", TZ: "America/New_York", Email: "grace@example.com"})
	sl.AddChannel(slacktest.Channel{ID: "C0TEAM", Name: "team", Members: []string{"UADA", "UGRACE", sl.BotUserID()}})
	conns := sl.LiveConnections()
	run, err := sl.RunFunction(ctx, manifestStep(t), map[string]any{"event_type": "intro-call", "channel_id": "C0TEAM"}, slacktest.ToConnection(conns[0].ID))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sl.Redeliver(ctx, run.EnvelopeID, slacktest.ToConnection(conns[1].ID)); err != nil {
		t.Fatal(err)
	}
	if _, err := sl.SendStepAgain(ctx, run.ExecutionID, slacktest.ToConnection(conns[1].ID)); err != nil {
		t.Fatal(err)
	}
	card, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Kind == "message" && m.Channel == "C0TEAM" && strings.HasPrefix(m.Text, "Offer")
	})
	if err != nil {
		t.Fatalf("no card: %v", err)
	}
	bookFrom(ctx, t, sl, rs[0].out, card, slacktest.InMessage(card))
	if ended, err := sl.WaitStepEnded(ctx, run.ExecutionID); err != nil || ended.State != "completed" {
		t.Fatalf("the step ended %+v, %v", ended, err)
	}
	// Stopped, each has finished what it was doing: nothing is counted
	// early.
	for _, r := range rs {
		stopRun(t, r.cmd, r.out)
	}
	cards, ends := 0, 0
	for _, m := range sl.Messages() {
		if m.Kind == "message" && m.Channel == "C0TEAM" && strings.HasPrefix(m.Text, "Offer") {
			cards++
		}
	}
	for _, c := range sl.Calls() {
		if c.Method == "functions.completeSuccess" || c.Method == "functions.completeError" {
			ends++
		}
	}
	if cards != 1 || ends != 1 || posts(sb) != 1 {
		t.Errorf("%d cards, %d ends of the step, %d POST /bookings; want one each", cards, ends, posts(sb))
	}
}

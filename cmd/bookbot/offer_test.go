package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/internal/testutil"
)

// The real binary: Ada offers times in a channel; Grace, named and not on
// the allow-list, books one with one form; Eve, not named, is refused
// without a call to the booking API; a second form on a booked offer, a
// form sent after a withdrawal, and a time taken meanwhile send nothing.
func TestRunOfferBookedFromTheCard(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	sb := bookingtest.NewServer(t)
	sl := slacktest.NewServer(t)
	sl.AddUser(slacktest.User{ID: "UADA", Name: "ada", RealName: "Ada Lovelace", TZ: "Europe/Berlin"})
	sl.AddUser(slacktest.User{ID: "UGRACE", Name: "grace", RealName: "Grace Hopper", TZ: "America/New_York", Email: "grace@example.com"})
	sl.AddUser(slacktest.User{ID: "UEVE", Name: "eve", RealName: "Eve Mallory", TZ: "Europe/London", Email: "eve@example.com"})
	sl.AddChannel(slacktest.Channel{ID: "C0TEAM", Name: "team", Members: []string{"UADA", "UGRACE", "UEVE"}})
	cmd, out := startRun(ctx, t, sl, env(sb, sl))
	w := offerWorld{ctx: ctx, t: t, sl: sl, out: out}

	// Named: Grace books, with her Slack profile, in one form.
	card := w.offer("intro-call <@UGRACE|grace>")
	times := offerButtons(card, "offer_slot")
	before := len(sb.Requests())
	w.click("UEVE", card, "offer_slot", times[0])
	w.reply("UEVE", "This offer is for <@UGRACE>")
	w.click("UGRACE", card, "offer_slot", times[0])
	form := w.form("UGRACE", "")
	w.click("UGRACE", card, "offer_slot", times[1])
	second := w.form("UGRACE", form.ID)
	if _, err := sl.SubmitInputs(ctx, "UGRACE", form.ID, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	booked := w.card(card, "Booked")
	var posts []bookingtest.Request
	for _, r := range sb.Requests()[before:] {
		if r.Endpoint == "POST /bookings" {
			posts = append(posts, r)
		}
	}
	if len(posts) != 1 {
		t.Fatalf("%d POST /bookings, want 1", len(posts))
	}
	if f := posts[0].Form; f.Get("name") != "Grace Hopper" || f.Get("email") != "grace@example.com" || f.Get("booker_tz") != "America/New_York" || !strings.HasSuffix(times[0], " "+f.Get("start")) {
		t.Errorf("POST /bookings with %v, for the time %q", f, times[0])
	}
	if len(offerButtons(booked, "offer_slot")) != 0 || !strings.Contains(booked.Text, "booked by <@UGRACE>") {
		t.Errorf("the booked card:\n%s", booked.Blocks)
	}
	if _, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Kind == "message" && m.Channel == "UADA" && strings.HasPrefix(m.Text, "Booked from your offer")
	}); err != nil {
		t.Fatalf("no DM to Ada: %v", err)
	}
	w.submitSends(sb, "UGRACE", second.ID, nil, "already booked")

	// Unnamed: anyone in the channel may book; Eve's form, sent after Ada
	// withdrew the offer, sends nothing.
	open := w.offer("intro-call")
	times = offerButtons(open, "offer_slot")
	w.click("UEVE", open, "offer_slot", times[0])
	form = w.form("UEVE", "")
	w.click("UADA", open, "offer_withdraw", offerButtons(open, "offer_withdraw")[0])
	w.card(open, "Withdrawn")
	w.submitSends(sb, "UEVE", form.ID, nil, "withdrew this offer")

	// A time taken meanwhile: the form says so, nothing is sent, and the
	// card shows the times still free.
	third := w.offer("intro-call")
	times = offerButtons(third, "offer_slot")
	w.click("UEVE", third, "offer_slot", times[0])
	form = w.form("UEVE", "")
	_, raw, _ := strings.Cut(times[0], " ")
	start, err := time.Parse(time.RFC3339, raw)
	if err != nil {
		t.Fatal(err)
	}
	slug := "intro-call"
	sb.AddBooking(bookingtest.DemoOwner, bookingtest.Booking{EventType: &slug, Start: start, BookerName: testutil.Ptr("Someone"), BookerEmail: testutil.Ptr("someone@example.com")})
	w.submitSends(sb, "UEVE", form.ID, nil, "just taken")
	fresh := w.card(third, "Offer")
	if got := offerButtons(fresh, "offer_slot"); len(got) == 0 || got[0] == times[0] {
		t.Errorf("the refreshed card still offers the taken time: %v", got)
	}
	stopRun(t, cmd, out)
	noSecrets(t, sb, sl, out.String())
}

type offerWorld struct {
	ctx context.Context
	t   *testing.T
	sl  *slacktest.Server
	out *logLines
}

// offer posts `/booking offer text` as Ada in the channel and returns the
// new card.
func (w offerWorld) offer(text string) slacktest.Message {
	w.t.Helper()
	seen := map[string]bool{}
	for _, m := range w.sl.Messages() {
		seen[m.TS] = true
	}
	if _, err := w.sl.SendSlashCommand(w.ctx, slacktest.SlashCommand{Command: "/booking", Text: "offer " + text, UserID: "UADA", ChannelID: "C0TEAM"}); err != nil {
		w.t.Fatal(err)
	}
	m, err := w.sl.WaitMessage(w.ctx, func(m slacktest.Message) bool {
		return m.Kind == "response_url" && m.ResponseType == "in_channel" && strings.HasPrefix(m.Text, "Offer") && !seen[m.TS]
	})
	if err != nil {
		w.t.Fatalf("no offer card: %v\n%s", err, w.out.String())
	}
	return m
}

func (w offerWorld) click(user string, card slacktest.Message, actionID, value string) {
	w.t.Helper()
	if _, err := w.sl.SendInteraction(w.ctx, slacktest.BlockAction(user, actionID, value, slacktest.InMessage(card))); err != nil {
		w.t.Fatal(err)
	}
}

func (w offerWorld) reply(user, want string) {
	w.t.Helper()
	if _, err := w.sl.WaitMessage(w.ctx, func(m slacktest.Message) bool {
		return m.Kind == "response_url" && m.User == user && m.ResponseType != "in_channel" && strings.Contains(m.Text, want)
	}); err != nil {
		w.t.Fatalf("no reply to %s with %q: %v", user, want, err)
	}
}

// form waits for an offer form opened for user, other than not.
func (w offerWorld) form(user, not string) slacktest.View {
	w.t.Helper()
	v, err := w.sl.WaitView(w.ctx, func(v slacktest.View) bool {
		return v.TriggerUser == user && v.CallbackID == "offer_book" && v.ID != not && !v.Closed && v.Updates == 0
	})
	if err != nil {
		w.t.Fatalf("no offer form for %s: %v\n%s", user, err, w.out.String())
	}
	return v
}

// card waits for the card to be replaced by one whose text begins with head.
func (w offerWorld) card(card slacktest.Message, head string) slacktest.Message {
	w.t.Helper()
	m, err := w.sl.WaitMessage(w.ctx, func(m slacktest.Message) bool {
		return m.OriginalTS == card.TS && strings.HasPrefix(m.Text, head)
	})
	if err != nil {
		w.t.Fatalf("the card never began %q: %v\n%s", head, err, w.out.String())
	}
	return m
}

// submitSends submits an offer form with inputs and waits for its outcome
// to say want, checking that the booking API was not asked to book.
func (w offerWorld) submitSends(sb *bookingtest.Server, user, viewID string, inputs map[string]string, want string) {
	w.t.Helper()
	if inputs == nil {
		inputs = map[string]string{}
	}
	if v, _ := w.sl.View(viewID); !strings.Contains(string(v.Blocks), "@example.com") {
		inputs["email"] = strings.ToLower(user) + "@example.com"
	}
	posts := func() int {
		n := 0
		for _, r := range sb.Requests() {
			if r.Endpoint == "POST /bookings" {
				n++
			}
		}
		return n
	}
	before := posts()
	if _, err := w.sl.SubmitInputs(w.ctx, user, viewID, inputs); err != nil {
		w.t.Fatal(err)
	}
	if _, err := w.sl.WaitView(w.ctx, func(v slacktest.View) bool {
		return v.ID == viewID && strings.Contains(string(v.Blocks), want)
	}); err != nil {
		w.t.Fatalf("the form never said %q: %v\n%s", want, err, w.out.String())
	}
	if n := posts(); n != before {
		w.t.Errorf("%d POST /bookings for a form that said %q", n-before, want)
	}
}

// offerButtons are the values of the card's elements with actionID.
func offerButtons(m slacktest.Message, actionID string) []string {
	var blocks []map[string]any
	_ = json.Unmarshal(m.Blocks, &blocks)
	var out []string
	var visit func(v any)
	visit = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["action_id"] == actionID {
				if s, ok := v["value"].(string); ok {
					out = append(out, s)
				}
			}
			for _, x := range v {
				visit(x)
			}
		case []any:
			for _, x := range v {
				visit(x)
			}
		}
	}
	for _, b := range blocks {
		visit(b)
	}
	return out
}

// Two replicas on one database, Slack spreading envelopes over them: the
// card is posted by one, the clicks and the form are served by whichever
// gets them, and the offer books once.
func TestReplicasServeAnOffer(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	rs, sb, sl := startReplicas(ctx, t, 2)
	sl.AddUser(slacktest.User{ID: "UGRACE", Name: "grace", RealName: "Grace Hopper", TZ: "America/New_York", Email: "grace@example.com"})
	sl.AddChannel(slacktest.Channel{ID: "C0TEAM", Name: "team", Members: []string{"UADA", "UGRACE", "UBOB"}})
	w := offerWorld{ctx: ctx, t: t, sl: sl, out: rs[0].out}

	card := w.offer("intro-call <@UGRACE|grace>")
	times := offerButtons(card, "offer_slot")
	w.click("UBOB", card, "offer_slot", times[0])
	w.reply("UBOB", "This offer is for <@UGRACE>")
	w.click("UGRACE", card, "offer_slot", times[0])
	form := w.form("UGRACE", "")
	w.click("UGRACE", card, "offer_slot", times[1])
	second := w.form("UGRACE", form.ID)
	if _, err := sl.SubmitInputs(ctx, "UGRACE", form.ID, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	w.card(card, "Booked")
	w.submitSends(sb, "UGRACE", second.ID, nil, "already booked")
	if n := posts(sb); n != 1 {
		t.Errorf("%d POST /bookings, want 1", n)
	}
	conns := map[int]bool{}
	for _, a := range sl.Acks() {
		conns[a.ConnID] = true
	}
	if len(conns) != 2 {
		t.Errorf("the offer's envelopes were acked on %d connections, want both replicas'", len(conns))
	}
}

// offerStandIn is a Slack stand-in with Ada, Grace (named in offers, not on
// the allow-list), a channel where they talk and a review channel.
func offerStandIn(t *testing.T) *slacktest.Server {
	sl := newStandIn(t)
	sl.AddUser(slacktest.User{ID: "UGRACE", Name: "grace", RealName: "Grace Hopper", TZ: "America/New_York", Email: "grace@example.com"})
	sl.AddChannel(slacktest.Channel{ID: "C0TEAM", Name: "team", Members: []string{ada, "UGRACE"}})
	return sl
}

func requestsTo(sb *bookingtest.Server, endpoint string) int {
	n := 0
	for _, r := range sb.Requests() {
		if r.Endpoint == endpoint {
			n++
		}
	}
	return n
}

// kill stops the process at once, as kill -9 does.
func kill(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
}

// The real binary killed after Grace's form took a time from Ada's offer
// and before its create was sent: restarted, it gives the time back, tells
// Grace, shows the time on the card again, and she books it.
func TestRunOfferTimeIsFreeAfterAKillBeforeSending(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	sb := bookingtest.NewServer(t)
	sl := offerStandIn(t)
	e := env(sb, sl)
	first, out := startRun(ctx, t, sl, e)
	w := offerWorld{ctx: ctx, t: t, sl: sl, out: out}
	card := w.offer("intro-call <@UGRACE|grace>")
	times := offerButtons(card, "offer_slot")
	w.click("UGRACE", card, "offer_slot", times[0])
	form := w.form("UGRACE", "")

	// The form takes the time, then checks it is still free: that read is
	// held, and bookbot is killed while it waits.
	sb.SetLatency(bookingtest.EndpointSlots, time.Minute)
	reads := requestsTo(sb, bookingtest.EndpointSlots)
	if _, err := sl.SubmitInputs(ctx, "UGRACE", form.ID, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	testutil.Until(ctx, t, "the form's check of the time to reach the API", func() bool {
		return requestsTo(sb, bookingtest.EndpointSlots) > reads
	})
	kill(t, first)
	sb.SetLatency(bookingtest.EndpointSlots, 0)

	second, out := startRun(ctx, t, sl, e)
	w.out = out
	if _, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Kind == "message" && m.Channel == "UGRACE" && strings.Contains(string(m.Blocks), "bookbot stopped before it sent your booking")
	}); err != nil {
		t.Fatalf("Grace was not told: %v\n%s", err, out)
	}
	open := w.card(card, "Offer")
	if got := offerButtons(open, "offer_slot"); len(got) == 0 || got[0] != times[0] {
		t.Errorf("the card does not offer the time again: %v", got)
	}
	w.click("UGRACE", card, "offer_slot", times[0])
	again := w.form("UGRACE", form.ID)
	if _, err := sl.SubmitInputs(ctx, "UGRACE", again.ID, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	w.card(card, "Booked")
	if n := posts(sb); n != 1 {
		t.Errorf("%d POST /bookings, want 1", n)
	}
	stopRun(t, second, out)
	noSecrets(t, sb, sl, out.String())
}

// The real binary killed while the API holds the create of Grace's form:
// restarted, it settles the write by listing, records the booking in the
// offer, shows it on the card and tells Ada, once, that it was booked.
func TestRunOfferBookingInFlightIsSettledAfterAKill(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	sb := bookingtest.NewServer(t)
	sl := offerStandIn(t)
	e := env(sb, sl, "BOOKBOT_REVIEW_CHANNEL="+reviewRoom)
	first, out := startRun(ctx, t, sl, e)
	w := offerWorld{ctx: ctx, t: t, sl: sl, out: out}
	card := w.offer("intro-call <@UGRACE|grace>")
	times := offerButtons(card, "offer_slot")
	w.click("UGRACE", card, "offer_slot", times[0])
	form := w.form("UGRACE", "")

	sb.CommitThenHang(bookingtest.EndpointCreateBooking)
	if _, err := sl.SubmitInputs(ctx, "UGRACE", form.ID, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	testutil.Until(ctx, t, "the sandbox to commit the booking", func() bool { return bookedBy(sb, "grace@example.com") != "" })
	kill(t, first) // the API is still holding the answer
	if strings.Contains(out.String(), `"msg":"booking create"`) {
		t.Fatalf("the create finished before the kill:\n%s", out)
	}

	second, out := startRun(ctx, t, sl, e)
	w.out = out
	booked := w.card(card, "Booked")
	if id := bookedBy(sb, "grace@example.com"); !carries(booked, "bookbot_offer_booked", id) {
		t.Errorf("the card does not carry the booking %s: %q %s", id, booked.Text, booked.Metadata)
	}
	if _, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Kind == "message" && m.Channel == ada && strings.HasPrefix(m.Text, "Booked from your offer")
	}); err != nil {
		t.Fatalf("Ada was not told: %v\n%s", err, out)
	}
	out.waitCount(ctx, t, "review report posted", 1)
	stopRun(t, second, out)
	told := messagesWhere(sl, func(m slacktest.Message) bool {
		return m.Kind == "message" && m.Channel == ada && strings.HasPrefix(m.Text, "Booked from your offer")
	})
	if len(told) != 1 {
		t.Errorf("Ada was told %d times, want once", len(told))
	}
	if n := posts(sb); n != 1 {
		t.Errorf("%d POST /bookings, want 1: settling never books again", n)
	}
	noSecrets(t, sb, sl, out.String())
}

// bookedBy is the ID of the demo owner's booking of the attendee with
// email, "" when there is none.
func bookedBy(sb *bookingtest.Server, email string) string {
	for _, b := range sb.Bookings(bookingtest.DemoOwner) {
		if b.BookerEmail != nil && *b.BookerEmail == email && !b.Cancelled {
			return b.ID
		}
	}
	return ""
}

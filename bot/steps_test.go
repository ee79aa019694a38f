package bot_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/internal/testutil"
	"github.com/bookbot/bookbot/offer"
	"github.com/bookbot/bookbot/store/bolt"
)

// offerStep is the step as the manifest declares it.
var offerStep = slacktest.Function{
	CallbackID: "offer_times_step",
	Title:      "Offer times",
	Inputs: []slacktest.Param{
		{Name: "event_type", Type: "string", Required: true},
		{Name: "people", Type: "array", Items: "slack#/types/user_id"},
		{Name: "channel_id", Type: "slack#/types/channel_id", Required: true},
		{Name: "count", Type: "integer"},
	},
	Outputs: []slacktest.Param{
		{Name: "booking_id", Type: "string", Required: true},
		{Name: "start_time", Type: "slack#/types/timestamp", Required: true},
		{Name: "attendee", Type: "slack#/types/user_id", Required: true},
	},
}

// stepHarness is the link harness with steps ended through Slack; opts
// adjust its configuration after that.
func stepHarness(t *testing.T, opts ...func(*harness, *bot.Config)) *harness {
	t.Helper()
	h := newHarness(t, append([]func(*harness, *bot.Config){func(h *harness, c *bot.Config) {
		db, err := bolt.Open(t.TempDir(), bolt.Options{Beside: true})
		if err != nil {
			t.Fatal(err)
		}
		toSlack := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone(), Timeout: 10 * time.Second}
		t.Cleanup(toSlack.CloseIdleConnections)
		c.Offers, c.Outbox = db.Offers(), db.Outbox()
		c.Steps = bot.NewFunctionSteps(toSlack, h.sl.APIURL, h.sl.BotToken())
	}}, opts...)...)
	h.sl.AddUser(slacktest.User{ID: grace, Name: "grace", RealName: "Grace Hopper", TZ: "America/New_York", Email: "grace@example.com"})
	h.sl.AddChannel(slacktest.Channel{ID: "C0TEAM", Name: "team", Members: []string{ada, grace, eve, bob, h.sl.BotUserID()}})
	return h
}

func (h *harness) runStep(inputs map[string]any) slacktest.StepRun {
	h.t.Helper()
	run, err := h.sl.RunFunction(h.ctx(), offerStep, inputs)
	if err != nil {
		h.t.Fatal(err)
	}
	return run
}

// stepCard runs the step and returns the run and its card, once posted
// in the team channel.
func (h *harness) stepCard(inputs map[string]any) (slacktest.StepRun, slacktest.Message) {
	h.t.Helper()
	run := h.runStep(inputs)
	card := h.waitMessage("the step's card", func(m slacktest.Message) bool {
		return m.Kind == "message" && m.Channel == "C0TEAM" && strings.HasPrefix(m.Text, "Offer")
	})
	return run, card
}

// graceBooks picks the card's first time as Grace and sends her form as
// her profile fills it; it returns the form.
func (h *harness) graceBooks(card slacktest.Message) slacktest.View {
	h.t.Helper()
	h.pick(grace, card, values(elements(card.Blocks, "offer_slot"))[0])
	form := h.waitView("Grace's form", func(v slacktest.View) bool { return v.TriggerUser == grace && v.CallbackID == "offer_book" })
	h.submit(grace, form.ID, map[string]string{})
	return form
}

func (h *harness) stepEnded(run slacktest.StepRun) slacktest.StepRun {
	h.t.Helper()
	got, err := h.sl.WaitStepEnded(h.ctx(), run.ExecutionID)
	if err != nil {
		h.t.Fatalf("the step never ended: %v\nthe bot's log:\n%s", err, h.logs)
	}
	return got
}

// The step posts a card for Grace in the channel and ends with her
// booking: its ID, its start and her, as outputs of their types.
func TestStepEndsWithTheBooking(t *testing.T) {
	t.Parallel()
	h := stepHarness(t)
	run, card := h.stepCard(map[string]any{"event_type": "intro-call", "channel_id": "C0TEAM", "people": []string{grace}})
	if got, _ := h.sl.Step(run.ExecutionID); got.State != "running" {
		t.Fatalf("the step ended before anyone booked: %+v", got)
	}
	h.graceBooks(card)
	got := h.stepEnded(run)
	id := bookedFor(h, "grace@example.com")
	start, _ := time.Parse(time.RFC3339, firstSlot)
	if got.State != "completed" || got.Outputs["booking_id"] != id || got.Outputs["start_time"] != float64(start.Unix()) || got.Outputs["attendee"] != grace {
		t.Errorf("the step ended %+v; want booking %s at %d by %s", got, id, start.Unix(), grace)
	}
	h.waitMessage("the card, booked", func(m slacktest.Message) bool {
		return m.Kind == "update" && m.TS == card.TS && strings.HasPrefix(m.Text, "Booked")
	})
	// Once: the sweep finds nothing to end.
	h.bot.SettleOffers(h.ctx())
	if n := len(calls(h, "functions.completeSuccess")) + len(calls(h, "functions.completeError")); n != 1 {
		t.Errorf("the step was ended %d times", n)
	}
}

// Whoever books from a step's card hears their outcome before the step
// ends: in the form, or from the sweep that settles a time a stopped
// bookbot left being booked.
func TestStepEndsAfterTheGuestIsTold(t *testing.T) {
	t.Parallel()
	toldFirst := func(t *testing.T, h *harness, told func(slacktest.Call) bool) {
		t.Helper()
		all := h.sl.Calls()
		guest := slices.IndexFunc(all, told)
		end := slices.IndexFunc(all, func(c slacktest.Call) bool { return c.Method == "functions.completeSuccess" })
		if guest < 0 || end < 0 || end < guest {
			t.Errorf("the guest was told at call %d, the step ended at call %d: the guest hears first", guest, end)
		}
	}
	t.Run("in the form", func(t *testing.T) {
		t.Parallel()
		h := stepHarness(t)
		run, card := h.stepCard(map[string]any{"event_type": "intro-call", "channel_id": "C0TEAM", "people": []string{grace}})
		h.graceBooks(card)
		h.stepEnded(run)
		h.drain()
		toldFirst(t, h, func(c slacktest.Call) bool {
			return c.Method == "views.update" && strings.Contains(string(c.JSON)+c.Form.Get("view"), "Booked:")
		})
	})
	t.Run("by the sweep", func(t *testing.T) {
		t.Parallel()
		toSlack := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone(), Timeout: 10 * time.Second}
		t.Cleanup(toSlack.CloseIdleConnections)
		w := newLeftWorld(t, func(h *harness, c *bot.Config) { c.Steps = bot.NewFunctionSteps(toSlack, h.sl.APIURL, h.sl.BotToken()) })
		if _, err := w.offers.Update(t.Context(), w.id, func(o *offer.Offer) error { o.Step = "Fx0000000099"; return nil }); err != nil {
			t.Fatal(err)
		}
		w.take(stopped, true)
		_ = w.begin()(&booking.Result{Outcome: booking.Confirmed, Booking: w.book(), Verified: true})
		w.settle()
		toldFirst(t, w.h, func(c slacktest.Call) bool {
			return c.Method == "chat.postMessage" && c.Form.Get("channel") == grace && strings.HasPrefix(c.Form.Get("text"), "Booked:")
		})
	})
}

// A step's card booked, then cancelled by its guest, is open again, and
// so is what machines read of it: its metadata no longer says booked. The
// guest's outcome names nobody the offer does not.
func TestStepCardCancelledByItsGuestIsOpenAgain(t *testing.T) {
	t.Parallel()
	h := stepHarness(t)
	_, card := h.stepCard(map[string]any{"event_type": "intro-call", "channel_id": "C0TEAM", "people": []string{grace}})
	form := h.graceBooks(card)
	done := h.waitView("booked", func(v slacktest.View) bool { return v.ID == form.ID && strings.Contains(textOf(v.Blocks), "Booked") })
	h.waitMessage("the card, booked", func(m slacktest.Message) bool {
		return m.Kind == "update" && m.TS == card.TS && strings.HasPrefix(m.Text, "Booked")
	})
	cancel := elements(done.Blocks, "offer_cancel")
	if len(cancel) != 1 {
		t.Fatalf("no Cancel in the guest's outcome:\n%s", done.Blocks)
	}
	h.interact(slacktest.BlockAction(grace, "offer_cancel", str(cancel[0], "value"), slacktest.InView(done)))
	out := h.waitView("cancelled", func(v slacktest.View) bool { return v.ID == form.ID && strings.Contains(textOf(v.Blocks), "Cancelled") })
	if text := textOf(out.Blocks); !strings.Contains(text, "*Cancelled:* Intro call, today") || strings.Contains(text, "<@>") || strings.Contains(text, "has been told") {
		t.Errorf("the guest is told:\n%s", text)
	}
	h.waitMessage("the card, open again", func(m slacktest.Message) bool {
		return m.Kind == "update" && m.TS == card.TS && strings.HasPrefix(m.Text, "Offer")
	})
	h.drain()

	api := slack.New(h.sl.BotToken(), slack.OptionAPIURL(h.sl.APIURL))
	hist, err := api.GetConversationHistoryContext(h.ctx(), &slack.GetConversationHistoryParameters{
		ChannelID: "C0TEAM", Oldest: card.TS, Latest: card.TS, Inclusive: true, IncludeAllMetadata: true,
	})
	if err != nil || len(hist.Messages) != 1 {
		t.Fatalf("the card in the channel's history: %v, %+v", err, hist)
	}
	if m := hist.Messages[0]; !strings.HasPrefix(m.Text, "Offer") || m.Metadata.EventType == "bookbot_offer_booked" || m.Metadata.EventPayload["booking_id"] != nil {
		t.Errorf("the card open again says %q and carries %+v, want no booking", m.Text, m.Metadata)
	}
}

func calls(h *harness, method string) []slacktest.Call {
	var out []slacktest.Call
	for _, c := range h.sl.Calls() {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// What cannot be offered ends the step with a plain reason at once, and
// asks nothing more of the booking API.
func TestStepRefusals(t *testing.T) {
	t.Parallel()
	h := stepHarness(t)
	h.sl.AddChannel(slacktest.Channel{ID: "C0QUIET", Name: "quiet", Members: []string{ada}})
	for _, c := range []struct {
		inputs map[string]any
		want   string
	}{
		{map[string]any{"event_type": "no-such-type", "channel_id": "C0TEAM"}, `There is no event type "no-such-type"`},
		{map[string]any{"event_type": "team-sync", "channel_id": "C0TEAM"}, "round robin"},
		{map[string]any{"event_type": "intro-call", "channel_id": "C0TEAM", "people": []string{grace}, "count": 2}, "each person books one"},
		{map[string]any{"event_type": "intro-call", "channel_id": "C0QUIET"}, "bookbot is not in that channel"},
	} {
		got := h.stepEnded(h.runStep(c.inputs))
		if got.State != "failed" || !strings.Contains(got.Error, c.want) {
			t.Errorf("%v: the step ended %q %q, want failed saying %q", c.inputs, got.State, got.Error, c.want)
		}
	}
	if n := len(h.requests("POST /bookings")); n != 0 {
		t.Errorf("%d POST /bookings", n)
	}
	h.drain()
	for _, m := range h.sl.Messages() {
		if m.Kind == "message" && strings.HasPrefix(m.Text, "Offer") {
			t.Errorf("a card was posted: %q in %s", m.Text, m.Channel)
		}
	}
}

// A run refused, or whose card could not be posted, ends with why even
// when Slack did not take its end the first time: the sweep ends it.
func TestStepRefusedEndsWhenSlackTakesItsEndLater(t *testing.T) {
	t.Parallel()
	h := stepHarness(t)
	h.sl.AddChannel(slacktest.Channel{ID: "C0QUIET", Name: "quiet", Members: []string{ada}})
	for i, c := range []struct {
		inputs map[string]any
		want   string
	}{
		{map[string]any{"event_type": "no-such-type", "channel_id": "C0TEAM"}, `There is no event type "no-such-type"`},
		{map[string]any{"event_type": "intro-call", "channel_id": "C0QUIET"}, "bookbot is not in that channel"},
	} {
		h.sl.FailNext("functions.completeError", "ratelimited")
		run := h.runStep(c.inputs)
		if _, err := h.sl.WaitCalls(h.ctx(), "functions.completeError", 2*i+1); err != nil {
			t.Fatal(err)
		}
		h.drain()
		if got, _ := h.sl.Step(run.ExecutionID); got.State != "running" {
			t.Fatalf("%v: Slack took the end it refused: %+v", c.inputs, got)
		}
		h.bot.SettleOffers(h.ctx())
		if got := h.stepEnded(run); got.State != "failed" || !strings.Contains(got.Error, c.want) {
			t.Errorf("%v: the step ended %q %q, want failed saying %q", c.inputs, got.State, got.Error, c.want)
		}
	}
}

// An offer nobody books ends its step with an error once it expires, from
// the offers' sweep.
func TestStepEndsWhenItsOfferExpires(t *testing.T) {
	t.Parallel()
	h := stepHarness(t)
	run, _ := h.stepCard(map[string]any{"event_type": "intro-call", "channel_id": "C0TEAM"})
	h.drain()
	h.bot.SettleOffers(h.ctx())
	if got, _ := h.sl.Step(run.ExecutionID); got.State != "running" {
		t.Fatalf("the step ended while its offer stands: %+v", got)
	}
	h.clock.Advance(bot.DefaultOfferTTL + time.Minute)
	h.bot.SettleOffers(h.ctx())
	got := h.stepEnded(run)
	if got.State != "failed" || !strings.Contains(got.Error, "expired") {
		t.Errorf("the step ended %+v", got)
	}
}

// An offer of two meetings that expires while a time is being booked from
// it waits for that write: its booking ends the step, not the expiry.
func TestStepWaitsForATimeBeingBooked(t *testing.T) {
	t.Parallel()
	h := stepHarness(t, func(h *harness, c *bot.Config) { c.OfferTTL = 2 * time.Minute })
	run, card := h.stepCard(map[string]any{"event_type": "intro-call", "channel_id": "C0TEAM", "count": 2})
	release := h.sb.HoldNext(bookingtest.EndpointCreateBooking)
	var once sync.Once
	t.Cleanup(func() { once.Do(release) })
	h.graceBooks(card)
	testutil.Until(h.ctx(), t, "Grace's create in flight", func() bool { return len(h.requests("POST /bookings")) == 1 })
	h.clock.Advance(3 * time.Minute) // expired; her time is not left behind yet
	h.bot.SettleOffers(h.ctx())
	if got, _ := h.sl.Step(run.ExecutionID); got.State != "running" {
		t.Fatalf("the step ended while a time was being booked: %+v", got)
	}
	once.Do(release)
	if got := h.stepEnded(run); got.State != "completed" || got.Outputs["booking_id"] != bookedFor(h, "grace@example.com") {
		t.Errorf("the step ended %+v, want completed with Grace's booking", got)
	}
}

// A step's end whose answer never came is made again once its claim is
// stale; Slack, which ended it, says so, and that ends it for bookbot too.
func TestStepEndWithoutAnAnswerIsMadeAgain(t *testing.T) {
	t.Parallel()
	h := stepHarness(t)
	run, _ := h.stepCard(map[string]any{"event_type": "intro-call", "channel_id": "C0TEAM"})
	h.drain()
	h.clock.Advance(bot.DefaultOfferTTL + time.Minute)
	// Slack ends the step, and its answer is lost: the sweep gives up
	// waiting for it.
	h.sl.StallNext("functions.completeError", true)
	ctx, cancel := context.WithCancel(h.ctx())
	swept := make(chan struct{})
	go func() { defer close(swept); h.bot.SettleOffers(ctx) }()
	if err := h.sl.WaitStalled(h.ctx(), "functions.completeError", 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-swept
	if got, _ := h.sl.Step(run.ExecutionID); got.State != "failed" {
		t.Fatalf("Slack did not end the step: %+v", got)
	}
	h.bot.SettleOffers(h.ctx()) // the claim stands: nothing is made again yet
	if n := len(calls(h, "functions.completeError")); n != 1 {
		t.Fatalf("%d ends before the claim went stale, want 1", n)
	}
	h.clock.Advance(10 * time.Minute)
	h.bot.SettleOffers(h.ctx())
	h.bot.SettleOffers(h.ctx()) // ended for bookbot too: not made a third time
	var answers []string
	for _, c := range calls(h, "functions.completeError") {
		answers = append(answers, c.Error)
	}
	if len(answers) != 2 || answers[1] != "execution_not_in_running_state" {
		t.Errorf("ends answered %q, want 2: the lost one and the one made again, which Slack answers that the step ended", answers)
	}
	if !strings.Contains(h.logs.String(), "Workflow Builder step had ended already") {
		t.Errorf("the step's end is not recorded as Slack's answer says:\n%s", h.logs)
	}
}

// A step's card posted whose place could not be recorded is logged for
// what follows: unless someone books from it first, the sweep takes it for
// never posted, withdraws its offer and ends the step saying so.
func TestStepCardPostedWherePlaceWasNotRecorded(t *testing.T) {
	t.Parallel()
	var updates *failingUpdates
	h := stepHarness(t, func(h *harness, c *bot.Config) {
		updates = &failingUpdates{Store: c.Offers} // the first update is Placed
		c.Offers = updates
	})
	run, _ := h.stepCard(map[string]any{"event_type": "intro-call", "channel_id": "C0TEAM"})
	h.drain()
	if logs := h.logs.String(); !strings.Contains(logs, "the sweep takes it for never posted") || strings.Contains(logs, "changes only when someone clicks it") {
		t.Errorf("the log does not say what becomes of the card:\n%s", logs)
	}
	updates.ok.Store(1 << 20)
	h.bot.SettleOffers(h.ctx())
	if got, _ := h.sl.Step(run.ExecutionID); got.State != "running" {
		t.Fatalf("the step ended before its card could be recorded late: %+v", got)
	}
	h.clock.Advance(6 * time.Minute)
	h.bot.SettleOffers(h.ctx())
	if got := h.stepEnded(run); got.State != "failed" || !strings.Contains(got.Error, "whether the offer's card was posted") {
		t.Errorf("the step ended %q %q, want failed saying the card's place is not known", got.State, got.Error)
	}
}

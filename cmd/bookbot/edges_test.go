package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/internal/testutil"
)

// The booking service's edges, met by the real binary against the
// sandbox: each plain answer is said as it is, and what is held back or
// reviewed is what the answer calls for.

// openFormOf runs `/booking new event` as ada and returns the new modal
// with its slots loaded, and the last slot it offers (the first day's).
func openFormOf(ctx context.Context, t *testing.T, sl *slacktest.Server, event string) (slacktest.View, string) {
	t.Helper()
	prior := map[string]bool{}
	for _, v := range sl.Views() {
		prior[v.ID] = true
	}
	if _, err := sl.SendSlashCommand(ctx, slacktest.SlashCommand{Command: "/booking", Text: "new " + event, UserID: ada}); err != nil {
		t.Fatal(err)
	}
	v, err := sl.WaitView(ctx, func(v slacktest.View) bool {
		return v.TriggerUser == ada && !prior[v.ID] && len(v.Options("slot")) > 0
	})
	if err != nil {
		t.Fatalf("no booking form for %s: %v", event, err)
	}
	opts := v.Options("slot")
	return v, opts[len(opts)-1].Value
}

// dmSaying waits for a direct message to ada holding want, among those
// after the first skip.
func dmSaying(ctx context.Context, t *testing.T, sl *slacktest.Server, skip int, want string) slacktest.Message {
	t.Helper()
	var m slacktest.Message
	testutil.Until(ctx, t, "a DM to ada saying "+want, func() bool {
		dms := messagesWhere(sl, func(m slacktest.Message) bool { return m.Kind == "message" && m.Channel == ada })
		for _, d := range dms[min(skip, len(dms)):] {
			if strings.Contains(string(d.Blocks), want) {
				m = d
				return true
			}
		}
		return false
	})
	return m
}

func dmCount(sl *slacktest.Server) int {
	return len(messagesWhere(sl, func(m slacktest.Message) bool { return m.Kind == "message" && m.Channel == ada }))
}

// audit is `bookbot audit` over e's state.
func audit(ctx context.Context, t *testing.T, e []string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, binary, "audit", "-since", "1h")
	cmd.Env = e
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("audit: %v\n%s", err, out)
	}
	return string(out)
}

// A full service answers a create 503 with its JSON "not booked": the
// person is told it was not booked and why, plainly; nobody is asked to
// check an unclear outcome, and nothing promises that minutes will help.
func TestRunFullServiceRefusesPlainly(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	sb := bookingtest.NewServer(t)
	sl := newStandIn(t)
	e := env(sb, sl, "BOOKBOT_REVIEW_CHANNEL="+reviewRoom, "LOG_LEVEL=debug")
	cmd, out := startRun(ctx, t, sl, e)
	sb.Full(bookingtest.DemoOwner)

	form, slot := openFormOf(ctx, t, sl, "intro-call")
	submitGrace(ctx, t, sl, form, slot, "America/New_York")
	dm := dmSaying(ctx, t, sl, 0, "Not booked: the booking service takes no new bookings.")
	for _, untrue := range []string{"unclear", "clearly", "few minutes", "Check again"} {
		if strings.Contains(string(dm.Blocks), untrue) {
			t.Errorf("the outcome says %q:\n%s", untrue, dm.Blocks)
		}
	}
	out.waitCount(ctx, t, `"msg":"booking create finished"`, 1)
	out.waitCount(ctx, t, `"unreported":0`, 2) // at start, and after the create
	stopRun(t, cmd, out)
	if n := len(reviewReports(sl)); n != 0 {
		t.Errorf("%d review reports of a plain refusal, want none", n)
	}
	if n := posts(sb); n != 1 {
		t.Errorf("%d POST /bookings, want 1", n)
	}
	if a := audit(ctx, t, e); !strings.Contains(a, "outcome: not_booked (full)") {
		t.Errorf("audit does not keep the reason:\n%s", a)
	}
	noSecrets(t, sb, sl, out.String())
}

// An event type whose hour other clients used up answers 429 without
// Retry-After: bookbot says so, holds that event type back for the hour
// such a limit can take, and books another event type at once.
func TestRunEventLimitHoldsOnlyItsEventType(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	sb := bookingtest.NewServer(t)
	sl := newStandIn(t)
	e := env(sb, sl, "LOG_LEVEL=debug")
	cmd, out := startRun(ctx, t, sl, e)
	sb.ExhaustEventLimit(bookingtest.DemoOwner, "intro-call")

	form, slot := openFormOf(ctx, t, sl, "intro-call")
	submitGrace(ctx, t, sl, form, slot, "Europe/Berlin")
	dm := dmSaying(ctx, t, sl, 0, "Refused by the booking service: too many attempts for this event type.")
	for _, want := range []string{"can take up to an hour to clear", "holds bookings of Intro call back for 1 hour", "other event types can be booked now"} {
		if !strings.Contains(string(dm.Blocks), want) {
			t.Errorf("the outcome lacks %q:\n%s", want, dm.Blocks)
		}
	}

	skip := dmCount(sl)
	form, slot = openFormOf(ctx, t, sl, "consultation")
	submitGrace(ctx, t, sl, form, slot, "Europe/Berlin")
	dmSaying(ctx, t, sl, skip, "Booked.")

	skip = dmCount(sl)
	form, slot = openFormOf(ctx, t, sl, "intro-call")
	submitGrace(ctx, t, sl, form, slot, "America/New_York")
	held := dmSaying(ctx, t, sl, skip, "Not sent.")
	if !strings.Contains(string(held.Blocks), "Try again in 1 hour") {
		t.Errorf("the hold is said otherwise:\n%s", held.Blocks)
	}
	stopRun(t, cmd, out)
	if n := posts(sb); n != 2 {
		t.Errorf("%d POST /bookings, want 2: intro-call's refused one, consultation's", n)
	}
}

// Beyond the first 100 bookings the list cannot check an answer: a create
// answered with a receipt is booked, as the service answered, with a quiet
// review that says so and not that the answer was unclear; and a cancel
// the service confirmed is cancelled, not "most likely cancelled already".
func TestRunBeyondTheFirstHundred(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	sb := bookingtest.NewServer(t)
	sl := newStandIn(t)
	e := env(sb, sl, "BOOKBOT_REVIEW_CHANNEL="+reviewRoom, "LOG_LEVEL=debug")
	cmd, out := startRun(ctx, t, sl, e)

	form, slot := openFormOf(ctx, t, sl, "intro-call")
	// A hundred bookings halfway to the slot fill the list before it.
	at, err := time.Parse(time.RFC3339, slot)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	mid, name := now.Add(at.Sub(now)/2), "Filler"
	for i := range 100 {
		start := mid.Add(time.Duration(i) * time.Millisecond)
		sb.AddBooking(bookingtest.DemoOwner, bookingtest.Booking{Start: start, End: start.Add(time.Millisecond), BookerName: &name})
	}
	submitGrace(ctx, t, sl, form, slot, "America/New_York")
	dm := dmSaying(ctx, t, sl, 0, "Booked.")
	if !strings.Contains(string(dm.Blocks), "could not check it in the bookings list, which shows only the first 100 upcoming bookings") {
		t.Errorf("the outcome lacks the caveat:\n%s", dm.Blocks)
	}
	var id string
	for _, b := range sb.Bookings(bookingtest.DemoOwner) {
		if b.BookerEmail != nil && *b.BookerEmail == "grace@example.com" {
			id = b.ID
		}
	}
	if id == "" || !strings.Contains(string(dm.Blocks), id) {
		t.Fatalf("booking %q not made, or not the one told:\n%s", id, dm.Blocks)
	}
	out.waitCount(ctx, t, "review report posted", 1)
	report := string(reviewReports(sl)[0].Blocks)
	for _, want := range []string{"booked, as the booking service answered with its receipt", "beyond the first 100", "nothing to book again"} {
		if !strings.Contains(report, want) {
			t.Errorf("the review lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "unclear") || strings.Contains(report, "Check again") {
		t.Errorf("the review calls a plain answer unclear:\n%s", report)
	}

	// Cancel it: asked, pressed, answered cancelled.
	if _, err := sl.SendSlashCommand(ctx, slacktest.SlashCommand{Command: "/booking", Text: "cancel " + id, UserID: ada}); err != nil {
		t.Fatal(err)
	}
	ask, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Kind == "response_url" && strings.Contains(string(m.Blocks), "Cancel this booking?")
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sl.SendInteraction(ctx, slacktest.BlockAction(ada, "cancel_booking", id, slacktest.InMessage(ask))); err != nil {
		t.Fatal(err)
	}
	done, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Kind == "response_url" && strings.Contains(string(m.Blocks), "answered that this booking is cancelled")
	})
	if err != nil {
		t.Fatalf("no cancel outcome: %v", err)
	}
	if text := string(done.Blocks); !strings.Contains(text, "Cancelled.") || !strings.Contains(text, "lies beyond them") || strings.Contains(text, "most likely cancelled already") {
		t.Errorf("the cancel outcome:\n%s", text)
	}
	stopRun(t, cmd, out)
	for _, b := range sb.Bookings(bookingtest.DemoOwner) {
		if b.ID == id && !b.Cancelled {
			t.Error("the sandbox did not cancel it")
		}
	}
	if a := audit(ctx, t, e); !strings.Contains(a, "outcome: confirmed (beyond_list), booking "+id) || !strings.Contains(a, "outcome: cancelled (beyond_list)") {
		t.Errorf("audit:\n%s", a)
	}
	noSecrets(t, sb, sl, out.String())
}

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

// TestTeamCalendarsStayApart is the real binary with a team on two
// calendars: bob on the owner's; ada and cat on one of their own, which
// both connected with the same key. Ada's unclear booking is reviewed by
// ada and cat, never by bob (the first allowed user), and only they may
// mark it checked; each person's audit shows only the calendar they act
// on; the same booking asked for by ada and cat at once is sent once; and
// the operator's `bookbot audit` labels every entry with its calendar.
func TestTeamCalendarsStayApart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	sb := calendarsSandbox(t)
	sl := newStandIn(t)
	sl.AddUser(slacktest.User{ID: "UBOB", Name: "bob", RealName: "Bob Kahn", TZ: "America/New_York"})
	sl.AddUser(slacktest.User{ID: "UCAT", Name: "cat", RealName: "Cat Stevens", TZ: "Europe/London"})
	e := env(sb, sl, "BOOKBOT_ALLOWED_USERS=UBOB,UADA,UCAT", "BOOKBOT_SECRET_KEY="+newSecretKey(t), "LOG_LEVEL=debug", "LOG_FORMAT=text")
	cmd, out := startRun(ctx, t, sl, e)
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(out.String())
		}
	})
	for _, u := range []string{ada, "UCAT"} {
		connect(ctx, t, sl, u, bookingtest.OtherKey)
	}
	if _, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Channel == "UCAT" && strings.Contains(m.Text, "<@"+ada+"> connected the same calendar")
	}); err != nil {
		t.Fatalf("cat was not told she shares ada's calendar: %v", err)
	}

	form := func(user, event string) slacktest.View {
		t.Helper()
		prior := map[string]bool{}
		for _, v := range sl.Views() {
			prior[v.ID] = true
		}
		if _, err := sl.SendSlashCommand(ctx, slacktest.SlashCommand{Command: "/booking", Text: "new " + event, UserID: user}); err != nil {
			t.Fatal(err)
		}
		v, err := sl.WaitView(ctx, func(v slacktest.View) bool {
			return !prior[v.ID] && v.TriggerUser == user && v.CallbackID == "booking_create" && len(v.Options("slot")) > 0
		})
		if err != nil {
			t.Fatalf("no booking form for %s: %v", user, err)
		}
		return v
	}
	book := func(user string, v slacktest.View, slot, name, email string) {
		t.Helper()
		in := map[string]string{"slot": slot, "name": name, "email": email, "booker_tz": "Europe/Berlin"}
		if _, err := sl.SubmitInputs(ctx, user, v.ID, in); err != nil {
			t.Fatal(err)
		}
	}

	// Ada's unclear booking: reviewed by ada and cat, who act on her
	// calendar; never by bob, the first allowed user.
	v := form(ada, "other-call")
	slot := v.Options("slot")[0].Value
	sb.FailNext(bookingtest.EndpointCreateBooking, bookingtest.HTMLError(503))
	book(ada, v, slot, "Alice Adasguest", "alice@ada.example")
	var report slacktest.Message
	for _, u := range []string{ada, "UCAT"} {
		m, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
			return m.Kind == "message" && m.Channel == u && strings.HasPrefix(m.Text, "A booking needs a human look")
		})
		if err != nil {
			t.Fatalf("%s got no review of ada's calendar's booking: %v", u, err)
		}
		report = m
	}
	// Bob's own unclear booking on the owner's calendar is his to review.
	bv := form("UBOB", "intro-call")
	sb.FailNext(bookingtest.EndpointCreateBooking, bookingtest.HTMLError(503))
	book("UBOB", bv, bv.Options("slot")[0].Value, "Oscar Ownersguest", "oscar@owner.example")
	if _, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Kind == "message" && m.Channel == "UBOB" && strings.HasPrefix(m.Text, "A booking needs a human look")
	}); err != nil {
		t.Fatalf("bob got no review of his own booking: %v", err)
	}

	// Bob cannot check ada's; cat can.
	if _, err := sl.SendInteraction(ctx, slacktest.BlockAction("UBOB", "review_checked", "", slacktest.InMessage(report))); err != nil {
		t.Fatal(err)
	}
	if _, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Kind == "response_url" && m.User == "UBOB" && strings.Contains(m.Text, "Only people acting on that calendar")
	}); err != nil {
		t.Fatalf("bob's press on ada's review was not refused: %v", err)
	}
	if _, err := sl.SendInteraction(ctx, slacktest.BlockAction("UCAT", "review_checked", "", slacktest.InMessage(report))); err != nil {
		t.Fatal(err)
	}
	if _, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.OriginalTS == report.TS && strings.Contains(string(m.Blocks), "Checked by") && strings.Contains(string(m.Blocks), "UCAT")
	}); err != nil {
		t.Fatalf("cat could not check the review of her calendar: %v", err)
	}

	// Each audit is of one calendar.
	bobs := slashAs(ctx, t, sl, out, "UBOB", "audit", "last 24 hours")
	cats := slashAs(ctx, t, sl, out, "UCAT", "audit", "last 24 hours")
	for _, c := range []struct {
		who          string
		m            slacktest.Message
		sees, misses string
	}{{"bob", bobs, "Oscar Ownersguest", "Adasguest"}, {"cat", cats, "Alice Adasguest", "Ownersguest"}} {
		if text := string(c.m.Blocks); !strings.Contains(text, c.sees) || strings.Contains(text, c.misses) {
			t.Errorf("%s's audit shows another calendar's, or not their own:\n%s", c.who, text)
		}
	}

	// One calendar, one booking: ada's create is held in flight, and the
	// same booking from cat, through her own copy of the key, is not sent.
	av, cv := form(ada, "other-call"), form("UCAT", "other-call")
	free := av.Options("slot")[1].Value
	release := sb.HoldNext(bookingtest.EndpointCreateBooking)
	defer release()
	posts := func() int {
		n := 0
		for _, r := range sb.Requests() {
			if r.Endpoint == bookingtest.EndpointCreateBooking {
				n++
			}
		}
		return n
	}
	before := posts()
	book(ada, av, free, "Grace Hopper", "grace@example.com")
	testutil.Until(ctx, t, "ada's create in flight", func() bool { return posts() == before+1 })
	book("UCAT", cv, free, "Grace Hopper", "grace@example.com")
	if _, err := sl.WaitView(ctx, func(v slacktest.View) bool {
		return v.ID == cv.ID && strings.Contains(string(v.Blocks), "Already being booked")
	}); err != nil {
		t.Fatalf("cat's copy of ada's booking was not refused: %v", err)
	}
	release()
	if _, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Channel == ada && strings.HasPrefix(m.Text, "Booked")
	}); err != nil {
		t.Fatalf("ada's booking did not finish: %v", err)
	}
	if n := posts() - before; n != 1 {
		t.Errorf("%d POST /bookings for one booking of one calendar, want 1", n)
	}
	stopRun(t, cmd, out)

	// The operator sees every calendar's, each labelled.
	audit := exec.CommandContext(ctx, binary, "audit", "-since", "1h")
	audit.Env = e
	text, err := audit.CombinedOutput()
	if err != nil {
		t.Fatalf("bookbot audit: %v\n%s", err, text)
	}
	for _, want := range []string{"create by UBOB on the owner's calendar", "create by UADA on UADA's own calendar cal-", "Alice Adasguest", "Oscar Ownersguest"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("bookbot audit lacks %q:\n%s", want, text)
		}
	}
}

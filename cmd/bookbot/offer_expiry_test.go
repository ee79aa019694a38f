package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/internal/testutil"
)

// The real binary, its clock moved past OFFER_TTL: a click on a time of
// the offer's card, and the form Grace opened before it expired, book
// nothing; she is told the offer expired, and when, and the card says so.
func TestRunOfferExpired(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	const ttl = time.Hour
	sb := bookingtest.NewServer(t)
	sl := slacktest.NewServer(t)
	sl.AddUser(slacktest.User{ID: "UADA", Name: "ada", RealName: "Ada Lovelace", TZ: "Europe/Berlin"})
	sl.AddUser(slacktest.User{ID: "UGRACE", Name: "grace", RealName: "Grace Hopper", TZ: "America/New_York", Email: "grace@example.com"})
	sl.AddChannel(slacktest.Channel{ID: "C0TEAM", Name: "team", Members: []string{"UADA", "UGRACE"}})
	clock, moved := newMovedClock(t)
	cmd, out := startRun(ctx, t, sl, env(sb, sl, "OFFER_TTL="+ttl.String(), moved))
	w := offerWorld{ctx: ctx, t: t, sl: sl, out: out}

	posted := time.Now()
	card := w.offer("intro-call <@UGRACE|grace>")
	made := time.Now()
	times := offerButtons(card, "offer_slot")
	if len(times) < 2 {
		t.Fatalf("the card offers %d times, want 2 or more:\n%s", len(times), card.Blocks)
	}
	w.click("UGRACE", card, "offer_slot", times[0])
	form := w.form("UGRACE", "")

	// Past the TTL by a minute. The binary reads the clock's file again
	// within fileReread of the move: until then it may not see it.
	clock.advance(t, ttl+time.Minute)
	at := time.Now()
	testutil.Until(ctx, t, "the binary to read the moved clock", func() bool { return time.Since(at) >= fileReread })

	w.click("UGRACE", card, "offer_slot", times[1])
	w.reply("UGRACE", "This offer expired")
	expired := w.card(card, "Expired")
	if n := len(offerButtons(expired, "offer_slot")); n != 0 {
		t.Errorf("the expired card still offers %d times:\n%s", n, expired.Blocks)
	}
	// When it expired, truthfully: the card's time plus the TTL.
	var told string
	for _, m := range sl.Messages() {
		if m.Kind == "response_url" && m.User == "UGRACE" && strings.Contains(m.Text, "This offer expired") {
			told = m.Text
		}
	}
	if a, b := posted.Add(ttl).UTC().Format("Mon 2 Jan, 15:04 MST"), made.Add(ttl).UTC().Format("Mon 2 Jan, 15:04 MST"); !strings.Contains(told, "expired "+a+":") && !strings.Contains(told, "expired "+b+":") {
		t.Errorf("Grace was told %q, want that it expired at %s", told, a)
	}
	if !strings.Contains(told, "nothing was sent") {
		t.Errorf("Grace was told %q, want that nothing was sent", told)
	}
	for _, v := range sl.Views() {
		if v.CallbackID == "offer_book" && v.ID != form.ID {
			t.Errorf("a click on the expired offer opened a form: %s", v.Blocks)
		}
	}

	w.submitSends(sb, "UGRACE", form.ID, nil, "This offer expired")
	if n := posts(sb); n != 0 {
		t.Errorf("%d POST /bookings from an expired offer, want none", n)
	}
	stopRun(t, cmd, out)
	noSecrets(t, sb, sl, out.String())
}

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/internal/testutil"
)

// The keys of the people in TestOwnCalendars: ada's calendar is the
// sandbox's second owner; bob's and cat's are added for the test.
const (
	bobKey    = "sandbox_bob_key_5d1e77"
	bobNewKey = "sandbox_bob_key_rotated_0c4f2a"
	catKey    = "sandbox_cat_key_91ab3e"
	wrongKey  = "sandbox_wrong_key_000000"
	bobOwner  = "owner-bob"
	catOwner  = "owner-cat"
)

func newSecretKey(t *testing.T) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// calendarsSandbox is the seeded sandbox with bob's and cat's calendars,
// each with an event type of its own.
func calendarsSandbox(t *testing.T) *bookingtest.Server {
	sb := bookingtest.NewServer(t)
	berlin, _ := time.LoadLocation("Europe/Berlin")
	hours := bookingtest.Weekdays(0, 24*time.Hour)
	sb.AddOwner(bobKey, bobOwner, berlin, hours)
	sb.AddEventType(bobOwner, bookingtest.EventType{Slug: "bob-chat", Title: "Chat with Bob", DurationMinutes: 20, Kind: bookingtest.KindSolo})
	sb.AddOwner(catKey, catOwner, berlin, hours)
	sb.AddEventType(catOwner, bookingtest.EventType{Slug: "cat-call", Title: "Call with Cat", DurationMinutes: 30, Kind: bookingtest.KindSolo})
	return sb
}

// acting runs fn and checks that every request it made to the booking API
// carried owner's key, and that it made one.
func acting(t *testing.T, sb *bookingtest.Server, owner, what string, fn func()) {
	t.Helper()
	before := len(sb.Requests())
	fn()
	reqs := sb.Requests()[before:]
	if len(reqs) == 0 {
		t.Errorf("%s: no request to the booking API", what)
	}
	for _, r := range reqs {
		if r.Owner != owner {
			t.Errorf("%s: %s %s went with %q's key (authorized %v), want %q's", what, r.Method, r.Path, r.Owner, r.Authorized, owner)
		}
	}
}

// slashAs runs `/booking text` as user and waits for the reply holding want.
func slashAs(ctx context.Context, t *testing.T, sl *slacktest.Server, out *logLines, user, text, want string) slacktest.Message {
	t.Helper()
	prior := len(sl.Messages())
	if _, err := sl.SendSlashCommand(ctx, slacktest.SlashCommand{Command: "/booking", Text: text, UserID: user}); err != nil {
		t.Fatal(err)
	}
	var m slacktest.Message
	testutil.Until(ctx, t, "/booking "+text+" as "+user+": a reply with "+want, func() bool {
		msgs := sl.Messages()
		for _, x := range msgs[min(prior, len(msgs)):] {
			if x.Kind == "response_url" && strings.Contains(x.Text+string(x.Blocks), want) {
				m = x
				return true
			}
		}
		return false
	})
	return m
}

// connect runs `/booking connect` as user and submits key; it returns the
// submission's ack.
func connect(ctx context.Context, t *testing.T, sl *slacktest.Server, user, key string) slacktest.Ack {
	t.Helper()
	prior := map[string]bool{}
	for _, v := range sl.Views() {
		prior[v.ID] = true
	}
	if _, err := sl.SendSlashCommand(ctx, slacktest.SlashCommand{Command: "/booking", Text: "connect", UserID: user}); err != nil {
		t.Fatal(err)
	}
	v, err := sl.WaitView(ctx, func(v slacktest.View) bool {
		return v.TriggerUser == user && v.CallbackID == "account_connect" && !v.Closed && !prior[v.ID]
	})
	if err != nil {
		t.Fatalf("no connect form for %s: %v", user, err)
	}
	ack, err := sl.SubmitInputs(ctx, user, v.ID, map[string]string{"api_key": key})
	if err != nil {
		t.Fatal(err)
	}
	return ack
}

// TestOwnCalendars is the real binary with people's own calendars: two
// people with two keys see and book only their own calendar, every request
// carrying the key of the person acting; someone unconnected acts on the
// owner's; a refused key is not stored; disconnecting, a 401, a
// deactivation and leaving the allow-list each delete the key; and no key
// is in the logs, in what bookbot sent Slack, or in its state file.
func TestOwnCalendars(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	sb := calendarsSandbox(t)
	sl := newStandIn(t)
	sl.AddUser(slacktest.User{ID: "UBOB", Name: "bob", RealName: "Bob Kahn", TZ: "America/New_York"})
	sl.AddUser(slacktest.User{ID: "UCAT", Name: "cat", RealName: "Cat Stevens", TZ: "Europe/London"})
	secret := newSecretKey(t)
	state := t.TempDir()
	e := env(sb, sl, "BOOKBOT_STATE_DIR="+state, "BOOKBOT_ALLOWED_USERS=UADA,UBOB,UCAT", "BOOKBOT_SECRET_KEY="+secret, "LOG_LEVEL=debug", "LOG_FORMAT=text")
	cmd, out := startRun(ctx, t, sl, e)
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(out.String())
		}
	})

	// A refused key: an error in the form, nothing stored.
	ack := connect(ctx, t, sl, ada, wrongKey)
	if !strings.Contains(string(ack.Payload), `"errors"`) || !strings.Contains(string(ack.Payload), "refused this key") {
		t.Fatalf("a wrong key was acked with %s", ack.Payload)
	}
	slashAs(ctx, t, sl, out, ada, "account", "the owner's calendar")

	// Ada connects the second owner's calendar, bob his own.
	ack = connect(ctx, t, sl, ada, bookingtest.OtherKey)
	if !strings.Contains(string(ack.Payload), `"clear"`) {
		t.Fatalf("a working key was acked with %s", ack.Payload)
	}
	if _, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Channel == ada && strings.HasPrefix(m.Text, "Connected: your calendar (1 event type)")
	}); err != nil {
		t.Fatalf("ada was not told she is connected: %v\n%s", err, out.String())
	}
	connect(ctx, t, sl, "UBOB", bobKey)
	if _, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Channel == "UBOB" && strings.HasPrefix(m.Text, "Connected: your calendar")
	}); err != nil {
		t.Fatalf("bob was not told he is connected: %v", err)
	}
	// Their App Home is published after they connect: let it be, so what
	// follows is each one's own.
	for _, u := range []string{ada, "UBOB"} {
		testutil.Until(ctx, t, u+"'s App Home", func() bool { _, ok := sl.HomeView(u); return ok })
	}

	// Each sees only their own calendar.
	acting(t, sb, bookingtest.OtherOwner, "ada's types", func() {
		m := slashAs(ctx, t, sl, out, ada, "types", "Other call")
		if strings.Contains(string(m.Blocks), "Intro call") {
			t.Error("ada's types show the owner's")
		}
	})
	acting(t, sb, bookingtest.OtherOwner, "ada's list", func() {
		slashAs(ctx, t, sl, out, ada, "list", bookingtest.OtherBookingID)
	})
	acting(t, sb, bobOwner, "bob's types", func() {
		slashAs(ctx, t, sl, out, "UBOB", "types", "Chat with Bob")
	})
	acting(t, sb, bookingtest.DemoOwner, "cat's types (not connected)", func() {
		slashAs(ctx, t, sl, out, "UCAT", "types", "Intro call")
	})

	// Ada books on her calendar.
	acting(t, sb, bookingtest.OtherOwner, "ada's booking", func() {
		if _, err := sl.SendSlashCommand(ctx, slacktest.SlashCommand{Command: "/booking", Text: "new other-call", UserID: ada}); err != nil {
			t.Fatal(err)
		}
		form, err := sl.WaitView(ctx, func(v slacktest.View) bool {
			return v.TriggerUser == ada && v.CallbackID == "booking_create" && len(v.Options("slot")) > 0
		})
		if err != nil {
			t.Fatalf("no booking form: %v\n%s", err, out.String())
		}
		submitGrace(ctx, t, sl, form, form.Options("slot")[0].Value, "Europe/Berlin")
		if _, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
			return m.Channel == ada && strings.HasPrefix(m.Text, "Booked")
		}); err != nil {
			t.Fatalf("ada's booking did not finish: %v\n%s", err, out.String())
		}
	})
	var graces int
	for _, b := range sb.Bookings(bookingtest.OtherOwner) {
		if b.BookerEmail != nil && *b.BookerEmail == "grace@example.com" {
			graces++
		}
	}
	if graces != 1 {
		t.Errorf("ada's calendar has %d bookings of Grace, want 1", graces)
	}
	for _, b := range sb.Bookings(bookingtest.DemoOwner) {
		if b.BookerEmail != nil && *b.BookerEmail == "grace@example.com" {
			t.Error("ada's booking went to the owner's calendar")
		}
	}

	// Disconnecting deletes ada's key: she is back on the owner's calendar.
	slashAs(ctx, t, sl, out, ada, "disconnect", "Disconnected")
	acting(t, sb, bookingtest.DemoOwner, "ada's types after disconnecting", func() {
		slashAs(ctx, t, sl, out, ada, "types", "Intro call")
	})

	// Bob's key is rotated on the booking service: the 401 deletes it, he
	// is told once, and nothing falls back to the owner's calendar.
	sb.AddOwner(bobNewKey, bobOwner, nil, bookingtest.Weekdays(0, 24*time.Hour))
	slashAs(ctx, t, sl, out, "UBOB", "types", "Connect your calendar again")
	if _, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Channel == "UBOB" && strings.Contains(m.Text, "was refused by the booking service")
	}); err != nil {
		t.Fatalf("bob was not told his key was refused: %v\n%s", err, out.String())
	}
	out.waitCount(ctx, t, "key deleted: the booking service refused it", 1)
	before := len(sb.Requests())
	slashAs(ctx, t, sl, out, "UBOB", "list", "Connect again")
	if n := len(sb.Requests()) - before; n != 0 {
		t.Errorf("after the 401, bob's list made %d requests; want none", n)
	}

	// Ada connects again and is deactivated in Slack: her key is deleted.
	connect(ctx, t, sl, ada, bookingtest.OtherKey)
	out.waitCount(ctx, t, "calendar connected", 3)
	if _, err := sl.SendEvent(ctx, map[string]any{"type": "user_change", "user": map[string]any{"id": ada, "deleted": true}}); err != nil {
		t.Fatal(err)
	}
	out.waitCount(ctx, t, "key deleted: the person was deactivated in Slack", 1)

	// Cat connects, then leaves the allow-list: the next start deletes her key.
	connect(ctx, t, sl, "UCAT", catKey)
	out.waitCount(ctx, t, "calendar connected", 4)
	stopRun(t, cmd, out)
	logs := out.String()
	cmd, out = startRun(ctx, t, sl, append(e, "BOOKBOT_ALLOWED_USERS=UADA,UBOB"))
	out.waitCount(ctx, t, "key deleted: the person is no longer in BOOKBOT_ALLOWED_USERS", 1)
	stopRun(t, cmd, out)
	logs += out.String()

	// The journal says which calendar ada's booking went to.
	audit := exec.CommandContext(ctx, binary, "audit", "-since", "1h")
	audit.Env = e
	auditOut, err := audit.CombinedOutput()
	if err != nil || !strings.Contains(string(auditOut), "create by UADA on UADA's own calendar") {
		t.Errorf("audit does not say ada's booking went to her calendar: %v\n%s", err, auditOut)
	}
	logs += string(auditOut)

	// No key anywhere: logs, what bookbot sent Slack, the state file.
	keys := []string{sb.Key, bookingtest.OtherKey, bobKey, bobNewKey, catKey, wrongKey, secret}
	var sent bytes.Buffer
	for _, m := range sl.Messages() {
		sent.WriteString(m.Text)
		sent.Write(m.Blocks)
	}
	for _, c := range sl.Calls() {
		sent.WriteString(c.Form.Encode())
		sent.Write(c.JSON)
	}
	for _, a := range sl.Acks() {
		sent.Write(a.Payload)
	}
	for _, v := range sl.Views() {
		sent.Write(v.Blocks)
	}
	db, err := os.ReadFile(filepath.Join(state, "bookbot.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		for where, s := range map[string]string{"the logs": logs, "what bookbot sent Slack": sent.String(), "bookbot.db": string(db)} {
			if strings.Contains(s, k) {
				t.Errorf("a key is in %s", where)
			}
		}
	}
	for _, r := range sb.Requests() {
		if r.LeakedKey {
			t.Errorf("a key went outside the Authorization header: %s %s", r.Method, r.Path)
		}
	}
}

// A connected person's own calendar's changes come to them as direct
// messages, read with their key; connecting another key starts afresh;
// `notices off` stops them. The read after a change is the next one, an
// interval later on a clock the test moves.
func TestOwnCalendarNotices(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	sb := calendarsSandbox(t)
	sl := newStandIn(t)
	const interval = 15 * time.Second
	clock, moved := newMovedClock(t)
	e := env(sb, sl, "BOOKBOT_SECRET_KEY="+newSecretKey(t), "NOTIFY_INTERVAL="+interval.String(), moved, "LOG_LEVEL=debug", "LOG_FORMAT=text")
	cmd, out := startRun(ctx, t, sl, e)
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(out.String())
		}
	})
	connect(ctx, t, sl, ada, bookingtest.OtherKey)
	out.waitCount(ctx, t, "notices of an own calendar on", 1)
	out.waitCount(ctx, t, "notices: first read recorded", 1)

	before := len(sb.Requests())
	slots := sb.Slots(bookingtest.OtherOwner, "other-call")
	booked, err := sb.BookAsAttendee(bookingtest.OtherOwner, "other-call", slots[2].Start, "Grace Hopper", "grace@example.com")
	if err != nil {
		t.Fatal(err)
	}
	// Each move of the clock by an interval brings the next read. The first
	// may not show the booking: a read joins a list another reader asked
	// for before it (App Home's, say). Sooner than an interval: the clock
	// was moved, not waited for.
	soon, cancelSoon := context.WithTimeout(ctx, interval/2)
	defer cancelSoon()
	notice := func(m slacktest.Message) bool {
		return m.Kind == "message" && strings.HasPrefix(m.Text, "New booking") && carries(m, "bookbot_booking_new", booked)
	}
	for reads := strings.Count(out.String(), "notices: list read"); len(messagesWhere(sl, notice)) == 0; reads++ {
		clock.advance(t, interval)
		out.waitCount(soon, t, "notices: list read", reads+1)
	}
	m, err := sl.WaitMessage(soon, notice)
	if err != nil {
		t.Fatalf("no notice of the new booking within half an interval: %v", err)
	}
	if m.Channel != ada && m.Channel != sl.DMChannel(ada) {
		t.Errorf("the notice went to %s, not to ada", m.Channel)
	}
	for _, r := range sb.Requests()[before:] {
		if r.Owner != bookingtest.OtherOwner && r.Endpoint != "" && r.Owner != "" {
			t.Errorf("%s %s went with %q's key while only ada's calendar was watched", r.Method, r.Path, r.Owner)
		}
	}
	// Ada connects another calendar's key: its first read is a first read,
	// not a comparison with the other calendar's, which would say every
	// booking there was cancelled.
	// Bob's calendar has a booking, so that its first read is the baseline
	// at once (an empty one is read again).
	bs := sb.Slots(bobOwner, "bob-chat")
	if _, err := sb.BookAsAttendee(bobOwner, "bob-chat", bs[0].Start, "Alan Turing", "alan@example.com"); err != nil {
		t.Fatal(err)
	}
	connect(ctx, t, sl, ada, bobKey)
	out.waitCount(ctx, t, "notices: first read recorded", 2)
	for _, m := range sl.Messages() {
		if strings.HasPrefix(m.Text, "Cancelled") {
			t.Errorf("connecting another calendar's key said %q", m.Text)
		}
	}
	slashAs(ctx, t, sl, out, ada, "notices off", "Notices of your calendar are off")
	out.waitCount(ctx, t, "notices of an own calendar off", 1)
	stopRun(t, cmd, out)
}

// Replicas over PostgreSQL share the encrypted keys: a calendar connected
// through one is acted on by every replica with its owner's key.
func TestOwnCalendarsAcrossReplicas(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	rs, sb, sl := startReplicas(ctx, t, 2, "BOOKBOT_SECRET_KEY="+newSecretKey(t))
	connect(ctx, t, sl, ada, bookingtest.OtherKey)
	if _, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Channel == ada && strings.HasPrefix(m.Text, "Connected: your calendar")
	}); err != nil {
		t.Fatalf("ada was not told she is connected: %v", err)
	}
	testutil.Until(ctx, t, "ada's App Home", func() bool { _, ok := sl.HomeView(ada); return ok })
	served := make([]int, len(rs))
	for i := range 6 {
		acting(t, sb, bookingtest.OtherOwner, fmt.Sprintf("ada's types, %d", i+1), func() {
			slashAs(ctx, t, sl, rs[0].out, ada, "types", "Other call")
		})
	}
	for i, r := range rs {
		served[i] = strings.Count(r.out.String(), "event-types")
	}
	for i, n := range served {
		if n == 0 {
			t.Errorf("replica %d read no event types: the test did not reach it (%v)", i, served)
		}
	}
}

// Without BOOKING_API_KEY, bookbot acts only on calendars people connect:
// someone who has not is asked to, and nothing reaches the booking API
// for them.
func TestOwnCalendarsOnly(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	sb := calendarsSandbox(t)
	sl := newStandIn(t)
	e := append(env(sb, sl, "BOOKBOT_SECRET_KEY="+newSecretKey(t), "LOG_LEVEL=debug", "LOG_FORMAT=text"), "BOOKING_API_KEY=")
	cmd, out := startRun(ctx, t, sl, e)
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(out.String())
		}
	})
	before := len(sb.Requests())
	slashAs(ctx, t, sl, out, ada, "types", "Connect your calendar first")
	if n := len(sb.Requests()) - before; n != 0 {
		t.Errorf("an unconnected person's types made %d requests; want none", n)
	}
	connect(ctx, t, sl, ada, bobKey)
	out.waitCount(ctx, t, "calendar connected", 1)
	testutil.Until(ctx, t, "ada's App Home", func() bool { _, ok := sl.HomeView(ada); return ok })
	acting(t, sb, bobOwner, "ada's types", func() {
		slashAs(ctx, t, sl, out, ada, "types", "Chat with Bob")
	})
	stopRun(t, cmd, out)
}

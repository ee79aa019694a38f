package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/booking/journal"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/internal/testutil"
	"github.com/bookbot/bookbot/store/bolt"
)

const (
	ada        = "UADA"
	reviewRoom = "CREVIEW"
)

// newStandIn is a Slack stand-in with ada and a review channel the bot is in.
func newStandIn(t *testing.T, opts ...func(*slacktest.Options)) *slacktest.Server {
	sl := slacktest.NewServer(t, opts...)
	sl.AddUser(slacktest.User{ID: ada, Name: "ada", RealName: "Ada Lovelace", TZ: "Europe/Berlin"})
	sl.AddChannel(slacktest.Channel{ID: reviewRoom, Name: "bookbot-review", Members: []string{sl.BotUserID(), ada}})
	return sl
}

// openForm runs `/booking new intro-call` as ada and returns the modal with
// its slots loaded, and the first slot offered.
func openForm(ctx context.Context, t *testing.T, sl *slacktest.Server) (slacktest.View, string) {
	t.Helper()
	if _, err := sl.SendSlashCommand(ctx, slacktest.SlashCommand{Command: "/booking", Text: "new intro-call", UserID: ada}); err != nil {
		t.Fatal(err)
	}
	v, err := sl.WaitView(ctx, func(v slacktest.View) bool {
		return v.TriggerUser == ada && len(v.Options("slot")) > 0
	})
	if err != nil {
		t.Fatalf("no booking form: %v", err)
	}
	if opts := v.Options("slot"); len(opts) > 0 {
		return v, opts[0].Value
	}
	t.Fatalf("the form offers no slot: %s", v.Blocks)
	return v, ""
}

// submitGrace submits the form as ada, booking Grace Hopper at slot for an
// attendee in zone.
func submitGrace(ctx context.Context, t *testing.T, sl *slacktest.Server, form slacktest.View, slot, zone string) {
	t.Helper()
	in := map[string]string{"slot": slot, "name": "Grace Hopper", "email": "grace@example.com", "booker_tz": zone}
	if _, err := sl.SubmitInputs(ctx, ada, form.ID, in); err != nil {
		t.Fatal(err)
	}
}

// messagesWhere are the messages Slack has that match.
func messagesWhere(sl *slacktest.Server, match func(slacktest.Message) bool) []slacktest.Message {
	var out []slacktest.Message
	for _, m := range sl.Messages() {
		if match(m) {
			out = append(out, m)
		}
	}
	return out
}

// carries reports whether m's metadata is of event and names booking id,
// where machines read it: people read no ID.
func carries(m slacktest.Message, event, id string) bool {
	var meta struct {
		EventType    string         `json:"event_type"`
		EventPayload map[string]any `json:"event_payload"`
	}
	return json.Unmarshal(m.Metadata, &meta) == nil && meta.EventType == event && meta.EventPayload["booking_id"] == id
}

func reviewReports(sl *slacktest.Server) []slacktest.Message {
	return messagesWhere(sl, func(m slacktest.Message) bool {
		return m.Kind == "message" && m.Channel == reviewRoom && strings.Contains(string(m.Blocks), "needs a human look")
	})
}

// A bookbot killed while the API holds its create, then restarted: the
// journal's open entry is settled by listing and reported exactly once.
func TestCrashMidCreateIsReconciledAndReportedOnce(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	sb := bookingtest.NewServer(t)
	sl := newStandIn(t)
	state := t.TempDir()
	e := env(sb, sl, "BOOKBOT_STATE_DIR="+state, "BOOKBOT_REVIEW_CHANNEL="+reviewRoom, "LOG_LEVEL=debug")

	first, out := startRun(ctx, t, sl, e)
	form, slot := openForm(ctx, t, sl)
	sb.CommitThenHang(bookingtest.EndpointCreateBooking)
	submitGrace(ctx, t, sl, form, slot, "America/New_York")
	made := func() *bookingtest.Booking {
		for _, b := range sb.Bookings(bookingtest.DemoOwner) {
			if b.BookerEmail != nil && *b.BookerEmail == "grace@example.com" {
				return &b
			}
		}
		return nil
	}
	testutil.Until(ctx, t, "the sandbox to commit the booking", func() bool { return made() != nil })
	if err := first.Process.Kill(); err != nil { // the API is still holding the answer
		t.Fatal(err)
	}
	_ = first.Wait()
	if strings.Contains(out.String(), `"msg":"booking create"`) {
		t.Fatalf("the create finished before the kill:\n%s", out)
	}
	db, err := bolt.Open(state, bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	jr := db.Journal()
	entries, err := jr.Since(time.Time{})
	if err != nil || len(entries) != 1 || !entries[0].Open() || entries[0].Actor != ada {
		t.Fatalf("journal after the kill: %+v, %v", entries, err)
	}

	// Restart: settled by listing, reported to the review channel and to ada.
	second, out := startRun(ctx, t, sl, e)
	out.waitCount(ctx, t, "review report posted", 1)
	reports := reviewReports(sl)
	if len(reports) != 1 {
		t.Fatalf("%d review reports, want 1", len(reports))
	}
	text := string(reports[0].Blocks)
	for _, want := range []string{"booked, and the bookings list shows it", made().ID, "stopped while this booking was in flight", "*Intro call*", "Grace Hopper (grace@example.com)", "@" + ada} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	if _, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Kind == "message" && m.Channel == ada && strings.Contains(string(m.Blocks), "needs a human look")
	}); err != nil {
		t.Errorf("ada, who asked, was not told: %v", err)
	}
	stopRun(t, second, out)

	// A third start finds nothing left to report.
	third, out := startRun(ctx, t, sl, e)
	out.waitCount(ctx, t, `"unreported":0`, 1)
	stopRun(t, third, out)
	if n := len(reviewReports(sl)); n != 1 {
		t.Errorf("%d review reports after another restart, want 1", n)
	}
	if n := posts(sb); n != 1 {
		t.Errorf("%d POST /bookings, want 1: recovery never books again", n)
	}

	// bookbot audit shows the entry, settled and reported.
	cmd := exec.CommandContext(ctx, binary, "audit", "-since", "1h")
	cmd.Env = e
	audit, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("audit: %v\n%s", err, audit)
	}
	for _, want := range []string{"create by " + ada, "outcome: confirmed, booking " + made().ID, "settled after a restart", "reported to " + reviewRoom, "1 writes since", "1 awaiting a human check"} {
		if !strings.Contains(string(audit), want) {
			t.Errorf("audit lacks %q:\n%s", want, audit)
		}
	}
	noSecrets(t, sb, sl, out.String(), string(audit))
}

// With BOOKBOT_DRY_RUN=true reads are real and nothing is written; every
// message says so.
func TestRunDryRunSendsNoWrite(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	sb := bookingtest.NewServer(t)
	sl := newStandIn(t)
	e := env(sb, sl, "BOOKBOT_DRY_RUN=true")
	cmd, out := startRun(ctx, t, sl, e)
	out.waitCount(ctx, t, "dry run: bookings and cancellations are not sent", 1)

	form, slot := openForm(ctx, t, sl)
	submitGrace(ctx, t, sl, form, slot, "Europe/Berlin")
	dm, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Kind == "message" && m.Channel == ada && strings.Contains(string(m.Blocks), "nothing was booked")
	})
	if err != nil {
		t.Fatalf("no dry-run outcome: %v\n%s", err, out)
	}
	for _, want := range []string{"Dry run:* bookbot sends no bookings", "POST /api/v1/bookings", "email = grace@example.com", "start = " + slot} {
		if !strings.Contains(string(dm.Blocks), want) {
			t.Errorf("outcome lacks %q:\n%s", want, dm.Blocks)
		}
	}

	if _, err := sl.SendSlashCommand(ctx, slacktest.SlashCommand{Command: "/booking", Text: "list", UserID: ada}); err != nil {
		t.Fatal(err)
	}
	list, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Kind == "response_url" && strings.Contains(string(m.Blocks), "cancel_booking")
	})
	if err != nil {
		t.Fatal(err)
	}
	// Cancel… in the first row's menu, then Cancel booking in the row
	// that asks.
	id := "5eed0000-0000-4000-8000-000000000001"
	row := slacktest.WithBlockID("row:0:" + id)
	if _, err := sl.SendInteraction(ctx, slacktest.BlockAction(ada, "cancel_booking", id, slacktest.InMessage(list), row)); err != nil {
		t.Fatal(err)
	}
	ask, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Kind == "response_url" && m.ReplaceOriginal && strings.Contains(string(m.Blocks), "Cancel this booking?")
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sl.SendInteraction(ctx, slacktest.BlockAction(ada, "cancel_booking", id, slacktest.InMessage(ask), row)); err != nil {
		t.Fatal(err)
	}
	if _, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return strings.Contains(string(m.Blocks), "nothing was cancelled") && strings.Contains(string(m.Blocks), id)
	}); err != nil {
		t.Fatalf("no dry-run cancel outcome: %v", err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v\n%s", err, out)
	}
	for _, r := range sb.Requests() {
		if r.Endpoint == bookingtest.EndpointCreateBooking || r.Endpoint == bookingtest.EndpointCancelBooking {
			t.Errorf("a dry run sent %s", r.Endpoint)
		}
	}

	// The journal records what was not sent.
	var stdout, stderr bytes.Buffer
	getenv := func(k string) string {
		for _, kv := range e {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
	if err := run(ctx, []string{"audit", "-json"}, getenv, &stdout, &stderr); err != nil {
		t.Fatalf("audit: %v\n%s", err, stderr.String())
	}
	var ops []string
	for line := range strings.SplitSeq(strings.TrimSpace(stdout.String()), "\n") {
		var e journal.Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("audit -json line %q: %v", line, err)
		}
		if !e.DryRun || e.Outcome != booking.DryRun || e.NeedsReview {
			t.Errorf("entry %+v", e)
		}
		ops = append(ops, string(e.Op))
	}
	if strings.Join(ops, ",") != "create,cancel" {
		t.Errorf("journal ops %v, want create,cancel", ops)
	}
}

func TestAuditArguments(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	getenv := func(k string) string {
		if k == "BOOKBOT_STATE_DIR" {
			return state
		}
		return ""
	}
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"audit"}, getenv, &stdout, &stderr); err != nil {
		t.Fatalf("audit of an empty state dir: %v", err)
	}
	if !strings.Contains(stdout.String(), "0 writes since") {
		t.Errorf("output: %s", stdout.String())
	}
	for _, args := range [][]string{{"audit", "-since", "-1h"}, {"audit", "extra"}, {"audit", "-since", "soon"}} {
		if err := run(t.Context(), args, getenv, &stdout, &stderr); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

// `bookbot run` prunes settled journal entries older than
// BOOKBOT_JOURNAL_KEEP_DAYS, and keeps old ones still waiting for a person.
func TestRunPrunesTheJournal(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	state := t.TempDir()
	db, err := bolt.Open(state, bolt.Options{Beside: true})
	if err != nil {
		t.Fatal(err)
	}
	jr := db.Journal()
	jr.Now = func() time.Time { return time.Now().Add(-100 * 24 * time.Hour) }
	for _, o := range []booking.Outcome{booking.Confirmed, booking.Unknown} {
		finish, err := jr.Begin(ctx, booking.Write{Op: booking.OpCancel, Actor: ada, BookingID: "bk_" + string(o)})
		if err != nil {
			t.Fatal(err)
		}
		finish(&booking.Result{Outcome: o})
	}

	sb := bookingtest.NewServer(t)
	sl := newStandIn(t)
	cmd, out := startRun(ctx, t, sl, env(sb, sl, "BOOKBOT_STATE_DIR="+state, "BOOKBOT_REVIEW_CHANNEL="+reviewRoom))
	out.waitCount(ctx, t, `"msg":"journal: old entries pruned","entries":1,"kept_days":90`, 1)
	stopRun(t, cmd, out)

	left, err := jr.Since(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0].BookingID != "bk_unknown" || !left[0].AwaitingReview() {
		t.Errorf("journal after pruning: %+v; want only the unchecked unclear cancel", left)
	}
	// Notices are off, so they keep nothing.
	if _, ok, err := db.Notices().Last(ctx); ok || err != nil {
		t.Errorf("notices off, yet a snapshot was saved: %v, %v", ok, err)
	}
}

// A second bookbot on the same state directory refuses to start, naming
// the first, and leaves the first one's booking in flight alone.
func TestSecondRunOnTheSameStateRefusesToStart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	sb := bookingtest.NewServer(t)
	sl := newStandIn(t)
	state := t.TempDir()
	e := env(sb, sl, "BOOKBOT_STATE_DIR="+state)

	first, out := startRun(ctx, t, sl, e)
	form, slot := openForm(ctx, t, sl)
	sb.SetLatency(bookingtest.EndpointCreateBooking, 2*time.Second)
	submitGrace(ctx, t, sl, form, slot, "America/New_York")
	db, err := bolt.Open(state, bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	jr := db.Journal()
	entries := func() []journal.Entry {
		list, err := jr.Since(time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		return list
	}
	testutil.Until(ctx, t, "the create to be in flight", func() bool { l := entries(); return len(l) == 1 && l[0].Open() })

	// The second one is refused at once, before it touches anything.
	secondCtx, stop := context.WithTimeout(ctx, 20*time.Second)
	defer stop()
	second := exec.CommandContext(secondCtx, binary, "run")
	second.Env = e
	refusal, err := second.CombinedOutput()
	if code := second.ProcessState.ExitCode(); err == nil || code != 1 {
		t.Fatalf("second bookbot: exit %d (%v), want 1\n%s", code, err, refusal)
	}
	for _, want := range []string{"already running", fmt.Sprintf("pid %d", first.Process.Pid), state} {
		if !strings.Contains(string(refusal), want) {
			t.Errorf("the refusal does not say %q:\n%s", want, refusal)
		}
	}

	// The first settles its own booking.
	if _, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Kind == "message" && m.Channel == ada && strings.Contains(string(m.Blocks), "Booked")
	}); err != nil {
		t.Fatalf("ada was not told it is booked: %v\n%s", err, out)
	}
	stopRun(t, first, out)
	l := entries()
	if len(l) != 1 || l[0].Outcome != booking.Confirmed || l[0].Recovered || !strings.Contains(l[0].Owner, fmt.Sprintf("pid %d", first.Process.Pid)) {
		t.Errorf("journal: %+v; the first bookbot's create, settled by it", l)
	}
	noSecrets(t, sb, sl, out.String(), string(refusal))
}

// bookbot audit prints a journal's names inert: a newline or a terminal
// escape sequence in an attendee's name adds no line and moves no cursor.
func TestAuditTextIsInert(t *testing.T) {
	t.Parallel()
	e := journal.Entry{Seq: 7, At: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC), Write: booking.Write{
		Op: booking.OpCreate, Actor: "U1", EventType: "intro-call", Start: "2026-11-25T09:00:00Z", End: "2026-11-25T09:15:00Z",
		Name: "Eve\nMallory\x1b[2J\x1b[31m", Email: "eve@example.com",
	}, Outcome: booking.Confirmed, Created: "bk_1", Seen: []string{"line one\nline two"}}
	text := auditText(e, time.UTC)
	if strings.Contains(text, "\x1b") || strings.Count(text, "\n") != 4 {
		t.Errorf("audit text is not inert:\n%q", text)
	}
	if !strings.Contains(text, "for Eve Mallory [2J [31m <eve@example.com>") {
		t.Errorf("the name is lost:\n%q", text)
	}
}

package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/pgstore/pgtest"
)

// replica is one `bookbot run` of several sharing a database.
type replica struct {
	cmd *exec.Cmd
	out *logLines
}

// startReplicas starts n `bookbot run` processes on one database and one
// Slack stand-in, which spreads envelopes over their connections.
func startReplicas(ctx context.Context, t *testing.T, n int, extra ...string) ([]replica, *bookingtest.Server, *slacktest.Server) {
	t.Helper()
	url := pgtest.URL(t)
	sb := bookingtest.NewServer(t)
	sl := slacktest.NewServer(t, func(o *slacktest.Options) { o.Spread = true })
	sl.AddUser(slacktest.User{ID: ada, Name: "ada", RealName: "Ada Lovelace", TZ: "Europe/Berlin"})
	sl.AddUser(slacktest.User{ID: "UBOB", Name: "bob", RealName: "Bob Kahn", TZ: "America/New_York"})
	sl.AddChannel(slacktest.Channel{ID: reviewRoom, Name: "bookbot-review", Members: []string{sl.BotUserID(), ada}})
	var rs []replica
	for range n {
		e := env(sb, sl, append([]string{"BOOKBOT_DATABASE_URL=" + url, "BOOKBOT_ALLOWED_USERS=UADA,UBOB", "LOG_LEVEL=debug", "LOG_FORMAT=text"}, extra...)...)
		out := newLogLines()
		cmd := exec.Command(binary, "run")
		cmd.Env = e
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		rs = append(rs, replica{cmd: cmd, out: out})
	}
	if _, err := sl.WaitLiveConnections(ctx, n); err != nil {
		for _, r := range rs {
			t.Log(r.out.String())
		}
		t.Fatalf("%d replicas did not connect: %v", n, err)
	}
	return rs, sb, sl
}

// leader waits until one replica says it leads, and returns its index.
func leader(ctx context.Context, t *testing.T, rs []replica, skip int) int {
	t.Helper()
	for {
		for i, r := range rs {
			if i != skip && strings.Contains(r.out.String(), "leading: the digest") {
				return i
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no replica leads: %v", ctx.Err())
		case <-time.After(20 * time.Millisecond): // polls the logs
		}
	}
}

func posts(sb *bookingtest.Server) int {
	n := 0
	for _, r := range sb.Requests() {
		if r.Endpoint == bookingtest.EndpointCreateBooking {
			n++
		}
	}
	return n
}

// The same view submission delivered to two replicas (Slack's retry
// landing on the other one) is one POST; so are two people submitting the
// same booking through different replicas at the same moment.
func TestReplicasBookOnce(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	rs, sb, sl := startReplicas(ctx, t, 2)
	conns := sl.LiveConnections()

	form, slot := openForm(ctx, t, sl)
	in := map[string]string{"slot": slot, "name": "Grace Hopper", "email": "grace@example.com", "booker_tz": "Europe/Berlin"}
	ack, err := sl.SubmitInputs(ctx, ada, form.ID, in, slacktest.ToConnection(conns[0].ID))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sl.Redeliver(ctx, ack.EnvelopeID, slacktest.ToConnection(conns[1].ID)); err != nil {
		t.Fatal(err)
	}
	until(ctx, t, "the booking", func() bool { return booked(sb, "grace@example.com") == 1 })
	if _, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool { return strings.Contains(m.Text, "Booked") }); err != nil {
		t.Fatalf("no outcome: %v", err)
	}

	// Two people, two replicas, the same slot and attendee at once.
	before := posts(sb)
	formA, slotA := openForm(ctx, t, sl)
	if _, err := sl.SendSlashCommand(ctx, slacktest.SlashCommand{Command: "/booking", Text: "new intro-call", UserID: "UBOB"}); err != nil {
		t.Fatal(err)
	}
	formB, err := sl.WaitView(ctx, func(v slacktest.View) bool { return v.TriggerUser == "UBOB" && len(v.Options("slot")) > 0 })
	if err != nil {
		t.Fatal(err)
	}
	twin := map[string]string{"slot": slotA, "name": "Alan Turing", "email": "alan@example.com", "booker_tz": "Europe/Berlin"}
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = sl.SubmitInputs(ctx, ada, formA.ID, twin, slacktest.ToConnection(conns[0].ID)) })
	wg.Go(func() { _, _ = sl.SubmitInputs(ctx, "UBOB", formB.ID, twin, slacktest.ToConnection(conns[1].ID)) })
	wg.Wait()
	until(ctx, t, "both outcomes", func() bool {
		n := 0
		for _, m := range sl.Messages() {
			if strings.Contains(m.Text, "Alan Turing") || strings.Contains(string(m.Blocks), "alan@example.com") {
				n++
			}
		}
		return n >= 2
	})
	for _, r := range rs {
		stopRun(t, r.cmd, r.out)
	}
	if got := posts(sb) - before; got != 1 {
		t.Errorf("%d POST /bookings for one booking submitted through two replicas, want 1", got)
	}
	if got := booked(sb, "alan@example.com"); got != 1 {
		t.Errorf("%d bookings for alan@example.com, want 1", got)
	}
}

// booked counts the confirmed bookings of an attendee.
func booked(sb *bookingtest.Server, email string) int {
	n := 0
	for _, b := range sb.Bookings(bookingtest.DemoOwner) {
		if !b.Cancelled && b.BookerEmail != nil && *b.BookerEmail == email {
			n++
		}
	}
	return n
}

// Scheduled work runs on the replica that leads: when it is killed before
// the digest's time, another takes over and posts the digest, once.
func TestReplicaTakesOverTheDigest(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	// Two minutes ahead: time for the leader to be killed and replaced
	// before the digest is due (the schedule has whole minutes).
	// The schedule's day must not end first: near midnight UTC, a zone
	// twelve hours away.
	zone := "UTC"
	if now := time.Now().UTC(); now.Hour() == 23 && now.Minute() >= 50 {
		zone = "Etc/GMT-12"
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().In(loc).Add(2 * time.Minute)
	rs, _, sl := startReplicas(ctx, t, 2, "DIGEST_CHANNEL="+reviewRoom, "DIGEST_TIMEZONE="+zone,
		fmt.Sprintf("DIGEST_SCHEDULE=%d %d * * *", at.Minute(), at.Hour()))
	first := leader(ctx, t, rs, -1)
	killed := time.Now()
	if err := rs[first].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = rs[first].cmd.Wait()
	next := leader(ctx, t, rs, first)
	t.Logf("replica %d leads %v after replica %d was killed", next, time.Since(killed).Round(time.Millisecond), first)
	if _, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Channel == reviewRoom && strings.Contains(m.Text, "Bookings for")
	}); err != nil {
		t.Fatalf("no digest: %v\n%s", err, rs[next].out.String())
	}
	stopRun(t, rs[next].cmd, rs[next].out)
	if d, _ := digestPosts(sl, reviewRoom); d != 1 {
		t.Errorf("%d digests posted, want 1", d)
	}
}

// check says the database works and which replica leads.
func TestCheckDatabase(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	url := pgtest.URL(t)
	sb := bookingtest.NewServer(t)
	sl := slacktest.NewServer(t)
	check := func() string {
		cmd := exec.CommandContext(ctx, binary, "check")
		cmd.Env = append(env(sb, sl), "BOOKBOT_DATABASE_URL="+url)
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	if out := check(); !strings.Contains(out, "✗ database schema is at version 0, this bookbot's is") || !strings.Contains(out, "→ run bookbot migrate") {
		t.Errorf("before migrating:\n%s", out)
	}
	e := append(env(sb, sl), "BOOKBOT_DATABASE_URL="+url, "LOG_FORMAT=text")
	cmd, out := startRun(ctx, t, sl, e)
	out.waitCount(ctx, t, "leading: the digest", 1)
	if got := check(); !strings.Contains(got, "✓ database works: schema version ") || !strings.Contains(got, " leads (term 1, confirmed ") {
		t.Errorf("with a replica leading:\n%s", got)
	}
	stopRun(t, cmd, out)
}

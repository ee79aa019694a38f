package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/internal/testutil"
	"github.com/bookbot/bookbot/store/pg"
	"github.com/bookbot/bookbot/store/pg/pgtest"
)

// replica is one `bookbot run` of several sharing a database.
type replica struct {
	cmd *exec.Cmd
	out *logLines
	env []string // to start it again
}

// startReplica starts `bookbot run` with env, killed at the end of the test.
func startReplica(t *testing.T, env []string) replica {
	t.Helper()
	out := newLogLines()
	cmd := exec.Command(binary, "run")
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return replica{cmd: cmd, out: out, env: env}
}

// startReplicas starts n `bookbot run` processes on one database and one
// Slack stand-in, which spreads envelopes over their connections. A replica
// that does not lead tries to every 250 ms (testLeaderCheckVar), so that
// one takes over from a leader killed within a moment, not 5 s.
func startReplicas(ctx context.Context, t *testing.T, n int, extra ...string) ([]replica, *bookingtest.Server, *slacktest.Server) {
	t.Helper()
	url := pgtest.URL(t)
	sb := bookingtest.NewServer(t)
	sl := newStandIn(t, func(o *slacktest.Options) { o.Spread = true })
	sl.AddUser(slacktest.User{ID: "UBOB", Name: "bob", RealName: "Bob Kahn", TZ: "America/New_York"})
	var rs []replica
	for range n {
		e := env(sb, sl, append([]string{"BOOKBOT_DATABASE_URL=" + url, testLeaderCheckVar + "=250ms", "BOOKBOT_ALLOWED_USERS=UADA,UBOB", "LOG_LEVEL=debug", "LOG_FORMAT=text"}, extra...)...)
		rs = append(rs, startReplica(t, e))
	}
	if _, err := sl.WaitLiveConnections(ctx, n); err != nil {
		for _, r := range rs {
			t.Log(r.out.String())
		}
		t.Fatalf("%d replicas did not connect: %v", n, err)
	}
	return rs, sb, sl
}

// leaderOf waits until one of the replicas alive leads, and returns it.
func leaderOf(ctx context.Context, t *testing.T, rs []replica, alive []int) int {
	t.Helper()
	return waitAny(ctx, t, rs, alive, "leading: the digest")
}

// waitAny waits until one of the replicas alive logs s, and returns it.
func waitAny(ctx context.Context, t *testing.T, rs []replica, alive []int, s string) (which int) {
	t.Helper()
	testutil.Until(ctx, t, fmt.Sprintf("a replica to log %q", s), func() bool {
		for _, i := range alive {
			if strings.Contains(rs[i].out.String(), s) {
				which = i
				return true
			}
		}
		return false
	})
	return which
}

// posts counts the POST /bookings the sandbox received.
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
// landing on the other one) is one POST, and both ack it alike; two people
// submitting the same booking through different replicas at the same
// moment are one POST too.
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
	again, err := sl.Redeliver(ctx, ack.EnvelopeID, slacktest.ToConnection(conns[1].ID))
	if err != nil {
		t.Fatal(err)
	}
	// The person sees the same "Booking…" view whichever ack Slack takes.
	var first, second any
	if json.Unmarshal(ack.Payload, &first) != nil || json.Unmarshal(again.Payload, &second) != nil || !reflect.DeepEqual(first, second) {
		t.Errorf("the redelivery was acked with %s; the first delivery with %s", again.Payload, ack.Payload)
	}
	testutil.Until(ctx, t, "the booking", func() bool { return booked(sb, "grace@example.com") == 1 })
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
	testutil.Until(ctx, t, "both outcomes", func() bool {
		return len(messagesWhere(sl, func(m slacktest.Message) bool {
			return strings.Contains(m.Text, "Alan Turing") || strings.Contains(string(m.Blocks), "alan@example.com")
		})) >= 2
	})
	for _, r := range rs {
		stopRun(t, r.cmd, r.out)
	}
	if got := posts(sb) - before; got != 1 {
		t.Errorf("%d POST /bookings for one booking submitted through two replicas, want 1", got)
	}
	// The sandbox refuses the same attendee at the same time, so only the
	// POSTs tell that the redelivered submission was not sent again.
	if got := posts(sb); got != 2 {
		t.Errorf("%d POST /bookings in all for two bookings, want 2", got)
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

// Scheduled work runs on the replica that leads: when it is killed,
// another takes over and posts the digest, once. No cron minute is waited
// for: the leader's schedule is not due today before 23:59, and the
// replica that takes over has one due at midnight (a new release's, say,
// rolled out while the old one leads), which it finds missed as it begins
// to lead, and catches up.
func TestReplicaTakesOverTheDigest(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	// Near midnight UTC, a zone twelve hours away: the leader's time is
	// still ahead, and the next one's passed.
	zone := "UTC"
	if time.Now().UTC().Hour() == 23 {
		zone = "Etc/GMT-12"
	}
	rs, _, sl := startReplicas(ctx, t, 1, "DIGEST_CHANNEL="+reviewRoom, "DIGEST_TIMEZONE="+zone, "DIGEST_SCHEDULE=59 23 * * *")
	leaderOf(ctx, t, rs, []int{0})
	rs = append(rs, startReplica(t, append(slices.Clone(rs[0].env), "DIGEST_SCHEDULE=0 0 * * *")))
	if _, err := sl.WaitLiveConnections(ctx, 2); err != nil {
		t.Fatalf("the second replica did not connect: %v\n%s", err, rs[1].out.String())
	}
	killed := time.Now()
	if err := rs[0].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = rs[0].cmd.Wait()
	leaderOf(ctx, t, rs, []int{1})
	t.Logf("replica 1 leads %v after replica 0 was killed", time.Since(killed).Round(time.Millisecond))
	if _, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Channel == reviewRoom && strings.Contains(m.Text, "Digest for")
	}); err != nil {
		t.Fatalf("no digest: %v\n%s", err, rs[1].out.String())
	}
	stopRun(t, rs[1].cmd, rs[1].out)
	if d, _ := digestPosts(sl, reviewRoom); d != 1 {
		t.Errorf("%d digests posted, want 1", d)
	}
	if !strings.Contains(rs[1].out.String(), "digest catch-up: a scheduled run was missed today") {
		t.Errorf("replica 1 did not catch the digest up:\n%s", rs[1].out.String())
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

	// A newer bookbot migrated the database, by an additive step: this
	// one still runs on it (an upgrade or a rollback in progress); by a
	// step that is not, it says so and does not start.
	step(t, url, pg.Latest()+1, true)
	if got := check(); !strings.Contains(got, "✓ database works: schema version ") || !strings.Contains(got, "only by additive steps") {
		t.Errorf("with an additive newer step:\n%s", got)
	}
	cmd, out = startRun(ctx, t, sl, e)
	out.waitCount(ctx, t, "by additive steps only", 1)
	out.waitCount(ctx, t, "leading: the digest", 1) // up, so SIGTERM finds it serving
	stopRun(t, cmd, out)
	step(t, url, pg.Latest()+2, false)
	if got := check(); !strings.Contains(got, "✗ database schema is at version ") || !strings.Contains(got, "is not additive") {
		t.Errorf("with a newer step that is not additive:\n%s", got)
	}
	run := exec.CommandContext(ctx, binary, "run")
	run.Env = e
	if b, err := run.CombinedOutput(); err == nil || !strings.Contains(string(b), "is not additive") {
		t.Errorf("run on a schema it cannot run on: %v\n%s", err, b)
	}
}

// A rolling restart: each of three replicas in turn is stopped (SIGTERM)
// and started again, while commands keep coming and a booking is made
// during each restart. Every command is answered once, every envelope is
// acked once, and every booking is one POST.
func TestRollingRestart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	const n = 3
	rs, sb, sl := startReplicas(ctx, t, n)

	// help is answered in the ack, list through the response_url; each
	// command in a channel of its own, so its answers can be counted.
	var mu sync.Mutex
	var commands []string // their channels
	var failed []error
	stop := make(chan struct{})
	var sender sync.WaitGroup
	sender.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			cmd := slacktest.SlashCommand{Command: "/booking", Text: "help", UserID: ada, ChannelID: fmt.Sprintf("CROLL%05d", i)}
			if i%2 == 1 {
				cmd.Text, cmd.UserID = "list", "UBOB"
			}
			_, err := sl.SendSlashCommand(ctx, cmd)
			mu.Lock()
			commands = append(commands, cmd.ChannelID)
			if err != nil {
				failed = append(failed, fmt.Errorf("/booking %s in %s: %w", cmd.Text, cmd.ChannelID, err))
			}
			mu.Unlock()
			if err != nil {
				return
			}
		}
	})
	stopSender := sync.OnceFunc(func() { close(stop); sender.Wait() })
	defer stopSender()

	var guests []string
	for i := range rs {
		guest := fmt.Sprintf("Guest %d", i+1)
		guests = append(guests, guest)
		booked := make(chan error, 1)
		go func() { booked <- bookDuring(ctx, sl, guest, i) }()
		stopRun(t, rs[i].cmd, rs[i].out)
		if _, err := sl.WaitLiveConnections(ctx, n-1); err != nil {
			t.Fatalf("replica %d's connection stayed: %v", i, err)
		}
		rs[i] = startReplica(t, rs[i].env)
		if _, err := sl.WaitLiveConnections(ctx, n); err != nil {
			t.Fatalf("replica %d did not come back: %v\n%s", i, err, rs[i].out.String())
		}
		if err := <-booked; err != nil {
			t.Fatalf("booking %s: %v", guest, err)
		}
	}
	stopSender()
	for _, r := range rs {
		stopRun(t, r.cmd, r.out) // its work done, its answers given
	}

	mu.Lock()
	defer mu.Unlock()
	for _, err := range failed {
		t.Error(err)
	}
	answers := map[string]int{}
	for _, m := range sl.Messages() {
		if m.Kind == "ack" || m.Kind == "response_url" {
			answers[m.Channel]++
		}
	}
	for _, ch := range commands {
		if answers[ch] != 1 {
			t.Errorf("the command in %s got %d answers, want 1", ch, answers[ch])
		}
	}
	acked := map[string]int{}
	redelivered := 0
	for _, a := range sl.Acks() {
		if !a.Duplicate && !a.Late && !a.Dropped {
			acked[a.EnvelopeID]++
		}
		if strings.Contains(string(a.Envelope), `"retry_attempt":1`) {
			redelivered++
		}
	}
	for id, k := range acked {
		if k != 1 {
			t.Errorf("envelope %s acked %d times", id, k)
		}
	}
	if got := posts(sb); got != len(guests) {
		t.Errorf("%d POST /bookings for %d bookings", got, len(guests))
	}
	for _, guest := range guests {
		dms := len(messagesWhere(sl, func(m slacktest.Message) bool {
			return m.Kind == "message" && strings.Contains(m.Text, "Booked.") && strings.Contains(m.Text, guest)
		}))
		if dms != 1 {
			t.Errorf("%s: %d outcomes told, want 1", guest, dms)
		}
	}
	t.Logf("%d commands, %d bookings, %d envelopes redelivered", len(commands), len(guests), redelivered)
}

// bookDuring books a slot for guest as bob, the k-th offered on a new
// booking form, and waits for the outcome.
func bookDuring(ctx context.Context, sl *slacktest.Server, guest string, k int, opts ...slacktest.DeliverOption) error {
	form, err := bobsForm(ctx, sl, k)
	if err != nil {
		return err
	}
	if _, err := sl.SubmitInputs(ctx, "UBOB", form.ID, guestInputs(form, guest, k), opts...); err != nil {
		return err
	}
	_, err = sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Kind == "message" && strings.Contains(m.Text, guest)
	})
	return err
}

// bobsForm runs `/booking new intro-call` as bob and returns the new form
// once it offers more than k slots.
func bobsForm(ctx context.Context, sl *slacktest.Server, k int) (slacktest.View, error) {
	known := map[string]bool{}
	for _, v := range sl.Views() {
		known[v.ID] = true
	}
	if _, err := sl.SendSlashCommand(ctx, slacktest.SlashCommand{Command: "/booking", Text: "new intro-call", UserID: "UBOB"}); err != nil {
		return slacktest.View{}, err
	}
	form, err := sl.WaitView(ctx, func(v slacktest.View) bool {
		return !known[v.ID] && v.TriggerUser == "UBOB" && len(v.Options("slot")) > k
	})
	if err != nil {
		return form, fmt.Errorf("no form: %w", err)
	}
	return form, nil
}

// guestInputs fill in form for guest at its k-th slot.
func guestInputs(form slacktest.View, guest string, k int) map[string]string {
	email := strings.ToLower(strings.ReplaceAll(guest, " ", ".")) + "@example.com"
	return map[string]string{"slot": form.Options("slot")[k].Value, "name": guest, "email": email, "booker_tz": "Europe/Berlin"}
}

// The API's limit of 5 booking attempts a minute is one limit for all
// replicas: the sixth booking within the minute is held back by bookbot,
// whichever replica takes it, and never sent.
func TestReplicasShareTheBookingLimit(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	rs, sb, sl := startReplicas(ctx, t, 2)
	conns := sl.LiveConnections()
	for k := range 5 {
		if err := bookDuring(ctx, sl, fmt.Sprintf("Guest %d", k+1), k, slacktest.ToConnection(conns[k%2].ID)); err != nil {
			t.Fatalf("booking %d: %v", k+1, err)
		}
	}
	form, err := bobsForm(ctx, sl, 5)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sl.SubmitInputs(ctx, "UBOB", form.ID, guestInputs(form, "Guest 6", 5), slacktest.ToConnection(conns[1].ID)); err != nil {
		t.Fatal(err)
	}
	// Held back, or refused by the service had it been sent.
	out, err := sl.WaitView(ctx, func(v slacktest.View) bool {
		return v.ID == form.ID && strings.Contains(string(v.Blocks), ":stopwatch:")
	})
	if err != nil {
		t.Fatalf("no outcome of the sixth booking: %v\n%s", err, rs[1].out.String())
	}
	if !strings.Contains(string(out.Blocks), "Not sent.") {
		t.Errorf("the sixth booking was not held back:\n%s", out.Blocks)
	}
	if got := posts(sb); got != 5 {
		t.Errorf("%d POST /bookings for 6 bookings in a minute, want 5", got)
	}
}

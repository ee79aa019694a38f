package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/internal/testutil"
)

// binary is the real bookbot, built once for the end-to-end tests; states
// holds a state directory for each process env starts.
var binary, states string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "bookbot-e2e")
	if err != nil {
		panic(err)
	}
	binary, states = filepath.Join(dir, "bookbot"), filepath.Join(dir, "state")
	// Built as deploy/Dockerfile builds it (TestDockerfileBuildRunsAndChecks
	// holds the Dockerfile to these flags): the tests run the binary that
	// ships, and the image's build in that test compiles nothing again.
	build := exec.Command("go", "build", "-trimpath", "-o", binary, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		panic("go build: " + err.Error() + "\n" + string(out))
	}
	// The tests wait on the processes they start, and those on timers.
	testutil.Parallel(6)
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func TestVersion(t *testing.T) {
	t.Parallel()
	out, err := exec.CommandContext(t.Context(), binary, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "bookbot ") {
		t.Errorf("version = %q", out)
	}
}

func TestUnknownCommandExits2WithUsage(t *testing.T) {
	t.Parallel()
	cmd := exec.CommandContext(t.Context(), binary, "frobnicate")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("err = %v, want exit status 2", err)
	}
	if !strings.Contains(stderr.String(), `unknown command "frobnicate"`) || !strings.Contains(stderr.String(), "bookbot sandbox") {
		t.Errorf("stderr = %q", stderr.String())
	}
}

func TestSandboxServesTheAPIUntilSignalled(t *testing.T) {
	t.Parallel()
	cmd := exec.CommandContext(t.Context(), binary, "sandbox", "-addr", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The sandbox prints its address once it listens.
	var base string
	lines := bufio.NewScanner(stdout)
	for base == "" && lines.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(lines.Text()), "BOOKING_BASE_URL="); ok {
			base = v
		}
	}
	if base == "" {
		t.Fatal("sandbox printed no BOOKING_BASE_URL")
	}
	go func() {
		for lines.Scan() {
		}
	}()

	key, _ := booking.NewKey(bookingtest.DemoKey)
	c, err := booking.NewClient(base, key)
	if err != nil {
		t.Fatal(err)
	}
	slots, err := c.Slots(t.Context(), "intro-call")
	if err != nil || len(slots) == 0 {
		t.Fatalf("slots: %d, %v", len(slots), err)
	}
	res, err := c.Create(t.Context(), booking.CreateRequest{Slot: slots[0], Name: "Ada", Email: "ada@example.com"})
	if err != nil || res.Outcome != booking.Confirmed {
		t.Fatalf("create = %+v, %v", res, err)
	}
	cancelled, err := c.Cancel(t.Context(), res.Booking.ID)
	if err != nil || cancelled.Outcome != booking.Cancelled {
		t.Fatalf("cancel = %+v, %v", cancelled, err)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("sandbox exit after SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("sandbox did not stop on SIGTERM")
	}
}

func TestCheckWithoutConfigurationNamesEveryVariable(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"check"}, func(string) string { return "" }, &stdout, &stderr)
	if err == nil || err.Error() != "1 of 1 checks failed" {
		t.Errorf("err = %v, want the configuration as the one failed check", err)
	}
	out := stdout.String()
	for _, want := range []string{"✗ configuration: 4 problems", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "BOOKING_BASE_URL", "BOOKING_API_KEY", "– booking API key: not checked", "– state directory: not checked"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// env is a process environment for the binary, wired to a sandbox booking
// API and a Slack stand-in, with a state directory of its own (extra may
// name another, to share one between processes).
func env(sb *bookingtest.Server, sl *slacktest.Server, extra ...string) []string {
	if err := os.MkdirAll(states, 0o700); err != nil {
		panic(err)
	}
	state, err := os.MkdirTemp(states, "")
	if err != nil {
		panic(err)
	}
	e := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"BOOKBOT_STATE_DIR=" + state,
		"BOOKING_BASE_URL=" + sb.URL,
		"BOOKING_API_KEY=" + sb.Key,
		"DIGEST_TIMEZONE=Europe/Berlin",
		"BOOKBOT_HTTP_ADDR=127.0.0.1:0", // tests run side by side: never the default port
	}
	if sl != nil {
		e = append(e,
			"SLACK_BOT_TOKEN="+sl.BotToken(),
			"SLACK_APP_TOKEN="+sl.AppToken(),
			"SLACK_API_URL="+sl.APIURL,
			"BOOKBOT_ALLOWED_USERS=UADA",
		)
	}
	return append(e, extra...)
}

// noSecrets fails when output holds a secret of the test's services.
func noSecrets(t *testing.T, sb *bookingtest.Server, sl *slacktest.Server, outputs ...string) {
	t.Helper()
	secrets := []string{sb.Key}
	if sl != nil {
		secrets = append(secrets, sl.BotToken(), sl.AppToken())
	}
	for _, out := range outputs {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("a secret appears in the output: %q", out)
			}
		}
	}
}

func TestDigestDryRunPrintsWithoutSlack(t *testing.T) {
	t.Parallel()
	sb := bookingtest.NewServer(t)
	cmd := exec.CommandContext(t.Context(), binary, "digest", "-dry-run")
	cmd.Env = env(sb, nil)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("digest -dry-run: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "Europe/Berlin") {
		t.Errorf("dry run does not name the zone:\n%s", stdout.String())
	}
	noSecrets(t, sb, nil, stdout.String(), stderr.String())
}

func TestDigestPostsOncePerDate(t *testing.T) {
	t.Parallel()
	sb := bookingtest.NewServer(t)
	sl := slacktest.NewServer(t)
	sl.AddChannel(slacktest.Channel{ID: "C0DIGEST", Name: "team", Members: []string{slacktest.DefaultBotUserID}})
	e := env(sb, sl, "DIGEST_CHANNEL=C0DIGEST", "BOOKBOT_STATE_DIR="+t.TempDir())
	outputs := make([]string, 2)
	for i := range 2 {
		cmd := exec.CommandContext(t.Context(), binary, "digest")
		cmd.Env = e
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("run %d: %v\n%s", i+1, err, out)
		}
		outputs[i] = string(out)
	}
	if !strings.Contains(outputs[0], "Posted the digest") || !strings.Contains(outputs[1], "already posted") {
		t.Errorf("outputs = %q", outputs)
	}
	posts := 0
	for _, m := range sl.Messages() {
		if m.Channel == "C0DIGEST" && m.Kind == "message" {
			posts++
		}
	}
	if posts == 0 {
		t.Fatal("nothing posted to the digest channel")
	}
	// A second run must not add posts: count the first parts, whose
	// notification text alone says the count ("Digest for Tue 24 Nov: 3
	// bookings.").
	headers := 0
	for _, m := range sl.Messages() {
		if m.Channel == "C0DIGEST" && strings.HasPrefix(m.Text, "Digest for ") && strings.Contains(m.Text, ": ") {
			headers++
		}
	}
	if headers != 1 {
		t.Errorf("digest posted %d times, want once", headers)
	}
	noSecrets(t, sb, sl, outputs...)
}

func TestDigestFailsWhenBookingsCannotBeRead(t *testing.T) {
	t.Parallel()
	sb := bookingtest.NewServer(t)
	sl := slacktest.NewServer(t)
	sl.AddChannel(slacktest.Channel{ID: "C0DIGEST", Name: "team", Members: []string{slacktest.DefaultBotUserID}})
	for range 10 {
		sb.FailNext(bookingtest.EndpointListBookings, bookingtest.HTMLError(503))
	}
	cmd := exec.CommandContext(t.Context(), binary, "digest")
	cmd.Env = env(sb, sl, "DIGEST_CHANNEL=C0DIGEST", "BOOKBOT_STATE_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("err = %v, want a non-zero exit\n%s", err, out)
	}
	notice := false
	for _, m := range sl.Messages() {
		if m.Channel == "C0DIGEST" && strings.Contains(strings.ToLower(m.Text), "could not") {
			notice = true
		}
	}
	if !notice {
		t.Errorf("no failure notice posted; messages: %+v", sl.Messages())
	}
	noSecrets(t, sb, sl, string(out))
}

func TestRunReportsEveryConfigProblem(t *testing.T) {
	t.Parallel()
	cmd := exec.CommandContext(t.Context(), binary, "run")
	cmd.Env = []string{"SLACK_BOT_TOKEN=xapp-wrong-kind-secret", "BOOKING_BASE_URL=not a url"}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("err = %v\n%s", err, out)
	}
	for _, v := range []string{"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "BOOKING_BASE_URL", "BOOKING_API_KEY", "BOOKBOT_ALLOWED_USERS"} {
		if !strings.Contains(string(out), v) {
			t.Errorf("output does not name %s:\n%s", v, out)
		}
	}
	if strings.Contains(string(out), "wrong-kind-secret") {
		t.Errorf("output repeats the token:\n%s", out)
	}
}

func TestRunServesSlackUntilSignalled(t *testing.T) {
	t.Parallel()
	sb := bookingtest.NewServer(t)
	sl := slacktest.NewServer(t)
	sl.AddUser(slacktest.User{ID: "UADA", Name: "ada", TZ: "Europe/Berlin"})
	cmd := exec.CommandContext(t.Context(), binary, "run")
	cmd.Env = env(sb, sl, "LOG_LEVEL=debug")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := sl.WaitConnected(ctx); err != nil {
		t.Fatalf("bot did not connect: %v\n%s", err, stderr.String())
	}
	ack, err := sl.SendSlashCommand(ctx, slacktest.SlashCommand{Command: "/booking", Text: "list", UserID: "UADA"})
	if err != nil {
		t.Fatal(err)
	}
	if ack.Delay > 3*time.Second {
		t.Errorf("ack took %v", ack.Delay)
	}
	msg, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Kind == "response_url" && strings.Contains(string(m.Blocks), "cancel_booking")
	})
	if err != nil {
		t.Fatalf("no booking list: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(string(msg.Blocks), "Ada Lovelace") {
		t.Errorf("list lacks the seeded booking: %s", msg.Blocks)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, stderr.String())
	}
	noSecrets(t, sb, sl, stderr.String())
	for _, m := range sl.Messages() {
		noSecrets(t, sb, sl, m.Text, string(m.Blocks))
	}
}

// movedClock is the clock of the processes started with its env entry
// (testClockVar): the machine's, moved ahead as the test says.
type movedClock struct {
	path  string
	ahead time.Duration
}

// newMovedClock returns a clock not moved yet, and the entry that gives it
// to a process.
func newMovedClock(t *testing.T) (c *movedClock, env string) {
	t.Helper()
	c = &movedClock{path: filepath.Join(t.TempDir(), "clock")}
	return c, testClockVar + "=" + c.path
}

// advance moves the clock ahead by d, in every process that has it, at
// once: the file is replaced whole, so no process reads half of it. They
// read it again within fileReread.
func (c *movedClock) advance(t *testing.T, d time.Duration) {
	t.Helper()
	c.ahead += d
	tmp := c.path + ".new"
	if err := os.WriteFile(tmp, []byte(c.ahead.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, c.path); err != nil {
		t.Fatal(err)
	}
}

package main

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
)

// logLines collects a process's output and lets a test wait for lines.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
	ch  chan struct{} // closed and replaced on every write
}

func newLogLines() *logLines { return &logLines{ch: make(chan struct{})} }

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	close(l.ch)
	l.ch = make(chan struct{})
	return l.buf.Write(p)
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// waitCount waits until s occurs at least n times in the output.
func (l *logLines) waitCount(ctx context.Context, t *testing.T, s string, n int) {
	t.Helper()
	for {
		l.mu.Lock()
		got, ch := strings.Count(l.buf.String(), s), l.ch
		l.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("waiting for %d × %q (have %d): %v\n%s", n, s, got, ctx.Err(), l.String())
		}
	}
}

// startRun starts `bookbot run` and waits until it is connected.
func startRun(ctx context.Context, t *testing.T, sl *slacktest.Server, env []string) (*exec.Cmd, *logLines) {
	t.Helper()
	r := startReplica(t, env)
	if err := sl.WaitConnected(ctx); err != nil {
		t.Fatalf("bot did not connect: %v\n%s", err, r.out.String())
	}
	return r.cmd, r.out
}

func stopRun(t *testing.T, cmd *exec.Cmd, out *logLines) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, out.String())
		}
	case <-time.After(3 * drainTimeout):
		// Shutdown is bounded (work, then the digest, each within the drain
		// period); past that, bookbot hangs.
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("bookbot did not stop within %v of SIGTERM\n%s", 3*drainTimeout, out.String())
	}
}

// digestPosts counts the digests (first parts) and failure notices in ch.
func digestPosts(sl *slacktest.Server, ch string) (digests, notices int) {
	for _, m := range sl.Messages() {
		if m.Channel != ch || m.Kind != "message" {
			continue
		}
		switch text := m.Text + string(m.Blocks); {
		case strings.Contains(text, "could not be built"):
			notices++
		case !strings.Contains(text, "(2/") && !strings.Contains(text, "(3/"):
			digests++
		}
	}
	return digests, notices
}

// digestSetup gives a test's deadline, the fakes and the environment for a
// `bookbot run` whose scheduler posts to C0DIGEST every second: the digest
// tests need the same fast schedule, and one place to change it.
func digestSetup(t *testing.T) (context.Context, *bookingtest.Server, *slacktest.Server, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	sb := bookingtest.NewServer(t)
	sl := slacktest.NewServer(t)
	sl.AddChannel(slacktest.Channel{ID: "C0DIGEST", Name: "team", Members: []string{slacktest.DefaultBotUserID}})
	return ctx, sb, sl, env(sb, sl, "DIGEST_CHANNEL=C0DIGEST", "DIGEST_SCHEDULE=@every 1s", "LOG_LEVEL=debug", "BOOKBOT_STATE_DIR="+t.TempDir())
}

// The scheduler inside `bookbot run`, firing every second, posts one digest
// per date: later firings and a restart find the date posted.
func TestRunPostsTheScheduledDigestOncePerDate(t *testing.T) {
	t.Parallel()
	ctx, sb, sl, e := digestSetup(t)

	cmd, out := startRun(ctx, t, sl, e)
	out.waitCount(ctx, t, `"digest scheduled"`, 1)
	out.waitCount(ctx, t, `"digest posted"`, 1)
	out.waitCount(ctx, t, `"digest already posted"`, 2)
	stopRun(t, cmd, out)

	// A restart the same day: the record on disk stops a second post.
	cmd, out = startRun(ctx, t, sl, e)
	out.waitCount(ctx, t, `"digest already posted"`, 2)
	stopRun(t, cmd, out)

	if digests, notices := digestPosts(sl, "C0DIGEST"); digests != 1 || notices != 0 {
		t.Errorf("%d digests and %d failure notices posted, want 1 and 0", digests, notices)
	}
	noSecrets(t, sb, sl, out.String())
}

// When the bookings cannot be read the channel hears so once, though two
// runs fail; the digest itself follows at a later firing, once the API
// answers again.
func TestRunPostsAFailureNoticeThenTheDigest(t *testing.T) {
	t.Parallel()
	ctx, sb, sl, e := digestSetup(t)
	for range 2 * booking.DefaultBackoff.Attempts { // two runs' reads, retries and all
		sb.FailNext(bookingtest.EndpointListBookings, bookingtest.HTMLError(503))
	}

	cmd, out := startRun(ctx, t, sl, e)
	if _, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Channel == "C0DIGEST" && strings.Contains(m.Text, "could not be built")
	}); err != nil {
		t.Fatalf("no failure notice: %v\n%s", err, out.String())
	}
	out.waitCount(ctx, t, `"digest posted"`, 1)
	out.waitCount(ctx, t, `"digest already posted"`, 1)
	stopRun(t, cmd, out)

	if digests, notices := digestPosts(sl, "C0DIGEST"); digests != 1 || notices != 1 {
		t.Errorf("%d digests and %d failure notices posted, want 1 and 1", digests, notices)
	}
	if !strings.Contains(out.String(), "the failure notice was sent earlier") {
		t.Errorf("no second run failed:\n%s", out.String())
	}
	if strings.Contains(out.String(), "<html") {
		t.Error("the API's HTML error page reached the log")
	}
	noSecrets(t, sb, sl, out.String())
}

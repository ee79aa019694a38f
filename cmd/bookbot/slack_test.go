package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
)

// These tests run `bookbot run` in this process, so that they can shorten
// its deadlines; those that do so change package variables and therefore
// do not run in parallel (they run before the parallel tests start).

// shorten sets a package variable for the rest of one test.
func shorten[T any](t *testing.T, v *T, to T) {
	t.Helper()
	old := *v
	*v = to
	t.Cleanup(func() { *v = old })
}

// getenvOf is a getenv over an environment such as env returns.
func getenvOf(e []string) func(string) string {
	vars := map[string]string{}
	for _, kv := range e {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	return func(k string) string { return vars[k] }
}

// startInProcess starts `bookbot run` in a goroutine. stop cancels it and
// returns what run returned; it is also called when the test ends, before
// the variables shorten changed are restored.
func startInProcess(t *testing.T, e []string) (out *logLines, stop func() error) {
	t.Helper()
	out = newLogLines()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"run"}, getenvOf(e), out, out) }()
	var err error
	stopped := false
	stop = func() error {
		t.Helper()
		if stopped {
			return err
		}
		stopped = true
		cancel()
		// A hang guard, not a timing assertion: shutdown drains for at most
		// drainTimeout.
		select {
		case err = <-done:
		case <-time.After(3 * drainTimeout):
			t.Fatalf("bookbot run did not return after its context ended\n%s", out.String())
		}
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return out, stop
}

// testContext bounds a test's waits.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// A Slack that takes the connection and never answers auth.test stops
// bookbot at start-up after the call's deadline, saying so, rather than
// hanging or claiming the token was refused.
func TestRunGivesUpWhenSlackDoesNotAnswerAuthTest(t *testing.T) {
	shorten(t, &slackCallTimeout, 200*time.Millisecond)
	ctx := testContext(t)
	sb := bookingtest.NewServer(t)
	sl := slacktest.NewServer(t)
	t.Cleanup(sl.Hold("auth.test"))

	out := newLogLines()
	err := run(ctx, []string{"run"}, getenvOf(env(sb, sl)), out, out)
	const want = "slack did not answer auth.test within 200ms; check SLACK_API_URL and the network"
	if err == nil || err.Error() != want {
		t.Errorf("run = %v, want %q\n%s", err, want, out.String())
	}
	if err := sl.WaitHeld(ctx, "auth.test", 1); err != nil {
		t.Errorf("auth.test was never asked: %v", err)
	}
	if strings.Contains(out.String(), "refused") {
		t.Errorf("the log claims a refusal:\n%s", out.String())
	}
	noSecrets(t, sb, sl, out.String(), want)
}

// SIGTERM or SIGINT (the context ending) while auth.test waits for an
// answer ends bookbot at once and quietly: no error, no refusal claimed.
// The call's own deadline is an hour here, so only the signal can end it.
func TestRunStopsQuietlyWhileWaitingForAuthTest(t *testing.T) {
	shorten(t, &slackCallTimeout, time.Hour)
	ctx := testContext(t)
	sb := bookingtest.NewServer(t)
	sl := slacktest.NewServer(t)
	t.Cleanup(sl.Hold("auth.test"))

	out, stop := startInProcess(t, env(sb, sl))
	if err := sl.WaitHeld(ctx, "auth.test", 1); err != nil {
		t.Fatalf("auth.test was never asked: %v\n%s", err, out.String())
	}
	if err := stop(); err != nil {
		t.Errorf("run after a signal during start-up = %v, want nil", err)
	}
	if logs := out.String(); strings.Contains(logs, "refused") || !strings.Contains(logs, "bookbot stopped before connecting to Slack") {
		t.Errorf("log:\n%s", logs)
	}
	noSecrets(t, sb, sl, out.String())
}

// A Slack error answer is a refusal, said as one, and stops bookbot: for
// the bot token at start-up, and for the app token when Socket Mode
// connects (no retry fixes a refused token).
func TestRunSaysWhichTokenSlackRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ method, code, want string }{
		{"auth.test", "invalid_auth", "slack refused SLACK_BOT_TOKEN (auth.test: invalid_auth); check the bot token and that the app is installed"},
		{"auth.test", "account_inactive", "slack refused SLACK_BOT_TOKEN (auth.test: account_inactive); check the bot token and that the app is installed"},
		{"apps.connections.open", "invalid_auth", "slack refused SLACK_APP_TOKEN (invalid_auth); check the app-level token and its connections:write scope"},
		{"apps.connections.open", "token_revoked", "slack refused SLACK_APP_TOKEN (token_revoked); check the app-level token and its connections:write scope"},
	} {
		t.Run(tc.method+"/"+tc.code, func(t *testing.T) {
			t.Parallel()
			ctx := testContext(t)
			sb := bookingtest.NewServer(t)
			sl := slacktest.NewServer(t)
			sl.FailNext(tc.method, tc.code)
			out := newLogLines()
			err := run(ctx, []string{"run"}, getenvOf(env(sb, sl)), out, out)
			if err == nil || err.Error() != tc.want {
				t.Errorf("run = %v, want %q\n%s", err, tc.want, out.String())
			}
			noSecrets(t, sb, sl, out.String())
		})
	}
}

// When the socket drops and apps.connections.open then hangs, each attempt
// gives up at its deadline and another follows; once Socket Mode has been
// down for longer than allowed, /healthz fails with the reason (so that an
// orchestrator restarts bookbot) and the log says so, once. When Slack
// answers again, bookbot reconnects, /healthz passes and the log says so,
// once.
func TestRunFailsHealthWhileSocketModeCannotReconnect(t *testing.T) {
	shorten(t, &slackCallTimeout, 250*time.Millisecond)
	shorten(t, &socketUnhealthyAfter, 500*time.Millisecond)
	ctx := testContext(t)
	sb := bookingtest.NewServer(t)
	sl := slacktest.NewServer(t)

	out, stop := startInProcess(t, env(sb, sl))
	if err := sl.WaitConnected(ctx); err != nil {
		t.Fatalf("bot did not connect: %v\n%s", err, out.String())
	}
	base := httpBase(ctx, t, out)
	if code, body := get(ctx, t, base+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz while connected = %d %q", code, body)
	}

	release := sl.Hold("apps.connections.open")
	t.Cleanup(release)
	const down, back = "Socket Mode not connected for too long", "Socket Mode connected again"
	before := out.String() // a slow first connection may have counted already
	mark, downs, backs := len(before), strings.Count(before, down), strings.Count(before, back)
	sl.Drop()
	// The second attempt means the first, hung, gave up and was retried.
	if err := sl.WaitHeld(ctx, "apps.connections.open", 2); err != nil {
		t.Fatalf("a hung apps.connections.open was not retried: %v\n%s", err, out.String())
	}
	out.waitCount(ctx, t, down, downs+1) // logged once the state has changed
	code, body := get(ctx, t, base+"/healthz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "socket mode not connected for over 500ms") {
		t.Errorf("/healthz while Socket Mode is down = %d %q, want 503 with the reason", code, body)
	}
	if code, body := get(ctx, t, base+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "socket mode not connected") {
		t.Errorf("/readyz while Socket Mode is down = %d %q", code, body)
	}

	release()
	if err := sl.WaitConnections(ctx, 2); err != nil {
		t.Fatalf("bot did not reconnect: %v\n%s", err, out.String())
	}
	out.waitCount(ctx, t, back, backs+1)
	if code, body := get(ctx, t, base+"/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz after reconnecting = %d %q", code, body)
	}
	if code, body := get(ctx, t, base+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after reconnecting = %d %q", code, body)
	}
	if err := stop(); err != nil {
		t.Errorf("run = %v", err)
	}

	logs := out.String()
	if n := strings.Count(logs[mark:], down); n != 1 {
		t.Errorf("%q logged %d times, want once", down, n)
	}
	if n := strings.Count(logs[mark:], back); n != 1 {
		t.Errorf("%q logged %d times, want once", back, n)
	}
	// Each failed attempt is logged with why.
	if !strings.Contains(logs, "Socket Mode connection attempt failed") || !strings.Contains(logs, `"err":"no answer in time: `) {
		t.Errorf("the log does not say why connecting failed:\n%s", logs)
	}
	noSecrets(t, sb, sl, logs)
	if t.Failed() {
		t.Logf("log:\n%s", logs)
	}
}

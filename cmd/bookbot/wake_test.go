package main

import (
	"context"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/personal"
	"github.com/bookbot/bookbot/pgstore/pgtest"
)

// `remind 15m` for a meeting ten minutes away, sent to a replica that does
// not lead, has the leader send the reminder at once: before its runner's
// first tick, which a leader without the wake would wait for.
func TestReplicasWakeTheLeadersReminders(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	url := pgtest.URL(t)
	sb := bookingtest.NewServer(t)
	sl := slacktest.NewServer(t)
	sl.AddUser(slacktest.User{ID: "UADA", Name: "ada", RealName: "Ada Lovelace", TZ: "Europe/Berlin"})
	slug := "intro-call"
	sb.AddBooking(bookingtest.DemoOwner, bookingtest.Booking{
		EventType: &slug, Start: time.Now().Add(10 * time.Minute).Truncate(time.Minute),
		BookerName: ptr("Grace Hopper"), BookerEmail: ptr("grace@example.com"),
	})
	e := env(sb, sl, "BOOKBOT_DATABASE_URL="+url, "LOG_LEVEL=debug", "LOG_FORMAT=text")
	start := func(n int) (*logLines, []slacktest.ConnInfo) {
		t.Helper()
		out := newLogLines()
		cmd := exec.Command(binary, "run")
		cmd.Env, cmd.Stdout, cmd.Stderr = e, out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		conns, err := sl.WaitLiveConnections(ctx, n)
		if err != nil {
			t.Fatalf("replica %d did not connect: %v\n%s", n, err, out.String())
		}
		return out, conns
	}

	// The first replica leads alone; the second, started after, connects
	// second and does not lead.
	lead, first := start(1)
	lead.waitCount(ctx, t, "leading: the digest", 1)
	// Its runner's first look, and the look once it listens: well before
	// its first tick.
	wctx, wcancel := context.WithTimeout(ctx, personal.DefaultEvery/2)
	lead.waitCount(wctx, t, "personal: looking", 2)
	wcancel()
	other, conns := start(2)
	i := slices.IndexFunc(conns, func(c slacktest.ConnInfo) bool { return c.ID != first[0].ID })
	if _, err := sl.SendSlashCommand(ctx, slacktest.SlashCommand{Command: "/booking", Text: "remind 15m", UserID: "UADA"},
		slacktest.ToConnection(conns[i].ID)); err != nil {
		t.Fatal(err)
	}
	if _, err := sl.WaitMessage(ctx, isReminder); err != nil {
		t.Fatalf("no reminder: %v\nleader:\n%s\nother:\n%s", err, lead.String(), other.String())
	}
	lead.waitCount(ctx, t, "personal: sent", 1)

	led := logTime(t, lead.String(), "leading: the digest")
	saved := logTime(t, other.String(), "personal settings saved")
	sent := logTime(t, lead.String(), "personal: sent")
	t.Logf("saved %v after the leader began, sent %v after the save", saved.Sub(led), sent.Sub(saved))
	switch tick := led.Add(personal.DefaultEvery); {
	case strings.Contains(other.String(), "leading: the digest"):
		t.Fatalf("the second replica leads:\n%s", other.String())
	case saved.After(tick.Add(-5 * time.Second)):
		t.Skipf("the save came %v after the leader began: too near its runner's tick to tell a wake from it", saved.Sub(led))
	case !sent.Before(tick):
		t.Errorf("reminder sent %v after the leader began, at its runner's tick: not woken by the save on the other replica", sent.Sub(led))
	}
}

// logTime is the time of the first text-format log line holding msg.
func logTime(t *testing.T, out, msg string) time.Time {
	t.Helper()
	for line := range strings.Lines(out) {
		if !strings.Contains(line, msg) {
			continue
		}
		m := logTimeRE.FindStringSubmatch(line)
		if m == nil {
			break
		}
		at, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		return at
	}
	t.Fatalf("no log line with %q:\n%s", msg, out)
	return time.Time{}
}

var logTimeRE = regexp.MustCompile(`^time=(\S+)`)

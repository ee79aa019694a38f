package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/store/pg/pgtest"
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
	sl := newStandIn(t)
	meetingSoon(sb, "Grace Hopper")
	e := env(sb, sl, "BOOKBOT_DATABASE_URL="+url, "LOG_LEVEL=debug", "LOG_FORMAT=text")
	start := func(n int) (*logLines, []slacktest.ConnInfo) {
		t.Helper()
		r := startReplica(t, e)
		conns, err := sl.WaitLiveConnections(ctx, n)
		if err != nil {
			t.Fatalf("replica %d did not connect: %v\n%s", n, err, r.out.String())
		}
		return r.out, conns
	}

	// The first replica leads alone; the second, started after, connects
	// second and does not lead. The leader looks at once, and again once
	// it listens.
	lead, first := start(1)
	lead.waitCount(ctx, t, "leading: the digest", 1)
	lead.waitCount(ctx, t, "personal: looking", 2)
	other, conns := start(2)
	woken := strings.Count(lead.String(), "personal: woken")
	i := slices.IndexFunc(conns, func(c slacktest.ConnInfo) bool { return c.ID != first[0].ID })
	if _, err := sl.SendSlashCommand(ctx, slacktest.SlashCommand{Command: "/booking", Text: "remind 15m", UserID: "UADA"},
		slacktest.ToConnection(conns[i].ID)); err != nil {
		t.Fatal(err)
	}
	lead.waitCount(ctx, t, "personal: sent", 1)
	if strings.Contains(other.String(), "leading: the digest") {
		t.Fatalf("the second replica leads:\n%s", other.String())
	}
	// The look that sent it followed a wake that came after the save, not
	// the runner's tick.
	log, _, _ := strings.Cut(lead.String(), "personal: sent")
	var runner []string
	for line := range strings.Lines(log) {
		for _, m := range []string{"personal: woken", "personal: looking"} {
			if strings.Contains(line, m) {
				runner = append(runner, m)
			}
		}
	}
	n := len(runner)
	if n < 2 || runner[n-1] != "personal: looking" || runner[n-2] != "personal: woken" || strings.Count(log, "personal: woken") <= woken {
		t.Errorf("the reminder was not sent by a look woken by the save on the other replica:\n%s", lead.String())
	}
}

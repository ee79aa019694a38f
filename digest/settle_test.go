package digest

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/bookbot/bookbot/outbox"
)

// channelFinder finds digests posted through a recordingPublisher, or,
// with ts set, one posted by a run that died; err makes every look fail.
type channelFinder struct {
	mu    sync.Mutex
	pub   *recordingPublisher
	ts    string // a first message posted by a run that died, "" for none
	err   error
	looks int
}

func (f *channelFinder) Find(_ context.Context, channel string, _ []outbox.Message, keys []string, _ time.Time) (map[string]outbox.Found, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.looks++
	if f.err != nil {
		return nil, f.err
	}
	found := map[string]outbox.Found{}
	for _, k := range keys {
		if f.ts != "" {
			found[k] = outbox.Found{Message: outbox.Message{Channel: channel, TS: f.ts}}
		}
		for _, p := range f.pub.Digests() {
			if p.Channel == channel && Key(p.Digest.Date) == k {
				found[k] = outbox.Found{Message: outbox.Message{Channel: channel, TS: "1700000000.000001"}}
			}
		}
	}
	return found, nil
}

// A run that claimed the date and died before recording the post: once
// SettleAfter has passed, the next run looks in the channel. Found, the
// date is recorded and not posted again; not found, it is posted, once;
// when the channel cannot be read, it is not posted again.
func TestRunSettlesAClaimNoRunFinished(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		inChannel string // ts of the dead run's post, "" when it never got there
		err       error
		posts     int
		state     State
	}{
		{"posted before the run died", "1700000000.000042", nil, 0, StatePosted},
		{"died before posting", "", nil, 1, StatePosted},
		{"channel unreadable", "", errors.New("missing_scope"), 0, StateClaimed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newRunnerEnv(t)
			f := &channelFinder{pub: env.pub, ts: tt.inChannel, err: tt.err}
			env.runner.Finder = f
			day := Tomorrow(env.clock.Now(), berlin)
			mustClaim(t, env.ledger, day, true) // the run that died

			env.clock.Advance(SettleAfter - time.Second)
			if _, err := env.runner.Run(t.Context(), day); !errors.Is(err, ErrAlreadyPosted) || f.looks != 0 {
				t.Fatalf("before SettleAfter: %v after %d looks; want ErrAlreadyPosted, no look", err, f.looks)
			}
			env.clock.Advance(time.Second)
			_, err := env.runner.Run(t.Context(), day)
			if n := len(env.pub.Digests()); n != tt.posts || f.looks != 1 {
				t.Errorf("%d digests posted after %d looks (%v); want %d after 1", n, f.looks, err, tt.posts)
			}
			st, serr := env.ledger.Status(t.Context(), Key(day))
			if serr != nil || st.State != tt.state {
				t.Errorf("ledger: %+v, %v; want %v", st, serr, tt.state)
			}
			if tt.inChannel != "" && st.Info.TS != tt.inChannel {
				t.Errorf("recorded ts %q, want the one found, %q", st.Info.TS, tt.inChannel)
			}
			// Settled: a later run changes nothing.
			if _, err := env.runner.Run(t.Context(), day); !errors.Is(err, ErrAlreadyPosted) || len(env.pub.Digests()) != tt.posts {
				t.Errorf("a later run: %v, %d digests", err, len(env.pub.Digests()))
			}
		})
	}
}

// A scheduler that starts after a run died mid-post (another replica now
// leads) looks in the channel once SettleAfter has passed since the
// claim, and posts the date if it is not there; Stop does not wait for a
// look still to come.
func TestSchedulerSettlesAClaimNoRunFinished(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 17, 2, 0, 0, berlin)
	day := Tomorrow(now, berlin)

	env := newSchedEnv(t, now.Add(-SettleAfter)) // the claim, by the run that died
	env.runner.Finder = &channelFinder{pub: env.pub}
	mustClaim(t, env.ledger, day, true)
	env.clock.Set(now)
	s, err := NewScheduler("0 17 * * *", berlin, env.runner, slog.New(env.logs))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	stop(t, s) // waits for the settle, due at once
	if got := postedDates(env.pub); !slices.Equal(got, []string{"2026-11-24"}) {
		t.Errorf("posted %q, want the date the dead run claimed", got)
	}

	// A claim made just now: the look is SettleAfter away, and Stop does
	// not wait for it.
	env = newSchedEnv(t, now)
	env.runner.Finder = &channelFinder{pub: env.pub}
	mustClaim(t, env.ledger, day, true)
	s, err = NewScheduler("0 17 * * *", berlin, env.runner, slog.New(env.logs))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	stop(t, s)
	if got := postedDates(env.pub); len(got) != 0 {
		t.Errorf("posted %q before the claim could be settled", got)
	}
}

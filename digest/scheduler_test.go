package digest

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/internal/fakeclock"
)

type schedEnv struct {
	src    *memSource
	pub    *recordingPublisher
	ledger Ledger
	clock  *fakeclock.Clock
	runner *Runner
	logs   *logRecorder
}

func newSchedEnv(t *testing.T, now time.Time) *schedEnv {
	t.Helper()
	clock := fakeclock.New(now)
	ledger := openLedger(t, t.TempDir(), clock.Now)
	src := &memSource{types: testTypes}
	for _, day := range []string{"2026-11-24", "2026-11-25", "2026-11-26"} {
		src.bookings = append(src.bookings, bk(t, "bk_"+day, day+"T09:00:00+01:00"))
	}
	pub := &recordingPublisher{}
	logs := newLogRecorder()
	r := &Runner{
		Source: src, Publisher: pub, Ledger: ledger, Channel: "C0DIGEST", Zone: berlin,
		Now: clock.Now, Log: slog.New(logs),
	}
	return &schedEnv{src: src, pub: pub, ledger: ledger, clock: clock, runner: r, logs: logs}
}

func postedDates(pub *recordingPublisher) []string {
	var out []string
	for _, p := range pub.Digests() {
		out = append(out, dateKey(p.Digest.Date))
	}
	return out
}

func stop(t *testing.T, s *Scheduler) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
}

func TestSchedulerCatchUp(t *testing.T) {
	t.Parallel()
	at := func(hh, mm int) time.Time { return time.Date(2026, 11, 23, hh, mm, 0, 0, berlin) }
	tests := []struct {
		name        string
		spec        string
		now         time.Time
		postedFirst bool
		want        []string
		wantNext    time.Time
	}{
		{name: "missed 17:00, now 19:00", spec: "0 17 * * *", now: at(19, 0), want: []string{"2026-11-24"}, wantNext: at(17, 0).AddDate(0, 0, 1)},
		{name: "missed 17:00, now 23:59", spec: "0 17 * * *", now: at(23, 59), want: []string{"2026-11-24"}, wantNext: at(17, 0).AddDate(0, 0, 1)},
		{name: "17:00 not yet, now 16:00", spec: "0 17 * * *", now: at(16, 0), wantNext: at(17, 0)},
		{name: "already posted", spec: "0 17 * * *", now: at(19, 0), postedFirst: true, wantNext: at(17, 0).AddDate(0, 0, 1)},
		{name: "@daily missed at midnight", spec: "@daily", now: at(10, 0), want: []string{"2026-11-24"}, wantNext: at(0, 0).AddDate(0, 0, 1)},
		{name: "weekdays only, missed", spec: "30 18 * * MON-FRI", now: at(18, 31), want: []string{"2026-11-24"}, wantNext: at(18, 30).AddDate(0, 0, 1)},
		{name: "weekends only: nothing today", spec: "0 17 * * SAT,SUN", now: at(19, 0), wantNext: time.Date(2026, 11, 28, 17, 0, 0, 0, berlin)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newSchedEnv(t, tt.now)
			if tt.postedFirst {
				day := Tomorrow(tt.now, berlin)
				mustClaim(t, env.ledger, day, true)
				if err := env.ledger.Posted(t.Context(), Key(day), PostInfo{At: tt.now.Add(-2 * time.Hour), Channel: "C0DIGEST", Entries: 1}); err != nil {
					t.Fatal(err)
				}
			}
			s, err := NewScheduler(tt.spec, berlin, env.runner, slog.New(env.logs))
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Next(); !got.Equal(tt.wantNext) {
				t.Errorf("Next = %v, want %v", got, tt.wantNext)
			}
			if err := s.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			stop(t, s) // waits for the catch-up
			if got := postedDates(env.pub); !slices.Equal(got, tt.want) {
				t.Errorf("posted %q, want %q", got, tt.want)
			}
			if !slices.Contains(env.logs.Messages(), "digest scheduled") {
				t.Errorf("start not logged: %q", env.logs.Messages())
			}
		})
	}
}

func TestSchedulerRealCronPostsOncePerDate(t *testing.T) {
	t.Parallel()
	// 16:00 on Monday: catch-up posts Tuesday at once (an @every schedule
	// has "fired" since midnight), then every firing finds it posted.
	env := newSchedEnv(t, time.Date(2026, 11, 23, 16, 0, 0, 0, berlin))
	s, err := NewScheduler("@every 1s", berlin, env.runner, slog.New(env.logs))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer stop(t, s)

	// waitFor waits until n log messages equal to msg have arrived.
	waitFor := func(msg string, n int) {
		t.Helper()
		for seen := 0; seen < n; {
			select {
			case m := <-env.logs.ch:
				if m == msg {
					seen++
				}
			case <-ctx.Done():
				t.Fatalf("waiting for %d × %q: %v; posted %q", n, msg, ctx.Err(), postedDates(env.pub))
			}
		}
	}
	waitFor("digest posted", 1)
	waitFor("digest already posted", 2) // two firings that found it done

	env.clock.Set(time.Date(2026, 11, 24, 17, 0, 0, 0, berlin)) // a day later
	waitFor("digest posted", 1)
	waitFor("digest already posted", 2)

	stop(t, s)
	if got := postedDates(env.pub); !slices.Equal(got, []string{"2026-11-24", "2026-11-25"}) {
		t.Errorf("posted %q", got)
	}
	if n := len(env.pub.Failures()); n != 0 {
		t.Errorf("%d failure notices", n)
	}
}

func TestSchedulerStopIsBoundedByContext(t *testing.T) {
	t.Parallel()
	env := newSchedEnv(t, time.Date(2026, 11, 23, 19, 0, 0, 0, berlin))
	env.pub.block = true
	env.pub.started = make(chan struct{}, 1)
	s, err := NewScheduler("0 17 * * *", berlin, env.runner, slog.New(env.logs))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	<-env.pub.started // the catch-up is posting and will not finish by itself

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := s.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stop = %v, want DeadlineExceeded", err)
	}
	// The job's context was cancelled: it ends, and Stop now returns at once.
	stop(t, s)
	if st, _ := env.ledger.Status(t.Context(), Key(Tomorrow(env.clock.Now(), berlin))); st.State == StateClaimed {
		t.Errorf("claim left behind: %+v", st)
	}
}

func TestNewSchedulerRejectsBadSpecs(t *testing.T) {
	t.Parallel()
	r := newSchedEnv(t, time.Now()).runner
	for _, spec := range []string{"", "0 17 * *", "61 * * * *", "@sometimes", "0 0 17 * * *"} {
		if _, err := NewScheduler(spec, berlin, r, nil); err == nil {
			t.Errorf("NewScheduler(%q) accepted", spec)
		}
	}
	if _, err := NewScheduler("0 17 * * *", berlin, nil, nil); err == nil {
		t.Error("nil runner accepted")
	}
	if _, err := NewScheduler("0 17 * * *", berlin, &Runner{Source: r.Source, Publisher: r.Publisher, Channel: "C1"}, nil); err == nil {
		t.Error("runner without a ledger accepted")
	}
	s, err := NewScheduler(" 0 17 * * * ", nil, r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.zone != time.UTC {
		t.Errorf("zone = %v", s.zone)
	}
}

// The source is never asked when the ledger already has the date.
func TestRunAlreadyPostedReadsNothing(t *testing.T) {
	t.Parallel()
	env := newSchedEnv(t, time.Date(2026, 11, 23, 19, 0, 0, 0, berlin))
	day := Tomorrow(env.clock.Now(), berlin)
	if _, err := env.runner.Run(t.Context(), day); err != nil {
		t.Fatal(err)
	}
	if _, err := env.runner.Run(t.Context(), day); !errors.Is(err, ErrAlreadyPosted) {
		t.Fatal(err)
	}
	if env.src.calls != 1 {
		t.Errorf("bookings read %d times", env.src.calls)
	}
	var _ Source = (*booking.Client)(nil)
}

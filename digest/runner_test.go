package digest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/internal/fakeclock"
)

// monday is Monday 2026-11-23, 12:00 in Berlin. The sandbox seeds its
// bookings relative to it: Tuesday the 24th has intro-call 09:00,
// consultation 10:30 and deep-dive 14:00.
var monday = time.Date(2026, 11, 23, 12, 0, 0, 0, berlin)

type runnerEnv struct {
	srv    *bookingtest.Server
	pub    *recordingPublisher
	runner *Runner
	ledger Ledger
	dir    string // the ledger's state directory
	clock  *fakeclock.Clock
}

// newRunnerEnv wires a Runner to the sandbox over real HTTP.
func newRunnerEnv(t *testing.T) *runnerEnv {
	t.Helper()
	clock := fakeclock.New(monday)
	srv := bookingtest.NewServer(t, bookingtest.WithClock(clock.Now))
	key, err := booking.NewKey(srv.Key)
	if err != nil {
		t.Fatal(err)
	}
	client, err := booking.NewClient(srv.URL, key,
		booking.WithHTTPClient(srv.Client()),
		booking.WithClock(clock.Now),
		booking.WithSleep(func(context.Context, time.Duration) error { return nil }), // retries without waiting
	)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ledger := openLedger(t, dir, clock.Now)
	pub := &recordingPublisher{}
	r := &Runner{
		Source: client, Publisher: pub, Ledger: ledger,
		Channel: "C0DIGEST", Zone: berlin, IncludeEmails: false,
		Now: clock.Now, Log: testLogger(t),
	}
	return &runnerEnv{srv: srv, pub: pub, runner: r, ledger: ledger, dir: dir, clock: clock}
}

func TestRunPostsOnce(t *testing.T) {
	t.Parallel()
	env := newRunnerEnv(t)
	ctx := t.Context()
	day := Tomorrow(env.clock.Now(), berlin)

	res, err := env.runner.Run(ctx, day)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Posted || res.Skipped || res.Entries != 3 || !res.Day.Equal(date(t, "2026-11-24", berlin)) {
		t.Errorf("result = %+v", res)
	}
	got := env.pub.Digests()
	if len(got) != 1 {
		t.Fatalf("%d digests posted", len(got))
	}
	d := got[0].Digest
	if got[0].Channel != "C0DIGEST" || got[0].IncludeEmails {
		t.Errorf("posted to %q, emails %v", got[0].Channel, got[0].IncludeEmails)
	}
	if ids := ids(d); !slices.Equal(ids, []string{"5eed0000-0000-4000-8000-000000000001", "5eed0000-0000-4000-8000-000000000002", "5eed0000-0000-4000-8000-000000000003"}) {
		t.Errorf("entries = %q", ids)
	}
	if d.Entries[0].EventTitle != "Intro call" || d.Entries[0].Start.Format("15:04") != "09:00" || d.Entries[0].Start.Location() != berlin {
		t.Errorf("first entry = %+v", d.Entries[0])
	}
	st, err := env.ledger.Status(t.Context(), Key(day))
	if err != nil || st.State != StatePosted || st.Info.Entries != 3 || st.Info.Channel != "C0DIGEST" {
		t.Errorf("ledger = %+v, %v", st, err)
	}

	_, err = env.runner.Run(ctx, day)
	if !errors.Is(err, ErrAlreadyPosted) {
		t.Errorf("second run: %v, want ErrAlreadyPosted", err)
	}
	if n := len(env.pub.Digests()); n != 1 {
		t.Errorf("%d digests after the second run", n)
	}
}

func TestRunConcurrentRunsPostOnce(t *testing.T) {
	t.Parallel()
	env := newRunnerEnv(t)
	day := Tomorrow(env.clock.Now(), berlin)
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for range 10 {
		wg.Go(func() {
			// Separate ledgers on one directory, as separate processes.
			l := openLedger(t, env.dir, env.clock.Now)
			r := *env.runner
			r.Ledger = l
			_, err := r.Run(t.Context(), day)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	var ok, already int
	for err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, ErrAlreadyPosted):
			already++
		default:
			t.Error(err)
		}
	}
	if ok != 1 || already != 9 || len(env.pub.Digests()) != 1 {
		t.Errorf("%d posted, %d already posted, %d digests", ok, already, len(env.pub.Digests()))
	}
}

func TestRunBookingsDownThenRecovered(t *testing.T) {
	t.Parallel()
	env := newRunnerEnv(t)
	ctx := t.Context()
	day := Tomorrow(env.clock.Now(), berlin)
	down := func() {
		for range booking.DefaultBackoff.Attempts {
			env.srv.FailNext(bookingtest.EndpointListBookings, bookingtest.HTMLError(503))
		}
	}

	down()
	res, err := env.runner.Run(ctx, day)
	if !errors.Is(err, booking.ErrUnavailable) {
		t.Fatalf("run while down: %v", err)
	}
	if res.Posted {
		t.Error("posted while down")
	}
	fails := env.pub.Failures()
	if len(fails) != 1 {
		t.Fatalf("%d failure notices, want 1", len(fails))
	}
	if fails[0].Reason != "the booking API is unavailable" || !fails[0].Day.Equal(day) || fails[0].Channel != "C0DIGEST" {
		t.Errorf("notice = %+v", fails[0])
	}
	if strings.Contains(fails[0].Reason, "nginx") || strings.Contains(fails[0].Reason, "<") {
		t.Errorf("notice leaks the response: %q", fails[0].Reason)
	}
	if st, _ := env.ledger.Status(t.Context(), Key(day)); st.State != StateNone {
		t.Errorf("claim not released: %+v", st)
	}

	// Still down at the next firing: no second notice.
	down()
	if _, err := env.runner.Run(ctx, day); err == nil {
		t.Fatal("second run while down succeeded")
	}
	if n := len(env.pub.Failures()); n != 1 {
		t.Errorf("%d failure notices after the second failure, want 1", n)
	}

	// Recovered: the real digest goes out.
	env.clock.Set(monday.Add(time.Hour))
	res, err = env.runner.Run(ctx, day)
	if err != nil || !res.Posted || res.Entries != 3 {
		t.Fatalf("after recovery: %+v, %v", res, err)
	}
	if n := len(env.pub.Digests()); n != 1 {
		t.Errorf("%d digests", n)
	}
	if _, err := env.runner.Run(ctx, day); !errors.Is(err, ErrAlreadyPosted) {
		t.Errorf("after posting: %v", err)
	}
}

func TestRunEventTypesDownFallsBackToSlugs(t *testing.T) {
	t.Parallel()
	env := newRunnerEnv(t)
	for range booking.DefaultBackoff.Attempts {
		env.srv.FailNext(bookingtest.EndpointEventTypes, bookingtest.HTMLError(502))
	}
	res, err := env.runner.Run(t.Context(), Tomorrow(env.clock.Now(), berlin))
	if err != nil || !res.Posted {
		t.Fatalf("%+v, %v", res, err)
	}
	d := env.pub.Digests()[0].Digest
	if d.Entries[0].EventTitle != "intro-call" || d.Entries[1].EventTitle != "consultation" {
		t.Errorf("titles = %q, %q; want slugs", d.Entries[0].EventTitle, d.Entries[1].EventTitle)
	}
	if len(env.pub.Failures()) != 0 {
		t.Error("a failure notice for missing titles")
	}
}

func TestRunSkipEmpty(t *testing.T) {
	t.Parallel()
	env := newRunnerEnv(t)
	sunday := date(t, "2026-11-29", berlin)

	env.runner.SkipEmpty = true
	res, err := env.runner.Run(t.Context(), sunday)
	if err != nil || !res.Skipped || res.Posted || res.Entries != 0 {
		t.Fatalf("%+v, %v", res, err)
	}
	if n := len(env.pub.Digests()); n != 0 {
		t.Errorf("%d digests for an empty day with SkipEmpty", n)
	}
	st, _ := env.ledger.Status(t.Context(), Key(sunday))
	if st.State != StatePosted || !st.Info.Empty {
		t.Errorf("ledger = %+v", st)
	}
	if _, err := env.runner.Run(t.Context(), sunday); !errors.Is(err, ErrAlreadyPosted) {
		t.Errorf("second run: %v", err)
	}

	// Without SkipEmpty the empty digest is posted.
	env.runner.SkipEmpty = false
	saturday := date(t, "2026-11-28", berlin)
	res, err = env.runner.Run(t.Context(), saturday)
	if err != nil || !res.Posted {
		t.Fatalf("%+v, %v", res, err)
	}
	if d := env.pub.Digests()[0].Digest; len(d.Entries) != 0 || !strings.Contains(d.Text(false), "No bookings tomorrow.") {
		t.Errorf("empty digest = %+v", d)
	}
}

func TestRunPublishFailures(t *testing.T) {
	t.Parallel()
	env := newRunnerEnv(t)
	day := Tomorrow(env.clock.Now(), berlin)

	// A definite failure releases the claim: the next run posts.
	env.pub.digestErr = func(n int) error { return errors.New("channel_not_found") }
	if _, err := env.runner.Run(t.Context(), day); err == nil || !strings.Contains(err.Error(), "channel_not_found") {
		t.Fatalf("run: %v", err)
	}
	if st, _ := env.ledger.Status(t.Context(), Key(day)); st.State != StateNone {
		t.Errorf("claim kept after a definite failure: %+v", st)
	}

	// An uncertain outcome is recorded as posted and never retried.
	env.pub.digestErr = func(n int) error { return fmt.Errorf("%w: timeout", ErrMaybePosted) }
	if _, err := env.runner.Run(t.Context(), day); !errors.Is(err, ErrMaybePosted) {
		t.Fatalf("run: %v", err)
	}
	st, _ := env.ledger.Status(t.Context(), Key(day))
	if st.State != StatePosted || !st.Info.Uncertain {
		t.Errorf("ledger after an uncertain post = %+v", st)
	}
	env.pub.digestErr = nil
	if _, err := env.runner.Run(t.Context(), day); !errors.Is(err, ErrAlreadyPosted) {
		t.Errorf("retry after an uncertain post: %v", err)
	}
	if n := len(env.pub.Digests()); n != 0 {
		t.Errorf("%d digests", n)
	}
}

// tsPublisher reports a message timestamp.
type tsPublisher struct{ recordingPublisher }

func (p *tsPublisher) PublishDigestTS(ctx context.Context, channel string, d Digest, includeEmails bool) (string, error) {
	return "1763917203.000100", p.PublishDigest(ctx, channel, d, includeEmails)
}

func TestRunKeepsTheMessageTimestamp(t *testing.T) {
	t.Parallel()
	env := newRunnerEnv(t)
	env.runner.Publisher = &tsPublisher{}
	day := Tomorrow(env.clock.Now(), berlin)
	if _, err := env.runner.Run(t.Context(), day); err != nil {
		t.Fatal(err)
	}
	if st, _ := env.ledger.Status(t.Context(), Key(day)); st.Info.TS != "1763917203.000100" {
		t.Errorf("ledger = %+v", st)
	}
}

func TestRunRefusesAnEndedDay(t *testing.T) {
	t.Parallel()
	env := newRunnerEnv(t)
	for _, day := range []string{"2026-11-22", "2026-01-01"} {
		if _, err := env.runner.Run(t.Context(), date(t, day, berlin)); !errors.Is(err, ErrDayOver) {
			t.Errorf("Run(%s): %v", day, err)
		}
		if _, err := env.runner.Preview(t.Context(), date(t, day, berlin)); !errors.Is(err, ErrDayOver) {
			t.Errorf("Preview(%s): %v", day, err)
		}
	}
}

func TestPreviewRecordsNothing(t *testing.T) {
	t.Parallel()
	env := newRunnerEnv(t)
	day := Tomorrow(env.clock.Now(), berlin)
	d, err := env.runner.Preview(t.Context(), day)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Entries) != 3 || !strings.HasPrefix(d.Text(false), "Bookings for Tuesday, 24 November 2026 (Europe/Berlin)\n3 bookings\n09:00–09:15  Intro call — Ada Lovelace\n") {
		t.Errorf("preview:\n%s", d.Text(false))
	}
	if st, _ := env.ledger.Status(t.Context(), Key(day)); st.State != StateNone {
		t.Errorf("preview touched the ledger: %+v", st)
	}
	if len(env.pub.Digests()) != 0 {
		t.Error("preview posted")
	}
	// Preview needs no publisher, ledger or channel.
	r := &Runner{Source: env.runner.Source, Zone: berlin, Now: env.clock.Now}
	if _, err := r.Preview(t.Context(), day); err != nil {
		t.Error(err)
	}
	if _, err := r.Run(t.Context(), day); err == nil {
		t.Error("Run without a publisher succeeded")
	}
}

func TestFailureReason(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want string
	}{
		{&booking.APIError{Endpoint: "GET /bookings", StatusCode: 503, Sample: "secret-ish body"}, "the booking API is unavailable"},
		{&booking.APIError{Endpoint: "GET /bookings", StatusCode: 401}, "the booking API key was refused"},
		{&booking.APIError{Endpoint: "GET /bookings", StatusCode: 429}, "too many attempts"},
		{&booking.TransportError{Endpoint: "GET /bookings", Timeout: true, Err: context.DeadlineExceeded}, "the booking API did not answer in time"},
		{errors.New("panic: stack trace at /src/x.go:12"), "the bookings could not be read"},
	}
	for _, tt := range tests {
		if got := FailureReason(tt.err); got != tt.want {
			t.Errorf("FailureReason(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

// A post that went out is recorded even when the run is cancelled as it
// returns (a shutdown): the ledger's calls afterwards ignore cancellation.
func TestRunRecordsAPostMadeWhileShuttingDown(t *testing.T) {
	t.Parallel()
	env := newRunnerEnv(t)
	day := Tomorrow(env.clock.Now(), berlin)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	env.pub.digestErr = func(int) error { cancel(); return nil }
	if _, err := env.runner.Run(ctx, day); err != nil {
		t.Fatal(err)
	}
	if st, err := env.ledger.Status(t.Context(), Key(day)); err != nil || st.State != StatePosted {
		t.Errorf("ledger = %+v, %v; want posted", st, err)
	}

	// A claim is released the same: a definite failure during shutdown
	// leaves the date to be tried again.
	next := day.AddDate(0, 0, 1)
	ctx, cancel = context.WithCancel(t.Context())
	defer cancel()
	env.pub.digestErr = func(int) error { cancel(); return errors.New("channel_not_found") }
	if _, err := env.runner.Run(ctx, next); err == nil {
		t.Fatal("a failed post succeeded")
	}
	if st, err := env.ledger.Status(t.Context(), Key(next)); err != nil || st.State != StateNone {
		t.Errorf("ledger = %+v, %v; want none", st, err)
	}
}

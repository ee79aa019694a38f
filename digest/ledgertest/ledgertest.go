// Package ledgertest checks the digest's Ledger, over an outbox, against
// the semantics its documentation gives. It is for tests only.
package ledgertest

import (
	"testing"
	"time"

	"github.com/bookbot/bookbot/digest"
	"github.com/bookbot/bookbot/internal/fakeclock"
)

// Run runs the suite, each subtest against a ledger of its own.
//
// fresh makes that ledger: it is called once by each subtest, with the
// subtest's t and the suite's clock, and must make an empty ledger no
// other subtest sees (a directory under t.TempDir(), a database of its
// own) whose clock is now (digest.LedgerOptions.Now) and whose StaleAfter
// is the default, digest.DefaultStaleAfter. now stands still until the
// subtest moves it. fresh returns open, which returns a new handle on that
// same ledger each time it is called, as another process or replica would
// get one: the suite calls it more than once to check that what a handle
// recorded is there for the next, and that handles used at once agree.
// open is called on the subtest's goroutine; it reports a failure with
// t.Fatal, and registers with t.Cleanup the closing of what it opens, if
// anything needs it.
//
// The subtests, which run in parallel with each other:
//
//	Status/never claimed            a date never claimed is StateNone, not Done
//	Claim/once                      the first Claim wins and the next ones do not; the claim keeps its time, exactly
//	Claim/the day's own date        the date is day's calendar date in day's own location
//	Posted/round trip               the record round-trips, keeps the claim's time and is never claimed again
//	Posted/again                    replaces the record, keeping the claim's time
//	Stale/after StaleAfter          a claim is stale only once older than StaleAfter by the clock, on every handle
//	Stale/released                  a stale claim is never taken over, but can be released
//	Stale/posted                    a posted date never goes stale
//	Notice/apart from the digest    the digest's and the notice's claims and records do not touch
//	Reopen                          every state is there for a new handle
//
// What every claim does, whatever it claims (one winner among many at
// once, release, a post without a claim, a cancelled context), is the
// outbox's, which outboxtest checks.
func Run(t *testing.T, fresh func(t *testing.T, now func() time.Time) (open func() digest.Ledger)) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			clock := fakeclock.New(start)
			c.run(t, &env{t: t, clock: clock, open: fresh(t, clock.Now)})
		})
	}
}

var cases = []struct {
	name string
	run  func(t *testing.T, e *env)
}{
	{"Status/never claimed", statusNone},
	{"Claim/once", claimOnce},
	{"Claim/the day's own date", claimOwnDate},
	{"Posted/round trip", posted},
	{"Posted/again", postedAgain},
	{"Stale/after StaleAfter", staleAfter},
	{"Stale/released", staleReleased},
	{"Stale/posted", stalePosted},
	{"Notice/apart from the digest", noticeApart},
	{"Reopen", reopen},
}

// start is where the clock starts: the evening before the fixtures' day,
// with nanoseconds, which a ledger keeps.
var start = time.Date(2026, 11, 23, 16, 0, 0, 123456789, time.UTC)

var (
	cet = time.FixedZone("CET", 1*3600)
	est = time.FixedZone("EST", -5*3600)
)

// day is the local midnight of 2026-11-dd in Berlin (winter time).
func day(dd int) time.Time { return time.Date(2026, 11, dd, 0, 0, 0, 0, cet) }

// info is a post's record with every field set, At with nanoseconds and in
// another zone than UTC.
func info(n int) digest.PostInfo {
	return digest.PostInfo{
		At:        start.Add(time.Duration(n)*time.Minute + 7).In(est),
		Channel:   "C0DIGEST",
		TS:        "1763917203.00010" + string(rune('0'+n%10)),
		Entries:   n,
		Empty:     n == 0,
		Uncertain: n%2 == 1,
	}
}

// env is a subtest's ledger and clock.
type env struct {
	t     *testing.T
	clock *fakeclock.Clock
	open  func() digest.Ledger
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantClaim(t *testing.T, l digest.Ledger, d time.Time, want bool) {
	t.Helper()
	ok, err := l.Claim(t.Context(), digest.Key(d))
	must(t, err)
	if ok != want {
		t.Errorf("Claim(%s %s) = %v, want %v", d.Format(time.DateOnly), d.Location(), ok, want)
	}
}

func wantNotice(t *testing.T, l digest.Ledger, d time.Time, want bool) {
	t.Helper()
	ok, err := l.Claim(t.Context(), digest.FailureKey(d))
	must(t, err)
	if ok != want {
		t.Errorf("Claim(%s) = %v, want %v", digest.FailureKey(d), ok, want)
	}
}

func status(t *testing.T, l digest.Ledger, d time.Time) digest.Status {
	t.Helper()
	st, err := l.Status(t.Context(), digest.Key(d))
	must(t, err)
	return st
}

func wantNone(t *testing.T, l digest.Ledger, d time.Time) {
	t.Helper()
	if st := status(t, l, d); st.State != digest.StateNone || st.Done() || st.Stale || !st.ClaimedAt.IsZero() {
		t.Errorf("Status(%s) = %+v, want none", d.Format(time.DateOnly), st)
	}
}

// wantClaimed checks an unfinished claim made at claimedAt.
func wantClaimed(t *testing.T, l digest.Ledger, d, claimedAt time.Time, stale bool) {
	t.Helper()
	st := status(t, l, d)
	if st.State != digest.StateClaimed || st.Stale != stale || st.Done() != stale || !st.ClaimedAt.Equal(claimedAt) {
		t.Errorf("Status(%s) = %+v, want claimed at %s, stale %v", d.Format(time.DateOnly), st, claimedAt, stale)
	}
}

// wantPosted checks a posted date's record, claimed at claimedAt.
func wantPosted(t *testing.T, l digest.Ledger, d, claimedAt time.Time, want digest.PostInfo) {
	t.Helper()
	st := status(t, l, d)
	got := st.Info
	if st.State != digest.StatePosted || !st.Done() || st.Stale || !st.ClaimedAt.Equal(claimedAt) ||
		!got.At.Equal(want.At) || got.Channel != want.Channel || got.TS != want.TS ||
		got.Entries != want.Entries || got.Empty != want.Empty || got.Uncertain != want.Uncertain {
		t.Errorf("Status(%s) = %+v\nwant posted, claimed at %s, %+v", d.Format(time.DateOnly), st, claimedAt, want)
	}
}

func statusNone(t *testing.T, e *env) {
	l := e.open()
	wantNone(t, l, day(24))
	wantNone(t, e.open(), day(24))
}

func claimOnce(t *testing.T, e *env) {
	l := e.open()
	wantClaim(t, l, day(24), true)
	claimedAt := e.clock.Now()
	e.clock.Advance(time.Minute)
	wantClaim(t, l, day(24), false)
	wantClaim(t, e.open(), day(24), false)
	wantClaimed(t, l, day(24), claimedAt, false)
	wantClaimed(t, e.open(), day(24), claimedAt, false)
	// Other dates are apart.
	wantNone(t, l, day(25))
	wantClaim(t, l, day(25), true)
	wantClaimed(t, l, day(25), claimedAt.Add(time.Minute), false)
	wantClaimed(t, l, day(24), claimedAt, false)
}

func claimOwnDate(t *testing.T, e *env) {
	l := e.open()
	// The same instant is the 24th in Berlin and the 23rd in New York.
	berlin24 := day(24)
	newYork23 := berlin24.In(est)
	wantClaim(t, l, berlin24, true)
	wantNone(t, l, newYork23)
	wantClaim(t, l, newYork23, true)
	// Any time of the day is the day; the 24th is the 24th in any zone.
	wantClaim(t, l, time.Date(2026, 11, 24, 23, 59, 59, 999999999, cet), false)
	wantClaim(t, l, time.Date(2026, 11, 24, 0, 0, 0, 0, est), false)
	wantClaim(t, l, time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC), false)
	wantClaim(t, l, time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC), false)
	if st := status(t, l, time.Date(2026, 11, 24, 18, 0, 0, 0, est)); st.State != digest.StateClaimed {
		t.Errorf("Status of the 24th at 18:00 in New York = %+v", st)
	}
	wantNone(t, l, time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC))
	wantNone(t, l, time.Date(2025, 11, 24, 0, 0, 0, 0, time.UTC))
}

func posted(t *testing.T, e *env) {
	l := e.open()
	wantClaim(t, l, day(24), true)
	claimedAt := e.clock.Now()
	e.clock.Advance(3 * time.Second)
	must(t, l.Posted(t.Context(), digest.Key(day(24)), info(3)))
	wantPosted(t, l, day(24), claimedAt, info(3))
	wantPosted(t, e.open(), day(24), claimedAt, info(3))
	wantClaim(t, l, day(24), false)
	wantClaim(t, e.open(), day(24), false)

	// Every field, in other values.
	wantClaim(t, l, day(25), true)
	must(t, l.Posted(t.Context(), digest.Key(day(25)), info(0)))
	wantPosted(t, e.open(), day(25), e.clock.Now(), info(0))
	wantClaim(t, l, day(26), true)
	must(t, l.Posted(t.Context(), digest.Key(day(26)), digest.PostInfo{}))
	wantPosted(t, e.open(), day(26), e.clock.Now(), digest.PostInfo{})
}

func postedAgain(t *testing.T, e *env) {
	l := e.open()
	wantClaim(t, l, day(24), true)
	claimedAt := e.clock.Now()
	must(t, l.Posted(t.Context(), digest.Key(day(24)), info(1)))
	e.clock.Advance(time.Hour)
	must(t, e.open().Posted(t.Context(), digest.Key(day(24)), info(4)))
	wantPosted(t, l, day(24), claimedAt, info(4))
	wantClaim(t, l, day(24), false)
}

func staleAfter(t *testing.T, e *env) {
	l := e.open()
	wantClaim(t, l, day(24), true)
	claimedAt := e.clock.Now()
	e.clock.Advance(digest.DefaultStaleAfter - time.Second)
	wantClaimed(t, l, day(24), claimedAt, false)
	e.clock.Advance(time.Second)
	wantClaimed(t, l, day(24), claimedAt, false) // exactly StaleAfter old: not yet
	wantClaimed(t, e.open(), day(24), claimedAt, false)
	e.clock.Advance(time.Nanosecond)
	wantClaimed(t, l, day(24), claimedAt, true)
	wantClaimed(t, e.open(), day(24), claimedAt, true)
	// Never twice: the date stays taken, on every handle.
	wantClaim(t, l, day(24), false)
	wantClaim(t, e.open(), day(24), false)
	e.clock.Advance(24 * time.Hour)
	wantClaimed(t, l, day(24), claimedAt, true)
	// Staleness is the clock's judgment, not a record: a clock read back
	// sees a live claim again.
	e.clock.Set(claimedAt.Add(time.Minute))
	wantClaimed(t, e.open(), day(24), claimedAt, false)

	// Nor is a stale claim of the failure notice taken over.
	wantNotice(t, l, day(24), true)
	e.clock.Advance(digest.DefaultStaleAfter + time.Second)
	wantNotice(t, l, day(24), false)
	wantNotice(t, e.open(), day(24), false)
}

func staleReleased(t *testing.T, e *env) {
	l := e.open()
	wantClaim(t, l, day(24), true)
	claimedAt := e.clock.Now()
	e.clock.Advance(time.Hour)
	wantClaimed(t, l, day(24), claimedAt, true)
	must(t, e.open().Release(t.Context(), digest.Key(day(24))))
	wantNone(t, l, day(24))
	wantClaim(t, l, day(24), true)
	wantClaimed(t, l, day(24), e.clock.Now(), false)
}

func stalePosted(t *testing.T, e *env) {
	l := e.open()
	wantClaim(t, l, day(24), true)
	claimedAt := e.clock.Now()
	e.clock.Advance(digest.DefaultStaleAfter - time.Minute)
	must(t, l.Posted(t.Context(), digest.Key(day(24)), info(3)))
	e.clock.Advance(30 * 24 * time.Hour)
	wantPosted(t, l, day(24), claimedAt, info(3))
	wantPosted(t, e.open(), day(24), claimedAt, info(3))
}

func noticeApart(t *testing.T, e *env) {
	l := e.open()
	// The notice's claim does not claim the digest, nor its release
	// release it.
	wantNotice(t, l, day(24), true)
	wantNone(t, l, day(24))
	wantClaim(t, l, day(24), true)
	claimedAt := e.clock.Now()
	must(t, l.Release(t.Context(), digest.FailureKey(day(24))))
	wantClaimed(t, l, day(24), claimedAt, false)
	wantClaim(t, l, day(24), false)

	// The digest's release leaves the notice's claim.
	wantNotice(t, l, day(24), true)
	must(t, l.Release(t.Context(), digest.Key(day(24))))
	wantNone(t, l, day(24))
	wantNotice(t, l, day(24), false)

	// The notice's record is not the digest's.
	must(t, l.Posted(t.Context(), digest.FailureKey(day(24)), info(1)))
	wantNone(t, l, day(24))
	wantClaim(t, l, day(24), true)
	must(t, l.Posted(t.Context(), digest.Key(day(24)), info(2)))
	wantPosted(t, e.open(), day(24), claimedAt, info(2))
	wantNotice(t, l, day(24), false)

	// The digest posted first, then the notice: both recorded.
	wantClaim(t, l, day(25), true)
	must(t, l.Posted(t.Context(), digest.Key(day(25)), info(3)))
	wantNotice(t, l, day(25), true)
	must(t, l.Posted(t.Context(), digest.FailureKey(day(25)), info(4)))
	wantPosted(t, e.open(), day(25), claimedAt, info(3))
}

func reopen(t *testing.T, e *env) {
	l := e.open()
	wantClaim(t, l, day(24), true)
	claimed24 := e.clock.Now()
	must(t, l.Posted(t.Context(), digest.Key(day(24)), info(3)))
	e.clock.Advance(time.Minute)
	wantClaim(t, l, day(25), true)
	claimed25 := e.clock.Now()
	wantClaim(t, l, day(26), true)
	must(t, l.Release(t.Context(), digest.Key(day(26))))
	wantNotice(t, l, day(24), true)
	must(t, l.Posted(t.Context(), digest.FailureKey(day(24)), info(0)))
	wantNotice(t, l, day(27), true)
	wantNotice(t, l, day(28), true)
	must(t, l.Release(t.Context(), digest.FailureKey(day(28))))

	// A restarted process sees the same.
	r := e.open()
	wantPosted(t, r, day(24), claimed24, info(3))
	wantClaimed(t, r, day(25), claimed25, false)
	wantNone(t, r, day(26))
	wantNone(t, r, day(27))
	wantClaim(t, r, day(24), false)
	wantClaim(t, r, day(25), false)
	wantNotice(t, r, day(24), false)
	wantNotice(t, r, day(27), false)
	wantNotice(t, r, day(28), true)
	if err := r.Release(t.Context(), digest.Key(day(24))); err == nil {
		t.Error("a posted date was released after reopening")
	}
	must(t, r.Release(t.Context(), digest.Key(day(25))))
	wantClaim(t, e.open(), day(25), true)
	wantClaim(t, r, day(26), true)
}

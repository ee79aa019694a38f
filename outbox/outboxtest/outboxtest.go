// Package outboxtest checks an implementation of outbox.Store against the
// semantics its documentation gives. It is for tests only.
package outboxtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookbot/bookbot/internal/testutil"
	"github.com/bookbot/bookbot/outbox"
)

// Run runs the suite, each subtest against an outbox of its own.
//
// fresh makes that outbox: it is called once by each subtest, with the
// subtest's t, and must make an empty store no other subtest sees (a file
// under t.TempDir(), a database of its own). It returns open, which
// returns a new handle on that same store each time it is called, as
// another process or replica would get one: the suite calls it more than
// once to check that what a handle recorded is there for the next, and
// that handles used at once agree. open is called on the subtest's
// goroutine; it reports a failure with t.Fatal, and registers with
// t.Cleanup the closing of what it opens, if anything needs it.
//
// The subtests, which run in parallel with each other:
//
//	Lookup/never claimed        a key never claimed holds nothing
//	Claim/once                  the first Claim wins, the next ones do not; the claim keeps its times, exactly
//	Claim/keys                  keys are bytes: NUL, non-UTF-8, a prefix of another, are keys of their own
//	Claim/no kind               a key without a kind is refused
//	Claim/concurrent            20 goroutines on one handle: one wins
//	Claim/concurrent handles    the same, each goroutine on a handle of its own
//	Posted/round trip           the post round-trips on its claim, which stays taken
//	Posted/unclaimed            fails, and records nothing
//	Posted/again                replaces the post, keeping the claim
//	Release/claimed again       a released key is claimed again; releasing an unclaimed key does nothing
//	Release/posted              fails, and the key stays posted
//	Takeover/stale              re-claims only the unposted claim made at the time given
//	Takeover/concurrent handles 20 replicas take over the same stale claims at once: one wins each
//	Unsettled                   a claim without a post is unsettled; a posted or released one is not
//	Prune                       by prefix and keep time; exactly cutoff is kept; a pruned key is claimed again
//	Reopen                      every state is there for a new handle
//	Context/cancelled           with a cancelled context every method fails and records nothing
func Run(t *testing.T, fresh func(t *testing.T) (open func() outbox.Store)) {
	cases.Run(t, fresh)
}

var cases = testutil.Suite[outbox.Store]{
	{"Lookup/never claimed", lookupNone},
	{"Claim/once", claimOnce},
	{"Claim/keys", claimKeys},
	{"Claim/no kind", claimNoKind},
	{"Claim/concurrent", claimConcurrent},
	{"Claim/concurrent handles", claimConcurrentHandles},
	{"Posted/round trip", postedRoundTrip},
	{"Posted/unclaimed", postedUnclaimed},
	{"Posted/again", postedAgain},
	{"Release/claimed again", releaseAgain},
	{"Release/posted", releasePosted},
	{"Takeover/stale", takeoverStale},
	{"Takeover/concurrent handles", takeoverConcurrent},
	{"Unsettled", unsettled},
	{"Prune", prune},
	{"Reopen", reopen},
	{"Context/cancelled", cancelled},
}

// base is the time the fixtures are built around, with nanoseconds, which
// a store keeps.
var base = time.Date(2026, 11, 24, 9, 0, 0, 123456789, time.UTC)

var est = time.FixedZone("EST", -5*3600)

func at(minutes int) time.Time { return base.Add(time.Duration(minutes) * time.Minute) }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantClaim(t *testing.T, s outbox.Store, key string, when time.Time, want bool) {
	t.Helper()
	ok, err := s.Claim(t.Context(), key, when, when.Add(time.Hour))
	must(t, err)
	if ok != want {
		t.Errorf("Claim(%q) = %v, want %v", key, ok, want)
	}
}

func lookup(t *testing.T, s outbox.Store, key string) (outbox.Record, bool) {
	t.Helper()
	r, ok, err := s.Lookup(t.Context(), key)
	must(t, err)
	return r, ok
}

func wantNone(t *testing.T, s outbox.Store, key string) {
	t.Helper()
	if r, ok := lookup(t, s, key); ok {
		t.Errorf("Lookup(%q) = %+v, want nothing", key, r)
	}
}

// wantClaimed checks an unsettled claim made at claimedAt, kept from keep.
func wantClaimed(t *testing.T, s outbox.Store, key string, claimedAt, keep time.Time) {
	t.Helper()
	r, ok := lookup(t, s, key)
	if !ok || r.Posted != nil || !r.ClaimedAt.Equal(claimedAt) || !r.Keep.Equal(keep) || r.Claimant == "" {
		t.Errorf("Lookup(%q) = %+v, %v; want claimed at %s, kept from %s, by someone", key, r, ok, claimedAt, keep)
	}
}

// wantPosted checks a key's post, and that its claim was made at
// claimedAt.
func wantPosted(t *testing.T, s outbox.Store, key string, claimedAt time.Time, want outbox.Post) {
	t.Helper()
	r, ok := lookup(t, s, key)
	if !ok || r.Posted == nil || !r.ClaimedAt.Equal(claimedAt) {
		t.Fatalf("Lookup(%q) = %+v, %v; want posted, claimed at %s", key, r, ok, claimedAt)
	}
	got := *r.Posted
	if !got.At.Equal(want.At) || got.Channel != want.Channel || got.TS != want.TS || !sameJSON(got.Detail, want.Detail) {
		t.Errorf("Lookup(%q).Posted = %+v (detail %s), want %+v (detail %s)", key, got, got.Detail, want, want.Detail)
	}
}

// sameJSON reports whether a and b hold the same JSON value: a store may
// keep JSON in its own spacing and order.
func sameJSON(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	return string(xs) == string(ys)
}

func post(n int) outbox.Post {
	return outbox.Post{
		At:      at(n).Add(7).In(est),
		Channel: "C0POST",
		TS:      "1763917203.00010" + string(rune('0'+n%10)),
		Detail:  json.RawMessage(`{"entries": ` + string(rune('0'+n%10)) + `, "uncertain": true}`),
	}
}

func lookupNone(t *testing.T, open func() outbox.Store) {
	wantNone(t, open(), "digest/2026-11-24")
	if at, ok, err := outbox.Unsettled(t.Context(), open(), "digest/2026-11-24"); err != nil || ok {
		t.Errorf("Unsettled of a key never claimed = %s, %v, %v", at, ok, err)
	}
}

func claimOnce(t *testing.T, open func() outbox.Store) {
	s := open()
	claimedAt := at(0).In(est)
	wantClaim(t, s, "digest/2026-11-24", claimedAt, true)
	wantClaim(t, s, "digest/2026-11-24", at(1), false)
	wantClaim(t, open(), "digest/2026-11-24", at(2), false)
	wantClaimed(t, s, "digest/2026-11-24", claimedAt, claimedAt.Add(time.Hour))
	wantClaimed(t, open(), "digest/2026-11-24", claimedAt, claimedAt.Add(time.Hour))
	// Other keys are apart, and keep their own times.
	wantNone(t, s, "digest/2026-11-25")
	wantClaim(t, s, "digest/2026-11-25", at(3), true)
	wantClaimed(t, s, "digest/2026-11-25", at(3), at(63))
	wantClaimed(t, s, "digest/2026-11-24", claimedAt, claimedAt.Add(time.Hour))
	// The keep time is the caller's: any instant, the zero time included.
	ok, err := s.Claim(t.Context(), "notice/ab", at(4), time.Time{})
	if err != nil || !ok {
		t.Fatalf("Claim kept from the zero time = %v, %v", ok, err)
	}
	wantClaimed(t, open(), "notice/ab", at(4), time.Time{})
}

func claimKeys(t *testing.T, open func() outbox.Store) {
	s := open()
	keys := []string{
		"personal/remind\x00U1\x00b1",
		"personal/remind\x00U1\x00b1\x00",
		"personal/remind\x00U1",
		"personal/\xff\xfe",
		"personal/Ü",
		"notice/a",
		"notice/A",
	}
	for i, k := range keys {
		wantClaim(t, s, k, at(i), true)
	}
	r := open()
	for i, k := range keys {
		wantClaim(t, r, k, at(10), false)
		wantClaimed(t, r, k, at(i), at(i+60))
	}
}

func claimNoKind(t *testing.T, open func() outbox.Store) {
	s := open()
	for _, k := range []string{"", "2026-11-24", "/2026-11-24"} {
		if ok, err := s.Claim(t.Context(), k, at(0), at(0)); err == nil || ok {
			t.Errorf("Claim(%q) = %v, %v; want an error", k, ok, err)
		}
	}
}

// rounds is how many keys race claims at once: a round may not overlap
// the claims enough to show a check and a set that are not one.
const rounds = 10

// race has each handle claim the same keys at once from goroutines of its
// own, and checks that one claim of each key won.
func race(t *testing.T, handles []outbox.Store) {
	t.Helper()
	raceRounds(t, handles, "claims", func(s outbox.Store, i, r int) (bool, error) {
		return s.Claim(t.Context(), fmt.Sprintf("digest-failure/2026-11-%02d", r+1), at(i), at(i))
	})
}

// raceRounds has each handle try every round's key at once from
// goroutines of its own (try gets the handle's index and the round), and
// checks that exactly one try of each round won.
func raceRounds(t *testing.T, handles []outbox.Store, what string, try func(s outbox.Store, i, r int) (bool, error)) {
	t.Helper()
	won := make([]atomic.Int32, rounds)
	var wg sync.WaitGroup
	begin := make(chan struct{})
	for i, s := range handles {
		wg.Go(func() {
			<-begin
			for r := range rounds {
				ok, err := try(s, i, r)
				if err != nil {
					t.Error(err)
				}
				if ok {
					won[r].Add(1)
				}
			}
		})
	}
	close(begin)
	wg.Wait()
	for r := range won {
		if n := won[r].Load(); n != 1 {
			t.Errorf("key %d: %d of %d %s won, want exactly 1", r, n, len(handles), what)
		}
	}
}

func claimConcurrent(t *testing.T, open func() outbox.Store) {
	s := open()
	handles := make([]outbox.Store, 20)
	for i := range handles {
		handles[i] = s
	}
	race(t, handles)
}

func claimConcurrentHandles(t *testing.T, open func() outbox.Store) {
	handles := make([]outbox.Store, 20)
	for i := range handles {
		handles[i] = open()
	}
	race(t, handles)
}

func postedRoundTrip(t *testing.T, open func() outbox.Store) {
	s := open()
	wantClaim(t, s, "digest/2026-11-24", at(0), true)
	must(t, s.Posted(t.Context(), "digest/2026-11-24", post(3)))
	wantPosted(t, s, "digest/2026-11-24", at(0), post(3))
	wantPosted(t, open(), "digest/2026-11-24", at(0), post(3))
	wantClaim(t, s, "digest/2026-11-24", at(1), false)
	wantClaim(t, open(), "digest/2026-11-24", at(1), false)

	// A post of nothing but where: no time, no detail.
	wantClaim(t, s, "notice/ab", at(0), true)
	bare := outbox.Post{Channel: "C0NOTICE", TS: "1763917203.000200"}
	must(t, open().Posted(t.Context(), "notice/ab", bare))
	wantPosted(t, open(), "notice/ab", at(0), bare)
}

func postedUnclaimed(t *testing.T, open func() outbox.Store) {
	s := open()
	if err := s.Posted(t.Context(), "notice/ab", post(1)); err == nil {
		t.Error("Posted of a key never claimed: no error")
	}
	wantNone(t, open(), "notice/ab")
	// A released claim is no claim either.
	wantClaim(t, s, "notice/ab", at(0), true)
	must(t, s.Release(t.Context(), "notice/ab"))
	if err := s.Posted(t.Context(), "notice/ab", post(1)); err == nil {
		t.Error("Posted of a released key: no error")
	}
	wantNone(t, open(), "notice/ab")
	wantClaim(t, s, "notice/ab", at(1), true)
}

func postedAgain(t *testing.T, open func() outbox.Store) {
	s := open()
	wantClaim(t, s, "digest/2026-11-24", at(0), true)
	must(t, s.Posted(t.Context(), "digest/2026-11-24", post(1)))
	must(t, open().Posted(t.Context(), "digest/2026-11-24", post(4)))
	wantPosted(t, s, "digest/2026-11-24", at(0), post(4))
	wantClaim(t, s, "digest/2026-11-24", at(5), false)
}

func releaseAgain(t *testing.T, open func() outbox.Store) {
	s := open()
	wantClaim(t, s, "personal/k", at(0), true)
	must(t, s.Release(t.Context(), "personal/k"))
	wantNone(t, s, "personal/k")
	wantNone(t, open(), "personal/k")
	wantClaim(t, open(), "personal/k", at(1), true)
	wantClaimed(t, s, "personal/k", at(1), at(61))
	wantClaim(t, s, "personal/k", at(2), false)

	// By another handle than the one that claimed.
	must(t, open().Release(t.Context(), "personal/k"))
	wantClaim(t, s, "personal/k", at(3), true)

	// Releasing a key never claimed does nothing, twice; nor does it touch
	// a key it is a prefix of.
	must(t, s.Release(t.Context(), "personal/"))
	must(t, s.Release(t.Context(), "personal/"))
	wantNone(t, s, "personal/")
	wantClaimed(t, s, "personal/k", at(3), at(63))
}

func releasePosted(t *testing.T, open func() outbox.Store) {
	s := open()
	wantClaim(t, s, "digest/2026-11-24", at(0), true)
	must(t, s.Posted(t.Context(), "digest/2026-11-24", post(3)))
	if err := s.Release(t.Context(), "digest/2026-11-24"); err == nil {
		t.Error("a posted key was released")
	}
	if err := open().Release(t.Context(), "digest/2026-11-24"); err == nil {
		t.Error("a posted key was released by another handle")
	}
	wantPosted(t, s, "digest/2026-11-24", at(0), post(3))
	wantClaim(t, s, "digest/2026-11-24", at(1), false)
}

func wantTakeover(t *testing.T, s outbox.Store, key string, staleAt, when time.Time, want bool) {
	t.Helper()
	ok, err := s.Takeover(t.Context(), key, staleAt, when)
	must(t, err)
	if ok != want {
		t.Errorf("Takeover(%q, %s, %s) = %v, want %v", key, staleAt, when, ok, want)
	}
}

func takeoverStale(t *testing.T, open func() outbox.Store) {
	s := open()
	const key = "review/1"
	wantTakeover(t, s, key, at(0), at(20), false) // nothing to take over
	wantNone(t, s, key)

	wantClaim(t, s, key, at(0), true)
	wantTakeover(t, s, key, at(1), at(20), false) // not the claim seen
	wantTakeover(t, s, key, at(0).In(est), at(20), true)
	wantClaimed(t, open(), key, at(20), at(60))   // claimed afresh; kept as before
	wantTakeover(t, s, key, at(0), at(30), false) // taken over already
	wantClaim(t, s, key, at(30), false)

	must(t, s.Posted(t.Context(), key, post(1)))
	wantTakeover(t, s, key, at(20), at(40), false) // a posted claim stays
	wantPosted(t, s, key, at(20), post(1))
}

func takeoverConcurrent(t *testing.T, open func() outbox.Store) {
	handles := make([]outbox.Store, 20)
	for i := range handles {
		handles[i] = open()
	}
	key := func(r int) string { return fmt.Sprintf("review/%d", r) }
	for r := range rounds {
		wantClaim(t, handles[0], key(r), at(0), true)
	}
	raceRounds(t, handles, "takeovers", func(s outbox.Store, i, r int) (bool, error) {
		return s.Takeover(t.Context(), key(r), at(0), at(10+i))
	})
}

func unsettled(t *testing.T, open func() outbox.Store) {
	s := open()
	want := func(key string, claimedAt time.Time, wantOK bool) {
		t.Helper()
		got, ok, err := outbox.Unsettled(t.Context(), open(), key)
		must(t, err)
		if ok != wantOK || (ok && !got.Equal(claimedAt)) {
			t.Errorf("Unsettled(%q) = %s, %v; want %s, %v", key, got, ok, claimedAt, wantOK)
		}
	}
	wantClaim(t, s, "notice/a", at(0).In(est), true)
	want("notice/a", at(0), true)
	must(t, s.Posted(t.Context(), "notice/a", post(1)))
	want("notice/a", time.Time{}, false)
	wantClaim(t, s, "notice/b", at(2), true)
	must(t, s.Release(t.Context(), "notice/b"))
	want("notice/b", time.Time{}, false)
	want("notice/c", time.Time{}, false)
}

func prune(t *testing.T, open func() outbox.Store) {
	s := open()
	claim := func(key string, keep time.Time) {
		t.Helper()
		ok, err := s.Claim(t.Context(), key, at(0), keep)
		if err != nil || !ok {
			t.Fatalf("Claim(%q) = %v, %v", key, ok, err)
		}
	}
	claim("personal/old", at(10))
	claim("personal/cutoff", at(20))
	claim("personal/new", at(30))
	claim("notice/old", at(10))
	claim("notice/posted", at(10))
	must(t, s.Posted(t.Context(), "notice/posted", post(1)))
	claim("personalx/old", at(10)) // another kind, though "personal" begins it

	must(t, open().Prune(t.Context(), "personal/", at(20)))
	r := open()
	wantNone(t, r, "personal/old")
	wantClaimed(t, r, "personal/cutoff", at(0), at(20))
	wantClaimed(t, r, "personal/new", at(0), at(30))
	wantClaimed(t, r, "notice/old", at(0), at(10))
	wantClaimed(t, r, "personalx/old", at(0), at(10))

	// Posted or not, a record past its keep time goes; a pruned key can be
	// claimed again.
	must(t, r.Prune(t.Context(), "notice/", at(11)))
	wantNone(t, s, "notice/old")
	wantNone(t, s, "notice/posted")
	if err := s.Posted(t.Context(), "notice/old", post(2)); err == nil {
		t.Error("Posted on a pruned key succeeded; want it to fail, as on a key never claimed")
	}
	wantNone(t, s, "notice/old")
	wantClaim(t, s, "notice/posted", at(1), true)
	wantClaimed(t, s, "personalx/old", at(0), at(10))
}

func reopen(t *testing.T, open func() outbox.Store) {
	s := open()
	wantClaim(t, s, "digest/2026-11-24", at(0), true)
	must(t, s.Posted(t.Context(), "digest/2026-11-24", post(3)))
	wantClaim(t, s, "digest/2026-11-25", at(1), true)
	wantClaim(t, s, "digest/2026-11-26", at(2), true)
	must(t, s.Release(t.Context(), "digest/2026-11-26"))

	// A restarted process sees the same.
	r := open()
	wantPosted(t, r, "digest/2026-11-24", at(0), post(3))
	wantClaimed(t, r, "digest/2026-11-25", at(1), at(61))
	wantNone(t, r, "digest/2026-11-26")
	wantClaim(t, r, "digest/2026-11-25", at(3), false)
	wantClaim(t, r, "digest/2026-11-26", at(3), true)
}

func cancelled(t *testing.T, open func() outbox.Store) {
	s := open()
	wantClaim(t, s, "digest/2026-11-24", at(0), true)
	wantClaim(t, s, "digest/2026-11-25", at(0), true)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	wantCanceled := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v, want context.Canceled", what, err)
		}
	}
	ok, err := s.Claim(ctx, "digest/2026-11-26", at(1), at(1))
	wantCanceled("Claim", err)
	if ok {
		t.Error("Claim with a cancelled context won")
	}
	wantCanceled("Posted", s.Posted(ctx, "digest/2026-11-24", post(1)))
	wantCanceled("Release", s.Release(ctx, "digest/2026-11-25"))
	ok, err = s.Takeover(ctx, "digest/2026-11-25", at(0), at(1))
	wantCanceled("Takeover", err)
	if ok {
		t.Error("Takeover with a cancelled context won")
	}
	_, _, err = s.Lookup(ctx, "digest/2026-11-24")
	wantCanceled("Lookup", err)
	wantCanceled("Prune", s.Prune(ctx, "digest/", at(1000)))

	// Nothing was recorded.
	r := open()
	wantClaimed(t, r, "digest/2026-11-24", at(0), at(60))
	wantClaimed(t, r, "digest/2026-11-25", at(0), at(60))
	wantNone(t, r, "digest/2026-11-26")
}

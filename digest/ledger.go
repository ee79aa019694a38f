package digest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/bookbot/bookbot/outbox"
)

// DefaultStaleAfter is how long a claim may stay unfinished before the
// ledger decides its process died mid-post and treats the date as posted.
// A Runner bounds each run well below it (runTimeout, then ledgerTimeout
// for recording the outcome), so a live run never holds a claim this long.
const DefaultStaleAfter = 10 * time.Minute

// Ledger records which dates were posted: it is what makes the digest
// exactly-once per date. A Runner claims a date's key (Key, or FailureKey
// for the notice that the day's digest could not be built) before it posts
// and records the post after it, so that of all the processes sharing one
// ledger, one posts each. NewLedger keeps it in an outbox (outbox.Store),
// the embedded store's or PostgreSQL's; package ledgertest holds it to
// this:
//
//   - A date is day's calendar date in day's own location.
//   - Claim returns true to exactly one caller among any number at once,
//     on any handle. A key stays claimed until it is released: a claim
//     that is never completed is not taken over by a later Claim.
//   - Once such a claim is older than StaleAfter by the ledger's clock,
//     Status reports it Stale (so Done), and the ledger logs an error: its
//     process most likely died mid-post, and may or may not have reached
//     Slack. A digest that arrives twice is worse than one missed once, so
//     the ledger does not retry the date; the log tells a person to check
//     the channel. Release still drops a stale claim (a Runner with a
//     Finder does so once the channel shows the digest is not there).
//   - Posted records the post on the key's claim, keeping its time, and
//     fails when the key holds no claim; again, it replaces the record.
//   - Release drops a key's claim, so the key may be claimed again; on an
//     unclaimed key it does nothing; a posted key cannot be released: it
//     fails, and the key stays posted.
//   - A date's digest and its failure notice are claimed, recorded and
//     released apart.
//   - What a handle records is there for every other handle, and after a
//     restart.
//   - With a context already done, every method fails with an error that
//     matches the context's error, and records nothing.
type Ledger interface {
	// Claim claims the key: true when this caller may post it, false when
	// it is claimed (stale or not) or posted.
	Claim(ctx context.Context, key string) (bool, error)
	// Posted records that the key was posted, as info tells.
	Posted(ctx context.Context, key string, info PostInfo) error
	// Release drops the key's claim after a post that certainly failed.
	Release(ctx context.Context, key string) error
	// Status reports where the key stands.
	Status(ctx context.Context, key string) (Status, error)
}

// Key is the outbox key of day's digest: "digest/2026-11-24".
func Key(day time.Time) string { return "digest/" + dateKey(day) }

// FailureKey is the outbox key of the notice that day's digest could not
// be built: "digest-failure/2026-11-24".
func FailureKey(day time.Time) string { return "digest-failure/" + dateKey(day) }

// NewLedger is the Ledger kept in box, whose clock, staleness and log o
// sets.
func NewLedger(box outbox.Store, o LedgerOptions) Ledger { return &ledger{box: box, o: o} }

type ledger struct {
	box outbox.Store
	o   LedgerOptions
}

func (l *ledger) Claim(ctx context.Context, key string) (bool, error) {
	now := l.o.now()
	return l.box.Claim(ctx, key, now, now)
}

// postDetail is what the outbox keeps of a PostInfo beyond where it was
// posted, under the same names.
type postDetail struct {
	Entries   int  `json:"entries"`
	Empty     bool `json:"empty,omitempty"`
	Uncertain bool `json:"uncertain,omitempty"`
}

func (l *ledger) Posted(ctx context.Context, key string, info PostInfo) error {
	detail, err := json.Marshal(postDetail{Entries: info.Entries, Empty: info.Empty, Uncertain: info.Uncertain})
	if err != nil {
		return fmt.Errorf("digest ledger: %s: %w", key, err)
	}
	return l.box.Posted(ctx, key, outbox.Post{At: info.At, Channel: info.Channel, TS: info.TS, Detail: detail})
}

func (l *ledger) Release(ctx context.Context, key string) error { return l.box.Release(ctx, key) }

func (l *ledger) Status(ctx context.Context, key string) (Status, error) {
	r, found, err := l.box.Lookup(ctx, key)
	switch {
	case err != nil:
		return Status{}, err
	case !found:
		return Status{State: StateNone}, nil
	case r.Posted == nil:
		return l.o.claimStatus(key, r.ClaimedAt, r.Claimant), nil
	}
	var d postDetail
	if len(r.Posted.Detail) > 0 {
		if err := json.Unmarshal(r.Posted.Detail, &d); err != nil {
			return Status{}, fmt.Errorf("digest ledger: %s: %w", key, err)
		}
	}
	p := r.Posted
	return Status{State: StatePosted, ClaimedAt: r.ClaimedAt, Info: PostInfo{
		At: p.At, Channel: p.Channel, TS: p.TS, Entries: d.Entries, Empty: d.Empty, Uncertain: d.Uncertain,
	}}, nil
}

// LedgerOptions are the settings of a ledger.
type LedgerOptions struct {
	// StaleAfter is how old an unfinished claim must be to count as the
	// claim of a dead process; 0 means DefaultStaleAfter.
	StaleAfter time.Duration
	// Now is the clock (nil: time.Now). Claims are stamped with it and
	// judged stale by it, so the processes sharing a ledger need clocks
	// that agree to well within StaleAfter.
	Now func() time.Time
	// Log receives the loud error about stale claims (nil: discarded).
	Log *slog.Logger
}

func (o LedgerOptions) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o LedgerOptions) log() *slog.Logger {
	if o.Log != nil {
		return o.Log
	}
	return slog.New(slog.DiscardHandler)
}

func (o LedgerOptions) staleAfter() time.Duration {
	if o.StaleAfter > 0 {
		return o.StaleAfter
	}
	return DefaultStaleAfter
}

// claimStatus is the Status of an unfinished claim made at claimedAt by
// claimant: stale when it is older than StaleAfter by Now, and then logged
// as an error naming key (the date, and which post) and the claimant.
func (o LedgerOptions) claimStatus(key string, claimedAt time.Time, claimant string) Status {
	st := Status{State: StateClaimed, ClaimedAt: claimedAt}
	if age := o.now().Sub(claimedAt); age > o.staleAfter() {
		st.Stale = true
		o.log().Error("digest: a claim was never completed, treating the date as posted; "+
			"the process that claimed it probably died mid-post, so check the channel and post by hand if the digest is missing",
			slog.String("key", key), slog.Time("claimed_at", claimedAt), slog.Duration("age", age.Round(time.Second)),
			slog.String("claimant", claimant))
	}
	return st
}

// State is where a date stands in the ledger.
type State int

const (
	StateNone    State = iota // never claimed, or released
	StateClaimed              // a post is under way (or its process died: see Status.Stale)
	StatePosted               // posted, or recorded as posted
)

func (s State) String() string {
	switch s {
	case StateNone:
		return "none"
	case StateClaimed:
		return "claimed"
	case StatePosted:
		return "posted"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// PostInfo is what the ledger keeps about a post.
type PostInfo struct {
	At      time.Time `json:"at"`
	Channel string    `json:"channel,omitempty"`
	TS      string    `json:"ts,omitempty"` // the (first) message's timestamp, when the publisher reports it
	Entries int       `json:"entries"`
	Empty   bool      `json:"empty,omitempty"` // nothing was booked; with SkipEmpty, no message was sent
	// Uncertain is set when the publisher could not tell whether the post
	// reached the channel; the date is recorded as posted all the same.
	Uncertain bool `json:"uncertain,omitempty"`
}

// Status is a date's entry in the ledger.
type Status struct {
	State     State
	ClaimedAt time.Time // when the date was claimed (StateClaimed, StatePosted)
	Info      PostInfo  // StatePosted only
	// Stale is set for a claim older than StaleAfter that was never
	// completed: its process most likely died mid-post. It is treated as
	// posted, so Claim refuses it.
	Stale bool
}

// Done reports whether the date must not be posted again: it was posted,
// or its claim is stale.
func (s Status) Done() bool { return s.State == StatePosted || s.Stale }

func dateKey(day time.Time) string { return day.Format(time.DateOnly) }

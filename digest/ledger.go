package digest

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// DefaultStaleAfter is how long a claim may stay unfinished before the
// ledger decides its process died mid-post and treats the date as posted.
// A Runner bounds each run well below it (runTimeout, then ledgerTimeout
// for recording the outcome), so a live run never holds a claim this long.
const DefaultStaleAfter = 10 * time.Minute

// Ledger records which dates were posted: it is what makes the digest
// exactly-once per date. A Runner claims a date before it posts and
// records the post after it, so that of all the processes sharing one
// ledger, one posts each date. The embedded store (store/bolt) keeps it
// in a file on one machine; store/pg's DigestLedger keeps it in PostgreSQL
// for replicas on several. Package ledgertest holds every implementation
// to this:
//
//   - A date is day's calendar date in day's own location.
//   - Claim returns true to exactly one caller among any number at once,
//     on any handle. A date stays claimed until it is released: a claim
//     that is never completed is not taken over by a later Claim.
//   - Once such a claim is older than StaleAfter by the ledger's clock,
//     Status reports it Stale (so Done), and the ledger logs an error: its
//     process most likely died mid-post, and may or may not have reached
//     Slack. A digest that arrives twice is worse than one missed once, so
//     the ledger does not retry the date; the log tells a person to check
//     the channel. Release still drops a stale claim (a Runner with a
//     Finder does so once the channel shows the digest is not there).
//   - Posted records the post on the date, keeping its claim's time (zero
//     when the date was not claimed); again, it replaces the record.
//   - Release drops a date's claim, so the date may be claimed again; on an
//     unclaimed date it does nothing; a posted date cannot be released: it
//     fails, and the date stays posted.
//   - The failure notice of a date (ClaimNotice, NoticePosted,
//     ReleaseNotice) is claimed, recorded and released the same way, apart
//     from the date's digest.
//   - What a handle records is there for every other handle, and after a
//     restart.
//   - With a context already done, every method fails with an error that
//     matches the context's error, and records nothing.
type Ledger interface {
	// Claim claims the date: true when this caller may post it, false when
	// it is claimed (stale or not) or posted.
	Claim(ctx context.Context, day time.Time) (bool, error)
	// Posted records that the date was posted, as info tells.
	Posted(ctx context.Context, day time.Time, info PostInfo) error
	// Release drops the date's claim after a post that certainly failed.
	Release(ctx context.Context, day time.Time) error
	// Status reports where the date stands.
	Status(ctx context.Context, day time.Time) (Status, error)

	// ClaimNotice claims the posting of the date's failure notice: true
	// when this caller may post it.
	ClaimNotice(ctx context.Context, day time.Time) (bool, error)
	// NoticePosted records that the date's failure notice was posted.
	NoticePosted(ctx context.Context, day time.Time, info PostInfo) error
	// ReleaseNotice drops the claim of the date's failure notice.
	ReleaseNotice(ctx context.Context, day time.Time) error
}

// LedgerOptions are the settings a ledger of either kind takes.
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

// ClaimStatus is the Status of an unfinished claim made at claimedAt, as
// every Ledger judges it: stale when it is older than StaleAfter by Now,
// and then logged as an error naming key (the date, and which post) and
// attrs (where the claim is kept, and who made it). Ledgers call it so
// that they judge and report alike.
func (o LedgerOptions) ClaimStatus(key string, claimedAt time.Time, attrs ...slog.Attr) Status {
	st := Status{State: StateClaimed, ClaimedAt: claimedAt}
	if age := o.now().Sub(claimedAt); age > o.staleAfter() {
		st.Stale = true
		args := []any{slog.String("key", key), slog.Time("claimed_at", claimedAt), slog.Duration("age", age.Round(time.Second))}
		for _, a := range attrs {
			args = append(args, a)
		}
		o.log().Error("digest: a claim was never completed, treating the date as posted; "+
			"the process that claimed it probably died mid-post, so check the channel and post by hand if the digest is missing",
			args...)
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

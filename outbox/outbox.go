// Package outbox is how bookbot posts a message exactly once: the digest,
// its failure notice, live notices, reminders, agendas. Whoever posts
// claims the message's key first, and records the post (or releases the
// claim) after; of all the processes and replicas sharing a Store, one
// posts each key. A claim that is never settled (its process died, or the
// answer to the post was lost) stays: the poster decides, from Slack's
// history (package bot's Find), whether the message is there.
//
// A key is a kind and a scope, then the message's own name, joined by
// slashes: "digest/2026-11-24", "digest-failure/2026-11-24", "notice/…",
// "personal/…". A later scope (a calendar of someone's own) is one more
// part of the key, so nothing here changes for it.
//
// The embedded store (store/bolt) and store/pg implement Store once each;
// outboxtest holds them to what this package says.
package outbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// Store keeps the claims and posts of every message posted exactly once.
//
//   - Claim returns true to exactly one caller among any number at once,
//     on any handle. A key stays claimed until it is released or pruned: a
//     claim that is never settled is not taken over by a later Claim.
//   - Posted records where the claimed key's message is; again, it
//     replaces the record. It fails when the key holds no claim (never
//     claimed, or pruned).
//   - Release drops a claim whose message certainly was not posted, so the
//     key may be claimed again; on a key that holds nothing it does
//     nothing; a posted key cannot be released: it fails, and the key stays
//     posted.
//   - Takeover claims afresh a key whose unsettled claim went stale: only
//     when the key still holds the unposted claim made at staleAt, in one
//     step with that check, so of all the replicas that saw the same stale
//     claim, one takes it over.
//   - Prune forgets the records under a prefix whose keep time is before
//     the cutoff; a pruned key can be claimed again.
//   - What a handle records is there for every other handle, and after a
//     restart.
//   - With a context already done, every method fails with an error that
//     matches the context's error, and records nothing.
type Store interface {
	// Claim claims key at at; keep is the time Prune counts from. It
	// returns false when key was claimed before, settled or not.
	Claim(ctx context.Context, key string, at, keep time.Time) (bool, error)
	// Posted records where key's message was posted.
	Posted(ctx context.Context, key string, p Post) error
	// Release drops key's claim after a post that certainly failed.
	Release(ctx context.Context, key string) error
	// Takeover re-claims key at at if it holds an unposted claim made at
	// staleAt (the Record.ClaimedAt its caller saw), keeping its keep
	// time. It returns false when the key holds anything else.
	Takeover(ctx context.Context, key string, staleAt, at time.Time) (bool, error)
	// Lookup returns key's record; ok is false when it holds none.
	Lookup(ctx context.Context, key string) (r Record, ok bool, err error)
	// Prune forgets the records of keys that begin with prefix whose keep
	// time is before cutoff (exactly cutoff is kept).
	Prune(ctx context.Context, prefix string, cutoff time.Time) error
}

// Post is where a message was posted, and what its poster keeps about it.
type Post struct {
	At      time.Time
	Channel string
	TS      string // the (first) message's timestamp, when known
	// Detail is the poster's own record of the post, JSON; nil: none.
	Detail json.RawMessage
}

// Record is a key's entry in a Store.
type Record struct {
	ClaimedAt time.Time
	Keep      time.Time
	// Claimant names the process that claimed the key (host and process
	// ID), for the log that tells a person about a claim never settled.
	Claimant string
	// Posted is nil while the claim is unsettled.
	Posted *Post
}

// Unsettled returns when key was claimed, if no post is recorded on its
// claim: a post whose answer never came, or one a process that died was
// making. ok is false when key holds no claim or a settled one.
func Unsettled(ctx context.Context, s Store, key string) (at time.Time, ok bool, err error) {
	r, found, err := s.Lookup(ctx, key)
	if err != nil || !found || r.Posted != nil {
		return time.Time{}, false, err
	}
	return r.ClaimedAt, true, nil
}

// Claimant names this process, for Record.Claimant.
func Claimant() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown host"
	}
	return fmt.Sprintf("%s pid %d", host, os.Getpid())
}

// CheckKey refuses a key no Store keeps: an empty one, or one without a
// kind ("kind/…").
func CheckKey(key string) error {
	if kind, _, ok := strings.Cut(key, "/"); !ok || kind == "" {
		return fmt.Errorf("outbox: key %q has no kind", key)
	}
	return nil
}

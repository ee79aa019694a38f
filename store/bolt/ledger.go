package bolt

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/bookbot/bookbot/digest"
	"github.com/bookbot/bookbot/internal/boltfile"
)

// Ledger is the digest's exactly-once ledger (digest.Ledger) in the store.
// A date is claimed in one transaction with the check that it holds
// nothing, so the processes sharing the file (`bookbot run` and a `bookbot
// digest` beside it) post each date once. It is safe for concurrent use.
type Ledger struct {
	o    digest.LedgerOptions
	file *boltfile.File
}

var _ digest.Ledger = (*Ledger)(nil)

// Ledger is the digest ledger, whose clock, staleness and log o sets.
func (db *DB) Ledger(o digest.LedgerOptions) *Ledger { return &Ledger{o: o, file: db.file} }

// ledgerRecord is a date's record: a claim while a post is under way, the
// post's once it is done. It is the format of the files of the ledger
// before this store, which the import copies.
type ledgerRecord struct {
	State     string           `json:"state"` // "claimed" or "posted"
	ClaimedAt time.Time        `json:"claimed_at,omitzero"`
	PID       int              `json:"pid,omitempty"` // the process that claimed it
	Posted    *digest.PostInfo `json:"posted,omitempty"`
}

const (
	stateClaimed = "claimed"
	statePosted  = "posted"
)

// dateKey is day's calendar date in day's own location; failureKey is its
// failure notice's.
func dateKey(day time.Time) string    { return day.Format(time.DateOnly) }
func failureKey(day time.Time) string { return dateKey(day) + ".failure" }

// Claim claims the date (see digest.Ledger).
func (l *Ledger) Claim(ctx context.Context, day time.Time) (bool, error) {
	return l.claim(ctx, dateKey(day))
}

// Posted records the date's post, keeping its claim's time.
func (l *Ledger) Posted(ctx context.Context, day time.Time, info digest.PostInfo) error {
	return l.posted(ctx, dateKey(day), info)
}

// Release drops the date's claim (see digest.Ledger).
func (l *Ledger) Release(ctx context.Context, day time.Time) error {
	return l.release(ctx, dateKey(day))
}

// Status reports where the date stands.
func (l *Ledger) Status(ctx context.Context, day time.Time) (digest.Status, error) {
	key := dateKey(day)
	var (
		rec   ledgerRecord
		found bool
	)
	err := l.file.View(ctx, func(tx *bbolt.Tx) (err error) {
		rec, found, err = getRecord(tx, key)
		return err
	})
	if err != nil {
		return digest.Status{}, err
	}
	return l.status(key, rec, found), nil
}

// ClaimNotice claims the date's failure notice.
func (l *Ledger) ClaimNotice(ctx context.Context, day time.Time) (bool, error) {
	return l.claim(ctx, failureKey(day))
}

// NoticePosted records the date's failure notice as posted.
func (l *Ledger) NoticePosted(ctx context.Context, day time.Time, info digest.PostInfo) error {
	return l.posted(ctx, failureKey(day), info)
}

// ReleaseNotice drops the claim of the date's failure notice.
func (l *Ledger) ReleaseNotice(ctx context.Context, day time.Time) error {
	return l.release(ctx, failureKey(day))
}

func (l *Ledger) claim(ctx context.Context, key string) (bool, error) {
	var (
		rec     ledgerRecord
		claimed bool
	)
	err := l.file.Update(ctx, func(tx *bbolt.Tx) error {
		var (
			found bool
			err   error
		)
		if rec, found, err = getRecord(tx, key); err != nil || found {
			return err
		}
		claimed = true
		return putRecord(tx, key, ledgerRecord{State: stateClaimed, ClaimedAt: l.now().UTC(), PID: os.Getpid()})
	})
	if err != nil || claimed {
		return claimed, err
	}
	l.status(key, rec, true) // logs a stale claim
	return false, nil
}

func (l *Ledger) posted(ctx context.Context, key string, info digest.PostInfo) error {
	return l.file.Update(ctx, func(tx *bbolt.Tx) error {
		old, _, err := getRecord(tx, key)
		if err != nil {
			return err
		}
		return putRecord(tx, key, ledgerRecord{State: statePosted, ClaimedAt: old.ClaimedAt, PID: old.PID, Posted: &info})
	})
}

func (l *Ledger) release(ctx context.Context, key string) error {
	return l.file.Update(ctx, func(tx *bbolt.Tx) error {
		rec, found, err := getRecord(tx, key)
		switch {
		case err != nil || !found:
			return err
		case rec.State == statePosted:
			return fmt.Errorf("digest ledger: %s was posted and cannot be released", key)
		}
		return tx.Bucket(digestLedger).Delete([]byte(key))
	})
}

// status is the Status of key's record; a stale claim is logged.
func (l *Ledger) status(key string, rec ledgerRecord, found bool) digest.Status {
	switch {
	case !found:
		return digest.Status{State: digest.StateNone}
	case rec.State == statePosted:
		st := digest.Status{State: digest.StatePosted, ClaimedAt: rec.ClaimedAt}
		if rec.Posted != nil {
			st.Info = *rec.Posted
		}
		return st
	}
	return l.o.ClaimStatus(key, rec.ClaimedAt, slog.Int("pid", rec.PID), slog.String("file", l.file.Path()))
}

func (l *Ledger) now() time.Time {
	if l.o.Now != nil {
		return l.o.Now()
	}
	return time.Now()
}

func getRecord(tx *bbolt.Tx, key string) (ledgerRecord, bool, error) {
	var rec ledgerRecord
	v := tx.Bucket(digestLedger).Get([]byte(key))
	if v == nil {
		return rec, false, nil
	}
	if err := json.Unmarshal(v, &rec); err != nil {
		return rec, true, fmt.Errorf("digest ledger: %s: %w", key, err)
	}
	return rec, true, nil
}

func putRecord(tx *bbolt.Tx, key string, rec ledgerRecord) error {
	v, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("digest ledger: %s: %w", key, err)
	}
	return tx.Bucket(digestLedger).Put([]byte(key), v)
}

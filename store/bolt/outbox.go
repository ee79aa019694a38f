package bolt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/bookbot/bookbot/internal/boltfile"
	"github.com/bookbot/bookbot/outbox"
)

// Outbox is the record of every message posted exactly once
// (outbox.Store) in the store: one bucket, keyed by the message's key. A
// key is claimed in one transaction with the check that it holds nothing,
// so the processes sharing the file (`bookbot run` and a `bookbot digest`
// beside it) post each key once. It is safe for concurrent use.
type Outbox struct {
	file     *boltfile.File
	claimant string
}

var _ outbox.Store = (*Outbox)(nil)

// Outbox is the outbox every exactly-once post is claimed in.
func (db *DB) Outbox() *Outbox { return &Outbox{file: db.file, claimant: outbox.Claimant()} }

// outboxRecord is a key's record as stored.
type outboxRecord struct {
	ClaimedAt time.Time   `json:"claimed_at"`
	Keep      time.Time   `json:"keep"`
	Claimant  string      `json:"claimant,omitempty"`
	Posted    *outboxPost `json:"posted,omitempty"`
}

// outboxPost is an outbox.Post as stored.
type outboxPost struct {
	At      time.Time       `json:"at"`
	Channel string          `json:"channel,omitempty"`
	TS      string          `json:"ts,omitempty"`
	Detail  json.RawMessage `json:"detail,omitempty"`
}

// Claim records the claim of key in one transaction with the check that
// the key holds nothing.
func (o *Outbox) Claim(ctx context.Context, key string, at, keep time.Time) (bool, error) {
	if err := outbox.CheckKey(key); err != nil {
		return false, err
	}
	v, err := json.Marshal(outboxRecord{ClaimedAt: at.UTC(), Keep: keep.UTC(), Claimant: o.claimant})
	if err != nil {
		return false, err
	}
	claimed := false
	err = o.file.Update(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(outboxBucket)
		if b.Get([]byte(key)) != nil {
			return nil
		}
		claimed = true
		return b.Put([]byte(key), v)
	})
	return claimed, err
}

// Posted records p on key's claim, replacing any post recorded before.
func (o *Outbox) Posted(ctx context.Context, key string, p outbox.Post) error {
	return o.file.Update(ctx, func(tx *bbolt.Tx) error {
		r, found, err := getOutbox(tx, key)
		switch {
		case err != nil:
			return err
		case !found:
			return fmt.Errorf("outbox: %s holds no claim", key)
		}
		r.Posted = &outboxPost{At: p.At.UTC(), Channel: p.Channel, TS: p.TS, Detail: p.Detail}
		return putOutbox(tx, key, r)
	})
}

// Release deletes key's claim unless a post was recorded on it.
func (o *Outbox) Release(ctx context.Context, key string) error {
	return o.file.Update(ctx, func(tx *bbolt.Tx) error {
		r, found, err := getOutbox(tx, key)
		switch {
		case err != nil || !found:
			return err
		case r.Posted != nil:
			return fmt.Errorf("outbox: %s was posted (%s %s) and cannot be released", key, r.Posted.Channel, r.Posted.TS)
		}
		return tx.Bucket(outboxBucket).Delete([]byte(key))
	})
}

// Takeover re-claims key, in one transaction with the check that it
// still holds the unposted claim made at staleAt.
func (o *Outbox) Takeover(ctx context.Context, key string, staleAt, at time.Time) (bool, error) {
	taken := false
	err := o.file.Update(ctx, func(tx *bbolt.Tx) error {
		r, found, err := getOutbox(tx, key)
		if err != nil || !found || r.Posted != nil || !r.ClaimedAt.Equal(staleAt) {
			return err
		}
		r.ClaimedAt, r.Claimant = at.UTC(), o.claimant
		taken = true
		return putOutbox(tx, key, r)
	})
	return taken, err
}

// Lookup returns key's record.
func (o *Outbox) Lookup(ctx context.Context, key string) (outbox.Record, bool, error) {
	var (
		r     outboxRecord
		found bool
	)
	err := o.file.View(ctx, func(tx *bbolt.Tx) (err error) {
		r, found, err = getOutbox(tx, key)
		return err
	})
	if err != nil || !found {
		return outbox.Record{}, false, err
	}
	rec := outbox.Record{ClaimedAt: r.ClaimedAt, Keep: r.Keep, Claimant: r.Claimant}
	if p := r.Posted; p != nil {
		rec.Posted = &outbox.Post{At: p.At, Channel: p.Channel, TS: p.TS, Detail: p.Detail}
	}
	return rec, true, nil
}

// Prune deletes the records under prefix whose keep time is before
// cutoff. It does not rewrite the file: the records hold keys, times and
// Slack message references.
func (o *Outbox) Prune(ctx context.Context, prefix string, cutoff time.Time) error {
	return o.file.Update(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(outboxBucket)
		var old [][]byte
		c := b.Cursor()
		for k, v := c.Seek([]byte(prefix)); k != nil && bytes.HasPrefix(k, []byte(prefix)); k, v = c.Next() {
			var r outboxRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("outbox: %q: %w", k, err)
			}
			if r.Keep.Before(cutoff) {
				old = append(old, bytes.Clone(k))
			}
		}
		for _, k := range old {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}

func getOutbox(tx *bbolt.Tx, key string) (outboxRecord, bool, error) {
	var r outboxRecord
	b := tx.Bucket(outboxBucket)
	if b == nil { // a file of the format before the outbox, read-only
		return r, false, nil
	}
	v := b.Get([]byte(key))
	if v == nil {
		return r, false, nil
	}
	if err := json.Unmarshal(v, &r); err != nil {
		return r, true, fmt.Errorf("outbox: %s: %w", key, err)
	}
	return r, true, nil
}

func putOutbox(tx *bbolt.Tx, key string, r outboxRecord) error {
	v, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("outbox: %s: %w", key, err)
	}
	return tx.Bucket(outboxBucket).Put([]byte(key), v)
}

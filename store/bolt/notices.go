package bolt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/bookbot/bookbot/internal/boltfile"
	"github.com/bookbot/bookbot/notices"
)

// lastKey is the saved snapshot's key in noticesLast.
var lastKey = []byte("last")

// Notices is what the notices watcher keeps (notices.Store) in the store:
// the snapshot and the bookings' threads in buckets of their own, the
// claims in the outbox. It is safe for concurrent use.
//
// Prune deletes records but does not rewrite the file: the records hold
// booking IDs, times and Slack message references, and the snapshot
// (which holds attendee names and emails) is replaced by every SaveLast.
type Notices struct {
	notices.Claims
	file *boltfile.File
}

var _ notices.Store = (*Notices)(nil)

// Notices is the notices' record.
func (db *DB) Notices() *Notices {
	return &Notices{Claims: notices.Claims{Box: db.Outbox()}, file: db.file}
}

// Last returns the snapshot saved last; ok is false before the first. Its
// times are the saved instants, without their zone names or monotonic
// readings.
func (s *Notices) Last(ctx context.Context) (notices.Snapshot, bool, error) {
	var (
		snap notices.Snapshot
		ok   bool
	)
	err := s.file.View(ctx, func(tx *bbolt.Tx) error {
		v := tx.Bucket(noticesLast).Get(lastKey)
		if v == nil {
			return nil
		}
		var err error
		if snap, err = notices.DecodeSnapshot(v); err != nil {
			return fmt.Errorf("saved snapshot: %w", err)
		}
		ok = true
		return nil
	})
	if err != nil {
		return notices.Snapshot{}, false, err
	}
	return snap, ok, nil
}

// SaveLast replaces the saved snapshot.
func (s *Notices) SaveLast(ctx context.Context, snap notices.Snapshot) error {
	v, err := notices.EncodeSnapshot(snap)
	if err != nil {
		return fmt.Errorf("bookbot store %s: notices snapshot: %w", s.file.Path(), err)
	}
	return s.file.Update(ctx, func(tx *bbolt.Tx) error {
		return tx.Bucket(noticesLast).Put(lastKey, v)
	})
}

// noticeThread is a booking's thread as stored: its root message and the
// booking's end, for pruning.
type noticeThread struct {
	notices.Message
	End time.Time `json:"end"`
}

// Posted records m on k's claim; it fails when k holds no claim (never
// claimed, or pruned). With root set m becomes the booking's thread,
// replacing any it had: the caller decides when a notice starts a new
// thread. Without it the booking's thread, if any, stays.
func (s *Notices) Posted(ctx context.Context, k notices.Key, m notices.Message, root bool) error {
	if err := s.PostedClaim(ctx, k, m); err != nil {
		return err
	}
	return s.file.Update(ctx, func(tx *bbolt.Tx) error {
		threads := tx.Bucket(noticesThreads)
		id := []byte(k.BookingID)
		var th noticeThread
		if v := threads.Get(id); v != nil {
			if err := json.Unmarshal(v, &th); err != nil {
				return fmt.Errorf("thread of booking %q: %w", k.BookingID, err)
			}
		} else if !root {
			return nil
		}
		if root {
			th.Message = m
		}
		if k.End.After(th.End) {
			th.End = k.End
		}
		v, err := json.Marshal(th)
		if err != nil {
			return err
		}
		return threads.Put(id, v)
	})
}

// Thread returns the booking's thread; ok is false when none was recorded.
func (s *Notices) Thread(ctx context.Context, bookingID string) (notices.Message, bool, error) {
	var (
		th noticeThread
		ok bool
	)
	err := s.file.View(ctx, func(tx *bbolt.Tx) error {
		v := tx.Bucket(noticesThreads).Get([]byte(bookingID))
		if v == nil {
			return nil
		}
		if err := json.Unmarshal(v, &th); err != nil {
			return fmt.Errorf("thread of booking %q: %w", bookingID, err)
		}
		ok = true
		return nil
	})
	if err != nil || !ok {
		return notices.Message{}, false, err
	}
	return th.Message, true, nil
}

// Prune deletes the claims of keys that ended before cutoff, and the
// thread of every booking whose latest end posted in it is before cutoff
// (an end of exactly cutoff is kept). A pruned key can be claimed again.
func (s *Notices) Prune(ctx context.Context, cutoff time.Time) error {
	if err := s.PruneClaims(ctx, cutoff); err != nil {
		return err
	}
	return s.file.Update(ctx, func(tx *bbolt.Tx) error {
		threads := tx.Bucket(noticesThreads)
		var ended [][]byte
		err := threads.ForEach(func(k, v []byte) error {
			var th noticeThread
			if err := json.Unmarshal(v, &th); err != nil {
				return fmt.Errorf("thread of booking %q: %w", k, err)
			}
			if th.End.Before(cutoff) {
				ended = append(ended, bytes.Clone(k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, id := range ended {
			if err := threads.Delete(id); err != nil {
				return err
			}
		}
		return nil
	})
}

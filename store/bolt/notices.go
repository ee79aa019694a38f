package bolt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/bookbot/bookbot/internal/boltfile"
	"github.com/bookbot/bookbot/notices"
)

// lastKey is the saved snapshot's key in noticesLast.
var lastKey = []byte("last")

// errNotClaimed means Posted was given a key that holds no claim: never
// claimed, or pruned.
var errNotClaimed = errors.New("no claim of the notice")

// Notices is what the notices watcher keeps (notices.Store) in the store.
// It is safe for concurrent use.
//
// Prune deletes records but does not rewrite the file: the records hold
// booking IDs, times and Slack message references, and the snapshot
// (which holds attendee names and emails) is replaced by every SaveLast.
type Notices struct {
	file *boltfile.File
}

var _ notices.Store = (*Notices)(nil)

// Notices is the notices' record.
func (db *DB) Notices() *Notices { return &Notices{file: db.file} }

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

// noticeClaim is a claim as stored.
type noticeClaim struct {
	At        time.Time        `json:"at"` // when it was claimed
	BookingID string           `json:"booking_id"`
	Kind      notices.Kind     `json:"kind"`
	Start     time.Time        `json:"start"`
	End       time.Time        `json:"end"`
	Since     time.Time        `json:"since"`
	Message   *notices.Message `json:"message,omitempty"` // where the notice was posted
}

// noticeThread is a booking's thread as stored: its root message and the
// booking's end, for pruning.
type noticeThread struct {
	notices.Message
	End time.Time `json:"end"`
}

// Claim records the claim of k's change, made at at, in one transaction
// with the check that it was not claimed before. The claim keeps k.End, for
// Prune; a key is the same claim whatever its End.
func (s *Notices) Claim(ctx context.Context, k notices.Key, at time.Time) (bool, error) {
	ck := k.Bytes()
	v, err := json.Marshal(noticeClaim{At: at, BookingID: k.BookingID, Kind: k.Kind, Start: k.Start, End: k.End, Since: k.Since})
	if err != nil {
		return false, fmt.Errorf("bookbot store %s: notice claim: %w", s.file.Path(), err)
	}
	claimed := false
	err = s.file.Update(ctx, func(tx *bbolt.Tx) error {
		claims := tx.Bucket(noticesClaims)
		if claims.Get(ck) != nil {
			return nil
		}
		claimed = true
		return claims.Put(ck, v)
	})
	if err != nil {
		return false, err
	}
	return claimed, nil
}

// Posted records m on k's claim; it fails when k holds no claim (never
// claimed, or pruned). With root set m becomes the booking's thread,
// replacing any it had: the caller decides when a notice starts a new
// thread. Without it the booking's thread, if any, stays.
func (s *Notices) Posted(ctx context.Context, k notices.Key, m notices.Message, root bool) error {
	ck := k.Bytes()
	return s.file.Update(ctx, func(tx *bbolt.Tx) error {
		claims := tx.Bucket(noticesClaims)
		v := claims.Get(ck)
		if v == nil {
			return fmt.Errorf("%w: %s", errNotClaimed, k)
		}
		var c noticeClaim
		if err := json.Unmarshal(v, &c); err != nil {
			return fmt.Errorf("claim of the %s: %w", k, err)
		}
		c.Message = &m
		v, err := json.Marshal(c)
		if err != nil {
			return err
		}
		if err := claims.Put(ck, v); err != nil {
			return err
		}

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
		v, err = json.Marshal(th)
		if err != nil {
			return err
		}
		return threads.Put(id, v)
	})
}

// Release withdraws k's claim, when its notice certainly was not posted
// (notices.ErrNotPosted), so that the change can be claimed and tried again. A
// claim that Posted recorded a message on is kept, and Release fails:
// the notice is in Slack. Releasing a key that holds no claim does
// nothing.
func (s *Notices) Release(ctx context.Context, k notices.Key) error {
	ck := k.Bytes()
	return s.file.Update(ctx, func(tx *bbolt.Tx) error {
		claims := tx.Bucket(noticesClaims)
		v := claims.Get(ck)
		if v == nil {
			return nil
		}
		var c noticeClaim
		if err := json.Unmarshal(v, &c); err != nil {
			return fmt.Errorf("claim of the %s: %w", k, err)
		}
		if c.Message != nil {
			return fmt.Errorf("the %s was posted (%s %s): its claim stays", k, c.Message.Channel, c.Message.TS)
		}
		return claims.Delete(ck)
	})
}

// Unsettled returns when k was claimed, if no message is recorded on its
// claim.
func (s *Notices) Unsettled(ctx context.Context, k notices.Key) (time.Time, bool, error) {
	var c noticeClaim
	found := false
	err := s.file.View(ctx, func(tx *bbolt.Tx) error {
		v := tx.Bucket(noticesClaims).Get(k.Bytes())
		if v == nil {
			return nil
		}
		found = true
		if err := json.Unmarshal(v, &c); err != nil {
			return fmt.Errorf("claim of the %s: %w", k, err)
		}
		return nil
	})
	if err != nil || !found || c.Message != nil {
		return time.Time{}, false, err
	}
	return c.At, true, nil
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

// Prune deletes the claims and the thread of every booking that ended
// before cutoff (an end of exactly cutoff is kept). A booking's end is the
// latest End among its claims' keys and the keys its thread was posted
// under, so a booking moved later keeps all it had until its new end. A
// pruned key can be claimed again.
func (s *Notices) Prune(ctx context.Context, cutoff time.Time) error {
	return s.file.Update(ctx, func(tx *bbolt.Tx) error {
		claims, threads := tx.Bucket(noticesClaims), tx.Bucket(noticesThreads)
		ends := map[string]time.Time{} // booking ID → its end
		later := func(id string, end time.Time) {
			if e, ok := ends[id]; !ok || end.After(e) {
				ends[id] = end
			}
		}
		type claim struct {
			key       []byte
			bookingID string
		}
		var all []claim
		err := claims.ForEach(func(k, v []byte) error {
			var c noticeClaim
			if err := json.Unmarshal(v, &c); err != nil {
				return fmt.Errorf("claim %x: %w", k, err)
			}
			later(c.BookingID, c.End)
			all = append(all, claim{bytes.Clone(k), c.BookingID})
			return nil
		})
		if err != nil {
			return err
		}
		err = threads.ForEach(func(k, v []byte) error {
			var th noticeThread
			if err := json.Unmarshal(v, &th); err != nil {
				return fmt.Errorf("thread of booking %q: %w", k, err)
			}
			later(string(k), th.End)
			return nil
		})
		if err != nil {
			return err
		}

		for _, c := range all {
			if ends[c.bookingID].Before(cutoff) {
				if err := claims.Delete(c.key); err != nil {
					return err
				}
			}
		}
		for id, end := range ends {
			if end.Before(cutoff) {
				if err := threads.Delete([]byte(id)); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

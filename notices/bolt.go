package notices

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/bookbot/bookbot/internal/boltfile"
)

// BoltFileName is the embedded store's file under the state directory.
const BoltFileName = "notices.db"

var (
	// lastBucket holds the saved snapshot, under lastKey.
	lastBucket = []byte("last")
	// claimsBucket maps a key's identity (Key.bytes) to its claimRecord.
	claimsBucket = []byte("claims")
	// threadsBucket maps a booking ID to its threadRecord.
	threadsBucket = []byte("threads")

	lastKey = []byte("last")
)

// boltVersion is the format of the files OpenBolt writes. A file of a
// newer one is refused: its format is unknown here.
const boltVersion = 1

// errNotClaimed means Posted was given a key that holds no claim: never
// claimed, or pruned.
var errNotClaimed = errors.New("no claim of the notice")

// BoltStore is the Store in one bbolt file. The file is opened for each
// operation and closed again, so that other bookbot commands can read it
// while `bookbot run` serves; another process's hold on it is waited for
// up to 5 seconds. A BoltStore is safe for concurrent use, and the
// BoltStores of one file in a process take turns rather than contend for
// the file's lock.
//
// Prune deletes records but does not rewrite the file: the records hold
// booking IDs, times and Slack message references, and the snapshot
// (which holds attendee names and emails) is replaced by every SaveLast.
type BoltStore struct {
	file *boltfile.File
}

var _ Store = (*BoltStore)(nil)

// OpenBolt opens the store in the file at path, creating the file (mode
// 0600) and its directory when missing. A file of a newer format than this
// bookbot knows is refused.
func OpenBolt(path string) (*BoltStore, error) {
	f, err := boltfile.Open(path, "notices", boltVersion, lastBucket, claimsBucket, threadsBucket)
	if err != nil {
		return nil, err
	}
	return &BoltStore{file: f}, nil
}

// Path is the store's file.
func (s *BoltStore) Path() string { return s.file.Path() }

// Last returns the snapshot saved last; ok is false before the first. Its
// times are the saved instants, without their zone names or monotonic
// readings.
func (s *BoltStore) Last(ctx context.Context) (Snapshot, bool, error) {
	var (
		snap Snapshot
		ok   bool
	)
	err := s.file.View(ctx, func(tx *bolt.Tx) error {
		v := tx.Bucket(lastBucket).Get(lastKey)
		if v == nil {
			return nil
		}
		var err error
		if snap, err = DecodeSnapshot(v); err != nil {
			return fmt.Errorf("saved snapshot: %w", err)
		}
		ok = true
		return nil
	})
	if err != nil {
		return Snapshot{}, false, err
	}
	return snap, ok, nil
}

// SaveLast replaces the saved snapshot.
func (s *BoltStore) SaveLast(ctx context.Context, snap Snapshot) error {
	v, err := EncodeSnapshot(snap)
	if err != nil {
		return fmt.Errorf("notices store %s: snapshot: %w", s.file.Path(), err)
	}
	return s.file.Update(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(lastBucket).Put(lastKey, v)
	})
}

// claimRecord is a claim as stored.
type claimRecord struct {
	At        time.Time `json:"at"` // when it was claimed
	BookingID string    `json:"booking_id"`
	Kind      Kind      `json:"kind"`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	Since     time.Time `json:"since"`
	Message   *Message  `json:"message,omitempty"` // where the notice was posted
}

// threadRecord is a booking's thread as stored: its root message and the
// booking's end, for pruning.
type threadRecord struct {
	Message
	End time.Time `json:"end"`
}

// Claim records the claim of k's change, made at at, in one transaction
// with the check that it was not claimed before. The claim keeps k.End, for
// Prune; a key is the same claim whatever its End.
func (s *BoltStore) Claim(ctx context.Context, k Key, at time.Time) (bool, error) {
	ck := k.Bytes()
	v, err := json.Marshal(claimRecord{At: at, BookingID: k.BookingID, Kind: k.Kind, Start: k.Start, End: k.End, Since: k.Since})
	if err != nil {
		return false, fmt.Errorf("notices store %s: claim: %w", s.file.Path(), err)
	}
	claimed := false
	err = s.file.Update(ctx, func(tx *bolt.Tx) error {
		claims := tx.Bucket(claimsBucket)
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
func (s *BoltStore) Posted(ctx context.Context, k Key, m Message, root bool) error {
	ck := k.Bytes()
	return s.file.Update(ctx, func(tx *bolt.Tx) error {
		claims := tx.Bucket(claimsBucket)
		v := claims.Get(ck)
		if v == nil {
			return fmt.Errorf("%w: %s", errNotClaimed, k)
		}
		var c claimRecord
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

		threads := tx.Bucket(threadsBucket)
		id := []byte(k.BookingID)
		var th threadRecord
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
// (ErrNotPosted), so that the change can be claimed and tried again. A
// claim that Posted recorded a message on is kept, and Release fails:
// the notice is in Slack. Releasing a key that holds no claim does
// nothing.
func (s *BoltStore) Release(ctx context.Context, k Key) error {
	ck := k.Bytes()
	return s.file.Update(ctx, func(tx *bolt.Tx) error {
		claims := tx.Bucket(claimsBucket)
		v := claims.Get(ck)
		if v == nil {
			return nil
		}
		var c claimRecord
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
func (s *BoltStore) Unsettled(ctx context.Context, k Key) (time.Time, bool, error) {
	var c claimRecord
	found := false
	err := s.file.View(ctx, func(tx *bolt.Tx) error {
		v := tx.Bucket(claimsBucket).Get(k.Bytes())
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
func (s *BoltStore) Thread(ctx context.Context, bookingID string) (Message, bool, error) {
	var (
		th threadRecord
		ok bool
	)
	err := s.file.View(ctx, func(tx *bolt.Tx) error {
		v := tx.Bucket(threadsBucket).Get([]byte(bookingID))
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
		return Message{}, false, err
	}
	return th.Message, true, nil
}

// Prune deletes the claims and the thread of every booking that ended
// before cutoff (an end of exactly cutoff is kept). A booking's end is the
// latest End among its claims' keys and the keys its thread was posted
// under, so a booking moved later keeps all it had until its new end. A
// pruned key can be claimed again.
func (s *BoltStore) Prune(ctx context.Context, cutoff time.Time) error {
	return s.file.Update(ctx, func(tx *bolt.Tx) error {
		claims, threads := tx.Bucket(claimsBucket), tx.Bucket(threadsBucket)
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
			var c claimRecord
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
			var th threadRecord
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

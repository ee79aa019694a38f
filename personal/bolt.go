package personal

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// BoltFileName is the embedded store's file under the state directory.
const BoltFileName = "personal.db"

var (
	// metaBucket holds the file's format version.
	metaBucket = []byte("meta")
	// settingsBucket maps a Slack user ID to its wireSettings.
	settingsBucket = []byte("settings")
	// claimsBucket maps a claim's key (ReminderKey, AgendaKey) to its
	// claimRecord.
	claimsBucket = []byte("claims")

	versionKey = []byte("version")
)

// boltVersion is the format of the files OpenBolt writes. A file of a
// newer one is refused: its format is unknown here.
const boltVersion = 1

// boltLockWait bounds the wait for another process's hold on the file;
// bookbot holds it for milliseconds at a time.
const boltLockWait = 5 * time.Second

// BoltStore is the Store in one bbolt file. The file is opened for each
// operation and closed again, so that other bookbot commands can read it
// while `bookbot run` serves; another process's hold on it is waited for
// up to 5 seconds. A BoltStore is safe for concurrent use, and the
// BoltStores of one file in a process take turns rather than contend for
// the file's lock.
//
// The file keeps each person's settings and, for each reminder and agenda
// sent, its key (which holds the Slack user ID, and a booking ID and start
// or a date) and when it was claimed. Prune deletes claims but does not
// rewrite the file.
type BoltStore struct {
	path string
	turn chan struct{} // this process's turn at the file; shared by path
}

var _ Store = (*BoltStore)(nil)

// turns holds a turn (a chan struct{} of capacity 1) for each file opened
// in this process, by absolute path.
var turns sync.Map

// OpenBolt opens the store in the file at path, creating the file (mode
// 0600) and its directory (0700) when missing. A file of a newer format
// than this bookbot knows is refused.
func OpenBolt(path string) (*BoltStore, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("personal store %s: %w", path, err)
	}
	turn, _ := turns.LoadOrStore(abs, make(chan struct{}, 1))
	s := &BoltStore{path: path, turn: turn.(chan struct{})}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("personal store %s: %w", path, err)
	}
	err = s.do(context.Background(), true, false, func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(metaBucket)
		if err != nil {
			return err
		}
		if meta.Get(versionKey) == nil {
			if err := meta.Put(versionKey, binary.BigEndian.AppendUint64(nil, boltVersion)); err != nil {
				return err
			}
		}
		if err := checkVersion(tx); err != nil {
			return err
		}
		for _, name := range [][]byte{settingsBucket, claimsBucket} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Path is the store's file.
func (s *BoltStore) Path() string { return s.path }

// checkVersion fails unless the file is of a format this bookbot knows.
func checkVersion(tx *bolt.Tx) error {
	meta := tx.Bucket(metaBucket)
	if meta == nil {
		return errors.New("not a personal store (no meta bucket): was the file replaced?")
	}
	v := meta.Get(versionKey)
	if len(v) != 8 {
		return errors.New("not a personal store (no format version)")
	}
	if n := binary.BigEndian.Uint64(v); n > boltVersion {
		return fmt.Errorf("format version %d is newer than this bookbot knows (%d): it was written by a newer bookbot", n, boltVersion)
	}
	return nil
}

// do opens the file, runs fn in one transaction (read-write when write is
// set) and closes the file. With check set the file's version is checked
// first.
func (s *BoltStore) do(ctx context.Context, write, check bool, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("personal store %s: %w", s.path, err)
	}
	select {
	case s.turn <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("personal store %s: %w", s.path, ctx.Err())
	}
	defer func() { <-s.turn }()
	// Both cases may have been ready; the select picks either.
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("personal store %s: %w", s.path, err)
	}

	db, err := bolt.Open(s.path, 0o600, &bolt.Options{Timeout: boltLockWait, ReadOnly: !write})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return fmt.Errorf("personal store %s: another process held the file for over %v: %w", s.path, boltLockWait, err)
	}
	if err != nil {
		return fmt.Errorf("personal store %s: %w", s.path, err)
	}
	run := func(tx *bolt.Tx) error {
		if check {
			if err := checkVersion(tx); err != nil {
				return err
			}
		}
		return fn(tx)
	}
	if write {
		err = db.Update(run)
	} else {
		err = db.View(run)
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("personal store %s: %w", s.path, err)
	}
	return nil
}

func (s *BoltStore) view(ctx context.Context, fn func(*bolt.Tx) error) error {
	return s.do(ctx, false, true, fn)
}

func (s *BoltStore) update(ctx context.Context, fn func(*bolt.Tx) error) error {
	return s.do(ctx, true, true, fn)
}

// wireSettings are Settings as stored. They convert to and from Settings,
// so a field added there fails to compile here rather than go unsaved, and
// the file's format does not follow Settings' JSON tags.
type wireSettings struct {
	Remind  time.Duration `json:"remind_ns,omitempty"`
	Agenda  *wireAgenda   `json:"agenda,omitempty"`
	Updated time.Time     `json:"updated,omitzero"`
}

// wireAgenda is an Agenda as stored.
type wireAgenda struct {
	Minute   int  `json:"minute"`
	Weekdays bool `json:"weekdays,omitempty"`
}

func toWire(s Settings) wireSettings {
	w := wireSettings{Remind: s.Remind, Updated: s.Updated}
	if s.Agenda != nil {
		a := wireAgenda(*s.Agenda)
		w.Agenda = &a
	}
	return w
}

func fromWire(w wireSettings) Settings {
	s := Settings{Remind: w.Remind, Updated: w.Updated}
	if w.Agenda != nil {
		a := Agenda(*w.Agenda)
		s.Agenda = &a
	}
	return s
}

// errNoUser is the error for an empty user ID: bbolt keys are not empty.
var errNoUser = errors.New("no user ID")

// Settings returns the user's settings; ok is false when none were saved.
// Updated is the saved instant, without its zone name or monotonic
// reading.
func (s *BoltStore) Settings(ctx context.Context, user string) (Settings, bool, error) {
	var (
		got Settings
		ok  bool
	)
	err := s.view(ctx, func(tx *bolt.Tx) error {
		if user == "" {
			return errNoUser
		}
		v := tx.Bucket(settingsBucket).Get([]byte(user))
		if v == nil {
			return nil
		}
		var w wireSettings
		if err := json.Unmarshal(v, &w); err != nil {
			return fmt.Errorf("settings of %q: %w", user, err)
		}
		got, ok = fromWire(w), true
		return nil
	})
	if err != nil {
		return Settings{}, false, err
	}
	return got, ok, nil
}

// SaveSettings replaces the user's settings; the zero value (everything
// off) is saved too.
func (s *BoltStore) SaveSettings(ctx context.Context, user string, set Settings) error {
	v, err := json.Marshal(toWire(set))
	if err != nil {
		return fmt.Errorf("personal store %s: settings of %q: %w", s.path, user, err)
	}
	return s.update(ctx, func(tx *bolt.Tx) error {
		if user == "" {
			return errNoUser
		}
		return tx.Bucket(settingsBucket).Put([]byte(user), v)
	})
}

// AllSettings returns everyone's saved settings, by Slack user ID, in a
// map of the caller's own: never nil.
func (s *BoltStore) AllSettings(ctx context.Context) (map[string]Settings, error) {
	all := map[string]Settings{}
	err := s.view(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(settingsBucket).ForEach(func(k, v []byte) error {
			var w wireSettings
			if err := json.Unmarshal(v, &w); err != nil {
				return fmt.Errorf("settings of %q: %w", k, err)
			}
			all[string(k)] = fromWire(w)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return all, nil
}

// claimRecord is a claim as stored.
type claimRecord struct {
	At time.Time `json:"at"` // when it was claimed
}

// errNoKey is the error for an empty claim key.
var errNoKey = errors.New("no claim key")

// Claim records the claim of key, made at at, in one transaction with the
// check that it was not claimed before.
func (s *BoltStore) Claim(ctx context.Context, key string, at time.Time) (bool, error) {
	v, err := json.Marshal(claimRecord{At: at})
	if err != nil {
		return false, fmt.Errorf("personal store %s: claim: %w", s.path, err)
	}
	claimed := false
	err = s.update(ctx, func(tx *bolt.Tx) error {
		if key == "" {
			return errNoKey
		}
		claims := tx.Bucket(claimsBucket)
		if claims.Get([]byte(key)) != nil {
			return nil
		}
		claimed = true
		return claims.Put([]byte(key), v)
	})
	if err != nil {
		return false, err
	}
	return claimed, nil
}

// Release withdraws key's claim, so it can be claimed again. Releasing a
// key that holds no claim does nothing.
func (s *BoltStore) Release(ctx context.Context, key string) error {
	return s.update(ctx, func(tx *bolt.Tx) error {
		if key == "" {
			return nil
		}
		return tx.Bucket(claimsBucket).Delete([]byte(key))
	})
}

// Prune deletes the claims made before cutoff (one made at exactly cutoff
// is kept). A pruned key can be claimed again.
func (s *BoltStore) Prune(ctx context.Context, cutoff time.Time) error {
	return s.update(ctx, func(tx *bolt.Tx) error {
		claims := tx.Bucket(claimsBucket)
		var old [][]byte
		err := claims.ForEach(func(k, v []byte) error {
			var r claimRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("claim %q: %w", k, err)
			}
			if r.At.Before(cutoff) {
				old = append(old, bytes.Clone(k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range old {
			if err := claims.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}

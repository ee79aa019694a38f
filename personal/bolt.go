package personal

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
const BoltFileName = "personal.db"

var (
	// settingsBucket maps a Slack user ID to its wireSettings.
	settingsBucket = []byte("settings")
	// claimsBucket maps a claim's key (ReminderKey, AgendaKey) to its
	// claimRecord.
	claimsBucket = []byte("claims")
)

// boltVersion is the format of the files OpenBolt writes. A file of a
// newer one is refused: its format is unknown here.
const boltVersion = 1

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
	file *boltfile.File
}

var _ Store = (*BoltStore)(nil)

// OpenBolt opens the store in the file at path, creating the file (mode
// 0600) and its directory (0700) when missing. A file of a newer format
// than this bookbot knows is refused.
func OpenBolt(path string) (*BoltStore, error) {
	f, err := boltfile.Open(path, "personal", boltVersion, settingsBucket, claimsBucket)
	if err != nil {
		return nil, err
	}
	return &BoltStore{file: f}, nil
}

// Path is the store's file.
func (s *BoltStore) Path() string { return s.file.Path() }

// wireSettings are Settings as stored. They convert to and from Settings,
// so a field added there fails to compile here rather than go unsaved.
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
	err := s.file.View(ctx, func(tx *bolt.Tx) error {
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
		return fmt.Errorf("personal store %s: settings of %q: %w", s.file.Path(), user, err)
	}
	return s.file.Update(ctx, func(tx *bolt.Tx) error {
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
	err := s.file.View(ctx, func(tx *bolt.Tx) error {
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
		return false, fmt.Errorf("personal store %s: claim: %w", s.file.Path(), err)
	}
	claimed := false
	err = s.file.Update(ctx, func(tx *bolt.Tx) error {
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
	return s.file.Update(ctx, func(tx *bolt.Tx) error {
		if key == "" {
			return nil
		}
		return tx.Bucket(claimsBucket).Delete([]byte(key))
	})
}

// Prune deletes the claims made before cutoff (one made at exactly cutoff
// is kept). A pruned key can be claimed again.
func (s *BoltStore) Prune(ctx context.Context, cutoff time.Time) error {
	return s.file.Update(ctx, func(tx *bolt.Tx) error {
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

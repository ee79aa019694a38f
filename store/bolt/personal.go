package bolt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/bookbot/bookbot/internal/boltfile"
	"github.com/bookbot/bookbot/personal"
)

// Personal is everyone's reminder and agenda settings and the record of
// what was sent (personal.Store) in the store. It is safe for concurrent
// use.
//
// It keeps each person's settings in a bucket of its own and, in the
// outbox, for each reminder and agenda sent, its key (which holds the Slack
// user ID, and a booking ID and start or a date) and when it was claimed.
// Prune deletes claims but does not rewrite the file.
type Personal struct {
	personal.Claims
	file *boltfile.File
}

var _ personal.Store = (*Personal)(nil)

// Personal is the reminder and agenda settings.
func (db *DB) Personal() *Personal {
	return &Personal{Claims: personal.Claims{Box: db.Outbox()}, file: db.file}
}

// wireSettings are personal.Settings as stored. They convert to and from them,
// so a field added there fails to compile here rather than go unsaved.
type wireSettings struct {
	Remind  time.Duration `json:"remind_ns,omitempty"`
	Agenda  *wireAgenda   `json:"agenda,omitempty"`
	Updated time.Time     `json:"updated,omitzero"`
}

// wireAgenda is a personal.Agenda as stored.
type wireAgenda struct {
	Minute   int  `json:"minute"`
	Weekdays bool `json:"weekdays,omitempty"`
}

func toWire(s personal.Settings) wireSettings {
	w := wireSettings{Remind: s.Remind, Updated: s.Updated}
	if s.Agenda != nil {
		a := wireAgenda(*s.Agenda)
		w.Agenda = &a
	}
	return w
}

func fromWire(w wireSettings) personal.Settings {
	s := personal.Settings{Remind: w.Remind, Updated: w.Updated}
	if w.Agenda != nil {
		a := personal.Agenda(*w.Agenda)
		s.Agenda = &a
	}
	return s
}

// errNoUser is the error for an empty user ID: bbolt keys are not empty.
var errNoUser = errors.New("no user ID")

// Settings returns the user's settings; ok is false when none were saved.
// Updated is the saved instant, without its zone name or monotonic
// reading.
func (s *Personal) Settings(ctx context.Context, user string) (personal.Settings, bool, error) {
	var (
		got personal.Settings
		ok  bool
	)
	err := s.file.View(ctx, func(tx *bbolt.Tx) error {
		if user == "" {
			return errNoUser
		}
		v := tx.Bucket(personalSettings).Get([]byte(user))
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
		return personal.Settings{}, false, err
	}
	return got, ok, nil
}

// SaveSettings replaces the user's settings; the zero value (everything
// off) is saved too.
func (s *Personal) SaveSettings(ctx context.Context, user string, set personal.Settings) error {
	v, err := json.Marshal(toWire(set))
	if err != nil {
		return fmt.Errorf("bookbot store %s: settings of %q: %w", s.file.Path(), user, err)
	}
	return s.file.Update(ctx, func(tx *bbolt.Tx) error {
		if user == "" {
			return errNoUser
		}
		return tx.Bucket(personalSettings).Put([]byte(user), v)
	})
}

// AllSettings returns everyone's saved settings, by Slack user ID, in a
// map of the caller's own: never nil.
func (s *Personal) AllSettings(ctx context.Context) (map[string]personal.Settings, error) {
	all := map[string]personal.Settings{}
	err := s.file.View(ctx, func(tx *bbolt.Tx) error {
		return tx.Bucket(personalSettings).ForEach(func(k, v []byte) error {
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

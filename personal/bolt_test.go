package personal_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/bookbot/bookbot/personal"
	"github.com/bookbot/bookbot/personal/personaltest"
)

func TestBoltStore(t *testing.T) {
	t.Parallel()
	personaltest.Run(t, func(t *testing.T) func() personal.Store {
		path := filepath.Join(t.TempDir(), personal.BoltFileName)
		return func() personal.Store { return openBolt(t, path) }
	})
}

func openBolt(t *testing.T, path string) *personal.BoltStore {
	t.Helper()
	s, err := personal.OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var (
	start    = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	key      = personal.ReminderKey("U1", "b1", start)
	settings = personal.Settings{Remind: 15 * time.Minute, Agenda: &personal.Agenda{Minute: 8 * 60, Weekdays: true}, Updated: start}
)

// update runs fn on the file as another bookbot would.
func update(t *testing.T, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestBoltFileRemoved(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), personal.BoltFileName)
	s := openBolt(t, path)
	if ok, err := s.Claim(t.Context(), key, start); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	// Its claims went with it: claiming afresh could send a reminder again.
	if ok, err := s.Claim(t.Context(), key, start); err == nil || ok || !strings.HasPrefix(err.Error(), "personal store "+path+": not a personal store") {
		t.Errorf("Claim after the file was removed: %v, %v; want an error naming the store", ok, err)
	}
}

// TestBoltFormat pins what the file holds, so that a change of Settings'
// JSON does not change it unnoticed.
func TestBoltFormat(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), personal.BoltFileName)
	s := openBolt(t, path)
	if err := s.SaveSettings(t.Context(), "U1", settings); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveSettings(t.Context(), "U2", personal.Settings{}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Claim(t.Context(), key, start.Add(time.Hour)); err != nil || !ok {
		t.Fatal(ok, err)
	}
	got := map[string]string{}
	update(t, path, func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			return b.ForEach(func(k, v []byte) error {
				got[string(name)+" "+string(k)] = string(v)
				return nil
			})
		})
	})
	want := map[string]string{
		"meta version":  "\x00\x00\x00\x00\x00\x00\x00\x01",
		"settings U1":   `{"remind_ns":900000000000,"agenda":{"minute":480,"weekdays":true},"updated":"2026-11-24T09:00:00Z"}`,
		"settings U2":   `{}`,
		"claims " + key: `{"at":"2026-11-24T10:00:00Z"}`,
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%q = %q, want %q", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("the file holds %q, want %q", got, want)
	}
}

func TestBoltEmptyNames(t *testing.T) {
	t.Parallel()
	s := openBolt(t, filepath.Join(t.TempDir(), personal.BoltFileName))
	if err := s.SaveSettings(t.Context(), "", settings); err == nil {
		t.Error("SaveSettings of no user: no error")
	}
	if _, ok, err := s.Settings(t.Context(), ""); err == nil || ok {
		t.Errorf("Settings of no user: %v, %v; want an error", ok, err)
	}
	if ok, err := s.Claim(t.Context(), "", start); err == nil || ok {
		t.Errorf("Claim of no key: %v, %v; want an error", ok, err)
	}
	if err := s.Release(t.Context(), ""); err != nil {
		t.Errorf("Release of no key: %v, want none: it holds no claim", err)
	}
	if all, err := s.AllSettings(t.Context()); err != nil || len(all) != 0 {
		t.Errorf("AllSettings after the refusals: %v, %v", all, err)
	}
}

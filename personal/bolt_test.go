package personal_test

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

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

func TestBoltFileMode(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, personal.BoltFileName)
	s := openBolt(t, path)
	if s.Path() != path {
		t.Errorf("Path() = %q, want %q", s.Path(), path)
	}
	if err := s.SaveSettings(t.Context(), "U1", settings); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Claim(t.Context(), key, start); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", fi.Mode().Perm())
	}
	di, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if di.Mode().Perm()&0o077 != 0 {
		t.Errorf("created directory mode %v, want none for group and others", di.Mode().Perm())
	}
}

// hold opens the file as another process would, holding its lock (shared
// when readOnly) until the returned function is called.
func hold(t *testing.T, path string, readOnly bool) func() {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: readOnly})
	if err != nil {
		t.Fatalf("another process cannot open the file: %v", err)
	}
	return func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	}
}

func TestBoltOpensTheFileForEachOperation(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), personal.BoltFileName)
	s := openBolt(t, path)
	if err := s.SaveSettings(t.Context(), "U1", settings); err != nil {
		t.Fatal(err)
	}

	// Between operations the file is free: another process takes it at once.
	release := hold(t, path, false)

	// While it holds the file, operations wait for it.
	done := make(chan error, 2)
	go func() {
		_, err := personal.OpenBolt(path)
		done <- err
	}()
	go func() {
		ok, err := s.Claim(t.Context(), key, start)
		if err == nil && !ok {
			err = errors.New("the claim was not new")
		}
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("an operation ended while another process held the file: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	release()
	for range 2 {
		if err := <-done; err != nil {
			t.Fatalf("after the other process let go: %v", err)
		}
	}

	// A reader (another bookbot command) and the store share the file.
	release = hold(t, path, true)
	if _, ok, err := s.Settings(t.Context(), "U1"); err != nil || !ok {
		t.Fatalf("Settings while another process reads: %v, %v", ok, err)
	}
	if all, err := s.AllSettings(t.Context()); err != nil || len(all) != 1 {
		t.Fatalf("AllSettings while another process reads: %v, %v", all, err)
	}
	release()
}

func TestBoltLockWaitIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the 5s lock wait")
	}
	t.Parallel()
	path := filepath.Join(t.TempDir(), personal.BoltFileName)
	s := openBolt(t, path)
	release := hold(t, path, false)
	defer release()
	begun := time.Now()
	_, err := s.Claim(t.Context(), key, start)
	if !errors.Is(err, bolterrors.ErrTimeout) || !strings.Contains(err.Error(), path) {
		t.Fatalf("Claim while another process holds the file: %v, want a timeout naming the file", err)
	}
	if waited := time.Since(begun); waited < 4*time.Second || waited > 15*time.Second {
		t.Errorf("waited %v, want about 5s", waited)
	}
}

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

// setVersion writes a format version into the file, as another bookbot
// would.
func setVersion(t *testing.T, path string, v uint64) {
	t.Helper()
	update(t, path, func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("meta")).Put([]byte("version"), binary.BigEndian.AppendUint64(nil, v))
	})
}

func TestBoltRefusesANewerVersion(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), personal.BoltFileName)
	s := openBolt(t, path)
	if err := s.SaveSettings(t.Context(), "U1", settings); err != nil {
		t.Fatal(err)
	}
	setVersion(t, path, 2)

	_, err := personal.OpenBolt(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "version 2") {
		t.Fatalf("OpenBolt of a version 2 file: %v, want an error naming the file and its version", err)
	}
	// A store opened before the file was upgraded refuses it too.
	if _, err := s.Claim(t.Context(), key, start); err == nil || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("Claim in a version 2 file: %v, want the version refused", err)
	}
	if _, _, err := s.Settings(t.Context(), "U1"); err == nil || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("Settings of a version 2 file: %v, want the version refused", err)
	}
	if err := s.SaveSettings(t.Context(), "U2", settings); err == nil || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("SaveSettings in a version 2 file: %v, want the version refused", err)
	}

	// The file was left as it was: the newer bookbot can go on with it.
	setVersion(t, path, 1)
	if _, ok, err := s.Settings(t.Context(), "U1"); err != nil || !ok {
		t.Errorf("Settings after going back to version 1: %v, %v", ok, err)
	}
	if _, ok, err := s.Settings(t.Context(), "U2"); err != nil || ok {
		t.Errorf("Settings refused in version 2: %v, %v; want none saved", ok, err)
	}
	if ok, err := s.Claim(t.Context(), key, start); err != nil || !ok {
		t.Errorf("Claim after going back to version 1: %v, %v; want it new: the refused one was not recorded", ok, err)
	}
}

func TestBoltRefusesOtherFiles(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), personal.BoltFileName)
	if err := os.WriteFile(path, []byte("not a bbolt file, but long enough to be read as one if nobody checked"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := personal.OpenBolt(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("OpenBolt of another kind of file: %v, want an error naming it", err)
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
	if ok, err := s.Claim(t.Context(), key, start); err == nil || ok {
		t.Errorf("Claim after the file was removed: %v, %v; want an error", ok, err)
	}
	if _, _, err := s.Settings(t.Context(), "U1"); err == nil {
		t.Error("Settings after the file was removed: no error")
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

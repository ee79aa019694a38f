package notices_test

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

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/notices"
	"github.com/bookbot/bookbot/notices/noticestest"
)

func TestBoltStore(t *testing.T) {
	t.Parallel()
	noticestest.Run(t, func(t *testing.T) func() notices.Store {
		path := filepath.Join(t.TempDir(), notices.BoltFileName)
		return func() notices.Store { return openBolt(t, path) }
	})
}

func openBolt(t *testing.T, path string) *notices.BoltStore {
	t.Helper()
	s, err := notices.OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var (
	start = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	key   = notices.Key{BookingID: "b1", Kind: notices.New, Start: start, End: start.Add(30 * time.Minute), Since: start.Add(-time.Hour)}
	snap  = notices.Snapshot{At: start.Add(-time.Hour), Bookings: []booking.Booking{{
		ID: "b1", Start: start, End: start.Add(30 * time.Minute), Status: "accepted",
		BookerName: booking.Some("Ada"), BookerEmail: booking.Some("ada@example.com"),
	}}}
)

func TestBoltFileMode(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, notices.BoltFileName)
	s := openBolt(t, path)
	if s.Path() != path {
		t.Errorf("Path() = %q, want %q", s.Path(), path)
	}
	if err := s.SaveLast(t.Context(), snap); err != nil {
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
	path := filepath.Join(t.TempDir(), notices.BoltFileName)
	s := openBolt(t, path)
	if err := s.SaveLast(t.Context(), snap); err != nil {
		t.Fatal(err)
	}

	// Between operations the file is free: another process takes it at once.
	release := hold(t, path, false)

	// While it holds the file, operations wait for it.
	done := make(chan error, 2)
	go func() {
		_, err := notices.OpenBolt(path)
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

	// A reader (bookbot audit) and the store share the file.
	release = hold(t, path, true)
	got, ok, err := s.Last(t.Context())
	if err != nil || !ok || len(got.Bookings) != 1 {
		t.Fatalf("Last while another process reads: %+v, %v, %v", got, ok, err)
	}
	if _, ok, err := s.Thread(t.Context(), "b1"); err != nil || ok {
		t.Fatalf("Thread while another process reads: %v, %v", ok, err)
	}
	release()
}

func TestBoltLockWaitIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the 5s lock wait")
	}
	t.Parallel()
	path := filepath.Join(t.TempDir(), notices.BoltFileName)
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

// setVersion writes a format version into the file, as another bookbot
// would.
func setVersion(t *testing.T, path string, v uint64) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("meta")).Put([]byte("version"), binary.BigEndian.AppendUint64(nil, v))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestBoltRefusesANewerVersion(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), notices.BoltFileName)
	s := openBolt(t, path)
	if err := s.SaveLast(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	setVersion(t, path, 2)

	_, err := notices.OpenBolt(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "version 2") {
		t.Fatalf("OpenBolt of a version 2 file: %v, want an error naming the file and its version", err)
	}
	// A store opened before the file was upgraded refuses it too.
	if _, err := s.Claim(t.Context(), key, start); err == nil || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("Claim in a version 2 file: %v, want the version refused", err)
	}
	if _, _, err := s.Last(t.Context()); err == nil || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("Last of a version 2 file: %v, want the version refused", err)
	}

	// The file was left as it was: the newer bookbot can go on with it.
	setVersion(t, path, 1)
	if got, ok, err := s.Last(t.Context()); err != nil || !ok || len(got.Bookings) != 1 {
		t.Errorf("Last after going back to version 1: %+v, %v, %v", got, ok, err)
	}
	if ok, err := s.Claim(t.Context(), key, start); err != nil || !ok {
		t.Errorf("Claim after going back to version 1: %v, %v; want it new: the refused one was not recorded", ok, err)
	}
}

func TestBoltRefusesOtherFiles(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), notices.BoltFileName)
	if err := os.WriteFile(path, []byte("not a bbolt file, but long enough to be read as one if nobody checked"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := notices.OpenBolt(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("OpenBolt of another kind of file: %v, want an error naming it", err)
	}
}

func TestBoltFileRemoved(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), notices.BoltFileName)
	s := openBolt(t, path)
	if ok, err := s.Claim(t.Context(), key, start); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	// Its claims went with it: claiming afresh could post a notice again.
	if ok, err := s.Claim(t.Context(), key, start); err == nil || ok {
		t.Errorf("Claim after the file was removed: %v, %v; want an error", ok, err)
	}
	if _, _, err := s.Thread(t.Context(), "b1"); err == nil {
		t.Error("Thread after the file was removed: no error")
	}
}

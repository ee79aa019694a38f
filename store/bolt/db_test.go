package bolt_test

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/statedir"
	"github.com/bookbot/bookbot/store/bolt"
)

// openBeside opens the store under dir as another handle on it would,
// without keeping the directory's lock.
func openBeside(t testing.TB, dir string) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(dir, bolt.Options{Beside: true})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func openReadOnly(t testing.TB, dir string) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(dir, bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// update runs fn on the file at path as another bookbot would.
func update(t *testing.T, path string, fn func(tx *bbolt.Tx) error) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second})
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

// The process that serves holds the state directory until Close: a second
// one is refused, naming it; a handle beside it and a reader are not.
func TestOpenHoldsTheDirectory(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	db, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if db.Owner() == "" || db.Path() != filepath.Join(dir, bolt.FileName) {
		t.Errorf("owner %q, path %q", db.Owner(), db.Path())
	}
	_, err = bolt.Open(dir, bolt.Options{})
	if locked, ok := errors.AsType[*statedir.LockedError](err); !ok || !strings.Contains(locked.Holder, db.Owner()) {
		t.Errorf("a second Open: %v, want a *statedir.LockedError naming %q", err, db.Owner())
	}
	beside := openBeside(t, dir)
	if beside.Owner() != "" {
		t.Errorf("a handle beside the holder is owner %q", beside.Owner())
	}
	if err := beside.Personal().SaveSettings(t.Context(), "U1", settings); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := openReadOnly(t, dir).Personal().Settings(t.Context(), "U1"); err != nil || !ok {
		t.Errorf("read beside the holder: %v, %v", ok, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	again.Close()
}

// A handle beside the holder does not make the file: it might be made
// while an earlier bookbot still writes the files it would import.
func TestBesideMakesNoFileWhileTheDirectoryIsHeld(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lock, err := statedir.Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	if _, err := bolt.Open(dir, bolt.Options{Beside: true}); err == nil {
		t.Fatal("opened beside a holder without a file")
	}
	if _, err := os.Stat(filepath.Join(dir, bolt.FileName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the file was made: %v", err)
	}
}

// The state directory and the file, rewritten or not, are the owner's
// alone.
func TestFileModes(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	j, clk := open(t, dir)
	check := func(when string) {
		t.Helper()
		for path, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, j.Path(): 0o600} {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode() != want {
				t.Errorf("%s: %s has mode %s, want %s", when, path, fi.Mode(), want)
			}
		}
	}
	check("opened")
	finish, err := j.Begin(t.Context(), create)
	if err != nil {
		t.Fatal(err)
	}
	finish(&booking.Result{Outcome: booking.Confirmed})
	clk.Advance(time.Hour)
	if n, err := j.Prune(clk.Now()); n != 1 || err != nil {
		t.Fatalf("Prune = %d, %v", n, err)
	}
	check("compacted")
	if _, err := os.Stat(j.Path() + ".compact"); !os.IsNotExist(err) {
		t.Errorf("the compaction left its file behind: %v", err)
	}
}

// A file a newer bookbot wrote is refused, by a reader too: what it holds
// is not known here.
func TestRefusesANewerFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j, _ := open(t, dir)
	reader := openReadOnly(t, dir).Journal()
	update(t, j.Path(), func(tx *bbolt.Tx) error {
		return tx.Bucket([]byte("meta")).Put([]byte("version"), binary.BigEndian.AppendUint64(nil, 3))
	})

	newer := "format version 3 is newer than this bookbot knows (2)"
	if _, err := bolt.Open(dir, bolt.Options{}); err == nil || !strings.Contains(err.Error(), newer) {
		t.Errorf("Open: %v, want %q", err, newer)
	}
	if _, err := j.Begin(t.Context(), create); err == nil || !strings.Contains(err.Error(), newer) {
		t.Errorf("Begin: %v, want %q", err, newer)
	}
	if _, err := reader.Since(time.Time{}); err == nil || !strings.Contains(err.Error(), newer) {
		t.Errorf("Since, read-only: %v, want %q", err, newer)
	}
}

package boltfile_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/bookbot/bookbot/internal/boltfile"
)

var (
	items = []byte("items")
	other = []byte("other")
)

func open(t *testing.T, path string) *boltfile.File {
	t.Helper()
	f, err := boltfile.Open(path, "test", 1, items, other)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// put stores k = v in items.
func put(ctx context.Context, f *boltfile.File, k, v string) error {
	return f.Update(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(items).Put([]byte(k), []byte(v))
	})
}

// get returns k's value in items, "" when it has none.
func get(ctx context.Context, f *boltfile.File, k string) (string, error) {
	var v string
	err := f.View(ctx, func(tx *bolt.Tx) error {
		v = string(tx.Bucket(items).Get([]byte(k)))
		return nil
	})
	return v, err
}

// update runs fn on the file as another process would.
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

// TestFormat pins what Open writes: the stores' files depend on it.
func TestFormat(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "test.db")
	f := open(t, path)
	if err := put(t.Context(), f, "k", "v"); err != nil {
		t.Fatal(err)
	}
	// Opening it again adds nothing, and keeps the version it holds.
	setVersion(t, path, 0)
	if _, err := boltfile.Open(path, "test", 1, items, other); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	update(t, path, func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			got[string(name)] = ""
			return b.ForEach(func(k, v []byte) error {
				got[string(name)+" "+string(k)] = string(v)
				return nil
			})
		})
	})
	want := map[string]string{
		"meta":         "",
		"meta version": "\x00\x00\x00\x00\x00\x00\x00\x00",
		"items":        "",
		"items k":      "v",
		"other":        "",
	}
	for k, w := range want {
		if v, ok := got[k]; !ok || v != w {
			t.Errorf("%q = %q (%v), want %q", k, v, ok, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("the file holds %q, want %q", got, want)
	}

	path = filepath.Join(t.TempDir(), "test.db")
	if _, err := boltfile.Open(path, "test", 7); err != nil {
		t.Fatal(err)
	}
	update(t, path, func(tx *bolt.Tx) error {
		if v := string(tx.Bucket([]byte("meta")).Get([]byte("version"))); v != "\x00\x00\x00\x00\x00\x00\x00\x07" {
			t.Errorf("version %q, want 7 in 8 big-endian bytes", v)
		}
		return nil
	})
}

func TestFileMode(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, "test.db")
	f := open(t, path)
	if f.Path() != path {
		t.Errorf("Path() = %q, want %q", f.Path(), path)
	}
	if err := put(t.Context(), f, "k", "v"); err != nil {
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

func TestOpensTheFileForEachTransaction(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "test.db")
	f := open(t, path)
	if err := put(t.Context(), f, "a", "1"); err != nil {
		t.Fatal(err)
	}

	// Between transactions the file is free: another process takes it at
	// once.
	release := hold(t, path, false)

	// While it holds the file, Open and transactions wait for it (one for
	// the lock, the other for its turn), and go on once it lets go.
	done := make(chan error, 2)
	go func() {
		_, err := boltfile.Open(path, "test", 1, items, other)
		done <- err
	}()
	go func() {
		done <- put(t.Context(), f, "b", "2")
	}()
	awaitLockRetries(t, done)
	release()
	for range 2 {
		if err := <-done; err != nil {
			t.Fatalf("after the other process let go: %v", err)
		}
	}

	// A reader (another bookbot command) and View share the file.
	release = hold(t, path, true)
	if v, err := get(t.Context(), f, "b"); err != nil || v != "2" {
		t.Fatalf("View while another process reads: %q, %v", v, err)
	}
	release()
}

// awaitLockRetries waits until a goroutine of the test found the file's
// lock held and waits to try again (in bbolt's flock), failing the test if
// a transaction ends first.
func awaitLockRetries(t *testing.T, done <-chan error) {
	t.Helper()
	ours := "boltfile_test." + t.Name() + ".func"
	buf := make([]byte, 1<<20)
	for {
		stacks := string(buf[:runtime.Stack(buf, true)])
		for g := range strings.SplitSeq(stacks, "\n\n") {
			if strings.Contains(g, ours) && strings.Contains(g, "go.etcd.io/bbolt.flock(") && strings.Contains(g, "time.Sleep(") {
				return
			}
		}
		select {
		case err := <-done:
			t.Fatalf("a transaction ended while another process held the file: %v", err)
		case <-time.After(time.Millisecond): // look again
		}
	}
}

// TestLockWaitIsBounded has another process hold the file: Open and
// transactions wait for it up to the lock wait, then fail saying so,
// without getting into the file.
func TestLockWaitIsBounded(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "test.db")
	short := boltfile.Options{LockWait: 100 * time.Millisecond}
	f, err := boltfile.OpenWith(path, "test", 1, short, items, other)
	if err != nil {
		t.Fatal(err)
	}
	release := hold(t, path, false)
	waited := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, bolterrors.ErrTimeout) || !strings.HasPrefix(err.Error(), "test store "+path+": another process held the file for over 100ms") {
			t.Errorf("%s while another process holds the file: %v, want a timeout naming the store, the file and the wait", what, err)
		}
	}
	_, err = boltfile.OpenWith(path, "test", 1, short, items, other)
	waited("Open", err)
	ran := false
	err = f.Update(t.Context(), func(*bolt.Tx) error { ran = true; return nil })
	waited("Update", err)
	_, err = get(t.Context(), f, "k")
	waited("View", err)
	if ran {
		t.Error("Update ran its transaction while another process held the file")
	}

	release()
	if err := put(t.Context(), f, "k", "v"); err != nil {
		t.Errorf("Update after the other process let go: %v", err)
	}
}

// TestConcurrentUse has the Files of one path, opened apart, update the
// file at once: every update is kept.
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "test.db")
	const n = 8
	files := make([]*boltfile.File, n)
	for i := range files {
		files[i] = open(t, path)
	}
	errs := make(chan error, n)
	for i, f := range files {
		go func() {
			errs <- f.Update(t.Context(), func(tx *bolt.Tx) error {
				return tx.Bucket(items).Put([]byte{byte(i)}, []byte{1})
			})
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	count := 0
	err := files[0].View(t.Context(), func(tx *bolt.Tx) error {
		count = tx.Bucket(items).Stats().KeyN
		return nil
	})
	if err != nil || count != n {
		t.Errorf("%d keys, %v; want %d", count, err, n)
	}
}

func TestHonoursContext(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "test.db")
	f := open(t, path)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ran := false
	err := f.Update(ctx, func(*bolt.Tx) error { ran = true; return nil })
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "test store "+path+": ") || ran {
		t.Errorf("Update with a done context: %v, ran %v; want it refused, naming the store", err, ran)
	}
	if _, err := get(ctx, f, "k"); !errors.Is(err, context.Canceled) {
		t.Errorf("View with a done context: %v, want it refused", err)
	}

	// The Files of one path take turns at the file, so another File waits
	// for its turn while one is in a transaction, not for the file's lock:
	// the wait ends with the context.
	g := open(t, path)
	inside, leave := make(chan struct{}), make(chan struct{})
	held := make(chan error, 1)
	go func() {
		held <- f.Update(t.Context(), func(*bolt.Tx) error {
			close(inside)
			<-leave
			return nil
		})
	}()
	select {
	case <-inside:
	case err := <-held:
		t.Fatalf("Update ended before its transaction: %v", err)
	}
	ctx, cancel = context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := get(ctx, g, "k"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("View waiting for its turn past its deadline: %v, want the deadline", err)
	}
	close(leave)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
}

func TestRefusesANewerVersion(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "test.db")
	f := open(t, path)
	if err := put(t.Context(), f, "a", "1"); err != nil {
		t.Fatal(err)
	}
	setVersion(t, path, 2)

	_, err := boltfile.Open(path, "test", 1, items, other)
	if err == nil || !strings.HasPrefix(err.Error(), "test store "+path+": format version 2 is newer") {
		t.Fatalf("Open of a version 2 file: %v, want an error naming the store, the file and its version", err)
	}
	// A File opened before the file was upgraded refuses it too, without
	// running fn.
	ran := false
	err = f.Update(t.Context(), func(tx *bolt.Tx) error {
		ran = true
		return tx.Bucket(items).Put([]byte("b"), []byte("2"))
	})
	if err == nil || !strings.Contains(err.Error(), "version 2") || ran {
		t.Errorf("Update of a version 2 file: %v, ran %v; want the version refused", err, ran)
	}
	if _, err := get(t.Context(), f, "a"); err == nil || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("View of a version 2 file: %v, want the version refused", err)
	}

	// The file was left as it was: the newer bookbot can go on with it.
	setVersion(t, path, 1)
	if v, err := get(t.Context(), f, "a"); err != nil || v != "1" {
		t.Errorf("View after going back to version 1: %q, %v", v, err)
	}
	if v, err := get(t.Context(), f, "b"); err != nil || v != "" {
		t.Errorf("View of the refused update: %q, %v; want it not recorded", v, err)
	}
}

func TestRefusesOtherFiles(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "test.db")
	if err := os.WriteFile(path, []byte("not a bbolt file, but long enough to be read as one if nobody checked"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := boltfile.Open(path, "test", 1, items); err == nil || !strings.HasPrefix(err.Error(), "test store "+path+": ") {
		t.Errorf("Open of another kind of file: %v, want an error naming the store and the file", err)
	}

	// A version that is not 8 bytes is refused.
	path = filepath.Join(t.TempDir(), "test.db")
	open(t, path)
	update(t, path, func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("meta")).Put([]byte("version"), []byte{1})
	})
	if _, err := boltfile.Open(path, "test", 1, items); err == nil || !strings.Contains(err.Error(), "not a test store (no format version)") {
		t.Errorf("Open of a file with a malformed version: %v, want it refused", err)
	}
}

func TestFileRemoved(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "test.db")
	f := open(t, path)
	if err := put(t.Context(), f, "a", "1"); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	// What it held went with it: a store going on afresh could act twice.
	if _, err := get(t.Context(), f, "a"); err == nil {
		t.Error("View after the file was removed: no error")
	}
	ran := false
	err := f.Update(t.Context(), func(*bolt.Tx) error { ran = true; return nil })
	if err == nil || ran || !strings.HasPrefix(err.Error(), "test store "+path+": not a test store (no meta bucket)") {
		t.Errorf("Update after the file was removed: %v, ran %v; want it refused", err, ran)
	}
	if _, err := get(t.Context(), f, "a"); err == nil {
		t.Error("View after the file was removed and made again: no error")
	}
}

func TestUpgrade(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "test.db")
	if err := put(t.Context(), open(t, path), "a", "1"); err != nil {
		t.Fatal(err)
	}
	var froms []uint64
	upgrade := boltfile.Options{Upgrade: func(tx *bolt.Tx, from uint64) error {
		froms = append(froms, from)
		// The buckets are there, the new one too.
		return tx.Bucket(other).Put([]byte("upgraded"), []byte("yes"))
	}}
	version := func(path string) (v string) {
		update(t, path, func(tx *bolt.Tx) error {
			v = string(tx.Bucket([]byte("meta")).Get([]byte("version")))
			return nil
		})
		return v
	}
	const v1, v2 = "\x00\x00\x00\x00\x00\x00\x00\x01", "\x00\x00\x00\x00\x00\x00\x00\x02"

	// An upgrade that fails leaves the file as it was.
	failing := boltfile.Options{Upgrade: func(*bolt.Tx, uint64) error { return errors.New("cannot") }}
	if _, err := boltfile.OpenWith(path, "test", 2, failing, items); err == nil || err.Error() != "test store "+path+": cannot" {
		t.Errorf("Open with a failing upgrade: %v, want its error naming the store", err)
	}
	if v := version(path); v != v1 {
		t.Errorf("after a failed upgrade the version is %q, want 1", v)
	}

	f, err := boltfile.OpenWith(path, "test", 2, upgrade, items, other)
	if err != nil {
		t.Fatal(err)
	}
	if v := version(path); v != v2 || !slices.Equal(froms, []uint64{1}) {
		t.Errorf("upgraded from %v to version %q, want from 1 to 2", froms, v)
	}
	if v, err := get(t.Context(), f, "a"); err != nil || v != "1" {
		t.Errorf("after the upgrade: %q, %v", v, err)
	}
	if _, err := boltfile.OpenWith(path, "test", 2, upgrade, items, other); err != nil || len(froms) != 1 {
		t.Errorf("Open of an upgraded file: %v; upgraded from %v, want once", err, froms)
	}

	// A file without a version, new or from before formats were recorded,
	// is upgraded from 0.
	froms = nil
	old := filepath.Join(t.TempDir(), "test.db")
	update(t, old, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket(items)
		if err != nil {
			return err
		}
		return b.Put([]byte("a"), []byte("old"))
	})
	f, err = boltfile.OpenWith(old, "test", 2, upgrade, items, other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := boltfile.OpenWith(filepath.Join(t.TempDir(), "test.db"), "test", 2, upgrade, items, other); err != nil {
		t.Fatal(err)
	}
	if v, err := get(t.Context(), f, "a"); err != nil || v != "old" || version(old) != v2 || !slices.Equal(froms, []uint64{0, 0}) {
		t.Errorf("a file from before formats: %q, %v, upgraded from %v to %q; want it kept, from 0 to 2", v, err, froms, version(old))
	}
}

func TestReadOnly(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "none")
	path := filepath.Join(dir, "test.db")
	r, err := boltfile.OpenWith(path, "test", 1, boltfile.Options{ReadOnly: true}, items)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := get(t.Context(), r, "a"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("View of a missing file: %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a read-only Open created %s", dir)
	}

	f := open(t, path)
	if err := put(t.Context(), f, "a", "1"); err != nil {
		t.Fatal(err)
	}
	if v, err := get(t.Context(), r, "a"); err != nil || v != "1" {
		t.Errorf("View: %q, %v", v, err)
	}
	ran := false
	err = r.Update(t.Context(), func(*bolt.Tx) error { ran = true; return nil })
	if err == nil || err.Error() != "test store "+path+": opened read-only" || ran {
		t.Errorf("Update: %v, ran %v; want it refused", err, ran)
	}
	if err := r.Compact(t.Context()); err == nil {
		t.Error("Compact of a read-only file: no error")
	}

	setVersion(t, path, 2)
	if _, err := get(t.Context(), r, "a"); err == nil || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("View of a version 2 file: %v, want the version refused", err)
	}

	// A file from before formats were recorded is read as it is, while a
	// File that writes refuses it.
	update(t, path, func(tx *bolt.Tx) error { return tx.DeleteBucket([]byte("meta")) })
	if v, err := get(t.Context(), r, "a"); err != nil || v != "1" {
		t.Errorf("View of a file without a meta bucket: %q, %v", v, err)
	}
	if _, err := get(t.Context(), f, "a"); err == nil {
		t.Error("View without ReadOnly of a file without a meta bucket: no error")
	}
}

// Compact leaves no trace of deleted data in the file, and keeps the rest.
func TestCompact(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "test.db")
	f := open(t, path)
	const secret = "a value deleted long ago"
	if err := put(t.Context(), f, "gone", secret); err != nil {
		t.Fatal(err)
	}
	if err := put(t.Context(), f, "kept", "v"); err != nil {
		t.Fatal(err)
	}
	err := f.Update(t.Context(), func(tx *bolt.Tx) error { return tx.Bucket(items).Delete([]byte("gone")) })
	if err != nil {
		t.Fatal(err)
	}
	holds := func() bool {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Contains(raw, []byte(secret))
	}
	if !holds() {
		t.Fatal("the file lost the deleted value without a rewrite: this test shows nothing")
	}

	if err := f.Compact(t.Context()); err != nil {
		t.Fatal(err)
	}
	if holds() {
		t.Error("the file still holds the deleted value")
	}
	if v, err := get(t.Context(), f, "kept"); err != nil || v != "v" {
		t.Errorf("after Compact: %q, %v", v, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("after Compact: %v, %v; want mode 0600", fi, err)
	}
	if _, err := os.Stat(path + ".compact"); !os.IsNotExist(err) {
		t.Errorf("Compact left its copy behind: %v", err)
	}
}

// A transaction that waited for another process's lock while that process
// compacted the file (renamed a new one into place) runs on the new file,
// not on the old one, which no one reads again.
func TestTransactionAfterAnotherProcessCompacted(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "test.db")
	f := open(t, path)
	if err := put(t.Context(), f, "a", "1"); err != nil {
		t.Fatal(err)
	}
	release := hold(t, path, false)
	done := make(chan error, 1)
	go func() { done <- put(t.Context(), f, "b", "2") }()
	awaitLockRetries(t, done)

	// The other process writes a copy and renames it into place.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".compact", raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".compact", path); err != nil {
		t.Fatal(err)
	}
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"a": "1", "b": "2"} {
		if v, err := get(t.Context(), f, k); err != nil || v != want {
			t.Errorf("%s = %q, %v; want %q", k, v, err, want)
		}
	}
}

// Package boltfile keeps a store in one bbolt file that is opened for each
// transaction and closed again, so that other bookbot commands can read
// the file while `bookbot run` serves.
//
// The file holds a meta bucket with the format version the store wrote it
// in, checked on every transaction: a file of a newer format, one that is
// not a bbolt file, or one that lost its meta bucket (replaced, or removed
// and created afresh) is refused. A store may upgrade a file of an older
// format when it opens it (Options.Upgrade).
package boltfile

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

var (
	// metaBucket holds the file's format version, under versionKey, as 8
	// big-endian bytes.
	metaBucket = []byte("meta")
	versionKey = []byte("version")
)

// LockWait bounds the wait for another process's hold on the file, unless
// Options say otherwise; bookbot holds it for milliseconds at a time.
const LockWait = 5 * time.Second

// Options are a File's settings beyond its store's name and format.
type Options struct {
	// LockWait bounds the wait for another process's hold on the file
	// (0: LockWait).
	LockWait time.Duration
	// Upgrade, when set, brings a file of a format older than the store's
	// up to it in Open's transaction, after the buckets are created. from
	// is 0 for a file without a format version: one Open creates, or one
	// written before formats were recorded. Without Upgrade an older file
	// keeps its format.
	Upgrade func(tx *bolt.Tx, from uint64) error
	// ReadOnly has Open neither create nor change the file, which may be
	// missing (View then fails with an error that is fs.ErrNotExist), and
	// refuses Update. A file without a meta bucket is read as it is: one
	// written before formats were recorded, which the bookbot that writes
	// the file upgrades.
	ReadOnly bool
}

var errReadOnly = errors.New("opened read-only")

// File is a store's bbolt file. It is safe for concurrent use, and the
// Files of one path in a process take turns rather than contend for the
// file's lock.
type File struct {
	path    string
	name    string        // the store's, in errors: "notices"
	version uint64        // the format this bookbot writes
	turn    chan struct{} // this process's turn at the file; shared by path
	opts    Options
}

// turns holds a turn (a chan struct{} of capacity 1) for each file opened
// in this process, by absolute path.
var turns sync.Map

// Open opens the file at path for the store called name, creating the file
// (mode 0600) and its directory (0700) when missing, and in the file the
// meta bucket, holding version, and buckets. A file of a format newer than
// version is refused.
//
// Errors begin "<name> store <path>: ".
func Open(path, name string, version uint64, buckets ...[]byte) (*File, error) {
	return OpenWith(path, name, version, Options{}, buckets...)
}

// OpenWith is Open with opts.
func OpenWith(path, name string, version uint64, opts Options, buckets ...[]byte) (*File, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%s store %s: %w", name, path, err)
	}
	if opts.LockWait == 0 {
		opts.LockWait = LockWait
	}
	turn, _ := turns.LoadOrStore(abs, make(chan struct{}, 1))
	f := &File{path: path, name: name, version: version, turn: turn.(chan struct{}), opts: opts}
	if opts.ReadOnly {
		return f, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, f.wrap(err)
	}
	err = f.do(context.Background(), true, false, func(tx *bolt.Tx) error {
		return f.setUp(tx, buckets)
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// setUp creates the meta bucket and buckets, and writes the version into a
// file without one or, with Upgrade, into an older file it upgraded.
func (f *File) setUp(tx *bolt.Tx, buckets [][]byte) error {
	for _, b := range append([][]byte{metaBucket}, buckets...) {
		if _, err := tx.CreateBucketIfNotExists(b); err != nil {
			return err
		}
	}
	meta := tx.Bucket(metaBucket)
	v := meta.Get(versionKey)
	// A version is kept unless Upgrade brings an older one up.
	if v != nil && (f.opts.Upgrade == nil || len(v) != 8 || binary.BigEndian.Uint64(v) >= f.version) {
		return f.checkVersion(tx)
	}
	if f.opts.Upgrade != nil {
		var from uint64
		if v != nil {
			from = binary.BigEndian.Uint64(v)
		}
		if err := f.opts.Upgrade(tx, from); err != nil {
			return err
		}
	}
	return meta.Put(versionKey, binary.BigEndian.AppendUint64(nil, f.version))
}

// Path is the file's path, as given to Open.
func (f *File) Path() string { return f.path }

// View opens the file, runs fn in a read-only transaction and closes the
// file. It fails, without running fn, when ctx is done before its turn at
// the file or when the file's format is not known. An error of fn is
// returned wrapped.
func (f *File) View(ctx context.Context, fn func(*bolt.Tx) error) error {
	return f.do(ctx, false, true, fn)
}

// Update opens the file, runs fn in a read-write transaction and closes
// the file; the transaction is committed when fn returns nil. It fails,
// without running fn, when ctx is done before its turn at the file or when
// the file's format is not known. An error of fn is returned wrapped.
func (f *File) Update(ctx context.Context, fn func(*bolt.Tx) error) error {
	return f.do(ctx, true, true, fn)
}

// wrap names the store and its file in err.
func (f *File) wrap(err error) error {
	return fmt.Errorf("%s store %s: %w", f.name, f.path, err)
}

// checkVersion fails unless the file is of a format this bookbot knows.
func (f *File) checkVersion(tx *bolt.Tx) error {
	meta := tx.Bucket(metaBucket)
	if meta == nil && f.opts.ReadOnly {
		return nil
	}
	if meta == nil {
		return fmt.Errorf("not a %s store (no meta bucket): was the file replaced?", f.name)
	}
	v := meta.Get(versionKey)
	if len(v) != 8 {
		return fmt.Errorf("not a %s store (no format version)", f.name)
	}
	if n := binary.BigEndian.Uint64(v); n > f.version {
		return fmt.Errorf("format version %d is newer than this bookbot knows (%d): it was written by a newer bookbot", n, f.version)
	}
	return nil
}

// Compact rewrites the file with only its live data, so that the bytes of
// what was deleted do not linger in its free pages, and renames the copy
// into place. A reader that opened the old file keeps reading it; the next
// open finds the new one.
func (f *File) Compact(ctx context.Context) error {
	return f.withDB(ctx, true, func(src *bolt.DB) error {
		tmp := f.path + ".compact"
		_ = os.Remove(tmp) // left by a process that died while compacting
		dst, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: f.opts.LockWait})
		if err != nil {
			return err
		}
		if err := bolt.Compact(dst, src, 0); err != nil {
			_ = dst.Close()
			_ = os.Remove(tmp)
			return err
		}
		if err := dst.Close(); err != nil {
			_ = os.Remove(tmp)
			return err
		}
		if err := os.Rename(tmp, f.path); err != nil {
			_ = os.Remove(tmp)
			return err
		}
		// The rename is durable only once the directory is synced.
		d, err := os.Open(filepath.Dir(f.path))
		if err != nil {
			return err
		}
		defer d.Close()
		return d.Sync()
	})
}

// replacedTries bounds how often open finds that the file it waited for
// was replaced meanwhile.
const replacedTries = 5

// open opens the file (read-write when write is set) once this process
// holds its lock. Another process's Compact renames a new file into place
// while this one may be waiting for the old one's lock: the old file is
// then no one's, and a write to it would be lost. open opens the new one
// instead.
func (f *File) open(write bool) (*bolt.DB, error) {
	for try := 1; ; try++ {
		var opened *os.File
		db, err := bolt.Open(f.path, 0o600, &bolt.Options{
			Timeout:  f.opts.LockWait,
			ReadOnly: !write,
			OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
				file, err := os.OpenFile(name, flag, perm)
				opened = file
				return file, err
			},
		})
		if err != nil {
			return nil, err
		}
		held, herr := opened.Stat()
		now, nerr := os.Stat(f.path)
		if herr != nil || nerr != nil || os.SameFile(held, now) || try == replacedTries {
			return db, nil // a file removed or replaced for good is for the format check to refuse
		}
		if err := db.Close(); err != nil {
			return nil, err
		}
	}
}

// do opens the file, runs fn in one transaction (read-write when write is
// set) and closes the file. With check set the file's version is checked
// first.
func (f *File) do(ctx context.Context, write, check bool, fn func(*bolt.Tx) error) error {
	return f.withDB(ctx, write, func(db *bolt.DB) error {
		run := func(tx *bolt.Tx) error {
			if check {
				if err := f.checkVersion(tx); err != nil {
					return err
				}
			}
			return fn(tx)
		}
		if write {
			return db.Update(run)
		}
		return db.View(run)
	})
}

// withDB opens the file in this process's turn at it (read-write when
// write is set), runs fn and closes the file.
func (f *File) withDB(ctx context.Context, write bool, fn func(*bolt.DB) error) error {
	if write && f.opts.ReadOnly {
		return f.wrap(errReadOnly)
	}
	if err := ctx.Err(); err != nil {
		return f.wrap(err)
	}
	select {
	case f.turn <- struct{}{}:
	case <-ctx.Done():
		return f.wrap(ctx.Err())
	}
	defer func() { <-f.turn }()
	// Both cases may have been ready; the select picks either.
	if err := ctx.Err(); err != nil {
		return f.wrap(err)
	}

	db, err := f.open(write)
	if errors.Is(err, bolterrors.ErrTimeout) {
		return f.wrap(fmt.Errorf("another process held the file for over %v: %w", f.opts.LockWait, err))
	}
	if err != nil {
		return f.wrap(err)
	}
	err = fn(db)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return f.wrap(err)
	}
	return nil
}

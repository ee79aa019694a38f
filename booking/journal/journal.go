package journal

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/internal/boltfile"
)

var _ Store = (*Journal)(nil)

// FileName is the journal's file under the state directory.
const FileName = "journal.db"

var (
	entriesBucket = []byte("entries")
	// attentionBucket indexes the entries that are open or not yet
	// reviewed, so finding them does not read the whole history.
	attentionBucket = []byte("attention")
	// createsBucket indexes creates by event, start and attendee email
	// (hashed, then the entry's key), so Begin finds earlier ones at once.
	createsBucket = []byte("creates")
	// cancelledBucket maps a booking ID to the cancel entry that cancelled it.
	cancelledBucket = []byte("cancelled")
)

// version 2 indexes creates and keeps no notes; Open brings older files up
// to it. A file of a newer format is refused.
const version = 2

// Journal is the record under a state directory in a bbolt file of its
// own, journal.db, as bookbot kept it before the embedded store kept it in
// its one file (store/bolt). It is safe for concurrent use by one process;
// other processes may read it (Open with ReadOnly).
type Journal struct {
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Owner names this process in the entries it begins. Recover leaves
	// the entries of its own owner alone: they are still in flight here.
	Owner string

	file     *boltfile.File
	readOnly bool
}

// Options for Open.
type Options struct {
	// ReadOnly opens an existing journal for reading only; it is not
	// created when missing (Entries then returns none).
	ReadOnly bool
}

// Open opens (creating, unless read-only) the journal under dir.
func Open(dir string, opts Options) (*Journal, error) {
	migrated := false
	f, err := boltfile.OpenWith(filepath.Join(dir, FileName), "journal", version, boltfile.Options{
		ReadOnly: opts.ReadOnly,
		Upgrade: func(tx *bolt.Tx, _ uint64) (err error) {
			migrated, err = rewrite(tx)
			return err
		},
	}, entriesBucket, attentionBucket, createsBucket, cancelledBucket)
	if err != nil {
		return nil, err
	}
	if migrated {
		if err := f.Compact(context.Background()); err != nil {
			return nil, err
		}
	}
	return &Journal{file: f, readOnly: opts.ReadOnly}, nil
}

// rewrite brings an older file up to version: it rewrites every entry,
// which drops the notes and zones it kept, and indexes it. It reports
// whether there were any.
func rewrite(tx *bolt.Tx) (bool, error) {
	var all []Entry
	err := tx.Bucket(entriesBucket).ForEach(func(k, v []byte) error {
		e, err := decode(k, v)
		all = append(all, e)
		return err
	})
	if err != nil {
		return false, err
	}
	for i := range all {
		if err := put(tx, &all[i]); err != nil {
			return false, err
		}
		if err := index(tx, &all[i]); err != nil {
			return false, err
		}
	}
	return len(all) > 0, nil
}

// Path is the journal's file.
func (j *Journal) Path() string { return j.file.Path() }

func (j *Journal) now() time.Time {
	if j.Now != nil {
		return j.Now()
	}
	return time.Now()
}

func (j *Journal) update(fn func(*bolt.Tx) error) error {
	return j.file.Update(context.Background(), fn)
}

// view runs fn on the journal; a read-only journal that does not exist yet
// reads as empty.
func (j *Journal) view(fn func(*bolt.Tx) error) error {
	err := j.file.View(context.Background(), fn)
	if j.readOnly && errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

func key(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

func put(tx *bolt.Tx, e *Entry) error {
	v, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if err := tx.Bucket(entriesBucket).Put(key(e.Seq), v); err != nil {
		return err
	}
	if e.NeedsAttention() {
		return tx.Bucket(attentionBucket).Put(key(e.Seq), nil)
	}
	return tx.Bucket(attentionBucket).Delete(key(e.Seq))
}

// index adds e to the indexes of creates and cancels.
func index(tx *bolt.Tx, e *Entry) error {
	if k, ok := CreateKey(e.Write); ok {
		if err := tx.Bucket(createsBucket).Put(append(k, key(e.Seq)...), nil); err != nil {
			return err
		}
	}
	if id, ok := e.CancelledBooking(); ok {
		return tx.Bucket(cancelledBucket).Put([]byte(id), key(e.Seq))
	}
	return nil
}

// unindex removes e from the indexes, for Prune.
func unindex(tx *bolt.Tx, e *Entry) error {
	if k, ok := CreateKey(e.Write); ok {
		if err := tx.Bucket(createsBucket).Delete(append(k, key(e.Seq)...)); err != nil {
			return err
		}
	}
	c := tx.Bucket(cancelledBucket)
	if e.Op == booking.OpCancel && string(c.Get([]byte(e.BookingID))) == string(key(e.Seq)) {
		return c.Delete([]byte(e.BookingID))
	}
	return nil
}

// prior finds the newest earlier create of w's event, start and attendee
// that stands in the way of another: in flight, confirmed and not
// cancelled through bookbot since, or unclear and not checked by a person.
func prior(tx *bolt.Tx, w booking.Write) (*booking.Prior, error) {
	k, ok := CreateKey(w)
	if !ok {
		return nil, nil
	}
	entries, cancelled := tx.Bucket(entriesBucket), tx.Bucket(cancelledBucket)
	c := tx.Bucket(createsBucket).Cursor()
	var found *booking.Prior
	for ik, _ := c.Seek(k); ik != nil && len(ik) == len(k)+8 && string(ik[:len(k)]) == string(k); ik, _ = c.Next() {
		e, err := decode(ik[len(k):], entries.Get(ik[len(k):]))
		if err != nil {
			return nil, err
		}
		if e.Stands(e.Created != "" && cancelled.Get([]byte(e.Created)) != nil) {
			p := e.Prior()
			found = &p
		}
	}
	return found, nil
}

// change loads entry seq, lets fn change it and stores it.
func (j *Journal) change(seq uint64, fn func(*Entry) error) (Entry, error) {
	var e Entry
	err := j.update(func(tx *bolt.Tx) error {
		v := tx.Bucket(entriesBucket).Get(key(seq))
		if v == nil {
			return fmt.Errorf("journal entry %d: %w", seq, ErrNoEntry)
		}
		if err := json.Unmarshal(v, &e); err != nil {
			return err
		}
		if err := fn(&e); err != nil {
			return err
		}
		if err := put(tx, &e); err != nil {
			return err
		}
		return index(tx, &e)
	})
	return e, err
}

// Begin records a write before it is sent; the returned function records
// its outcome. A create that an earlier one stands in the way of (see
// booking.Journal) is refused with a *booking.DuplicateError and not
// recorded. It implements booking.Journal.
func (j *Journal) Begin(_ context.Context, w booking.Write) (func(*booking.Result) error, error) {
	e := Entry{At: j.now(), Owner: j.Owner, Write: w}
	err := j.update(func(tx *bolt.Tx) error {
		p, err := prior(tx, w)
		if err != nil {
			return err
		}
		if p != nil {
			return &booking.DuplicateError{Prior: *p}
		}
		seq, err := tx.Bucket(entriesBucket).NextSequence()
		if err != nil {
			return err
		}
		e.Seq = seq
		if err := put(tx, &e); err != nil {
			return err
		}
		return index(tx, &e)
	})
	if err != nil {
		return nil, err
	}
	return func(res *booking.Result) error {
		_, err := j.Finish(e.Seq, res, false)
		return err
	}, nil
}

// Finish records the outcome of entry seq. recovered says it was settled
// after a restart.
func (j *Journal) Finish(seq uint64, res *booking.Result, recovered bool) (Entry, error) {
	return j.change(seq, func(e *Entry) error {
		e.Settle(res, recovered, j.now())
		return nil
	})
}

// Settle records res, an outcome the bookings list showed, for entry seq
// if it has none yet. It implements booking.Journal.
func (j *Journal) Settle(_ context.Context, seq uint64, res *booking.Result) error {
	_, err := j.change(seq, func(e *Entry) error {
		if !e.Open() {
			return errSettled
		}
		e.Settle(res, false, j.now())
		return nil
	})
	if errors.Is(err, errSettled) {
		return nil
	}
	return err
}

// errSettled stops a change of an entry settled since it was read.
var errSettled = errors.New("settled meanwhile")

// Recover settles every write whose outcome was never recorded, with
// settle (booking.Client.Reconcile, which only lists). It returns the
// entries it settled.
func (j *Journal) Recover(ctx context.Context, settle func(context.Context, booking.Write) *booking.Result) ([]Entry, error) {
	open, err := j.attention(func(e Entry) bool { return e.LeftBehind(j.Owner) })
	if err != nil {
		return nil, err
	}
	var done []Entry
	for _, e := range open {
		e, err = j.Finish(e.Seq, Reconcile(ctx, e, settle), true)
		if err != nil {
			return done, err
		}
		done = append(done, e)
	}
	return done, nil
}

// Unreported lists the entries that need a person and have not yet been
// put in front of one, oldest first.
func (j *Journal) Unreported() ([]Entry, error) {
	return j.attention(func(e Entry) bool { return e.NeedsReview && e.ReportedAt.IsZero() })
}

// MarkReported records that entry seq was reported, and where.
func (j *Journal) MarkReported(seq uint64, to string) error {
	_, err := j.change(seq, func(e *Entry) error {
		e.ReportedAt, e.ReportedTo = j.now(), to
		return nil
	})
	return err
}

// MarkReviewed records that a person checked entry seq. Checking it again
// keeps the first record; the entry returned says who it was.
func (j *Journal) MarkReviewed(seq uint64, by string) (Entry, error) {
	return j.change(seq, func(e *Entry) error {
		if e.ReviewedAt.IsZero() {
			e.ReviewedAt, e.ReviewedBy = j.now(), by
		}
		return nil
	})
}

// AwaitingReview counts the entries that need a person and that no one has
// marked checked.
func (j *Journal) AwaitingReview() (int, error) {
	list, err := j.attention(Entry.AwaitingReview)
	return len(list), err
}

// Since lists the entries recorded at or after t, oldest first. Entries are
// read from the newest back, so a short window reads little of a long
// history.
func (j *Journal) Since(t time.Time) ([]Entry, error) {
	var out []Entry
	err := j.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(entriesBucket)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			e, err := decode(k, v)
			if err != nil {
				return err
			}
			if e.At.Before(t) {
				break
			}
			out = append(out, e)
		}
		return nil
	})
	slices.Reverse(out)
	return out, err
}

// Prune deletes the entries recorded before t that need no one any more:
// settled, and checked by a person if they needed one. Open and unchecked
// entries are kept whatever their age. When any went, the file is
// rewritten without them (bbolt would keep their bytes in free pages). It
// returns how many went.
func (j *Journal) Prune(t time.Time) (int, error) {
	n := 0
	err := j.update(func(tx *bolt.Tx) error {
		c := tx.Bucket(entriesBucket).Cursor()
		for k, v := c.First(); k != nil; {
			e, err := decode(k, v)
			if err != nil {
				return err
			}
			if !e.At.Before(t) {
				return nil // entries are in about the order of At; a straggler goes next time
			}
			if e.NeedsAttention() {
				k, v = c.Next()
				continue
			}
			next := key(binary.BigEndian.Uint64(k) + 1)
			if err := unindex(tx, &e); err != nil {
				return err
			}
			if err := c.Delete(); err != nil {
				return err
			}
			n++
			k, v = c.Seek(next) // a cursor may skip an entry after Delete
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if n > 0 {
		if err := j.file.Compact(context.Background()); err != nil {
			return n, fmt.Errorf("journal: %d entries pruned, but the file could not be rewritten without them: %w", n, err)
		}
	}
	return n, nil
}

// attention lists the indexed entries keep accepts, oldest first.
func (j *Journal) attention(keep func(Entry) bool) ([]Entry, error) {
	var out []Entry
	err := j.view(func(tx *bolt.Tx) error {
		idx, b := tx.Bucket(attentionBucket), tx.Bucket(entriesBucket)
		if idx == nil || b == nil {
			return nil
		}
		return idx.ForEach(func(k, _ []byte) error {
			e, err := decode(k, b.Get(k))
			if err != nil {
				return err
			}
			if keep(e) {
				out = append(out, e)
			}
			return nil
		})
	})
	return out, err
}

func decode(k, v []byte) (Entry, error) {
	var e Entry
	if err := json.Unmarshal(v, &e); err != nil {
		return e, fmt.Errorf("journal entry %x: %w", k, err)
	}
	return e, nil
}

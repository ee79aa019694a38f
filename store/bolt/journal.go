package bolt

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/journal"
	"github.com/bookbot/bookbot/internal/boltfile"
)

// Journal is the write journal (journal.Store) in the store. Each
// operation is a transaction of its own, the file opened and closed
// around it, so that `bookbot audit` can read the journal while `bookbot
// run` serves; writes are a handful a minute, so the open costs nothing
// that matters.
//
// It keeps only what settling a write and auditing it need (see
// journal.Entry). Prune deletes old entries and rewrites the file, so
// their bytes do not linger in free pages.
//
// It is safe for concurrent use by one process; other processes may read
// it (Options.ReadOnly).
type Journal struct {
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Owner names this process in the entries it begins. Recover leaves
	// the entries of its own owner alone: they are still in flight here.
	Owner string

	file     *boltfile.File
	readOnly bool
}

var _ journal.Store = (*Journal)(nil)

// Journal is the write journal. The entries it begins name db's Owner.
func (db *DB) Journal() *Journal {
	return &Journal{Owner: db.owner, file: db.file, readOnly: db.readOnly}
}

// Path is the journal's file.
func (j *Journal) Path() string { return j.file.Path() }

func (j *Journal) now() time.Time {
	if j.Now != nil {
		return j.Now()
	}
	return time.Now()
}

func (j *Journal) update(fn func(*bbolt.Tx) error) error {
	return j.file.Update(context.Background(), fn)
}

// view runs fn on the journal; a read-only journal that does not exist yet
// reads as empty.
func (j *Journal) view(fn func(*bbolt.Tx) error) error {
	err := j.file.View(context.Background(), fn)
	if j.readOnly && errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

func putEntry(tx *bbolt.Tx, e *journal.Entry) error {
	v, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if err := tx.Bucket(journalEntries).Put(seqKey(e.Seq), v); err != nil {
		return err
	}
	if e.NeedsAttention() {
		return tx.Bucket(journalAttention).Put(seqKey(e.Seq), nil)
	}
	return tx.Bucket(journalAttention).Delete(seqKey(e.Seq))
}

// indexEntry adds e to the indexes of creates and cancels.
func indexEntry(tx *bbolt.Tx, e *journal.Entry) error {
	if k, ok := journal.CreateKey(e.Write); ok {
		if err := tx.Bucket(journalCreates).Put(append(k, seqKey(e.Seq)...), nil); err != nil {
			return err
		}
	}
	if id, ok := e.CancelledBooking(); ok {
		return tx.Bucket(journalCancelled).Put([]byte(id), seqKey(e.Seq))
	}
	return nil
}

// unindexEntry removes e from the indexes, for Prune.
func unindexEntry(tx *bbolt.Tx, e *journal.Entry) error {
	if k, ok := journal.CreateKey(e.Write); ok {
		if err := tx.Bucket(journalCreates).Delete(append(k, seqKey(e.Seq)...)); err != nil {
			return err
		}
	}
	c := tx.Bucket(journalCancelled)
	if e.Op == booking.OpCancel && string(c.Get([]byte(e.BookingID))) == string(seqKey(e.Seq)) {
		return c.Delete([]byte(e.BookingID))
	}
	return nil
}

// priorCreate finds the newest earlier create of w's event, start and attendee
// that stands in the way of another: in flight, confirmed and not
// cancelled through bookbot since, or unclear and not checked by a person.
func priorCreate(tx *bbolt.Tx, w booking.Write) (*booking.Prior, error) {
	k, ok := journal.CreateKey(w)
	if !ok {
		return nil, nil
	}
	entries, cancelled := tx.Bucket(journalEntries), tx.Bucket(journalCancelled)
	c := tx.Bucket(journalCreates).Cursor()
	var found *booking.Prior
	for ik, _ := c.Seek(k); ik != nil && len(ik) == len(k)+8 && string(ik[:len(k)]) == string(k); ik, _ = c.Next() {
		e, err := decodeEntry(ik[len(k):], entries.Get(ik[len(k):]))
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
func (j *Journal) change(seq uint64, fn func(*journal.Entry) error) (journal.Entry, error) {
	var e journal.Entry
	err := j.update(func(tx *bbolt.Tx) error {
		v := tx.Bucket(journalEntries).Get(seqKey(seq))
		if v == nil {
			return fmt.Errorf("journal entry %d: %w", seq, journal.ErrNoEntry)
		}
		if err := json.Unmarshal(v, &e); err != nil {
			return err
		}
		if err := fn(&e); err != nil {
			return err
		}
		if err := putEntry(tx, &e); err != nil {
			return err
		}
		return indexEntry(tx, &e)
	})
	return e, err
}

// Begin records a write before it is sent; the returned function records
// its outcome. A create that an earlier one stands in the way of (see
// booking.Journal) is refused with a *booking.DuplicateError and not
// recorded. It implements booking.Journal.
func (j *Journal) Begin(_ context.Context, w booking.Write) (func(*booking.Result) error, error) {
	e := journal.Entry{At: j.now(), Owner: j.Owner, Write: w}
	err := j.update(func(tx *bbolt.Tx) error {
		p, err := priorCreate(tx, w)
		if err != nil {
			return err
		}
		if p != nil {
			return &booking.DuplicateError{Prior: *p}
		}
		seq, err := tx.Bucket(journalEntries).NextSequence()
		if err != nil {
			return err
		}
		e.Seq = seq
		if err := putEntry(tx, &e); err != nil {
			return err
		}
		return indexEntry(tx, &e)
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
func (j *Journal) Finish(seq uint64, res *booking.Result, recovered bool) (journal.Entry, error) {
	return j.change(seq, func(e *journal.Entry) error {
		e.Settle(res, recovered, j.now())
		return nil
	})
}

// Settle records res, an outcome the bookings list showed, for entry seq
// if it has none yet. It implements booking.Journal.
func (j *Journal) Settle(_ context.Context, seq uint64, res *booking.Result) error {
	_, err := j.change(seq, func(e *journal.Entry) error {
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
func (j *Journal) Recover(ctx context.Context, settle func(context.Context, booking.Write) *booking.Result) ([]journal.Entry, error) {
	open, err := j.attention(func(e journal.Entry) bool { return e.LeftBehind(j.Owner) })
	if err != nil {
		return nil, err
	}
	var done []journal.Entry
	for _, e := range open {
		e, err = j.Finish(e.Seq, journal.Reconcile(ctx, e, settle), true)
		if err != nil {
			return done, err
		}
		done = append(done, e)
	}
	return done, nil
}

// Unreported lists the entries that need a person and have not yet been
// put in front of one, oldest first.
func (j *Journal) Unreported() ([]journal.Entry, error) {
	return j.attention(func(e journal.Entry) bool { return e.NeedsReview && e.ReportedAt.IsZero() })
}

// MarkReported records that entry seq was reported, and where.
func (j *Journal) MarkReported(seq uint64, to string) error {
	_, err := j.change(seq, func(e *journal.Entry) error {
		e.ReportedAt, e.ReportedTo = j.now(), to
		return nil
	})
	return err
}

// MarkReviewed records that a person checked entry seq. Checking it again
// keeps the first record; the entry returned says who it was.
func (j *Journal) MarkReviewed(seq uint64, by string) (journal.Entry, error) {
	return j.change(seq, func(e *journal.Entry) error {
		if e.ReviewedAt.IsZero() {
			e.ReviewedAt, e.ReviewedBy = j.now(), by
		}
		return nil
	})
}

// AwaitingReview counts the entries that need a person and that no one has
// marked checked.
func (j *Journal) AwaitingReview() (int, error) {
	list, err := j.attention(journal.Entry.AwaitingReview)
	return len(list), err
}

// Entry returns entry seq.
func (j *Journal) Entry(seq uint64) (journal.Entry, error) {
	var e journal.Entry
	err := j.view(func(tx *bbolt.Tx) error {
		var v []byte
		if b := tx.Bucket(journalEntries); b != nil {
			v = b.Get(seqKey(seq))
		}
		if v == nil {
			return fmt.Errorf("journal entry %d: %w", seq, journal.ErrNoEntry)
		}
		var err error
		e, err = decodeEntry(seqKey(seq), v)
		return err
	})
	return e, err
}

// Since lists the entries recorded at or after t, oldest first. Entries are
// read from the newest back, so a short window reads little of a long
// history.
func (j *Journal) Since(t time.Time) ([]journal.Entry, error) {
	var out []journal.Entry
	err := j.view(func(tx *bbolt.Tx) error {
		b := tx.Bucket(journalEntries)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			e, err := decodeEntry(k, v)
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
	err := j.update(func(tx *bbolt.Tx) error {
		c := tx.Bucket(journalEntries).Cursor()
		for k, v := c.First(); k != nil; {
			e, err := decodeEntry(k, v)
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
			next := seqKey(binary.BigEndian.Uint64(k) + 1)
			if err := unindexEntry(tx, &e); err != nil {
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
func (j *Journal) attention(keep func(journal.Entry) bool) ([]journal.Entry, error) {
	var out []journal.Entry
	err := j.view(func(tx *bbolt.Tx) error {
		idx, b := tx.Bucket(journalAttention), tx.Bucket(journalEntries)
		if idx == nil || b == nil {
			return nil
		}
		return idx.ForEach(func(k, _ []byte) error {
			e, err := decodeEntry(k, b.Get(k))
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

func decodeEntry(k, v []byte) (journal.Entry, error) {
	var e journal.Entry
	if err := json.Unmarshal(v, &e); err != nil {
		return e, fmt.Errorf("journal entry %x: %w", k, err)
	}
	return e, nil
}

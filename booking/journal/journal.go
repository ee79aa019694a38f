// Package journal is bookbot's durable record of writes to the booking API.
// Every create and cancel is written down before its request is sent (who
// asked, what, when) and its outcome after, so a write whose process died
// in flight is never forgotten: on start it is reconciled against the
// bookings list and put in front of a person.
//
// The journal is one bbolt file, opened for each operation and closed
// again, so that `bookbot audit` can read it while `bookbot run` serves.
// Writes are a handful a minute, so the open costs nothing that matters.
package journal

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/bookbot/bookbot/booking"
)

// FileName is the journal's file under the state directory.
const FileName = "journal.db"

var (
	entriesBucket = []byte("entries")
	// attentionBucket indexes the entries that are open or not yet
	// reviewed, so finding them does not read the whole history.
	attentionBucket = []byte("attention")
)

// lockWait bounds the wait for another process's hold on the file (an audit
// reading it); bookbot holds it for milliseconds at a time.
const lockWait = 5 * time.Second

// Entry is one write: the intent, and once known, its outcome and review.
type Entry struct {
	Seq uint64    `json:"seq"`
	At  time.Time `json:"at"` // recorded, just before the request was sent
	booking.Write

	// Outcome is empty while the write is in flight, and stays empty when
	// the process died before the answer was recorded.
	Outcome    booking.Outcome `json:"outcome,omitempty"`
	DoneAt     time.Time       `json:"done_at,omitzero"`
	Created    string          `json:"created,omitempty"`   // the booking a create made (or that the list shows)
	Verified   bool            `json:"verified,omitempty"`  // the bookings list agrees
	Recovered  bool            `json:"recovered,omitempty"` // settled after a restart, by listing
	RetryAfter time.Duration   `json:"retry_after,omitempty"`
	Seen       []string        `json:"seen,omitempty"`

	// NeedsReview marks an outcome a person must look at: unclear, or
	// recovered after a restart. Reported says it was put in front of one.
	NeedsReview bool      `json:"needs_review,omitempty"`
	ReportedAt  time.Time `json:"reported_at,omitzero"`
	ReportedTo  string    `json:"reported_to,omitempty"`
	ReviewedAt  time.Time `json:"reviewed_at,omitzero"`
	ReviewedBy  string    `json:"reviewed_by,omitempty"`
}

// Open reports whether the write has no recorded outcome.
func (e Entry) Open() bool { return e.Outcome == "" }

// AwaitingReview reports whether the entry needs a person and none has
// marked it checked.
func (e Entry) AwaitingReview() bool { return e.NeedsReview && e.ReviewedAt.IsZero() }

// needsAttention says whether the entry belongs in the attention index.
func (e Entry) needsAttention() bool { return e.Open() || e.AwaitingReview() }

// Journal is the record under a state directory. It is safe for concurrent
// use by one process; other processes may read it (Open with ReadOnly).
type Journal struct {
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Log receives failures to record an outcome (nil: discarded).
	Log *slog.Logger

	path     string
	readOnly bool
	mu       sync.Mutex // one bbolt handle at a time in this process
}

// Options for Open.
type Options struct {
	// ReadOnly opens an existing journal for reading only; it is not
	// created when missing (Entries then returns none).
	ReadOnly bool
}

// Open opens (creating, unless read-only) the journal under dir.
func Open(dir string, opts Options) (*Journal, error) {
	j := &Journal{path: filepath.Join(dir, FileName), readOnly: opts.ReadOnly}
	if opts.ReadOnly {
		return j, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	err := j.update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(entriesBucket); err != nil {
			return err
		}
		_, err := tx.CreateBucketIfNotExists(attentionBucket)
		return err
	})
	if err != nil {
		return nil, err
	}
	return j, nil
}

// Path is the journal's file.
func (j *Journal) Path() string { return j.path }

func (j *Journal) now() time.Time {
	if j.Now != nil {
		return j.Now()
	}
	return time.Now()
}

func (j *Journal) log() *slog.Logger {
	if j.Log != nil {
		return j.Log
	}
	return slog.New(slog.DiscardHandler)
}

func (j *Journal) db() (*bolt.DB, error) {
	db, err := bolt.Open(j.path, 0o600, &bolt.Options{Timeout: lockWait, ReadOnly: j.readOnly})
	if errors.Is(err, os.ErrNotExist) && j.readOnly {
		return nil, errNoJournal
	}
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", j.path, err)
	}
	return db, nil
}

var errNoJournal = errors.New("no journal yet")

// ErrNoEntry means the journal does not hold the entry: it was pruned (see
// Prune), or never existed.
var ErrNoEntry = errors.New("no such entry")

func (j *Journal) update(fn func(*bolt.Tx) error) error {
	if j.readOnly {
		return errors.New("journal opened read-only")
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	db, err := j.db()
	if err != nil {
		return err
	}
	if err := db.Update(fn); err != nil {
		_ = db.Close()
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	return db.Close()
}

func (j *Journal) view(fn func(*bolt.Tx) error) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	db, err := j.db()
	if errors.Is(err, errNoJournal) {
		return nil
	}
	if err != nil {
		return err
	}
	defer db.Close()
	return db.View(fn)
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
	if e.needsAttention() {
		return tx.Bucket(attentionBucket).Put(key(e.Seq), nil)
	}
	return tx.Bucket(attentionBucket).Delete(key(e.Seq))
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
		return put(tx, &e)
	})
	return e, err
}

// Begin records a write before it is sent; the returned function records
// its outcome. It implements booking.Journal.
func (j *Journal) Begin(_ context.Context, w booking.Write) (func(*booking.Result), error) {
	e := Entry{At: j.now(), Write: w}
	err := j.update(func(tx *bolt.Tx) error {
		seq, err := tx.Bucket(entriesBucket).NextSequence()
		if err != nil {
			return err
		}
		e.Seq = seq
		return put(tx, &e)
	})
	if err != nil {
		return nil, err
	}
	return func(res *booking.Result) {
		if _, err := j.Finish(e.Seq, res, false); err != nil {
			// The write happened; only its record is missing. On the next
			// start it is reconciled like one whose process died.
			j.log().Error("journal: the outcome of a write could not be recorded", "seq", e.Seq, "op", string(w.Op), "err", err)
		}
	}, nil
}

// Finish records the outcome of entry seq. recovered says it was settled
// after a restart.
func (j *Journal) Finish(seq uint64, res *booking.Result, recovered bool) (Entry, error) {
	return j.change(seq, func(e *Entry) error {
		e.Outcome, e.DoneAt = res.Outcome, j.now()
		e.Verified, e.Recovered, e.RetryAfter = res.Verified, recovered, res.RetryAfter
		e.Seen = res.Seen
		switch {
		case e.Op != booking.OpCreate:
		case res.Booking != nil:
			e.Created = res.Booking.ID
		case res.Receipt != nil:
			e.Created = res.Receipt.ID
		}
		e.NeedsReview = !e.DryRun && (res.NeedsHuman() || recovered)
		return nil
	})
}

// Recover settles every write whose outcome was never recorded, with
// settle (booking.Client.Reconcile, which only lists). It returns the
// entries it settled.
func (j *Journal) Recover(ctx context.Context, settle func(context.Context, booking.Write) *booking.Result) ([]Entry, error) {
	open, err := j.attention(Entry.Open)
	if err != nil {
		return nil, err
	}
	var done []Entry
	for _, e := range open {
		if e.DryRun {
			e, err = j.Finish(e.Seq, &booking.Result{Outcome: booking.DryRun, Seen: []string{"dry run: nothing was sent"}}, true)
		} else {
			e, err = j.Finish(e.Seq, settle(ctx, e.Write), true)
		}
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
// entries are kept whatever their age. bbolt reuses the freed pages, so the
// file stops growing rather than shrinks. It returns how many went.
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
			if e.needsAttention() {
				k, v = c.Next()
				continue
			}
			next := key(binary.BigEndian.Uint64(k) + 1)
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

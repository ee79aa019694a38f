package pg

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/journal"
)

// Journal is the write journal in the database (bookbot_journal_entries),
// for the process named owner: the entries it begins carry that name, and
// its Recover leaves them alone, as *journal.Journal's Owner. Every
// replica's handle shares one journal, and one refusal of duplicate
// creates.
//
// Recover takes every other owner's writes in flight for left behind by a
// process that is gone, as *journal.Journal's does: where replicas run at
// once, it settles those of live ones too (each entry once, however many
// recover at once).
//
// The methods of journal.Store that take no context wait at most
// JournalWait for the database.
func (db *DB) Journal(owner string, opts ...JournalOption) journal.Store {
	s := &journalStore{pool: db.pool, owner: owner, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s
}

// JournalOption configures Journal.
type JournalOption func(*journalStore)

// JournalClock makes now the clock of the entries' times (by default
// time.Now).
func JournalClock(now func() time.Time) JournalOption {
	return func(s *journalStore) { s.now = now }
}

// JournalLeftAfter makes Recover leave alone another owner's write in
// flight until it began more than d ago. Replicas run side by side, so an
// owner other than this one may well be alive; a write's every step has
// its own bound, so one in flight longer than d belongs to a replica that
// died. 0 (the default) settles every other owner's write at once.
func JournalLeftAfter(d time.Duration) JournalOption {
	return func(s *journalStore) { s.leftAfter = d }
}

// JournalWait bounds each call of the journal's methods that take no
// context.
const JournalWait = 30 * time.Second

type journalStore struct {
	pool      *pgxpool.Pool
	owner     string
	now       func() time.Time
	leftAfter time.Duration
}

func journalErr(what string, err error) error {
	return fmt.Errorf("journal (postgres): %s: %w", what, err)
}

// createLockClass is the first key of the advisory lock Begin takes on a
// create key, "jrnl" in ASCII; the second is 32 bits of the key. It is of
// the two-key form, as the leaders' (whose class is "book"), which never
// meets Migrate's one-key lock.
const createLockClass int32 = 0x6a726e6c

// Begin records a write before it is sent, refusing a create that an
// earlier one stands in the way of (journal.Entry.Stands), on any replica.
//
// The check and the insert are made one step by a transaction-level
// advisory lock on the create key, taken in a statement of its own before
// the check, at READ COMMITTED:
//
//   - Without it, two transactions could both find no earlier create and
//     both insert: at READ COMMITTED neither sees the other's uncommitted
//     row, and no constraint stands between them.
//   - A unique index cannot be the constraint: whether an earlier create
//     stands depends on its outcome and review, which change after the
//     insert, and on cancels, which are other rows; of several that stand
//     (a cancel pruned may bring one back) the newest is named.
//   - SERIALIZABLE would catch the race too, but as a failure to retry,
//     and its predicate locks fail unrelated creates now and then as well.
//   - A lock on a key row (SELECT … FOR UPDATE) needs the row to exist
//     first, and to outlive the entries it guards, keeping a hash of the
//     attendee's email past Prune. The advisory lock needs no row, ends
//     with the transaction (or the connection, if the process dies), and
//     works through a transaction-pooling proxy.
//
// The lock serializes the Begins of one key (and, now and then, two whose
// keys share 32 bits); the transaction holding it commits its insert before
// it lets go. The check, a statement begun after the lock was granted,
// takes its snapshot then, at READ COMMITTED, and sees that insert. At
// REPEATABLE READ or SERIALIZABLE the snapshot would be the lock
// statement's, from before the wait: the isolation is set explicitly, not
// left to the database's default. Other changes (an outcome, a review, a
// cancel) only ever stop an earlier create standing, so none of them
// racing a Begin can let two creates pass.
func (s *journalStore) Begin(ctx context.Context, w booking.Write) (func(*booking.Result) error, error) {
	e := journal.Entry{At: s.now(), Owner: s.owner, Write: w}
	key, isCreate := journal.CreateKey(w) // key is nil, so create_key NULL, when not
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
		// A create's lock is taken in the statement that draws its number.
		draw, args := "SELECT nextval('bookbot_journal_entries_seq_seq')", []any(nil)
		if isCreate {
			draw += " FROM pg_advisory_xact_lock($1::int4, $2::int4)"
			args = []any{createLockClass, int32(binary.BigEndian.Uint32(key))}
		}
		var seq int64
		if err := tx.QueryRow(ctx, draw, args...).Scan(&seq); err != nil {
			return journalErr("begin", err)
		}
		if isCreate {
			p, err := prior(ctx, tx, key)
			if err != nil {
				return err
			}
			if p != nil {
				return &booking.DuplicateError{Prior: *p}
			}
		}
		e.Seq = uint64(seq)
		row, err := columns(&e)
		if err != nil {
			return journalErr("begin", err)
		}
		atS, atNS := unix(e.At)
		_, err = tx.Exec(ctx, `INSERT INTO bookbot_journal_entries
			(seq, at_s, at_ns, create_key, created, cancelled, attention, entry)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			seq, atS, atNS, key, row.created, row.cancelled, row.attention, row.entry)
		if err != nil {
			return journalErr("begin", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return func(res *booking.Result) error {
		_, err := s.Finish(e.Seq, res, false)
		return err
	}, nil
}

// prior is the newest earlier create under key that stands in the way of
// another, or nil.
func prior(ctx context.Context, tx pgx.Tx, key []byte) (*booking.Prior, error) {
	rows, err := tx.Query(ctx, `SELECT e.seq, e.entry,
			EXISTS (SELECT 1 FROM bookbot_journal_entries c WHERE c.cancelled = e.created)
		FROM bookbot_journal_entries e WHERE e.create_key = $1 ORDER BY e.seq DESC`, key)
	if err != nil {
		return nil, journalErr("earlier creates", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			seq       int64
			v         []byte
			cancelled bool
		)
		if err := rows.Scan(&seq, &v, &cancelled); err != nil {
			return nil, journalErr("earlier creates", err)
		}
		e, err := decode(seq, v)
		if err != nil {
			return nil, err
		}
		if e.Stands(cancelled) {
			p := e.Prior()
			return &p, nil
		}
	}
	if err := rows.Err(); err != nil {
		return nil, journalErr("earlier creates", err)
	}
	return nil, nil
}

// row is what an entry's columns other than its key and time hold.
type row struct {
	created, cancelled []byte // NULL when nil
	attention          bool
	entry              []byte
}

func columns(e *journal.Entry) (row, error) {
	v, err := json.Marshal(e)
	if err != nil {
		return row{}, err
	}
	r := row{attention: e.NeedsAttention(), entry: v}
	if e.Created != "" {
		r.created = []byte(e.Created)
	}
	if id, ok := e.CancelledBooking(); ok {
		r.cancelled = []byte(id)
	}
	return r, nil
}

func decode(seq int64, v []byte) (journal.Entry, error) {
	var e journal.Entry
	if err := json.Unmarshal(v, &e); err != nil {
		return e, journalErr(fmt.Sprintf("entry %d", seq), err)
	}
	return e, nil
}

// waitCtx bounds a method that takes no context.
func waitCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), JournalWait)
}

// errSettled stops a change of an entry settled since it was read.
var errSettled = errors.New("settled meanwhile")

// change loads entry seq, locked until the change commits, lets fn change
// it and stores it.
func (s *journalStore) change(ctx context.Context, seq uint64, fn func(*journal.Entry) error) (journal.Entry, error) {
	var e journal.Entry
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var v []byte
		err := tx.QueryRow(ctx, "SELECT entry FROM bookbot_journal_entries WHERE seq = $1 FOR UPDATE", int64(seq)).Scan(&v)
		if errors.Is(err, pgx.ErrNoRows) {
			return journalErr(fmt.Sprintf("journal entry %d", seq), journal.ErrNoEntry)
		}
		if err != nil {
			return journalErr(fmt.Sprintf("entry %d", seq), err)
		}
		if e, err = decode(int64(seq), v); err != nil {
			return err
		}
		if err := fn(&e); err != nil {
			return err
		}
		r, err := columns(&e)
		if err != nil {
			return journalErr(fmt.Sprintf("entry %d", seq), err)
		}
		_, err = tx.Exec(ctx, `UPDATE bookbot_journal_entries
			SET created = $2, cancelled = $3, attention = $4, entry = $5 WHERE seq = $1`,
			int64(seq), r.created, r.cancelled, r.attention, r.entry)
		if err != nil {
			return journalErr(fmt.Sprintf("entry %d", seq), err)
		}
		return nil
	})
	return e, err
}

// Finish records the outcome of entry seq. recovered says it was settled
// after a restart.
func (s *journalStore) Finish(seq uint64, res *booking.Result, recovered bool) (journal.Entry, error) {
	ctx, cancel := waitCtx()
	defer cancel()
	return s.change(ctx, seq, func(e *journal.Entry) error {
		e.Settle(res, recovered, s.now())
		return nil
	})
}

// Settle records res, an outcome the bookings list showed, for entry seq
// if it has none yet, on any replica; one settled meanwhile is left as it
// is.
func (s *journalStore) Settle(ctx context.Context, seq uint64, res *booking.Result) error {
	ctx, cancel := context.WithTimeout(ctx, JournalWait)
	defer cancel()
	_, err := s.change(ctx, seq, func(e *journal.Entry) error {
		if !e.Open() {
			return errSettled
		}
		e.Settle(res, false, s.now())
		return nil
	})
	if errors.Is(err, errSettled) {
		return nil
	}
	return err
}

// Recover settles every write in flight that another owner (or none)
// began, with settle. Replicas may recover at once: an entry settled by
// another since it was listed here (or by its own process, still alive) is
// left as that one recorded it, and not returned.
func (s *journalStore) Recover(ctx context.Context, settle func(context.Context, booking.Write) *booking.Result) ([]journal.Entry, error) {
	now := s.now()
	open, err := s.attention(ctx, func(e journal.Entry) bool {
		return e.LeftBehind(s.owner) && (s.leftAfter == 0 || now.Sub(e.At) > s.leftAfter)
	})
	if err != nil {
		return nil, err
	}
	var done []journal.Entry
	for _, e := range open {
		res := journal.Reconcile(ctx, e, settle)
		fctx, cancel := waitCtx()
		e, err := s.change(fctx, e.Seq, func(e *journal.Entry) error {
			if !e.Open() {
				return errSettled
			}
			e.Settle(res, true, s.now())
			return nil
		})
		cancel()
		if errors.Is(err, errSettled) {
			continue
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
func (s *journalStore) Unreported() ([]journal.Entry, error) {
	ctx, cancel := waitCtx()
	defer cancel()
	return s.attention(ctx, func(e journal.Entry) bool { return e.NeedsReview && e.ReportedAt.IsZero() })
}

// MarkReported records that entry seq was reported, and where.
func (s *journalStore) MarkReported(seq uint64, to string) error {
	ctx, cancel := waitCtx()
	defer cancel()
	_, err := s.change(ctx, seq, func(e *journal.Entry) error {
		e.ReportedAt, e.ReportedTo = s.now(), to
		return nil
	})
	return err
}

// MarkReviewed records that a person checked entry seq. Checking it again,
// on any replica, keeps the first record; the entry returned says who it
// was.
func (s *journalStore) MarkReviewed(seq uint64, by string) (journal.Entry, error) {
	ctx, cancel := waitCtx()
	defer cancel()
	return s.change(ctx, seq, func(e *journal.Entry) error {
		if e.ReviewedAt.IsZero() {
			e.ReviewedAt, e.ReviewedBy = s.now(), by
		}
		return nil
	})
}

// AwaitingReview counts the entries that need a person and that no one has
// marked checked.
func (s *journalStore) AwaitingReview() (int, error) {
	ctx, cancel := waitCtx()
	defer cancel()
	list, err := s.attention(ctx, journal.Entry.AwaitingReview)
	return len(list), err
}

// Entry returns entry seq.
func (s *journalStore) Entry(seq uint64) (journal.Entry, error) {
	ctx, cancel := waitCtx()
	defer cancel()
	var v []byte
	err := s.pool.QueryRow(ctx, "SELECT entry FROM bookbot_journal_entries WHERE seq = $1", int64(seq)).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return journal.Entry{}, journalErr(fmt.Sprintf("journal entry %d", seq), journal.ErrNoEntry)
	}
	if err != nil {
		return journal.Entry{}, journalErr(fmt.Sprintf("entry %d", seq), err)
	}
	return decode(int64(seq), v)
}

// Since lists the entries recorded at or after t, oldest first.
func (s *journalStore) Since(t time.Time) ([]journal.Entry, error) {
	ctx, cancel := waitCtx()
	defer cancel()
	tS, tNS := unix(t)
	return s.list(ctx, "since", `SELECT seq, entry FROM bookbot_journal_entries
		WHERE (at_s, at_ns) >= ($1::bigint, $2::integer) ORDER BY seq`, nil, tS, tNS)
}

// Prune deletes the entries recorded before t that need no one any more:
// settled, and checked by a person if they needed one. Entries in flight
// and unchecked ones are kept whatever their age. It returns how many
// went. Their rows are gone at once for every reader; their bytes stay in
// the table's pages until vacuum reuses them, and in the WAL and backups
// as long as those are kept.
func (s *journalStore) Prune(t time.Time) (int, error) {
	ctx, cancel := waitCtx()
	defer cancel()
	tS, tNS := unix(t)
	tag, err := s.pool.Exec(ctx, `DELETE FROM bookbot_journal_entries
		WHERE (at_s, at_ns) < ($1::bigint, $2::integer) AND NOT attention`, tS, tNS)
	if err != nil {
		return 0, journalErr("prune", err)
	}
	return int(tag.RowsAffected()), nil
}

// attention lists the entries in flight or awaiting review that keep
// accepts, oldest first.
func (s *journalStore) attention(ctx context.Context, keep func(journal.Entry) bool) ([]journal.Entry, error) {
	return s.list(ctx, "entries needing attention",
		"SELECT seq, entry FROM bookbot_journal_entries WHERE attention ORDER BY seq", keep)
}

// list runs query, which selects seq and entry, and returns the entries
// keep accepts (all, when it is nil).
func (s *journalStore) list(ctx context.Context, what, query string, keep func(journal.Entry) bool, args ...any) ([]journal.Entry, error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, journalErr(what, err)
	}
	defer rows.Close()
	var out []journal.Entry
	for rows.Next() {
		var (
			seq int64
			v   []byte
		)
		if err := rows.Scan(&seq, &v); err != nil {
			return nil, journalErr(what, err)
		}
		e, err := decode(seq, v)
		if err != nil {
			return nil, err
		}
		if keep == nil || keep(e) {
			out = append(out, e)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, journalErr(what, err)
	}
	return out, nil
}

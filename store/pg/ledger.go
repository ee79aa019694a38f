package pg

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookbot/bookbot/digest"
)

// DigestLedger is the digest's exactly-once ledger in the database, shared
// by every replica on it, with the semantics of digest.Ledger (which
// digest/ledgertest checks, here as for the embedded store). o's clock
// stamps the claims and judges them stale: the replicas' clocks must agree
// to well within o.StaleAfter.
//
// A replica that dies between claiming a date and recording its post
// leaves the claim, a row with posted false, in the table. Nothing takes
// it over: every later Claim of the date, by any replica, returns false,
// so the Runner reports ErrAlreadyPosted. Once the claim is older than
// StaleAfter (10 minutes by default, well beyond a Runner's bound on one
// run), Status reports it Stale, so Done, and each look at it logs an
// error naming the claimant (host, process), telling a person to check the
// channel. This is the file ledger's trade-off, on purpose: the dead
// replica may or may not have reached Slack, and a digest that arrives
// twice is worse than one missed once. When the digest is missing from
// the channel, a person deletes the row (which is what Release does) and
// has it posted again. The same holds for a date's failure notice.
func (db *DB) DigestLedger(o digest.LedgerOptions) digest.Ledger {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown host"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &digestLedger{pool: db.pool, o: o, who: fmt.Sprintf("%s pid %d", host, os.Getpid())}
}

type digestLedger struct {
	pool *pgxpool.Pool
	o    digest.LedgerOptions // Now and Log set
	who  string               // host and process, for claimant
}

// ledgerKind is what of a date is posted: the kind column.
type ledgerKind string

const (
	ledgerDigest ledgerKind = "digest"
	ledgerNotice ledgerKind = "failure_notice"
)

// postInfo is digest.PostInfo as stored. They convert to each other, so a
// field added there fails to compile here rather than go unsaved.
type postInfo struct {
	At        time.Time
	Channel   string
	TS        string
	Entries   int
	Empty     bool
	Uncertain bool
}

// ledgerDate is day's calendar date in day's own location, as a date.
func ledgerDate(day time.Time) pgtype.Date {
	y, m, d := day.Date()
	return pgtype.Date{Time: time.Date(y, m, d, 0, 0, 0, 0, time.UTC), Valid: true}
}

// ledgerKey names a date and kind in errors and logs, as the file ledger
// names its files.
func ledgerKey(day time.Time, k ledgerKind) string {
	s := day.Format(time.DateOnly)
	if k == ledgerNotice {
		s += ".failure"
	}
	return s
}

func ledgerErr(what string, day time.Time, k ledgerKind, err error) error {
	return fmt.Errorf("digest ledger (postgres): %s %s: %w", what, ledgerKey(day, k), err)
}

func (l *digestLedger) Claim(ctx context.Context, day time.Time) (bool, error) {
	return l.claim(ctx, day, ledgerDigest)
}

func (l *digestLedger) Posted(ctx context.Context, day time.Time, info digest.PostInfo) error {
	return l.posted(ctx, day, ledgerDigest, info)
}

func (l *digestLedger) Release(ctx context.Context, day time.Time) error {
	return l.release(ctx, day, ledgerDigest)
}

func (l *digestLedger) Status(ctx context.Context, day time.Time) (digest.Status, error) {
	return l.status(ctx, day, ledgerDigest)
}

func (l *digestLedger) ClaimNotice(ctx context.Context, day time.Time) (bool, error) {
	return l.claim(ctx, day, ledgerNotice)
}

func (l *digestLedger) NoticePosted(ctx context.Context, day time.Time, info digest.PostInfo) error {
	return l.posted(ctx, day, ledgerNotice, info)
}

func (l *digestLedger) ReleaseNotice(ctx context.Context, day time.Time) error {
	return l.release(ctx, day, ledgerNotice)
}

// ledgerUndoTimeout bounds undoing a claim whose outcome is unknown.
const ledgerUndoTimeout = 10 * time.Second

// claim inserts the claim unless the date holds one, or a post; the
// primary key makes one of concurrent claims, from any replica, win.
func (l *digestLedger) claim(ctx context.Context, day time.Time, k ledgerKind) (bool, error) {
	token := make([]byte, 8)
	_, _ = rand.Read(token) // never fails
	claimant := l.who + " claim " + hex.EncodeToString(token)
	atS, atNS := unix(l.o.Now())
	tag, err := l.pool.Exec(ctx, `INSERT INTO bookbot_digest_ledger (day, kind, claimed_s, claimed_ns, claimant)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`, ledgerDate(day), string(k), atS, atNS, claimant)
	if err != nil {
		// The insert may have been committed all the same (the answer was
		// lost): undo this claim, and only this one, so the date is not
		// blocked by a claim nobody owns.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ledgerUndoTimeout)
		defer cancel()
		if _, uerr := l.pool.Exec(uctx, `DELETE FROM bookbot_digest_ledger
			WHERE day = $1 AND kind = $2 AND claimant = $3 AND NOT posted`, ledgerDate(day), string(k), claimant); uerr != nil {
			l.o.Log.Error("digest: undoing a claim that failed failed too; if it was recorded, it will go stale and the date be treated as posted",
				slog.String("key", ledgerKey(day, k)), slog.String("claimant", claimant), slog.Any("err", uerr))
		}
		return false, ledgerErr("claim", day, k, err)
	}
	if tag.RowsAffected() == 1 {
		return true, nil
	}
	if _, err := l.status(ctx, day, k); err != nil { // logs a stale claim
		return false, err
	}
	return false, nil
}

// posted records the post, on the claim if there is one (keeping its time
// and claimant), or on a row of its own; again, it replaces the record.
func (l *digestLedger) posted(ctx context.Context, day time.Time, k ledgerKind, info digest.PostInfo) error {
	p := postInfo(info)
	atS, atNS := unix(p.At)
	_, err := l.pool.Exec(ctx, `INSERT INTO bookbot_digest_ledger
		(day, kind, posted, at_s, at_ns, channel, ts, entries, empty, uncertain)
		VALUES ($1, $2, true, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (day, kind) DO UPDATE SET posted = true, at_s = excluded.at_s, at_ns = excluded.at_ns,
			channel = excluded.channel, ts = excluded.ts, entries = excluded.entries,
			empty = excluded.empty, uncertain = excluded.uncertain`,
		ledgerDate(day), string(k), atS, atNS, p.Channel, p.TS, int64(p.Entries), p.Empty, p.Uncertain)
	if err != nil {
		return ledgerErr("record", day, k, err)
	}
	return nil
}

// release deletes the claim unless the post was recorded on it, and fails
// when it was: the check and the delete are one statement.
func (l *digestLedger) release(ctx context.Context, day time.Time, k ledgerKind) error {
	var posted bool
	err := l.pool.QueryRow(ctx, `WITH released AS (
			DELETE FROM bookbot_digest_ledger WHERE day = $1 AND kind = $2 AND NOT posted
		)
		SELECT posted FROM bookbot_digest_ledger WHERE day = $1 AND kind = $2 AND posted`,
		ledgerDate(day), string(k)).Scan(&posted)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil
	case err != nil:
		return ledgerErr("release", day, k, err)
	}
	return fmt.Errorf("digest ledger (postgres): %s was posted and cannot be released", ledgerKey(day, k))
}

func (l *digestLedger) status(ctx context.Context, day time.Time, k ledgerKind) (digest.Status, error) {
	var (
		claimedS, atS, entries *int64
		claimedNS, atNS        *int32
		claimant, channel, ts  *string
		posted                 bool
		empty, uncertain       *bool
	)
	err := l.pool.QueryRow(ctx, `SELECT claimed_s, claimed_ns, claimant, posted,
			at_s, at_ns, channel, ts, entries, empty, uncertain
		FROM bookbot_digest_ledger WHERE day = $1 AND kind = $2`, ledgerDate(day), string(k)).
		Scan(&claimedS, &claimedNS, &claimant, &posted, &atS, &atNS, &channel, &ts, &entries, &empty, &uncertain)
	if errors.Is(err, pgx.ErrNoRows) {
		return digest.Status{State: digest.StateNone}, nil
	}
	if err != nil {
		return digest.Status{}, ledgerErr("status", day, k, err)
	}
	claimedAt, _ := fromNullUnix(claimedS, claimedNS)
	if !posted {
		who := ""
		if claimant != nil {
			who = *claimant
		}
		return l.o.ClaimStatus(ledgerKey(day, k), claimedAt,
			slog.String("claimant", who), slog.String("table", "bookbot_digest_ledger")), nil
	}
	at, ok := fromNullUnix(atS, atNS)
	if !ok || channel == nil || ts == nil || entries == nil || empty == nil || uncertain == nil {
		return digest.Status{}, ledgerErr("status", day, k, errors.New("a posted row without its record"))
	}
	info := postInfo{At: at, Channel: *channel, TS: *ts, Entries: int(*entries), Empty: *empty, Uncertain: *uncertain}
	return digest.Status{State: digest.StatePosted, ClaimedAt: claimedAt, Info: digest.PostInfo(info)}, nil
}

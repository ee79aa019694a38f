package pg_test

import (
	"bytes"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/journal"
	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/digest"
	"github.com/bookbot/bookbot/internal/testutil"
	"github.com/bookbot/bookbot/notices"
	"github.com/bookbot/bookbot/offer"
	"github.com/bookbot/bookbot/outbox"
	"github.com/bookbot/bookbot/personal"
	"github.com/bookbot/bookbot/store/pg"
	"github.com/bookbot/bookbot/store/pg/pgtest"
	"github.com/bookbot/bookbot/store/storetest"
)

// TestStore runs every store's conformance suite against PostgreSQL, each
// subtest on a database of its own copied from the migrated template, in
// parallel; each handle is a pool of its own, as a replica's.
func TestStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) storetest.Backend {
		u := migrated(t)
		return storetest.Backend{
			Outbox:         func() outbox.Store { return open(t, u).Outbox() },
			Notices:        func() notices.Store { return open(t, u).Notices() },
			Personal:       func() personal.Store { return open(t, u).Personal() },
			Offers:         func() offer.Store { return open(t, u).Offers() },
			Accounts:       func() account.Store { return open(t, u).Accounts() },
			AccountNotices: func() notices.Snapshots { return open(t, u).AccountNotices() },
			Types:          func() booking.TypeStore { return open(t, u).Types() },
			Dedupe:         func() bot.Seen { return open(t, u).Dedupe(bot.SeenTTL) },
			Journal: func(owner string, now func() time.Time) journal.Store {
				return open(t, u).Journal(owner, pg.JournalClock(now))
			},
		}
	})
}

var (
	outboxKey = "digest/2026-11-24"
	outboxAt  = time.Date(2026, 11, 23, 17, 0, 3, 5, time.UTC)
)

// The rows are what the migration's comments say, so that a person can
// read and mend them: a key, the claim, the post.
func TestOutboxRows(t *testing.T) {
	t.Parallel()
	u := migrated(t)
	o := open(t, u).Outbox()
	ctx := t.Context()
	if _, err := o.Claim(ctx, outboxKey, outboxAt, outboxAt); err != nil {
		t.Fatal(err)
	}
	if err := o.Posted(ctx, outboxKey, outbox.Post{At: outboxAt, Channel: "C1", TS: "1.2", Detail: []byte(`{"entries":3}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Claim(ctx, "personal/remind\x00U1", outboxAt, outboxAt.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	rows, err := conn(t, u).Query(ctx, `SELECT key, claimed_s, claimed_ns, keep_s, claimant, posted,
			coalesce(channel, '-'), coalesce(detail::text, '-')
		FROM bookbot_outbox ORDER BY key`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var key []byte
		var s, keep int64
		var ns int32
		var claimant, channel, detail string
		var posted bool
		if err := rows.Scan(&key, &s, &ns, &keep, &claimant, &posted, &channel, &detail); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(claimant, outbox.Claimant()+" claim ") {
			t.Errorf("claimant %q, want this process and a token", claimant)
		}
		got = append(got, strings.Join([]string{fmt.Sprintf("%q", key), time.Unix(s, int64(ns)).UTC().Format(time.RFC3339Nano),
			time.Unix(keep, 0).UTC().Format(time.RFC3339), map[bool]string{true: "posted", false: "claimed"}[posted], channel, detail}, " "))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`"digest/2026-11-24" 2026-11-23T17:00:03.000000005Z 2026-11-23T17:00:03Z posted C1 {"entries": 3}`,
		`"personal/remind\x00U1" 2026-11-23T17:00:03.000000005Z 2026-11-23T18:00:03Z claimed - -`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A claim whose answer is lost after the server committed it is undone,
// so the date is not blocked by a claim nobody owns. The connection goes
// through a proxy that, once, drops the server's answer to the claim and
// closes the connection; a trigger keeps a row of each claim inserted, to
// show the claim was committed before it was undone.
func TestOutboxLostClaimUndone(t *testing.T) {
	t.Parallel()
	u := migrated(t)
	c := conn(t, u)
	for _, q := range []string{
		"CREATE TABLE claims_seen (key bytea)",
		`CREATE FUNCTION see_claim() RETURNS trigger LANGUAGE plpgsql AS
			$$ BEGIN INSERT INTO claims_seen VALUES (NEW.key); RETURN NEW; END $$`,
		`CREATE TRIGGER see_claim AFTER INSERT ON bookbot_outbox
			FOR EACH ROW EXECUTE FUNCTION see_claim()`,
	} {
		if _, err := c.Exec(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	const password = "hunter2-not-checked"
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	pu.Host = answerDropper(t, pu.Host, "INSERT INTO bookbot_outbox")
	pu.User = url.UserPassword(pu.User.Username(), password) // the server trusts; the password is only there to be hidden
	q := pu.Query()
	q.Set("sslmode", "disable")                         // the proxy reads the statements
	q.Set("default_query_exec_mode", "simple_protocol") // one message, one answer
	pu.RawQuery = q.Encode()

	o := open(t, pu.String()).Outbox()
	ok, err := o.Claim(t.Context(), outboxKey, outboxAt, outboxAt)
	if err == nil || ok {
		t.Fatalf("Claim whose answer was lost = %v, %v; want an error", ok, err)
	}
	if !strings.HasPrefix(err.Error(), `outbox (postgres): claim "digest/2026-11-24": `) || strings.Contains(err.Error(), password) ||
		strings.Contains(err.Error(), "undoing") {
		t.Errorf("error = %q", err)
	}
	var seen int
	if err := c.QueryRow(t.Context(), "SELECT count(*) FROM claims_seen").Scan(&seen); err != nil || seen != 1 {
		t.Fatalf("claims committed: %d, %v; want 1", seen, err)
	}
	if r, found, err := o.Lookup(t.Context(), outboxKey); err != nil || found {
		t.Errorf("after a lost claim: %+v, %v, %v; want nothing", r, found, err)
	}
	if ok, err := o.Claim(t.Context(), outboxKey, outboxAt, outboxAt); err != nil || !ok {
		t.Errorf("Claim after a lost claim = %v, %v", ok, err)
	}
}

// answerDropper is a proxy to the server at addr that passes everything
// through, except that, once, it drops the server's answer to the first
// message from a client containing match, and closes that connection. It
// returns the proxy's address.
func answerDropper(t *testing.T, addr, match string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		dropped bool
		conns   []net.Conn
	)
	track := func(cs ...net.Conn) {
		mu.Lock()
		defer mu.Unlock()
		conns = append(conns, cs...)
	}
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", addr)
			if err != nil {
				_ = client.Close()
				continue
			}
			track(client, server)
			// armed is set once this connection's claim went to the server:
			// its answer is then dropped.
			var armed atomic.Bool
			wg.Go(func() { // server to client
				buf := make([]byte, 64<<10)
				for {
					n, err := server.Read(buf)
					if n > 0 && armed.Load() {
						_ = client.Close()
						_ = server.Close()
						return
					}
					if n > 0 {
						if _, err := client.Write(buf[:n]); err != nil {
							return
						}
					}
					if err != nil {
						_ = client.Close()
						return
					}
				}
			})
			wg.Go(func() { // client to server
				buf := make([]byte, 64<<10)
				for {
					n, err := client.Read(buf)
					if n > 0 {
						mu.Lock()
						if !dropped && bytes.Contains(buf[:n], []byte(match)) {
							dropped = true
							armed.Store(true)
						}
						mu.Unlock()
						if _, err := server.Write(buf[:n]); err != nil {
							return
						}
					}
					if err != nil {
						_ = server.Close()
						return
					}
				}
			})
		}
	})
	return ln.Addr().String()
}

// The outbox's errors never hold the database URL's password.
func TestOutboxErrorsHidePassword(t *testing.T) {
	t.Parallel()
	const password = "hunter2-not-checked"
	pu, err := url.Parse(migrated(t))
	if err != nil {
		t.Fatal(err)
	}
	pu.User = url.UserPassword(pu.User.Username(), password) // the server trusts; the password is only there to be hidden
	db := open(t, pu.String())
	o := db.Outbox()
	db.Close()
	for _, err := range []error{
		func() error { _, err := o.Claim(t.Context(), outboxKey, outboxAt, outboxAt); return err }(),
		o.Posted(t.Context(), outboxKey, outbox.Post{}),
		o.Release(t.Context(), outboxKey),
		func() error { _, _, err := o.Lookup(t.Context(), outboxKey); return err }(),
		o.Prune(t.Context(), "digest/", outboxAt),
	} {
		if err == nil {
			t.Fatal("a closed database answered")
		}
		if !strings.HasPrefix(err.Error(), "outbox (postgres): ") || strings.Contains(err.Error(), password) {
			t.Errorf("error = %q", err)
		}
	}
}

// atSchema8 makes c's empty database one of schema 8, as a bookbot of it
// leaves it.
func atSchema8(t *testing.T, c *pgx.Conn) {
	t.Helper()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := c.Exec(t.Context(), q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE TABLE bookbot_schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL,
		additive boolean NOT NULL DEFAULT false)`)
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) < 9 {
		t.Fatalf("migrations: %v, %v", files, err)
	}
	for i, f := range files[:8] {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		exec(string(b))
		exec("INSERT INTO bookbot_schema_migrations VALUES ($1, now(), false)", i+1)
	}
}

// A claim an older replica commits while step 9 copies the claims over is
// not lost: the step waits for it, and carries it over.
func TestMigrationWaitsForAClaimBeingMade(t *testing.T) {
	t.Parallel()
	u := pgtest.URL(t)
	ctx := t.Context()
	atSchema8(t, conn(t, u))

	// The older replica is in the middle of claiming a reminder.
	old := conn(t, u)
	tx, err := old.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	key := personal.ReminderKey("U1", "bk_1", time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC))
	if _, err := tx.Exec(ctx, `INSERT INTO bookbot_personal_claims (key, claimed_s, claimed_ns) VALUES ($1, 1, 0)`, []byte(key)); err != nil {
		t.Fatal(err)
	}

	db := open(t, u)
	done := make(chan error, 1)
	go func() { _, _, err := db.Migrate(ctx); done <- err }()
	watch := conn(t, u)
	testutil.Until(ctx, t, "the migration waits for the older replica's claim", func() bool {
		var n int
		err := watch.QueryRow(ctx, `SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)
			WHERE NOT l.granted AND a.datname = current_database()`).Scan(&n)
		return err == nil && n > 0
	})
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ok, err := db.Personal().Claim(ctx, key, time.Now()); err != nil || ok {
		t.Errorf("the reminder claimed during the migration was claimed again: %v, %v", ok, err)
	}
}

// A database of schema 8, whose claims are in a table per kind, has them
// carried over into the outbox by step 9, under the keys the domain
// packages claim them by now: nothing claimed or posted before is posted
// again, and a claim never settled stays unsettled.
func TestMigrationCarriesClaimsOver(t *testing.T) {
	t.Parallel()
	u := pgtest.URL(t)
	c := conn(t, u)
	ctx := t.Context()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := c.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	atSchema8(t, c)

	s := func(t time.Time) (int64, int32) { return t.Unix(), int32(t.Nanosecond()) }
	claimed := time.Date(2026, 11, 23, 10, 8, 8, 123, time.UTC)
	cs, cns := s(claimed)
	// The digest: a date posted, a date claimed, a failure notice posted
	// without a claim.
	exec(`INSERT INTO bookbot_digest_ledger (day, kind, claimed_s, claimed_ns, claimant, posted, at_s, at_ns, channel, ts, entries, empty, uncertain)
		VALUES ('2026-11-24', 'digest', $1, $2, 'old-host pid 7 claim 1', true, $1, $2, 'C0DIGEST', '1763900000.000100', 3, false, true)`, cs, cns)
	exec(`INSERT INTO bookbot_digest_ledger (day, kind, claimed_s, claimed_ns, claimant) VALUES ('2026-11-25', 'digest', $1, $2, 'old-host pid 7 claim 2')`, cs, cns)
	exec(`INSERT INTO bookbot_digest_ledger (day, kind, posted, at_s, at_ns, channel, ts, entries, empty, uncertain)
		VALUES ('2026-11-26', 'failure_notice', true, $1, $2, 'C0DIGEST', '', 0, false, false)`, cs, cns)
	// Notices: one posted, one never settled; IDs and kinds of lengths
	// that show the key's bytes, times before 1970 and with nanoseconds.
	start := time.Date(2026, 11, 24, 9, 30, 0, 5, time.UTC)
	posted := notices.Key{BookingID: "bk_1\x00é", Kind: notices.New, Start: start, End: start.Add(15 * time.Minute), Since: claimed.Add(-time.Hour)}
	open_ := notices.Key{BookingID: "bk_9", Kind: notices.Cancelled, Start: time.Date(1969, 7, 20, 20, 17, 0, 999, time.UTC),
		End: start.Add(time.Hour), Since: claimed}
	for _, k := range []struct {
		key         notices.Key
		channel, ts any
	}{{posted, "C0NOTICE", "1763976600.000100"}, {open_, nil, nil}} {
		ss, sns := s(k.key.Start)
		ys, yns := s(k.key.Since)
		es, ens := s(k.key.End)
		exec(`INSERT INTO bookbot_notice_claims (booking_id, kind, start_s, start_ns, since_s, since_ns, end_s, end_ns, claimed_s, claimed_ns, channel, ts)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			[]byte(k.key.BookingID), string(k.key.Kind), ss, sns, ys, yns, es, ens, cs, cns, k.channel, k.ts)
	}
	// Reminders and agendas.
	reminder := personal.ReminderKey("U1", "bk_1", start)
	exec(`INSERT INTO bookbot_personal_claims (key, claimed_s, claimed_ns) VALUES ($1, $2, $3)`, []byte(reminder), cs, cns)

	db := open(t, u)
	if from, to, err := db.Migrate(ctx); err != nil || from != 8 || to != pg.Latest() {
		t.Fatalf("Migrate = %d, %d, %v; want from 8", from, to, err)
	}
	now := claimed.Add(time.Minute)

	l := digest.NewLedger(db.Outbox(), digest.LedgerOptions{Now: func() time.Time { return now }})
	day := func(d int) time.Time { return time.Date(2026, 11, d, 0, 0, 0, 0, time.FixedZone("CET", 3600)) }
	st, err := l.Status(ctx, digest.Key(day(24)))
	if err != nil || st.State != digest.StatePosted || !st.ClaimedAt.Equal(claimed) || st.Info.Channel != "C0DIGEST" ||
		st.Info.TS != "1763900000.000100" || st.Info.Entries != 3 || !st.Info.Uncertain || st.Info.Empty || !st.Info.At.Equal(claimed) {
		t.Errorf("24th = %+v, %v; want posted", st, err)
	}
	if st, err := l.Status(ctx, digest.Key(day(25))); err != nil || st.State != digest.StateClaimed || !st.ClaimedAt.Equal(claimed) {
		t.Errorf("25th = %+v, %v; want claimed", st, err)
	}
	if ok, err := l.Claim(ctx, digest.FailureKey(day(26))); err != nil || ok {
		t.Errorf("the 26th's failure notice was claimed again: %v, %v", ok, err)
	}
	if ok, err := l.Claim(ctx, digest.Key(day(26))); err != nil || !ok {
		t.Errorf("the 26th's digest: %v, %v; want it free", ok, err)
	}

	ns := db.Notices()
	if ok, err := ns.Claim(ctx, posted, now); err != nil || ok {
		t.Errorf("the posted notice was claimed again: %v, %v", ok, err)
	}
	if err := ns.Release(ctx, posted); err == nil {
		t.Error("the posted notice's claim was released")
	}
	if at, ok, err := ns.Unsettled(ctx, open_); err != nil || !ok || !at.Equal(claimed) {
		t.Errorf("unsettled claim = %v, %v, %v; want one made at %v", at, ok, err, claimed)
	}
	// Kept until the booking's end.
	if err := ns.Prune(ctx, open_.End); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := ns.Unsettled(ctx, open_); err != nil || !ok {
		t.Errorf("pruned before its end: %v, %v", ok, err)
	}

	ps := db.Personal()
	if ok, err := ps.Claim(ctx, reminder, now); err != nil || ok {
		t.Errorf("the reminder was claimed again: %v, %v", ok, err)
	}

	var old int
	if err := c.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE tablename IN
		('bookbot_digest_ledger', 'bookbot_notice_claims', 'bookbot_personal_claims')`).Scan(&old); err != nil || old != 0 {
		t.Errorf("tables of claims left: %d, %v", old, err)
	}
}

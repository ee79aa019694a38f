package pg_test

import (
	"bytes"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookbot/bookbot/digest"
	"github.com/bookbot/bookbot/digest/ledgertest"
)

func TestDigestLedger(t *testing.T) {
	t.Parallel()
	ledgertest.Run(t, func(t *testing.T, now func() time.Time) func() digest.Ledger {
		u := migrated(t)
		return func() digest.Ledger { return open(t, u).DigestLedger(digest.LedgerOptions{Now: now}) }
	})
}

var ledgerDay = time.Date(2026, 11, 24, 0, 0, 0, 0, time.FixedZone("CET", 3600))

// A stale claim is logged loudly, naming the replica that made it.
func TestDigestLedgerStaleClaimLog(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	now := time.Date(2026, 11, 23, 17, 0, 0, 0, time.UTC)
	l := open(t, migrated(t)).DigestLedger(digest.LedgerOptions{
		Now: func() time.Time { return now },
		Log: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if ok, err := l.Claim(t.Context(), ledgerDay); err != nil || !ok {
		t.Fatalf("Claim = %v, %v", ok, err)
	}
	now = now.Add(digest.DefaultStaleAfter)
	if ok, err := l.Claim(t.Context(), ledgerDay); err != nil || ok {
		t.Fatalf("Claim = %v, %v", ok, err)
	}
	if logs.Len() != 0 {
		t.Errorf("logged before the claim went stale:\n%s", logs.String())
	}
	now = now.Add(time.Second)
	if ok, err := l.Claim(t.Context(), ledgerDay); err != nil || ok {
		t.Fatalf("Claim of a stale claim = %v, %v", ok, err)
	}
	for _, want := range []string{"level=ERROR", "treating the date as posted", "key=2026-11-24", `claimant="`, " pid ", "table=bookbot_digest_ledger"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("no %q in the log:\n%s", want, logs.String())
		}
	}
}

// StaleAfter, when set, replaces the default.
func TestDigestLedgerStaleAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 17, 0, 0, 0, time.UTC)
	l := open(t, migrated(t)).DigestLedger(digest.LedgerOptions{StaleAfter: time.Minute, Now: func() time.Time { return now }})
	if _, err := l.Claim(t.Context(), ledgerDay); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute + time.Nanosecond)
	if st, err := l.Status(t.Context(), ledgerDay); err != nil || !st.Stale {
		t.Errorf("status = %+v, %v; want stale", st, err)
	}
}

// The rows are what the migration's comments say, so that a person can
// read and mend them: a date and kind, the claim, the record.
func TestDigestLedgerRows(t *testing.T) {
	t.Parallel()
	u := migrated(t)
	at := time.Date(2026, 11, 23, 17, 0, 3, 5, time.UTC)
	l := open(t, u).DigestLedger(digest.LedgerOptions{Now: func() time.Time { return at }})
	ctx := t.Context()
	if _, err := l.Claim(ctx, ledgerDay); err != nil {
		t.Fatal(err)
	}
	if err := l.Posted(ctx, ledgerDay, digest.PostInfo{At: at, Channel: "C1", TS: "1.2", Entries: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.ClaimNotice(ctx, ledgerDay.Add(24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	rows, err := conn(t, u).Query(ctx, `SELECT day::text, kind, claimed_s, claimed_ns, posted, coalesce(channel, '-')
		FROM bookbot_digest_ledger ORDER BY day, kind`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var day, kind, channel string
		var s int64
		var ns int32
		var posted bool
		if err := rows.Scan(&day, &kind, &s, &ns, &posted, &channel); err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.Join([]string{day, kind, time.Unix(s, int64(ns)).UTC().Format(time.RFC3339Nano), map[bool]string{true: "posted", false: "claimed"}[posted], channel}, " "))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"2026-11-24 digest 2026-11-23T17:00:03.000000005Z posted C1",
		"2026-11-25 failure_notice 2026-11-23T17:00:03.000000005Z claimed -",
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
func TestDigestLedgerLostClaimUndone(t *testing.T) {
	t.Parallel()
	u := migrated(t)
	c := conn(t, u)
	for _, q := range []string{
		"CREATE TABLE claims_seen (day date, kind text)",
		`CREATE FUNCTION see_claim() RETURNS trigger LANGUAGE plpgsql AS
			$$ BEGIN INSERT INTO claims_seen VALUES (NEW.day, NEW.kind); RETURN NEW; END $$`,
		`CREATE TRIGGER see_claim AFTER INSERT ON bookbot_digest_ledger
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
	pu.Host = answerDropper(t, pu.Host, "INSERT INTO bookbot_digest_ledger")
	pu.User = url.UserPassword(pu.User.Username(), password) // the server trusts; the password is only there to be hidden
	q := pu.Query()
	q.Set("sslmode", "disable")                         // the proxy reads the statements
	q.Set("default_query_exec_mode", "simple_protocol") // one message, one answer
	pu.RawQuery = q.Encode()

	var logs bytes.Buffer
	l := open(t, pu.String()).DigestLedger(digest.LedgerOptions{Log: slog.New(slog.NewTextHandler(&logs, nil))})
	ok, err := l.Claim(t.Context(), ledgerDay)
	if err == nil || ok {
		t.Fatalf("Claim whose answer was lost = %v, %v; want an error", ok, err)
	}
	if !strings.HasPrefix(err.Error(), "digest ledger (postgres): claim 2026-11-24: ") || strings.Contains(err.Error(), password) {
		t.Errorf("error = %q", err)
	}
	var seen int
	if err := c.QueryRow(t.Context(), "SELECT count(*) FROM claims_seen").Scan(&seen); err != nil || seen != 1 {
		t.Fatalf("claims committed: %d, %v; want 1", seen, err)
	}
	if st, err := l.Status(t.Context(), ledgerDay); err != nil || st.State != digest.StateNone {
		t.Errorf("after a lost claim: %+v, %v; want none", st, err)
	}
	if logs.Len() != 0 {
		t.Errorf("logged:\n%s", logs.String())
	}
	if ok, err := l.Claim(t.Context(), ledgerDay); err != nil || !ok {
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

// The ledger's errors never hold the database URL's password.
func TestDigestLedgerErrorsHidePassword(t *testing.T) {
	t.Parallel()
	const password = "hunter2-not-checked"
	pu, err := url.Parse(migrated(t))
	if err != nil {
		t.Fatal(err)
	}
	pu.User = url.UserPassword(pu.User.Username(), password) // the server trusts; the password is only there to be hidden
	db := open(t, pu.String())
	l := db.DigestLedger(digest.LedgerOptions{})
	db.Close()
	for _, err := range []error{
		func() error { _, err := l.Claim(t.Context(), ledgerDay); return err }(),
		l.Posted(t.Context(), ledgerDay, digest.PostInfo{}),
		l.Release(t.Context(), ledgerDay),
		func() error { _, err := l.Status(t.Context(), ledgerDay); return err }(),
		func() error { _, err := l.ClaimNotice(t.Context(), ledgerDay); return err }(),
		l.NoticePosted(t.Context(), ledgerDay, digest.PostInfo{}),
		l.ReleaseNotice(t.Context(), ledgerDay),
	} {
		if err == nil {
			t.Fatal("a closed database answered")
		}
		if !strings.HasPrefix(err.Error(), "digest ledger (postgres): ") || strings.Contains(err.Error(), password) {
			t.Errorf("error = %q", err)
		}
	}
}

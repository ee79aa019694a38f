package digest_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/digest"
	"github.com/bookbot/bookbot/store/bolt"
)

// The Runner's tests, inside the package, run against the embedded store's
// ledger, which imports the package and so is set from outside it.
func init() {
	digest.OpenTestLedger = func(t *testing.T, dir string, o digest.LedgerOptions) digest.Ledger {
		db, err := bolt.Open(dir, bolt.Options{Beside: true})
		if err != nil {
			t.Fatal(err)
		}
		return digest.NewLedger(db.Outbox(), o)
	}
}

var berlin = func() *time.Location {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		panic(err)
	}
	return loc
}()

// A stale claim of the digest is logged loudly, naming the process that
// claimed it.
func TestLedgerStaleClaimLog(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	now := time.Date(2026, 11, 23, 17, 0, 0, 0, time.UTC)
	l := digest.OpenTestLedger(t, t.TempDir(), digest.LedgerOptions{
		Now: func() time.Time { return now },
		Log: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	key := digest.Key(time.Date(2026, 11, 24, 0, 0, 0, 0, berlin))
	claim := func(want bool) {
		t.Helper()
		if ok, err := l.Claim(t.Context(), key); err != nil || ok != want {
			t.Fatalf("Claim = %v, %v; want %v", ok, err, want)
		}
		if _, err := l.Status(t.Context(), key); err != nil { // what a losing run asks next
			t.Fatal(err)
		}
	}

	claim(true)
	now = now.Add(digest.DefaultStaleAfter - time.Second)
	claim(false)
	if logs.Len() != 0 {
		t.Errorf("logged before the claim went stale:\n%s", logs.String())
	}
	now = now.Add(2 * time.Second)
	claim(false)
	for _, want := range []string{"level=ERROR", "treating the date as posted", "key=digest/2026-11-24", `claimant="`, " pid "} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("no %q in the log:\n%s", want, logs.String())
		}
	}
}

// StaleAfter, when set, replaces the default.
func TestLedgerStaleAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 17, 0, 0, 0, time.UTC)
	l := digest.OpenTestLedger(t, t.TempDir(), digest.LedgerOptions{Now: func() time.Time { return now }, StaleAfter: time.Minute})
	key := digest.Key(time.Date(2026, 11, 24, 0, 0, 0, 0, berlin))
	if ok, err := l.Claim(t.Context(), key); err != nil || !ok {
		t.Fatalf("Claim = %v, %v", ok, err)
	}
	now = now.Add(time.Minute + time.Nanosecond)
	if st, err := l.Status(t.Context(), key); err != nil || !st.Stale {
		t.Errorf("status = %+v, %v; want stale", st, err)
	}
}

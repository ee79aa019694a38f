package bolt_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/digest"
	"github.com/bookbot/bookbot/digest/ledgertest"
)

func TestLedger(t *testing.T) {
	ledgertest.Run(t, func(t *testing.T, now func() time.Time) func() digest.Ledger {
		dir := t.TempDir()
		return func() digest.Ledger { return openBeside(t, dir).Ledger(digest.LedgerOptions{Now: now}) }
	})
}

var berlin = func() *time.Location {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		panic(err)
	}
	return loc
}()

// A stale claim is logged loudly, naming the file and the process that
// claimed it.
func TestLedgerStaleClaimLog(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	now := time.Date(2026, 11, 23, 17, 0, 0, 0, time.UTC)
	db := openBeside(t, t.TempDir())
	l := db.Ledger(digest.LedgerOptions{
		Now: func() time.Time { return now },
		Log: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	day := time.Date(2026, 11, 24, 0, 0, 0, 0, berlin)
	claim := func(want bool) {
		t.Helper()
		if ok, err := l.Claim(t.Context(), day); err != nil || ok != want {
			t.Fatalf("Claim = %v, %v; want %v", ok, err, want)
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
	for _, want := range []string{"level=ERROR", "treating the date as posted", "key=2026-11-24", "pid=", "file=" + db.Path()} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("no %q in the log:\n%s", want, logs.String())
		}
	}
}

// StaleAfter, when set, replaces the default.
func TestLedgerStaleAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 17, 0, 0, 0, time.UTC)
	l := openBeside(t, t.TempDir()).Ledger(digest.LedgerOptions{Now: func() time.Time { return now }, StaleAfter: time.Minute})
	day := time.Date(2026, 11, 24, 0, 0, 0, 0, berlin)
	if ok, err := l.Claim(t.Context(), day); err != nil || !ok {
		t.Fatalf("Claim = %v, %v", ok, err)
	}
	now = now.Add(time.Minute + time.Nanosecond)
	if st, err := l.Status(t.Context(), day); err != nil || !st.Stale {
		t.Errorf("status = %+v, %v; want stale", st, err)
	}
}

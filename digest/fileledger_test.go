package digest

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The semantics every Ledger shares are checked by ledgertest (see
// ledger_test.go); these are the file ledger's own.

func openLedger(t *testing.T, dir string) *FileLedger {
	t.Helper()
	l, err := OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func mustClaim(t *testing.T, l Ledger, day time.Time, want bool) {
	t.Helper()
	ok, err := l.Claim(t.Context(), day)
	if err != nil {
		t.Fatal(err)
	}
	if ok != want {
		t.Fatalf("Claim(%s) = %v, want %v", dateKey(day), ok, want)
	}
}

func TestFileLedgerFiles(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	l := openLedger(t, dir)
	day := date(t, "2026-11-24", berlin)

	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("state dir = %v, %v; want mode 0700", fi, err)
	}
	if _, err := OpenLedger(""); err == nil {
		t.Error("a ledger without a state directory opened")
	}
	mustClaim(t, l, day, true)
	if _, err := os.Stat(filepath.Join(dir, "digest", "2026-11-24.json")); err != nil {
		t.Errorf("claim file: %v", err)
	}
	if err := l.Posted(t.Context(), day, PostInfo{At: time.Now(), Channel: "C123", Entries: 3}); err != nil {
		t.Fatal(err)
	}
	if ok, err := l.ClaimNotice(t.Context(), day); err != nil || !ok {
		t.Fatalf("ClaimNotice = %v, %v", ok, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "digest", "2026-11-24.failure.json")); err != nil {
		t.Errorf("notice claim file: %v", err)
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(l.Dir())
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("leftover %s", e.Name())
		}
	}
}

// A stale claim is logged loudly, naming its file and process.
func TestFileLedgerStaleClaimLog(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	now := time.Date(2026, 11, 23, 17, 0, 0, 0, time.UTC)
	l := openLedger(t, t.TempDir())
	l.Now = func() time.Time { return now }
	l.Log = slog.New(slog.NewTextHandler(&logs, nil))
	day := date(t, "2026-11-24", berlin)

	mustClaim(t, l, day, true)
	now = now.Add(DefaultStaleAfter - time.Second)
	mustClaim(t, l, day, false)
	if logs.Len() != 0 {
		t.Errorf("logged before the claim went stale:\n%s", logs.String())
	}
	now = now.Add(2 * time.Second)
	mustClaim(t, l, day, false)
	for _, want := range []string{"level=ERROR", "treating the date as posted", "key=2026-11-24", "pid=", "file=" + filepath.Join(l.Dir(), "2026-11-24.json")} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("no %q in the log:\n%s", want, logs.String())
		}
	}
}

// StaleAfter, when set, replaces the default.
func TestFileLedgerStaleAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 17, 0, 0, 0, time.UTC)
	l := openLedger(t, t.TempDir())
	l.Now = func() time.Time { return now }
	l.StaleAfter = time.Minute
	day := date(t, "2026-11-24", berlin)
	mustClaim(t, l, day, true)
	now = now.Add(time.Minute + time.Nanosecond)
	if st, err := l.Status(t.Context(), day); err != nil || !st.Stale {
		t.Errorf("status = %+v, %v; want stale", st, err)
	}
}

func TestFileLedgerEmptyClaimFileAgesByModTime(t *testing.T) {
	t.Parallel()
	l := openLedger(t, t.TempDir())
	day := date(t, "2026-11-24", berlin)
	// A process died between creating the claim and writing it.
	path := filepath.Join(l.Dir(), "2026-11-24.json")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	st, err := l.Status(t.Context(), day)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != StateClaimed || !st.Stale {
		t.Errorf("status = %+v", st)
	}
	mustClaim(t, l, day, false)
}

package digest

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func openLedger(t *testing.T, dir string) *Ledger {
	t.Helper()
	l, err := OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func mustClaim(t *testing.T, l *Ledger, day time.Time, want bool) {
	t.Helper()
	ok, err := l.Claim(day)
	if err != nil {
		t.Fatal(err)
	}
	if ok != want {
		t.Fatalf("Claim(%s) = %v, want %v", dateKey(day), ok, want)
	}
}

func TestLedgerClaimOnce(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	l := openLedger(t, dir)
	day := date(t, "2026-11-24", berlin)

	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("state dir = %v, %v; want mode 0700", fi, err)
	}
	if st, _ := l.Status(day); st.State != StateNone {
		t.Errorf("fresh status = %+v", st)
	}
	mustClaim(t, l, day, true)
	mustClaim(t, l, day, false)
	if _, err := os.Stat(filepath.Join(dir, "digest", "2026-11-24.json")); err != nil {
		t.Errorf("claim file: %v", err)
	}
	if st, _ := l.Status(day); st.State != StateClaimed || st.Stale || st.Done() {
		t.Errorf("claimed status = %+v", st)
	}
	// Other dates are independent.
	mustClaim(t, l, date(t, "2026-11-25", berlin), true)
}

func TestLedgerConcurrentClaims(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	day := date(t, "2026-11-24", berlin)
	var wins atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 20 {
		wg.Go(func() {
			// Each goroutine opens its own ledger, as separate processes would.
			l, err := OpenLedger(dir)
			if err != nil {
				t.Error(err)
				return
			}
			<-start
			ok, err := l.Claim(day)
			if err != nil {
				t.Error(err)
			}
			if ok {
				wins.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	if n := wins.Load(); n != 1 {
		t.Errorf("%d claims won, want exactly 1", n)
	}
}

func TestLedgerReleaseAndPosted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openLedger(t, dir)
	day := date(t, "2026-11-24", berlin)

	mustClaim(t, l, day, true)
	if err := l.Release(day); err != nil {
		t.Fatal(err)
	}
	if st, _ := l.Status(day); st.State != StateNone {
		t.Errorf("after release: %+v", st)
	}
	mustClaim(t, l, day, true)

	at := time.Date(2026, 11, 23, 17, 0, 3, 0, time.UTC)
	info := PostInfo{At: at, Channel: "C123", TS: "1763917203.000100", Entries: 3}
	if err := l.Posted(day, info); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(day); err == nil {
		t.Error("a posted date was released")
	}
	mustClaim(t, l, day, false)

	// A restarted process sees the same.
	l2 := openLedger(t, dir)
	mustClaim(t, l2, day, false)
	st, err := l2.Status(day)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != StatePosted || !st.Done() || !st.Info.At.Equal(at) || st.Info.Channel != "C123" || st.Info.TS != info.TS || st.Info.Entries != 3 {
		t.Errorf("status after reopen = %+v", st)
	}
	if st.ClaimedAt.IsZero() {
		t.Error("the claim time was lost when posting")
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(l.Dir())
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("leftover %s", e.Name())
		}
	}
	// Releasing a date never claimed is harmless.
	if err := l.Release(date(t, "2027-01-01", berlin)); err != nil {
		t.Error(err)
	}
}

func TestLedgerStaleClaim(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	now := time.Date(2026, 11, 23, 17, 0, 0, 0, time.UTC)
	l := openLedger(t, t.TempDir())
	l.Now = func() time.Time { return now }
	l.Log = slog.New(slog.NewTextHandler(&logs, nil))
	day := date(t, "2026-11-24", berlin)

	mustClaim(t, l, day, true)
	now = now.Add(DefaultStaleAfter - time.Second)
	if st, _ := l.Status(day); st.Stale {
		t.Error("stale too early")
	}
	now = now.Add(2 * time.Second)
	st, err := l.Status(day)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Stale || st.State != StateClaimed || !st.Done() {
		t.Errorf("status of an abandoned claim = %+v", st)
	}
	// Never twice: the date stays taken, and a person is told.
	mustClaim(t, l, day, false)
	if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "treating the date as posted") {
		t.Errorf("no loud log:\n%s", logs.String())
	}
	if err := l.Release(day); err != nil {
		t.Errorf("release of a stale claim: %v", err)
	}
}

func TestLedgerEmptyClaimFileAgesByModTime(t *testing.T) {
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
	st, err := l.Status(day)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != StateClaimed || !st.Stale {
		t.Errorf("status = %+v", st)
	}
	mustClaim(t, l, day, false)
}

func TestLedgerDateIsTheCalendarDate(t *testing.T) {
	t.Parallel()
	l := openLedger(t, t.TempDir())
	// The same instant is the 24th in Berlin and the 23rd in New York.
	mustClaim(t, l, date(t, "2026-11-24", berlin), true)
	mustClaim(t, l, date(t, "2026-11-24", newYork), false)
	mustClaim(t, l, date(t, "2026-11-23", newYork), true)
}

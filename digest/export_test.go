package digest

import (
	"testing"
	"time"
)

// OpenTestLedger opens a handle on the ledger in the state directory dir,
// as another process would: ledger_test.go sets it.
var OpenTestLedger func(t *testing.T, dir string, o LedgerOptions) Ledger

// openLedger opens a handle on the ledger in dir whose clock is now.
func openLedger(t *testing.T, dir string, now func() time.Time) Ledger {
	t.Helper()
	return OpenTestLedger(t, dir, LedgerOptions{Now: now})
}

func mustClaim(t *testing.T, l Ledger, day time.Time, want bool) {
	t.Helper()
	ok, err := l.Claim(t.Context(), Key(day))
	if err != nil {
		t.Fatal(err)
	}
	if ok != want {
		t.Fatalf("Claim(%s) = %v, want %v", dateKey(day), ok, want)
	}
}

package digest_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/bookbot/bookbot/digest"
	"github.com/bookbot/bookbot/digest/ledgertest"
)

func TestFileLedger(t *testing.T) {
	ledgertest.Run(t, func(t *testing.T, now func() time.Time) func() digest.Ledger {
		dir := filepath.Join(t.TempDir(), "state")
		return func() digest.Ledger {
			l, err := digest.OpenLedger(dir)
			if err != nil {
				t.Fatal(err)
			}
			l.Now = now
			return l
		}
	})
}

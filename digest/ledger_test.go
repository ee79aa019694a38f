package digest_test

import (
	"testing"

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

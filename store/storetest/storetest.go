// Package storetest runs every conformance suite of bookbot's state
// against one backend: the outbox (outboxtest), the digest's ledger over
// it (ledgertest), the notices (noticestest), the personal settings
// (personaltest), the write journal (journaltest), the offers
// (offertest), people's own calendars (accounttest), the event types of
// bookings (typestoretest) and the envelopes seen (dedupetest). store/bolt
// and store/pg each call Run once, so a backend is proven by the same
// tests as the other. The booking limits are the one part of the state
// whose suite (guardtest) runs elsewhere: the embedded state's limiter is
// booking's own guard, checked in booking, and PostgreSQL's is checked in
// store/pg. It is for tests only.
package storetest

import (
	"testing"
	"time"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/account/accounttest"
	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/journal"
	"github.com/bookbot/bookbot/booking/journal/journaltest"
	"github.com/bookbot/bookbot/booking/typestoretest"
	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/digest"
	"github.com/bookbot/bookbot/digest/ledgertest"
	"github.com/bookbot/bookbot/notices"
	"github.com/bookbot/bookbot/notices/noticestest"
	"github.com/bookbot/bookbot/offer"
	"github.com/bookbot/bookbot/offer/offertest"
	"github.com/bookbot/bookbot/outbox"
	"github.com/bookbot/bookbot/outbox/outboxtest"
	"github.com/bookbot/bookbot/personal"
	"github.com/bookbot/bookbot/personal/personaltest"
	"github.com/bookbot/bookbot/store/dedupetest"
)

// Backend opens handles on one store: each call a new handle, as another
// process or replica would get one. Each is called on the subtest's
// goroutine, reports a failure with t.Fatal and registers with t.Cleanup
// the closing of what it opens.
type Backend struct {
	Outbox   func() outbox.Store
	Notices  func() notices.Store
	Personal func() personal.Store
	Offers   func() offer.Store
	// Journal is the write journal of owner, whose clock is now.
	Journal func(owner string, now func() time.Time) journal.Store
	// Accounts and AccountNotices are people's own calendars and the last
	// reads of them, for their notices.
	Accounts       func() account.Store
	AccountNotices func() notices.Snapshots
	// Types are the event types bookings were last listed with.
	Types func() booking.TypeStore
	// Dedupe is the envelopes seen, remembered for bot.SeenTTL. Unlike the
	// others it is called once for each store: the suite asks one handle.
	Dedupe func() bot.Seen
}

// Run runs every suite, each of their subtests against a store of its
// own, in parallel. fresh makes that store, empty, where no other subtest
// sees it (a directory under t.TempDir(), a database of its own), and
// returns the handles on it.
func Run(t *testing.T, fresh func(t *testing.T) Backend) {
	t.Run("Outbox", func(t *testing.T) {
		t.Parallel()
		outboxtest.Run(t, func(t *testing.T) func() outbox.Store { return fresh(t).Outbox })
	})
	t.Run("Ledger", func(t *testing.T) {
		t.Parallel()
		ledgertest.Run(t, func(t *testing.T, now func() time.Time) func() digest.Ledger {
			b := fresh(t)
			return func() digest.Ledger { return digest.NewLedger(b.Outbox(), digest.LedgerOptions{Now: now}) }
		})
	})
	t.Run("Notices", func(t *testing.T) {
		t.Parallel()
		noticestest.Run(t, func(t *testing.T) func() notices.Store { return fresh(t).Notices })
	})
	t.Run("Personal", func(t *testing.T) {
		t.Parallel()
		personaltest.Run(t, func(t *testing.T) func() personal.Store { return fresh(t).Personal })
	})
	t.Run("Offers", func(t *testing.T) {
		t.Parallel()
		offertest.Run(t, func(t *testing.T) func() offer.Store { return fresh(t).Offers })
	})
	t.Run("Accounts", func(t *testing.T) {
		t.Parallel()
		accounttest.Run(t, func(t *testing.T) func() account.Store { return fresh(t).Accounts })
	})
	t.Run("AccountNotices", func(t *testing.T) {
		accounttest.RunSnapshots(t, func(t *testing.T) (account.Store, notices.Snapshots) {
			b := fresh(t)
			return b.Accounts(), b.AccountNotices()
		})
	})
	t.Run("Types", func(t *testing.T) {
		t.Parallel()
		typestoretest.Run(t, func(t *testing.T) func() booking.TypeStore { return fresh(t).Types })
	})
	t.Run("Dedupe", func(t *testing.T) {
		t.Parallel()
		dedupetest.Run(t, func(t *testing.T) func() bot.Seen { return fresh(t).Dedupe })
	})
	t.Run("Journal", func(t *testing.T) {
		t.Parallel()
		journaltest.Run(t, func(t *testing.T, now func() time.Time) func(owner string) journal.Store {
			b := fresh(t)
			return func(owner string) journal.Store { return b.Journal(owner, now) }
		})
	})
}

package bolt_test

import (
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/journal"
	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/digest"
	"github.com/bookbot/bookbot/notices"
	"github.com/bookbot/bookbot/offer"
	"github.com/bookbot/bookbot/outbox"
	"github.com/bookbot/bookbot/personal"
	"github.com/bookbot/bookbot/store/bolt"
	"github.com/bookbot/bookbot/store/storetest"
)

// TestStore runs every store's conformance suite against the embedded
// store, each handle a DB of its own on the subtest's directory, as
// `bookbot digest` opens one beside `bookbot run`.
func TestStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) storetest.Backend {
		dir := t.TempDir()
		return storetest.Backend{
			Outbox:         func() outbox.Store { return openBeside(t, dir).Outbox() },
			Notices:        func() notices.Store { return openBeside(t, dir).Notices() },
			Personal:       func() personal.Store { return openBeside(t, dir).Personal() },
			Offers:         func() offer.Store { return openBeside(t, dir).Offers() },
			Accounts:       func() account.Store { return openBeside(t, dir).Accounts() },
			AccountNotices: func() notices.Snapshots { return openBeside(t, dir).Accounts() },
			Types:          func() booking.TypeStore { return openBeside(t, dir).Types() },
			Dedupe:         func() bot.Seen { return bolt.NewDedupe(bot.SeenTTL) },
			Journal: func(owner string, now func() time.Time) journal.Store {
				j := openBeside(t, dir).Journal()
				j.Now, j.Owner = now, owner
				return j
			},
		}
	})
}

var berlin = func() *time.Location {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		panic(err)
	}
	return loc
}()

// TestOutboxFormat pins what the file holds, so that a change of the
// records' JSON or of the keys does not change it unnoticed.
func TestOutboxFormat(t *testing.T) {
	t.Parallel()
	db := openBeside(t, t.TempDir())
	o := db.Outbox()
	at := time.Date(2026, 11, 23, 17, 0, 3, 5, time.UTC)
	day := time.Date(2026, 11, 24, 0, 0, 0, 0, berlin)
	l := digest.NewLedger(o, digest.LedgerOptions{Now: func() time.Time { return at }})
	if ok, err := l.Claim(t.Context(), digest.Key(day)); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if err := l.Posted(t.Context(), digest.Key(day), digest.PostInfo{At: at, Channel: "C1", TS: "1.2", Entries: 3}); err != nil {
		t.Fatal(err)
	}
	if ok, err := db.Notices().Claim(t.Context(), noticeKey, start); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if err := db.Notices().Posted(t.Context(), noticeKey, notices.Message{Channel: "C1", TS: "1.3"}, false); err != nil {
		t.Fatal(err)
	}
	if ok, err := db.Personal().Claim(t.Context(), reminderKey, start.Add(time.Hour)); err != nil || !ok {
		t.Fatal(ok, err)
	}
	got := map[string]string{}
	update(t, db.Path(), func(tx *bbolt.Tx) error {
		return tx.Bucket([]byte("outbox")).ForEach(func(k, v []byte) error {
			// The claimant is this process: pinned apart.
			got[string(k)] = strings.Replace(string(v), `,"claimant":"`+outbox.Claimant()+`"`, "", 1)
			return nil
		})
	})
	want := map[string]string{
		"digest/2026-11-24": `{"claimed_at":"2026-11-23T17:00:03.000000005Z","keep":"2026-11-23T17:00:03.000000005Z",` +
			`"posted":{"at":"2026-11-23T17:00:03.000000005Z","channel":"C1","ts":"1.2","detail":{"entries":3}}}`,
		"notice/000000026231000000036e6577800000006b05521000000000800000006b05440000000000": `{"claimed_at":"2026-11-24T09:00:00Z",` +
			`"keep":"2026-11-24T09:30:00Z","posted":{"at":"0001-01-01T00:00:00Z","channel":"C1","ts":"1.3"}}`,
		"personal/" + reminderKey: `{"claimed_at":"2026-11-24T10:00:00Z","keep":"2026-11-24T10:00:00Z"}`,
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%q = %q, want %q", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("the outbox holds %q, want %q", got, want)
	}
}

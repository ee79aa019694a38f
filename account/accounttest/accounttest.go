// Package accounttest checks an implementation of account.Store against
// the semantics its documentation gives. (A store is only ever given a
// key sealed; that no key is at rest in the clear is checked end to end,
// over bookbot.db, by cmd/bookbot's TestOwnCalendars.) It is for tests
// only.
package accounttest

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/internal/testutil"
	"github.com/bookbot/bookbot/notices"
)

// Run runs the suite, each subtest against a store of its own. fresh
// makes an empty store no other subtest sees and returns open, which
// returns a new handle on that same store each time, as a restarted
// process would get one.
func Run(t *testing.T, fresh func(t *testing.T) (open func() account.Store)) {
	cases.Run(t, fresh)
}

var cases = testutil.Suite[account.Store]{
	{"Get/absent", getAbsent},
	{"Put/kept", putKept},
	{"Put/replaces", putReplaces},
	{"SwapKeys", swapKeys},
	{"SwapKeys/changed", swapKeysChanged},
	{"SetNotices", setNotices},
	{"Delete", deleteAccount},
	{"Touch", touch},
	{"Refuse", refuse},
	{"Canceled", canceled},
}

var at = time.Date(2026, 11, 24, 9, 30, 0, 123456789, time.UTC)

// Sample is an account as the bot makes one.
func Sample(user string) account.Account {
	return account.Account{User: user, Sealed: []byte{1, 0, 0xff, 'k', byte(len(user))}, ConnectedAt: at, State: account.OK}
}

func equal(a, b account.Account) bool {
	return a.User == b.User && bytes.Equal(a.Sealed, b.Sealed) && a.ConnectedAt.Equal(b.ConnectedAt) &&
		a.LastUsed.Equal(b.LastUsed) && a.State == b.State && a.Notices == b.Notices && a.Calendar == b.Calendar && a.Page == b.Page
}

func getAbsent(t *testing.T, open func() account.Store) {
	if _, ok, err := open().Get(t.Context(), "U1"); ok || err != nil {
		t.Fatalf("Get of no account = %v, %v; want false, nil", ok, err)
	}
	if all, err := open().All(t.Context()); len(all) != 0 || err != nil {
		t.Fatalf("All of an empty store = %v, %v", all, err)
	}
}

func putKept(t *testing.T, open func() account.Store) {
	a := Sample("U1")
	a.Notices, a.LastUsed, a.Calendar, a.Page = "C1", at.Add(time.Minute), "cal-1", "https://book.example.com/ada?x=1"
	if err := open().Put(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	got, ok, err := open().Get(t.Context(), "U1")
	if !ok || err != nil || !equal(got, a) {
		t.Fatalf("Get after Put = %+v, %v, %v; want %+v", got, ok, err, a)
	}
	if _, ok, _ := open().Get(t.Context(), "U2"); ok {
		t.Fatal("another user's Get found U1's account")
	}
}

func putReplaces(t *testing.T, open func() account.Store) {
	s := open()
	a := Sample("U1")
	if err := s.Put(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	a.Sealed, a.State, a.Notices, a.Calendar, a.Page = []byte("other"), account.Reconnect, account.NoticesOff, "cal-2", "https://cal.example.com/ada"
	if err := s.Put(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	got, _, err := open().Get(t.Context(), "U1")
	if err != nil || !equal(got, a) {
		t.Fatalf("Get after a second Put = %+v, %v; want %+v", got, err, a)
	}
}

func swapKeys(t *testing.T, open func() account.Store) {
	s := open()
	for _, u := range []string{"U2", "U1", "U3"} {
		a := Sample(u)
		a.Calendar, a.Page = "cal-"+u, "https://book.example.com/"+u
		if err := s.Put(t.Context(), a); err != nil {
			t.Fatal(err)
		}
	}
	// A swap's calendar is written with its key; none keeps the one held.
	calendars := map[string]string{"U1": "cal-kept", "U2": ""}
	var swaps []account.KeySwap
	for _, u := range []string{"U1", "U2"} {
		swaps = append(swaps, account.KeySwap{User: u, Old: Sample(u).Sealed, New: []byte("resealed " + u), Calendar: calendars[u]})
	}
	if err := s.SwapKeys(t.Context(), swaps); err != nil {
		t.Fatal(err)
	}
	all, err := open().All(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, a := range all {
		users = append(users, a.User)
	}
	if !slices.Equal(users, []string{"U1", "U2", "U3"}) {
		t.Fatalf("All = %v; want U1, U2, U3 in order", users)
	}
	for i, u := range []string{"U1", "U2"} {
		want := Sample(u)
		want.Sealed, want.Calendar, want.Page = []byte("resealed "+u), cmp.Or(calendars[u], "cal-"+u), "https://book.example.com/"+u
		if !equal(all[i], want) {
			t.Fatalf("after SwapKeys %s is %+v; want %+v", u, all[i], want)
		}
	}
	u3 := Sample("U3")
	u3.Calendar, u3.Page = "cal-U3", "https://book.example.com/U3"
	if !equal(all[2], u3) {
		t.Fatalf("SwapKeys changed U3: %+v", all[2])
	}
}

// swapKeysChanged: a key changed, or an account deleted, since the keys
// were read makes SwapKeys change nothing: it never brings a deleted key
// back nor overwrites a new one.
func swapKeysChanged(t *testing.T, open func() account.Store) {
	s := open()
	for _, u := range []string{"U1", "U2", "U3"} {
		if err := s.Put(t.Context(), Sample(u)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Delete(t.Context(), "U2"); err != nil {
		t.Fatal(err)
	}
	renewed := Sample("U3")
	renewed.Sealed = []byte("connected again")
	if err := s.Put(t.Context(), renewed); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"U2", "U3"} {
		swaps := []account.KeySwap{
			{User: "U1", Old: Sample("U1").Sealed, New: []byte("resealed U1")},
			{User: gone, Old: Sample(gone).Sealed, New: []byte("resealed " + gone)},
		}
		if err := open().SwapKeys(t.Context(), swaps); !errors.Is(err, account.ErrKeyChanged) {
			t.Fatalf("SwapKeys over %s changed since = %v; want ErrKeyChanged", gone, err)
		}
	}
	if got, _, _ := open().Get(t.Context(), "U1"); !equal(got, Sample("U1")) {
		t.Fatalf("a refused SwapKeys changed U1: %+v", got)
	}
	if _, ok, _ := open().Get(t.Context(), "U2"); ok {
		t.Fatal("SwapKeys brought a deleted account back")
	}
	if got, _, _ := open().Get(t.Context(), "U3"); !equal(got, renewed) {
		t.Fatalf("SwapKeys overwrote a key connected since: %+v", got)
	}
}

// setNotices changes only where notices go, and only of an account that
// is there: a disconnect or a refusal meanwhile is never undone.
func setNotices(t *testing.T, open func() account.Store) {
	s := open()
	refused := Sample("U1")
	refused.State, refused.Sealed = account.Reconnect, []byte{}
	if err := s.Put(t.Context(), refused); err != nil {
		t.Fatal(err)
	}
	if ok, err := open().SetNotices(t.Context(), "U1", "C9"); !ok || err != nil {
		t.Fatalf("SetNotices = %v, %v; want true, nil", ok, err)
	}
	want := refused
	want.Notices = "C9"
	if got, _, _ := open().Get(t.Context(), "U1"); !equal(got, want) {
		t.Fatalf("after SetNotices: %+v; want %+v", got, want)
	}
	if ok, err := open().SetNotices(t.Context(), "U9", account.NoticesOff); ok || err != nil {
		t.Fatalf("SetNotices of no account = %v, %v; want false, nil", ok, err)
	}
	if _, ok, _ := open().Get(t.Context(), "U9"); ok {
		t.Fatal("SetNotices made an account")
	}
}

func deleteAccount(t *testing.T, open func() account.Store) {
	s := open()
	if err := s.Put(t.Context(), Sample("U1")); err != nil {
		t.Fatal(err)
	}
	if del, err := s.Delete(t.Context(), "U1"); !del || err != nil {
		t.Fatalf("Delete = %v, %v; want true, nil", del, err)
	}
	if del, err := open().Delete(t.Context(), "U1"); del || err != nil {
		t.Fatalf("a second Delete = %v, %v; want false, nil", del, err)
	}
	if _, ok, err := open().Get(t.Context(), "U1"); ok || err != nil {
		t.Fatalf("Get after Delete = %v, %v", ok, err)
	}
}

func touch(t *testing.T, open func() account.Store) {
	s := open()
	if err := s.Put(t.Context(), Sample("U1")); err != nil {
		t.Fatal(err)
	}
	if err := s.Touch(t.Context(), "U1", at.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.Touch(t.Context(), "U9", at); err != nil {
		t.Fatalf("Touch of no account = %v; want nil (it was disconnected meanwhile)", err)
	}
	got, _, _ := open().Get(t.Context(), "U1")
	want := Sample("U1")
	want.LastUsed = at.Add(time.Hour)
	if !equal(got, want) {
		t.Fatalf("after Touch: %+v; want %+v", got, want)
	}
	if _, ok, _ := open().Get(t.Context(), "U9"); ok {
		t.Fatal("Touch made an account")
	}
}

// refuse marks the account's key refused only while the key is still the
// one refused: a newer key, or a disconnect, is never undone by an older
// key's refusal.
func refuse(t *testing.T, open func() account.Store) {
	s := open()
	old := Sample("U1")
	if err := s.Put(t.Context(), old); err != nil {
		t.Fatal(err)
	}
	renewed := Sample("U1")
	renewed.Sealed, renewed.ConnectedAt = []byte("a newer key"), at.Add(time.Hour)
	if err := s.Put(t.Context(), renewed); err != nil {
		t.Fatal(err)
	}
	if marked, err := open().Refuse(t.Context(), "U1", old.Sealed); marked || err != nil {
		t.Fatalf("Refuse of a replaced key = %v, %v; want false, nil", marked, err)
	}
	if got, _, _ := open().Get(t.Context(), "U1"); !equal(got, renewed) {
		t.Fatalf("a replaced key's refusal changed the account: %+v; want %+v", got, renewed)
	}
	if marked, err := open().Refuse(t.Context(), "U1", renewed.Sealed); !marked || err != nil {
		t.Fatalf("Refuse of the account's key = %v, %v; want true, nil", marked, err)
	}
	got, ok, _ := open().Get(t.Context(), "U1")
	want := renewed
	want.State, want.Sealed = account.Reconnect, []byte{}
	if !ok || !equal(got, want) {
		t.Fatalf("after Refuse: %+v; want %+v", got, want)
	}
	if marked, err := open().Refuse(t.Context(), "U9", old.Sealed); marked || err != nil {
		t.Fatalf("Refuse of no account = %v, %v; want false, nil", marked, err)
	}
	if _, ok, _ := open().Get(t.Context(), "U9"); ok {
		t.Fatal("Refuse made an account")
	}
}

func canceled(t *testing.T, open func() account.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	s := open()
	if err := s.Put(ctx, Sample("U1")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Put with a cancelled context = %v", err)
	}
	if _, ok, _ := open().Get(t.Context(), "U1"); ok {
		t.Fatal("a cancelled Put stored the account")
	}
}

// RunSnapshots checks the last reads kept for each person's own calendar's
// notices (notices.Snapshots) beside the accounts: each calendar's apart,
// replaced by the next, and deleted with the account. fresh makes an
// empty store of both, the same one.
func RunSnapshots(t *testing.T, fresh func(t *testing.T) (account.Store, notices.Snapshots)) {
	t.Parallel()
	accounts, snaps := fresh(t)
	ctx := t.Context()
	for _, u := range []string{"U1", "U2"} {
		if err := accounts.Put(ctx, Sample(u)); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok, err := snaps.LastOf(ctx, "U1"); ok || err != nil {
		t.Fatalf("LastOf before any = %v, %v", ok, err)
	}
	read := func(id string) notices.Snapshot {
		return notices.Snapshot{At: at, Bookings: []booking.Booking{{ID: id, Start: at.Add(time.Hour), End: at.Add(2 * time.Hour)}}}
	}
	for _, u := range []string{"U1", "U2"} {
		if err := snaps.SaveLastOf(ctx, u, read("bk_"+u)); err != nil {
			t.Fatal(err)
		}
	}
	if err := snaps.SaveLastOf(ctx, "U1", read("bk_U1_later")); err != nil {
		t.Fatal(err)
	}
	for u, want := range map[string]string{"U1": "bk_U1_later", "U2": "bk_U2"} {
		s, ok, err := snaps.LastOf(ctx, u)
		if !ok || err != nil || len(s.Bookings) != 1 || s.Bookings[0].ID != want || !s.At.Equal(at) {
			t.Errorf("LastOf(%s) = %+v, %v, %v; want %s", u, s, ok, err, want)
		}
	}
	if _, err := accounts.Delete(ctx, "U1"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := snaps.LastOf(ctx, "U1"); ok || err != nil {
		t.Errorf("the last read outlived the account: %v, %v", ok, err)
	}
	// Connecting again, perhaps another calendar's key: the last read is
	// of the calendar before, and would read as its bookings cancelled.
	again := Sample("U2")
	again.Sealed = []byte("another calendar's key")
	if err := accounts.Put(ctx, again); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := snaps.LastOf(ctx, "U2"); ok || err != nil {
		t.Errorf("the last read outlived connecting again: %v, %v", ok, err)
	}
}

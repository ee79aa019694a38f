package account_test

import (
	"context"
	"errors"
	"testing"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/account/accounttest"
	"github.com/bookbot/bookbot/store/bolt"
)

// TestOpen: a person's own calendar is got, checked and opened in one
// place, and each reason it cannot be used is told apart from the others.
func TestOpen(t *testing.T) {
	t.Parallel()
	db, err := bolt.Open(t.TempDir(), bolt.Options{Beside: true})
	if err != nil {
		t.Fatal(err)
	}
	accounts, s := db.Accounts(), secret(t)
	put := func(user string, sealer *account.Sealer, state account.State) {
		t.Helper()
		a := accounttest.Sample(user)
		if a.Sealed, err = sealer.Seal(user, key(t)); err != nil {
			t.Fatal(err)
		}
		a.State = state
		if err := accounts.Put(t.Context(), a); err != nil {
			t.Fatal(err)
		}
	}
	put("U1", s, account.OK)
	put("U2", s, account.Reconnect)
	put("U3", secret(t), account.OK) // sealed under another secret key

	a, got, err := account.Open(t.Context(), accounts, s, "U1")
	if err != nil || a.User != "U1" || !got.Equal(key(t)) {
		t.Fatalf("Open of a connected account = %q, %v; want its key", a.User, err)
	}
	for _, tt := range []struct {
		user   string
		sealer *account.Sealer
		want   error
	}{
		{"U9", s, account.ErrNotConnected},
		{"U2", s, account.ErrReconnect},
		{"U1", nil, account.ErrNoSealer},
		{"U3", s, account.ErrOpen},
	} {
		_, _, err := account.Open(t.Context(), accounts, tt.sealer, tt.user)
		if !errors.Is(err, tt.want) || !account.Unusable(err) {
			t.Errorf("Open of %s = %v; want %v", tt.user, err, tt.want)
		}
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, _, err := account.Open(ctx, accounts, s, "U1"); err == nil || account.Unusable(err) {
		t.Errorf("Open when the store fails = %v; want the store's error, not a reason the key cannot be used", err)
	}
}

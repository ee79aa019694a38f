package bolt_test

import (
	"bytes"
	"crypto/rand"
	"os"
	"testing"
	"time"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/booking"
)

// TestAccountKeySealedAtRest reads the raw bytes of bookbot.db: a
// connected person's key is not in them, only its sealed form.
func TestAccountKeySealedAtRest(t *testing.T) {
	t.Parallel()
	secret := make([]byte, account.SecretSize)
	_, _ = rand.Read(secret)
	sealer, err := account.NewSealer(secret)
	if err != nil {
		t.Fatal(err)
	}
	const plain = "cal_live_sealed_at_rest_0123456789"
	key, _ := booking.NewKey(plain)
	sealed, err := sealer.Seal("U1", key)
	if err != nil {
		t.Fatal(err)
	}
	db := openBeside(t, t.TempDir())
	if err := db.Accounts().Put(t.Context(), account.Account{User: "U1", Sealed: sealed, ConnectedAt: time.Now(), State: account.OK}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(db.Path())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(plain)) || bytes.Contains(raw, []byte(plain[9:20])) {
		t.Fatal("bookbot.db holds the key in the clear")
	}
	a, ok, err := db.Accounts().Get(t.Context(), "U1")
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	if got, err := sealer.Open("U1", a.Sealed); err != nil || !got.Equal(key) {
		t.Fatalf("the stored key does not open: %v", err)
	}
}

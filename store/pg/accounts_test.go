package pg_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/booking"
)

// TestAccountKeySealedAtRest reads the rows as stored: no key is in them,
// and a sealed key moved to another person's row does not open.
func TestAccountKeySealedAtRest(t *testing.T) {
	t.Parallel()
	secret := make([]byte, account.SecretSize)
	_, _ = rand.Read(secret)
	sealer, err := account.NewSealer(secret)
	if err != nil {
		t.Fatal(err)
	}
	u := migrated(t)
	s := open(t, u).Accounts()
	plains := map[string]string{"U1": "cal_live_first_person_0123456789", "U2": "cal_live_second_person_987654321"}
	for user, plain := range plains {
		key, _ := booking.NewKey(plain)
		sealed, err := sealer.Seal(user, key)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Put(t.Context(), account.Account{User: user, Sealed: sealed, ConnectedAt: time.Now(), State: account.OK}); err != nil {
			t.Fatal(err)
		}
	}
	c := conn(t, u)
	rows, err := c.Query(t.Context(), "SELECT row_to_json(a)::text FROM bookbot_accounts a")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var row string
		if err := rows.Scan(&row); err != nil {
			t.Fatal(err)
		}
		for _, plain := range plains {
			if bytes.Contains([]byte(row), []byte(plain)) || bytes.Contains([]byte(row), []byte(plain[9:24])) {
				t.Fatalf("a row holds a key in the clear: %s", row)
			}
		}
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	// Swap the two rows' sealed keys: neither opens.
	if _, err := c.Exec(t.Context(), `UPDATE bookbot_accounts a SET sealed = b.sealed FROM bookbot_accounts b WHERE a.user_id <> b.user_id`); err != nil {
		t.Fatal(err)
	}
	for user := range plains {
		a, _, err := s.Get(t.Context(), user)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sealer.Open(user, a.Sealed); !errors.Is(err, account.ErrOpen) {
			t.Errorf("%s: a swapped key opened: %v", user, err)
		}
	}
}

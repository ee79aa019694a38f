package account_test

import (
	"strings"
	"testing"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/booking"
)

func keyOf(t *testing.T, plain string) booking.Key {
	t.Helper()
	k, err := booking.NewKey(plain)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestCalendarID: one key is one calendar, whoever connects it; another
// key, another calendar; and the ID holds nothing of the key, nor can a
// guessed key be checked against it without the secret key.
func TestCalendarID(t *testing.T) {
	t.Parallel()
	s, other := secret(t), secret(t)
	ada, bob := keyOf(t, "cal_live_ada_0123456789"), keyOf(t, "cal_live_bob_0123456789")
	id := s.CalendarID(ada)
	if id != s.CalendarID(keyOf(t, "cal_live_ada_0123456789")) {
		t.Error("one key gave two IDs")
	}
	if id == s.CalendarID(bob) {
		t.Error("two keys gave one ID")
	}
	if id == other.CalendarID(ada) {
		t.Error("the ID does not depend on the secret key: a guessed key could be checked against it")
	}
	if !strings.HasPrefix(id, "cal-") || len(id) != len("cal-")+24 || strings.Contains(id, "ada") || id == booking.Owner {
		t.Errorf("ID %q", id)
	}
}

// TestCalendarOf: the owner's key is the owner's calendar, whoever
// connected it; else the ID recorded at connecting; else the sealer's.
func TestCalendarOf(t *testing.T) {
	t.Parallel()
	s := secret(t)
	k := keyOf(t, "cal_live_ada_0123456789")
	isOwner := func(o booking.Key) bool { return o.Equal(keyOf(t, "cal_live_owner_0123456789")) }
	tests := []struct {
		name    string
		a       account.Account
		key     booking.Key
		isOwner func(booking.Key) bool
		want    string
	}{
		{"recorded", account.Account{User: "U1", Calendar: "cal-recorded"}, k, isOwner, "cal-recorded"},
		{"not recorded", account.Account{User: "U1"}, k, isOwner, s.CalendarID(k)},
		{"no owner's key", account.Account{User: "U1"}, k, nil, s.CalendarID(k)},
		{"the owner's key", account.Account{User: "U1", Calendar: "cal-recorded"}, keyOf(t, "cal_live_owner_0123456789"), isOwner, booking.Owner},
	}
	for _, tt := range tests {
		if got := account.CalendarOf(tt.a, tt.key, s, tt.isOwner); got != tt.want {
			t.Errorf("%s: CalendarOf = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestConnecting: a key another account holds takes that account's
// calendar ID, even one recorded under an earlier secret key.
func TestConnecting(t *testing.T) {
	t.Parallel()
	s := secret(t)
	k := keyOf(t, "cal_live_ada_0123456789")
	sealed, err := s.Seal("U1", k)
	if err != nil {
		t.Fatal(err)
	}
	otherKey, _ := s.Seal("U3", keyOf(t, "cal_live_bob_0123456789"))
	others := []account.Account{
		{User: "U3", Sealed: otherKey, State: account.OK, Calendar: "cal-bob"},
		{User: "U1", Sealed: sealed, State: account.OK, Calendar: "cal-from-before"},
	}
	if got := account.Connecting(k, s, others); got != "cal-from-before" {
		t.Errorf("Connecting a key U1 holds = %q, want U1's calendar", got)
	}
	if got := account.Connecting(keyOf(t, "cal_live_new_0123456789"), s, others); got != s.CalendarID(keyOf(t, "cal_live_new_0123456789")) {
		t.Errorf("Connecting a new key = %q, want the sealer's ID", got)
	}
	others[1].State = account.Reconnect
	if got := account.Connecting(k, s, others); got != s.CalendarID(k) {
		t.Errorf("Connecting a key whose account was refused = %q, want the sealer's ID", got)
	}
}

package account_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/booking"
)

func secret(t *testing.T) *account.Sealer {
	t.Helper()
	b := make([]byte, account.SecretSize)
	_, _ = rand.Read(b)
	s, err := account.NewSealer(b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const plain = "cal_live_0123456789abcdef"

func key(t *testing.T) booking.Key {
	k, err := booking.NewKey(plain)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSealOpens(t *testing.T) {
	t.Parallel()
	s := secret(t)
	sealed, err := s.Seal("U1", key(t))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte(plain)) || bytes.Contains(sealed, []byte(plain[4:12])) {
		t.Fatal("the sealed key holds the key in the clear")
	}
	got, err := s.Open("U1", sealed)
	if err != nil || !got.Equal(key(t)) {
		t.Fatalf("Open = %v; want the key back", err)
	}
	again, _ := s.Seal("U1", key(t))
	if bytes.Equal(again, sealed) {
		t.Fatal("two seals of one key are equal: the nonce is not fresh")
	}
}

func TestOpenRefuses(t *testing.T) {
	t.Parallel()
	s := secret(t)
	sealed, _ := s.Seal("U1", key(t))
	flipped := bytes.Clone(sealed)
	flipped[len(flipped)-1] ^= 1
	for name, open := range map[string]func() (booking.Key, error){
		"another secret":  func() (booking.Key, error) { return secret(t).Open("U1", sealed) },
		"another account": func() (booking.Key, error) { return s.Open("U2", sealed) },
		"changed":         func() (booking.Key, error) { return s.Open("U1", flipped) },
		"short":           func() (booking.Key, error) { return s.Open("U1", sealed[:10]) },
	} {
		if _, err := open(); !errors.Is(err, account.ErrOpen) {
			t.Errorf("%s: Open = %v; want ErrOpen", name, err)
		}
	}
}

func TestReseal(t *testing.T) {
	t.Parallel()
	from, to := secret(t), secret(t)
	var as []account.Account
	for _, u := range []string{"U1", "U2"} {
		sealed, _ := from.Seal(u, key(t))
		as = append(as, account.Account{User: u, Sealed: sealed})
	}
	as[1].Calendar = "cal-recorded"
	out, err := account.Reseal(as, from, to)
	if err != nil {
		t.Fatal(err)
	}
	var resealed []account.Account
	for i, sw := range out {
		if sw.User != as[i].User || !bytes.Equal(sw.Old, as[i].Sealed) {
			t.Errorf("swap %d is of %s, not of the key read", i, sw.User)
		}
		if _, err := from.Open(sw.User, sw.New); err == nil {
			t.Errorf("%s: the old secret still opens the resealed key", sw.User)
		}
		if k, err := to.Open(sw.User, sw.New); err != nil || !k.Equal(key(t)) {
			t.Errorf("%s: the new secret does not open the resealed key: %v", sw.User, err)
		}
		// The calendar keeps its ID: the one recorded, else the old
		// secret's, which the new one would not give.
		if want := []string{from.CalendarID(key(t)), "cal-recorded"}[i]; sw.Calendar != want || sw.Calendar == to.CalendarID(key(t)) {
			t.Errorf("%s: calendar %q, want %q", sw.User, sw.Calendar, want)
		}
		resealed = append(resealed, account.Account{User: sw.User, Sealed: sw.New})
	}
	if _, err := account.Reseal(resealed, from, to); err == nil {
		t.Fatal("Reseal with the wrong old secret succeeded")
	}
}

func TestParseSecret(t *testing.T) {
	t.Parallel()
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	for _, s := range []string{base64.StdEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b) + "\n"} {
		if got, err := account.ParseSecret(s); err != nil || !bytes.Equal(got, b) {
			t.Errorf("ParseSecret(%q) = %v", s, err)
		}
	}
	for _, s := range []string{"", "not base64!", base64.StdEncoding.EncodeToString(b[:16])} {
		_, err := account.ParseSecret(s)
		if err == nil {
			t.Errorf("ParseSecret(%q) succeeded", s)
		} else if s != "" && strings.Contains(err.Error(), s) {
			t.Errorf("the error shows the value: %v", err)
		}
	}
}

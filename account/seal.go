package account

import (
	"cmp"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/bookbot/bookbot/booking"
)

// SecretSize is the size of the key-encryption key: AES-256.
const SecretSize = 32

// ParseSecret reads BOOKBOT_SECRET_KEY: 32 bytes, base64 (standard or URL
// alphabet, padded or not). Its errors never hold the value.
func ParseSecret(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			if len(b) != SecretSize {
				return nil, fmt.Errorf("the secret key is %d bytes; it must be %d random bytes, base64 (openssl rand -base64 32)", len(b), SecretSize)
			}
			return b, nil
		}
	}
	return nil, errors.New("the secret key is not base64; it must be 32 random bytes, base64 (openssl rand -base64 32)")
}

// Sealer seals and opens people's API keys under the key-encryption key.
// The account's user ID is bound as additional data, so a sealed key
// copied to another person's account does not open.
type Sealer struct {
	aead cipher.AEAD
	ids  []byte // the key of calendar IDs, derived from the secret key
}

// NewSealer returns a Sealer under secret, 32 bytes.
func NewSealer(secret []byte) (*Sealer, error) {
	if len(secret) != SecretSize {
		return nil, fmt.Errorf("the secret key must be %d bytes", SecretSize)
	}
	block, err := aes.NewCipher(secret)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	ids := hmac.New(sha256.New, secret)
	ids.Write([]byte("bookbot calendar IDs"))
	return &Sealer{aead: aead, ids: ids.Sum(nil)}, nil
}

// CalendarID names the calendar key acts on without holding the key: a
// keyed hash of it (HMAC-SHA-256 under a key derived from the secret key,
// so the ID of a guessed key cannot be checked without the secret), the
// same for everyone who connects that key.
func (s *Sealer) CalendarID(key booking.Key) string {
	m := hmac.New(sha256.New, s.ids)
	m.Write(key.Plain())
	return "cal-" + hex.EncodeToString(m.Sum(nil)[:12])
}

// sealVersion starts every sealed key: the format (AES-256-GCM, a random
// 12-byte nonce), so that another can follow.
const sealVersion = 1

// ErrOpen is the error for a sealed key that does not open: another
// secret key sealed it, or it belongs to another account, or it was
// changed.
var ErrOpen = errors.New("the stored key does not open with this secret key (BOOKBOT_SECRET_KEY changed, or the record was altered or moved)")

func additional(user string) []byte { return []byte("bookbot account key\x00" + user) }

// Seal seals key for user.
func (s *Sealer) Seal(user string, key booking.Key) ([]byte, error) {
	if user == "" || key.IsZero() {
		return nil, errors.New("sealing a key needs a user and a key")
	}
	out := make([]byte, 1+s.aead.NonceSize(), 1+s.aead.NonceSize()+len(key.Plain())+s.aead.Overhead())
	out[0] = sealVersion
	if _, err := rand.Read(out[1:]); err != nil {
		return nil, err
	}
	return s.aead.Seal(out, out[1:], key.Plain(), additional(user)), nil
}

// Open opens what Seal sealed for user.
func (s *Sealer) Open(user string, sealed []byte) (booking.Key, error) {
	n := s.aead.NonceSize()
	if len(sealed) < 1+n+s.aead.Overhead() || sealed[0] != sealVersion {
		return booking.Key{}, ErrOpen
	}
	plain, err := s.aead.Open(nil, sealed[1:1+n], sealed[1+n:], additional(user))
	if err != nil {
		return booking.Key{}, ErrOpen
	}
	k, err := booking.NewKey(string(plain))
	clear(plain)
	if err != nil {
		return booking.Key{}, ErrOpen
	}
	return k, nil
}

// Reseal opens every account's key with from and seals it again with to,
// for `bookbot keys rotate`: the swaps to write with Store.SwapKeys, each
// with its calendar's ID as from gave it, so that the ID stays when to
// would give another. Nothing is returned unless every key opened.
func Reseal(as []Account, from, to *Sealer) ([]KeySwap, error) {
	out := make([]KeySwap, 0, len(as))
	for _, a := range as {
		k, err := from.Open(a.User, a.Sealed)
		if err != nil {
			return nil, fmt.Errorf("the key of %s: %w", a.User, err)
		}
		sealed, err := to.Seal(a.User, k)
		if err != nil {
			return nil, fmt.Errorf("the key of %s: %w", a.User, err)
		}
		out = append(out, KeySwap{User: a.User, Old: a.Sealed, New: sealed, Calendar: cmp.Or(a.Calendar, from.CalendarID(k))})
	}
	return out, nil
}

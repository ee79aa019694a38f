package booking

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/bookbot/bookbot/internal/secretfile"
)

const redacted = "[REDACTED]"

// Key is the owner's API key. It has full access to a real calendar, so every
// way Go has of printing a value prints a placeholder instead of the key.
type Key struct {
	// A pointer, because fmt prints a struct's unexported fields without
	// calling their methods: a Key inside another struct must show up as an
	// address, never as the key.
	p *string
}

// NewKey checks and wraps an API key. Surrounding white space (a trailing
// newline from a file or a secret store) is dropped; the key itself is used
// intact because production keys carry routing information.
func NewKey(s string) (Key, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Key{}, errors.New("the booking API key is empty")
	}
	for _, r := range s {
		// A space or control character would corrupt the Authorization header.
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return Key{}, errors.New("the booking API key contains white space or control characters")
		}
	}
	return Key{p: &s}, nil
}

func (k Key) value() string {
	if k.p == nil {
		return ""
	}
	return *k.p
}

// The printing methods all give a placeholder, whatever the verb or encoder.
func (k Key) String() string               { return redacted }
func (k Key) GoString() string             { return redacted }
func (k Key) Format(f fmt.State, _ rune)   { _, _ = f.Write([]byte(redacted)) }
func (k Key) LogValue() slog.Value         { return slog.StringValue(redacted) }
func (k Key) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }
func (k Key) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// IsZero reports whether the key is unset.
func (k Key) IsZero() bool { return k.value() == "" }

// Equal reports whether two keys are the same key, in constant time.
func (k Key) Equal(other Key) bool {
	return subtle.ConstantTimeCompare([]byte(k.value()), []byte(other.value())) == 1
}

// Key makes a Key its own KeySource.
func (k Key) Key() (Key, error)     { return k, nil }
func (k Key) authorization() string { return "Bearer " + k.value() }

// redactKey removes the key from text that came from elsewhere, such as an
// error page that echoes request headers.
func redactKey(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, redacted)
}

// KeySource yields the key for each request. A Key is its own source; a
// KeyFile re-reads its file when it changes.
type KeySource interface {
	Key() (Key, error)
}

// KeyFile is a key kept in a file, re-read whenever the file's size or
// modification time changes, so a rotated key takes over without a restart.
type KeyFile struct {
	path string

	mu      sync.Mutex
	key     Key
	size    int64
	modTime time.Time
}

// NewKeyFile reads the key file once, so a missing or empty file is reported
// at start-up rather than at the first request.
func NewKeyFile(path string) (*KeyFile, error) {
	f := &KeyFile{path: path}
	if _, err := f.Key(); err != nil {
		return nil, err
	}
	return f, nil
}

// Key returns the file's current key. When a changed file cannot be read or
// holds no valid key, the error says so and the previous key is not used:
// a half-written rotation should fail loudly, not act with a stale key.
func (f *KeyFile) Key() (Key, error) {
	st, err := os.Stat(f.path)
	if err != nil {
		return Key{}, fmt.Errorf("booking API key file: %w", pathErr(err))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.key.IsZero() && st.Size() == f.size && st.ModTime().Equal(f.modTime) {
		return f.key, nil
	}
	b, err := readKeyFile(f.path)
	if err != nil {
		return Key{}, err
	}
	k, err := NewKey(string(bytes.TrimSpace(b)))
	if err != nil {
		return Key{}, fmt.Errorf("booking API key file %s: %w", f.path, err)
	}
	f.key, f.size, f.modTime = k, st.Size(), st.ModTime()
	return k, nil
}

// maxKeyFile is the most a key file may hold; a key is well under 1 KiB.
const maxKeyFile = 64 << 10

// readKeyFile reads at most maxKeyFile bytes of a regular file, so a path
// such as /dev/zero, a named pipe or a log file given by mistake cannot
// make bookbot wait or read without end. The error names the file, never
// what it holds.
func readKeyFile(path string) ([]byte, error) {
	b, err := secretfile.Read(path, maxKeyFile)
	if err != nil {
		return nil, fmt.Errorf("booking API key file: %w", pathErr(err))
	}
	return b, nil
}

// A KeyFile prints as its path only: its fields hold the key.
func (f *KeyFile) String() string               { return "key file " + f.path }
func (f *KeyFile) GoString() string             { return f.String() }
func (f *KeyFile) Format(s fmt.State, _ rune)   { _, _ = s.Write([]byte(f.String())) }
func (f *KeyFile) LogValue() slog.Value         { return slog.StringValue(f.String()) }
func (f *KeyFile) MarshalJSON() ([]byte, error) { return json.Marshal(f.String()) }

// pathErr keeps the path and the reason of a file error; *os.PathError
// never holds file contents, so it is safe to show.
func pathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}

// Plain is the key itself, for sealing it at rest (package account) and
// nothing else: never print, log or send it.
func (k Key) Plain() []byte { return []byte(k.value()) }

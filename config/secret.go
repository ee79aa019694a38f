package config

import (
	"fmt"
	"log/slog"

	"github.com/bookbot/bookbot/booking"
)

const redacted = "[REDACTED]"

// Secret is a credential read from the environment or a file. Every way Go
// has of printing a value prints a placeholder instead; Value is the only
// way to the credential itself.
type Secret struct {
	value string
}

// Value returns the credential, for the one place that sends it.
func (s Secret) Value() string { return s.value }

// IsZero reports whether the secret is unset.
func (s Secret) IsZero() bool { return s.value == "" }

// The printing methods all give a placeholder, whatever the verb or encoder.
func (s Secret) String() string               { return redacted }
func (s Secret) GoString() string             { return redacted }
func (s Secret) Format(f fmt.State, _ rune)   { _, _ = f.Write([]byte(redacted)) }
func (s Secret) LogValue() slog.Value         { return slog.StringValue(redacted) }
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }
func (s Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// keyFile is a *booking.KeyFile that cannot be printed. booking.KeyFile
// caches the key in an unexported field, and fmt prints unexported fields
// raw (%+v of the pointer itself, or any verb a Key has no method for), so
// Config never holds one bare.
type keyFile struct {
	f *booking.KeyFile
}

// Key re-reads the file when it has changed; see booking.KeyFile.Key.
func (k keyFile) Key() (booking.Key, error) { return k.f.Key() }

func (k keyFile) String() string               { return redacted }
func (k keyFile) GoString() string             { return redacted }
func (k keyFile) Format(f fmt.State, _ rune)   { _, _ = f.Write([]byte(redacted)) }
func (k keyFile) LogValue() slog.Value         { return slog.StringValue(redacted) }
func (k keyFile) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }
func (k keyFile) MarshalText() ([]byte, error) { return []byte(redacted), nil }

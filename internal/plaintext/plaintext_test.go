package plaintext_test

import (
	"testing"

	"github.com/bookbot/bookbot/internal/plaintext"
)

func TestLine(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Grace Hopper":             "Grace Hopper",
		"  Grace Hopper ":          "Grace Hopper",
		"Grace\nHopper":            "Grace Hopper",
		"Grace\r\n\tHopper":        "Grace Hopper",
		"Eve\x1b[2J\x1b[31m":       "Eve [2J [31m",
		"Ada\u2028Lovelace":        "Ada Lovelace",
		"\u202Egnp.exe":            "gnp.exe",
		"Ada \u2066Lovelace\u2069": "Ada Lovelace",
		"Ada  Lovelace":            "Ada  Lovelace", // plain spaces are left as they are
		"":                         "",
	} {
		if got := plaintext.Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
	}
}

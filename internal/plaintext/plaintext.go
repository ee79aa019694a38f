// Package plaintext makes text that came from outside (an attendee's name,
// an event's title, an API's error) safe to show on one line: in a Slack
// message, the digest, or a terminal.
package plaintext

import (
	"strings"
	"unicode"
)

// Line turns control characters (newlines and a terminal's escape
// sequences included) into spaces, drops bidirectional overrides that could
// make a name display as something else, collapses runs of white space and
// trims the result.
func Line(s string) string {
	dirty := false
	for _, r := range s {
		if unicode.IsControl(r) || isBidiControl(r) || r == '\u2028' || r == '\u2029' {
			dirty = true
			break
		}
	}
	if !dirty {
		return strings.TrimSpace(s)
	}
	s = strings.Map(func(r rune) rune {
		switch {
		case isBidiControl(r):
			return -1
		case unicode.IsControl(r), r == '\u2028', r == '\u2029':
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

func isBidiControl(r rune) bool {
	return (r >= '\u202A' && r <= '\u202E') || (r >= '\u2066' && r <= '\u2069') || r == '\u200E' || r == '\u200F'
}

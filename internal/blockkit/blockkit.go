// Package blockkit reads Block Kit JSON as a person reads it: the texts,
// date tokens as their fallbacks, and the interactive elements. It is for
// tests, which hold what bookbot sends to what people see.
package blockkit

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// Decode is raw decoded into maps and slices; nil when it is not JSON.
func Decode(raw []byte) any {
	var v any
	_ = json.Unmarshal(raw, &v)
	return v
}

// Walk calls fn for every JSON object in v, depth first, each object's
// keys in order.
func Walk(v any, fn func(map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		fn(x)
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			Walk(x[k], fn)
		}
	case []any:
		for _, e := range x {
			Walk(e, fn)
		}
	}
}

var dateToken = regexp.MustCompile(`<!date\^\d+\^[^|>]*\|([^>]*)>`)

// Fallbacks is s with Slack's date tokens replaced by their fallback
// text, which is in the reader's zone.
func Fallbacks(s string) string { return dateToken.ReplaceAllString(s, "$1") }

// Text is every text in raw (blocks, a view, any Block Kit JSON), one per
// line: what a person can read, option and button values left out, date
// tokens as their fallbacks.
func Text(raw []byte) string {
	var out []string
	Walk(Decode(raw), func(m map[string]any) {
		if s, ok := m["text"].(string); ok {
			out = append(out, Fallbacks(s))
		}
	})
	return strings.Join(out, "\n")
}

// Elements are the interactive elements in raw with actionID.
func Elements(raw []byte, actionID string) []map[string]any {
	var out []map[string]any
	Walk(Decode(raw), func(m map[string]any) {
		if s, _ := m["action_id"].(string); s == actionID {
			out = append(out, m)
		}
	})
	return out
}

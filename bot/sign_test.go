package bot

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A form's metadata, signed, fits Slack's 3000 characters whatever the
// note: a note that fits is kept, one that does not is the one thing
// dropped.
func TestSignedMetadataFits(t *testing.T) {
	s := newSigner(ViewKey("xapp-test"))
	base := modalMeta{Zone: "America/Argentina/ComodRivadavia", Event: strings.Repeat("e", 150), Start: "2026-03-23T10:15:00.000000001+05:45",
		Name: strings.Repeat("<", 200), Email: strings.Repeat("&", 64) + "@example.com", TZ: "America/Argentina/ComodRivadavia", Review: 1 << 62}
	notes := []string{"", "short", strings.Repeat("é", 2000), strings.Repeat("<", 2000), strings.Repeat("\U0001F600", 1000)}
	for n := range 2001 { // every length, so one ends right at the limit
		notes = append(notes, strings.Repeat("a", n))
	}
	for _, note := range notes {
		m := base
		m.Note = note
		signed := s.sign(m.encode())
		if n := utf8.RuneCountInString(signed); n > maxMetadata {
			t.Errorf("a note of %d characters: metadata of %d characters", utf8.RuneCountInString(note), n)
		}
		meta, ok := s.open(signed)
		if !ok {
			t.Fatalf("bookbot's own signature refused: %q", signed)
		}
		if note == "short" && !strings.Contains(meta, `"o":"short"`) {
			t.Errorf("a short note was dropped: %s", meta)
		}
	}
}

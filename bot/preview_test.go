package bot_test

import (
	"strings"
	"testing"

	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/digest"
)

// `/booking digest` shows the asker tomorrow's digest, in the digest's zone,
// and posts nothing in a channel.
func TestDigestPreview(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(h *harness, cfg *bot.Config) {
		cfg.Digest = &digest.Runner{Source: h.client, Channel: "CDIGEST", Zone: berlin, Now: h.clock.Now}
		cfg.DigestZone = berlin
	})
	h.slash(ada, "digest")
	m := h.reply(ada, "Bookings, Tue 24 Mar")
	text := textOf(m.Blocks)
	for _, s := range []string{"Europe/Berlin", "3 bookings", "*09:00–09:15 CET*", "Intro call · Ada Lovelace"} {
		if !strings.Contains(text, s) {
			t.Errorf("preview lacks %q:\n%s", s, text)
		}
	}
	if strings.Contains(text, "@example.com") {
		t.Errorf("preview shows emails though DIGEST_INCLUDE_EMAILS is off:\n%s", text)
	}
	h.drain()
	for _, msg := range h.sl.Messages() {
		if msg.Kind == "message" {
			t.Errorf("the preview posted to %s", msg.Channel)
		}
	}
}

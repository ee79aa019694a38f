package bot

import (
	"sort"
	"strings"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/booking"
)

// dryRunNote heads every message and view in a dry run, so nobody takes
// a dry run's "booked" for a real one.
const dryRunNote = ":test_tube: *Dry run:* bookbot sends no bookings or cancellations to the booking API; it shows what it would have sent."

func dryRunBanner() slack.Block { return contextLine(dryRunNote) }

// mark puts the dry-run banner on a message. Messages keep to 49 blocks, so
// the banner always fits Slack's 50.
func (b *Bot) mark(m message) message {
	if !b.cfg.DryRun {
		return m
	}
	m.Blocks = append([]slack.Block{dryRunBanner()}, m.Blocks...)
	m.Text = "[dry run] " + m.Text
	return m
}

func (b *Bot) markView(v *slack.ModalViewRequest) *slack.ModalViewRequest {
	if b.cfg.DryRun {
		v.Blocks.BlockSet = withBanner(v.Blocks.BlockSet)
	}
	return v
}

func withBanner(blocks []slack.Block) []slack.Block {
	return append([]slack.Block{dryRunBanner()}, blocks...)
}

// wouldSend shows the request a dry run did not send: the endpoint and
// every form field, exactly as they would have gone, one field a line. Each
// line is escaped on its own (a newline in a value is flattened like any
// data), and a backtick is shown as code() shows it, so a value cannot end
// the block.
func wouldSend(r *booking.Request) string {
	if r == nil {
		return "Nothing would have been sent."
	}
	s := "bookbot would have sent " + code(r.Method+" "+r.Path)
	if len(r.Form) == 0 {
		return s + " with no body."
	}
	keys := make([]string, 0, len(r.Form))
	for k := range r.Form {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var fields []string
	for _, k := range keys {
		for _, v := range r.Form[k] {
			fields = append(fields, escape(strings.ReplaceAll(k+" = "+clip(v, 200), "`", "ˋ")))
		}
	}
	return s + " (form-encoded) with:\n```" + strings.Join(fields, "\n") + "```"
}

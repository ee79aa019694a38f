package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/digest"
	"github.com/bookbot/bookbot/internal/pause"
)

// digestFlow is `digest`: tomorrow's digest, shown only to the person.
func digestFlow() flow {
	return flow{commands: []command{
		{name: "digest", help: "preview tomorrow's digest", run: func(b *Bot, later *jobs, c call) any {
			later.add("digest-preview", func(ctx context.Context) {
				for _, m := range b.digestReply(ctx, c.UserID) {
					c.reply(m)
				}
			})
			return nil
		}},
	}}
}

// Block Kit limits the digest keeps to. Lengths are counted in bytes, which
// is never less than Slack's count of characters.
const (
	digestMaxBlocks      = 50   // blocks per message
	digestMaxSectionText = 3000 // section text
	digestMaxHeaderText  = 150  // header text
	// digestPostAttempts is how often one message is tried when Slack
	// answers 429: the answer proves it was not posted.
	digestPostAttempts = 3
	digestMaxRateWait  = time.Minute
)

// DigestMessage is one chat message of a digest.
type DigestMessage struct {
	Text   string // notification fallback: plain text, escaped for mrkdwn
	Blocks []slack.Block
}

// DigestPoster posts a chat message. *slack.Client satisfies it.
type DigestPoster interface {
	PostMessageContext(ctx context.Context, channelID string, options ...slack.MsgOption) (string, string, error)
}

var _ DigestPoster = (*slack.Client)(nil)

// SlackDigestPublisher implements digest.Publisher with chat.postMessage.
//
// A digest may take several messages. When the first one is refused (Slack
// answered with an error, or a 429 that outlasted the retries) nothing was
// posted and the error says so; any other failure — a timeout or a server
// error after the request went out, or a later message failing after earlier
// ones were posted — matches digest.ErrMaybePosted, so the digest is never
// posted twice.
type SlackDigestPublisher struct {
	Slack DigestPoster

	// sleep waits out a rate limit; nil waits on a timer. Tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
}

var (
	_ digest.Publisher   = SlackDigestPublisher{}
	_ digest.TSPublisher = SlackDigestPublisher{}
)

// digestReply previews tomorrow's digest of the calendar user acts on:
// the owner's, as the digest channel gets it, or their own, built the
// same way.
func (b *Bot) digestReply(ctx context.Context, user string) []message {
	cal, err := b.calendarFor(ctx, user)
	if err != nil {
		return []message{b.failed("Tomorrow's digest could not be built", err)}
	}
	previewer := b.cfg.Digest
	if cal.label != booking.Owner {
		previewer = &digest.Runner{Source: cal, Zone: b.cfg.DigestZone, IncludeEmails: b.cfg.IncludeEmails, Log: b.log}
	}
	if previewer == nil {
		return []message{{Text: "The digest is not set up.", Blocks: []slack.Block{section("The next-day digest is not set up on this bookbot.")}}}
	}
	day := digest.Tomorrow(b.cfg.Now(), b.cfg.DigestZone)
	d, err := previewer.Preview(ctx, day)
	if err != nil {
		return []message{b.failed("Tomorrow's digest could not be built", err)}
	}
	var out []message
	for _, m := range DigestMessages(d, b.cfg.IncludeEmails) {
		out = append(out, message{Text: m.Text, Blocks: m.Blocks})
	}
	return out
}

// digestHeader is the digest's header, a day's heading as every message
// has them; the context line under it names the zone whose day it is.
func digestHeader(d digest.Digest) string {
	return dayHeading("Bookings", d.Date, d.Zone)
}

// digestRows is the most bookings the digest's message in the channel
// shows: a phone shows them without scrolling far. The rest are in its
// thread.
const digestRows = 15

// DigestMessages renders a digest as Block Kit messages within Slack's
// limits. The first, for the channel: a header with the date (≤150
// chars), a context line with the count, the zone and the may-be-incomplete
// warning, then the first digestRows entries, one line each, and how many
// more there are. The others, for the first one's thread: the rest of the
// day, headed by which of the day's bookings they hold, each message
// within Slack's limits (50 blocks, 3000 chars per section, about 12,000
// chars in all). A line is the time range as Slack's time tokens, so every
// reader sees their own time under the header that names the day once,
// the event title, the attendee's name, and the email only with
// includeEmails.
//
// Everything user-provided is escaped (&, <, >), and sections are verbatim,
// so an attendee named "<!channel>" or "@here" pings nobody.
func DigestMessages(d digest.Digest, includeEmails bool) []DigestMessage {
	d = digestClipped(d)
	day := d.Date.In(d.Zone).Format(dayLayout)
	if len(d.Entries) == 0 && !d.MaybeIncomplete {
		// A quiet day is one quiet line in the channel.
		line := "No bookings tomorrow, " + day + " (" + escape(d.Zone.String()) + ")."
		return []DigestMessage{{Text: "Digest for " + day + ": no bookings.", Blocks: []slack.Block{contextLine(line)}}}
	}
	shown := d.Entries[:min(len(d.Entries), digestRows)]
	fixed := len(digestHeader(d)) + digestContextLen(d) + len(digestMore(100, 100, 100))
	parts := digestPack(d, shown, includeEmails, fixed)
	if len(parts) == 0 {
		// No bookings, and the list may not show them all: the channel's
		// message is its header and the warning alone.
		parts = []digestPart{{}}
	}
	parts = append(parts, digestPack(d, d.Entries[len(shown):], includeEmails, len(digestHeader(d))+len(": 100–100 of 100"))...)

	out := make([]DigestMessage, 0, len(parts))
	from := 1 // the day's number of the part's first booking
	for i, p := range parts {
		header := digestHeader(d)
		text := "Digest for " + day
		if i == 0 {
			p.blocks = append([]slack.Block{nil, digestContext(d)}, p.blocks...)
			text += ": " + plural(len(d.Entries), "booking") + "."
			if w := d.IncompleteWarning(); w != "" {
				text += " " + escape(w)
			}
		} else {
			p.blocks = append([]slack.Block{nil}, p.blocks...)
			which := fmt.Sprintf("%d–%d of %d", from, from+p.entries-1, len(d.Entries))
			header += ": " + which
			text += ": bookings " + which + "."
		}
		p.blocks[0] = slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, cut(header, digestMaxHeaderText), false, false))
		from += p.entries
		out = append(out, DigestMessage{Text: text, Blocks: p.blocks})
	}
	if first := parts[0].entries; first < len(d.Entries) {
		out[0].Blocks = append(out[0].Blocks, contextLine(digestMore(len(d.Entries)-first, first+1, len(d.Entries))))
	}
	return out
}

// digestMore says, under the channel's message, how many of the day's
// bookings are in its thread, and which.
func digestMore(n, from, to int) string {
	return fmt.Sprintf("*%d more* in the thread: the day's bookings %d to %d.", n, from, to)
}

// digestPart is one message's entries, packed into sections.
type digestPart struct {
	blocks  []slack.Block
	entries int
}

// digestPack packs entries, one line each, into sections, and sections
// into as few messages as Slack's limits allow, the first of which has
// fixed characters of text besides (its header and context) and two
// blocks. Every message leaves a block for its header.
func digestPack(d digest.Digest, entries []digest.Entry, includeEmails bool, fixed int) []digestPart {
	if len(entries) == 0 {
		return nil
	}
	parts := []digestPart{{}}
	var sec strings.Builder // the open section
	secEntries := 0
	used, reserved := fixed, 3 // text in the current message; blocks kept for header, context and the count of more
	closeSection := func() {
		if sec.Len() == 0 {
			return
		}
		p := &parts[len(parts)-1]
		p.blocks = append(p.blocks, digestSection(sec.String()))
		p.entries += secEntries
		sec.Reset()
		secEntries = 0
	}
	for _, e := range entries {
		line := digestEntryLine(d, e, includeEmails)
		if sec.Len() > 0 && (sec.Len()+1+len(line) > digestMaxSectionText || used+1+len(line) > maxMessageText) {
			closeSection()
		}
		if sec.Len() == 0 {
			// A new section: it needs a block, and the message must not
			// grow too long (unless it is the message's first entry).
			if p := &parts[len(parts)-1]; len(p.blocks)+1+reserved > digestMaxBlocks ||
				(p.entries > 0 && used+len(line) > maxMessageText) {
				parts = append(parts, digestPart{})
				used, reserved = len(digestHeader(d))+len(": 100–100 of 100"), 1
			}
		} else {
			sec.WriteByte('\n')
			used++
		}
		sec.WriteString(line)
		used += len(line)
		secEntries++
	}
	closeSection()
	return parts
}

// digestContext is the first message's context line: the count, the zone,
// and the warnings.
func digestContext(d digest.Digest) *slack.ContextBlock {
	var elems []slack.MixedElement
	for _, s := range digestContextTexts(d) {
		elems = append(elems, slack.NewTextBlockObject(slack.MarkdownType, s, false, true))
	}
	return slack.NewContextBlock("", elems...)
}

func digestContextTexts(d digest.Digest) []string {
	count := d.CountLine()
	if len(d.Entries) > 0 {
		count = "*" + count + "* · times in your own time zone; the day is " + escape(d.Zone.String()) + "'s"
		if d.ClockChange() {
			count += " · the clocks change on this day"
		}
	}
	texts := []string{count}
	if w := d.IncompleteWarning(); w != "" {
		texts = append(texts, ":warning: "+escape(w))
	}
	return texts
}

func digestContextLen(d digest.Digest) int {
	n := 0
	for _, s := range digestContextTexts(d) {
		n += len(s)
	}
	return n
}

func digestSection(text string) *slack.SectionBlock {
	// Verbatim: Slack must not turn plain text into links or mentions; the
	// date tokens are explicit syntax and still render.
	return slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, text, false, true), nil, nil)
}

// digestEntryLine renders one entry as mrkdwn. The time tokens come before
// the user-provided text, so a cut (which the clipping makes unreachable)
// could only shorten the latter.
func digestEntryLine(d digest.Digest, e digest.Entry, includeEmails bool) string {
	return cut("*"+hours(e.Start, e.End, d.Zone)+"*  "+digestParts(e, includeEmails), digestMaxSectionText)
}

// digestParts is an entry's event title, attendee and (with includeEmails)
// email, escaped, as the list and App Home write them (see parts).
func digestParts(e digest.Entry, includeEmails bool) string {
	email := ""
	if includeEmails {
		email = escape(e.AttendeeEmail.String)
	}
	return parts(escape(e.EventTitle), escape(e.AttendeeName.String), email)
}

// digestClipped returns d with long user-provided fields clipped.
func digestClipped(d digest.Digest) digest.Digest {
	if d.Zone == nil {
		d.Zone = time.UTC
	}
	entries := make([]digest.Entry, len(d.Entries))
	for i, e := range d.Entries {
		e.EventTitle = clip(e.EventTitle, maxNameRunes)
		e.AttendeeName.String = clip(e.AttendeeName.String, maxNameRunes)
		e.AttendeeEmail.String = clip(e.AttendeeEmail.String, maxEmailRunes)
		entries[i] = e
	}
	d.Entries = entries
	return d
}

// PublishDigest posts the digest to channel.
func (p SlackDigestPublisher) PublishDigest(ctx context.Context, channel string, d digest.Digest, includeEmails bool) error {
	_, err := p.PublishDigestTS(ctx, channel, d, includeEmails)
	return err
}

// PublishDigestTS posts the digest to channel, the rest of a long day in
// its first message's thread, and returns the first message's timestamp.
func (p SlackDigestPublisher) PublishDigestTS(ctx context.Context, channel string, d digest.Digest, includeEmails bool) (string, error) {
	msgs := DigestMessages(d, includeEmails)
	var firstTS string
	for i, m := range msgs {
		var meta []slack.MsgOption
		if i == 0 {
			meta = append(meta, slack.MsgOptionMetadata(slack.SlackMetadata{
				EventType: digestEvent, EventPayload: map[string]any{"date": d.Date.Format(time.DateOnly)},
			}))
		} else {
			meta = append(meta, slack.MsgOptionTS(firstTS))
		}
		ts, err := p.post(ctx, channel, m.Text, m.Blocks, meta...)
		if err != nil {
			if i == 0 && notPosted(err) {
				return "", fmt.Errorf("slack chat.postMessage: %w", err)
			}
			return firstTS, fmt.Errorf("%w: slack chat.postMessage, message %d of %d: %w", digest.ErrMaybePosted, i+1, len(msgs), err)
		}
		if i == 0 {
			firstTS = ts
		}
	}
	return firstTS, nil
}

// PublishFailure posts a short notice that the digest of day could not be
// built. reason is shown escaped; it must carry no secrets.
func (p SlackDigestPublisher) PublishFailure(ctx context.Context, channel string, day time.Time, zone *time.Location, reason string) error {
	text, blocks := DigestFailureMessage(day, zone, reason)
	if _, err := p.post(ctx, channel, text, blocks); err != nil {
		if notPosted(err) {
			return fmt.Errorf("slack chat.postMessage: %w", err)
		}
		return fmt.Errorf("%w: slack chat.postMessage: %w", digest.ErrMaybePosted, err)
	}
	return nil
}

// DigestFailureMessage renders the notice that a day's digest could not be
// built: what, which day, why in a short phrase, and what happens next.
func DigestFailureMessage(day time.Time, zone *time.Location, reason string) (string, []slack.Block) {
	title := digest.DayTitle(day, zone)
	reason = escape(clip(strings.TrimSpace(reason), 200))
	if reason == "" {
		reason = "unknown"
	}
	text := escape("The booking digest for "+title+" could not be built: ") + reason +
		". It is tried again at the next scheduled run."
	section := ":warning: *The booking digest for " + escape(title) + " could not be built.*\n" +
		"Reason: " + reason + ".\n" +
		"bookbot tries again at the next scheduled run and posts the digest as soon as the bookings can be read."
	return text, []slack.Block{digestSection(section)}
}

// post sends one message, waiting out 429s, which prove nothing was posted.
func (p SlackDigestPublisher) post(ctx context.Context, channel, text string, blocks []slack.Block, more ...slack.MsgOption) (string, error) {
	if p.Slack == nil {
		return "", errors.New("no Slack client")
	}
	m, opts := message{Text: text, Blocks: blocks}, noUnfurl(more...)
	for attempt := 1; ; attempt++ {
		_, ts, err := postMessage(ctx, p.Slack, channel, m, opts...)
		wait, limited := rateLimited(err)
		if !limited || attempt >= digestPostAttempts || wait > digestMaxRateWait {
			return ts, err
		}
		sleep := p.sleep
		if sleep == nil {
			sleep = pause.For
		}
		if serr := sleep(ctx, wait); serr != nil {
			return "", err // still the 429: nothing was posted
		}
	}
}

package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/internal/pause"
	"github.com/bookbot/bookbot/notices"
)

// NoticeSlack is what notices need of Slack. *slack.Client satisfies it.
type NoticeSlack interface {
	PostMessageContext(ctx context.Context, channelID string, options ...slack.MsgOption) (string, string, error)
	UpdateMessageContext(ctx context.Context, channelID, timestamp string, options ...slack.MsgOption) (string, string, string, error)
	HistoryReader
}

var _ NoticeSlack = (*slack.Client)(nil)

// SlackNoticePublisher implements notices.Publisher: a booking's first
// notice is a message of its own, later ones update it in place and reply
// in its thread.
type SlackNoticePublisher struct {
	Slack         NoticeSlack
	Zone          *time.Location // the digest zone: of the times' fallbacks and the notification text
	IncludeEmails bool
	Now           func() time.Time // nil: time.Now
	// Sleep waits out a 429, or less when ctx ends first: then it returns
	// ctx's error. nil: pause.For. Tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
}

var _ notices.Publisher = SlackNoticePublisher{}

// Post posts n as a message of its own.
func (p SlackNoticePublisher) Post(ctx context.Context, channel string, n notices.Notice) (notices.Message, error) {
	m := noticeMessage(n, p.zone(), p.IncludeEmails, p.now())
	if n.Kind != notices.New {
		m = noticeReply(n, p.zone(), p.now())
	}
	return p.post(ctx, channel, "", m, false, n.Claim)
}

// Reply posts n in the thread of the booking's first notice, and in the
// channel too when it changes a booking near in time: Slack shows such a
// reply in the channel under a link to the thread's first message.
func (p SlackNoticePublisher) Reply(ctx context.Context, thread notices.Message, n notices.Notice) (notices.Message, error) {
	now := p.now()
	return p.post(ctx, thread.Channel, thread.TS, noticeReply(n, p.zone(), now), nearInTime(n, now), n.Claim)
}

// Update rewrites the booking's first notice to show it as it is now, its
// metadata too; the claims of the post it was are settled by then, and it
// carries none.
func (p SlackNoticePublisher) Update(ctx context.Context, thread notices.Message, n notices.Notice) error {
	m := noticeMessage(n, p.zone(), p.IncludeEmails, p.now())
	return updateMessage(ctx, p.Slack, thread.Channel, thread.TS, m)
}

// Burst posts many notices as one summary in the channel, or as few as
// Slack's limits allow, in order, and reports what became of each one it
// sent. It stops at the first summary not surely posted: the notices after
// it are left for the next read, so that none overtakes it. Each summary
// carries the claims of the notices it counts; the list of them all, one
// line each, follows in its thread.
func (p SlackNoticePublisher) Burst(ctx context.Context, channel string, ns []notices.Notice) []notices.Sent {
	var sent []notices.Sent
	type posted struct {
		at   notices.Message
		list []message
	}
	var lists []posted
	for _, part := range burstMessages(ns, p.zone(), p.IncludeEmails, p.now()) {
		var claims []string
		for _, n := range ns[:part.notices] {
			claims = append(claims, n.Claim)
		}
		ns = ns[part.notices:]
		m, err := p.post(ctx, channel, "", part.message, false, claims...)
		for range part.notices {
			sent = append(sent, notices.Sent{Message: m, Err: err})
		}
		if err != nil {
			break
		}
		lists = append(lists, posted{m, part.thread})
	}
	// The lists go out once every summary has: a summary is what its
	// notices are recorded against, so a list that does not go out loses
	// no notice, and a summary waits for no list.
	for _, l := range lists {
		for _, m := range l.list {
			if _, err := p.post(ctx, l.at.Channel, l.at.TS, m, false); err != nil {
				break
			}
		}
	}
	return sent
}

// post posts m, with the claims of the notices it tells of added to its
// metadata; broadcast also shows a thread reply in the channel. A 429
// proves m was not posted: it is waited out and m posted again, while
// ctx's deadline allows.
func (p SlackNoticePublisher) post(ctx context.Context, channel, thread string, m message, broadcast bool, claims ...string) (notices.Message, error) {
	opts := noUnfurl()
	if claims = slices.DeleteFunc(claims, func(c string) bool { return c == "" }); len(claims) > 0 {
		m.Metadata = withClaims(m.Metadata, claims)
	}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	if broadcast {
		opts = append(opts, slack.MsgOptionBroadcast())
	}
	for attempt := 1; ; attempt++ {
		ch, ts, err := postMessage(ctx, p.Slack, channel, m, opts...)
		if err == nil {
			if ch == "" {
				ch = channel
			}
			return notices.Message{Channel: ch, TS: ts}, nil
		}
		if attempt < noticePostAttempts && p.waitRateLimit(ctx, err) {
			continue
		}
		if notPosted(err) {
			return notices.Message{}, fmt.Errorf("%w: %s", notices.ErrNotPosted, slackErr(err))
		}
		return notices.Message{}, err
	}
}

const (
	// noticePostAttempts is how often one notice message is tried when
	// Slack answers 429.
	noticePostAttempts = 3
	// noticePostSpare is the time a wait for a 429 leaves before ctx's
	// deadline for the post after it: a post the deadline cuts short
	// leaves it unknown whether the message is in Slack.
	noticePostSpare = 5 * time.Second
)

// waitRateLimit waits out the 429 err is, if that wait leaves the post
// after it noticePostSpare before ctx's deadline, and reports whether it
// did.
func (p SlackNoticePublisher) waitRateLimit(ctx context.Context, err error) bool {
	wait, limited := rateLimited(err)
	if !limited {
		return false
	}
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait+noticePostSpare {
		return false
	}
	sleep := p.Sleep
	if sleep == nil {
		sleep = pause.For
	}
	return sleep(ctx, wait) == nil
}

func (p SlackNoticePublisher) zone() *time.Location {
	if p.Zone == nil {
		return time.UTC
	}
	return p.Zone
}

func (p SlackNoticePublisher) now() time.Time {
	if p.Now == nil {
		return time.Now()
	}
	return p.Now()
}

// Alert tells the review channel, or else the first reviewer by direct
// message, something about bookbot itself, such as notices being paused.
func (b *Bot) Alert(ctx context.Context, text string) error {
	to := b.cfg.ReviewChannel
	if to == "" && len(b.cfg.Reviewers) > 0 {
		to = b.cfg.Reviewers[0]
	}
	if to == "" {
		return errors.New("no review channel and no one to tell")
	}
	_, _, err := b.post(ctx, to, message{Text: escape(text), Blocks: []slack.Block{section(":warning: " + escape(text))}})
	return err
}

// noticeMessage is a booking's first notice, showing the booking as it is
// now: new, moved since, or cancelled. Its fallback text begins with what
// happened; its metadata carries the booking's ID.
func noticeMessage(n notices.Notice, zone *time.Location, emails bool, now time.Time) message {
	b := n.Booking
	title := noticeTitle(n)
	attendee := noticeName(n)
	if emails && b.BookerEmail.String != "" {
		attendee += " · " + address(b.BookerEmail.String)
	}
	timeLine := span(b.Start, b.End, zone)
	var head, by, fallback string
	switch n.Kind {
	case notices.Cancelled:
		head = ":wastebasket: *Cancelled* · ~" + title + "~"
		timeLine = "~" + timeLine + "~"
		by = "Cancelled " + madeWhere(n.By, "outside Slack", now, zone)
		switch {
		case unsure(n) && n.Unclear != nil:
			head = ":wastebasket: *Cancelled, or moved beyond the list* · ~" + title + "~"
			by = "No longer listed: the list shows only the first 100 upcoming bookings, so this one was cancelled or moved beyond them; " + unclearCancel(n.Unclear, zone) + " Noticed " + moment(now, zone)
		case n.Unclear != nil:
			by = "Cancelled: " + unclearCancel(n.Unclear, zone) + " Noticed " + moment(now, zone)
		case unsure(n):
			head = ":wastebasket: *Cancelled, or moved beyond the list* · ~" + title + "~"
			by = "No longer listed: the list shows only the first 100 upcoming bookings, so this one was cancelled or moved beyond them. Noticed " + moment(now, zone)
		}
		fallback = noticeWord(n)
	case notices.Moved:
		head = ":arrow_right: *Moved* · " + title
		timeLine += "\n_was " + span(n.Was.Start, n.Was.End, zone) + "_"
		by = "Moved outside Slack, noticed " + moment(now, zone)
		fallback = "Moved"
	default:
		head = ":calendar: *New booking* · " + title
		by = "Booked " + madeWhere(n.By, "outside bookbot", now, zone)
		switch {
		case unsure(n) && n.By != nil:
			head = ":calendar: *New booking, or moved into the list* · " + title
			by += ", beyond the first 100 upcoming bookings the list shows, and moved here since"
		case unsure(n):
			head = ":calendar: *New booking, or moved into the list* · " + title
			by = "Listed without its event type, as a booking its attendee moved is: booked, or moved here from beyond the first 100 upcoming bookings the list shows. Noticed " + moment(now, zone)
		}
		switch {
		case n.EmailCheck != nil:
			by = fmt.Sprintf("Booked once the attendee confirmed by email: bookbot's attempt %s %s needed their email confirmation. Noticed %s",
				madeBy(n.EmailCheck, "in Slack"), moment(n.EmailCheck.At, zone), moment(now, zone))
		case n.Unclear != nil:
			by = fmt.Sprintf("Booked: bookbot's attempt %s %s had no clear answer, and this booking matches it. Noticed %s",
				madeBy(n.Unclear, "in Slack"), moment(n.Unclear.At, zone), moment(now, zone))
		}
		fallback = noticeWord(n)
	}
	fallback += ": " + noticeFallback(n, zone)
	return message{
		Text: fallback,
		Blocks: []slack.Block{
			section(head + "\n" + timeLine + "\n" + attendee),
			contextLine(by),
		},
		Metadata: noticeMeta(n),
	}
}

// noticeReply is a later notice about a booking, in its thread: what
// happened, when, and by whom.
func noticeReply(n notices.Notice, zone *time.Location, now time.Time) message {
	b := n.Booking
	var text, fallback string
	switch {
	case n.Kind == notices.Cancelled && (unsure(n) || n.Unclear != nil):
		head, tail := "*Cancelled:*", ""
		if unsure(n) {
			head, tail = "*Cancelled, or moved beyond the list:*", " The list shows only the first 100 upcoming bookings, and no longer this one."
		}
		if n.Unclear != nil {
			tail += " " + unclearCancel(n.Unclear, zone)
		}
		text = fmt.Sprintf(":wastebasket: %s %s, %s with %s.%s", head, noticeTitle(n), span(b.Start, b.End, zone), noticeName(n), tail)
		fallback = noticeWord(n)
	case n.Kind == notices.Cancelled:
		text = fmt.Sprintf(":wastebasket: *Cancelled* %s: %s, %s with %s.", madeBy(n.By, "outside Slack"), noticeTitle(n), span(b.Start, b.End, zone), noticeName(n))
		fallback = "Cancelled"
	case n.Kind == notices.Moved:
		text = fmt.Sprintf(":arrow_right: *Moved* outside Slack: %s with %s, %s → %s.", noticeTitle(n), noticeName(n), span(n.Was.Start, n.Was.End, zone), span(b.Start, b.End, zone))
		fallback = "Moved"
	default:
		return noticeMessage(n, zone, false, now)
	}
	fallback += ": " + noticeFallback(n, zone)
	return message{Text: fallback, Blocks: []slack.Block{section(text)}, Metadata: noticeMeta(n)}
}

// nearWindow is how far ahead a cancel or a move is said in the channel
// too, not only in the thread of the booking's first notice: a change to
// today's or tomorrow's meeting is one people must see where they look.
const nearWindow = 48 * time.Hour

// nearInTime reports whether a reply about n goes to the channel too: a
// cancel of a booking not yet over that starts within nearWindow of now,
// or a move from or to such a time (whoever expects the meeting at its
// old time needs to hear as much as whoever must come at the new one).
func nearInTime(n notices.Notice, now time.Time) bool {
	soon := func(b booking.Booking) bool { return b.End.After(now) && b.Start.Before(now.Add(nearWindow)) }
	switch n.Kind {
	case notices.Cancelled:
		return soon(n.Booking)
	case notices.Moved:
		return soon(n.Booking) || soon(n.Was)
	}
	return false
}

// A burst's budget: one summary a phone shows without scrolling far.
const (
	// burstClaims is the most notices one summary tells of: its metadata
	// carries their claims, and a read lists at most booking.MaxListed
	// bookings, so a read's changes fit one summary, or two.
	burstClaims = booking.MaxListed
	// burstRows is the most changes a summary shows a line of: today's
	// and tomorrow's, first. All of them are in its thread.
	burstRows = 8
	// burstNameRunes clips names and titles on a burst's lines.
	burstNameRunes = 40
)

// burstPart is a summary of a burst, telling of its next notices, and the
// list of them, for its thread.
type burstPart struct {
	message           // the summary, in the channel
	thread  []message // every change it counts, one line each, by time
	notices int
}

// burstMessages are the summaries of many notices, each with its list;
// the list's lines show emails when emails is set.
func burstMessages(ns []notices.Notice, zone *time.Location, emails bool, now time.Time) []burstPart {
	var out []burstPart
	for len(ns) > 0 {
		n := min(len(ns), burstClaims)
		byTime := slices.Clone(ns[:n])
		slices.SortStableFunc(byTime, func(a, b notices.Notice) int { return a.Booking.Start.Compare(b.Booking.Start) })
		out = append(out, burstPart{burstSummary(byTime, zone, now), burstList(byTime, zone, emails), n})
		ns = ns[n:]
	}
	return out
}

// burstSummary says how many changes came and of which kinds, then today's
// and tomorrow's, one line each (ns are in order of time). Its fallback
// text, what a phone shows, is the headline alone.
func burstSummary(ns []notices.Notice, zone *time.Location, now time.Time) message {
	counts := map[notices.Kind]int{}
	today := 0
	var near []notices.Notice
	for _, n := range ns {
		counts[n.Kind]++
		if onDay(n, now, zone, 0) {
			today++
		}
		if onDay(n, now, zone, 0) || onDay(n, now, zone, 1) {
			near = append(near, n)
		}
	}
	var kinds []string
	for _, k := range []struct {
		kind notices.Kind
		word string
	}{{notices.New, "new"}, {notices.Moved, "moved"}, {notices.Cancelled, "cancelled"}} {
		if c := counts[k.kind]; c > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %s", c, k.word))
		}
	}
	of := strings.Join(kinds, ", ")
	if today > 0 {
		of += fmt.Sprintf(" · %d of them today", today)
	}
	count := plural(len(ns), "booking change")
	head, text := "*"+count+"*", count
	if since := ns[0].Since; !since.IsZero() {
		for _, n := range ns {
			if n.Since.Before(since) {
				since = n.Since
			}
		}
		layout, format := momentLayout, "{date_short_pretty} {time}"
		if sameDay(since, now, zone) {
			layout, format = timeLayout+" MST", "{time}"
		}
		head += " since " + dateTokenAs(since, format, since.In(zone).Format(layout))
		text += " since " + since.In(zone).Format(layout)
	}
	blocks := []slack.Block{section(head + ": " + of)}
	shown := near[:min(len(near), burstRows)]
	if len(shown) > 0 {
		lines := burstLines(shown, zone, false, nil)
		for _, s := range splitLines("", lines, 3000) {
			blocks = append(blocks, section(s))
		}
	}
	var rest string
	switch {
	case len(shown) == len(ns):
		rest = "The thread has them one by one."
	case len(near) == 0:
		rest = "None of them is today or tomorrow. All " + plural(len(ns), "change") + " are in the thread, one line each."
	case len(near) > len(shown):
		rest = fmt.Sprintf("%d more today and tomorrow. All %s are in the thread, one line each.", len(near)-len(shown), plural(len(ns), "change"))
	default:
		rest = "All " + plural(len(ns), "change") + " are in the thread, one line each."
	}
	blocks = append(blocks, contextLine(rest))
	return message{Text: text + ": " + of + ".", Blocks: blocks, Metadata: &slack.SlackMetadata{EventType: noticeEvent, EventPayload: map[string]any{"burst": true}}}
}

// burstList is every change of ns (in order of time), a line each under
// its day, in as few thread replies as fit. Each reply's metadata names
// the bookings of its lines by kind of change (changesMeta), so that a
// search for one finds its line.
func burstList(ns []notices.Notice, zone *time.Location, emails bool) []message {
	var of []*notices.Notice // each line's change, nil for a heading
	lines := burstLines(ns, zone, emails, &of)
	var out []message
	told := 0 // changes in the replies before
	for len(lines) > 0 {
		var blocks []slack.Block
		used, n := 0, 0
		for _, s := range splitLines("", lines, 3000) {
			if len(blocks) == 45 || used+len(s) > maxMessageText-1000 {
				break
			}
			blocks = append(blocks, section(s))
			used += len(s)
			n += strings.Count(s, "\n") + 1
		}
		var changes []notices.Notice
		for _, n := range of[:n] {
			if n != nil {
				changes = append(changes, *n)
			}
		}
		lines, of = lines[n:], of[n:]
		text := fmt.Sprintf("Booking changes %d–%d of %d, one line each.", told+1, told+len(changes), len(ns))
		if len(changes) == len(ns) {
			text = "The " + plural(len(ns), "booking change") + ", one line each."
		}
		told += len(changes)
		out = append(out, message{Text: text, Blocks: blocks, Metadata: changesMeta(changes)})
	}
	return out
}

// burstLines are the lines of ns (in order of time): each day's heading,
// then a line per change. With emails, a line shows the attendee's email
// after their name (NOTIFY_INCLUDE_EMAILS). When of is not nil, it gets
// each line's change, nil for a heading.
func burstLines(ns []notices.Notice, zone *time.Location, emails bool, of *[]*notices.Notice) (lines []string) {
	last := ""
	for i, n := range ns {
		if d := n.Booking.Start.In(zone).Format(time.DateOnly); d != last {
			lines = append(lines, "*"+day(n.Booking.Start, zone)+"*")
			if of != nil {
				*of = append(*of, nil)
			}
			last = d
		}
		if of != nil {
			*of = append(*of, &ns[i])
		}
		line := burstLine(n, zone)
		if e := n.Booking.BookerEmail.String; emails && e != "" {
			line += " · " + address(e)
		}
		lines = append(lines, line)
	}
	return lines
}

// noticeWord is the one word for a kind of change, wherever a notice names
// it; a change that may be a move across the list's end says so.
func noticeWord(n notices.Notice) string {
	switch {
	case n.Kind == notices.Cancelled && unsure(n):
		return "Cancelled or moved"
	case n.Kind == notices.Cancelled:
		return "Cancelled"
	case n.Kind == notices.Moved:
		return "Moved"
	case unsure(n):
		return "New booking or moved"
	}
	return "New booking"
}

// burstLine is one change under its day's heading: the time (struck when
// cancelled), the kind, the event and the attendee. No email: the line is
// one of many; the thread's lines add it.
func burstLine(n notices.Notice, zone *time.Location) string {
	b := n.Booking
	when := hours(b.Start, b.End, zone)
	title := ""
	if n.Title != "" {
		title = "*" + escape(clip(n.Title, burstNameRunes)) + "*"
	}
	what := noticeWord(n)
	switch n.Kind {
	case notices.Cancelled:
		when = "~" + when + "~"
	case notices.Moved:
		was := dateTokenAs(n.Was.Start, "{time}", n.Was.Start.In(zone).Format(timeLayout+" MST"))
		if !sameDay(n.Was.Start, b.Start, zone) {
			was = moment(n.Was.Start, zone)
		}
		what += " from " + was
	}
	return when + "  " + what + " · " + parts(title, escape(clip(b.BookerName.String, burstNameRunes)))
}

// onDay reports whether n changes a booking on the day days after now's,
// in zone: at its time, or for a move, at the time it had.
func onDay(n notices.Notice, now time.Time, zone *time.Location, days int) bool {
	d := now.In(zone)
	from := time.Date(d.Year(), d.Month(), d.Day()+days, 0, 0, 0, 0, zone)
	to := time.Date(d.Year(), d.Month(), d.Day()+days+1, 0, 0, 0, 0, zone)
	in := func(t time.Time) bool { return !t.Before(from) && t.Before(to) }
	return in(n.Booking.Start) || (n.Kind == notices.Moved && in(n.Was.Start))
}

// madeBy says where a change was made: "by @alice in Slack" when it went
// through bookbot, otherwise elsewhere (outside names where).
func madeBy(by *notices.By, outside string) string {
	switch {
	case by != nil && by.Actor != "":
		return "by " + mention(by.Actor) + " in Slack"
	case by != nil:
		return "in Slack"
	default:
		return outside
	}
}

// unclearCancel says that bookbot's cancel may have cancelled a booking:
// the cancel by, whose answer was unclear, and the booking gone from the
// list since.
func unclearCancel(by *notices.By, zone *time.Location) string {
	return fmt.Sprintf("bookbot's cancel %s %s had no clear answer, and the booking is gone from the list since.", madeBy(by, "in Slack"), moment(by.At, zone))
}

// madeWhere is madeBy and when: when it was made through bookbot, or else
// when bookbot noticed it. A reply needs no when: it is posted then.
func madeWhere(by *notices.By, outside string, now time.Time, zone *time.Location) string {
	if by == nil {
		return outside + ", noticed " + moment(now, zone)
	}
	return madeBy(by, outside) + ", " + moment(by.At, zone)
}

func noticeTitle(n notices.Notice) string {
	if n.Title == "" {
		return missing
	}
	return "*" + short(n.Title) + "*"
}

// noticeName is the attendee's name, missing when the record has none.
func noticeName(n notices.Notice) string { return short(orMissing(n.Booking.BookerName.String)) }

// noticeFallback is what a notice's fallback text says after its kind:
// the event, the time in bookbot's own formatting and the attendee.
func noticeFallback(n notices.Notice, zone *time.Location) string {
	b := n.Booking
	return short(orMissing(n.Title)) + ", " + localSpan(b.Start, b.End, zone) + ", " + noticeName(n)
}

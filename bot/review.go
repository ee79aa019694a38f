package bot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/journal"
	"github.com/bookbot/bookbot/outbox"
)

// reviewFlow is `audit`, "Mark as checked" on a review report, and the
// review reports, made at start and every few minutes.
func reviewFlow() flow {
	return flow{
		commands: []command{
			{name: "audit", help: "bookings and cancellations made through bookbot in the last 24 hours", run: func(b *Bot, later *jobs, c call) any {
				later.add("audit", func(ctx context.Context) { c.reply(b.auditReply(ctx, c.UserID)) })
				return nil
			}},
		},
		actions: map[string]func(*Bot, *jobs, press){
			actionReviewed: (*Bot).markReviewed,
		},
		background: (*Bot).reviewLoop,
	}
}

const (
	// reviewEvery is how often entries whose report failed are tried again.
	reviewEvery = 5 * time.Minute
	// auditWindow is how far back `/booking audit` looks.
	auditWindow = 24 * time.Hour
)

// ReportReviews puts every journal entry that needs a person, and has not
// yet been reported, in front of the people who can check it: the people
// acting on the calendar it went to (see reviewRecipients). A write
// settled after a restart also goes to the person who asked, who never
// heard its outcome: the report when they act on that calendar, one plain
// sentence when they do not (a guest who booked from an offer). An entry
// is marked reported once a post succeeds; one whose posts all fail stays
// for the next call. Run calls it at start and every few minutes, and the
// booking flows after each write.
//
// With an outbox (Config.Outbox) each entry's report is claimed in it
// before it is posted, under reviewKey, so that of all the replicas
// looking at once, one reports it.
func (b *Bot) ReportReviews(ctx context.Context) {
	if b.cfg.Journal == nil {
		return
	}
	b.reviewMu.Lock()
	defer b.reviewMu.Unlock()
	list, err := b.cfg.Journal.Unreported()
	if err != nil {
		b.log.Error("journal: the review queue could not be read", "err", err)
		return
	}
	b.log.Debug("review queue read", "unreported", len(list))
	if len(list) == 0 {
		return
	}
	for _, e := range list {
		if !b.claimReview(ctx, e) {
			continue
		}
		types := b.calendarTypes(ctx, e)
		to, asker := b.reviewRecipients(ctx, e)
		if len(to) == 0 && !b.unreviewed[e.Seq] {
			if b.unreviewed == nil {
				b.unreviewed = map[uint64]bool{}
			}
			b.unreviewed[e.Seq] = true
			b.log.Error("journal: a write that needs a human look has nobody who may check it (no review channel, nobody allowed acting on its calendar); see bookbot audit", "seq", e.Seq, "op", string(e.Op))
		}
		var sent []string
		send := func(to string, m message) {
			if _, _, err := b.post(ctx, to, m); err != nil {
				b.log.Warn("review report not posted", "seq", e.Seq, "to", to, "err", slackErr(err))
				return
			}
			sent = append(sent, to)
		}
		for _, to := range to {
			send(to, reviewMessage(e, types, b.reviewZone(ctx, to)))
		}
		if asker != "" && len(sent) > 0 {
			send(asker, recoveredMessage(e, types))
		}
		b.reported(ctx, e, sent)
	}
}

// reviewZone is the zone of a report's notification to to: a person's
// own, or for a channel the digest's, the team's day.
func (b *Bot) reviewZone(ctx context.Context, to string) *time.Location {
	if strings.HasPrefix(to, "U") || strings.HasPrefix(to, "W") {
		return b.users.zone(ctx, to)
	}
	if b.cfg.DigestZone != nil {
		return b.cfg.DigestZone
	}
	return time.UTC
}

// reviewKey is the outbox key of an entry's review report.
func reviewKey(seq uint64) string { return "review/" + strconv.FormatUint(seq, 10) }

// reviewStale is how old a report's claim no post settled must be before
// the report is made again: its process died mid-post, or well before.
// A report made twice is better than one never made.
const reviewStale = 2 * reviewEvery

// claimReview claims e's report in the outbox, and reports whether this
// process is to post it. An entry reported but not recorded as such in the
// journal is recorded now; one whose claim went stale is claimed afresh.
func (b *Bot) claimReview(ctx context.Context, e journal.Entry) bool {
	if b.cfg.Outbox == nil {
		return true
	}
	key, now := reviewKey(e.Seq), b.cfg.Now()
	ok, err := b.cfg.Outbox.Claim(ctx, key, now, now)
	if err != nil || ok {
		if err != nil {
			b.log.Error("journal: a review report could not be claimed; it is tried again later", "seq", e.Seq, "err", err)
		}
		return ok
	}
	r, found, err := b.cfg.Outbox.Lookup(ctx, key)
	switch {
	case err != nil:
		b.log.Error("journal: a review report's claim could not be read; it is tried again later", "seq", e.Seq, "err", err)
	case !found: // released since
	case r.Posted != nil:
		b.markReported(e, r.Posted.Channel)
	case now.Sub(r.ClaimedAt) > reviewStale:
		b.log.Warn("journal: a review report was claimed and never posted; it is made again", "seq", e.Seq, "claimant", r.Claimant)
		// One step: of the replicas that saw this stale claim, one posts.
		ok, err := b.cfg.Outbox.Takeover(ctx, key, r.ClaimedAt, now)
		if err != nil {
			b.log.Error("journal: a stale review report's claim could not be taken over", "seq", e.Seq, "err", err)
		}
		return ok && err == nil
	}
	return false
}

// reported records where e's report went: in the outbox, then the
// journal. A report no post reached releases its claim, for the next
// sweep.
func (b *Bot) reported(ctx context.Context, e journal.Entry, sent []string) {
	key := reviewKey(e.Seq)
	if len(sent) == 0 {
		if b.cfg.Outbox != nil {
			if err := b.cfg.Outbox.Release(ctx, key); err != nil {
				b.log.Error("journal: a review report's claim could not be released; it is made again once the claim is stale", "seq", e.Seq, "err", err)
			}
		}
		return
	}
	to := strings.Join(sent, ",")
	if b.cfg.Outbox != nil {
		if err := b.cfg.Outbox.Posted(ctx, key, outbox.Post{At: b.cfg.Now(), Channel: to}); err != nil {
			b.log.Error("journal: a review report was posted but its claim not settled", "seq", e.Seq, "err", err)
		}
	}
	if b.markReported(e, to) {
		b.log.Info("review report posted", "seq", e.Seq, "op", string(e.Op), "outcome", string(e.Outcome), "to", to)
	}
}

// markReported records in the journal that e was reported to to.
func (b *Bot) markReported(e journal.Entry, to string) bool {
	if err := b.cfg.Journal.MarkReported(e.Seq, to); err != nil {
		b.log.Error("journal: a review report was posted but not recorded; it may be posted again", "seq", e.Seq, "err", err)
		return false
	}
	return true
}

// reviewRecipients are where an entry is reported: the people who may
// check it, and only they, since the report names the attendee and asks
// them to check that calendar. The owner's calendar's reports go to the
// review channel when there is one; every other report to its checkers.
// asker is the person who asked for a write settled after a restart and
// who may not check it (mayReview): they get one plain sentence, not the
// report; otherwise the report reaches them with the others.
func (b *Bot) reviewRecipients(ctx context.Context, e journal.Entry) (to []string, asker string) {
	if e.CalendarOf() == booking.Owner && b.cfg.ReviewChannel != "" {
		to = []string{b.cfg.ReviewChannel}
	} else {
		to = b.checkers(ctx, e)
	}
	if e.Actor == "" || !e.Recovered || slices.Contains(to, e.Actor) {
		return to, ""
	}
	if b.mayReview(ctx, e.Actor, e) {
		return append(to, e.Actor), ""
	}
	return to, e.Actor
}

// mayReview reports whether user may mark e checked, look for it again
// or be sent its report: an allowed person acting on the calendar it went
// to, or one of its checkers, whom its report goes to when nobody acts on
// it. A guest resolves to the owner's calendar as everyone without one of
// their own does, and is no reviewer of it.
func (b *Bot) mayReview(ctx context.Context, user string, e journal.Entry) bool {
	if !b.cfg.Allowed(user) {
		return false
	}
	if cal, err := b.actsOn(ctx, user); err == nil && entryOn(e, cal) {
		return true
	}
	return slices.Contains(b.checkers(ctx, e), user)
}

// checkers are whom e's report goes to by direct message, each of whom
// may check it. The owner's calendar's: the first reviewer (allowed user)
// acting on it, else the first reviewer, whom the contract names. A
// person's own calendar's: the allowed people acting on it (the person,
// and anyone who connected the same key), or, when nobody does any more,
// the person whose calendar it was, if allowed.
func (b *Bot) checkers(ctx context.Context, e journal.Entry) []string {
	if e.CalendarOf() == booking.Owner {
		if r := b.ownerReviewer(ctx); r != "" {
			return []string{r}
		}
		return nil
	}
	if to := b.peopleOn(ctx, e); len(to) > 0 {
		return to
	}
	if e.Calendar != "" && b.cfg.Allowed(e.Calendar) {
		return []string{e.Calendar}
	}
	return nil
}

// ownerReviewer is the owner's calendar's checker: the first reviewer
// who acts on it, else the first reviewer; "" with no reviewers.
func (b *Bot) ownerReviewer(ctx context.Context) string {
	for _, r := range b.cfg.Reviewers {
		if cal, err := b.actsOn(ctx, r); err == nil && cal.id == booking.Owner {
			return r
		}
	}
	if len(b.cfg.Reviewers) > 0 {
		return b.cfg.Reviewers[0]
	}
	return ""
}

// peopleOn are the allowed people acting now on the own calendar e went
// to, by user ID order: for an entry older than calendar IDs, the person
// whose calendar it was, if they still act on it.
func (b *Bot) peopleOn(ctx context.Context, e journal.Entry) []string {
	if b.cfg.Accounts == nil || b.cfg.Sealer == nil {
		return nil
	}
	all, err := b.cfg.Accounts.All(ctx)
	if err != nil {
		b.log.Warn("journal: who acts on a calendar could not be read; its report goes to whoever connected it", "seq", e.Seq, "err", err)
		return nil
	}
	var out []string
	for _, a := range all {
		if !b.cfg.Allowed(a.User) {
			continue
		}
		key, err := a.Key(b.cfg.Sealer)
		if err != nil {
			continue
		}
		c := &calendar{label: a.User, id: account.CalendarOf(a, key, b.cfg.Sealer, b.cfg.IsOwnerKey)}
		if entryOn(e, c) {
			out = append(out, a.User)
		}
	}
	return out
}

// reviewsByDMTo reports whether the report of an unclear write of user's
// reaches them by direct message: they act on the calendar it went to, a
// person's own or the owner's without a review channel whose reports go
// to them.
func (b *Bot) reviewsByDMTo(ctx context.Context, user string) bool {
	if b.cfg.Journal == nil {
		return false
	}
	cal, err := b.actsOn(ctx, user)
	if err != nil {
		return false
	}
	if cal.id != booking.Owner {
		return true
	}
	return b.cfg.ReviewChannel == "" && b.ownerReviewer(ctx) == user
}

// reviewReaches reports whether e's review report goes to user.
func (b *Bot) reviewReaches(ctx context.Context, e journal.Entry, user string) bool {
	if b.cfg.Journal == nil || !e.NeedsReview {
		return false
	}
	to, _ := b.reviewRecipients(ctx, e)
	return slices.Contains(to, user)
}

// reviewKeep is how long the outbox keeps a review report's record: its
// entry is marked reported in the journal long before.
const reviewKeep = 7 * 24 * time.Hour

// reviewLoop reports at start and then every reviewEvery until ctx ends,
// and forgets the records of reports made long ago.
func (b *Bot) reviewLoop(ctx context.Context) {
	t := time.NewTicker(reviewEvery)
	defer t.Stop()
	for {
		b.ReportReviews(ctx)
		if b.cfg.Outbox != nil && b.cfg.Journal != nil {
			if err := b.cfg.Outbox.Prune(ctx, "review/", b.cfg.Now().Add(-reviewKeep)); err != nil && ctx.Err() == nil {
				b.log.Warn("journal: old review reports' records not pruned", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// markReviewed handles "Mark as checked" on a review report.
func (b *Bot) markReviewed(later *jobs, p press) {
	seq, err := strconv.ParseUint(p.a.Value, 10, 64)
	if err != nil || b.cfg.Journal == nil {
		return
	}
	user, replace := p.user, p.replace
	later.add("review", func(ctx context.Context) {
		e, err := b.cfg.Journal.Entry(seq)
		if err == nil && !b.mayReview(ctx, user, e) {
			b.log.Info("review check refused: the presser does not act on the entry's calendar", "seq", seq, "by", user)
			p.reply(notYoursToCheck(e))
			return
		}
		if err == nil {
			e, err = b.cfg.Journal.MarkReviewed(seq, user)
		}
		if errors.Is(err, journal.ErrNoEntry) {
			b.log.Info("review checked for an entry no longer in the journal", "seq", seq, "by", user)
			replace(prunedMessage(b.cfg.JournalKeep))
			return
		}
		if err != nil {
			b.log.Error("journal: a review could not be recorded", "seq", seq, "err", err)
			replace(b.failed("The check could not be recorded; press the button again", err, reviewButton(seq)))
			return
		}
		b.log.Info("review checked", "seq", seq, "by", e.ReviewedBy)
		replace(reviewMessage(e, b.calendarTypes(ctx, e), b.reviewZone(ctx, user)))
	})
}

// auditReply lists the recent journal entries of the calendar the asker
// acts on, in their zone: another calendar's attendees are not theirs to
// see (`bookbot audit` on the server shows every calendar's).
func (b *Bot) auditReply(ctx context.Context, userID string) message {
	if b.cfg.Journal == nil {
		return message{Text: "The journal is not set up.", Blocks: []slack.Block{section("This bookbot keeps no journal of writes.")}}
	}
	cal, err := b.actsOn(ctx, userID)
	if err != nil {
		return b.failed("The journal could not be shown", err)
	}
	list, err := b.cfg.Journal.Since(b.cfg.Now().Add(-auditWindow))
	if err != nil {
		return b.failed("The journal could not be read", err)
	}
	list = slices.DeleteFunc(list, func(e journal.Entry) bool { return !entryOn(e, cal) })
	types, _ := cal.types.recent()
	return auditMessage(list, cal.id != booking.Owner, types, b.users.zone(ctx, userID), b.cfg.Now())
}

// prunedMessage answers "Mark as checked" on an entry pruned since; keep
// is how long the journal keeps settled entries, 0 when not known.
func prunedMessage(keep time.Duration) message {
	text := "Nothing left to check: this write is no longer in bookbot's journal, which drops settled and checked entries once they are old enough."
	if days := int(keep / (24 * time.Hour)); days > 0 {
		text = "Nothing left to check: this write is no longer in bookbot's journal, which keeps settled entries that were checked for " + plural(days, "day") + "."
	}
	return message{Text: text, Blocks: []slack.Block{section(text)}}
}

// reviewMessage is the report of an entry that needs a person. Times are
// Slack date tokens, so every reader sees them in their own zone; loc is
// the zone of their fallbacks and of the notification, the reader's, or
// for a channel the digest's.
func reviewMessage(e journal.Entry, types []booking.EventType, loc *time.Location) message {
	what, head := "booking", "A booking needs a human look"
	if e.Op == booking.OpCancel {
		what, head = "cancellation", "A cancellation needs a human look"
	}
	lines := []string{"*What:* " + writeSummary(e, types, loc)}
	if e.Actor != "" {
		lines = append(lines, "*Asked by:* "+mention(e.Actor)+" "+moment(e.At, loc))
	} else {
		lines = append(lines, "*Asked:* "+moment(e.At, loc))
	}
	if cal := calendarText(e.Calendar); cal != "" {
		lines = append(lines, "*Calendar:* "+cal)
	}
	lines = append(lines, "*Outcome:* "+outcomeText(e))
	if e.Recovered {
		lines = append(lines, fmt.Sprintf("_bookbot stopped while this %s was in flight; on restart it checked the bookings list._", what))
	}
	lines = append(lines, "*What to do:* "+reviewAdvice(e))
	blocks := []slack.Block{
		slack.NewHeaderBlock(plain(head)),
		section(strings.Join(lines, "\n")),
	}
	// The booking's ID is for whoever looks into it, quiet and last; what
	// bookbot saw of the booking service, its requests and answers, is for
	// the operator: `bookbot audit` and the log have it.
	var quiet []string
	if id := cmp.Or(e.Created, e.BookingID); id != "" {
		quiet = append(quiet, bookingID(id))
	}
	if len(e.Seen) > 0 {
		quiet = append(quiet, "What bookbot saw, step by step: `bookbot audit` on the server")
	}
	if len(quiet) > 0 {
		blocks = append(blocks, contextLine(strings.Join(quiet, " · ")))
	}
	if e.ReviewedAt.IsZero() {
		actions := []slack.BlockElement{reviewButton(e.Seq)}
		if e.Op == booking.OpCreate && (e.Outcome == booking.Unknown || e.Outcome == booking.ProbablyNotBooked) {
			// Looking again only reads: it sits beside the check.
			meta := modalMeta{Event: e.EventType, Start: e.Start, Name: e.Name, Email: e.Email, Review: e.Seq}
			actions = append([]slack.BlockElement{button(actionRecheck, "Check again", recheckValue(meta))}, actions...)
		}
		blocks = append(blocks, slack.NewActionBlock("review_actions", actions...))
	} else {
		blocks = append(blocks, contextLine(":white_check_mark: Checked by "+mention(e.ReviewedBy)+" "+moment(e.ReviewedAt, loc)))
	}
	return message{Text: head + ": " + writePlain(e, types, loc), Blocks: blocks}
}

// recoveredMessage tells someone who asked for a write on a calendar they
// do not act on (a guest booking from an offer), and who never heard its
// outcome because bookbot stopped, what came of it, in one sentence: the
// people of that calendar get the review.
func recoveredMessage(e journal.Entry, types []booking.EventType) message {
	what := short(titleOf(booking.Some(e.EventType), types))
	plainWhat := what
	if start, err := time.Parse(time.RFC3339Nano, e.Start); err == nil {
		what += ", " + moment(start, time.UTC)
		plainWhat += ", " + start.UTC().Format(momentLayout)
	}
	who := "The calendar's owner has"
	if e.CalendarOf() != booking.Owner && e.Calendar != "" {
		who = mention(e.Calendar) + " has"
	}
	var head, text string
	switch {
	case e.Op == booking.OpCancel:
		head = "Your cancellation needs checking"
		text = fmt.Sprintf(":warning: *Your cancellation needs checking:* %s. bookbot stopped while cancelling it. %s been asked to check, and will tell you.", what, who)
	case e.Outcome == booking.Confirmed:
		head = "Booked"
		text = fmt.Sprintf(":white_check_mark: *Booked:* %s. bookbot stopped while booking it, then found it in the calendar: the invitation goes to %s.", what, address(e.Email))
	case e.Outcome == booking.ProbablyNotBooked:
		head = "Probably not booked"
		text = fmt.Sprintf(":x: *Probably not booked:* %s. bookbot stopped while booking it, and the calendar does not show it. %s been asked to check: do not book it again before they tell you.", what, who)
	default:
		head = "Not sure it was booked"
		text = fmt.Sprintf(":warning: *Not sure it was booked:* %s. bookbot stopped while booking it and could not tell whether it went through. %s been asked to check: do not book it again before they tell you.", what, who)
	}
	return message{Text: head + ": " + plainWhat, Blocks: []slack.Block{section(text)}}
}

// writePlain says what a journal entry asked for without markup, for a
// notification: the data as it is, the time in loc. A cancel is named by
// its booking as the list showed it, when it did.
func writePlain(e journal.Entry, types []booking.EventType, loc *time.Location) string {
	at := escape(e.Start)
	if start, err := time.Parse(time.RFC3339Nano, e.Start); err == nil {
		at = start.In(loc).Format(momentLayout)
	}
	if e.Op == booking.OpCancel {
		if e.Start == "" {
			return "cancel a booking the list did not show"
		}
		return fmt.Sprintf("cancel %s, %s", cancelledWhat(e, types), at)
	}
	return fmt.Sprintf("book %s %s for %s", short(titleOf(booking.Some(e.EventType), types)), at, short(e.Name))
}

// cancelledWhat names the booking a cancel was of, as the list showed it:
// its event and attendee.
func cancelledWhat(e journal.Entry, types []booking.EventType) string {
	b := booking.Booking{BookerName: booking.Some(e.Name)}
	if e.EventType != "" {
		b.EventType = booking.Some(e.EventType)
	}
	return bookingWhat(b, types, "")
}

// writeSummary says what a journal entry asked for, its time a token
// whose fallback is in loc. A cancel is named by its booking as the list
// showed it, when it did; its ID is the report's last, quiet line.
func writeSummary(e journal.Entry, types []booking.EventType, loc *time.Location) string {
	if e.Op == booking.OpCancel {
		start, err := time.Parse(time.RFC3339Nano, e.Start)
		if err != nil {
			return "cancel a booking the bookings list did not show"
		}
		return "cancel " + cancelledWhat(e, types) + ", " + moment(start, loc)
	}
	at := escape(e.Start)
	if start, err := time.Parse(time.RFC3339Nano, e.Start); err == nil {
		at = moment(start, loc)
	}
	return fmt.Sprintf("book *%s* %s for %s (%s)", short(titleOf(booking.Some(e.EventType), types)), at, short(e.Name), address(e.Email))
}

// auditMessage shows the journal entries of one calendar (own: the
// asker's own, else the owner's) newest first, as many as fit.
func auditMessage(list []journal.Entry, own bool, types []booking.EventType, loc *time.Location, now time.Time) message {
	head := "Bookings and cancellations, last 24 hours"
	whose := "the owner's calendar"
	if own {
		whose = "your calendar"
	}
	if len(list) == 0 {
		return message{Text: head + ": none", Blocks: []slack.Block{section("No bookings or cancellations of " + whose + " went through bookbot in the last 24 hours.")}}
	}
	lines := make([]string, 0, len(list))
	for _, e := range slices.Backward(list) {
		lines = append(lines, auditLine(e, types, loc))
	}
	blocks := []slack.Block{
		slack.NewHeaderBlock(plain(head)),
		contextLine(fmt.Sprintf("%d on %s, newest first. Times in %s. `bookbot audit` on the server shows the whole journal.", len(list), whose, zoneName(loc, now.Add(-auditWindow), now))),
	}
	used := 0
	for _, text := range splitLines("", lines, 3000) {
		if len(blocks) >= 48 || used+len(text) > maxMessageText-1000 {
			blocks = append(blocks, contextLine("Older entries do not fit here: `bookbot audit` shows them."))
			break
		}
		used += len(text)
		blocks = append(blocks, section(text))
	}
	return message{Text: fmt.Sprintf("%s: %d", head, len(list)), Blocks: blocks}
}

// calendarText names the calendar a write went to, "" for the owner's
// (which every write went to before people connected their own).
func calendarText(label string) string {
	if label == "" || label == booking.Owner {
		return ""
	}
	return mention(label) + "'s own calendar"
}

func auditLine(e journal.Entry, types []booking.EventType, loc *time.Location) string {
	who := "someone"
	if e.Actor != "" {
		who = mention(e.Actor)
	}
	s := fmt.Sprintf("%s %s: %s → %s", moment(e.At, loc), who, writeSummary(e, types, loc), outcomeText(e))
	switch {
	case e.AwaitingReview():
		s += " · :warning: awaiting a human check"
	case e.NeedsReview:
		s += " · checked by " + mention(e.ReviewedBy)
	}
	if id := cmp.Or(e.Created, e.BookingID); id != "" {
		s += " · " + bookingID(id)
	}
	return s
}

package bot_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/booking/journal/journaltest"
	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/internal/testutil"
	"github.com/bookbot/bookbot/outbox"
	"github.com/bookbot/bookbot/store/bolt"
)

const reviewChannel = "CREVIEW"

// journaledHarness runs the bot with a write journal; reviews go to the
// review channel when inChannel, else by DM to bob. opts adjust the rest
// of its configuration.
func journaledHarness(t *testing.T, inChannel bool, opts ...func(*harness, *bot.Config)) (*harness, *bolt.Journal) {
	t.Helper()
	db, err := bolt.Open(t.TempDir(), bolt.Options{Beside: true})
	if err != nil {
		t.Fatal(err)
	}
	j := db.Journal()
	h := newHarnessWith(t, []booking.Option{booking.WithJournal(j)}, append([]func(*harness, *bot.Config){func(h *harness, cfg *bot.Config) {
		j.Now = h.clock.Now
		cfg.Journal, cfg.Reviewers = j, []string{bob, ada}
		if inChannel {
			h.sl.AddChannel(slacktest.Channel{ID: reviewChannel, Name: "bookbot-review", Members: []string{h.sl.BotUserID(), ada, bob}})
			cfg.ReviewChannel = reviewChannel
		}
	}}, opts...)...)
	return h, j
}

// bookUnclear has ada book Grace while the API answers the create with an
// HTML status page: an outcome a person must check.
func bookUnclear(h *harness, status int) {
	h.t.Helper()
	v := h.openModal(ada, "intro-call")
	h.sb.FailNext(bookingtest.EndpointCreateBooking, bookingtest.HTMLError(status))
	h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
}

func messagesIn(h *harness, channel, want string) []slacktest.Message {
	var out []slacktest.Message
	for _, m := range h.sl.Messages() {
		if m.Kind == "message" && m.Channel == channel && strings.Contains(textOf(m.Blocks), want) {
			out = append(out, m)
		}
	}
	return out
}

func TestUnclearBookingIsReportedForReviewOnce(t *testing.T) {
	t.Parallel()
	h, j := journaledHarness(t, true)
	bookUnclear(h, 503)
	h.dm(ada, "Probably not booked")

	report := h.waitMessage("in the review channel", func(m slacktest.Message) bool {
		return m.Kind == "message" && m.Channel == reviewChannel
	})
	text := textOf(report.Blocks)
	for _, s := range []string{"A booking needs a human look", "*Intro call*", "Grace Hopper (grace@example.com)", "<@" + ada + ">",
		"probably not booked", "check the calendar", "`bookbot audit` on the server"} {
		if !strings.Contains(text, s) {
			t.Errorf("report lacks %q:\n%s", s, text)
		}
	}
	// What bookbot saw of the service is the operator's, not a report's.
	if strings.Contains(text, "POST /bookings") || strings.Contains(text, "503") {
		t.Errorf("the report quotes the booking service's answers:\n%s", text)
	}
	if len(elements(report.Blocks, "review_checked")) != 1 {
		t.Fatalf("no Mark as checked button:\n%s", text)
	}

	// Reported once: later sweeps post nothing more.
	h.drain()
	h.bot.ReportReviews(h.ctx())
	if n := len(messagesIn(h, reviewChannel, "needs a human look")); n != 1 {
		t.Fatalf("%d reports, want 1", n)
	}
	if n, _ := j.AwaitingReview(); n != 1 {
		t.Fatalf("awaiting review = %d, want 1", n)
	}

	h.interact(slacktest.BlockAction(bob, "review_checked", "", slacktest.InMessage(report)))
	h.reply(bob, "Checked by <@"+bob+">")
	h.drain()
	if n, _ := j.AwaitingReview(); n != 0 {
		t.Errorf("awaiting review = %d after the check, want 0", n)
	}
}

// Once the event types read are no longer recent (a while after the form
// was opened, or after a restart), Check again and Mark as checked still
// name the event type by its title, read afresh, not by its slug.
func TestLaterPressesNameTheEventTypeByItsTitle(t *testing.T) {
	t.Parallel()
	h, _ := journaledHarness(t, true)
	bookUnclear(h, 503)
	unclear := h.dm(ada, "Probably not booked")
	report := h.waitMessage("in the review channel", func(m slacktest.Message) bool {
		return m.Kind == "message" && m.Channel == reviewChannel
	})
	h.drain()
	h.clock.Advance(time.Hour)

	h.interact(slacktest.BlockAction(ada, "recheck", "", slacktest.InMessage(unclear)))
	rechecked := h.waitMessage("Check again from the DM", func(m slacktest.Message) bool {
		return m.Kind == "response_url" && m.OriginalTS == unclear.TS
	})
	if text := textOf(rechecked.Blocks); !strings.Contains(text, "Intro call today at") || strings.Contains(text, "intro-call") {
		t.Errorf("Check again names the event otherwise:\n%s", text)
	}
	h.interact(slacktest.BlockAction(bob, "review_checked", "", slacktest.InMessage(report)))
	if text := textOf(h.reply(bob, "Checked by <@"+bob+">").Blocks); !strings.Contains(text, "*Intro call*") {
		t.Errorf("the checked report names the event otherwise:\n%s", text)
	}
}

// With an outbox (replicas share one), each entry's report is claimed in
// it before it is posted. A claim another process holds keeps the report
// back: it may be posting it now. Once that claim is stale (its process
// died mid-post), the report is made, once.
func TestReviewsAreClaimedInTheOutbox(t *testing.T) {
	t.Parallel()
	box := openOutbox(t)
	h, _ := journaledHarness(t, true, func(h *harness, cfg *bot.Config) { cfg.Outbox = box })
	// Another replica claimed the first entry's report, and died.
	if ok, err := box.Claim(t.Context(), "review/1", h.clock.Now(), h.clock.Now()); err != nil || !ok {
		t.Fatal(ok, err)
	}
	bookUnclear(h, 503)
	h.dm(ada, "Probably not booked")
	h.drain()
	h.bot.ReportReviews(h.ctx())
	if n := len(messagesIn(h, reviewChannel, "needs a human look")); n != 0 {
		t.Fatalf("%d reports while another process holds the claim, want none", n)
	}

	h.clock.Advance(11 * time.Minute)
	h.bot.ReportReviews(h.ctx())
	h.bot.ReportReviews(h.ctx())
	if n := len(messagesIn(h, reviewChannel, "needs a human look")); n != 1 {
		t.Errorf("%d reports once the claim is stale, want 1", n)
	}
	if !strings.Contains(h.logs.String(), "claimed and never posted") {
		t.Errorf("the stale claim is not logged:\n%s", h.logs)
	}
	if r, ok, err := box.Lookup(t.Context(), "review/1"); err != nil || !ok || r.Posted == nil || r.Posted.Channel != reviewChannel {
		t.Errorf("the report's record = %+v, %v, %v; want posted to %s", r, ok, err, reviewChannel)
	}
}

// A report another replica posted, but could not record in the journal,
// is recorded, not posted again.
func TestReviewPostedElsewhereIsRecordedNotPosted(t *testing.T) {
	t.Parallel()
	box := openOutbox(t)
	h, j := journaledHarness(t, true, func(h *harness, cfg *bot.Config) { cfg.Outbox = box })
	if ok, err := box.Claim(t.Context(), "review/1", h.clock.Now(), h.clock.Now()); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if err := box.Posted(t.Context(), "review/1", outbox.Post{At: h.clock.Now(), Channel: reviewChannel}); err != nil {
		t.Fatal(err)
	}
	bookUnclear(h, 503)
	h.dm(ada, "Probably not booked")
	h.drain()
	h.bot.ReportReviews(h.ctx())
	if n := len(messagesIn(h, reviewChannel, "needs a human look")); n != 0 {
		t.Errorf("%d reports of an entry reported elsewhere, want none", n)
	}
	if list, err := j.Unreported(); err != nil || len(list) != 0 {
		t.Errorf("unreported = %+v, %v; want none", list, err)
	}
	if n, _ := j.AwaitingReview(); n != 1 {
		t.Errorf("awaiting review = %d, want 1", n)
	}
}

// openOutbox is an outbox of the test's own.
func openOutbox(t *testing.T) outbox.Store {
	t.Helper()
	db, err := bolt.Open(t.TempDir(), bolt.Options{Beside: true})
	if err != nil {
		t.Fatal(err)
	}
	return db.Outbox()
}

// Without a review channel the first reviewer gets the report; the person
// who asked has the outcome already, and gets no second message about it.
func TestReviewsGoByDMWithoutAReviewChannel(t *testing.T) {
	t.Parallel()
	h, _ := journaledHarness(t, false)
	bookUnclear(h, 502)
	h.dm(bob, "A booking needs a human look")
	h.dm(ada, "Probably not booked")
	h.drain()
	if n := len(messagesIn(h, bob, "")); n != 1 {
		t.Errorf("%d DMs to the reviewer, want 1", n)
	}
	if n := len(messagesIn(h, ada, "")); n != 1 {
		t.Errorf("%d DMs to the person who asked, want 1 (the outcome)", n)
	}
}

// When the person who asked is the reviewer, one message tells the outcome
// and asks for the check, with both actions; looking again keeps the check.
func TestOneDMWhenTheRequesterReviews(t *testing.T) {
	t.Parallel()
	h, j := journaledHarness(t, false) // bob reviews
	v := h.openModal(bob, "intro-call")
	h.sb.FailNext(bookingtest.EndpointCreateBooking, bookingtest.HTMLError(502))
	h.submit(bob, v.ID, bookingInputs(firstSlot, "grace@example.com"))
	report := h.dm(bob, "A booking needs a human look")
	h.drain()
	if n := len(messagesIn(h, bob, "")); n != 1 {
		t.Fatalf("%d DMs to bob, want 1", n)
	}
	if len(elements(report.Blocks, "recheck")) != 1 || len(elements(report.Blocks, "review_checked")) != 1 {
		t.Fatalf("the report lacks Check again or Mark as checked:\n%s", report.Blocks)
	}

	// Someone finds it booked after all; bob looks again, then checks it.
	id := takeSlot(h, "grace@example.com")
	h.interact(slacktest.BlockAction(bob, "recheck", "", slacktest.InMessage(report)))
	again := h.waitMessage("the report replaced by the recheck", func(m slacktest.Message) bool {
		return m.Kind == "response_url" && m.OriginalTS == report.TS && strings.Contains(textOf(m.Blocks), "Booked.")
	})
	if !slices.Contains(values(elements(again.Blocks, "cancel_booking")), id) || len(elements(again.Blocks, "review_checked")) != 1 {
		t.Fatalf("the recheck lost the booking or the check:\n%s", again.Blocks)
	}
	h.interact(slacktest.BlockAction(bob, "review_checked", "", slacktest.InMessage(again)))
	h.reply(bob, "Checked by <@"+bob+">")
	if n, _ := j.AwaitingReview(); n != 0 {
		t.Errorf("%d entries await review after the check", n)
	}
}

func TestClearOutcomesAreNotReported(t *testing.T) {
	t.Parallel()
	h, j := journaledHarness(t, true)
	v := h.openModal(ada, "intro-call")
	h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
	h.dm(ada, "Booked")
	h.drain()
	if n := len(messagesIn(h, reviewChannel, "")); n != 0 {
		t.Errorf("%d review reports for a confirmed booking", n)
	}
	entries, err := j.Since(time.Time{})
	if err != nil || len(entries) != 1 || entries[0].Actor != ada || entries[0].Outcome != booking.Confirmed {
		t.Fatalf("journal: %+v, %v", entries, err)
	}
}

func TestAuditShowsRecentWrites(t *testing.T) {
	t.Parallel()
	h, _ := journaledHarness(t, true)
	v := h.openModal(ada, "intro-call")
	h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com"))
	h.dm(ada, "Booked")
	h.slash(bob, "list")
	var id string
	for _, b := range h.sb.Bookings(bookingtest.DemoOwner) {
		if b.BookerEmail != nil && *b.BookerEmail == "grace@example.com" {
			id = b.ID
		}
	}
	msg := h.reply(bob, "Upcoming bookings (")
	h.interact(confirmCancel(bob, h.askCancel(bob, msg, id), id))
	h.reply(bob, "Cancelled: ")
	h.drain()

	h.slash(kiw, "audit")
	audit := h.reply(kiw, "last 24 hours")
	text := textOf(audit.Blocks)
	// Newest first, in the asker's zone (Auckland: 23:07 NZDT at t0).
	cancelAt := strings.Index(text, "<@"+bob+">: cancel Intro call with Grace Hopper, Mon 23 Mar, 23:15 NZDT → cancelled")
	bookAt := strings.Index(text, "<@"+ada+">: book *Intro call* Mon 23 Mar, 23:15 NZDT for Grace Hopper")
	if cancelAt < 0 || bookAt < 0 || cancelAt > bookAt {
		t.Errorf("audit:\n%s", text)
	}
	if !strings.Contains(text, "Pacific/Auckland") {
		t.Errorf("audit does not name the zone:\n%s", text)
	}
}

func TestAuditWithoutAJournal(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.slash(ada, "audit")
	h.reply(ada, "keeps no journal")
}

func TestDryRun(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, []booking.Option{booking.WithDryRun()}, func(_ *harness, cfg *bot.Config) { cfg.DryRun = true })
	const banner = "Dry run:* bookbot sends no bookings or cancellations"

	if ack := h.slash(ada, "help"); !strings.Contains(textOf(ack.Payload), banner) {
		t.Errorf("help ack has no dry-run banner:\n%s", textOf(ack.Payload))
	}
	v := h.openModal(ada, "intro-call")
	if !strings.Contains(textOf(v.Blocks), banner) {
		t.Errorf("modal has no banner:\n%s", textOf(v.Blocks))
	}
	sa := parseSubmissionAck(t, h.submit(ada, v.ID, bookingInputs(firstSlot, "grace@example.com")))
	if !strings.Contains(textOf(sa.View), banner) {
		t.Errorf("pending view has no banner:\n%s", textOf(sa.View))
	}
	out := h.waitView("dry-run outcome", func(x slacktest.View) bool {
		return x.ID == v.ID && strings.Contains(textOf(x.Blocks), "nothing was booked")
	})
	text := textOf(out.Blocks)
	for _, s := range []string{banner, "Dry run: nothing was booked", "`POST /api/v1/bookings`", "email = grace@example.com",
		"start = " + firstSlot, "event_type = intro-call", "booker_tz = America/New_York"} {
		if !strings.Contains(text, s) {
			t.Errorf("outcome lacks %q:\n%s", s, text)
		}
	}
	if dm := h.dm(ada, "nothing was booked"); !strings.Contains(textOf(dm.Blocks), banner) || !strings.HasPrefix(dm.Text, "[dry run]") {
		t.Errorf("DM not marked as a dry run: %q\n%s", dm.Text, textOf(dm.Blocks))
	}

	h.slash(ada, "list")
	list := h.reply(ada, "Upcoming bookings")
	if !strings.Contains(textOf(list.Blocks), banner) {
		t.Errorf("list has no banner")
	}
	id := upcoming(h)[0].ID
	h.interact(confirmCancel(ada, h.askCancel(ada, list, id), id))
	h.reply(ada, "nothing was cancelled")
	if _, err := h.sl.OpenAppHome(h.ctx(), ada); err != nil {
		t.Fatal(err)
	}
	h.drain()
	if hv, ok := h.sl.HomeView(ada); !ok || !strings.Contains(textOf(hv.Blocks), banner) {
		t.Errorf("App Home has no banner")
	}
	if n := len(h.requests(bookingtest.EndpointCreateBooking)) + len(h.requests(bookingtest.EndpointCancelBooking)); n != 0 {
		t.Fatalf("a dry run sent %d writes", n)
	}
}

// A report's button pressed once the entry has been checked elsewhere (a
// copy of the report sent to someone else) and pruned says there is
// nothing left to check.
func TestCheckingAPrunedEntry(t *testing.T) {
	t.Parallel()
	h, j := journaledHarness(t, false)
	bookUnclear(h, 502)
	toBob := h.dm(bob, "A booking needs a human look")
	h.drain()

	un, err := j.Since(time.Time{})
	if err != nil || len(un) != 1 {
		t.Fatalf("journal: %+v, %v", un, err)
	}
	if _, err := j.MarkReviewed(un[0].Seq, ada); err != nil {
		t.Fatal(err)
	}
	if n, err := j.Prune(h.clock.Now().Add(time.Hour)); n != 1 || err != nil {
		t.Fatalf("pruned %d, %v; want the checked entry", n, err)
	}
	h.interact(slacktest.BlockAction(bob, "review_checked", "", slacktest.InMessage(toBob)))
	h.reply(bob, "Nothing left to check")
}

// blockText is the length of all the text in a message's blocks, as Slack
// counts it against a message's limit.
func blockText(t *testing.T, raw []byte) int {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	n := 0
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if s, ok := v["text"].(string); ok {
				n += len(s)
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return n
}

// Whatever the data, a list or an audit stays inside one message's limit.
func TestLongDataKeepsMessagesInsideSlacksLimits(t *testing.T) {
	t.Parallel()
	h, j := journaledHarness(t, true)
	long := strings.Repeat("&<Grace Hopper> ", 200) // 3,200 characters, every one worst to escape
	for i := range 20 {
		start := t0.Add(26*time.Hour + time.Duration(i)*time.Hour)
		h.sb.AddBooking(bookingtest.DemoOwner, bookingtest.Booking{
			EventType: testutil.Ptr("intro-call"), Start: start, End: start.Add(15 * time.Minute),
			BookerName: testutil.Ptr(long), BookerEmail: testutil.Ptr(strings.Repeat("a&", 120) + "@example.com"),
		})
	}
	h.slash(ada, "list")
	list := h.reply(ada, "Upcoming bookings")
	if n := blockText(t, list.Blocks); n > 11000 {
		t.Errorf("the list's blocks hold %d characters of text", n)
	}

	for i := range 300 {
		w := booking.Write{Op: booking.OpCreate, Actor: ada, EventType: "intro-call",
			Start: t0.Add(time.Duration(i+48) * time.Hour).Format(time.RFC3339), End: t0.Add(time.Duration(i+48)*time.Hour + 15*time.Minute).Format(time.RFC3339),
			Name: long, Email: "grace@example.com"}
		finish, err := j.Begin(t.Context(), w)
		if err != nil {
			t.Fatal(err)
		}
		finish(&booking.Result{Outcome: booking.NotBooked})
	}
	h.slash(ada, "audit")
	audit := h.reply(ada, "Bookings and cancellations")
	if n := blockText(t, audit.Blocks); n > 11000 {
		t.Errorf("the audit's blocks hold %d characters of text", n)
	}
	if !strings.Contains(textOf(audit.Blocks), "do not fit here") {
		t.Errorf("the audit does not say some entries were left out")
	}
}

// A booking whose outcome the journal could not record when it was made
// (its database away for a moment) stands in the way of a second booking
// of the same attendee at the same time: the second is told it is already
// booked, with its ID and who booked it, not that it is on its way.
func TestBookingWhoseOutcomeWasNotRecordedIsAlreadyBooked(t *testing.T) {
	t.Parallel()
	db, err := bolt.Open(t.TempDir(), bolt.Options{Beside: true})
	if err != nil {
		t.Fatal(err)
	}
	j := journaltest.NewFlaky(db.Journal())
	release := make(chan struct{}) // the outcome is tried again at the test's end
	h := newHarnessWith(t, []booking.Option{booking.WithJournal(j), booking.WithSleep(func(ctx context.Context, _ time.Duration) error {
		<-release
		return ctx.Err()
	})})
	t.Cleanup(func() {
		close(release)
		select {
		case <-j.Recorded:
		case <-time.After(10 * time.Second):
			t.Error("the outcome was never recorded")
		}
	})
	vb := h.openModal(bob, "intro-call")
	j.Down.Store(true)
	h.submit(ada, h.openModal(ada, "intro-call").ID, bookingInputs(firstSlot, "grace@example.com"))
	h.dm(ada, "Booked")
	h.drain()
	j.Down.Store(false)
	id := bookedFor(h, "grace@example.com")

	h.submit(bob, vb.ID, bookingInputs(firstSlot, "grace@example.com"))
	m := h.dm(bob, "Already booked")
	text := textOf(m.Blocks)
	for _, want := range []string{"<@" + ada + ">", "Nothing was sent"} {
		if !strings.Contains(text, want) {
			t.Errorf("the answer does not say %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, id) {
		t.Errorf("the answer shows the booking's ID:\n%s", text)
	}
	h.wantPosts(1)
}

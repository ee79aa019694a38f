package bot_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/notices"
	"github.com/bookbot/bookbot/store/bolt"
)

// noticeWorld is a watcher posting through the real publisher to the Slack
// stand-in, over the harness's sandbox.
func noticeWorld(t *testing.T, h *harness) *notices.Watcher {
	t.Helper()
	h.sl.AddChannel(slacktest.Channel{ID: "CNOTES", Name: "bookings", Members: []string{h.sl.BotUserID()}})
	db, err := bolt.Open(t.TempDir(), bolt.Options{Beside: true})
	if err != nil {
		t.Fatal(err)
	}
	store := db.Notices()
	api := slack.New(h.sl.BotToken(), slack.OptionAPIURL(h.sl.APIURL))
	pub := bot.SlackNoticePublisher{Slack: api, Zone: berlin, Now: h.clock.Now}
	w := notices.NewWatcher(notices.Config{
		List: h.client, Store: store, Channel: "CNOTES", Now: h.clock.Now,
		Publisher: pub, Finder: bot.SlackFinder{Slack: api},
		Sleep: func(_ context.Context, d time.Duration) error { h.clock.Advance(d); return nil },
	})
	if err := w.Poll(t.Context()); err != nil {
		t.Fatal(err)
	}
	return w
}

// channelMessages are what bookbot posted or updated in a channel since
// the first n messages of the stand-in.
func channelMessages(h *harness, n int, channel string) []slacktest.Message {
	var out []slacktest.Message
	for _, m := range h.sl.Messages()[n:] {
		if m.Channel == channel {
			out = append(out, m)
		}
	}
	return out
}

// afterPoll makes change, lets w read the list, and returns what bookbot
// posted or updated in CNOTES meanwhile.
func afterPoll(t *testing.T, h *harness, w *notices.Watcher, change func() error) []slacktest.Message {
	t.Helper()
	seen := len(h.sl.Messages())
	if err := change(); err != nil {
		t.Fatal(err)
	}
	if err := w.Poll(t.Context()); err != nil {
		t.Fatal(err)
	}
	return channelMessages(h, seen, "CNOTES")
}

func attendeeSlot(t *testing.T, h *harness, slug string, n int) time.Time {
	t.Helper()
	slots := h.sb.Slots(bookingtest.DemoOwner, slug)
	if len(slots) <= n {
		t.Fatalf("%s has %d slots", slug, len(slots))
	}
	return slots[n].Start
}

// A booking made, moved and cancelled on the booking page: its notice,
// then the same notice updated in place with a reply in its thread each
// time; every fallback text begins with what happened, and every message's
// metadata is of that kind and carries the booking's ID, which no text
// shows.
func TestNoticesInSlack(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	w := noticeWorld(t, h)

	var id string
	got := afterPoll(t, h, w, func() (err error) {
		id, err = h.sb.BookAsAttendee(bookingtest.DemoOwner, "consultation", attendeeSlot(t, h, "consultation", 1), "Grace <!channel>\nHopper", "grace@example.com")
		return err
	})
	if len(got) != 1 || got[0].Kind != "message" {
		t.Fatalf("after a booking: %+v", got)
	}
	root := got[0]
	text := textOf(root.Blocks)
	for _, s := range []string{"New booking", "Consultation", "Grace &lt;!channel&gt; Hopper", "Booked outside bookbot"} {
		if !strings.Contains(text, s) {
			t.Errorf("notice lacks %q:\n%s", s, text)
		}
	}
	if !strings.HasPrefix(root.Text, "New booking") || strings.Contains(root.Text+text, id) || strings.Contains(root.Text+string(root.Blocks), "<!channel>") {
		t.Errorf("notice text %q", root.Text)
	}
	if !carriesBooking(root, "bookbot_booking_new", id) {
		t.Errorf("notice metadata %s", root.Metadata)
	}
	if strings.Contains(text, "grace@example.com") {
		t.Errorf("the notice shows the email though NOTIFY_INCLUDE_EMAILS is off:\n%s", text)
	}

	got = afterPoll(t, h, w, func() error { return h.sb.MoveAsAttendee(id, attendeeSlot(t, h, "consultation", 5)) })
	if len(got) != 2 || got[0].Kind != "update" || got[0].TS != root.TS || got[1].ThreadTS != root.TS {
		t.Fatalf("after a move: %+v", got)
	}
	for _, m := range got {
		if !strings.HasPrefix(m.Text, "Moved") || strings.Contains(m.Text+textOf(m.Blocks), id) || !carriesBooking(m, "bookbot_booking_moved", id) {
			t.Errorf("move text %q, metadata %s", m.Text, m.Metadata)
		}
	}
	if reply := textOf(got[1].Blocks); !strings.Contains(reply, "→") {
		t.Errorf("the reply does not say old → new:\n%s", reply)
	}

	got = afterPoll(t, h, w, func() error { return h.sb.CancelAsAttendee(id) })
	if len(got) != 2 || got[0].Kind != "update" || got[0].TS != root.TS || got[1].ThreadTS != root.TS {
		t.Fatalf("after a cancel: %+v", got)
	}
	for _, m := range got {
		if !strings.HasPrefix(m.Text, "Cancelled") || strings.Contains(m.Text+textOf(m.Blocks), id) || !carriesBooking(m, "bookbot_booking_cancelled", id) {
			t.Errorf("cancel text %q, metadata %s", m.Text, m.Metadata)
		}
	}
	if updated := textOf(got[0].Blocks); !strings.Contains(updated, "~") {
		t.Errorf("the first notice is not struck through:\n%s", updated)
	}
}

// A series cancelled at once is one summary in the channel, with every
// booking a line in its thread; a channel the bot left refuses the
// notice, which is then tried again.
func TestNoticeBurstAndRefusal(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	w := noticeWorld(t, h)
	var ids []string
	got := afterPoll(t, h, w, func() error {
		for _, b := range upcoming(h) {
			if err := h.sb.CancelAsAttendee(b.ID); err != nil {
				return err
			}
			ids = append(ids, b.ID)
		}
		return nil
	})
	var summaries, list []slacktest.Message
	for _, m := range got {
		if m.ThreadTS == "" {
			summaries = append(summaries, m)
		} else {
			list = append(list, m)
		}
	}
	if len(summaries) != 1 || len(list) == 0 {
		t.Fatalf("%d summaries and %d replies for %d cancels, want one summary and its list", len(summaries), len(list), len(ids))
	}
	// The notification is the summary: how many, of what kind; no IDs.
	want := fmt.Sprintf("%d booking changes since ", len(ids))
	if s := summaries[0]; !strings.HasPrefix(s.Text, want) || !strings.Contains(s.Text, fmt.Sprintf("%d cancelled", len(ids))) || strings.Contains(s.Text, ids[0]) {
		t.Errorf("summary text %q, want it to begin %q and count the cancels, without IDs", s.Text, want)
	}
	// The list: one line each, in the summary's thread, whose metadata
	// names the bookings, for search. No text shows an ID.
	var lines, texts, named string
	for _, m := range list {
		if m.ThreadTS != summaries[0].TS {
			t.Errorf("a reply in thread %s, want the summary's %s", m.ThreadTS, summaries[0].TS)
		}
		lines += textOf(m.Blocks)
		texts += m.Text
		if e, p := metaOf(m); e == "bookbot_booking_changes" {
			named += fmt.Sprint(p["cancelled"]) + " "
		}
	}
	if n := strings.Count(lines, "Cancelled · "); n != len(ids) {
		t.Errorf("the list has %d lines of cancels for %d cancels:\n%s", n, len(ids), lines)
	}
	for _, id := range ids {
		if !strings.Contains(named, id) {
			t.Errorf("the list's metadata does not name %s", id)
		}
		if strings.Contains(texts+lines+textOf(summaries[0].Blocks), id) {
			t.Errorf("a text shows the ID %s", id)
		}
	}

	h.sl.AddChannel(slacktest.Channel{ID: "CNOTES", Name: "bookings"}) // the bot was removed
	id, err := h.sb.BookAsAttendee(bookingtest.DemoOwner, "intro-call", attendeeSlot(t, h, "intro-call", 0), "Ada", "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	seen := len(h.sl.Messages())
	if err := w.Poll(t.Context()); err == nil {
		t.Fatal("a refused notice was not reported")
	}
	h.sl.AddChannel(slacktest.Channel{ID: "CNOTES", Name: "bookings", Members: []string{h.sl.BotUserID()}})
	if err := w.Poll(t.Context()); err != nil {
		t.Fatal(err)
	}
	got = channelMessages(h, seen, "CNOTES")
	if len(got) != 1 || !strings.HasPrefix(got[0].Text, "New booking") || !carriesBooking(got[0], "bookbot_booking_new", id) {
		t.Errorf("after the bot is back in the channel: %+v", got)
	}
}

// The publisher says when Slack certainly did not post.
func TestNoticeNotPostedIsSaid(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	api := slack.New(h.sl.BotToken(), slack.OptionAPIURL(h.sl.APIURL))
	p := bot.SlackNoticePublisher{Slack: api, Zone: berlin}
	_, err := p.Post(t.Context(), "C404", notices.Notice{Change: notices.Change{Kind: notices.New}})
	if !errors.Is(err, notices.ErrNotPosted) || !strings.Contains(err.Error(), "channel_not_found") {
		t.Errorf("post to a missing channel: %v", err)
	}
}

// Slack's internal_error and fatal_error may come after the message was
// posted: they are not taken as proof that it was not, so the notice is
// looked for in Slack rather than posted again.
func TestNoticeInternalErrorIsNotProofOfNotPosted(t *testing.T) {
	t.Parallel()
	for _, code := range []string{"internal_error", "fatal_error"} {
		h := newHarness(t)
		h.sl.FailNext("chat.postMessage", code)
		api := slack.New(h.sl.BotToken(), slack.OptionAPIURL(h.sl.APIURL))
		p := bot.SlackNoticePublisher{Slack: api, Zone: berlin}
		_, err := p.Post(t.Context(), "CNOTES", notices.Notice{Change: notices.Change{Kind: notices.New}})
		if err == nil || errors.Is(err, notices.ErrNotPosted) {
			t.Errorf("%s: %v; want an error that leaves it open whether the notice is in Slack", code, err)
		}
	}
}

// A read cut short while posting: one notice reached Slack though its
// answer never came, the next never got there. Once SettleAfter has
// passed, the first is found in the channel's history by the claim in its
// metadata and not posted again; the second is posted; later notices go
// in the first one's thread.
func TestCutShortNoticesAreFoundInSlack(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	w := noticeWorld(t, h)
	seen := len(h.sl.Messages())

	grace, err := h.sb.BookAsAttendee(bookingtest.DemoOwner, "consultation", attendeeSlot(t, h, "consultation", 1), "Grace Hopper", "grace@example.com")
	if err != nil {
		t.Fatal(err)
	}
	alan, err := h.sb.BookAsAttendee(bookingtest.DemoOwner, "consultation", attendeeSlot(t, h, "consultation", 4), "Alan Turing", "alan@example.com")
	if err != nil {
		t.Fatal(err)
	}
	h.sl.StallNext("chat.postMessage", true)
	ctx, cut := context.WithCancel(t.Context())
	go func() {
		if h.sl.WaitStalled(ctx, "chat.postMessage", 1) == nil {
			cut() // as when the process dies while Slack holds its post
		}
	}()
	if err := w.Poll(ctx); err == nil {
		t.Fatal("a read cut short reported nothing")
	}
	cut()
	got := channelMessages(h, seen, "CNOTES")
	if len(got) != 1 || !carriesBooking(got[0], "bookbot_booking_new", grace) {
		t.Fatalf("in Slack after the cut: %+v", got)
	}
	first := got[0]

	h.clock.Advance(notices.SettleAfter)
	if err := w.Poll(t.Context()); err != nil {
		t.Fatal(err)
	}
	got = channelMessages(h, seen, "CNOTES")
	if len(got) != 2 || !carriesBooking(got[1], "bookbot_booking_new", alan) {
		t.Fatalf("after settling: %+v, want Alan's notice posted and Grace's not again", got)
	}

	got = afterPoll(t, h, w, func() error {
		err := h.sb.CancelAsAttendee(grace)
		h.clock.Advance(time.Minute)
		return err
	})
	if len(got) != 2 || got[0].Kind != "update" || got[0].TS != first.TS || got[1].ThreadTS != first.TS {
		t.Errorf("the cancel after settling: %+v, want the found notice updated and a reply in its thread", got)
	}
}

// Without the history scope, or with more history since the claim than
// it reads through, Find says no look can succeed.
func TestFindWithoutHistoryScope(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.sl.AddChannel(slacktest.Channel{ID: "CNOTES", Name: "bookings", Members: []string{h.sl.BotUserID()}})
	api := slack.New(h.sl.BotToken(), slack.OptionAPIURL(h.sl.APIURL))
	p := bot.SlackNoticePublisher{Slack: api, Zone: berlin}
	h.sl.FailNext("conversations.history", "missing_scope")
	_, err := finder(p).Find(t.Context(), "CNOTES", nil, []string{"x"}, t0)
	if !errors.Is(err, notices.ErrCannotLook) || !strings.Contains(err.Error(), "missing_scope") {
		t.Errorf("find without the scope: %v", err)
	}
	h.sl.FailNext("conversations.history", "internal_error")
	if _, err := finder(p).Find(t.Context(), "CNOTES", nil, []string{"x"}, t0); err == nil || errors.Is(err, notices.ErrCannotLook) {
		t.Errorf("find when Slack fails for now: %v, want an error to try again", err)
	}
	// Looking further would not fit in a read: no look will.
	p.Slack = endlessHistory{api}
	if _, err := finder(p).Find(t.Context(), "CNOTES", nil, []string{"x"}, t0); !errors.Is(err, notices.ErrCannotLook) {
		t.Errorf("find through more history than is looked through: %v, want ErrCannotLook", err)
	}
}

// endlessHistory answers every read of a channel's history with a page
// that has more after it.
type endlessHistory struct{ *slack.Client }

func (endlessHistory) GetConversationHistoryContext(context.Context, *slack.GetConversationHistoryParameters) (*slack.GetConversationHistoryResponse, error) {
	h := &slack.GetConversationHistoryResponse{HasMore: true}
	h.ResponseMetaData.NextCursor = "more"
	return h, nil
}

// Find looks in the channel and in each thread it is given, past one whose
// first notice is gone.
func TestFindLooksInEachThread(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.sl.AddChannel(slacktest.Channel{ID: "CNOTES", Name: "bookings", Members: []string{h.sl.BotUserID()}})
	api := slack.New(h.sl.BotToken(), slack.OptionAPIURL(h.sl.APIURL))
	p := bot.SlackNoticePublisher{Slack: api, Zone: berlin, Now: h.clock.Now}
	notice := func(kind notices.Kind, claim string) notices.Notice {
		return notices.Notice{Change: notices.Change{Kind: kind}, Claim: claim}
	}
	var threads []notices.Message
	for _, claim := range []string{"root1", "root2"} {
		m, err := p.Post(t.Context(), "CNOTES", notice(notices.New, claim))
		if err != nil {
			t.Fatal(err)
		}
		threads = append(threads, m)
	}
	var replies []notices.Message
	for i, claim := range []string{"reply1", "reply2"} {
		m, err := p.Reply(t.Context(), threads[i], notice(notices.Cancelled, claim))
		if err != nil {
			t.Fatal(err)
		}
		replies = append(replies, m)
	}

	gone := notices.Message{Channel: "CNOTES", TS: "1.000001"}
	claims := []string{"root1", "reply1", "reply2", "never"}
	found, err := finder(p).Find(t.Context(), "CNOTES", []notices.Message{gone, threads[0], threads[1]}, claims, t0.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]notices.Message{"root1": threads[0], "reply1": replies[0], "reply2": replies[1]}
	if len(found) != len(want) {
		t.Errorf("found %+v, want %+v", found, want)
	}
	for claim, m := range want {
		if f, ok := found[claim]; !ok || f.Message != m || f.Burst {
			t.Errorf("claim %s: found %+v, %v; want %+v", claim, f, ok, m)
		}
	}
}

// A burst too many for one summary carries, in each summary, the claims of
// the notices it tells of, so that Find finds each notice in its own
// summary, as a burst; the lists in the summaries' threads carry no
// claims, only the IDs of the bookings their lines tell of.
func TestBurstPartsCarryTheirOwnClaims(t *testing.T) {
	t.Parallel()
	sl, p, _ := noticePublisher(t)
	ns := cancellations(250)
	var claims []string
	for _, n := range ns {
		claims = append(claims, n.Claim)
	}
	for _, s := range p.Burst(t.Context(), "CNOTES", ns) {
		if s.Err != nil {
			t.Fatal(s.Err)
		}
	}
	var summaries []slacktest.Message
	for _, m := range sl.Messages() {
		switch {
		case m.Channel != "CNOTES":
		case m.ThreadTS == "":
			summaries = append(summaries, m)
		case strings.Contains(string(m.Metadata), "claims") || !strings.Contains(string(m.Metadata), `"event_type":"bookbot_booking_changes"`):
			t.Errorf("a reply in a summary's thread carries metadata %s, want the IDs of its lines and no claims", m.Metadata)
		}
	}
	if len(summaries) < 2 {
		t.Fatalf("a burst of %d notices in %d summaries, want several", len(ns), len(summaries))
	}
	in := map[string]string{} // claim: the summary that carries it
	for i, cs := range claimsIn(t, sl) {
		for _, c := range cs {
			in[c] = summaries[i].TS
		}
	}

	found, err := finder(p).Find(t.Context(), "CNOTES", nil, claims, t0.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns {
		if f, ok := found[n.Claim]; !ok || !f.Burst || f.TS != in[n.Claim] || f.TS == "" {
			t.Errorf("%s: found %+v, %v; want the summary %s that tells of it", n.Booking.ID, f, ok, in[n.Claim])
		}
	}
}

// A cancel or a move of a booking in the next 48 hours is seen in the
// channel, not only in the thread of its first notice: the reply is also
// sent to the channel. A change further ahead stays in the thread.
func TestNearChangesAreAlsoSentToTheChannel(t *testing.T) {
	t.Parallel()
	sl := slacktest.NewServer(t)
	sl.AddChannel(slacktest.Channel{ID: "CNOTES", Name: "bookings", Members: []string{sl.BotUserID()}})
	api := slack.New(sl.BotToken(), slack.OptionAPIURL(sl.APIURL))
	p := bot.SlackNoticePublisher{Slack: api, Zone: berlin, Now: func() time.Time { return t0 }}
	at := func(d time.Duration) booking.Booking {
		return booking.Booking{ID: "bk_near", Start: t0.Add(d), End: t0.Add(d + 30*time.Minute), BookerName: booking.Some("Ada Lovelace")}
	}
	for _, c := range []struct {
		name      string
		kind      notices.Kind
		was, now  time.Duration // Was (moves only) and Booking, from now
		broadcast bool
	}{
		{"cancel in 3 hours", notices.Cancelled, 0, 3 * time.Hour, true},
		{"cancel of one going on", notices.Cancelled, 0, -10 * time.Minute, true},
		{"cancel in 47 hours", notices.Cancelled, 0, 47 * time.Hour, true},
		{"cancel in 5 days", notices.Cancelled, 0, 5 * 24 * time.Hour, false},
		{"move into the next 48 hours", notices.Moved, 5 * 24 * time.Hour, 3 * time.Hour, true},
		{"move out of the next 48 hours", notices.Moved, 3 * time.Hour, 5 * 24 * time.Hour, true},
		{"move from 5 to 6 days ahead", notices.Moved, 5 * 24 * time.Hour, 6 * 24 * time.Hour, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, err := p.Post(t.Context(), "CNOTES", notices.Notice{Change: notices.Change{Kind: notices.New, Booking: at(c.was)}, Title: "Consultation"})
			if err != nil {
				t.Fatal(err)
			}
			n := notices.Notice{Change: notices.Change{Kind: c.kind, Booking: at(c.now)}, Title: "Consultation"}
			if c.kind == notices.Moved {
				n.Was = at(c.was)
			}
			reply, err := p.Reply(t.Context(), root, n)
			if err != nil {
				t.Fatal(err)
			}
			var got *slacktest.Message
			for _, m := range sl.Messages() {
				if m.TS == reply.TS {
					got = &m
				}
			}
			if got == nil || got.ThreadTS != root.TS {
				t.Fatalf("reply %+v not posted in the thread of %s", got, root.TS)
			}
			if got.Broadcast != c.broadcast {
				t.Errorf("reply also sent to the channel: %v, want %v (%s)", got.Broadcast, c.broadcast, got.Text)
			}
		})
	}
}

// cancellations are n notices of cancelled bookings, each with a claim.
func cancellations(n int) []notices.Notice {
	var ns []notices.Notice
	for i := range n {
		id := fmt.Sprintf("booking-%03d", i)
		start := t0.Add(time.Duration(i) * time.Hour)
		b := booking.Booking{ID: id, Start: start, End: start.Add(30 * time.Minute), BookerName: booking.Some("Ada Lovelace")}
		ns = append(ns, notices.Notice{Change: notices.Change{Kind: notices.Cancelled, Booking: b}, Claim: "claim-" + id})
	}
	return ns
}

// noticePublisher is a publisher posting to CNOTES in a Slack stand-in;
// the waits it is asked for are recorded on waits, not waited.
func noticePublisher(t *testing.T) (*slacktest.Server, bot.SlackNoticePublisher, *[]time.Duration) {
	t.Helper()
	sl := slacktest.NewServer(t)
	sl.AddChannel(slacktest.Channel{ID: "CNOTES", Name: "bookings", Members: []string{sl.BotUserID()}})
	var waits []time.Duration
	p := bot.SlackNoticePublisher{
		Slack: slack.New(sl.BotToken(), slack.OptionAPIURL(sl.APIURL)), Zone: berlin,
		Now:   func() time.Time { return t0 },
		Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil },
	}
	return sl, p, &waits
}

// claimsIn are the claims each message in CNOTES carries, in order; the
// replies in a burst's thread, its lists, carry none.
func claimsIn(t *testing.T, sl *slacktest.Server) [][]string {
	t.Helper()
	var out [][]string
	for _, m := range sl.Messages() {
		if m.Channel != "CNOTES" || m.ThreadTS != "" {
			continue
		}
		var md struct {
			Payload struct {
				Claims string `json:"claims"`
			} `json:"event_payload"`
		}
		if err := json.Unmarshal(m.Metadata, &md); err != nil {
			t.Fatalf("metadata %s: %v", m.Metadata, err)
		}
		out = append(out, strings.Fields(md.Payload.Claims))
	}
	return out
}

// burstParts is how many messages a burst of ns takes, posted to a Slack
// of its own; it fails the test unless they are at least three.
func burstParts(t *testing.T, ns []notices.Notice) int {
	t.Helper()
	sl, p, _ := noticePublisher(t)
	p.Burst(t.Context(), "CNOTES", ns)
	n := len(claimsIn(t, sl))
	if n < 3 {
		t.Fatalf("test setup: a burst of %d notices takes %d messages, want 3 or more", len(ns), n)
	}
	return n
}

// A 429 on the second message of a burst proves it was not posted: it is
// waited out and posted, then the rest, each message once and in order.
func TestBurstWaitsOutARateLimit(t *testing.T) {
	t.Parallel()
	ns := cancellations(250)
	parts := burstParts(t, ns)
	sl, p, waits := noticePublisher(t)
	sl.RateLimitAfter("chat.postMessage", 1, 7*time.Second)
	sent := p.Burst(t.Context(), "CNOTES", ns)
	if !slices.Equal(*waits, []time.Duration{7 * time.Second}) {
		t.Errorf("waited %v, want the Retry-After once", *waits)
	}
	got := claimsIn(t, sl)
	if len(got) != parts {
		t.Fatalf("%d messages, want %d", len(got), parts)
	}
	var i int
	for _, claims := range got {
		for _, c := range claims {
			if i >= len(ns) || c != ns[i].Claim {
				t.Fatalf("claim %q in message order at %d, want the notices' order", c, i)
			}
			i++
		}
	}
	if i != len(ns) || len(sent) != len(ns) {
		t.Fatalf("%d notices in Slack, %d reported sent; want all %d", i, len(sent), len(ns))
	}
	for i, s := range sent {
		if s.Err != nil || s.Message.TS == "" {
			t.Errorf("notice %d: %+v", i, s)
		}
	}
}

// A 429 whose wait would leave no time before the deadline to post is not
// waited: the message and the rest of the burst are reported not posted,
// and the rest are not sent.
func TestBurstRateLimitedBeyondTheDeadline(t *testing.T) {
	t.Parallel()
	ns := cancellations(250)
	burstParts(t, ns)
	sl, p, waits := noticePublisher(t)
	sl.RateLimitAfter("chat.postMessage", 1, 17*time.Second)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	sent := p.Burst(ctx, "CNOTES", ns)
	if len(*waits) != 0 {
		t.Errorf("waited %v past the deadline", *waits)
	}
	got := claimsIn(t, sl)
	if len(got) != 1 {
		t.Fatalf("%d messages, want the first", len(got))
	}
	first := len(got[0])
	if len(sent) <= first {
		t.Fatalf("%d notices reported, want the first message's %d and the second's", len(sent), first)
	}
	for i, s := range sent {
		if notPosted := errors.Is(s.Err, notices.ErrNotPosted); (i >= first) != notPosted {
			t.Errorf("notice %d: %v", i, s.Err)
		}
	}
	for i := len(sent); i < len(ns); i++ {
		if slices.Contains(got[0], ns[i].Claim) {
			t.Errorf("notice %d was posted", i)
		}
	}
}

// lostSecond posts through Slack, but the answer to its second post is
// lost: the message is in Slack.
type lostSecond struct {
	bot.NoticeSlack
	posts int
}

func (l *lostSecond) PostMessageContext(ctx context.Context, channel string, opts ...slack.MsgOption) (string, string, error) {
	ch, ts, err := l.NoticeSlack.PostMessageContext(ctx, channel, opts...)
	if l.posts++; l.posts == 2 {
		return "", "", context.DeadlineExceeded
	}
	return ch, ts, err
}

// A lost answer on the second message: its notices may be posted, and the
// rest are not sent.
func TestBurstWithALostAnswer(t *testing.T) {
	t.Parallel()
	ns := cancellations(250)
	burstParts(t, ns)
	sl, p, _ := noticePublisher(t)
	p.Slack = &lostSecond{NoticeSlack: p.Slack}
	sent := p.Burst(t.Context(), "CNOTES", ns)
	got := claimsIn(t, sl)
	if len(got) != 2 {
		t.Fatalf("%d messages, want the first two", len(got))
	}
	first, second := len(got[0]), len(got[1])
	if len(sent) != first+second {
		t.Fatalf("%d notices reported, want the first two messages' %d", len(sent), first+second)
	}
	for i, s := range sent {
		switch lost := i >= first; {
		case !lost && s.Err != nil:
			t.Errorf("notice %d of the first message: %v", i, s.Err)
		case lost && (s.Err == nil || errors.Is(s.Err, notices.ErrNotPosted)):
			t.Errorf("notice %d of the second message: %v, want it unknown", i, s.Err)
		}
	}
}

// A notice answered 429 is waited out and posted.
func TestNoticeWaitsOutARateLimit(t *testing.T) {
	t.Parallel()
	sl, p, waits := noticePublisher(t)
	sl.RateLimitNext("chat.postMessage", 2*time.Second)
	if _, err := p.Post(t.Context(), "CNOTES", cancellations(1)[0]); err != nil {
		t.Fatal(err)
	}
	if got := claimsIn(t, sl); len(got) != 1 || !slices.Equal(*waits, []time.Duration{2 * time.Second}) {
		t.Errorf("%d messages after waiting %v; want one after the Retry-After", len(got), *waits)
	}
}

// failNth posts through Slack, but its nth post fails with err; with
// posted set, that post is in Slack all the same.
type failNth struct {
	bot.NoticeSlack
	n, posts int
	err      error
	posted   bool
}

func (f *failNth) PostMessageContext(ctx context.Context, channel string, opts ...slack.MsgOption) (string, string, error) {
	if f.posts++; f.posts == f.n {
		if f.posted {
			_, _, _ = f.NoticeSlack.PostMessageContext(ctx, channel, opts...)
		}
		return "", "", f.err
	}
	return f.NoticeSlack.PostMessageContext(ctx, channel, opts...)
}

// Whatever Slack answers to any message of a burst, the publisher reports
// each notice truly: posted, surely not posted, or unknown; nothing is
// posted twice, and nothing after a message that did not surely go out is
// sent.
func TestBurstFaultOnAnyMessage(t *testing.T) {
	t.Parallel()
	ns := cancellations(250)
	parts := burstParts(t, ns)
	type outcome int
	const (
		posted outcome = iota
		notPosted
		unknown
	)
	faults := []struct {
		name string
		set  func(sl *slacktest.Server, p *bot.SlackNoticePublisher, n int)
		want outcome
	}{
		{"429", func(sl *slacktest.Server, _ *bot.SlackNoticePublisher, n int) {
			sl.RateLimitAfter("chat.postMessage", n-1, 3*time.Second)
		}, posted},
		{"refused", func(_ *slacktest.Server, p *bot.SlackNoticePublisher, n int) {
			p.Slack = &failNth{NoticeSlack: p.Slack, n: n, err: slack.SlackErrorResponse{Err: "msg_too_long"}}
		}, notPosted},
		{"internal_error after posting", func(_ *slacktest.Server, p *bot.SlackNoticePublisher, n int) {
			p.Slack = &failNth{NoticeSlack: p.Slack, n: n, err: slack.SlackErrorResponse{Err: "internal_error"}, posted: true}
		}, unknown},
		{"HTTP 503", func(_ *slacktest.Server, p *bot.SlackNoticePublisher, n int) {
			p.Slack = &failNth{NoticeSlack: p.Slack, n: n, err: slack.StatusCodeError{Code: 503, Status: "503 Service Unavailable"}}
		}, unknown},
	}
	for _, f := range faults {
		for _, k := range []int{1, 2, parts} {
			t.Run(fmt.Sprintf("%s on message %d of %d", f.name, k, parts), func(t *testing.T) {
				t.Parallel()
				sl, p, waits := noticePublisher(t)
				f.set(sl, &p, k)
				sent := p.Burst(t.Context(), "CNOTES", ns)
				inSlack := map[string]int{}
				var first int // notices in Slack's messages before message k
				for i, claims := range claimsIn(t, sl) {
					for _, c := range claims {
						inSlack[c]++
					}
					if i < k-1 {
						first += len(claims)
					}
				}
				if (f.want == posted) != (len(*waits) == 1) {
					t.Errorf("waited %v", *waits)
				}
				for c, n := range inSlack {
					if n > 1 {
						t.Errorf("%s posted %d times", c, n)
					}
				}
				// The notices of message k are those after the ones
				// reported for the messages before it.
				var before int
				for i, s := range sent {
					if s.Err != nil {
						break
					}
					before = i + 1
				}
				for i, s := range sent {
					var got outcome
					switch {
					case s.Err == nil:
						got = posted
					case errors.Is(s.Err, notices.ErrNotPosted):
						got = notPosted
					default:
						got = unknown
					}
					want := posted
					if i >= before {
						want = f.want
					}
					if got != want {
						t.Errorf("notice %d: %v (%v), want %v", i, got, s.Err, want)
					}
					if got == posted && inSlack[ns[i].Claim] != 1 {
						t.Errorf("notice %d reported posted, in Slack %d times", i, inSlack[ns[i].Claim])
					}
					if got == notPosted && inSlack[ns[i].Claim] != 0 {
						t.Errorf("notice %d reported not posted, and is in Slack", i)
					}
				}
				for i := len(sent); i < len(ns); i++ {
					if inSlack[ns[i].Claim] != 0 {
						t.Errorf("notice %d was posted after a message that did not surely go out", i)
					}
				}
				if f.want == posted && len(sent) != len(ns) {
					t.Errorf("%d of %d notices reported", len(sent), len(ns))
				}
				if f.want != posted && (before != first || before == len(sent)) {
					t.Errorf("%d notices reported posted before the fault, %d were in the messages before message %d; %d reported in all",
						before, first, k, len(sent))
				}
			})
		}
	}
}

// A list in a summary's thread that Slack refuses loses no notice: the
// summary, which carries their claims, was posted, so each is reported
// posted, with the summary.
func TestBurstListRefusedLosesNoNotice(t *testing.T) {
	t.Parallel()
	sl, p, _ := noticePublisher(t)
	p.Slack = &failNth{NoticeSlack: p.Slack, n: 2, err: slack.SlackErrorResponse{Err: "msg_too_long"}}
	ns := cancellations(20)
	sent := p.Burst(t.Context(), "CNOTES", ns)
	got := claimsIn(t, sl)
	if len(got) != 1 || len(got[0]) != len(ns) {
		t.Fatalf("claims in Slack %v, want one summary with all %d", got, len(ns))
	}
	if len(sent) != len(ns) {
		t.Fatalf("%d notices reported, want %d", len(sent), len(ns))
	}
	for i, s := range sent {
		if s.Err != nil || s.Message.TS == "" {
			t.Errorf("notice %d: %+v, want posted with the summary", i, s)
		}
	}
}

// A summary counts the changes by kind and those today, and shows today's
// and tomorrow's first, at most burstRows of them; the rest are counted.
func TestBurstSummaryShowsTodayAndTomorrowFirst(t *testing.T) {
	t.Parallel()
	var ns []notices.Notice
	for i, d := range []time.Duration{72 * time.Hour, 2 * time.Hour, 26 * time.Hour, 3 * time.Hour, 5 * 24 * time.Hour, 4 * time.Hour, 5 * time.Hour, 6 * time.Hour, 7 * time.Hour, 8 * time.Hour, 27 * time.Hour} {
		b := booking.Booking{ID: fmt.Sprintf("bk_%02d", i), Start: t0.Add(d), End: t0.Add(d + 30*time.Minute), BookerName: booking.Some("Ada Lovelace")}
		kind := notices.New
		if i%2 == 1 {
			kind = notices.Cancelled
		}
		ns = append(ns, notices.Notice{Change: notices.Change{Kind: kind, Booking: b}, Title: "Consultation", Since: t0.Add(-time.Minute)})
	}
	sl, p, _ := noticePublisher(t)
	p.Burst(t.Context(), "CNOTES", ns)
	var summary slacktest.Message
	for _, m := range sl.Messages() {
		if m.ThreadTS == "" {
			summary = m
		}
	}
	if !strings.HasPrefix(summary.Text, "11 booking changes since ") || !strings.Contains(summary.Text, ": 6 new, 5 cancelled · ") {
		t.Errorf("summary text %q", summary.Text)
	}
	text := textOf(summary.Blocks)
	if n := strings.Count(text, "Ada Lovelace"); n != 8 {
		t.Errorf("the summary shows %d changes, want 8:\n%s", n, text)
	}
	if !strings.Contains(text, "1 more today and tomorrow.") || !strings.Contains(text, "All 11 changes are in the thread, one line each") {
		t.Errorf("the summary does not count the rest:\n%s", text)
	}
	for _, id := range []string{"bk_00", "bk_04"} {
		if strings.Contains(text, id) || strings.Contains(summary.Text, id) {
			t.Errorf("the summary names %s", id)
		}
	}
}

// finder is the finder of notices p posted.
func finder(p bot.SlackNoticePublisher) bot.SlackFinder { return bot.SlackFinder{Slack: p.Slack} }

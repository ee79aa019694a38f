package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/internal/testutil"
	"github.com/bookbot/bookbot/notices"
)

// The real binary across restarts: the first start records a baseline and
// announces nothing; what attendees did while bookbot was down is
// announced when it is back, each change once; another restart announces
// nothing again.
func TestRunAnnouncesChangesOnceAcrossRestarts(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	sb := bookingtest.NewServer(t)
	sl := slacktest.NewServer(t)
	sl.AddChannel(slacktest.Channel{ID: "C0NOTES", Name: "bookings", Members: []string{sl.BotUserID()}})
	e := env(sb, sl, "NOTIFY_CHANNEL=C0NOTES", "NOTIFY_INTERVAL=1h", "LOG_LEVEL=debug", "LOG_FORMAT=text")

	notes := func() []slacktest.Message {
		return messagesWhere(sl, func(m slacktest.Message) bool { return m.Channel == "C0NOTES" })
	}

	cmd, out := startRun(ctx, t, sl, e)
	out.waitCount(ctx, t, "notices: first read recorded", 1)
	stopRun(t, cmd, out)
	if got := notes(); len(got) != 0 {
		t.Fatalf("the first start announced %d notices", len(got))
	}

	// While bookbot is down: a new booking, a move and a cancel.
	slots := sb.Slots(bookingtest.DemoOwner, "consultation")
	booked, err := sb.BookAsAttendee(bookingtest.DemoOwner, "consultation", slots[0].Start, "Grace Hopper", "grace@example.com")
	if err != nil {
		t.Fatal(err)
	}
	var upcoming []bookingtest.Booking
	for _, b := range sb.Bookings(bookingtest.DemoOwner) {
		if !b.Cancelled && b.Start.After(time.Now().Add(time.Hour)) && b.EventType != nil && b.ID != booked {
			upcoming = append(upcoming, b)
		}
	}
	moved, cancelled := upcoming[len(upcoming)-1], upcoming[len(upcoming)-2]
	var to time.Time
	for _, s := range sb.Slots(bookingtest.DemoOwner, *moved.EventType) {
		if !s.Start.Equal(moved.Start) {
			to = s.Start
			break
		}
	}
	if err := sb.MoveAsAttendee(moved.ID, to); err != nil {
		t.Fatal(err)
	}
	if err := sb.CancelAsAttendee(cancelled.ID); err != nil {
		t.Fatal(err)
	}

	cmd, out = startRun(ctx, t, sl, e)
	out.waitCount(ctx, t, "notices: list read", 1)
	stopRun(t, cmd, out)
	got := notes()
	want := map[string]string{"New booking": booked, "Moved": moved.ID, "Cancelled": cancelled.ID}
	event := map[string]string{"New booking": "bookbot_booking_new", "Moved": "bookbot_booking_moved", "Cancelled": "bookbot_booking_cancelled"}
	if len(got) != len(want) {
		t.Fatalf("%d notices after the restart, want %d: %+v\n%s", len(got), len(want), got, out.String())
	}
	for _, m := range got {
		kind, _, _ := strings.Cut(m.Text, ":")
		if id, ok := want[kind]; !ok || !carries(m, event[kind], id) || strings.Contains(m.Text, id) {
			t.Errorf("notice %q, metadata %s", m.Text, m.Metadata)
		}
		delete(want, kind)
	}

	cmd, out = startRun(ctx, t, sl, e)
	out.waitCount(ctx, t, "notices: list read", 1)
	stopRun(t, cmd, out)
	if again := notes(); len(again) != len(got) {
		t.Errorf("a third start announced %d more notices", len(again)-len(got))
	}
	noSecrets(t, sb, sl, out.String())
}

// noticesRun is the environment of a bookbot that reads the list only when
// it starts, and posts notices to C0NOTES.
func noticesRun(sb *bookingtest.Server, sl *slacktest.Server) []string {
	sl.AddChannel(slacktest.Channel{ID: "C0NOTES", Name: "bookings", Members: []string{sl.BotUserID()}})
	return env(sb, sl, "NOTIFY_CHANNEL=C0NOTES", "NOTIFY_INTERVAL=1h", "LOG_LEVEL=debug", "LOG_FORMAT=text")
}

// noticesIn are the messages bookbot posted or updated in C0NOTES.
func noticesIn(sl *slacktest.Server) []slacktest.Message {
	return messagesWhere(sl, func(m slacktest.Message) bool { return m.Channel == "C0NOTES" })
}

// One empty list, answered while bookbot was down and read when it starts,
// announces nothing: a second read, ConfirmAfter later on a clock the test
// moves, lists the bookings again. A booking made meanwhile is announced,
// once.
func TestRunEmptyListAnnouncesNothing(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	sb := bookingtest.NewServer(t)
	sl := slacktest.NewServer(t)
	clock, moved := newMovedClock(t)
	e := append(noticesRun(sb, sl), moved)

	cmd, out := startRun(ctx, t, sl, e)
	out.waitCount(ctx, t, "notices: first read recorded", 1)
	stopRun(t, cmd, out)

	slots := sb.Slots(bookingtest.DemoOwner, "consultation")
	booked, err := sb.BookAsAttendee(bookingtest.DemoOwner, "consultation", slots[0].Start, "Grace Hopper", "grace@example.com")
	if err != nil {
		t.Fatal(err)
	}
	sb.FailNext(bookingtest.EndpointListBookings, bookingtest.Fault{Status: http.StatusOK, ContentType: "application/json", Body: `{"bookings":[]}`})
	cmd, out = startRun(ctx, t, sl, e)
	out.waitCount(ctx, t, "reading again before announcing", 1)
	clock.advance(t, notices.ConfirmAfter)
	out.waitCount(ctx, t, "notices: list read", 1)
	stopRun(t, cmd, out)
	got := noticesIn(sl)
	if len(got) != 1 || !strings.HasPrefix(got[0].Text, "New booking") || !carries(got[0], "bookbot_booking_new", booked) {
		t.Fatalf("after an empty read: %d notices, want the new booking's only: %+v\n%s", len(got), got, out.String())
	}

	cmd, out = startRun(ctx, t, sl, e)
	out.waitCount(ctx, t, "notices: list read", 1)
	stopRun(t, cmd, out)
	if again := noticesIn(sl); len(again) != len(got) {
		t.Errorf("the next start announced %d more notices", len(again)-len(got))
	}
	noSecrets(t, sb, sl, out.String())
}

// A series cancelled at once is a burst: a summary, and the list in its
// thread, once a second read (ConfirmAfter later, on a clock the test
// moves) agrees; Slack answers the second message with a 429. It is waited
// out and posted, and every cancel is announced exactly once.
func TestRunRateLimitedBurstAnnouncesEachOnce(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	sb := bookingtest.NewServer(t)
	sl := slacktest.NewServer(t)
	clock, moved := newMovedClock(t)
	e := append(noticesRun(sb, sl), moved)
	slug := "intro-call"
	first := time.Now().Add(48 * time.Hour).Truncate(time.Hour)
	for i := range 80 {
		sb.AddBooking(bookingtest.DemoOwner, bookingtest.Booking{
			EventType: &slug, Start: first.Add(time.Duration(i) * time.Hour),
			BookerName: new("Ada Lovelace"), BookerEmail: new(fmt.Sprintf("ada%d@example.com", i)),
		})
	}

	cmd, out := startRun(ctx, t, sl, e)
	out.waitCount(ctx, t, "notices: first read recorded", 1)
	stopRun(t, cmd, out)

	cancelled := map[string]bool{}
	for _, b := range sb.Bookings(bookingtest.DemoOwner) {
		if !b.Cancelled && b.Start.After(time.Now().Add(time.Hour)) {
			if err := sb.CancelAsAttendee(b.ID); err != nil {
				t.Fatal(err)
			}
			cancelled[b.ID] = true
		}
	}
	sl.RateLimitAfter("chat.postMessage", 1, time.Second)
	cmd, out = startRun(ctx, t, sl, e)
	out.waitCount(ctx, t, "reading again before announcing", 1)
	clock.advance(t, notices.ConfirmAfter)
	out.waitCount(ctx, t, "notices: list read", 1)
	stopRun(t, cmd, out)

	msgs := noticesIn(sl)
	var limited int
	for _, c := range sl.Calls() {
		if c.Method == "chat.postMessage" && c.Status == http.StatusTooManyRequests {
			limited++
		}
	}
	if limited != 1 {
		t.Errorf("Slack answered %d posts with 429, want 1", limited)
	}
	claims := map[string]int{}
	for _, m := range msgs {
		if m.ThreadTS != "" {
			continue // the list in a summary's thread carries no claims
		}
		var md struct {
			Payload struct {
				Claims string `json:"claims"`
			} `json:"event_payload"`
		}
		if err := json.Unmarshal(m.Metadata, &md); err != nil {
			t.Fatalf("metadata %s: %v", m.Metadata, err)
		}
		for _, c := range strings.Fields(md.Payload.Claims) {
			claims[c]++
		}
	}
	for c, n := range claims {
		if n != 1 {
			t.Errorf("claim %s announced %d times", c, n)
		}
	}
	if len(claims) != len(cancelled) {
		t.Errorf("%d cancels announced, want %d\n%s", len(claims), len(cancelled), out.String())
	}
	if len(msgs) < 2 {
		t.Errorf("%d cancels in %d message(s), want a summary and its list", len(cancelled), len(msgs))
	}
	noSecrets(t, sb, sl, out.String())
}

// The booking API's clock runs 4 minutes ahead of bookbot's: a booking
// that has started there leaves the list while, here, it starts in 3
// minutes. The real binary judges it started by the API's clock, as the
// Date header of its answers tells it, and announces nothing; it warns
// that the clocks differ.
func TestRunAPIClockAheadAnnouncesNoStartedBookingAsCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	sb := bookingtest.NewServer(t)
	sl := slacktest.NewServer(t)
	e := noticesRun(sb, sl)

	soon := "consultation"
	id := sb.AddBooking(bookingtest.DemoOwner, bookingtest.Booking{
		EventType: &soon, Start: time.Now().Add(3 * time.Minute).Truncate(time.Second),
		BookerName: testutil.Ptr("Ada Lovelace"), BookerEmail: testutil.Ptr("ada@example.com"),
	})
	cmd, out := startRun(ctx, t, sl, e)
	out.waitCount(ctx, t, "notices: first read recorded", 1)
	stopRun(t, cmd, out)

	sb.SetNow(func() time.Time { return time.Now().Add(4 * time.Minute) })
	cmd, out = startRun(ctx, t, sl, e)
	out.waitCount(ctx, t, "notices: list read", 1)
	stopRun(t, cmd, out)
	if got := noticesIn(sl); len(got) != 0 {
		t.Fatalf("booking %s, started by the API's clock, was announced: %q", id, got[0].Text)
	}
	if !strings.Contains(out.String(), "booking API's clock differs") {
		t.Errorf("no warning that the booking API's clock differs:\n%s", out.String())
	}
}

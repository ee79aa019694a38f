package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
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
	if len(got) != len(want) {
		t.Fatalf("%d notices after the restart, want %d: %+v\n%s", len(got), len(want), got, out.String())
	}
	for _, m := range got {
		kind, _, _ := strings.Cut(m.Text, ":")
		if id, ok := want[kind]; !ok || !strings.Contains(m.Text, id) {
			t.Errorf("notice %q", m.Text)
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

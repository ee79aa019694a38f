package main

import (
	"context"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/internal/testutil"
	"github.com/bookbot/bookbot/notices"
)

// Leaders killed with SIGKILL while posting notices: the first while its
// post never reached Slack, the next while Slack did post but its answer
// was on the way. The last replica looks for both in the channel's history
// once their posts have surely ended (the replicas' clock is moved past
// SettleAfter rather than waited for): it posts the first and records the
// second. Each booking is announced once.
func TestReplicasNoticeOnceWhenLeadersDie(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	// A replica alone records the first read, and stops; the bookings made
	// after it are the changes of the first read of the three replicas
	// that follow (rather than of a read an interval later).
	clock, moved := newMovedClock(t)
	first, sb, sl := startReplicas(ctx, t, 1, "NOTIFY_CHANNEL=C0NOTES", "NOTIFY_INTERVAL=15s", moved)
	sl.AddChannel(slacktest.Channel{ID: "C0NOTES", Name: "bookings", Members: []string{sl.BotUserID()}})
	first[0].out.waitCount(ctx, t, "notices: first read recorded", 1)
	stopRun(t, first[0].cmd, first[0].out)

	slots := sb.Slots(bookingtest.DemoOwner, "consultation")
	lost, err := sb.BookAsAttendee(bookingtest.DemoOwner, "consultation", slots[0].Start, "Grace Hopper", "grace@example.com")
	if err != nil {
		t.Fatal(err)
	}
	answered, err := sb.BookAsAttendee(bookingtest.DemoOwner, "consultation", slots[3].Start, "Alan Turing", "alan@example.com")
	if err != nil {
		t.Fatal(err)
	}
	sl.StallNext("chat.postMessage", false) // the first leader's first notice never arrives
	sl.StallNext("chat.postMessage", true)  // the next leader's is posted, its answer lost
	var rs []replica
	var alive []int
	for i := range 3 {
		rs = append(rs, startReplica(t, first[0].env))
		alive = append(alive, i)
	}
	if _, err := sl.WaitLiveConnections(ctx, 3); err != nil {
		t.Fatalf("3 replicas did not connect: %v", err)
	}
	// kill kills the replica that leads, once its post is stalled, after
	// moving the clock ahead by ahead.
	kill := func(stalled int, ahead time.Duration) {
		t.Helper()
		if err := sl.WaitStalled(ctx, "chat.postMessage", stalled); err != nil {
			t.Fatalf("no notice posted: %v", err)
		}
		clock.advance(t, ahead)
		i := leaderOf(ctx, t, rs, alive)
		if err := rs[i].cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = rs[i].cmd.Wait()
		alive = slices.DeleteFunc(alive, func(j int) bool { return j == i })
	}
	kill(1, 0)
	// Both claims are made: the last replica to lead finds them old
	// enough to look for.
	kill(2, notices.SettleAfter)

	// Sooner than SettleAfter: the clock was moved, not waited for.
	last := alive[0]
	soon, cancelSoon := context.WithTimeout(ctx, notices.SettleAfter/2)
	defer cancelSoon()
	testutil.Until(soon, t, "both notices", func() bool {
		return len(noticesOf(sl, lost)) > 0 && len(noticesOf(sl, answered)) > 0
	})
	rs[last].out.waitCount(ctx, t, "notices: a notice whose post was cut short is in Slack", 1)
	stopRun(t, rs[last].cmd, rs[last].out)
	for _, id := range []string{lost, answered} {
		if got := noticesOf(sl, id); len(got) != 1 {
			t.Errorf("booking %s announced %d times, want once\n%s", id, len(got), rs[last].out.String())
		}
	}
}

// A leader killed with SIGKILL after claiming a reminder, while Slack
// posted it but its answer was on the way: the next leader does not send
// it again.
func TestReplicasRemindOnceWhenTheLeaderDies(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	rs, sb, sl := startReplicas(ctx, t, 2)
	id := meetingSoon(sb, "Grace Hopper")
	remind := func() {
		t.Helper()
		if _, err := sl.SendSlashCommand(ctx, slacktest.SlashCommand{Command: "/booking", Text: "remind 15m", UserID: ada}); err != nil {
			t.Fatal(err)
		}
	}
	first := leaderOf(ctx, t, rs, []int{0, 1})
	sl.StallNext("chat.postMessage", true)
	remind()
	if err := sl.WaitStalled(ctx, "chat.postMessage", 1); err != nil {
		t.Fatalf("no reminder sent: %v", err)
	}
	if err := rs[first].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = rs[first].cmd.Wait()

	// The next leader looks at once; a second `remind` wakes it again, so
	// the first look is over once the second begins.
	next := 1 - first
	rs[next].out.waitCount(ctx, t, "personal: looking", 1)
	remind()
	rs[next].out.waitCount(ctx, t, "personal: looking", 2)
	stopRun(t, rs[next].cmd, rs[next].out)
	got := messagesWhere(sl, func(m slacktest.Message) bool { return isReminder(m) && carries(m, "bookbot_reminder", id) })
	if len(got) != 1 {
		t.Errorf("%d reminders of booking %s, want 1\n%s", len(got), id, rs[next].out.String())
	}
}

// noticesOf are the notices posted of a booking.
func noticesOf(sl *slacktest.Server, id string) []slacktest.Message {
	return messagesWhere(sl, func(m slacktest.Message) bool {
		return m.Kind == "message" && m.Channel == "C0NOTES" && strings.HasPrefix(m.Text, "New booking") && carries(m, "bookbot_booking_new", id)
	})
}

package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/internal/testutil"
)

// The real binary across a restart: `remind 15m` for a meeting ten minutes
// away sends its reminder at once, and a restart does not send it again.
func TestRunRemindsOnceAcrossARestart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	sb := bookingtest.NewServer(t)
	sl := slacktest.NewServer(t)
	sl.AddUser(slacktest.User{ID: "UADA", Name: "ada", RealName: "Ada Lovelace", TZ: "Europe/Berlin"})
	id := meetingSoon(sb, "Grace <!here> Hopper")
	e := env(sb, sl, "LOG_LEVEL=debug", "LOG_FORMAT=text")

	cmd, out := startRun(ctx, t, sl, e)
	if _, err := sl.SendSlashCommand(ctx, slacktest.SlashCommand{Command: "/booking", Text: "remind 15m", UserID: "UADA"}); err != nil {
		t.Fatal(err)
	}
	m, err := sl.WaitMessage(ctx, isReminder)
	if err != nil {
		t.Fatalf("no reminder: %v\n%s", err, out.String())
	}
	if !carries(m, "bookbot_reminder", id) || strings.Contains(m.Text, id) || m.Channel != "UADA" && m.Channel != sl.DMChannel("UADA") || strings.Contains(m.Text+string(m.Blocks), "<!here>") {
		t.Errorf("reminder %q to %s:\n%s", m.Text, m.Channel, m.Blocks)
	}
	stopRun(t, cmd, out)

	cmd, out = startRun(ctx, t, sl, e)
	out.waitCount(ctx, t, "personal: looking", 1)
	stopRun(t, cmd, out)
	if got := messagesWhere(sl, isReminder); len(got) != 1 {
		t.Errorf("%d reminders after a restart, want 1", len(got))
	}
	noSecrets(t, sb, sl, out.String())
}

// isReminder is a reminder's direct message (not the reply to `remind`).
func isReminder(m slacktest.Message) bool {
	return m.Kind == "message" && strings.HasPrefix(m.Text, "Reminder:")
}

// meetingSoon adds an intro call with name ten minutes from now, so
// `remind 15m` is due at once, and returns its ID.
func meetingSoon(sb *bookingtest.Server, name string) string {
	slug := "intro-call"
	return sb.AddBooking(bookingtest.DemoOwner, bookingtest.Booking{
		EventType: &slug, Start: time.Now().Add(10 * time.Minute).Truncate(time.Minute),
		BookerName: testutil.Ptr(name), BookerEmail: testutil.Ptr("grace@example.com"),
	})
}

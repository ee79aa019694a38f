package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/internal/testutil"
)

// The real binary across a restart: a booking its attendee moved while
// bookbot was down is listed with event_type null from then on, as the
// service lists it. The bookbot started again still names its event type
// in the list, App Home, the reminder, the agenda and the digest, from
// what the one before kept in the state.
func TestRunNamesTheEventTypeOfAMovedBookingAfterARestart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	sb := bookingtest.NewServer(t)
	sl := slacktest.NewServer(t)
	sl.AddUser(slacktest.User{ID: "UADA", Name: "ada", RealName: "Ada Lovelace", TZ: "Europe/Berlin"})
	clock, moved := newMovedClock(t)
	e := env(sb, sl, moved, "LOG_LEVEL=debug", "LOG_FORMAT=text")

	// Grace's consultation is the calendar's one booking, so that every
	// view shows it.
	for _, b := range sb.Bookings(bookingtest.DemoOwner) {
		if !b.Cancelled && b.Start.After(time.Now()) {
			if err := sb.CancelAsAttendee(b.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	var later []time.Time
	for _, s := range sb.Slots(bookingtest.DemoOwner, "consultation") {
		if s.Start.After(time.Now().Add(2 * time.Hour)) {
			later = append(later, s.Start)
		}
	}
	if len(later) < 2 {
		t.Fatalf("%d consultation slots more than two hours ahead", len(later))
	}
	id, err := sb.BookAsAttendee(bookingtest.DemoOwner, "consultation", later[0], "Grace Hopper", "grace@example.com")
	if err != nil {
		t.Fatal(err)
	}

	cmd, out := startRun(ctx, t, sl, e)
	named(t, "the list before the move", slashAs(ctx, t, sl, out, "UADA", "list", "Grace Hopper").Blocks, "Grace Hopper")
	stopRun(t, cmd, out)

	to := later[len(later)-1]
	if err := sb.MoveAsAttendee(id, to); err != nil {
		t.Fatal(err)
	}
	for _, b := range sb.Bookings(bookingtest.DemoOwner) {
		if b.ID == id && (!b.Start.Equal(to) || !b.Rescheduled) {
			t.Fatalf("the sandbox holds the moved booking as %+v", b)
		}
	}

	// bookbot starts again ten minutes before the moved booking, on its
	// clock: its reminder and an agenda at that time are due at once.
	clock.advance(t, time.Until(to.Add(-10*time.Minute)))
	cmd, out = startRun(ctx, t, sl, e)
	named(t, "the list", slashAs(ctx, t, sl, out, "UADA", "list", "Grace Hopper").Blocks, "Grace Hopper")

	if _, err := sl.OpenAppHome(ctx, "UADA"); err != nil {
		t.Fatal(err)
	}
	home, err := sl.WaitView(ctx, func(v slacktest.View) bool {
		return v.Type == "home" && v.TriggerUser == "UADA" && strings.Contains(string(v.Blocks), "Grace Hopper")
	})
	if err != nil {
		t.Fatalf("no App Home showing the booking: %v\n%s", err, out.String())
	}
	named(t, "App Home", home.Blocks, "Grace Hopper")

	slashAs(ctx, t, sl, out, "UADA", "remind 10m", "10 minutes")
	reminder, err := sl.WaitMessage(ctx, isReminder)
	if err != nil {
		t.Fatalf("no reminder: %v\n%s", err, out.String())
	}
	if !strings.HasPrefix(reminder.Text, "Reminder: Consultation at") || !carries(reminder, "bookbot_reminder", id) {
		t.Errorf("reminder %q, want one of the consultation", reminder.Text)
	}

	berlin := testutil.Zone("Europe/Berlin")
	slashAs(ctx, t, sl, out, "UADA", "agenda "+to.Add(-10*time.Minute).In(berlin).Format("15:04"), "agenda")
	agenda, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Kind == "message" && strings.HasPrefix(m.Text, "Agenda for")
	})
	if err != nil {
		t.Fatalf("no agenda: %v\n%s", err, out.String())
	}
	named(t, "the agenda", agenda.Blocks, "Grace Hopper")
	stopRun(t, cmd, out)

	dry := exec.CommandContext(ctx, binary, "digest", "-dry-run", "-date", to.In(berlin).Format(time.DateOnly))
	dry.Env = e
	var stdout, stderr bytes.Buffer
	dry.Stdout, dry.Stderr = &stdout, &stderr
	if err := dry.Run(); err != nil {
		t.Fatalf("digest -dry-run: %v\n%s", err, stderr.String())
	}
	var line string
	for l := range strings.Lines(stdout.String()) {
		if strings.Contains(l, "Grace Hopper") {
			line = l
		}
	}
	if !strings.Contains(line, "Consultation") {
		t.Errorf("the digest shows Grace's booking as %q, want it named a consultation:\n%s", line, stdout.String())
	}
	noSecrets(t, sb, sl, out.String(), stderr.String())
}

// named fails unless the line of blocks' text that shows the booking, by
// its attendee who, names its event type, Consultation.
func named(t *testing.T, what string, blocks json.RawMessage, who string) {
	t.Helper()
	var texts []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if s, ok := v["text"].(string); ok {
				texts = append(texts, s)
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
	var all any
	if err := json.Unmarshal(blocks, &all); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	walk(all)
	for _, s := range texts {
		for l := range strings.Lines(s) {
			if strings.Contains(l, who) {
				if !strings.Contains(l, "Consultation") {
					t.Errorf("%s shows the booking as %q, without its event type", what, l)
				}
				return
			}
		}
	}
	t.Errorf("%s does not show %s's booking:\n%s", what, who, blocks)
}

package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
)

// The real binary, as automation reads it: a booking's notice, its move
// and its cancel, a reminder and a booked offer card carry the booking in
// Slack's message metadata, which conversations.history and
// conversations.replies return with include_all_metadata: the contract's
// event type for each, and the booking's ID. Their fallback texts begin as
// the contract has them, and show no ID.
func TestRunMessageMetadata(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	sb := bookingtest.NewServer(t)
	sl := slacktest.NewServer(t)
	sl.AddUser(slacktest.User{ID: "UADA", Name: "ada", RealName: "Ada Lovelace", TZ: "Europe/Berlin"})
	sl.AddUser(slacktest.User{ID: "UGRACE", Name: "grace", RealName: "Grace Hopper", TZ: "America/New_York", Email: "grace@example.com"})
	sl.AddChannel(slacktest.Channel{ID: "C0TEAM", Name: "team", Members: []string{"UADA", "UGRACE", sl.BotUserID()}})
	e := noticesRun(sb, sl)
	api := slack.New(sl.BotToken(), slack.OptionAPIURL(sl.APIURL))
	read := func(channel string) []slack.Message {
		t.Helper()
		h, err := api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: channel, IncludeAllMetadata: true})
		if err != nil {
			t.Fatalf("conversations.history of %s: %v", channel, err)
		}
		return h.Messages
	}
	check := func(what string, m slack.Message, event, id, begins string) {
		t.Helper()
		if m.Metadata.EventType != event || m.Metadata.EventPayload["booking_id"] != id {
			t.Errorf("%s: metadata %+v, want %s with booking_id %s", what, m.Metadata, event, id)
		}
		if !strings.HasPrefix(m.Text, begins) || strings.Contains(m.Text, id) {
			t.Errorf("%s: fallback text %q, want it to begin %q and show no ID", what, m.Text, begins)
		}
	}
	restart := func() {
		t.Helper()
		cmd, out := startRun(ctx, t, sl, e)
		out.waitCount(ctx, t, "notices: list read", 1)
		stopRun(t, cmd, out)
		noSecrets(t, sb, sl, out.String())
	}

	cmd, out := startRun(ctx, t, sl, e)
	out.waitCount(ctx, t, "notices: first read recorded", 1)
	stopRun(t, cmd, out)

	// A booking, moved, then cancelled on the booking page, each read at
	// the next start.
	slots := sb.Slots(bookingtest.DemoOwner, "consultation")
	id, err := sb.BookAsAttendee(bookingtest.DemoOwner, "consultation", slots[0].Start, "Grace Hopper", "grace@example.com")
	if err != nil {
		t.Fatal(err)
	}
	restart()
	if err := sb.MoveAsAttendee(id, slots[3].Start); err != nil {
		t.Fatal(err)
	}
	restart()
	if err := sb.CancelAsAttendee(id); err != nil {
		t.Fatal(err)
	}
	restart()
	var top []slack.Message // the replies near in time are in the channel too
	for _, m := range read("C0NOTES") {
		if m.SubType != "thread_broadcast" {
			top = append(top, m)
		}
	}
	if len(top) != 1 {
		t.Fatalf("%d messages in the notice channel, want the booking's notice: %+v", len(top), top)
	}
	// The first notice, updated in place, says what the booking is now.
	check("the first notice", top[0], "bookbot_booking_cancelled", id, "Cancelled")
	thread, _, _, err := api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: "C0NOTES", Timestamp: top[0].Timestamp, IncludeAllMetadata: true})
	if err != nil || len(thread) != 3 {
		t.Fatalf("the notice's thread: %v, %d messages, want it and two replies", err, len(thread))
	}
	check("the move's reply", thread[1], "bookbot_booking_moved", id, "Moved")
	if thread[1].Metadata.EventPayload["was_start"] != slots[0].Start.UTC().Format(time.RFC3339) {
		t.Errorf("the move's reply does not say when it was: %+v", thread[1].Metadata)
	}
	check("the cancel's reply", thread[2], "bookbot_booking_cancelled", id, "Cancelled")

	// A reminder, and an offer booked from its card, in one run.
	soon := meetingSoon(sb, "Alan Turing")
	cmd, out = startRun(ctx, t, sl, e)
	if _, err := sl.SendSlashCommand(ctx, slacktest.SlashCommand{Command: "/booking", Text: "remind 15m", UserID: "UADA"}); err != nil {
		t.Fatal(err)
	}
	if _, err := sl.WaitMessage(ctx, isReminder); err != nil {
		t.Fatalf("no reminder: %v\n%s", err, out.String())
	}
	var reminder *slack.Message
	for _, m := range read(sl.DMChannel("UADA")) {
		if strings.HasPrefix(m.Text, "Reminder") {
			reminder = &m
		}
	}
	if reminder == nil {
		t.Fatal("no reminder in Ada's DMs")
	}
	check("the reminder", *reminder, "bookbot_reminder", soon, "Reminder")

	w := offerWorld{ctx: ctx, t: t, sl: sl, out: out}
	card := w.offer("intro-call <@UGRACE|grace>")
	w.click("UGRACE", card, "offer_slot", offerButtons(card, "offer_slot")[0])
	if _, err := sl.SubmitInputs(ctx, "UGRACE", w.form("UGRACE", "").ID, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	w.card(card, "Booked")
	stopRun(t, cmd, out)
	var booked *slack.Message
	for _, m := range read("C0TEAM") {
		if m.Timestamp == card.TS {
			booked = &m
		}
	}
	if booked == nil {
		t.Fatal("the card is not in the channel's history")
	}
	var fromCard string // Grace's booking, not the reminder's meeting, which has her address too
	for _, b := range sb.Bookings(bookingtest.DemoOwner) {
		if b.BookerEmail != nil && *b.BookerEmail == "grace@example.com" && !b.Cancelled && b.ID != soon {
			fromCard = b.ID
		}
	}
	check("the booked card", *booked, "bookbot_offer_booked", fromCard, "Booked")
	if booked.Metadata.EventPayload["booked_by"] != "UGRACE" {
		t.Errorf("the booked card does not say who booked it: %+v", booked.Metadata)
	}
	noSecrets(t, sb, sl, out.String())
}

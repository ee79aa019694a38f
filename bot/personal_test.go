package bot_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/internal/testutil"
	"github.com/bookbot/bookbot/personal"
	"github.com/bookbot/bookbot/store/bolt"
)

// newPersonalHarness is the harness with reminders and agendas kept in a
// real store of their own.
func newPersonalHarness(t *testing.T) (*harness, *bolt.Personal) {
	t.Helper()
	db, err := bolt.Open(t.TempDir(), bolt.Options{Beside: true})
	if err != nil {
		t.Fatal(err)
	}
	store := db.Personal()
	h := newHarness(t, func(_ *harness, c *bot.Config) { c.Personal = store })
	return h, store
}

func settingsOf(t *testing.T, store personal.Store, user string) personal.Settings {
	t.Helper()
	s, _, err := store.Settings(t.Context(), user)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// command runs the slash command as user, waits for its work, and returns
// the last reply they got.
func (h *harness) command(user, text string) slacktest.Message {
	h.t.Helper()
	if ack := h.slash(user, text); len(ack.Payload) > 0 && string(ack.Payload) != "null" {
		h.t.Fatalf("/booking %s was answered in the ack: %s", text, ack.Payload)
	}
	h.drain()
	return h.lastReply(user)
}

// lastReply is the last response_url message to user.
func (h *harness) lastReply(user string) slacktest.Message {
	h.t.Helper()
	var last *slacktest.Message
	for _, m := range h.sl.Messages() {
		if m.Kind == "response_url" && m.User == user {
			last = &m
		}
	}
	if last == nil {
		h.t.Fatalf("no reply to %s", user)
	}
	if last.ResponseType != "ephemeral" {
		h.t.Errorf("reply %q is %q, want ephemeral", clipText(last.Text, 60), last.ResponseType)
	}
	return *last
}

// The first upcoming booking at t0: Tue 24 Mar, 09:00 in Berlin.
const firstBooking = "5eed0000-0000-4000-8000-000000000001"

// `remind` and `agenda` save each setting in the store, keeping the other,
// and say what was set in the person's own zone by name.
func TestRemindAndAgendaCommands(t *testing.T) {
	t.Parallel()
	h, store := newPersonalHarness(t)

	r := h.command(ada, "remind 15m")
	text := textOf(r.Blocks)
	for _, want := range []string{"Reminders on.", "15 minutes before each booking", "Next reminder: Tue 24 Mar, 08:45 CET, for Intro call · Ada Lovelace", "Europe/Berlin — your Slack time zone"} {
		if !strings.Contains(text, want) {
			t.Errorf("the reply lacks %q:\n%s", want, text)
		}
	}
	if len(elements(r.Blocks, "personal_settings")) != 1 || len(elements(r.Blocks, "remind_off")) != 1 {
		t.Errorf("the reply lacks Change… or Stop reminders:\n%s", text)
	}
	if s := settingsOf(t, store, ada); s.Remind != 15*time.Minute || s.Agenda != nil || !s.Updated.Equal(t0) {
		t.Errorf("saved %+v, want 15m, no agenda, updated at t0", s)
	}

	r = h.command(ada, "agenda 08:00 weekdays")
	text = textOf(r.Blocks)
	for _, want := range []string{"Agenda on:", "every weekday (Monday to Friday) at 08:00 in Europe/Berlin — your Slack time zone; bookbot follows it if you change it", "Next agenda: Tue 24 Mar"} {
		if !strings.Contains(text, want) {
			t.Errorf("the reply lacks %q:\n%s", want, text)
		}
	}
	nextAgenda(t, r.Blocks, time.Date(2026, 3, 24, 8, 0, 0, 0, berlin))
	if s := settingsOf(t, store, ada); s.Remind != 15*time.Minute || s.Agenda == nil || *s.Agenda != (personal.Agenda{Minute: 8 * 60, Weekdays: true}) {
		t.Errorf("saved %+v, want 15m and 08:00 on weekdays", s)
	}

	// Bob is in New York: his agenda is at 07:30 his time.
	r = h.command(bob, "agenda 7:30am")
	if text := textOf(r.Blocks); !strings.Contains(text, "every day at 07:30 in America/New_York — your Slack time zone") || !strings.Contains(text, "Next agenda: Mon 23 Mar") {
		t.Errorf("Bob's agenda reply:\n%s", text)
	}
	nextAgenda(t, r.Blocks, time.Date(2026, 3, 23, 7, 30, 0, 0, testutil.Zone("America/New_York")))

	r = h.command(ada, "remind")
	if text := textOf(r.Blocks); !strings.Contains(text, "Reminders:* a direct message 15 minutes") || !strings.Contains(text, "Next reminder: Tue 24 Mar, 08:45 CET") {
		t.Errorf("`remind` does not show the setting and the next reminder:\n%s", text)
	}
	r = h.command(ada, "agenda")
	if text := textOf(r.Blocks); !strings.Contains(text, "Agenda:* every weekday (Monday to Friday) at 08:00 in Europe/Berlin") || !strings.Contains(text, "Next agenda: Tue 24 Mar") {
		t.Errorf("`agenda` does not show the setting and the next agenda:\n%s", text)
	}
	nextAgenda(t, r.Blocks, time.Date(2026, 3, 24, 8, 0, 0, 0, berlin))

	r = h.command(ada, "remind off")
	if text := textOf(r.Blocks); !strings.Contains(text, "Reminders off.") {
		t.Errorf("`remind off`:\n%s", text)
	}
	if s := settingsOf(t, store, ada); s.Remind != 0 || s.Agenda == nil {
		t.Errorf("after remind off: %+v, want the agenda kept", s)
	}
	r = h.command(ada, "agenda off")
	if text := textOf(r.Blocks); !strings.Contains(text, "Agenda off.") {
		t.Errorf("`agenda off`:\n%s", text)
	}
	if s := settingsOf(t, store, ada); !s.Off() {
		t.Errorf("after agenda off: %+v, want everything off", s)
	}
}

// Every form the help promises is read, and nothing else.
func TestRemindAndAgendaForms(t *testing.T) {
	t.Parallel()
	h, store := newPersonalHarness(t)
	for _, tc := range []struct {
		text string
		want time.Duration
	}{
		{"remind 15m", 15 * time.Minute},
		{"remind 1h", time.Hour},
		{"remind 90m", 90 * time.Minute},
		{"remind 1h30m", 90 * time.Minute},
		{"remind 1m", time.Minute},
		{"remind 24h", 24 * time.Hour},
		{"remind 10 min", 10 * time.Minute},
		{"remind 2 hours", 2 * time.Hour},
		{"remind 1 day", 24 * time.Hour},
	} {
		h.command(ada, tc.text)
		if got := settingsOf(t, store, ada).Remind; got != tc.want {
			t.Errorf("%s saved %v, want %v", tc.text, got, tc.want)
		}
	}
	for _, tc := range []struct {
		text string
		want personal.Agenda
	}{
		{"agenda 08:00", personal.Agenda{Minute: 480}},
		{"agenda 8:00", personal.Agenda{Minute: 480}},
		{"agenda 8am", personal.Agenda{Minute: 480}},
		{"agenda 8 am weekdays", personal.Agenda{Minute: 480, Weekdays: true}},
		{"agenda 8:30pm", personal.Agenda{Minute: 20*60 + 30}},
		{"agenda 12am", personal.Agenda{Minute: 0}},
		{"agenda 12:15pm", personal.Agenda{Minute: 12*60 + 15}},
		{"agenda 23:59 WEEKDAYS", personal.Agenda{Minute: 23*60 + 59, Weekdays: true}},
	} {
		h.command(ada, tc.text)
		if got := settingsOf(t, store, ada).Agenda; got == nil || *got != tc.want {
			t.Errorf("%s saved %+v, want %+v", tc.text, got, tc.want)
		}
	}
}

// Arguments bookbot cannot read are explained at once, with an example and
// the help, and change nothing.
func TestRemindAndAgendaBadArguments(t *testing.T) {
	t.Parallel()
	h, store := newPersonalHarness(t)
	h.command(ada, "remind 15m")
	h.command(ada, "agenda 08:00")
	before := settingsOf(t, store, ada)
	for _, tc := range []struct{ text, want string }{
		{"remind soon", "`/booking remind 15m`"},
		{"remind 15", "`/booking remind 15m`"},
		{"remind 2 weeks", "`/booking remind 15m`"},
		{"remind 30s", "from 1 minute to 24 hours"},
		{"remind 25h", "from 1 minute to 24 hours"},
		{"remind -5m", "from 1 minute to 24 hours"},
		{"remind <!channel>", "`&lt;!channel&gt;`"},
		{"agenda 25:00", "`/booking agenda 08:00`"},
		{"agenda 8", "`/booking agenda 08:00`"},
		{"agenda 8:5", "`/booking agenda 08:00`"},
		{"agenda 13pm", "`/booking agenda 08:00`"},
		{"agenda noon", "`/booking agenda 08:00`"},
		{"agenda 08:00 mondays", "after the time"},
		{"agenda off please", "`/booking agenda 08:00`"},
	} {
		e := parseEphemeral(t, h.slash(ada, tc.text))
		text := textOf(e.Blocks)
		if e.ResponseType != "ephemeral" || !strings.Contains(text, tc.want) || !strings.Contains(text, "`/booking types`") {
			t.Errorf("%s was answered %q:\n%s", tc.text, e.ResponseType, text)
		}
		if strings.Contains(text, "<!channel>") {
			t.Errorf("%s: the answer holds the mention unescaped", tc.text)
		}
	}
	h.drain()
	if after := settingsOf(t, store, ada); after.Remind != before.Remind || *after.Agenda != *before.Agenda || !after.Updated.Equal(before.Updated) {
		t.Errorf("bad arguments changed the settings: %+v, then %+v", before, after)
	}
}

// Without a store, the personal commands say they are not set up, and
// App Home offers nothing to change.
func TestPersonalNotSetUp(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, text := range []string{"remind 15m", "remind", "agenda 08:00", "agenda off"} {
		e := parseEphemeral(t, h.slash(ada, text))
		if !strings.Contains(textOf(e.Blocks), "not set up on this bookbot") {
			t.Errorf("%s: %s", text, textOf(e.Blocks))
		}
	}
	if _, err := h.sl.OpenAppHome(h.ctx(), ada); err != nil {
		t.Fatal(err)
	}
	home := h.waitView("Ada's home", func(v slacktest.View) bool { return v.Type == "home" && v.TriggerUser == ada })
	if len(elements(home.Blocks, "personal_settings")) != 0 || strings.Contains(textOf(home.Blocks), "reminders and agenda") {
		t.Errorf("App Home offers settings bookbot cannot keep:\n%s", textOf(home.Blocks))
	}
	// `today` needs no store.
	if r := h.command(ada, "today"); !strings.Contains(textOf(r.Blocks), "No bookings today.") {
		t.Errorf("today: %s", textOf(r.Blocks))
	}
}

// People not allowed are refused before anything is saved.
func TestRemindRefusesPeopleNotAllowed(t *testing.T) {
	t.Parallel()
	h, store := newPersonalHarness(t)
	e := parseEphemeral(t, h.slash(eve, "remind 15m"))
	if !strings.Contains(textOf(e.Blocks), "not on that list") {
		t.Errorf("eve was not refused: %s", textOf(e.Blocks))
	}
	h.drain()
	if _, ok, _ := store.Settings(t.Context(), eve); ok {
		t.Error("eve's settings were saved")
	}
}

// `today` lists the bookings of the asker's own day, from their midnight
// to the next.
func TestTodayCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t)

	// Monday at t0: nothing booked in Berlin.
	r := h.command(ada, "today")
	if text := textOf(r.Blocks); !strings.Contains(text, "No bookings today.") || !strings.Contains(text, "Today, Mon 23 Mar") {
		t.Errorf("Ada's empty day:\n%s", text)
	}
	if r.Text != "No bookings today." {
		t.Errorf("notification text %q", r.Text)
	}

	// One booked this afternoon, with a hostile name.
	id := h.sb.AddBooking(bookingtest.DemoOwner, bookingtest.Booking{
		EventType: testutil.Ptr("consultation"), Start: time.Date(2026, 3, 23, 14, 0, 0, 0, time.UTC),
		BookerName: testutil.Ptr("<!channel> Eve & *co*"), BookerEmail: testutil.Ptr("eve@example.com"),
	})
	r = h.command(ada, "today")
	text := textOf(r.Blocks)
	for _, want := range []string{"Today, Mon 23 Mar", "15:00–15:30 CET  Consultation · &lt;!channel&gt; Eve &amp; *co*", "1 booking"} {
		if !strings.Contains(text, want) {
			t.Errorf("today lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "eve@example.com") || strings.Contains(text, "Ada Lovelace") || strings.Contains(text, id) {
		t.Errorf("today shows an email, an ID or tomorrow's booking:\n%s", text)
	}

	// Half an hour later it is Tuesday in Auckland: this afternoon in
	// Berlin is Kiri's early morning, Tuesday's 09:00 and 10:30 her
	// evening, and 14:00 her Wednesday.
	h.clock.Set(time.Date(2026, 3, 23, 11, 30, 0, 0, time.UTC))
	r = h.command(kiw, "today")
	text = textOf(r.Blocks)
	for _, want := range []string{"Today, Tue 24 Mar", "3 bookings", "Pacific/Auckland", "03:00–03:30 NZDT  Consultation", "21:00–21:15 NZDT  Intro call · Ada Lovelace", "22:30–23:00 NZDT  Consultation · Grace Hopper"} {
		if !strings.Contains(text, want) {
			t.Errorf("Kiri's today lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "5eed0000-0000-4000-8000-000000000003") {
		t.Errorf("Kiri's today shows Wednesday's booking:\n%s", text)
	}
}

// A day with more bookings than the API lists shows the first of them,
// says how many more the list has, and that there may be others after
// them, in numbers that add up; the rest are a press away.
func TestTodayFullList(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for i := range booking.MaxListed {
		h.sb.AddBooking(bookingtest.DemoOwner, bookingtest.Booking{
			EventType: testutil.Ptr("intro-call"), Start: time.Date(2026, 3, 23, 11, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute),
			BookerName: testutil.Ptr("Busy"), BookerEmail: testutil.Ptr("busy@example.com"),
		})
	}
	r := h.command(ada, "today")
	text := textOf(r.Blocks)
	if !strings.Contains(text, "*85 more*, the last at 13:39 CET, and perhaps others after them: the booking service shows bookbot only the next 100 bookings.") ||
		strings.Count(text, "Intro call · Busy") != 15 {
		t.Errorf("not the first 15, and the 85 more there may be more after:\n%s", clipText(text, 2000))
	}
	if rest := elements(r.Blocks, "list_from"); len(rest) != 1 || str(rest[0], "value") != "1" {
		t.Fatalf("Show the rest: %v, want the list's second page", rest)
	}
	h.interact(slacktest.BlockAction(ada, "list_from", "1", slacktest.InMessage(r)))
	page := h.reply(ada, "16–30 of 100")
	if page.ReplaceOriginal || !strings.Contains(textOf(page.Blocks), "Upcoming bookings (first 100)") {
		t.Errorf("Show the rest: %s", clipText(textOf(page.Blocks), 600))
	}
	if n := blockCount(r.Blocks); n > 50 {
		t.Errorf("%d blocks", n)
	}
}

// The settings modal opens from App Home with the person's settings,
// saves what is submitted, and App Home shows it.
func TestSettingsModalRoundTrip(t *testing.T) {
	t.Parallel()
	h, store := newPersonalHarness(t)
	h.command(ada, "remind 45m") // not one of the modal's own choices

	if _, err := h.sl.OpenAppHome(h.ctx(), ada); err != nil {
		t.Fatal(err)
	}
	home := h.waitView("Ada's desk", func(v slacktest.View) bool {
		return v.Type == "home" && v.TriggerUser == ada && strings.Contains(textOf(v.Blocks), "45 minutes")
	})
	h.interact(slacktest.BlockAction(ada, "personal_settings", "", slacktest.InView(home)))
	modal := h.waitView("the settings modal", func(v slacktest.View) bool {
		return v.Type == "modal" && v.CallbackID == "personal_settings" && v.TriggerUser == ada
	})
	if !strings.Contains(textOf(modal.Blocks), "Europe/Berlin") {
		t.Errorf("the modal does not name the zone:\n%s", textOf(modal.Blocks))
	}
	lead := elements(modal.Blocks, "remind_lead")
	if len(lead) != 1 {
		t.Fatalf("no reminder select:\n%s", modal.Blocks)
	}
	var values []string
	for _, o := range options(lead[0]) {
		values = append(values, o.value)
	}
	if want := "off 5m0s 10m0s 15m0s 30m0s 45m0s 1h0m0s 2h0m0s 24h0m0s"; strings.Join(values, " ") != want {
		t.Errorf("reminder options %v, want %s", values, want)
	}
	if init, _ := lead[0]["initial_option"].(map[string]any); str(init, "value") != "45m0s" {
		t.Errorf("the reminder select starts at %v, want 45m0s", init)
	}
	if n := len(options(elements(modal.Blocks, "agenda_time")[0])); n != 49 {
		t.Errorf("%d agenda times, want Off and every half hour", n)
	}

	ack := h.submit(ada, modal.ID, map[string]string{"remind_lead": "30m0s", "agenda_time": "07:30", "agenda_days": "weekdays"})
	if len(ack.Payload) > 0 && string(ack.Payload) != "null" {
		t.Fatalf("the submission was answered %s, want the modal closed", ack.Payload)
	}
	h.drain()
	if v, _ := h.sl.View(modal.ID); !v.Closed {
		t.Error("the modal is still open")
	}
	s := settingsOf(t, store, ada)
	if s.Remind != 30*time.Minute || s.Agenda == nil || *s.Agenda != (personal.Agenda{Minute: 7*60 + 30, Weekdays: true}) || !s.Updated.Equal(t0) {
		t.Errorf("saved %+v", s)
	}
	home, _ = h.sl.View(home.ID)
	if text := textOf(home.Blocks); !strings.Contains(text, "30 minutes before each booking") || !strings.Contains(text, "every weekday (Monday to Friday) at 07:30") {
		t.Errorf("App Home was not refreshed:\n%s", text)
	}

	// Off and off, from the modal opened in a reply.
	r := h.command(ada, "agenda")
	h.interact(slacktest.BlockAction(ada, "personal_settings", "", slacktest.InMessage(r)))
	modal = h.waitView("the settings modal again", func(v slacktest.View) bool {
		return v.Type == "modal" && v.CallbackID == "personal_settings" && v.ID != modal.ID
	})
	h.submit(ada, modal.ID, map[string]string{"remind_lead": "off", "agenda_time": "off", "agenda_days": ""})
	h.drain()
	if s := settingsOf(t, store, ada); !s.Off() {
		t.Errorf("saved %+v, want everything off", s)
	}
}

// App Home is the person's desk: what to do first, then their bookings,
// then their reminders and agenda with a way to change them.
func TestAppHomeDesk(t *testing.T) {
	t.Parallel()
	h, _ := newPersonalHarness(t)
	h.command(ada, "remind 15m")
	h.command(ada, "agenda 08:00 weekdays")
	if _, err := h.sl.OpenAppHome(h.ctx(), ada); err != nil {
		t.Fatal(err)
	}
	home := h.waitView("Ada's desk", func(v slacktest.View) bool { return v.Type == "home" && v.TriggerUser == ada })
	text := textOf(home.Blocks)
	actions, bookings, desk := strings.Index(text, "New booking"), strings.Index(text, "Intro call · Ada Lovelace"), strings.Index(text, "Your reminders and agenda")
	if bookings < 0 || desk < 0 || actions < 0 || actions > bookings || bookings > desk {
		t.Errorf("the desk is not actions, bookings, settings:\n%s", text)
	}
	// App Home names its days in bookbot's words, as its headings do.
	for _, want := range []string{"15 minutes before each booking", "every weekday (Monday to Friday) at 08:00 in Europe/Berlin", "Next reminder: tomorrow at 08:45 CET", "Next agenda: tomorrow"} {
		if !strings.Contains(text, want) {
			t.Errorf("the desk lacks %q:\n%s", want, text)
		}
	}
	if len(elements(home.Blocks, "personal_settings")) != 1 || len(elements(home.Blocks, "new_booking")) != 1 || len(elements(home.Blocks, "home_refresh")) != 1 {
		t.Errorf("the desk lacks Change…, New booking or Refresh")
	}
}

// hostileBooking adds a booking whose names try to ping everyone, and
// returns it as bookbot's booking client lists it.
func hostileBooking(t *testing.T, h *harness) booking.Booking {
	t.Helper()
	id := h.sb.AddBooking(bookingtest.DemoOwner, bookingtest.Booking{
		EventType: testutil.Ptr("consultation"), Start: time.Date(2026, 3, 23, 14, 0, 0, 0, time.UTC),
		BookerName: testutil.Ptr("<!channel> Eve & *co*"), BookerEmail: testutil.Ptr("eve@example.com"),
	})
	list, err := h.client.Bookings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range list {
		if b.ID == id {
			return b
		}
	}
	t.Fatalf("%s is not listed", id)
	return booking.Booking{}
}

// A reminder is a DM whose notification begins with "Reminder", whose
// metadata carries the booking's ID and which people read no ID in; its
// cancel asks first, and Reminder settings… opens the settings.
func TestSendReminder(t *testing.T) {
	t.Parallel()
	h, store := newPersonalHarness(t)
	h.command(ada, "remind 15m")
	h.command(ada, "agenda 08:00")
	bk := hostileBooking(t, h)
	h.clock.Set(bk.Start.Add(-15 * time.Minute))

	due := personal.Due{Kind: personal.Reminder, User: ada, Key: personal.ReminderKey(ada, bk.ID, bk.Start), At: bk.Start.Add(-15 * time.Minute), Booking: bk}
	if err := h.bot.SendReminder(t.Context(), due, berlin); err != nil {
		t.Fatal(err)
	}
	dm := h.dm(ada, "Reminder")
	want := "Reminder: Consultation at Mon 23 Mar, 15:00 CET with &lt;!channel&gt; Eve &amp; *co*"
	if dm.Text != want {
		t.Errorf("notification text %q, want %q", dm.Text, want)
	}
	text := textOf(dm.Blocks)
	for _, w := range []string{"*Reminder*: Consultation starts in 15 minutes.", "Mon 23 Mar, 15:00–15:30 CET", "With &lt;!channel&gt; Eve &amp; *co*"} {
		if !strings.Contains(text, w) {
			t.Errorf("the reminder lacks %q:\n%s", w, text)
		}
	}
	if strings.Contains(text, bk.ID) {
		t.Errorf("the reminder shows the booking's ID:\n%s", text)
	}
	var meta struct {
		EventType    string         `json:"event_type"`
		EventPayload map[string]any `json:"event_payload"`
	}
	if err := json.Unmarshal(dm.Metadata, &meta); err != nil || meta.EventType != "bookbot_reminder" || meta.EventPayload["booking_id"] != bk.ID ||
		meta.EventPayload["start"] != bk.Start.UTC().Format(time.RFC3339) || meta.EventPayload["event_slug"] != "consultation" {
		t.Errorf("the reminder's metadata %s, want bookbot_reminder with the booking", dm.Metadata)
	}
	if strings.Contains(text+dm.Text, "<!channel>") || strings.Contains(text, "eve@example.com") {
		t.Errorf("the reminder pings or shows the email:\n%s", text)
	}
	cancel := elements(dm.Blocks, "cancel_booking")
	// Cancel is in the card's menu, behind Slack's dialog: not a button
	// beside the next step.
	if len(cancel) != 1 || str(cancel[0], "type") != "overflow" || cancel[0]["confirm"] == nil {
		t.Errorf("the cancel control is not a menu behind a confirmation: %v", cancel)
	} else if menu := options(cancel[0]); len(menu) != 1 || menu[0].value != bk.ID {
		t.Errorf("the cancel menu %v, want one item cancelling %s", menu, bk.ID)
	}
	if len(elements(dm.Blocks, "show_list")) != 1 || len(elements(dm.Blocks, "personal_settings")) != 1 || len(elements(dm.Blocks, "remind_off")) != 0 {
		t.Error("the reminder lacks Upcoming bookings or Reminder settings…, or stops all reminders at one press")
	}

	// Late: said so.
	due.Late = true
	h.clock.Set(bk.Start.Add(-3 * time.Minute))
	if err := h.bot.SendReminder(t.Context(), due, berlin); err != nil {
		t.Fatal(err)
	}
	h.dm(ada, "starts in 3 minutes. bookbot could not remind you earlier.")

	// Reminder settings…, pressed on the reminder, opens them.
	h.interact(slacktest.BlockAction(ada, "personal_settings", "", slacktest.InMessage(dm)))
	h.waitView("the settings from a reminder", func(v slacktest.View) bool { return v.TriggerUser == ada })
	if s := settingsOf(t, store, ada); s.Remind != 15*time.Minute || s.Agenda == nil {
		t.Errorf("after opening the settings: %+v, want both kept", s)
	}

	// Cancel booking…, chosen in the reminder's menu once Slack's dialog confirmed.
	h.interact(slacktest.BlockAction(ada, "cancel_booking", bk.ID, slacktest.InMessage(dm)))
	h.drain()
	if n := len(h.requests(bookingtest.EndpointCancelBooking)); n != 1 {
		t.Errorf("%d cancels, want 1", n)
	}
}

// An agenda is a DM whose notification begins with "Agenda": the day's
// bookings one a line, an empty day in one line, and a warning when the
// list may be cut.
func TestSendAgenda(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	bk := hostileBooking(t, h)
	day := personal.Date{Year: 2026, Month: time.March, Day: 23}
	due := personal.Due{Kind: personal.AgendaKind, User: bob, Key: personal.AgendaKey(bob, day), Day: day, At: time.Date(2026, 3, 23, 12, 0, 0, 0, time.UTC), Bookings: []booking.Booking{bk}}
	if err := h.bot.SendAgenda(t.Context(), due, newYork); err != nil {
		t.Fatal(err)
	}
	dm := h.dm(bob, "Your day")
	// The lock screen says the day's count and its first meeting.
	if dm.Text != "Agenda for Mon 23 Mar: 1 booking, first at 10:00 — Consultation with &lt;!channel&gt; Eve &amp; *co*." {
		t.Errorf("notification text %q", dm.Text)
	}
	text := textOf(dm.Blocks)
	for _, w := range []string{"Your day, Mon 23 Mar", "10:00–10:30 EDT  Consultation · &lt;!channel&gt; Eve &amp; *co*", "America/New_York"} {
		if !strings.Contains(text, w) {
			t.Errorf("the agenda lacks %q:\n%s", w, text)
		}
	}
	if strings.Contains(text, "<!channel>") || len(elements(dm.Blocks, "show_list")) != 1 {
		t.Errorf("the agenda pings, or lacks Upcoming bookings:\n%s", text)
	}

	empty := personal.Due{Kind: personal.AgendaKind, User: ada, Day: day, At: t0, Incomplete: true}
	if err := h.bot.SendAgenda(t.Context(), empty, berlin); err != nil {
		t.Fatal(err)
	}
	dm = h.dm(ada, "Your day")
	if dm.Text != "Agenda for Mon 23 Mar: no bookings." {
		t.Errorf("notification text %q", dm.Text)
	}
	if text := textOf(dm.Blocks); !strings.Contains(text, "Nothing booked today.") || !strings.Contains(text, "shows bookbot only the next 100 bookings") {
		t.Errorf("the empty, incomplete agenda:\n%s", text)
	}
}

// Slack refusing a message proves it was not sent: the error wraps
// personal.ErrNotSent, so the Runner tries again. A message that may have
// gone is not.
func TestSendErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	bk := hostileBooking(t, h)
	due := personal.Due{Kind: personal.Reminder, User: ada, At: t0, Booking: bk}
	for _, code := range []string{"channel_not_found", "ratelimited", "service_unavailable"} {
		h.sl.FailNext("chat.postMessage", code)
		if err := h.bot.SendReminder(t.Context(), due, berlin); !errors.Is(err, personal.ErrNotSent) {
			t.Errorf("Slack answered %s: %v, want ErrNotSent", code, err)
		}
	}
	h.sl.FailNext("chat.postMessage", "is_archived")
	if err := h.bot.SendAgenda(t.Context(), personal.Due{Kind: personal.AgendaKind, User: ada, Day: personal.Date{Year: 2026, Month: time.March, Day: 23}}, berlin); !errors.Is(err, personal.ErrNotSent) {
		t.Errorf("agenda: %v, want ErrNotSent", err)
	}

	// Slack's internal_error may come after the message was posted.
	h.sl.FailNext("chat.postMessage", "internal_error")
	if err := h.bot.SendReminder(t.Context(), due, berlin); err == nil || errors.Is(err, personal.ErrNotSent) {
		t.Errorf("internal_error: %v, want an error that is not ErrNotSent", err)
	}

	// No answer in time: it may have been posted.
	h.sl.SetLatency("chat.postMessage", 2*time.Second)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if err := h.bot.SendReminder(ctx, due, berlin); err == nil || errors.Is(err, personal.ErrNotSent) {
		t.Errorf("a timeout: %v, want an error that is not ErrNotSent", err)
	}
	h.sl.SetLatency("chat.postMessage", 0)
}

// PersonZone is the zone Slack names, never a guess: when users.info fails
// and the zone was never learned, it is an error.
func TestPersonZone(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.sl.FailNext("users.info", "user_not_found")
	if loc, err := h.bot.PersonZone(t.Context(), kiw); err == nil {
		t.Fatalf("users.info failed, and PersonZone said %v", loc)
	}
	loc, err := h.bot.PersonZone(t.Context(), kiw)
	if err != nil || loc.String() != "Pacific/Auckland" {
		t.Fatalf("PersonZone: %v, %v", loc, err)
	}
	// Known once, it is kept through a failure, however old.
	h.clock.Advance(3 * time.Hour)
	h.sl.FailNext("users.info", "ratelimited")
	if loc, err := h.bot.PersonZone(t.Context(), kiw); err != nil || loc.String() != "Pacific/Auckland" {
		t.Errorf("through a failure: %v, %v", loc, err)
	}
}

// The Runner sends through the bot: the reminder and the agenda due come
// once, and nothing goes to a person whose zone Slack cannot tell.
func TestRunnerSendsThroughTheBot(t *testing.T) {
	t.Parallel()
	h, store := newPersonalHarness(t)
	h.command(ada, "remind 15m")
	h.command(ada, "agenda 08:00")
	// Kiri set hers elsewhere: bookbot never learned her zone.
	if err := store.SaveSettings(t.Context(), kiw, personal.Settings{Agenda: &personal.Agenda{Minute: 20 * 60}}); err != nil {
		t.Fatal(err)
	}
	r := personal.NewRunner(personal.Config{
		List: h.client, Store: store, Send: h.bot, Zones: h.bot,
		Allowed: func(u string) bool { return u == ada || u == kiw },
		Now:     h.clock.Now,
	})

	// Tue 24 Mar 07:50 UTC: 08:50 in Berlin, 20:50 in Auckland. Slack
	// cannot say either zone now: Ada's, learned a day ago, is kept;
	// Kiri's is not known, so she gets nothing yet.
	h.clock.Set(time.Date(2026, 3, 24, 7, 50, 0, 0, time.UTC))
	h.sl.FailNext("users.info", "user_not_found")
	h.sl.FailNext("users.info", "user_not_found")
	if err := r.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	reminder := h.dm(ada, "Reminder:")
	if reminder.Text != "Reminder: Intro call at Tue 24 Mar, 09:00 CET with Ada Lovelace" || !strings.Contains(string(reminder.Metadata), firstBooking) {
		t.Errorf("reminder text %q", reminder.Text)
	}
	agenda := h.dm(ada, "Your day")
	if !strings.HasPrefix(agenda.Text, "Agenda for Tue 24 Mar: 3 bookings") {
		t.Errorf("agenda text %q", agenda.Text)
	}
	if err := r.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	h.drain()
	var toAda, toKiri int
	for _, m := range h.sl.Messages() {
		if m.Kind != "message" {
			continue
		}
		switch m.Channel {
		case ada:
			toAda++
		case kiw:
			toKiri++
		}
	}
	if toAda != 2 {
		t.Errorf("%d DMs to Ada, want the reminder and the agenda once", toAda)
	}
	if toKiri != 1 {
		t.Errorf("%d DMs to Kiri, want her agenda once, at the second look", toKiri)
	}
}

// nextAgenda checks that blocks name the next agenda by its day, as a date
// token of the moment it comes: the time of day is in the setting.
func nextAgenda(t *testing.T, blocks []byte, at time.Time) {
	t.Helper()
	want := "Next agenda: <!date^" + strconv.FormatInt(at.Unix(), 10) + "^{date_short_pretty}|"
	var texts []string
	walk(decodeJSON(blocks), func(m map[string]any) {
		if s, ok := m["text"].(string); ok {
			texts = append(texts, s)
		}
	})
	if all := strings.Join(texts, "\n"); !strings.Contains(all, want) {
		t.Errorf("no %q in:\n%s", want, all)
	}
}

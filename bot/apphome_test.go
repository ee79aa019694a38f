package bot_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/internal/testutil"
)

// App Home shows today's and tomorrow's bookings; the list has the rest,
// one press away.
func TestAppHome(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if _, err := h.sl.OpenAppHome(h.ctx(), ada); err != nil {
		t.Fatal(err)
	}
	home := h.waitView("Ada's home", func(v slacktest.View) bool { return v.Type == "home" && v.TriggerUser == ada })
	text := textOf(home.Blocks)
	m := regexp.MustCompile(`(\d+) bookings today and tomorrow`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("home does not count today's and tomorrow's bookings:\n%s", text)
	}
	soon, _ := strconv.Atoi(m[1])
	for i, b := range upcoming(h) {
		if b.BookerName != nil && strings.Contains(text, *b.BookerName) != (i < soon) {
			t.Errorf("home shows %s's booking: %v, want %v", *b.BookerName, i >= soon, i < soon)
		}
		if strings.Contains(text, b.ID) {
			t.Errorf("home shows the ID %s", b.ID)
		}
	}
	for _, s := range []string{"Europe/Berlin (CET)", "*Tomorrow, Tue 24 Mar*", "09:00–09:15 CET  Intro call · Ada Lovelace", fmt.Sprintf("*%d more* after tomorrow.", len(upcoming(h))-soon)} {
		if !strings.Contains(text, s) {
			t.Errorf("home lacks %q:\n%s", s, text)
		}
	}
	if len(elements(home.Blocks, "new_booking")) != 1 || len(elements(home.Blocks, "home_refresh")) != 1 || len(elements(home.Blocks, "show_list")) != 1 {
		t.Error("home lacks New booking, Refresh or Upcoming bookings")
	}
	h.interact(slacktest.BlockAction(ada, "home_refresh", "", slacktest.InView(home)))
	h.waitView("refreshed", func(v slacktest.View) bool { return v.ID == home.ID && v.Updates >= 1 })
	h.interact(slacktest.BlockAction(ada, "show_list", "", slacktest.InView(home)))
	h.dm(ada, "Upcoming bookings (12)")
	h.interact(slacktest.BlockAction(ada, "new_booking", "", slacktest.InView(home)))
	h.waitView("modal from home", func(v slacktest.View) bool { return v.Type == "modal" && v.TriggerUser == ada })
}

// A busy day keeps App Home to a screenful: homeRows bookings, then how
// many more, with the list one press away.
func TestAppHomeBusyDayKeepsToABudget(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	long := strings.Repeat("Long Attendee Name ", 4)
	for i := range 60 {
		h.sb.AddBooking(bookingtest.DemoOwner, bookingtest.Booking{
			ID: fmt.Sprintf("bk_busy%03d", i), EventType: testutil.Ptr("consultation"),
			Start:      time.Date(2026, 3, 24, 7, 0, 0, 0, time.UTC).Add(time.Duration(i) * 5 * time.Minute),
			BookerName: testutil.Ptr(fmt.Sprintf("%s%03d", long, i)), BookerEmail: testutil.Ptr(fmt.Sprintf("a%03d@example.com", i)),
		})
	}
	if _, err := h.sl.OpenAppHome(h.ctx(), ada); err != nil {
		t.Fatal(err)
	}
	home := h.waitView("Ada's home", func(v slacktest.View) bool { return v.Type == "home" && v.TriggerUser == ada })
	text := textOf(home.Blocks)
	rows := regexp.MustCompile(`(?m)^\d\d:\d\d–\d\d:\d\d \S+  `).FindAllString(text, -1)
	if len(rows) != 15 {
		t.Errorf("%d rows, want 15:\n%s", len(rows), text)
	}
	// The rows shown, those not shown today and tomorrow, and those after
	// them add up to the list.
	more := regexp.MustCompile(`\*(\d+) more\* today and tomorrow, and \*(\d+)\* after that\.`).FindStringSubmatch(text)
	if more == nil || len(rows)+atoi(more[1])+atoi(more[2]) != len(upcoming(h)) || len(elements(home.Blocks, "show_list")) != 1 {
		t.Errorf("home does not say how many more, in numbers that add up to the %d upcoming, with Upcoming bookings:\n%s", len(upcoming(h)), text)
	}
	if n := len(decodeJSON(home.Blocks).([]any)); n > 40 {
		t.Errorf("%d blocks", n)
	}
	if n := strings.Count(text, "*Tomorrow, "); n != 1 {
		t.Errorf("the day heading appears %d times", n)
	}
}

// App Home says a failure in the same words as a message; the API's answer
// is for the log.
func TestAppHomeFailureSaidInWords(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.sb.FailNext(bookingtest.EndpointListBookings, bookingtest.JSONError(401, "invalid token", 0))
	if _, err := h.sl.OpenAppHome(h.ctx(), ada); err != nil {
		t.Fatal(err)
	}
	home := h.waitView("Ada's home", func(v slacktest.View) bool { return v.Type == "home" && v.TriggerUser == ada })
	text := textOf(home.Blocks)
	if !strings.Contains(text, "could not be loaded") || !strings.Contains(text, "refused bookbot's key") || strings.Contains(text, "401") || strings.Contains(text, "GET /bookings") {
		t.Errorf("the failure reads like a log line:\n%s", text)
	}
	logged := regexp.MustCompile(`msg="The bookings could not be loaded" user=` + ada + ` err=".*401`)
	if !logged.MatchString(h.logs.String()) {
		t.Errorf("the log lacks App Home's failure with the API's answer:\n%s", h.logs)
	}
}

package bot_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/internal/testutil"
)

// Data is shown as data: a name with newlines stays on its line, a typed
// mention pings no one, and the notification text keeps every character of
// a name and an ID.
func TestHostileDataStaysData(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	start := t0.Add(26 * time.Hour)
	h.sb.AddBooking(bookingtest.DemoOwner, bookingtest.Booking{
		EventType: testutil.Ptr("intro-call"), Start: start, End: start.Add(15 * time.Minute),
		BookerName: testutil.Ptr("Eve\nMallory\r\n*boss* @channel <!channel>"), BookerEmail: testutil.Ptr("eve@example.com"),
	})
	h.slash(ada, "list")
	m := h.reply(ada, "Eve Mallory")
	text := textOf(m.Blocks)
	for _, bad := range []string{"Eve\nMallory", "<!channel>"} {
		if strings.Contains(text, bad) {
			t.Errorf("the list shows %q:\n%s", bad, text)
		}
	}
	if !strings.Contains(text, "&lt;!channel&gt;") {
		t.Errorf("the typed mention is not escaped:\n%s", text)
	}
	var raw []map[string]any
	if err := json.Unmarshal(m.Blocks, &raw); err != nil {
		t.Fatal(err)
	}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["type"] == "mrkdwn" && v["verbatim"] != true {
				t.Errorf("mrkdwn text without verbatim: %v", v["text"])
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
	walk(raw)

	v := h.openModal(ada, "intro-call")
	in := bookingInputs(firstSlot, "first_last@example.com")
	in["name"] = "Grace first_last *Hopper*"
	h.submit(ada, v.ID, in)
	dm := h.dm(ada, "Booked")
	id := bookedFor(h, "first_last@example.com")
	for _, want := range []string{"Booked.", "Grace first_last *Hopper*"} {
		if !strings.Contains(dm.Text, want) {
			t.Errorf("the notification text %q lacks %q", dm.Text, want)
		}
	}
	if strings.Contains(dm.Text, id) {
		t.Errorf("the notification text %q shows the booking's ID", dm.Text)
	}
}

// A failure says what happened and what to do in words; the API's answer
// is for the log.
func TestFailuresAreSaidInWords(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.sb.FailNext(bookingtest.EndpointListBookings, bookingtest.JSONError(401, "invalid token", 0))
	h.slash(ada, "list")
	m := h.reply(ada, "could not be loaded")
	text := textOf(m.Blocks)
	if !strings.Contains(text, "refused bookbot's key") || strings.Contains(text, "401") || strings.Contains(text, "GET /bookings") {
		t.Errorf("the failure reads like a log line:\n%s", text)
	}
	if !strings.Contains(h.logs.String(), "401") {
		t.Errorf("the log lacks the API's answer:\n%s", h.logs)
	}
}

package booking_test

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
)

// An answer that echoes the request (an error page repeating the form, a
// JSON error naming the attendee) never puts the attendee's email or the
// key into the error, the Result or the log line made from them.
func TestAnswersEchoingTheAttendeeAreRedacted(t *testing.T) {
	t.Parallel()
	const email = "ada@example.com" // request()'s attendee
	for name, fault := range map[string]bookingtest.Fault{
		"plain text 503": bookingtest.PlainText(503, "upstream failed for email="+email+" with key "+bookingtest.DemoKey),
		"JSON 500":       bookingtest.JSONError(500, "could not notify "+email+" (key "+bookingtest.DemoKey+")", 0),
		"JSON 409":       bookingtest.JSONError(409, "Ada Lovelace <"+email+"> already booked", 200),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var log strings.Builder
			c, srv := sandbox(t, booking.WithLogger(slog.New(slog.NewJSONHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))))
			slots, err := c.Slots(t.Context(), "intro-call")
			if err != nil {
				t.Fatal(err)
			}
			srv.FailNext(bookingtest.EndpointCreateBooking, fault)
			res, err := c.Create(t.Context(), request(slots[0]))
			if err != nil {
				t.Fatal(err)
			}
			for what, s := range map[string]string{
				"Err":  fmt.Sprint(res.Err),
				"Seen": strings.Join(res.Seen, "; "),
				"log":  log.String(),
			} {
				if strings.Contains(s, email) || strings.Contains(s, bookingtest.DemoKey) {
					t.Errorf("%s holds the email or the key: %s", what, s)
				}
			}
		})
	}
}

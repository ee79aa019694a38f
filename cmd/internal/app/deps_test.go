package app

import (
	"log/slog"
	"testing"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/cmd/internal/metrics"
	"github.com/bookbot/bookbot/config"
	"github.com/bookbot/bookbot/store"
)

// The booking options a test gives the wiring (Deps.Booking) reach every
// booking client it makes, the owner's and a connected calendar's: a dry
// run set there sends nothing through either.
func TestBookingOptionsReachEveryClient(t *testing.T) {
	t.Parallel()
	sb := bookingtest.NewServer(t)
	sl := slacktest.NewServer(t)
	dir := t.TempDir()
	env := map[string]string{
		"BOOKING_BASE_URL": sb.URL, "BOOKING_API_KEY": bookingtest.DemoKey,
		"SLACK_BOT_TOKEN": sl.BotToken(), "SLACK_APP_TOKEN": sl.AppToken(), "SLACK_API_URL": sl.APIURL,
		"BOOKBOT_ALLOW_ALL": "true", "BOOKBOT_STATE_DIR": dir, "BOOKBOT_HTTP_ADDR": "off",
	}
	cfg, err := config.Load(func(k string) string { return env[k] }, config.NeedAll)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), store.Options{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	a, err := New(t.Context(), Deps{
		Config: cfg, Metrics: metrics.New(), Log: slog.New(slog.DiscardHandler), Version: "test",
		State:   st,
		Booking: []booking.Option{booking.WithDryRun()},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.CloseIdleConnections)
	key, err := booking.NewKey(bookingtest.OtherKey)
	if err != nil {
		t.Fatal(err)
	}
	own, err := a.Calendars.For("UGRACE", "cal-grace", key)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*booking.Client{"the owner's": a.Booking, "a connected calendar's": own} {
		list, err := c.Bookings(t.Context())
		if err != nil || len(list) == 0 {
			t.Fatalf("%s bookings: %v, %v", name, list, err)
		}
		res, err := c.Cancel(t.Context(), list[0].ID)
		if err != nil || res.Outcome != booking.DryRun {
			t.Errorf("%s client's cancel: %+v, %v; want a dry run", name, res, err)
		}
	}
	for _, r := range sb.Requests() {
		if r.Endpoint == bookingtest.EndpointCancelBooking {
			t.Errorf("a cancel reached the booking API: %s", r.Path)
		}
	}
}

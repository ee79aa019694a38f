package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/cmd/internal/metrics/metricstest"
	"github.com/bookbot/bookbot/internal/testutil"
)

// listening is the log line that names the HTTP listener's bound address,
// in either log format.
var listening = regexp.MustCompile(`"?http listening"?[ ,]"?addr"?[=:]"?([^"\s]+)`)

// httpBase is the base URL of the listener a `bookbot run` logged.
func httpBase(ctx context.Context, t *testing.T, out *logLines) string {
	t.Helper()
	out.waitCount(ctx, t, "http listening", 1)
	m := listening.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no address in the \"http listening\" line:\n%s", out.String())
	}
	return "http://" + m[1]
}

// get fetches url and returns the status and body.
func get(ctx context.Context, t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// `bookbot run` serves /healthz, /readyz and /metrics: ready once Socket
// Mode is connected, counting booking API calls and acks, and not ready
// once the booking API refuses the key.
func TestRunServesHealthReadinessAndMetrics(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	sb := bookingtest.NewServer(t)
	sl := slacktest.NewServer(t)
	sl.AddUser(slacktest.User{ID: "UADA", Name: "ada", TZ: "Europe/Berlin"})

	cmd, out := startRun(ctx, t, sl, env(sb, sl))
	base := httpBase(ctx, t, out)
	if code, body := get(ctx, t, base+"/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz = %d %q", code, body)
	}
	// The bot logs this after it has recorded the connection.
	out.waitCount(ctx, t, "connected to Slack over Socket Mode", 1)
	if code, body := get(ctx, t, base+"/readyz"); code != http.StatusOK || body != "ready\n" {
		t.Errorf("/readyz once connected = %d %q", code, body)
	}

	// One Slack Web API failure, counted by method and error code; the bot
	// still answers.
	sl.FailNext("users.info", "user_not_found")
	if _, err := sl.SendSlashCommand(ctx, slacktest.SlashCommand{Command: "/booking", Text: "list", UserID: "UADA"}); err != nil {
		t.Fatal(err)
	}
	// The list is posted after the ack and the API call are counted.
	if _, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Kind == "response_url" && strings.Contains(string(m.Blocks), "cancel_booking")
	}); err != nil {
		t.Fatalf("no booking list: %v\n%s", err, out.String())
	}
	out.waitCount(ctx, t, "notices off", 1) // logged by the scheduled work, once it runs
	code, metrics := get(ctx, t, base+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics = %d", code)
	}
	for _, series := range []string{
		`bookbot_booking_api_requests_total{endpoint="GET /bookings",status="200"}`,
		`bookbot_booking_api_request_duration_seconds_count{endpoint="GET /bookings"}`,
		`bookbot_envelope_ack_seconds_count{type="slash_commands"}`,
	} {
		if v, ok := metricstest.Sample(metrics, series); !ok || v < 1 {
			t.Errorf("%s = %v (present %v), want ≥ 1", series, v, ok)
		}
	}
	for series, want := range map[string]float64{
		`bookbot_envelope_ack_seconds_bucket{type="slash_commands",le="3"}`: 1, // acked within Slack's 3 s
		`bookbot_socket_connected`:                                                   1,
		`bookbot_booking_api_last_status`:                                            200,
		`bookbot_digest_runs_total{result="failed"}`:                                 0,
		`bookbot_rate_limit_refusals_total`:                                          0,
		`bookbot_slack_api_errors_total{error="user_not_found",method="users.info"}`: 1,
		`bookbot_leader`:                                                             1, // the embedded store's one process runs the scheduled work
	} {
		metricstest.Want(t, metrics, series, want)
	}

	// The owner revokes the key (a new one replaces it): the next call is a
	// 401 and bookbot is no longer ready.
	sb.AddOwner("sandbox_rotated_key_5d1e77", bookingtest.DemoOwner, testutil.Zone("Europe/Berlin"), bookingtest.Weekdays(9*time.Hour, 17*time.Hour))
	if _, err := sl.SendSlashCommand(ctx, slacktest.SlashCommand{Command: "/booking", Text: "list", UserID: "UADA"}); err != nil {
		t.Fatal(err)
	}
	if _, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Kind == "response_url" && strings.Contains(string(m.Blocks), "could not be loaded")
	}); err != nil {
		t.Fatalf("no failure reply: %v\n%s", err, out.String())
	}
	if code, body := get(ctx, t, base+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "booking API answered 401") {
		t.Errorf("/readyz after a 401 = %d %q", code, body)
	}
	_, metrics = get(ctx, t, base+"/metrics")
	metricstest.Want(t, metrics, `bookbot_booking_api_requests_total{endpoint="GET /bookings",status="401"}`, 1)
	metricstest.Want(t, metrics, `bookbot_booking_api_last_status`, 401)
	if code, _ := get(ctx, t, base+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz after a 401 = %d: the process still serves", code)
	}

	stopRun(t, cmd, out)
	noSecrets(t, sb, sl, out.String(), metrics)
	if strings.Contains(metrics, "sandbox_rotated_key") {
		t.Error("the new key reached /metrics")
	}
}

// The digest schedule inside `bookbot run` reports every run's result.
func TestRunCountsDigestRuns(t *testing.T) {
	t.Parallel()
	ctx, _, sl, e := digestSetup(t)
	cmd, out := startRun(ctx, t, sl, e)
	base := httpBase(ctx, t, out)
	// Logged by the scheduler after each Run has returned.
	out.waitCount(ctx, t, `"digest run: posted"`, 1)
	out.waitCount(ctx, t, `"digest already posted"`, 1)
	_, metrics := get(ctx, t, base+"/metrics")
	stopRun(t, cmd, out)
	metricstest.Want(t, metrics, `bookbot_digest_runs_total{result="posted"}`, 1)
	metricstest.Want(t, metrics, `bookbot_digest_runs_total{result="failed"}`, 0)
	if v, _ := metricstest.Sample(metrics, `bookbot_digest_runs_total{result="already_posted"}`); v < 1 {
		t.Errorf("already_posted runs = %v, want ≥ 1", v)
	}
}

// A listener address that cannot be bound stops bookbot at start, naming
// BOOKBOT_HTTP_ADDR, before it talks to Slack.
func TestRunRefusesAnHTTPAddressInUse(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sb := bookingtest.NewServer(t)
	sl := slacktest.NewServer(t)
	cmd := exec.CommandContext(t.Context(), binary, "run")
	cmd.Env = env(sb, sl, "BOOKBOT_HTTP_ADDR="+ln.Addr().String())
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("err = %v, want exit status 1\n%s", err, out)
	}
	if !strings.Contains(string(out), "BOOKBOT_HTTP_ADDR="+ln.Addr().String()) {
		t.Errorf("output does not name BOOKBOT_HTTP_ADDR:\n%s", out)
	}
	if n := len(sl.Calls()); n != 0 {
		t.Errorf("bookbot talked to Slack %d times before failing", n)
	}
}

// Nothing secret reaches the log at any level or in either format: not
// the booking API key, not the Slack tokens, not an attendee's email, while
// bookbot books (through the modal), fails to book (a 503 whose body echoes
// the key), lists and cancels.
func TestRunLogsNoSecretsAtDebug(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"json", "text"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
			defer cancel()
			sb := bookingtest.NewServer(t)
			sl := slacktest.NewServer(t)
			sl.AddUser(slacktest.User{ID: "UADA", Name: "ada", TZ: "Europe/Berlin"})
			cmd, out := startRun(ctx, t, sl, env(sb, sl, "LOG_LEVEL=debug", "LOG_FORMAT="+format))
			const attendee = "grace.private@example.net"
			seen := map[string]bool{}

			slash := func(text, want string) slacktest.Message {
				t.Helper()
				return slashReply(ctx, t, sl, out, text, want)
			}
			// book opens the modal, submits it and waits for the outcome.
			book := func(want string) {
				t.Helper()
				if _, err := sl.SendSlashCommand(ctx, slacktest.SlashCommand{Command: "/booking", Text: "new intro-call", UserID: "UADA"}); err != nil {
					t.Fatal(err)
				}
				v, err := sl.WaitView(ctx, func(v slacktest.View) bool {
					return !seen[v.ID] && v.CallbackID == "booking_create" && len(v.Options("slot")) > 0
				})
				if err != nil {
					t.Fatalf("no booking modal with slots: %v\n%s", err, out.String())
				}
				seen[v.ID] = true
				slots := v.Options("slot")
				if _, err := sl.SubmitInputs(ctx, "UADA", v.ID, map[string]string{
					"slot": slots[len(slots)-1].Value, "name": "Grace Hopper", "email": attendee,
					"booker_tz": "America/New_York", "note": "compilers",
				}); err != nil {
					t.Fatalf("submit: %v", err)
				}
				if _, err := sl.WaitView(ctx, func(x slacktest.View) bool {
					return x.ID == v.ID && strings.Contains(string(x.Blocks), want)
				}); err != nil {
					t.Fatalf("no outcome %q: %v\n%s", want, err, out.String())
				}
			}

			book("Booked.")
			sb.FailNext(bookingtest.EndpointCreateBooking, bookingtest.PlainText(503, "upstream failed; request had Authorization: Bearer "+sb.Key+" for "+attendee))
			book("Probably not booked")
			slash("list", "cancel_booking")
			var id string
			for _, b := range sb.Bookings(bookingtest.DemoOwner) {
				if b.BookerEmail != nil && *b.BookerEmail == attendee && !b.Cancelled {
					id = b.ID
				}
			}
			if id == "" {
				t.Fatal("the booking was not made")
			}
			ask := slash("cancel "+id, "Cancel this booking?")
			if _, err := sl.SendInteraction(ctx, slacktest.BlockAction("UADA", "cancel_booking", id, slacktest.InMessage(ask))); err != nil {
				t.Fatal(err)
			}
			if _, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
				return m.Kind == "response_url" && strings.HasPrefix(m.Text, "Cancelled: ")
			}); err != nil {
				t.Fatalf("no cancel reply: %v\n%s", err, out.String())
			}
			stopRun(t, cmd, out)

			logs := out.String()
			// The log is at debug, in the format asked for, and saw the writes.
			debug := map[string]string{"json": `"level":"DEBUG"`, "text": "level=DEBUG"}[format]
			for _, want := range []string{debug, "booking API call", "booking create", "booking cancel", id} {
				if !strings.Contains(logs, want) {
					t.Errorf("the log lacks %q", want)
				}
			}
			if format == "json" {
				for line := range strings.Lines(logs) {
					if !json.Valid([]byte(line)) {
						t.Errorf("not a JSON log line: %q", line)
					}
				}
			}
			noSecrets(t, sb, sl, logs)
			emails := []string{attendee}
			for _, b := range sb.Bookings(bookingtest.DemoOwner) {
				if b.BookerEmail != nil {
					emails = append(emails, *b.BookerEmail)
				}
			}
			for _, e := range emails {
				if strings.Contains(logs, e) {
					t.Errorf("an attendee's email (%s) reached the log", e)
				}
			}
			if t.Failed() {
				t.Logf("log:\n%s", logs)
			}
		})
	}
}

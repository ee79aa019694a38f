package metrics

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/cmd/internal/metrics/metricstest"
	"github.com/bookbot/bookbot/notices"
	"github.com/bookbot/bookbot/personal"
)

// A Recorder is what booking.Client and bot.Bot are given.
var (
	_ booking.Observer = (*Recorder)(nil)
	_ bot.Metrics      = (*Recorder)(nil)
	_ notices.Metrics  = (*Recorder)(nil)
	_ personal.Metrics = (*Recorder)(nil)
)

// scrape fetches a Prometheus text exposition from h.
func scrape(t *testing.T, h http.Handler) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

func TestMetricsCountWhatTheyAreTold(t *testing.T) {
	t.Parallel()
	m := New()
	m.Request("GET /bookings", 200, 20*time.Millisecond)
	m.Request("GET /bookings", 200, 30*time.Millisecond)
	m.Request("POST /bookings/{id}/cancel", 503, time.Second)
	m.Request("POST /bookings", 0, 30*time.Second) // no answer: the last status stays 503
	m.Wrote(booking.OpCreate, &booking.Result{Outcome: booking.Confirmed})
	m.Wrote(booking.OpCreate, &booking.Result{Outcome: booking.RateLimited, Held: true})
	m.Wrote(booking.OpCreate, &booking.Result{Outcome: booking.RateLimited}) // the API's 429: not a refusal of ours
	m.Wrote(booking.OpCancel, &booking.Result{Outcome: booking.Cancelled})
	m.Wrote(booking.OpCancel, nil)
	m.Acked("slash_commands", 2*time.Millisecond)
	m.Acked("interactive", 4*time.Second)
	m.Connected(true)
	m.DigestRun("posted")
	m.DigestRun("already_posted")
	m.DigestRun("already_posted")
	m.slackError("chat.postMessage", "channel_not_found")

	text := scrape(t, m.Handler())
	for series, want := range map[string]float64{
		`bookbot_booking_api_requests_total{endpoint="GET /bookings",status="200"}`:                2,
		`bookbot_booking_api_requests_total{endpoint="POST /bookings/{id}/cancel",status="503"}`:   1,
		`bookbot_booking_api_requests_total{endpoint="POST /bookings",status="error"}`:             1,
		`bookbot_booking_api_request_duration_seconds_count{endpoint="GET /bookings"}`:             2,
		`bookbot_booking_api_request_duration_seconds_bucket{endpoint="GET /bookings",le="0.025"}`: 1,
		`bookbot_booking_api_request_duration_seconds_bucket{endpoint="POST /bookings",le="10"}`:   0,
		`bookbot_booking_api_last_status`:                                                     503,
		`bookbot_booking_writes_total{op="create",outcome="confirmed"}`:                       1,
		`bookbot_booking_writes_total{op="create",outcome="rate_limited"}`:                    2,
		`bookbot_booking_writes_total{op="cancel",outcome="cancelled"}`:                       1,
		`bookbot_rate_limit_refusals_total`:                                                   1,
		`bookbot_envelope_ack_seconds_bucket{type="slash_commands",le="0.001"}`:               0,
		`bookbot_envelope_ack_seconds_bucket{type="slash_commands",le="0.0025"}`:              1,
		`bookbot_envelope_ack_seconds_bucket{type="interactive",le="3"}`:                      0,
		`bookbot_envelope_ack_seconds_count{type="interactive"}`:                              1,
		`bookbot_envelope_ack_seconds_count{type="events_api"}`:                               0,
		`bookbot_socket_connected`:                                                            1,
		`bookbot_digest_runs_total{result="posted"}`:                                          1,
		`bookbot_digest_runs_total{result="already_posted"}`:                                  2,
		`bookbot_digest_runs_total{result="failed"}`:                                          0,
		`bookbot_digest_runs_total{result="skipped_empty"}`:                                   0,
		`bookbot_slack_api_errors_total{error="channel_not_found",method="chat.postMessage"}`: 1,
		`bookbot_journal_awaiting_review`:                                                     0,
	} {
		metricstest.Want(t, text, series, want)
	}
	for _, family := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if !strings.Contains(text, "\n"+family+" ") {
			t.Errorf("the Go and process collectors are missing: no %s", family)
		}
	}

	m.Request("GET /bookings", 401, time.Millisecond)
	metricstest.Want(t, scrape(t, m.Handler()), "bookbot_booking_api_last_status", 401)
}

func TestMetricsNotices(t *testing.T) {
	t.Parallel()
	m := New()
	t0 := time.Date(2026, 3, 23, 9, 0, 0, 0, time.UTC)
	m.now = func() time.Time { return t0.Add(90 * time.Second) }
	metricstest.Want(t, scrape(t, m.Handler()), "bookbot_notice_seconds_since_good_poll", math.NaN())
	m.NoticePoll(true, t0)
	m.NoticePoll(false, t0.Add(time.Minute)) // a failed read is not a good one
	m.Notice(notices.New, "posted")
	m.Notice(notices.Cancelled, "posted")
	m.Notice(notices.Cancelled, "posted")
	m.Notice(notices.Moved, "maybe_posted")
	m.Personal(personal.Reminder, "sent")
	m.StoreError()
	m.SetLeader(true)
	m.Personal(personal.AgendaKind, "failed")
	text := scrape(t, m.Handler())
	for series, want := range map[string]float64{
		`bookbot_notice_polls_total{result="ok"}`:                        1,
		`bookbot_notice_polls_total{result="failed"}`:                    1,
		`bookbot_notice_seconds_since_good_poll`:                         90,
		`bookbot_notices_total{kind="new",result="posted"}`:              1,
		`bookbot_notices_total{kind="cancelled",result="posted"}`:        2,
		`bookbot_notices_total{kind="moved",result="maybe_posted"}`:      1,
		`bookbot_notices_total{kind="moved",result="failed"}`:            0,
		`bookbot_personal_messages_total{kind="reminder",result="sent"}`: 1,
		`bookbot_store_errors_total`:                                     1,
		`bookbot_leader`:                                                 1,
		`bookbot_personal_messages_total{kind="agenda",result="failed"}`: 1,
		`bookbot_personal_messages_total{kind="agenda",result="sent"}`:   0,
	} {
		metricstest.Want(t, text, series, want)
	}
}

// The API's clock is unknown until an answer tells it, then it is what
// the latest answer told.
func TestMetricsClockSkew(t *testing.T) {
	t.Parallel()
	m := New()
	metricstest.Want(t, scrape(t, m.Handler()), "bookbot_booking_api_clock_skew_seconds", math.NaN())
	m.ClockSkew(4*time.Minute + 2*time.Second)
	metricstest.Want(t, scrape(t, m.Handler()), "bookbot_booking_api_clock_skew_seconds", 242)
	m.ClockSkew(-1500 * time.Millisecond)
	metricstest.Want(t, scrape(t, m.Handler()), "bookbot_booking_api_clock_skew_seconds", -1.5)
}

func TestMetricsJournalAwaitingReview(t *testing.T) {
	t.Parallel()
	m := New()
	m.SetAwaitingReview(func() (int, error) { return 3, nil })
	metricstest.Want(t, scrape(t, m.Handler()), "bookbot_journal_awaiting_review", 3)
	m.SetAwaitingReview(func() (int, error) { return 0, errors.New("journal unreadable") })
	metricstest.Want(t, scrape(t, m.Handler()), "bookbot_journal_awaiting_review", math.NaN())
	m.SetAwaitingReview(nil)
	metricstest.Want(t, scrape(t, m.Handler()), "bookbot_journal_awaiting_review", 0)
}

func TestReadiness(t *testing.T) {
	t.Parallel()
	m := New()
	check := func(wantOK bool, wantReasons ...string) {
		t.Helper()
		ok, reasons := m.ready(t.Context())
		if ok != wantOK || strings.Join(reasons, "|") != strings.Join(wantReasons, "|") {
			t.Errorf("ready = %v %q, want %v %q", ok, reasons, wantOK, wantReasons)
		}
	}
	const notConnected, revoked = "socket mode not connected", "booking API answered 401: the key is revoked or invalid"
	check(false, notConnected)
	m.Connected(true)
	check(true)
	m.Request("GET /slots", 401, time.Millisecond)
	check(false, revoked)
	m.Connected(false)
	check(false, notConnected, revoked)
	m.Connected(true)
	m.Request("GET /bookings", 0, time.Second) // no answer says nothing about the key
	check(false, revoked)
	m.Request("GET /bookings", 200, time.Millisecond) // a rotated key works again
	check(true)
	down := errors.New("connection refused")
	m.SetDatabase(func(context.Context) error { return down })
	check(false, "database not answering")
	down = nil
	check(true)
}

// The handler answers the probes from the state it was told, and serves
// the metrics; nothing else.
func TestHandler(t *testing.T) {
	t.Parallel()
	m := New()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()

	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if ct := resp.Header.Get("Content-Type"); path != "/metrics" && resp.StatusCode != http.StatusNotFound && ct != "text/plain; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", path, ct)
		}
		return resp.StatusCode, string(body)
	}
	if code, body := get("/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz = %d %q", code, body)
	}
	if code, body := get("/readyz"); code != 503 || body != "socket mode not connected\n" {
		t.Errorf("/readyz before connecting = %d %q", code, body)
	}
	m.Connected(true)
	if code, body := get("/readyz"); code != 200 || body != "ready\n" {
		t.Errorf("/readyz connected = %d %q", code, body)
	}
	m.Request("GET /bookings", 401, time.Millisecond)
	if code, body := get("/readyz"); code != 503 || !strings.Contains(body, "401") {
		t.Errorf("/readyz after a 401 = %d %q", code, body)
	}
	if code, body := get("/metrics"); code != 200 || !strings.Contains(body, `bookbot_booking_api_requests_total{endpoint="GET /bookings",status="401"} 1`) {
		t.Errorf("/metrics = %d\n%s", code, body)
	}
	if code, _ := get("/nope"); code != 404 {
		t.Errorf("/nope = %d, want 404", code)
	}
	resp, err := http.Post(srv.URL+"/healthz", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /healthz = %d, want 405", resp.StatusCode)
	}
}

// The Slack client counts failed Web API calls by method and Slack's error
// code, and slack-go still sees every answer whole.
func TestSlackErrorsAreCounted(t *testing.T) {
	t.Parallel()
	const token = "xoxb-1-unit-test-SECRET-token"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		switch r.URL.Path {
		case "/api/auth.test":
			_, _ = io.WriteString(w, `{"ok":true,"url":"https://x.slack.com/","team":"Team","user":"bookbot","team_id":"T1","user_id":"U1","padding":"`+strings.Repeat("x", 64<<10)+`"}`)
		case "/api/chat.postMessage":
			_, _ = io.WriteString(w, `{"ok":false,"error":"channel_not_found"}`)
		case "/api/users.info":
			_, _ = io.WriteString(w, `{"ok":false,"error":"Bearer `+token+` is <bad>"}`)
		case "/api/views.open":
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, `{"ok":false,"error":"ratelimited"}`)
		case "/hooks/T1/B2/" + token:
			_, _ = io.WriteString(w, `{"ok":false,"error":"invalid_token"}`)
		case "/api/views.publish":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, `<html>oops</html>`)
		default:
			t.Errorf("unexpected %s", r.URL.Path)
		}
	}))
	defer srv.Close()

	m := New()
	api := slack.New(token, slack.OptionAPIURL(srv.URL+"/api/"), slack.OptionHTTPClient(&http.Client{Transport: m.SlackTransport(srv.URL+"/api/", nil)}))
	ctx := context.Background()

	auth, err := api.AuthTestContext(ctx)
	if err != nil || auth.TeamID != "T1" {
		t.Errorf("auth.test through the counter = %+v, %v", auth, err)
	}
	_, _, err = api.PostMessageContext(ctx, "C1", slack.MsgOptionText("hi", false))
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) || se.Err != "channel_not_found" {
		t.Errorf("chat.postMessage: slack-go saw %v, want channel_not_found", err)
	}
	if _, err := api.GetUserInfoContext(ctx, "U1"); err == nil {
		t.Error("users.info: slack-go saw no error")
	}
	_, err = api.OpenViewContext(ctx, "trigger", slack.ModalViewRequest{Type: slack.VTModal})
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != 7*time.Second {
		t.Errorf("views.open: slack-go saw %v, want rate limited for 7s", err)
	}
	if _, err := api.PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: "U1", View: slack.HomeTabViewRequest{Type: slack.VTHomeTab}}); err == nil {
		t.Error("views.publish: slack-go saw no error")
	}

	// A URL outside the Web API (a response_url, say) is never a label.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/hooks/T1/B2/"+token, nil)
	resp, err := m.SlackTransport(srv.URL+"/api/", nil).RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	// Nobody listens here: a transport error.
	dead := newSlackErrorCounter("http://127.0.0.1:1/api/", nil, m.slackError)
	req, _ = http.NewRequest(http.MethodPost, "http://127.0.0.1:1/api/chat.update", nil)
	if _, err := dead.RoundTrip(req); err == nil {
		t.Error("a call to a closed port succeeded")
	}

	text := scrape(t, m.Handler())
	for series, want := range map[string]float64{
		`bookbot_slack_api_errors_total{error="channel_not_found",method="chat.postMessage"}`: 1,
		`bookbot_slack_api_errors_total{error="other",method="users.info"}`:                   1,
		`bookbot_slack_api_errors_total{error="ratelimited",method="views.open"}`:             1,
		`bookbot_slack_api_errors_total{error="http_500",method="views.publish"}`:             1,
		`bookbot_slack_api_errors_total{error="transport",method="chat.update"}`:              1,
		`bookbot_slack_api_errors_total{error="invalid_token",method="other"}`:                1,
	} {
		metricstest.Want(t, text, series, want)
	}
	if strings.Contains(text, `method="auth.test"`) {
		t.Error("a successful call was counted as an error")
	}
	if strings.Contains(text, "SECRET") || strings.Contains(text, srv.URL) || strings.Contains(text, "hooks") {
		t.Errorf("a token or URL reached the metrics:\n%s", text)
	}
}

// Only what looks like a Web API method or a Slack error code becomes a
// label: anything else could carry a token or grow without bound.
func TestLabelShapes(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 64)
	for s, want := range map[string]bool{"chat.postMessage": true, "views_open": true, long: true, long + "a": false, "": false, "1chat": false, ".chat": false, "chat/post": false, "chat postMessage": false} {
		if got := isMethodName(s); got != want {
			t.Errorf("isMethodName(%q) = %v", s, got)
		}
	}
	for s, want := range map[string]bool{"channel_not_found": true, "error2": true, long: true, long + "a": false, "": false, "Invalid": false, "not-found": false, "a b": false} {
		if got := isErrorCode(s); got != want {
			t.Errorf("isErrorCode(%q) = %v", s, got)
		}
	}
}

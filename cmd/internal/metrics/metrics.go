// Package metrics is bookbot's Prometheus metrics and the state its
// health and readiness probes answer from. A Recorder implements
// booking.Observer, bot.Metrics, notices.Metrics, personal.Metrics and digest.Runner's Observe hook, counts
// failed Slack Web API calls from inside slack-go's HTTP client, and serves
// /healthz, /readyz and /metrics. It is the binary's own: the domain
// packages declare the small interfaces it implements and never import it.
package metrics

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/notices"
	"github.com/bookbot/bookbot/personal"
)

// Recorder is what `bookbot run` tells Prometheus. It implements booking.Observer, bot.Metrics, notices.Metrics, personal.Metrics and digest.Runner's
// Observe, and keeps the state /healthz and /readyz answer from. No label ever carries a secret,
// an email address, a booking ID or a URL: endpoints are the booking
// client's route names, Slack methods are Web API method names.
type Recorder struct {
	families []*family // in the order they are written: by name

	apiRequests     *family
	apiDuration     *family
	apiLastStatus   *family
	writes          *family
	refusals        *family
	ackSeconds      *family
	socketConnected *family
	slackErrors     *family
	digestRuns      *family
	noticePolls     *family
	notices         *family
	personal        *family
	leader          *family
	storeErrors     *family
	lastGoodPoll    atomic.Int64 // Unix nanoseconds of the last good read for notices; 0: none yet
	now             func() time.Time

	database   atomic.Pointer[func(context.Context) error] // pinged by /readyz; nil: no database
	lastStatus atomic.Int64                                // of the last booking API answer; 0: none yet
	apiSkew    atomic.Uint64                               // math.Float64bits of the API's clock skew in seconds; NaN: none yet
	socket     socketWatch                                 // what /healthz answers from

	reviewMu       sync.Mutex
	awaitingReview func() (int, error)
}

// noticeKinds and noticeResults are what notices.Watcher reports.
var (
	noticeKinds   = []notices.Kind{notices.New, notices.Cancelled, notices.Moved}
	noticeResults = []string{"posted", "maybe_posted", "failed"}
)

// digestResults are the results digest.Runner.Observe reports.
var digestResults = []string{"posted", "already_posted", "skipped_empty", "failed"}

// envelopeTypes are the Socket Mode envelopes that are acked.
var envelopeTypes = []string{"slash_commands", "interactive", "events_api"}

// New returns a Recorder with every series declared, the Go runtime's and
// the process's included, and nothing counted yet.
func New() *Recorder {
	m := &Recorder{
		apiRequests: newFamily("bookbot_booking_api_requests_total", "counter",
			"Booking API requests by endpoint and HTTP status (\"error\" when no answer came back).",
			"endpoint", "status"),
		apiDuration: newHistogram("bookbot_booking_api_request_duration_seconds",
			"Booking API request latency, until the answer was read, by endpoint.",
			[]float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}, "endpoint"),
		apiLastStatus: newFamily("bookbot_booking_api_last_status", "gauge",
			"HTTP status of the last booking API answer (0: none yet; calls without an answer leave it); 401 makes /readyz fail."),
		writes: newFamily("bookbot_booking_writes_total", "counter",
			"Creates and cancels by outcome (confirmed, not_booked, rate_limited, probably_not_booked, cancelled, …).",
			"op", "outcome"),
		refusals: newFamily("bookbot_rate_limit_refusals_total", "counter",
			"Creates bookbot held back itself, without sending them, to stay within the API's limits."),
		ackSeconds: newHistogram("bookbot_envelope_ack_seconds",
			"Time from receiving a Socket Mode envelope to queueing its ack, by envelope type (Slack wants it within 3 s).",
			[]float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2, 3, 5}, "type"),
		socketConnected: newFamily("bookbot_socket_connected", "gauge",
			"1 while Socket Mode is connected to Slack."),
		slackErrors: newFamily("bookbot_slack_api_errors_total", "counter",
			"Failed Slack Web API calls by method and error: Slack's error code, ratelimited, http_<status> or transport.",
			"method", "error"),
		digestRuns: newFamily("bookbot_digest_runs_total", "counter",
			"Digest runs by result: posted, already_posted, skipped_empty, failed.",
			"result"),
		noticePolls: newFamily("bookbot_notice_polls_total", "counter",
			"Reads of the bookings list for notices, by result: ok or failed.",
			"result"),
		notices: newFamily("bookbot_notices_total", "counter",
			"Booking notices by kind (new, cancelled, moved) and result: posted, maybe_posted (the post's answer was lost; not posted again), failed (Slack refused; tried again).",
			"kind", "result"),
		personal: newFamily("bookbot_personal_messages_total", "counter",
			"Reminders and agendas sent to people by kind (reminder, agenda) and result: sent, maybe_sent (the answer was lost; not sent again), failed (Slack refused; tried again).",
			"kind", "result"),
		leader: newFamily("bookbot_leader", "gauge",
			"1 while this process runs the scheduled work (the digest, notices, reminders, settling writes): always with the embedded store, and on the one replica that leads with PostgreSQL."),
		storeErrors: newFamily("bookbot_store_errors_total", "counter",
			"Statements the database (BOOKBOT_DATABASE_URL) did not carry out; 0 with the embedded store."),
		now: time.Now,
	}
	m.apiSkew.Store(math.Float64bits(math.NaN()))
	// Series without labels exist from the start, as do those whose
	// label values are known in advance.
	for _, f := range []*family{m.apiLastStatus, m.refusals, m.socketConnected, m.leader, m.storeErrors} {
		f.add(0)
	}
	for _, r := range digestResults {
		m.digestRuns.add(0, r)
	}
	for _, k := range []personal.Kind{personal.Reminder, personal.AgendaKind} {
		for _, r := range []string{"sent", "maybe_sent", "failed"} {
			m.personal.add(0, string(k), r)
		}
	}
	m.noticePolls.add(0, "ok")
	m.noticePolls.add(0, "failed")
	for _, k := range noticeKinds {
		for _, r := range noticeResults {
			m.notices.add(0, string(k), r)
		}
	}
	m.ackSeconds.mu.Lock()
	for _, k := range envelopeTypes {
		m.ackSeconds.with([]string{k})
	}
	m.ackSeconds.mu.Unlock()
	m.families = []*family{
		m.apiRequests, m.apiDuration, m.apiLastStatus, m.writes, m.refusals,
		m.ackSeconds, m.socketConnected, m.slackErrors, m.digestRuns, m.noticePolls, m.notices, m.personal, m.leader, m.storeErrors,
		newGaugeFunc("bookbot_notice_seconds_since_good_poll",
			"Seconds since the bookings list was last read for notices (NaN before the first good read, or with notices off).",
			m.sinceGoodPoll),
		newGaugeFunc("bookbot_journal_awaiting_review",
			"Journal entries whose outcome a person still has to review (NaN when the journal cannot be read; 0 without a journal).",
			m.reviewCount),
		newGaugeFunc("bookbot_booking_api_clock_skew_seconds",
			"The booking API's clock minus this machine's, from the Date header of its last answer that had one (NaN before); beyond ±30 s a booking that started there may look cancelled here.",
			func() float64 { return math.Float64frombits(m.apiSkew.Load()) }),
	}
	slices.SortFunc(m.families, func(a, b *family) int { return strings.Compare(a.name, b.name) })
	return m
}

// Request implements booking.Observer.
func (m *Recorder) Request(endpoint string, status int, took time.Duration) {
	label := "error"
	if status > 0 {
		label = strconv.Itoa(status)
	}
	m.apiRequests.add(1, endpoint, label)
	m.apiDuration.observe(took.Seconds(), endpoint)
	if status > 0 { // no answer says nothing about the key
		m.apiLastStatus.set(float64(status))
		m.lastStatus.Store(int64(status))
	}
}

// Wrote implements booking.Observer.
func (m *Recorder) Wrote(op booking.Op, res *booking.Result) {
	if res == nil {
		return
	}
	m.writes.add(1, string(op), string(res.Outcome))
	if res.Held {
		m.refusals.add(1)
	}
}

// ClockSkew implements booking.Observer.
func (m *Recorder) ClockSkew(d time.Duration) {
	m.apiSkew.Store(math.Float64bits(d.Seconds()))
}

// Acked implements bot.Metrics.
func (m *Recorder) Acked(kind string, took time.Duration) {
	m.ackSeconds.observe(took.Seconds(), kind)
}

// Connected implements bot.Metrics.
func (m *Recorder) Connected(up bool) {
	m.socket.set(up)
	if up {
		m.socketConnected.set(1)
	} else {
		m.socketConnected.set(0)
	}
}

// StoreError counts a statement the database did not carry out.
func (m *Recorder) StoreError() { m.storeErrors.add(1) }

// SetLeader says whether this process runs the scheduled work.
func (m *Recorder) SetLeader(leading bool) {
	if leading {
		m.leader.set(1)
	} else {
		m.leader.set(0)
	}
}

// Personal implements personal.Metrics.
func (m *Recorder) Personal(kind personal.Kind, result string) {
	m.personal.add(1, string(kind), result)
}

// NoticePoll implements notices.Metrics.
func (m *Recorder) NoticePoll(ok bool, at time.Time) {
	if !ok {
		m.noticePolls.add(1, "failed")
		return
	}
	m.noticePolls.add(1, "ok")
	m.lastGoodPoll.Store(at.UnixNano())
}

// Notice implements notices.Metrics.
func (m *Recorder) Notice(kind notices.Kind, result string) {
	m.notices.add(1, string(kind), result)
}

func (m *Recorder) sinceGoodPoll() float64 {
	last := m.lastGoodPoll.Load()
	if last == 0 {
		return math.NaN()
	}
	return m.now().Sub(time.Unix(0, last)).Seconds()
}

// DigestRun is digest.Runner's Observe.
func (m *Recorder) DigestRun(result string) { m.digestRuns.add(1, result) }

// slackError counts a failed Slack Web API call.
func (m *Recorder) slackError(method, code string) {
	m.slackErrors.add(1, method, code)
}

// SetAwaitingReview makes bookbot_journal_awaiting_review report f's count.
// f runs at every scrape, so it must be quick; nil reports 0.
func (m *Recorder) SetAwaitingReview(f func() (int, error)) {
	m.reviewMu.Lock()
	defer m.reviewMu.Unlock()
	m.awaitingReview = f
}

func (m *Recorder) reviewCount() float64 {
	m.reviewMu.Lock()
	f := m.awaitingReview
	m.reviewMu.Unlock()
	if f == nil {
		return 0
	}
	n, err := f()
	if err != nil {
		return math.NaN()
	}
	return float64(n)
}

package main

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/bookbot/bookbot/booking"
)

// metrics is what `bookbot run` tells Prometheus, on a registry of its own.
// It implements booking.Observer, bot.Metrics and digest.Runner's Observe,
// and keeps the state /readyz answers from. No label ever carries a secret,
// an email address, a booking ID or a URL: endpoints are the booking
// client's route names, Slack methods are Web API method names.
type metrics struct {
	reg *prometheus.Registry

	apiRequests     *prometheus.CounterVec
	apiDuration     *prometheus.HistogramVec
	apiLastStatus   prometheus.Gauge
	writes          *prometheus.CounterVec
	refusals        prometheus.Counter
	ackSeconds      *prometheus.HistogramVec
	socketConnected prometheus.Gauge
	slackErrors     *prometheus.CounterVec
	digestRuns      *prometheus.CounterVec

	connected  atomic.Bool
	lastStatus atomic.Int64 // of the last booking API answer; 0: none yet
	socket     socketWatch  // what /healthz answers from

	reviewMu       sync.Mutex
	awaitingReview func() (int, error)
}

// digestResults are the results digest.Runner.Observe reports.
var digestResults = []string{"posted", "already_posted", "skipped_empty", "failed"}

// envelopeTypes are the Socket Mode envelopes that are acked.
var envelopeTypes = []string{"slash_commands", "interactive", "events_api"}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		apiRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bookbot_booking_api_requests_total",
			Help: "Booking API requests by endpoint and HTTP status (\"error\" when no answer came back).",
		}, []string{"endpoint", "status"}),
		apiDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "bookbot_booking_api_request_duration_seconds",
			Help:    "Booking API request latency, until the answer was read, by endpoint.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"endpoint"}),
		apiLastStatus: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "bookbot_booking_api_last_status",
			Help: "HTTP status of the last booking API answer (0: none yet; calls without an answer leave it); 401 makes /readyz fail.",
		}),
		writes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bookbot_booking_writes_total",
			Help: "Creates and cancels by outcome (confirmed, not_booked, rate_limited, probably_not_booked, cancelled, …).",
		}, []string{"op", "outcome"}),
		refusals: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "bookbot_rate_limit_refusals_total",
			Help: "Creates bookbot held back itself, without sending them, to stay within the API's limits.",
		}),
		ackSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "bookbot_envelope_ack_seconds",
			Help:    "Time from receiving a Socket Mode envelope to queueing its ack, by envelope type (Slack wants it within 3 s).",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2, 3, 5},
		}, []string{"type"}),
		socketConnected: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "bookbot_socket_connected",
			Help: "1 while Socket Mode is connected to Slack.",
		}),
		slackErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bookbot_slack_api_errors_total",
			Help: "Failed Slack Web API calls by method and error: Slack's error code, ratelimited, http_<status> or transport.",
		}, []string{"method", "error"}),
		digestRuns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bookbot_digest_runs_total",
			Help: "Digest runs by result: posted, already_posted, skipped_empty, failed.",
		}, []string{"result"}),
	}
	for _, r := range digestResults {
		m.digestRuns.WithLabelValues(r)
	}
	for _, k := range envelopeTypes {
		m.ackSeconds.WithLabelValues(k)
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.apiRequests, m.apiDuration, m.apiLastStatus, m.writes, m.refusals,
		m.ackSeconds, m.socketConnected, m.slackErrors, m.digestRuns,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "bookbot_journal_awaiting_review",
			Help: "Journal entries whose outcome a person still has to review (NaN when the journal cannot be read; 0 without a journal).",
		}, m.reviewCount),
	)
	return m
}

// Request implements booking.Observer.
func (m *metrics) Request(endpoint string, status int, took time.Duration) {
	label := "error"
	if status > 0 {
		label = strconv.Itoa(status)
	}
	m.apiRequests.WithLabelValues(endpoint, label).Inc()
	m.apiDuration.WithLabelValues(endpoint).Observe(took.Seconds())
	if status > 0 { // no answer says nothing about the key
		m.apiLastStatus.Set(float64(status))
		m.lastStatus.Store(int64(status))
	}
}

// Wrote implements booking.Observer.
func (m *metrics) Wrote(op booking.Op, res *booking.Result) {
	if res == nil {
		return
	}
	m.writes.WithLabelValues(string(op), string(res.Outcome)).Inc()
	if res.Held {
		m.refusals.Inc()
	}
}

// Acked implements bot.Metrics.
func (m *metrics) Acked(kind string, took time.Duration) {
	m.ackSeconds.WithLabelValues(kind).Observe(took.Seconds())
}

// Connected implements bot.Metrics.
func (m *metrics) Connected(up bool) {
	m.connected.Store(up)
	m.socket.set(up)
	if up {
		m.socketConnected.Set(1)
	} else {
		m.socketConnected.Set(0)
	}
}

// digestRun is digest.Runner's Observe.
func (m *metrics) digestRun(result string) { m.digestRuns.WithLabelValues(result).Inc() }

// slackError counts a failed Slack Web API call.
func (m *metrics) slackError(method, code string) {
	m.slackErrors.WithLabelValues(method, code).Inc()
}

// setAwaitingReview makes bookbot_journal_awaiting_review report f's count.
// f runs at every scrape, so it must be quick; nil reports 0.
func (m *metrics) setAwaitingReview(f func() (int, error)) {
	m.reviewMu.Lock()
	defer m.reviewMu.Unlock()
	m.awaitingReview = f
}

func (m *metrics) reviewCount() float64 {
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

// ready says whether bookbot can serve: Socket Mode connected and the
// booking API not answering 401. reason is a short line for /readyz.
func (m *metrics) ready() (ok bool, reasons []string) {
	if !m.connected.Load() {
		reasons = append(reasons, "socket mode not connected")
	}
	if m.lastStatus.Load() == http.StatusUnauthorized {
		reasons = append(reasons, "booking API answered 401: the key is revoked or invalid")
	}
	return len(reasons) == 0, reasons
}

// live says whether bookbot is worth keeping: false once Socket Mode has
// been down for longer than watchSocket allows, which a restart may fix and
// waiting has not. reason is a line for /healthz.
func (m *metrics) live() (ok bool, reason string) { return m.socket.healthy() }

// watchSocket makes Socket Mode being down for longer than after fail
// /healthz, logging once when it does and once when Socket Mode is back.
// It watches until ctx is done (a shutdown's disconnect is no fault) or
// stop is called; after stop it logs nothing.
func (m *metrics) watchSocket(ctx context.Context, after time.Duration, log *slog.Logger) (stop func()) {
	return m.socket.start(ctx, after, log)
}

// socketUnhealthyAfter is how long Socket Mode may stay down before
// /healthz fails so that an orchestrator restarts bookbot: longer than a
// reconnect when Slack asks for one (a second or two) and than slack-go's
// first few retries of a failed connection. Tests shorten it.
var socketUnhealthyAfter = 2 * time.Minute

// socketWatch turns a Socket Mode connection that stays down into a failing
// liveness probe. The zero value is healthy and watches nothing.
type socketWatch struct {
	mu        sync.Mutex
	ctx       context.Context
	log       *slog.Logger // nil: not watching
	after     time.Duration
	up        bool
	downSince time.Time
	timer     *time.Timer
	gen       int // the current timer's; an older one that fires does nothing
	unhealthy bool
}

func (w *socketWatch) start(ctx context.Context, after time.Duration, log *slog.Logger) (stop func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ctx, w.after, w.log = ctx, after, log
	if !w.up {
		// Not connected yet: the bot has as long to connect as to reconnect.
		w.downSince = time.Now()
		w.armLocked()
	}
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.disarmLocked()
		w.log = nil
	}
}

func (w *socketWatch) set(up bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if up == w.up {
		return // the client reports every failed attempt; the clock runs from the first
	}
	w.up = up
	if !up {
		w.downSince = time.Now()
		w.armLocked()
		return
	}
	w.disarmLocked()
	if w.unhealthy {
		w.unhealthy = false
		if w.log != nil {
			w.log.Info("Socket Mode connected again; /healthz passes", "down_for", time.Since(w.downSince).Round(time.Millisecond).String())
		}
	}
}

func (w *socketWatch) armLocked() {
	if w.log == nil {
		return
	}
	w.disarmLocked()
	gen := w.gen
	w.timer = time.AfterFunc(w.after, func() { w.expired(gen) })
}

func (w *socketWatch) disarmLocked() {
	w.gen++
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
}

func (w *socketWatch) expired(gen int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if gen != w.gen || w.up || w.log == nil || w.ctx.Err() != nil {
		return
	}
	w.unhealthy = true
	w.log.Error("Socket Mode not connected for too long; /healthz fails so that bookbot is restarted",
		"down_since", w.downSince.UTC().Format(time.RFC3339), "limit", w.after.String())
}

func (w *socketWatch) healthy() (bool, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.unhealthy {
		return true, ""
	}
	return false, fmt.Sprintf("socket mode not connected for over %v (since %s): Slack cannot be reached",
		w.after, w.downSince.UTC().Format(time.RFC3339))
}

// handler serves the registry in the Prometheus text format.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

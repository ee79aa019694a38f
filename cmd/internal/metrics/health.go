package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
)

// ready says whether bookbot can serve: Socket Mode connected, the
// database (if any) answering and the booking API not answering 401.
// reasons are short lines for /readyz.
func (m *Recorder) ready(ctx context.Context) (ok bool, reasons []string) {
	if !m.socket.connected() {
		reasons = append(reasons, "socket mode not connected")
	}
	if ping := m.database.Load(); ping != nil {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if err := (*ping)(ctx); err != nil {
			reasons = append(reasons, "database not answering")
		}
	}
	if m.lastStatus.Load() == http.StatusUnauthorized {
		reasons = append(reasons, "booking API answered 401: the key is revoked or invalid")
	}
	return len(reasons) == 0, reasons
}

// SetDatabase makes /readyz fail while ping fails (within a second): a
// replica whose database does not answer cannot book safely.
func (m *Recorder) SetDatabase(ping func(context.Context) error) { m.database.Store(&ping) }

// live says whether bookbot is worth keeping: false once Socket Mode has
// been down for longer than WatchSocket allows, which a restart may fix and
// waiting has not. reason is a line for /healthz.
func (m *Recorder) live() (ok bool, reason string) { return m.socket.healthy() }

// WatchSocket makes Socket Mode being down for longer than after fail
// /healthz, logging once when it does and once when Socket Mode is back.
// Until it is called /healthz passes whatever the connection does. It
// watches until ctx is done (a shutdown's disconnect is no fault) or stop
// is called; after stop it logs nothing.
func (m *Recorder) WatchSocket(ctx context.Context, after time.Duration, log *slog.Logger) (stop func()) {
	return m.socket.start(ctx, after, log)
}

// socketWatch turns a Socket Mode connection that stays down into a failing
// liveness probe. The zero value is healthy and watches nothing.
type socketWatch struct {
	mu        sync.Mutex
	ctx       context.Context
	log       *slog.Logger // nil: not watching
	after     time.Duration
	up        bool
	downSince time.Time
	stopTimer func() bool // the current timer's Stop; nil: none
	gen       int         // the current timer's; an older one that fires does nothing
	unhealthy bool

	// afterFunc is time.AfterFunc (nil), or the timers a test fires.
	afterFunc func(d time.Duration, f func()) (stop func() bool)
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
	fire := func() { w.expired(gen) }
	if w.afterFunc != nil {
		w.stopTimer = w.afterFunc(w.after, fire)
		return
	}
	w.stopTimer = time.AfterFunc(w.after, fire).Stop
}

func (w *socketWatch) disarmLocked() {
	w.gen++
	if w.stopTimer != nil {
		w.stopTimer()
		w.stopTimer = nil
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

// connected says whether Socket Mode is connected now.
func (w *socketWatch) connected() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.up
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

// Handler serves bookbot's probes and metrics:
//
//	GET /healthz  200 "ok" while the process serves; 503 with the reason
//	              once Socket Mode has been down too long (see WatchSocket):
//	              the liveness probe, as a restart may fix that
//	GET /readyz   200 when Socket Mode is connected, the database (see
//	              SetDatabase) answers and the last booking API answer
//	              was not a 401; else 503 with the reasons
//	GET /metrics  Prometheus text format
func (m *Recorder) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		if ok, reason := m.live(); !ok {
			plain(w, http.StatusServiceUnavailable, reason)
			return
		}
		plain(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if ok, reasons := m.ready(r.Context()); !ok {
			plain(w, http.StatusServiceUnavailable, strings.Join(reasons, "\n"))
			return
		}
		plain(w, http.StatusOK, "ready")
	})
	mux.HandleFunc("GET /metrics", m.serveMetrics)
	return mux
}

func plain(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintln(w, text)
}

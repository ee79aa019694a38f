package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"
)

// httpShutdownTimeout bounds how long stopping the listener waits for
// requests in flight (a scrape, a probe).
const httpShutdownTimeout = 5 * time.Second

// startHTTP serves the local HTTP listener on addr (BOOKBOT_HTTP_ADDR; ""
// serves nothing):
//
//	GET /healthz  200 "ok" while the process serves; 503 with the reason
//	              once Socket Mode has been down too long (see watchSocket):
//	              the liveness probe, as a restart may fix that
//	GET /readyz   200 when Socket Mode is connected and the last booking
//	              API answer was not a 401; else 503 with the reasons
//	GET /metrics  Prometheus text format
//
// It returns once the address is bound, logging "http listening" with the
// bound address (port 0 picks a free one); stop shuts it down gracefully.
func startHTTP(addr string, m *metrics, log *slog.Logger) (stop func(), err error) {
	if addr == "" {
		log.Info("http listener off: BOOKBOT_HTTP_ADDR=off")
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) {
			err = op.Err // the address is said once already
		}
		return nil, fmt.Errorf("BOOKBOT_HTTP_ADDR=%s: cannot listen: %w (set another host:port, or off)", addr, err)
	}
	srv := &http.Server{
		Handler:           httpHandler(m),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Error("http listener stopped", "err", err)
		}
	}()
	log.Info("http listening", "addr", ln.Addr().String())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), httpShutdownTimeout)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			log.Warn("http listener: shutdown", "err", err)
			_ = srv.Close()
		}
		<-done
	}, nil
}

func httpHandler(m *metrics) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		if ok, reason := m.live(); !ok {
			plain(w, http.StatusServiceUnavailable, reason)
			return
		}
		plain(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if ok, reasons := m.ready(); !ok {
			plain(w, http.StatusServiceUnavailable, strings.Join(reasons, "\n"))
			return
		}
		plain(w, http.StatusOK, "ready")
	})
	mux.Handle("GET /metrics", m.handler())
	return mux
}

func plain(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintln(w, text)
}

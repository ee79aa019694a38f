package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// httpShutdownTimeout bounds how long stopping the listener waits for
// requests in flight (a scrape, a probe).
const httpShutdownTimeout = 5 * time.Second

// startHTTP serves h, the probes and metrics (metrics.Recorder.Handler), on
// the local HTTP listener at addr (BOOKBOT_HTTP_ADDR; "" serves nothing).
// It returns once the address is bound, logging "http listening" with the
// bound address (port 0 picks a free one); stop shuts it down gracefully.
func startHTTP(addr string, h http.Handler, log *slog.Logger) (stop func(), err error) {
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
		Handler:           h,
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

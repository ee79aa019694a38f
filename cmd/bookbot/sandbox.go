package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
)

// runSandbox serves the in-memory copy of the booking API, seeded with
// sample data, until ctx is done.
func runSandbox(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sandbox", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8787", "listen address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	srv := &http.Server{
		Handler:           bookingtest.New(bookingtest.Options{Seed: true}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, `sandbox booking API (in memory, no real bookings or notifications)
  BOOKING_BASE_URL=%s
  BOOKING_API_KEY=%s
  try: curl -H "Authorization: Bearer %s" %s/api/v1/event-types
`, base, bookingtest.DemoKey, bookingtest.DemoKey, base)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("sandbox: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("sandbox: %w", err)
	}
	return nil
}

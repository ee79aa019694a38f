// Package loopback serves an [http.Handler] on 127.0.0.1 for the in-memory
// fakes (booking/bookingtest, bot/slacktest). It does for them what
// httptest.Server does for tests, without net/http/httptest, because the
// fakes also run inside bookbot itself (`bookbot demo`).
package loopback

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// closeWait bounds how long Close waits for requests still being answered
// before it drops their connections.
const closeWait = 5 * time.Second

// Server is a handler served on a port of 127.0.0.1.
type Server struct {
	// URL is http://127.0.0.1:PORT, without a trailing slash.
	URL string

	srv      *http.Server
	client   *http.Client
	done     chan struct{} // closed when Serve has returned
	accepted atomic.Int64  // connections accepted so far
}

// Start serves h on a free port of 127.0.0.1 until Close. It panics if no
// port can be had, as httptest.NewServer does: the fakes have no better
// answer for a machine without a loopback interface.
func Start(h http.Handler) *Server {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic("loopback: failed to listen on 127.0.0.1: " + err.Error())
	}
	s := &Server{
		URL:    "http://" + ln.Addr().String(),
		srv:    &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second},
		client: &http.Client{Transport: &http.Transport{}},
		done:   make(chan struct{}),
	}
	s.srv.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.accepted.Add(1)
		}
	}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s
}

// Accepted is how many connections the server has accepted so far: what
// its clients dialled, reused connections aside.
func (s *Server) Accepted() int64 { return s.accepted.Load() }

// Client returns an HTTP client for the server whose idle connections
// Close closes.
func (s *Server) Client() *http.Client { return s.client }

// Close stops accepting connections, closes the idle ones and waits for the
// requests being answered (at most a few seconds, then it drops them).
// Connections a handler has taken over (WebSockets) are the handler's to
// close. Close is safe to call more than once.
func (s *Server) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), closeWait)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
	}
	<-s.done
	s.client.CloseIdleConnections()
}

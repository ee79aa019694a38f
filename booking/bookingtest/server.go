package bookingtest

import (
	"net/http"
	"time"

	"github.com/bookbot/bookbot/internal/loopback"
)

// TB is the part of testing.TB that NewServer uses; *testing.T and
// *testing.B satisfy it. The package declares it rather than importing
// testing, so that bookbot, which runs the Sandbox for `bookbot demo` and
// `bookbot sandbox`, does not link the testing package.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Cleanup(func())
}

// Server is a running Sandbox for tests, closed by t.Cleanup.
type Server struct {
	*Sandbox
	URL string // base URL without /api/v1; clients append it themselves
	Key string // the seeded owner's key (DemoKey); "" WithoutSeed

	srv *loopback.Server
}

// NewServer starts a seeded Sandbox for t. A request to a route the API
// text does not have answers as the service does (404, or for a GET under
// /bookings/ the list) and also fails t, because a client calling such a
// route is a bug the answer alone could hide.
func NewServer(t TB, opts ...func(*Options)) *Server {
	t.Helper()
	o := Options{Seed: true}
	for _, opt := range opts {
		opt(&o)
	}
	sb := New(o)
	sb.lock()
	sb.onUnknownRoute = func(method, path, answered string) {
		t.Errorf("bookingtest: request to a route the API text does not have, %s %s (answered %s)", method, path, answered)
	}
	sb.mu.Unlock()
	srv := loopback.Start(sb)
	t.Cleanup(func() {
		// Hung handlers would keep Close waiting; let them go first.
		sb.release()
		srv.Close()
	})
	s := &Server{Sandbox: sb, URL: srv.URL, srv: srv}
	if o.Seed {
		s.Key = DemoKey
	}
	return s
}

// Client returns an HTTP client for the server, closed with it.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// WithClock makes NewServer use now as its clock.
func WithClock(now func() time.Time) func(*Options) {
	return func(o *Options) { o.Now = now }
}

// WithoutSeed makes NewServer start empty: no owners, event types or bookings.
func WithoutSeed() func(*Options) {
	return func(o *Options) { o.Seed = false }
}

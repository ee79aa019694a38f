package digest

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
)

// published is one call to a recordingPublisher.
type published struct {
	Channel       string
	Digest        Digest
	IncludeEmails bool
	// failure notices
	Failure bool
	Day     time.Time
	Reason  string
}

// recordingPublisher records what it is asked to post. digestErr, when set,
// decides each digest post's outcome; block, when set, makes posts wait for
// the context.
type recordingPublisher struct {
	mu        sync.Mutex
	posts     []published
	digestErr func(n int) error
	block     bool
	started   chan struct{} // receives once per post, when set
}

func (p *recordingPublisher) PublishDigest(ctx context.Context, channel string, d Digest, includeEmails bool) error {
	if p.started != nil {
		p.started <- struct{}{}
	}
	if p.block {
		<-ctx.Done()
		return ctx.Err()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.digests())
	if p.digestErr != nil {
		if err := p.digestErr(n); err != nil {
			return err
		}
	}
	p.posts = append(p.posts, published{Channel: channel, Digest: d, IncludeEmails: includeEmails})
	return nil
}

func (p *recordingPublisher) PublishFailure(ctx context.Context, channel string, day time.Time, zone *time.Location, reason string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.posts = append(p.posts, published{Channel: channel, Failure: true, Day: day, Reason: reason})
	return nil
}

func (p *recordingPublisher) digests() []published { // callers hold mu
	var out []published
	for _, x := range p.posts {
		if !x.Failure {
			out = append(out, x)
		}
	}
	return out
}

func (p *recordingPublisher) Digests() []published {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.digests()
}

func (p *recordingPublisher) Failures() []published {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []published
	for _, x := range p.posts {
		if x.Failure {
			out = append(out, x)
		}
	}
	return out
}

// memSource is an in-memory Source.
type memSource struct {
	mu       sync.Mutex
	bookings []booking.Booking
	types    []booking.EventType
	calls    int
}

func (s *memSource) Bookings(context.Context) ([]booking.Booking, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	return s.bookings, nil
}

func (s *memSource) EventTypes(context.Context) ([]booking.EventType, error) {
	return s.types, nil
}

// logRecorder is a slog.Handler that keeps messages and signals each one.
type logRecorder struct {
	mu   sync.Mutex
	msgs []string
	ch   chan string
}

func newLogRecorder() *logRecorder { return &logRecorder{ch: make(chan string, 1024)} }

func (h *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logRecorder) WithGroup(string) slog.Handler            { return h }
func (h *logRecorder) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.msgs = append(h.msgs, r.Message)
	h.mu.Unlock()
	select {
	case h.ch <- r.Message:
	default:
	}
	return nil
}

func (h *logRecorder) Messages() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.msgs...)
}

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p))
	return len(p), nil
}

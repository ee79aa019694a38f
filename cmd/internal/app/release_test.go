package app

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/bookbot/bookbot/cmd/internal/metrics"
)

// fakeTimers stand in for time.AfterFunc: a timer fires when the test says.
type fakeTimers struct {
	mu     sync.Mutex
	timers []*fakeTimer
}

type fakeTimer struct {
	mu    sync.Mutex
	fn    func()
	armed bool
}

func (f *fakeTimers) after(_ time.Duration, fn func()) timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &fakeTimer{fn: fn, armed: true}
	f.timers = append(f.timers, t)
	return t
}

func (t *fakeTimer) Reset(time.Duration) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	was := t.armed
	t.armed = true
	return was
}

func (t *fakeTimer) Stop() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	was := t.armed
	t.armed = false
	return was
}

// fire runs every armed timer's function, as the quiet time passing would.
func (f *fakeTimers) fire() {
	f.mu.Lock()
	ts := append([]*fakeTimer(nil), f.timers...)
	f.mu.Unlock()
	for _, t := range ts {
		t.mu.Lock()
		armed := t.armed
		t.armed = false
		t.mu.Unlock()
		if armed {
			t.fn()
		}
	}
}

func newTestRelease() (*quietRelease, *fakeTimers, *int) {
	timers := &fakeTimers{}
	released := new(int)
	q := &quietRelease{quiet: time.Minute, release: func() { *released++ }, after: timers.after}
	return q, timers, released
}

// Memory is released once after each spell of work, however many
// envelopes the spell had, and not again while nothing happens.
func TestQuietReleaseAfterEachSpellOfWork(t *testing.T) {
	q, timers, released := newTestRelease()
	w := ackWatch{metrics.New(), q}
	for range 50 {
		w.Acked("slash_commands", time.Millisecond)
	}
	if *released != 0 {
		t.Fatalf("%d releases during the spell, want none", *released)
	}
	timers.fire()
	timers.fire() // quiet goes on
	if *released != 1 {
		t.Fatalf("%d releases after the first spell, want 1", *released)
	}
	w.Acked("interactive", time.Millisecond)
	timers.fire()
	timers.fire()
	if *released != 2 {
		t.Errorf("%d releases after the second spell, want 2", *released)
	}
	if n := len(timers.timers); n != 1 {
		t.Errorf("%d timers made, want 1, reset for each envelope", n)
	}
}

// A bot that stops before it was quiet long enough releases nothing, nor
// after an envelope acked while it stops.
func TestQuietReleaseStops(t *testing.T) {
	q, timers, released := newTestRelease()
	q.busy()
	q.stop()
	q.busy()
	timers.fire()
	if *released != 0 {
		t.Errorf("%d releases after stop, want none", *released)
	}
	// Stopped before any work: nothing is armed either.
	q, timers, released = newTestRelease()
	q.stop()
	q.busy()
	timers.fire()
	if *released != 0 || len(timers.timers) != 0 {
		t.Errorf("%d releases and %d timers after stop, want none", *released, len(timers.timers))
	}
}

// The release closes the connections a burst left idle: kept, they would
// keep their memory. A connection open to an httptest server is closed by
// the time the release is over.
func TestQuietReleaseClosesIdleConnections(t *testing.T) {
	closed := make(chan struct{}, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			closed <- struct{}{}
		}
	}
	srv.Start()
	defer srv.Close()
	client := &http.Client{Transport: newSlackTransport()}
	res, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close() // the connection goes back to the pool, idle

	timers := &fakeTimers{}
	q := newQuietRelease(time.Minute, client.CloseIdleConnections)
	q.after = timers.after
	q.busy()
	timers.fire()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the idle connection was still open after the release")
	}
}

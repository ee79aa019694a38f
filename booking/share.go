package booking

import (
	"context"
	"slices"
	"sync"
)

// sharedList lets calls made while one list request (GET /bookings, GET
// /event-types) is in flight wait for its answer instead of each sending
// their own: a burst of `/booking list` commands costs the API one request
// of each, not hundreds. A call made after the answer came asks anew, so a
// list is never older than the call.
//
// A caller never gets a bookings list that was asked for before one of this
// client's writes finished (forget ends the sharing at the start and the end
// of every write), so a person who sees "Booked." and then lists sees the
// booking.
type sharedList[T any] struct {
	mu  sync.Mutex
	cur *listFlight[T]
}

// listFlight is one list request and the callers waiting for it. It runs on
// a context of its own, cancelled when the last caller stops waiting, so one
// caller giving up does not fail the others.
type listFlight[T any] struct {
	done    chan struct{}
	list    []T
	err     error
	panic   any // what fetch panicked with, if it did
	waiters int
	cancel  context.CancelFunc
}

// do returns the answer of the flight in progress, starting one with fetch
// when there is none. Every caller gets a copy of the list of its own.
func (s *sharedList[T]) do(ctx context.Context, fetch func(context.Context) ([]T, error)) ([]T, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	f := s.cur
	if f == nil {
		fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		f = &listFlight[T]{done: make(chan struct{}), cancel: cancel}
		s.cur = f
		go func() {
			var list []T
			var err error
			panicked := true
			defer func() {
				// A panic is handed to every caller, on its own goroutine,
				// where the bot recovers and logs it as it did before the
				// list was shared.
				var p any
				if panicked {
					p = recover()
				}
				cancel()
				s.mu.Lock()
				f.list, f.err, f.panic = list, err, p
				s.drop(f)
				s.mu.Unlock()
				close(f.done)
			}()
			list, err = fetch(fctx)
			panicked = false
		}()
	}
	f.waiters++
	s.mu.Unlock()

	select {
	case <-f.done:
		if f.panic != nil {
			panic(f.panic)
		}
		if f.err != nil {
			return nil, f.err
		}
		return slices.Clone(f.list), nil
	case <-ctx.Done():
		s.mu.Lock()
		if f.waiters--; f.waiters == 0 {
			f.cancel()
			s.drop(f)
		}
		s.mu.Unlock()
		return nil, ctx.Err()
	}
}

// forget makes the next call start a flight of its own.
func (s *sharedList[T]) forget() {
	s.mu.Lock()
	s.cur = nil
	s.mu.Unlock()
}

// drop ends sharing f. s.mu is held.
func (s *sharedList[T]) drop(f *listFlight[T]) {
	if s.cur == f {
		s.cur = nil
	}
}

package booking

import (
	"context"
	"slices"
	"sync"
	"time"
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
	now    func() time.Time // stamps a flight's start; nil: time.Now
	mu     sync.Mutex
	cur    *listFlight[T]
	seq    uint64           // of the last flight started
	gen    uint64           // one more at every forget
	keep   bool             // whether latest is kept: only once a Recent reader exists
	latest *recentAnswer[T] // the last good answer, unless a write began since it was asked for
}

// recentAnswer is a flight's good answer, kept for Recent readers.
type recentAnswer[T any] struct {
	seq   uint64
	asked time.Time // when its request was started
	list  []T
}

// listFlight is one list request and the callers waiting for it. It runs on
// a context of its own, cancelled when the last caller stops waiting, so one
// caller giving up does not fail the others.
type listFlight[T any] struct {
	seq     uint64
	gen     uint64
	asked   time.Time
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
	list, _, _, err := s.join(ctx, fetch)
	return list, err
}

// join is do, also returning the flight's sequence number and when its
// request was started.
func (s *sharedList[T]) join(ctx context.Context, fetch func(context.Context) ([]T, error)) ([]T, uint64, time.Time, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, time.Time{}, err
	}
	s.mu.Lock()
	f := s.cur
	if f == nil {
		fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		s.seq++
		f = &listFlight[T]{seq: s.seq, gen: s.gen, asked: s.clock(), done: make(chan struct{}), cancel: cancel}
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
				if s.keep && err == nil && p == nil && f.gen == s.gen && (s.latest == nil || s.latest.seq < f.seq) {
					s.latest = &recentAnswer[T]{seq: f.seq, asked: f.asked, list: list}
				}
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
			return nil, 0, time.Time{}, f.err
		}
		return slices.Clone(f.list), f.seq, f.asked, nil
	case <-ctx.Done():
		s.mu.Lock()
		if f.waiters--; f.waiters == 0 {
			f.cancel()
			s.drop(f)
		}
		s.mu.Unlock()
		return nil, 0, time.Time{}, ctx.Err()
	}
}

// recent returns a copy of the latest good answer when its request was
// started at or after since and it is newer than the answer numbered
// after; otherwise it joins or starts a flight as do does. It also
// returns the answer's number and when its request was started.
func (s *sharedList[T]) recent(ctx context.Context, after uint64, since time.Time, fetch func(context.Context) ([]T, error)) ([]T, uint64, time.Time, error) {
	s.mu.Lock()
	l := s.latest
	s.mu.Unlock()
	if l != nil && l.seq > after && !l.asked.Before(since) {
		if err := ctx.Err(); err != nil {
			return nil, 0, time.Time{}, err
		}
		return slices.Clone(l.list), l.seq, l.asked, nil
	}
	return s.join(ctx, fetch)
}

func (s *sharedList[T]) clock() time.Time {
	if s.now == nil {
		return time.Now()
	}
	return s.now()
}

// forget makes the next call start a flight of its own, and no answer
// asked for before it is given to a Recent reader.
func (s *sharedList[T]) forget() {
	s.mu.Lock()
	s.cur = nil
	s.gen++
	s.latest = nil
	s.mu.Unlock()
}

// Recent reads the bookings list for one periodic reader (the reminders,
// the notices): it takes the list this client last read for anyone when
// that read was asked for within maxAge and after this reader's previous
// list, and no write through the client has begun since; otherwise it
// reads (sharing a read in flight, as Bookings does). Reminders and notices
// that look at about the same moments then cost the API one read between
// them, not one each, whatever the number of people with reminders.
//
// Each reader needs a Recent of its own: it remembers the reader's
// previous list, which is never handed to it twice.
type Recent struct {
	c      *Client
	maxAge time.Duration

	mu   sync.Mutex
	last uint64 // the sequence number of the list this reader had last
}

// Recent returns a reader of lists at most maxAge old (see Recent).
func (c *Client) Recent(maxAge time.Duration) *Recent {
	c.lists.mu.Lock()
	c.lists.keep = true
	c.lists.mu.Unlock()
	return &Recent{c: c, maxAge: maxAge}
}

// Bookings is Client.Bookings, or a copy of a list read for someone else
// within maxAge.
func (r *Recent) Bookings(ctx context.Context) ([]Booking, error) {
	list, _, err := r.BookingsAsked(ctx)
	return list, err
}

// BookingsAsked is Bookings, also returning when the list was asked for
// (on the client's clock): up to maxAge before the call, for a list read
// for someone else. What the list no longer shows was gone by then, not by
// now.
func (r *Recent) BookingsAsked(ctx context.Context) ([]Booking, time.Time, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.c
	list, seq, asked, err := c.lists.recent(ctx, r.last, c.now().Add(-r.maxAge), c.readBookings)
	if err != nil {
		if err == ctx.Err() {
			return nil, time.Time{}, c.transportError(ctx, bookingsEndpoint, err)
		}
		return nil, time.Time{}, err
	}
	r.last = seq
	return list, asked, nil
}

// drop ends sharing f. s.mu is held.
func (s *sharedList[T]) drop(f *listFlight[T]) {
	if s.cur == f {
		s.cur = nil
	}
}

// EventTypes is Client.EventTypes, so a Recent can stand where a client
// is read.
func (r *Recent) EventTypes(ctx context.Context) ([]EventType, error) {
	return r.c.EventTypes(ctx)
}

package booking

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// Owner is the calendar label of the owner's key (BOOKING_API_KEY).
const Owner = "owner"

// Calendars keeps one Client per connected person's key, made on demand
// and kept until the key is dropped, so each calendar has its own shared list
// reads and its own count of creates per event type. Its clients share
// one HTTP client (and so its connections) and one Limiter.
type Calendars struct {
	base    string
	opts    []Option
	limiter Limiter
	refused func(label string, key Key)

	mu      sync.Mutex
	clients map[string]*kept
}

type kept struct {
	c   *Client
	key Key
	id  string
}

// NewCalendars returns the clients of the API at baseURL, each made with
// opts. limiter is the limiter of every calendar's creates, shared by them
// all (and by the owner's client): the API counts attempts a minute per
// IP address, so calendars share that limit, and per event type, which
// is each calendar's own (see ForCalendar). refused is told of every 401,
// with the calendar and the key it refused, whichever client had it.
func NewCalendars(baseURL string, limiter Limiter, refused func(label string, key Key), opts ...Option) *Calendars {
	p := &Calendars{
		base: baseURL, limiter: limiter, refused: refused,
		clients: map[string]*kept{},
		opts:    append([]Option{WithHTTPClient(&http.Client{Timeout: 30 * time.Second, Transport: newTransport()})}, opts...),
	}
	return p
}

// For returns the client of label's calendar, named id (see
// WithCalendar), acting with key, made now if none is kept for that key;
// its 401s are told to the refused given to NewCalendars. A client is kept
// as long as the bot keeps its calendar (with the calendar's event types
// and shared reads), until Drop.
func (p *Calendars) For(label, id string, key Key) (*Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if k, ok := p.clients[label]; ok && k.key.Equal(key) && k.id == id {
		return k.c, nil
	}
	refused := func() {
		if p.refused != nil {
			p.refused(label, key)
		}
	}
	c, err := NewClient(p.base, key, append(p.opts, WithCalendar(label, id), WithRefused(refused), WithLimiter(ForCalendar(p.limiter, id)))...)
	if err != nil {
		return nil, err
	}
	p.clients[label] = &kept{c: c, key: key, id: id}
	return c, nil
}

// Drop lets go of label's client: its key was disconnected or refused.
func (p *Calendars) Drop(label string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.clients, label)
}

// CloseIdleConnections closes the idle connections of every client.
func (p *Calendars) CloseIdleConnections() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, k := range p.clients {
		k.c.CloseIdleConnections()
	}
}

// ForCalendar is l counting one calendar's creates per event type apart
// from every other calendar's, as the API does (an event type is one
// account's): calendar is its ID, so two people on one calendar share its
// counts, and a hold after a 429 of an event type's limit is that
// calendar's. The limit a minute, and a hold of every create after a 429
// of it, stay shared: the API counts those per IP address.
func ForCalendar(l Limiter, calendar string) Limiter {
	if calendar == Owner || calendar == "" {
		return l
	}
	return calendarLimiter{l, calendar + "\x00"}
}

type calendarLimiter struct {
	Limiter
	prefix string
}

func (c calendarLimiter) Reserve(ctx context.Context, eventType string) (time.Duration, bool, error) {
	return c.Limiter.Reserve(ctx, c.prefix+eventType)
}

func (c calendarLimiter) Throttled(ctx context.Context, eventType string, retryAfter time.Duration) (time.Duration, bool, error) {
	return c.Limiter.Throttled(ctx, c.prefix+eventType, retryAfter)
}

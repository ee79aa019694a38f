// Package booking is the client of the owner-authenticated booking API. Every
// call bookbot makes to the API goes through a Client.
//
// The API has no sandbox and no idempotency, and a create or cancel sends real
// notifications, so the client never retries a write: it classifies the
// outcome and, when an answer is unclear, reconciles by listing bookings.
package booking

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/bookbot/bookbot/internal/pause"
)

// MaxListed is the most bookings GET /bookings returns. A list this long may
// be cut short: later bookings exist but are not shown.
const MaxListed = 100

// maxBody caps what is read of any answer; a full booking list is ~30 kB.
const maxBody = 4 << 20

// Client talks to the booking API. It is safe for concurrent use.
type Client struct {
	base      *url.URL // {base_url}/api/v1/
	key       KeySource
	http      *http.Client
	backoff   Backoff
	limiter   Limiter
	sleep     func(context.Context, time.Duration) error
	now       func() time.Time
	log       *slog.Logger
	userAgent string
	journal   Journal
	observer  Observer
	dryRun    bool
	lists     sharedList[Booking]
	types     sharedList[EventType]
	clock     apiClock
	kept      keptTypes
	// reconcileTimeout bounds the listing that settles an unclear write; it
	// runs even when the caller's context is already done.
	reconcileTimeout time.Duration
	// writeTimeout bounds a create's or cancel's one request, on its own.
	writeTimeout time.Duration
	// calendar labels the calendar the key acts on in the journal, and
	// calendarID names it; refused is told of every 401 (see
	// WithCalendar, WithRefused).
	calendar, calendarID string
	onRefused            func()
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the HTTP client (default: one with a 30 s timeout
// that keeps up to 16 idle connections per host). The client uses a copy
// that follows no redirect, whatever h's CheckRedirect says; h itself is
// left as it is. A nil h keeps the default.
func WithHTTPClient(h *http.Client) Option {
	return func(c *Client) {
		if h != nil {
			c.http = h
		}
	}
}

// WithLogger sets the logger for retries and request outcomes.
func WithLogger(l *slog.Logger) Option { return func(c *Client) { c.log = l } }

// WithBackoff sets how reads are retried.
func WithBackoff(b Backoff) Option { return func(c *Client) { c.backoff = b } }

// WithLimiter sets the limiter in front of creates (default: a Guard with
// DefaultLimits on the client's clock). Replicas that share the API's
// limits need a limiter they share. A nil l keeps the default.
func WithLimiter(l Limiter) Option { return func(c *Client) { c.limiter = l } }

// WithClock sets the clock used to refuse slots that have already started,
// and against which the booking API's clock is measured (see Skew).
func WithClock(now func() time.Time) Option { return func(c *Client) { c.now = now } }

// WithSleep replaces the wait between read retries; tests use it to record
// delays instead of waiting.
func WithSleep(sleep func(context.Context, time.Duration) error) Option {
	return func(c *Client) { c.sleep = sleep }
}

// WithCalendar labels the calendar the client's key acts on ("owner", or
// the Slack user ID of a person who connected their own) and names it by
// id, the same for every key of it bookbot holds ("owner" for the owner's
// calendar, whoever connected its key): the journal records both with
// every write, never the key, and finds an earlier create of the same
// booking on the same calendar by id, whoever asked through whichever key.
func WithCalendar(label, id string) Option {
	return func(c *Client) { c.calendar, c.calendarID = label, id }
}

// WithRefused calls refused whenever the API answers 401: the key was
// revoked or rotated. It must be quick.
func WithRefused(refused func()) Option { return func(c *Client) { c.onRefused = refused } }

// Calendar is the label WithCalendar gave the client.
func (c *Client) Calendar() string { return c.calendar }

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// newTransport keeps more idle connections than net/http's default of two
// per host, so that reads made at once (a modal's slots while others list)
// reuse connections instead of each dialling, and handshaking, anew.
func newTransport() http.RoundTripper {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return http.DefaultTransport // replaced, say by instrumentation: keep it
	}
	t = t.Clone()
	t.MaxIdleConnsPerHost = 16
	return t
}

// NewClient returns a client for the API at baseURL ({base_url}; the client
// appends /api/v1 itself).
func NewClient(baseURL string, key KeySource, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("booking API base URL %q must be an absolute http(s) URL", baseURL)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		// Credentials belong in the key, never in a URL that may be logged.
		return nil, errors.New("booking API base URL must not carry credentials, a query or a fragment")
	}
	if key == nil {
		return nil, errors.New("booking API key is not set")
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/api/v1/"
	u.RawPath = ""
	c := &Client{
		base:             u,
		key:              key,
		http:             &http.Client{Timeout: 30 * time.Second, Transport: newTransport()},
		backoff:          DefaultBackoff,
		sleep:            pause.For,
		now:              time.Now,
		log:              slog.New(slog.DiscardHandler),
		observer:         nopObserver{},
		userAgent:        "bookbot",
		reconcileTimeout: 30 * time.Second,
		writeTimeout:     30 * time.Second,
	}
	for _, opt := range opts {
		opt(c)
	}
	// Following a redirect would resend the key to another port or over
	// plain http on the same host (net/http keeps Authorization there), and
	// a 307 would resend an attendee's form to wherever it points, whose
	// answer bookbot would then take for the API's.
	hc := *c.http
	hc.CheckRedirect = followNoRedirect
	c.http = &hc
	if c.limiter == nil {
		c.limiter = NewGuard(DefaultLimits, c.now)
	}
	c.lists.now = c.now
	return c, nil
}

// followNoRedirect makes the HTTP client return a 3xx as it came.
func followNoRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Holds reports whether key is the key the client acts with now (its
// file's current key, for a KeyFile), compared in constant time: whether
// a key someone connects is this calendar's.
func (c *Client) Holds(key Key) bool {
	k, err := c.key.Key()
	return err == nil && !k.IsZero() && k.Equal(key)
}

// CloseIdleConnections closes the connections kept for reuse, as
// http.Client.CloseIdleConnections does.
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// EventTypes lists the owner's event types (GET /event-types). Removed types
// are not listed. Calls made while a list is being fetched share its answer
// (see sharedList).
func (c *Client) EventTypes(ctx context.Context) ([]EventType, error) {
	types, err := c.types.do(ctx, c.eventTypes)
	if err != nil && err == ctx.Err() {
		return nil, c.transportError(ctx, eventTypesEndpoint, err)
	}
	return types, err
}

var eventTypesEndpoint = endpoint{"GET", "event-types", "GET /event-types"}

func (c *Client) eventTypes(ctx context.Context) ([]EventType, error) {
	var out wireEventTypes
	if err := c.read(ctx, eventTypesEndpoint, nil, &out); err != nil {
		return nil, err
	}
	return out.EventTypes, nil
}

// Slots lists the free slots of one event type in the next 14 days
// (GET /slots). A slot is not a reservation.
func (c *Client) Slots(ctx context.Context, eventType string) ([]Slot, error) {
	if strings.TrimSpace(eventType) == "" {
		return nil, errors.New("an event type is required to list slots")
	}
	var out wireSlots
	q := url.Values{"event_type": {eventType}}
	if err := c.read(ctx, endpoint{"GET", "slots", "GET /slots"}, q, &out); err != nil {
		return nil, err
	}
	slots := make([]Slot, 0, len(out.Slots))
	for _, w := range out.Slots {
		s, err := w.slot(eventType)
		if err != nil {
			return nil, fmt.Errorf("booking API: GET /slots: %w: %w", ErrBadResponse, err)
		}
		slots = append(slots, s)
	}
	return slots, nil
}

// Bookings lists up to MaxListed upcoming confirmed bookings, ordered by
// start (GET /bookings). A list of MaxListed may be incomplete. Calls made
// while a list is being fetched share its answer (see sharedList).
//
// The API lists a booking its attendee rescheduled with a null event type.
// Such a booking gets the event type it was last listed with on this
// client's calendar: by this client, or by any process whose list the
// TypeStore kept (WithTypeStore); one never listed with one (a legacy
// record) stays null.
func (c *Client) Bookings(ctx context.Context) ([]Booking, error) {
	list, err := c.lists.do(ctx, c.readBookings)
	if err != nil && err == ctx.Err() {
		return nil, c.transportError(ctx, bookingsEndpoint, err)
	}
	return list, err
}

var bookingsEndpoint = endpoint{"GET", "bookings", "GET /bookings"}

// readBookings is bookings for a read: what it shows is kept at once.
func (c *Client) readBookings(ctx context.Context) ([]Booking, error) { return c.bookings(ctx, true) }

// bookings fetches the list itself; settling a write needs a list asked
// for after the write, never one already in flight. keep writes what the
// list shows of its bookings' event types to the TypeStore now; a write's
// lists leave that to the next read, so that the person waiting for the
// outcome does not wait for the store too.
func (c *Client) bookings(ctx context.Context, keep bool) ([]Booking, error) {
	var out wireBookings
	if err := c.read(ctx, bookingsEndpoint, nil, &out); err != nil {
		return nil, err
	}
	list := make([]Booking, 0, len(out.Bookings))
	for _, w := range out.Bookings {
		b, err := w.booking()
		if err != nil {
			return nil, fmt.Errorf("booking API: GET /bookings: %w: %w", ErrBadResponse, err)
		}
		list = append(list, b)
	}
	c.kept.fill(ctx, c.keptAs(), c.log, list, keep)
	return list, nil
}

// endpoint is one API route: method, path under /api/v1/ (escaped), and the
// name used in logs and errors, which never carries an ID or a query.
type endpoint struct {
	method, path, name string
}

// Backoff says how reads are retried: up to Attempts tries in all, waiting a
// random time up to Base·2ⁿ (capped at Max) between them. A Retry-After up to
// Max is honoured; a longer one ends the retries.
type Backoff struct {
	Attempts int
	Base     time.Duration
	Max      time.Duration
}

// DefaultBackoff retries a read three times within about ten seconds.
var DefaultBackoff = Backoff{Attempts: 4, Base: 250 * time.Millisecond, Max: 4 * time.Second}

// read performs a GET, retrying what is worth retrying.
func (c *Client) read(ctx context.Context, ep endpoint, q url.Values, out any) error {
	attempts := max(c.backoff.Attempts, 1)
	for n := 0; ; n++ {
		_, err := c.once(ctx, ep, q, nil, out)
		if err == nil {
			return nil
		}
		if n+1 >= attempts {
			return err
		}
		wait, reason, ok := c.retryAfter(ctx, n, err)
		if !ok {
			return err
		}
		c.log.LogAttrs(ctx, slog.LevelWarn, "booking API read failed, retrying",
			slog.String("endpoint", ep.name), slog.String("reason", reason),
			slog.Int("attempt", n+1), slog.Duration("wait", wait))
		if err := c.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// retryAfter decides whether a failed read is retried, after how long, and why.
func (c *Client) retryAfter(ctx context.Context, n int, err error) (time.Duration, string, bool) {
	if ctx.Err() != nil {
		return 0, "", false // the caller gave up
	}
	var reason string
	var apiErr *APIError
	switch {
	case errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusTooManyRequests:
		if apiErr.RetryAfter > c.backoff.Max {
			return 0, "", false // the caller is told how long to wait instead
		}
		if apiErr.RetryAfter > 0 {
			return apiErr.RetryAfter, "429 with Retry-After", true
		}
		reason = "429"
	case errors.As(err, &apiErr) && apiErr.StatusCode >= 500:
		reason = strconv.Itoa(apiErr.StatusCode)
	case errors.As(err, &apiErr) && apiErr.StatusCode/100 == 2:
		// A success the client cannot read ({"error":"upstream timeout"},
		// an HTML page, a body cut short) is what a proxy or an upstream
		// answers for a moment, as with a 5xx; a read is safe to repeat.
		reason = strconv.Itoa(apiErr.StatusCode) + " that could not be read"
	case errors.Is(err, ErrTransport):
		reason = "transport: " + errors.Unwrap(err).Error()
	default:
		return 0, "", false
	}
	ceiling := min(c.backoff.Max, c.backoff.Base<<min(n, 30))
	if ceiling <= 0 {
		return 0, reason, true
	}
	return rand.N(ceiling + 1), reason, true // full jitter
}

// once makes exactly one request and decodes a 2xx JSON answer into out. A
// non-nil form makes it a form-encoded POST.
func (c *Client) once(ctx context.Context, ep endpoint, q url.Values, form url.Values, out any) (int, error) {
	key, err := c.key.Key()
	if err != nil {
		return 0, err
	}
	target := c.base.String() + ep.path
	if q != nil {
		target += "?" + q.Encode()
	}
	var body io.Reader
	if ep.method == http.MethodPost {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, ep.method, target, body)
	if err != nil {
		return 0, fmt.Errorf("booking API: %s: %w", ep.name, err)
	}
	req.Header.Set("Authorization", key.authorization())
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}

	start, sent := time.Now(), c.now()
	resp, err := c.http.Do(req)
	if err != nil {
		c.observer.Request(ep.name, 0, time.Since(start))
		return 0, c.transportError(ctx, ep, err)
	}
	defer resp.Body.Close()
	c.measureClock(ctx, resp.Header.Get("Date"), sent, c.now())
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	took := time.Since(start)
	c.observer.Request(ep.name, resp.StatusCode, took)
	if err != nil {
		return resp.StatusCode, c.transportError(ctx, ep, err)
	}
	c.log.LogAttrs(ctx, slog.LevelDebug, "booking API call",
		slog.String("endpoint", ep.name), slog.Int("status", resp.StatusCode),
		slog.Duration("took", took))
	if len(raw) > maxBody {
		return resp.StatusCode, &APIError{Endpoint: ep.name, StatusCode: resp.StatusCode, Sample: "answer larger than 4 MiB"}
	}

	if resp.StatusCode == http.StatusUnauthorized && c.onRefused != nil {
		c.onRefused()
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, errorFrom(ep, resp, raw, key, c.now())
	}
	if !isJSON(resp.Header.Get("Content-Type")) {
		return resp.StatusCode, &APIError{Endpoint: ep.name, StatusCode: resp.StatusCode, Sample: sanitize(raw, key)}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return resp.StatusCode, &APIError{Endpoint: ep.name, StatusCode: resp.StatusCode, Sample: sanitize(raw, key)}
	}
	if s, ok := out.(shaped); ok {
		if lacks := s.misshapen(); lacks != "" {
			return resp.StatusCode, &APIError{Endpoint: ep.name, StatusCode: resp.StatusCode, Lacks: lacks, Sample: sanitize(raw, key)}
		}
	}
	return resp.StatusCode, nil
}

// transportError keeps the context's error when the caller gave up, as it
// says more than the transport's.
func (c *Client) transportError(ctx context.Context, ep endpoint, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the URL adds nothing and may be long
	}
	var ne net.Error
	timeout := errors.As(err, &ne) && ne.Timeout()
	if ctxErr := ctx.Err(); ctxErr != nil {
		return &TransportError{Endpoint: ep.name, Timeout: errors.Is(ctxErr, context.DeadlineExceeded), Err: ctxErr}
	}
	return &TransportError{Endpoint: ep.name, Timeout: timeout, Err: err}
}

// errorFrom reads a non-2xx answer. JSON bodies give the message and the
// form handler's status; anything else (HTML 5xx pages, plain-text 413s, edge
// 403s) becomes a short sanitized sample.
func errorFrom(ep endpoint, resp *http.Response, raw []byte, key Key, now time.Time) *APIError {
	e := &APIError{Endpoint: ep.name, StatusCode: resp.StatusCode}
	if e.kind() == ErrRedirect {
		// Only where it points is kept: the body and the Location's path and
		// query may carry tokens meant for whoever follows it.
		if loc, err := resp.Location(); err == nil && loc.Host != "" {
			e.Location = sanitize([]byte(loc.Scheme+"://"+loc.Host), key)
		}
		return e
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		e.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), now)
	}
	var w wireError
	if isJSON(resp.Header.Get("Content-Type")) && json.Unmarshal(raw, &w) == nil && w.Error != "" {
		e.Message = truncate(redactEmails(redactKey(w.Error, key.value())), 200)
		if w.Status != nil {
			e.BodyStatus = *w.Status
		}
		return e
	}
	if len(bytes.TrimSpace(raw)) > 0 {
		e.Sample = sanitize(raw, key)
	}
	return e
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// parseRetryAfter reads delay-seconds or an HTTP date; 0 means absent or unusable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(min(secs, 24*3600)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), 24*time.Hour)
	}
	return 0
}

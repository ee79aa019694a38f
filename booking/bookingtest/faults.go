package bookingtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Endpoint names, as the fault hooks take them.
const (
	EndpointEventTypes    = "GET /event-types"
	EndpointSlots         = "GET /slots"
	EndpointListBookings  = "GET /bookings"
	EndpointCreateBooking = "POST /bookings"
	EndpointCancelBooking = "POST /bookings/{id}/cancel"
)

var endpoints = []string{EndpointEventTypes, EndpointSlots, EndpointListBookings, EndpointCreateBooking, EndpointCancelBooking}

// Fault is an answer the sandbox gives instead of the real one.
type Fault struct {
	Status      int // 0 means 500
	Body        string
	ContentType string // "" sends no Content-Type header at all
	RetryAfter  string // Retry-After header value; "" sends none
}

// HTMLError is an HTML error page as a proxy in front of the service sends it.
func HTMLError(status int) Fault {
	title := fmt.Sprintf("%d %s", status, http.StatusText(status))
	return Fault{
		Status:      status,
		ContentType: "text/html",
		Body: "<html>\r\n<head><title>" + title + "</title></head>\r\n<body>\r\n<center><h1>" + title +
			"</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
	}
}

// PlainText is a text/plain error.
func PlainText(status int, msg string) Fault {
	return Fault{Status: status, ContentType: "text/plain; charset=utf-8", Body: msg}
}

// MalformedJSON claims to be JSON but is cut off mid-object.
func MalformedJSON(status int) Fault {
	return Fault{Status: status, ContentType: jsonContentType, Body: `{"error":"internal server error","sta`}
}

// JSONError is an Error-shaped JSON body; bodyStatus 0 omits the status field.
func JSONError(status int, msg string, bodyStatus int) Fault {
	b, err := json.Marshal(errorBody{Error: msg, Status: bodyStatus})
	if err != nil {
		panic(err) // cannot happen for a string and an int
	}
	return Fault{Status: status, ContentType: jsonContentType, Body: string(b)}
}

type faultKind int

const (
	faultAnswer       faultKind = iota // answer f, commit nothing
	faultDrop                          // close the connection, commit nothing
	faultCommitAnswer                  // do the work, then answer f
	faultCommitHang                    // do the work, then hang until the client gives up
	faultCommitDrop                    // do the work, then close the connection
)

func (k faultKind) commits() bool { return k >= faultCommitAnswer }

type fault struct {
	kind  faultKind
	fault Fault
}

func (f Fault) reply() reply {
	st := f.Status
	if st == 0 {
		st = http.StatusInternalServerError
	}
	return reply{status: st, contentType: f.ContentType, retryAfter: f.RetryAfter, body: []byte(f.Body)}
}

// SetLatency makes every call to endpoint wait d before anything else happens.
// A client that gives up meanwhile gets nothing, and nothing is committed.
// d <= 0 removes the latency. It panics for an unknown endpoint name.
func (s *Sandbox) SetLatency(endpoint string, d time.Duration) {
	mustEndpoint(endpoint)
	s.lock()
	defer s.mu.Unlock()
	if d <= 0 {
		delete(s.latency, endpoint)
		return
	}
	s.latency[endpoint] = d
}

// HoldNext makes the next call to endpoint wait, once it has arrived (and
// is in Requests) and before anything else happens, until release is
// called: a request in flight for as long as a test needs, such as a
// create another create must meet. A client that gives up meanwhile gets
// nothing, and nothing is committed. release may be called more than
// once, and before the call arrives. It panics for an unknown endpoint
// name.
func (s *Sandbox) HoldNext(endpoint string) (release func()) {
	mustEndpoint(endpoint)
	held := make(chan struct{})
	s.lock()
	defer s.mu.Unlock()
	s.holds[endpoint] = append(s.holds[endpoint], held)
	var once sync.Once
	return func() { once.Do(func() { close(held) }) }
}

// FailNext makes the next call to endpoint answer f instead of doing anything:
// no auth check, no rate-limit count, nothing committed. Faults of all kinds
// queue per endpoint, first in first out, so FailNext twice fails the next
// two calls.
func (s *Sandbox) FailNext(endpoint string, f Fault) {
	s.enqueue(endpoint, fault{kind: faultAnswer, fault: f})
}

// DropNext makes the next call to endpoint close the connection without an
// answer; nothing is committed. Note that Go's transport silently retries an
// idempotent request (GET) once when a reused keep-alive connection is
// dropped, so a GET sees the drop only on a fresh connection.
func (s *Sandbox) DropNext(endpoint string) {
	s.enqueue(endpoint, fault{kind: faultDrop})
}

// CommitThenFail makes the next call to endpoint run normally, so a booking
// is stored or cancelled if the call would do that, and then answer f instead
// of the real answer: the ambiguous outcome clients must reconcile.
func (s *Sandbox) CommitThenFail(endpoint string, f Fault) {
	s.enqueue(endpoint, fault{kind: faultCommitAnswer, fault: f})
}

// CommitThenHang makes the next call to endpoint run normally and then send
// nothing until the client gives up (its request context ends), as a client
// timeout after a committed write.
func (s *Sandbox) CommitThenHang(endpoint string) {
	s.enqueue(endpoint, fault{kind: faultCommitHang})
}

// CommitThenDrop makes the next call to endpoint run normally and then close
// the connection without an answer.
func (s *Sandbox) CommitThenDrop(endpoint string) {
	s.enqueue(endpoint, fault{kind: faultCommitDrop})
}

// EditAnswers makes every successful (2xx) answer of endpoint pass through
// edit before it is sent: edit changes the decoded JSON object in place, and
// the sandbox sends what it holds then. It lets a test serve what the API
// text allows the real service to send and the sandbox never does, such as
// another timestamp format, undocumented fields or an entry that is not
// confirmed, without a proxy of its own. Faulted answers are not edited.
// edit runs outside the sandbox's lock, so it may call the Sandbox, and for
// concurrent requests concurrently. nil removes the edit, as does
// ClearFaults. It panics for an unknown endpoint name.
func (s *Sandbox) EditAnswers(endpoint string, edit func(body map[string]any)) {
	mustEndpoint(endpoint)
	s.lock()
	defer s.mu.Unlock()
	if edit == nil {
		delete(s.edits, endpoint)
		return
	}
	s.edits[endpoint] = edit
}

// ListedStatus is an edit for [Sandbox.EditAnswers] of EndpointListBookings
// that lists the bookings of the given IDs with another status, which the API
// text rules out and a client must still cope with.
func ListedStatus(byID map[string]string) func(body map[string]any) {
	return func(body map[string]any) {
		for _, e := range body["bookings"].([]any) {
			b := e.(map[string]any)
			if st, ok := byID[b["booking_id"].(string)]; ok {
				b["status"] = st
			}
		}
	}
}

// edited is rep passed through edit when it is a successful answer.
func (rep reply) edited(edit func(map[string]any)) reply {
	if edit == nil || rep.status/100 != 2 {
		return rep
	}
	dec := json.NewDecoder(bytes.NewReader(rep.body))
	dec.UseNumber() // numbers go back out as they came
	var body map[string]any
	if err := dec.Decode(&body); err != nil {
		panic("bookingtest: decoding our own answer: " + err.Error())
	}
	edit(body)
	return jsonReply(rep.status, body)
}

// ClearFaults removes all queued faults, latencies and answer edits, and
// the holds (HoldNext) no call has taken yet; a call held already stays
// held until its release.
func (s *Sandbox) ClearFaults() {
	s.lock()
	defer s.mu.Unlock()
	clear(s.faults)
	clear(s.latency)
	clear(s.edits)
	clear(s.holds)
}

func (s *Sandbox) enqueue(endpoint string, f fault) {
	mustEndpoint(endpoint)
	s.lock()
	defer s.mu.Unlock()
	s.faults[endpoint] = append(s.faults[endpoint], f)
}

func (s *Sandbox) popFaultLocked(endpoint string) (fault, bool) {
	q := s.faults[endpoint]
	if len(q) == 0 {
		return fault{}, false
	}
	s.faults[endpoint] = q[1:]
	return q[0], true
}

// mustEndpoint panics on a misspelt endpoint name, which would otherwise make
// a fault silently never fire.
func mustEndpoint(endpoint string) {
	if !slices.Contains(endpoints, endpoint) {
		panic(fmt.Sprintf("bookingtest: unknown endpoint %q; use one of %q", endpoint, endpoints))
	}
}

// wait sleeps d and reports whether the request is still wanted: false when
// the request context ended first. release ends the wait early, as true.
// held waits until held is closed, or quit is; false when ctx ends first.
func held(ctx context.Context, held, quit <-chan struct{}) bool {
	select {
	case <-held:
		return true
	case <-quit:
		return true
	case <-ctx.Done():
		return false
	}
}

func wait(ctx context.Context, d time.Duration, quit <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-quit:
		return true
	case <-ctx.Done():
		return false
	}
}

// closeConn closes the client connection without an answer. It reports false
// when w cannot be hijacked (HTTP/2, a ResponseRecorder).
func closeConn(w http.ResponseWriter) bool {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return false
	}
	// The client sees EOF either way; a close error changes nothing for it.
	_ = conn.Close()
	return true
}

// release ends every hang and latency wait, for shutting the server down.
func (s *Sandbox) release() {
	s.lock()
	defer s.mu.Unlock()
	select {
	case <-s.quit:
	default:
		close(s.quit)
	}
}

package bookingtest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
)

const (
	apiPrefix       = "/api/v1/"
	jsonContentType = "application/json; charset=utf-8"
	formContentType = "application/x-www-form-urlencoded"
	maxBody         = 64 << 10 // create bodies above this get 413
	maxNote         = 2000     // UTF-16 code units, as a JavaScript server counts
	maxListed       = 100      // GET /bookings cap
	listLayout      = "2006-01-02T15:04:05.000Z07:00"
)

// ServeHTTP serves the booking API under /api/v1. Unknown routes, including a
// known path with the wrong method, answer 404 {"error":"no such endpoint"}.
func (s *Sandbox) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	endpoint, bookingID, undocumented := route(r.Method, r.URL.EscapedPath())
	var body []byte
	tooLarge := false
	if r.Method == http.MethodPost && endpoint != "" {
		body, tooLarge = readBody(r.Body)
	}
	token, bearer := credential(r.Header)

	s.lock()
	req := s.logLocked(r, endpoint, body, tooLarge, token, bearer)
	path, delay, quit := req.Path, s.latency[endpoint], s.quit
	var hold chan struct{}
	if q := s.holds[endpoint]; len(q) > 0 {
		hold, s.holds[endpoint] = q[0], q[1:]
	}
	onUnknown, served := s.onUnknownRoute, s.testHookServed
	s.mu.Unlock()
	if served != nil {
		defer served()
	}

	if endpoint == "" {
		if onUnknown != nil {
			onUnknown(r.Method, path, "404")
		}
		s.send(w, req, errorReply(http.StatusNotFound, "no such endpoint"))
		return
	}
	if undocumented && onUnknown != nil {
		onUnknown(r.Method, path, "as "+endpoint+", as the service does")
	}
	if delay > 0 && !wait(r.Context(), delay, quit) {
		closeConn(w) // the client gave up during the latency; it gets nothing
		return
	}
	if hold != nil && !held(r.Context(), hold, quit) {
		closeConn(w) // the client gave up while held; it gets nothing
		return
	}

	s.lock()
	f, faulted := s.popFaultLocked(endpoint)
	var rep reply
	if !faulted || f.kind.commits() {
		// One critical section: the availability recheck and the insert are atomic.
		rep = s.handleLocked(endpoint, bookingID, r, body, tooLarge, token, bearer)
	}
	edit := s.edits[endpoint]
	s.mu.Unlock()

	if !faulted {
		s.send(w, req, rep.edited(edit))
		return
	}
	switch f.kind {
	case faultAnswer, faultCommitAnswer:
		s.send(w, req, f.fault.reply())
	case faultDrop, faultCommitDrop:
		if !closeConn(w) {
			// Not hijackable (HTTP/2): net/http resets the stream instead.
			panic(http.ErrAbortHandler)
		}
	case faultCommitHang:
		select {
		case <-r.Context().Done():
		case <-quit:
		}
		// Returning normally would send an empty 200 on a still-open connection.
		closeConn(w)
	}
}

// route maps a request to an endpoint name, or "" for an unknown route. The
// booking ID is one escaped path segment, unescaped, so an ID containing
// "/" or spaces still addresses the one booking. undocumented is a route
// the API text does not have, which the service answers as endpoint all
// the same: any GET under /bookings/ lists the bookings.
func route(method, escapedPath string) (endpoint, bookingID string, undocumented bool) {
	rest, ok := strings.CutPrefix(escapedPath, apiPrefix)
	if !ok {
		return "", "", false
	}
	switch seg := strings.Split(rest, "/"); {
	case method == http.MethodGet && rest == "event-types":
		return EndpointEventTypes, "", false
	case method == http.MethodGet && rest == "slots":
		return EndpointSlots, "", false
	case method == http.MethodGet && rest == "bookings":
		return EndpointListBookings, "", false
	case method == http.MethodGet && seg[0] == "bookings" && len(rest) > len("bookings/"):
		return EndpointListBookings, "", true
	case method == http.MethodPost && rest == "bookings":
		return EndpointCreateBooking, "", false
	case method == http.MethodPost && len(seg) == 3 && seg[0] == "bookings" && seg[1] != "" && seg[2] == "cancel":
		id, err := url.PathUnescape(seg[1])
		if err != nil {
			return "", "", false
		}
		return EndpointCancelBooking, id, false
	}
	return "", "", false
}

// readBody reads at most maxBody+1 bytes and reports whether there was more
// than maxBody.
func readBody(body io.Reader) ([]byte, bool) {
	// A body cut short by a failing client is taken as sent; validation
	// rejects what is missing.
	b, _ := io.ReadAll(io.LimitReader(body, maxBody+1))
	return b, len(b) > maxBody
}

// credential reads the Authorization header as the service does. token is
// the key it presents: what follows the scheme, spaces around it dropped
// and otherwise intact, or the whole value when it names no scheme; ""
// when the header is missing, repeated or has nothing after its scheme.
// bearer says the scheme is Bearer, in any case; a token of another
// scheme, or none, is refused as invalid.
func credential(h http.Header) (token string, bearer bool) {
	vals := h.Values("Authorization")
	if len(vals) != 1 {
		return "", false
	}
	scheme, tok, ok := strings.Cut(strings.Trim(vals[0], " "), " ")
	if !ok {
		if strings.EqualFold(scheme, "Bearer") {
			return "", true
		}
		return scheme, false
	}
	return strings.Trim(tok, " "), strings.EqualFold(scheme, "Bearer")
}

func (s *Sandbox) handleLocked(endpoint, bookingID string, r *http.Request, body []byte, tooLarge bool, token string, bearer bool) reply {
	if endpoint == EndpointCreateBooking && tooLarge {
		// The body cap comes first, before the key is even looked at.
		return reply{status: http.StatusRequestEntityTooLarge, contentType: "text/plain", body: []byte("request too large")}
	}
	if token == "" {
		return errorReply(http.StatusUnauthorized, "missing bearer token")
	}
	o := s.keys[token]
	if o == nil || !bearer {
		return errorReply(http.StatusUnauthorized, "invalid token")
	}
	now := s.now()
	switch endpoint {
	case EndpointEventTypes:
		return s.listEventTypes(o)
	case EndpointSlots:
		return s.getSlots(o, r.URL.Query(), now)
	case EndpointListBookings:
		return s.listBookings(o, now)
	case EndpointCreateBooking:
		return s.createBooking(o, r, body, now)
	case EndpointCancelBooking:
		return s.cancelBooking(o, bookingID)
	}
	panic("bookingtest: unhandled endpoint " + endpoint)
}

type eventTypeJSON struct {
	ScheduleID      string `json:"schedule_id"`
	Slug            string `json:"slug"`
	Title           string `json:"title"`
	DurationMinutes int    `json:"duration_minutes"`
	Kind            string `json:"scheduling_kind"`
}

func (s *Sandbox) listEventTypes(o *owner) reply {
	out := []eventTypeJSON{}
	for _, et := range o.eventTypes {
		if et.Removed {
			continue
		}
		out = append(out, eventTypeJSON{et.ScheduleID, et.Slug, et.Title, et.DurationMinutes, et.Kind})
	}
	slices.SortFunc(out, func(a, b eventTypeJSON) int { return strings.Compare(a.Slug, b.Slug) }) // as the service lists them
	return jsonReply(http.StatusOK, struct {
		EventTypes []eventTypeJSON `json:"event_types"`
	}{out})
}

type slotJSON struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

func (s *Sandbox) getSlots(o *owner, q url.Values, now time.Time) reply {
	// A missing event_type is just another unknown event type.
	et := o.eventType(q.Get("event_type"))
	if et == nil {
		return errorReply(http.StatusNotFound, "no such event type")
	}
	out := []slotJSON{}
	for _, sl := range s.slotsLocked(o, et, now) {
		out = append(out, slotJSON{slotTime(sl.Start), slotTime(sl.End)})
	}
	return jsonReply(http.StatusOK, struct {
		Slots []slotJSON `json:"slots"`
	}{out})
}

type bookingJSON struct {
	BookingID   string  `json:"booking_id"`
	StartsAt    string  `json:"starts_at"`
	EndsAt      string  `json:"ends_at"`
	Status      string  `json:"status"`
	BookerName  *string `json:"booker_name"`
	BookerEmail *string `json:"booker_email"`
	EventType   *string `json:"event_type"`
}

func (s *Sandbox) listBookings(o *owner, now time.Time) reply {
	out := []bookingJSON{}
	for _, b := range s.ownerBookingsLocked(o.id, true) {
		if len(out) == maxListed {
			break
		}
		if !b.Start.After(now) {
			continue // upcoming means not started: one in progress is left out
		}
		eventType := b.EventType
		if b.Rescheduled {
			eventType = nil
		}
		out = append(out, bookingJSON{
			BookingID:   b.ID,
			StartsAt:    listTime(b.Start),
			EndsAt:      listTime(b.End),
			Status:      "confirmed",
			BookerName:  b.BookerName,
			BookerEmail: b.BookerEmail,
			EventType:   eventType,
		})
	}
	return jsonReply(http.StatusOK, struct {
		Bookings []bookingJSON `json:"bookings"`
	}{out})
}

type receiptJSON struct {
	BookingID string `json:"booking_id"`
	StartsAt  string `json:"starts_at"`
	EndsAt    string `json:"ends_at"`
}

type createResponse struct {
	Booking *receiptJSON `json:"booking"`
}

// createBooking runs the checks in upstream's order: the event type, the rate
// limits, the input (required questions included), the owner's block list,
// the ceiling of confirmed bookings, email verification, a repeat, the slot
// (and for a round robin, a free host).
func (s *Sandbox) createBooking(o *owner, r *http.Request, body []byte, now time.Time) reply {
	// Upstream reads the body as a form whatever its Content-Type, so a JSON
	// body has no event_type and ends here.
	form, formErr := url.ParseQuery(string(body))
	et := o.eventType(form.Get("event_type"))
	if et == nil {
		// Answered before the rate limits: it is not counted as an attempt.
		return errorReply(http.StatusNotFound, "no such event type")
	}
	// Every attempt that passes the limits counts, including ones that fail
	// below.
	if !s.ipHits.allow(clientIP(r.RemoteAddr), s.perIP, time.Minute, now) ||
		!s.eventHits.allow(o.id+"\x00"+et.Slug, s.perEvent, time.Hour, now) {
		return notBooked(http.StatusTooManyRequests, http.StatusTooManyRequests)
	}
	in, ok := parseCreate(form, et)
	if formErr != nil || !ok {
		return notBooked(http.StatusBadRequest, http.StatusBadRequest)
	}
	if o.refuses(in.email) {
		return notBooked(http.StatusForbidden, http.StatusForbidden)
	}
	if s.fullLocked(o, now) {
		return notBooked(http.StatusServiceUnavailable, http.StatusServiceUnavailable)
	}
	if et.RequiresEmailVerification {
		// The booking waits for the attendee's confirmation, which the API
		// cannot give: the service mails them a link that books it, and
		// holds nothing meanwhile.
		slug := et.Slug
		s.pending = append(s.pending, pendingCreate{owner: o.id, raw: [2]string{in.rawStart, in.rawEnd}, b: Booking{
			EventType: &slug, Start: in.start, BookerName: &in.name, BookerEmail: &in.email,
			BookerTZ: in.tz, Note: in.note, LocationOption: in.location, Answers: in.answers,
		}})
		return notBooked(http.StatusConflict, http.StatusOK)
	}
	if s.repeatLocked(o, et, in.start, in.email) {
		return notBooked(http.StatusConflict, http.StatusOK)
	}
	// Slots are never held, and start and end must be written exactly as a
	// slot offered now: the same instant in another form is not a match.
	var slot *Slot
	for _, sl := range s.slotsLocked(o, et, now) {
		if slotTime(sl.Start) == in.rawStart && slotTime(sl.End) == in.rawEnd {
			slot = &sl
			break
		}
	}
	if slot == nil {
		return notBooked(http.StatusConflict, http.StatusConflict)
	}
	host, _ := s.hostLocked(o, et, *slot, now) // the slot is offered: a host is free
	slug := et.Slug
	b := Booking{
		ID:             s.newBookingIDLocked(),
		EventType:      &slug,
		Start:          slot.Start,
		End:            slot.End,
		BookerName:     &in.name,
		BookerEmail:    &in.email,
		BookerTZ:       in.tz,
		Note:           in.note,
		LocationOption: in.location,
		Answers:        in.answers,
	}
	s.bookings[b.ID] = &record{owner: host, event: o.id, b: b}
	if host != o.id {
		// A teammate's booking: this key never learns its ID.
		return jsonReply(http.StatusCreated, createResponse{})
	}
	return jsonReply(http.StatusCreated, createResponse{&receiptJSON{b.ID, listTime(b.Start), listTime(b.End)}})
}

// hosts are the calendars a booking of et may go to: the owner's, or a
// round robin's hosts.
func (o *owner) hosts(et *EventType) []string {
	if et.Kind != KindRoundRobin || len(et.Hosts) == 0 {
		return []string{o.id}
	}
	out := make([]string, len(et.Hosts))
	for i, h := range et.Hosts {
		out[i] = cmp.Or(h, o.id)
	}
	return out
}

// hostLocked is whose calendar a booking of et at slot goes to: of its
// hosts free then, the one with the fewest upcoming bookings, the first
// of them on a tie; ok is false when none is free.
func (s *Sandbox) hostLocked(o *owner, et *EventType, slot Slot, now time.Time) (host string, ok bool) {
	fewest := -1
	for _, h := range o.hosts(et) {
		if overlapsAny(s.ownerBookingsLocked(h, true), slot.Start, slot.End) {
			continue
		}
		if n := s.upcomingLocked(h, now); fewest < 0 || n < fewest {
			host, fewest = h, n
		}
	}
	return host, fewest >= 0
}

// repeatLocked reports whether the owner's event type already has a booking
// starting at start for email, in any host's calendar, cancelled or not:
// upstream refuses such a create for good.
func (s *Sandbox) repeatLocked(o *owner, et *EventType, start time.Time, email string) bool {
	for _, r := range s.bookings {
		b := &r.b
		if r.event == o.id && b.EventType != nil && *b.EventType == et.Slug && b.Start.Equal(start) &&
			b.BookerEmail != nil && *b.BookerEmail == email {
			return true
		}
	}
	return false
}

type createInput struct {
	name, email, tz, note, location string
	rawStart, rawEnd                string
	start                           time.Time
	answers                         map[string]string
}

// parseCreate reads the CreateBooking form for et. Like upstream it says only
// whether the input is acceptable, never which field is wrong, and it
// checks little: any email and any time zone name pass, unknown fields are
// ignored. Where upstream's answer is not known the sandbox stays strict: a
// repeated field is refused.
func parseCreate(form url.Values, et *EventType) (createInput, bool) {
	var in createInput
	for k, vs := range form {
		switch k {
		case "event_type", "start", "end", "name", "email", "booker_tz", "q:booking-note", "location_option":
			if len(vs) != 1 {
				return in, false // ambiguous
			}
			continue
		}
		if q, ok := strings.CutPrefix(k, "q:"); ok && q != "" && len(vs) == 1 {
			if in.answers == nil {
				in.answers = map[string]string{}
			}
			in.answers[q] = vs[0]
		}
	}
	for _, k := range []string{"start", "end", "name", "email"} {
		if strings.TrimSpace(form.Get(k)) == "" {
			return in, false
		}
	}
	in.name, in.email, in.location = form.Get("name"), form.Get("email"), form.Get("location_option")
	in.tz = form.Get("booker_tz")
	if in.tz == "" {
		in.tz = "UTC"
	}
	if et.AsksForNote || et.RequiresNote {
		in.note = cutUTF16(form.Get("q:booking-note"), maxNote)
	}
	if et.RequiresNote && strings.TrimSpace(in.note) == "" {
		return in, false
	}
	for _, q := range et.RequiredQuestions {
		if strings.TrimSpace(in.answers[q]) == "" {
			return in, false
		}
	}
	in.rawStart, in.rawEnd = form.Get("start"), form.Get("end")
	var err1, err2 error
	in.start, err1 = time.Parse(time.RFC3339, in.rawStart)
	_, err2 = time.Parse(time.RFC3339, in.rawEnd)
	return in, err1 == nil && err2 == nil
}

// cutUTF16 returns the longest prefix of s of at most n UTF-16 code units
// that does not split a character.
func cutUTF16(s string, n int) string {
	units := 0
	for i, r := range s {
		units += utf16.RuneLen(r)
		if units > n {
			return s[:i]
		}
	}
	return s
}

func (s *Sandbox) cancelBooking(o *owner, id string) reply {
	rec := s.bookings[id]
	if rec == nil || rec.owner != o.id {
		// Another owner's or a teammate's booking is indistinguishable from
		// a missing one.
		return errorReply(http.StatusNotFound, "no such booking")
	}
	rec.b.Cancelled = true
	return jsonReply(http.StatusOK, struct {
		Cancelled bool `json:"cancelled"`
	}{true})
}

// slotTime is the slots form: UTC without a fraction. A create must send
// start and end exactly so.
func slotTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// listTime is the form of bookings and receipts: UTC with milliseconds. It
// differs from slotTime, as upstream's does, so clients compare instants.
func listTime(t time.Time) string { return t.UTC().Format(listLayout) }

// reply is a complete answer, built under the lock and written after it, so a
// fault can replace it after the work is committed.
type reply struct {
	status      int
	contentType string // "" sends no Content-Type
	retryAfter  string
	body        []byte
}

type errorBody struct {
	Error  string `json:"error"`
	Status int    `json:"status,omitempty"`
}

func jsonReply(status int, v any) reply {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("bookingtest: encoding reply: " + err.Error()) // only plain types get here, or a test's edit went wrong
	}
	return reply{status: status, contentType: jsonContentType, body: buf.Bytes()}
}

func errorReply(status int, msg string) reply { return jsonReply(status, errorBody{Error: msg}) }

// notBooked is the create error upstream sends for 400, 409 and 429: one
// message, told apart only by the statuses.
func notBooked(status, bodyStatus int) reply {
	return jsonReply(status, errorBody{Error: "not booked", Status: bodyStatus})
}

// send records the status in the log and writes rep, dated by the
// sandbox's clock, as the service dates its answers by its own.
func (s *Sandbox) send(w http.ResponseWriter, req *Request, rep reply) {
	s.lock()
	req.Status = rep.status
	now := s.now()
	s.mu.Unlock()
	h := w.Header()
	h.Set("Date", now.UTC().Format(http.TimeFormat))
	if rep.contentType == "" {
		h["Content-Type"] = nil // stops net/http from sniffing one
	} else {
		h.Set("Content-Type", rep.contentType)
	}
	if rep.retryAfter != "" { // only a fault sends one
		h.Set("Retry-After", rep.retryAfter)
	}
	h.Set("Content-Length", strconv.Itoa(len(rep.body)))
	if text, ok := statusText[rep.status]; ok && writeRaw(w, rep.status, text, rep.body) {
		return
	}
	w.WriteHeader(rep.status)
	// A write error means the client left; there is no one to tell.
	_, _ = w.Write(rep.body)
}

// statusText is the service's status line text where it differs from
// net/http's ("Request Entity Too Large").
var statusText = map[int]string{http.StatusRequestEntityTooLarge: "Payload Too Large"}

// writeRaw writes an answer with its own status line text, which net/http
// cannot, on the connection taken over from it, then closes the
// connection. It reports false when w cannot be taken over (HTTP/2).
func writeRaw(w http.ResponseWriter, status int, text string, body []byte) bool {
	h := w.Header().Clone()
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return false
	}
	defer conn.Close()
	h.Set("Connection", "close")
	fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\n", status, text)
	_ = h.Write(buf)
	_, _ = buf.WriteString("\r\n")
	_, _ = buf.Write(body)
	if buf.Flush() != nil {
		return true // the client left
	}
	// As net/http does before it closes: the rest of a request body the
	// client is still sending must not reset the connection before the
	// client has read the answer.
	if cw, ok := conn.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _ = io.Copy(io.Discard, conn)
	}
	return true
}

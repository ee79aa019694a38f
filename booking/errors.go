package booking

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Kinds of failure, matched with errors.Is against the errors the client
// returns (*APIError and *TransportError).
var (
	ErrInvalidInput = errors.New("invalid or incomplete booking input") // 400
	ErrUnauthorized = errors.New("the booking API key was refused")     // 401
	ErrForbidden    = errors.New("access refused by the booking API")   // 403
	ErrNotFound     = errors.New("not found")                           // 404
	ErrNotBooked    = errors.New("not booked")                          // 409
	ErrTooLarge     = errors.New("request too large")                   // 413
	ErrRateLimited  = errors.New("too many attempts")                   // 429
	ErrUnavailable  = errors.New("the booking API is unavailable")      // 5xx
	// A create's refusals that say "not booked" in JSON where the status
	// alone would read as an outage or a key problem: a plain answer.
	ErrBlocked     = errors.New("the booking service refused this booking for this attendee") // 403 "not booked"
	ErrFull        = errors.New("the booking service takes no new bookings")                  // 5xx "not booked"
	ErrRedirect    = errors.New("the booking API redirected")                                 // 3xx; also an ErrBadResponse
	ErrBadResponse = errors.New("unexpected response from the booking API")
	ErrTimeout     = errors.New("the booking API did not answer in time")
	ErrTransport   = errors.New("the booking API could not be reached")
)

// APIError is an answer from the booking API that is not the success the
// call expected.
type APIError struct {
	Endpoint   string // e.g. "POST /bookings"
	StatusCode int
	Message    string        // the body's "error", when the body was JSON
	BodyStatus int           // the body's "status" (the form handler's), 0 when absent
	RetryAfter time.Duration // from a 429's Retry-After, 0 when absent
	Sample     string        // a short, sanitized sample of a body that was not the expected JSON
	Lacks      string        // what a success's JSON lacks, as `no "bookings" array`; "" otherwise
	Location   string        // a 3xx's target, scheme and host only ("https://api.example.com"); "" when it named none
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "booking API: %s: %d %s", e.Endpoint, e.StatusCode, http.StatusText(e.StatusCode))
	if e.Location != "" {
		fmt.Fprintf(&b, ", redirecting to %s", e.Location)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %q", e.Message)
	}
	if e.BodyStatus != 0 {
		fmt.Fprintf(&b, " (form handler status %d)", e.BodyStatus)
	}
	if e.Lacks != "" {
		fmt.Fprintf(&b, ", %s", e.Lacks)
	}
	if e.Sample != "" {
		fmt.Fprintf(&b, ", body: %q", e.Sample)
	}
	if hint := e.hint(); hint != "" {
		b.WriteString(": ")
		b.WriteString(hint)
	}
	return b.String()
}

// hint says what a person can do about the error.
func (e *APIError) hint() string {
	switch e.kind() {
	case ErrInvalidInput:
		return "the API gives no field details; check the attendee's name, email, time zone and note"
	case ErrUnauthorized:
		return "the API key is missing, malformed, revoked or invalid; create a key on the API keys page and configure it"
	case ErrForbidden:
		return "the API refused access or the booking"
	case ErrBlocked:
		return "nothing was booked; the owner's settings may refuse this attendee's email address or domain"
	case ErrFull:
		return "nothing was booked; the service refuses new bookings, as it does once it holds as many confirmed bookings as it takes"
	case ErrNotFound:
		return "it does not exist, or it belongs to another account or host"
	case ErrNotBooked:
		return "the slot may have been taken, the booking may be a duplicate, or the event may need email verification; do not resubmit it, check the bookings list and pick another time"
	case ErrTooLarge:
		return "shorten the note"
	case ErrRateLimited:
		if e.RetryAfter > 0 {
			return "wait " + HumanDuration(e.RetryAfter) + " before trying again"
		}
		return "wait before trying again (an event's limit can take up to an hour)"
	case ErrUnavailable:
		return "the service or a connected calendar provider is down; try again in a few minutes"
	case ErrRedirect:
		return "bookbot follows no redirect, so nothing was sent there; set BOOKING_BASE_URL to the final address"
	}
	return ""
}

func (e *APIError) kind() error {
	switch s := e.StatusCode; {
	case s == http.StatusBadRequest:
		return ErrInvalidInput
	case s == http.StatusUnauthorized:
		return ErrUnauthorized
	case s == http.StatusForbidden && e.saysNotBooked():
		return ErrBlocked
	case s == http.StatusForbidden:
		return ErrForbidden
	case s == http.StatusNotFound:
		return ErrNotFound
	case s == http.StatusConflict:
		return ErrNotBooked
	case s == http.StatusRequestEntityTooLarge:
		return ErrTooLarge
	case s == http.StatusTooManyRequests:
		return ErrRateLimited
	case s >= 500 && e.saysNotBooked():
		return ErrFull
	case s >= 500:
		return ErrUnavailable
	case s >= 300 && s < 400:
		return ErrRedirect
	}
	return ErrBadResponse
}

// saysNotBooked reports whether the body is the create's JSON refusal,
// {"error":"not booked"}: the form handler answered, and booked nothing.
func (e *APIError) saysNotBooked() bool {
	return strings.EqualFold(strings.TrimSpace(e.Message), "not booked")
}

// Is matches the error's kind, so errors.Is(err, ErrNotFound) works. A
// redirect is also a bad response, as it was before it had a kind of its own.
func (e *APIError) Is(target error) bool {
	k := e.kind()
	return k == target || (k == ErrRedirect && target == ErrBadResponse)
}

// TransportError is a request that got no complete answer: a timeout, a
// refused or dropped connection. For a write it means the outcome is unknown.
type TransportError struct {
	Endpoint string
	Timeout  bool
	Err      error
}

func (e *TransportError) Error() string {
	if e.Timeout {
		return fmt.Sprintf("booking API: %s: no answer in time: %v", e.Endpoint, e.Err)
	}
	return fmt.Sprintf("booking API: %s: %v", e.Endpoint, e.Err)
}

func (e *TransportError) Unwrap() error { return e.Err }

func (e *TransportError) Is(target error) bool {
	return target == ErrTransport || (e.Timeout && target == ErrTimeout)
}

// sanitize turns an unexpected body into a short sample that is safe to show:
// HTML tags dropped, white space folded, control characters removed, the key
// redacted, and at most 120 characters.
func sanitize(body []byte, key Key) string {
	s := string(body)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "?")
	}
	if strings.Contains(s, "<") {
		s = stripTags(s)
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return ' '
		}
		if unicode.IsControl(r) || !unicode.IsPrint(r) {
			return -1
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	s = redactKey(s, key.value())
	s = redactEmails(s)
	return truncate(s, 120)
}

// emailAddress matches what looks like an email address in an answer.
var emailAddress = regexp.MustCompile(`[A-Za-z0-9._%+'-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+`)

// redactEmails hides email addresses an answer echoes (an error page that
// repeats the request, say), so that errors, Result.Seen and the logs they
// reach never carry an attendee's address.
func redactEmails(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	return emailAddress.ReplaceAllString(s, "[email]")
}

// stripTags keeps the text of an HTML page, dropping tags and the contents of
// script and style elements.
func stripTags(s string) string {
	var b strings.Builder
	lower := strings.ToLower(s)
	for i := 0; i < len(s); {
		if s[i] != '<' {
			b.WriteByte(s[i])
			i++
			continue
		}
		for _, skip := range []string{"script", "style"} {
			if strings.HasPrefix(lower[i:], "<"+skip) {
				if end := strings.Index(lower[i:], "</"+skip); end >= 0 {
					i += end
				}
			}
		}
		end := strings.IndexByte(s[i:], '>')
		if end < 0 {
			break
		}
		i += end + 1
		b.WriteByte(' ')
	}
	return b.String()
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// HumanDuration renders a wait for a person: "45 seconds", "3 minutes",
// "1 hour 5 minutes".
func HumanDuration(d time.Duration) string {
	if d < time.Minute {
		s := int((d + time.Second - 1) / time.Second)
		return plural(s, "second")
	}
	d = d.Round(time.Minute)
	h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
	switch {
	case h == 0:
		return plural(m, "minute")
	case m == 0:
		return plural(h, "hour")
	}
	return plural(h, "hour") + " " + plural(m, "minute")
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

package bookingtest

import (
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Request is one entry of the request log. It never holds the Authorization
// header or a key: a key found anywhere else in the request (a client bug the
// API text forbids) is replaced by "[REDACTED]" and flagged in LeakedKey.
type Request struct {
	Method      string
	Path        string // decoded URL path, e.g. /api/v1/bookings
	RawQuery    string
	ContentType string
	RemoteAddr  string
	// Form holds the query parameters plus, for a form-encoded POST body of
	// at most 64 KiB, the body fields; nil when there are none.
	Form       url.Values
	Authorized bool      // the bearer token is a known key
	At         time.Time // sandbox clock at arrival

	Endpoint  string // e.g. EndpointCreateBooking; "" for an unknown route
	Owner     string // owner ID of the key; "" when not authorized
	Status    int    // status sent; 0 while pending, or when dropped or hung
	LeakedKey bool   // a key appeared outside the Authorization header
}

const redacted = "[REDACTED]"

// Requests returns the request log in arrival order.
func (s *Sandbox) Requests() []Request {
	s.lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		out[i] = *r
		out[i].Form = cloneValues(r.Form)
	}
	return out
}

// ResetRequests empties the request log.
func (s *Sandbox) ResetRequests() {
	s.lock()
	defer s.mu.Unlock()
	s.requests = nil
}

func (s *Sandbox) logLocked(r *http.Request, endpoint string, body []byte, tooLarge bool, token string, bearer bool) *Request {
	form := r.URL.Query()
	ct := r.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err == nil && mt == formContentType && r.Method == http.MethodPost && !tooLarge {
		// A malformed body still logs the fields that did parse.
		bodyForm, _ := url.ParseQuery(string(body))
		for k, vs := range bodyForm {
			form[k] = append(form[k], vs...)
		}
	}
	if len(form) == 0 {
		form = nil
	}
	red := s.redactorLocked(token)
	req := &Request{
		Method:      r.Method,
		Path:        red.str(r.URL.Path),
		RawQuery:    red.str(r.URL.RawQuery),
		ContentType: red.str(ct),
		RemoteAddr:  r.RemoteAddr,
		Form:        red.values(form),
		At:          s.now(),
		Endpoint:    endpoint,
	}
	if o := s.keys[token]; o != nil && bearer {
		req.Authorized, req.Owner = true, o.id
	}
	req.LeakedKey = red.leaked
	s.requests = append(s.requests, req)
	return req
}

// redactor replaces secrets, in plain and escaped form, by "[REDACTED]".
type redactor struct {
	secrets []string
	leaked  bool
}

// redactorLocked redacts every known key, and the presented token unless it
// is too short to find reliably.
func (s *Sandbox) redactorLocked(token string) *redactor {
	var keys []string
	for k := range s.keys {
		keys = append(keys, k)
	}
	if len(token) >= 8 {
		keys = append(keys, token)
	}
	red := &redactor{}
	for _, k := range keys {
		red.secrets = append(red.secrets, k, url.QueryEscape(k), url.PathEscape(k))
	}
	// Longest first, so a key is not half-replaced through a shorter one.
	slices.SortFunc(red.secrets, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	red.secrets = slices.Compact(red.secrets)
	return red
}

func (r *redactor) str(v string) string {
	for _, sec := range r.secrets {
		if strings.Contains(v, sec) {
			v = strings.ReplaceAll(v, sec, redacted)
			r.leaked = true
		}
	}
	return v
}

func (r *redactor) values(vs url.Values) url.Values {
	if vs == nil {
		return nil
	}
	out := make(url.Values, len(vs))
	for k, list := range vs {
		rk := r.str(k)
		for _, v := range list {
			out[rk] = append(out[rk], r.str(v))
		}
	}
	return out
}

func cloneValues(vs url.Values) url.Values {
	if vs == nil {
		return nil
	}
	out := make(url.Values, len(vs))
	for k, list := range vs {
		out[k] = slices.Clone(list)
	}
	return out
}

package metrics

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// slackErrorCounter is an http.RoundTripper for slack-go's HTTP client that
// counts failed Web API calls: transport errors, non-200 answers (429 as
// "ratelimited") and {"ok":false,"error":…} bodies. Everything that talks
// to the Web API through the one slack.Client (the bot, the digest
// publisher, auth.test) is covered.
//
// It never sees more than a method name and an error code: the method is
// the last path element of a URL under the Web API base, anything else
// (which could carry a token in its path) counts as "other"; tokens travel
// in headers and form bodies, which are not looked at. The body is read and
// handed on intact.
type slackErrorCounter struct {
	next    http.RoundTripper // nil: http.DefaultTransport
	apiPath string            // path of SLACK_API_URL, ending with "/"
	count   func(method, code string)
}

func newSlackErrorCounter(apiURL string, next http.RoundTripper, count func(method, code string)) *slackErrorCounter {
	p := "/"
	if u, err := url.Parse(apiURL); err == nil {
		p = strings.TrimSuffix(u.Path, "/") + "/"
	}
	return &slackErrorCounter{next: next, apiPath: p, count: count}
}

// SlackTransport is the http.RoundTripper for slack-go's HTTP client
// (slack.OptionHTTPClient) that counts failed Web API calls under apiURL
// (SLACK_API_URL) in bookbot_slack_api_errors_total, made through next
// (nil: http.DefaultTransport). The client's timeout is the caller's to
// set.
func (m *Recorder) SlackTransport(apiURL string, next http.RoundTripper) http.RoundTripper {
	return newSlackErrorCounter(apiURL, next, m.slackError)
}

// maxSlackBody bounds what is read to look for "ok":false; a larger answer
// is handed on uninspected (Slack's are far smaller: a view is ≤ 250 kB).
const maxSlackBody = 4 << 20

// isMethodName says whether s can be a Web API method name
// ([a-zA-Z][a-zA-Z0-9_.]{0,63}) and isErrorCode whether s can be Slack's
// error code ([a-z0-9_]{1,64}): only those become labels. (Checked by
// hand: the two regular expressions cost 110 kB at every start.)
func isMethodName(s string) bool {
	return len(s) > 0 && len(s) <= 64 && isLetter(s[0]) && all(s, func(c byte) bool {
		return isLetter(c) || isDigit(c) || c == '_' || c == '.'
	})
}

func isErrorCode(s string) bool {
	return len(s) > 0 && len(s) <= 64 && all(s, func(c byte) bool {
		return ('a' <= c && c <= 'z') || isDigit(c) || c == '_'
	})
}

func isLetter(c byte) bool { return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }

func all(s string, ok func(byte) bool) bool {
	for i := range len(s) {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func (t *slackErrorCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	method := t.method(req.URL)
	resp, err := next.RoundTrip(req)
	if err != nil {
		t.count(method, "transport")
		return resp, err
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		t.count(method, "ratelimited")
		return resp, nil
	case resp.StatusCode != http.StatusOK:
		t.count(method, "http_"+strconv.Itoa(resp.StatusCode))
		return resp, nil
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return resp, nil
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxSlackBody+1))
	rest := resp.Body
	resp.Body = readCloser{io.MultiReader(bytes.NewReader(raw), errReader{err}, rest), rest}
	if err != nil {
		t.count(method, "transport")
		return resp, nil
	}
	if len(raw) > maxSlackBody {
		return resp, nil
	}
	var answer struct {
		OK    *bool  `json:"ok"`
		Error string `json:"error"`
	}
	if json.Unmarshal(raw, &answer) != nil || answer.OK == nil || *answer.OK {
		return resp, nil
	}
	code := answer.Error
	if !isErrorCode(code) {
		code = "other"
	}
	t.count(method, code)
	return resp, nil
}

// method is the Web API method a URL calls, or "other".
func (t *slackErrorCounter) method(u *url.URL) string {
	m, ok := strings.CutPrefix(u.Path, t.apiPath)
	if !ok || !isMethodName(m) {
		return "other"
	}
	return m
}

// readCloser reads from r and closes c.
type readCloser struct {
	io.Reader
	io.Closer
}

// errReader hands on a read error after the bytes read before it (nil: EOF).
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	return 0, io.EOF
}

package app

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/slack-go/slack"
)

// TestSlackViewsAnswerAsSlackGo makes each views call through slack-go and
// through slackViews against the same answers, and wants the same request
// sent, the same view ID and the same error back.
func TestSlackViewsAnswerAsSlackGo(t *testing.T) {
	t.Parallel()
	answers := []struct {
		name, body, retryAfter string
		status                 int
	}{
		{name: "ok", status: 200, body: `{"ok":true,"view":{"id":"V123","type":"modal","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"hi"}}],"hash":"h"}}`},
		{name: "refused", status: 200, body: `{"ok":false,"error":"invalid_arguments","response_metadata":{"messages":["[ERROR] must be 24 characters or less [json-pointer:/view/title/text]"]}}`},
		{name: "expired trigger", status: 200, body: `{"ok":false,"error":"expired_trigger_id"}`},
		{name: "rate limited", status: 429, retryAfter: "7", body: `{"ok":false,"error":"ratelimited"}`},
		{name: "server error", status: 503, body: `<html>unavailable</html>`},
		{name: "not JSON", status: 200, body: `<html>`},
	}
	view := slack.ModalViewRequest{Type: slack.VTModal, Title: slack.NewTextBlockObject(slack.PlainTextType, "Book", false, false),
		Blocks: slack.Blocks{BlockSet: []slack.Block{slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "hi", false, false), nil, nil, slack.SectionBlockOptionBlockID("b"))}}}
	for _, a := range answers {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			var got []string // requests as received: method path, auth, type, body
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization")+" "+r.Header.Get("Content-Type")+" "+string(b))
				if a.retryAfter != "" {
					w.Header().Set("Retry-After", a.retryAfter)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(a.status)
				_, _ = io.WriteString(w, a.body)
			}))
			defer srv.Close()
			api := srv.URL + "/api/"
			sg := slack.New("xoxb-test", slack.OptionAPIURL(api), slack.OptionHTTPClient(srv.Client()))
			lean := slackViews{Client: sg, http: srv.Client(), api: api, token: "xoxb-test"}
			ctx := context.Background()

			type result struct {
				id  string
				err error
			}
			of := func(v *slack.ViewResponse, err error) result {
				if v == nil {
					return result{err: err}
				}
				return result{v.ID, err}
			}
			calls := []struct {
				name string
				call func(viewsAPI) result
			}{
				{"views.open", func(c viewsAPI) result { return of(c.OpenViewContext(ctx, "T1", view)) }},
				{"views.update", func(c viewsAPI) result { return of(c.UpdateViewContext(ctx, view, "", "h", "V123")) }},
			}
			for _, c := range calls {
				got = nil
				want := c.call(sg)
				wantReq := got
				got = nil
				have := c.call(lean)
				if !reflect.DeepEqual(have.id, want.id) || !sameError(have.err, want.err) {
					t.Errorf("%s: got %q, %#v; slack-go gives %q, %#v", c.name, have.id, have.err, want.id, want.err)
				}
				if !reflect.DeepEqual(got, wantReq) {
					t.Errorf("%s sent\n%q\nslack-go sends\n%q", c.name, got, wantReq)
				}
			}
		})
	}
}

// viewsAPI is what the test calls on either client.
type viewsAPI interface {
	OpenViewContext(ctx context.Context, triggerID string, view slack.ModalViewRequest) (*slack.ViewResponse, error)
	UpdateViewContext(ctx context.Context, view slack.ModalViewRequest, externalID, hash, viewID string) (*slack.ViewResponse, error)
}

// sameError compares errors by type and value; decoding errors, whose
// offsets differ with the decoder, by type and presence.
func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	if reflect.TypeOf(a) != reflect.TypeOf(b) {
		return false
	}
	switch a.(type) {
	case slack.SlackErrorResponse, *slack.RateLimitedError, slack.StatusCodeError:
		return reflect.DeepEqual(a, b)
	}
	return true
}

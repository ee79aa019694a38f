package slacktest

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// StallNext makes the next call to method never answered: it hangs until
// its client gives up (a timeout, or the process dies) or the server
// closes. With carryOut the call is carried out first, as when Slack did
// what was asked and its answer was lost on the way; without, it is as if
// the request never reached Slack. Calls queue: StallNext twice stalls the
// next two calls.
func (s *Server) StallNext(method string, carryOut bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stall[method] = append(s.stall[method], carryOut)
}

// WaitStalled blocks until n calls to method have been stalled (in
// total), or ctx is done.
func (s *Server) WaitStalled(ctx context.Context, method string, n int) error {
	return s.waitFor(ctx, func() bool { return s.stalled[method] >= n })
}

// stallCall stalls the call if StallNext asked for it, and reports whether
// it did.
func (s *Server) stallCall(r *http.Request, name, tok string, call Call, q *request, perr error) bool {
	s.mu.Lock()
	queue := s.stall[name]
	if len(queue) == 0 {
		s.mu.Unlock()
		return false
	}
	carryOut := queue[0]
	s.stall[name] = queue[1:]
	if carryOut {
		status, resp := s.answerLocked(name, tok, call.Token, q, perr, discardHeader{})
		call.At, call.Status = s.now(), status
		if e, _ := resp["error"].(string); e != "" {
			call.Error = e
		}
		s.calls = append(s.calls, call)
	}
	s.stalled[name]++
	s.notifyLocked()
	s.mu.Unlock()
	select {
	case <-r.Context().Done():
	case <-s.done:
	}
	return true
}

// discardHeader is a ResponseWriter for answers never sent.
type discardHeader struct{}

func (discardHeader) Header() http.Header         { return http.Header{} }
func (discardHeader) Write(b []byte) (int, error) { return len(b), nil }
func (discardHeader) WriteHeader(int)             {}

// messageMetadata checks a post's metadata as Slack does: a JSON object
// with an event_type and an event_payload object.
func messageMetadata(q *request) (json.RawMessage, map[string]any) {
	raw := q.json("metadata")
	if len(raw) == 0 {
		return nil, nil
	}
	var m struct {
		EventType    string         `json:"event_type"`
		EventPayload map[string]any `json:"event_payload"`
	}
	err := json.Unmarshal(raw, &m)
	if err == nil && m.EventType == "" && m.EventPayload == nil {
		return nil, nil // slack-go's response_url posts carry an empty one: no metadata
	}
	if err != nil || m.EventType == "" || m.EventPayload == nil {
		return nil, apiError("invalid_metadata_format")
	}
	return cloneRaw(raw), nil
}

// conversations.history and conversations.replies

// historyPage is the most messages one page holds when the bot asks for
// no limit, or more than Slack gives.
const historyPage = 100

// conversationsHistoryLocked answers with a conversation's top-level
// messages and the thread replies also sent to it, newest first, between
// oldest and latest (exclusive unless inclusive), a page at a time. A
// response_url's post to the whole conversation (in_channel) is one of
// its messages; an ephemeral one is not.
func (s *Server) conversationsHistoryLocked(q *request) map[string]any {
	c, code := s.historyConvLocked(q)
	if code != "" {
		return apiError(code)
	}
	var msgs []map[string]any
	for i := len(s.messages) - 1; i >= 0; i-- {
		m := s.messages[i]
		p := s.posted[m.TS]
		posted := m.Kind == "message" || m.Kind == "user" || m.Kind == "response_url" && m.OriginalTS == ""
		if !posted || p == nil || p.deleted || p.ephemeral || p.dm != c.id || (p.threadTS != "" && !p.broadcast) || !inRange(q, m.TS) {
			continue
		}
		msgs = append(msgs, s.historyJSONLocked(m.TS, p, q.bool("include_all_metadata")))
	}
	return page(q, msgs)
}

// conversationsRepliesLocked answers with a thread: its parent, then its
// replies, oldest first.
func (s *Server) conversationsRepliesLocked(q *request) map[string]any {
	c, code := s.historyConvLocked(q)
	if code != "" {
		return apiError(code)
	}
	root := q.str("ts")
	if p := s.posted[root]; p == nil || p.deleted || p.dm != c.id {
		return apiError("thread_not_found")
	}
	var msgs []map[string]any
	for _, m := range s.messages {
		p := s.posted[m.TS]
		if m.Kind != "message" && m.Kind != "user" || p == nil || p.deleted || (m.TS != root && p.threadTS != root) || !inRange(q, m.TS) {
			continue
		}
		msgs = append(msgs, s.historyJSONLocked(m.TS, p, q.bool("include_all_metadata")))
	}
	return page(q, msgs)
}

// historyConvLocked is the conversation whose history is asked for: the
// bot reads only conversations it is in.
func (s *Server) historyConvLocked(q *request) (conv, string) {
	c, code := s.resolveLocked(q.str("channel"))
	if code != "" {
		return conv{}, code
	}
	if !c.im && !slices.Contains(c.members, s.opts.BotUserID) {
		return conv{}, "not_in_channel"
	}
	return c, ""
}

func (s *Server) historyJSONLocked(ts string, p *postedMessage, withMetadata bool) map[string]any {
	if p.person != "" {
		return s.personMessageJSON(ts, p)
	}
	m := s.botMessageJSON(ts, p.text, p.blocks)
	if p.threadTS != "" {
		m["thread_ts"] = p.threadTS
	}
	if p.broadcast {
		m["subtype"] = "thread_broadcast"
	}
	if withMetadata && p.metadata != nil {
		m["metadata"] = p.metadata
	}
	return m
}

// inRange reports whether ts is within the request's oldest and latest.
func inRange(q *request, ts string) bool {
	t, err := strconv.ParseFloat(ts, 64)
	if err != nil {
		return false
	}
	incl := q.bool("inclusive")
	if v := q.str("oldest"); v != "" {
		if o, err := strconv.ParseFloat(v, 64); err == nil && (t < o || (t == o && !incl)) {
			return false
		}
	}
	if v := q.str("latest"); v != "" {
		if l, err := strconv.ParseFloat(v, 64); err == nil && (t > l || (t == l && !incl)) {
			return false
		}
	}
	return true
}

// page answers one page of msgs: the cursor is the offset of the page.
func page(q *request, msgs []map[string]any) map[string]any {
	limit := historyPage
	if l, err := strconv.Atoi(q.str("limit")); err == nil && l > 0 && l < limit {
		limit = l
	}
	from := 0
	if c := q.str("cursor"); c != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(c, "offset:"))
		if err != nil || n < 0 || n > len(msgs) {
			return apiError("invalid_cursor")
		}
		from = n
	}
	to := min(from+limit, len(msgs))
	resp := map[string]any{"messages": msgs[from:to], "has_more": to < len(msgs)}
	if to < len(msgs) {
		resp["response_metadata"] = map[string]any{"next_cursor": "offset:" + strconv.Itoa(to)}
	}
	return ok(resp)
}

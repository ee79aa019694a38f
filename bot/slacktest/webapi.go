package slacktest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// tokenNeed says which token a method takes.
type tokenNeed int

const (
	needBot tokenNeed = iota
	needApp
)

type method struct {
	token tokenNeed
	// fn runs with s.mu held and returns the JSON answer.
	fn func(s *Server, q *request) map[string]any
}

// methods are the Web API methods the server implements.
var methods = map[string]method{
	"apps.connections.open": {needApp, (*Server).appsConnectionsOpenLocked},
	"auth.test":             {needBot, (*Server).authTestLocked},
	"users.info":            {needBot, (*Server).usersInfoLocked},
	"conversations.info":    {needBot, (*Server).conversationsInfoLocked},
	"conversations.members": {needBot, (*Server).conversationsMembersLocked},
	"conversations.open":    {needBot, (*Server).conversationsOpenLocked},
	"conversations.history": {needBot, (*Server).conversationsHistoryLocked},
	"conversations.replies": {needBot, (*Server).conversationsRepliesLocked},
	"chat.postMessage":      {needBot, (*Server).chatPostMessageLocked},
	"chat.postEphemeral":    {needBot, (*Server).chatPostEphemeralLocked},
	"chat.update":           {needBot, (*Server).chatUpdateLocked},
	"chat.delete":           {needBot, (*Server).chatDeleteLocked},
	"views.open":            {needBot, (*Server).viewsOpenLocked},
	"views.update":          {needBot, (*Server).viewsUpdateLocked},
	"views.push":            {needBot, (*Server).viewsPushLocked},
	"views.publish":         {needBot, (*Server).viewsPublishLocked},
}

// request is a Web API request's parameters, however they were sent.
type request struct {
	form url.Values                 // query and form fields
	body map[string]json.RawMessage // top-level JSON fields, when JSON
	raw  []byte                     // the JSON body
}

func (q *request) str(k string) string {
	if v, ok := q.body[k]; ok {
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
		if string(v) == "null" {
			return ""
		}
		return string(v)
	}
	return q.form.Get(k)
}

func (q *request) bool(k string) bool {
	v := q.str(k)
	return v == "true" || v == "1"
}

// json returns a JSON-valued parameter: an object or array in a JSON body,
// or a JSON string in a form field.
func (q *request) json(k string) json.RawMessage {
	if v, ok := q.body[k]; ok {
		var s string
		if json.Unmarshal(v, &s) == nil {
			return json.RawMessage(s)
		}
		if string(v) == "null" {
			return nil
		}
		return v
	}
	if v := q.form.Get(k); v != "" {
		return json.RawMessage(v)
	}
	return nil
}

func parseRequest(r *http.Request) (*request, error) {
	q := &request{form: r.URL.Query()}
	r.Body = http.MaxBytesReader(nil, r.Body, 8<<20)
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		q.raw = b
		q.body = map[string]json.RawMessage{}
		if len(bytes.TrimSpace(b)) > 0 {
			if err := json.Unmarshal(b, &q.body); err != nil {
				return nil, err
			}
		}
	case "multipart/form-data":
		if err := r.ParseMultipartForm(8 << 20); err != nil {
			return nil, err
		}
		q.form = r.Form
	default:
		if err := r.ParseForm(); err != nil {
			return nil, err
		}
		q.form = r.Form
	}
	return q, nil
}

func apiError(code string) map[string]any {
	return map[string]any{"ok": false, "error": code}
}

func apiErrorMessages(code string, msgs []string) map[string]any {
	return map[string]any{"ok": false, "error": code, "response_metadata": map[string]any{"messages": msgs}}
}

func ok(fields map[string]any) map[string]any {
	if fields == nil {
		fields = map[string]any{}
	}
	fields["ok"] = true
	return fields
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"ok":false,"error":"internal_error"}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func (s *Server) tokenKind(tok string) string {
	switch tok {
	case s.opts.BotToken:
		return "bot"
	case s.opts.AppToken:
		return "app"
	}
	return "invalid"
}

// serveAPI answers https://slack.com/api/{method}.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/api/")
	q, perr := parseRequest(r)
	received := s.now()
	if perr != nil {
		q = &request{form: r.URL.Query()}
	}
	tok := ""
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		tok = strings.TrimPrefix(h, "Bearer ")
	} else {
		tok = q.form.Get("token")
	}
	form := url.Values{}
	for k, v := range q.form {
		if k != "token" {
			form[k] = slices.Clone(v)
		}
	}
	call := Call{Method: name, Form: form, JSON: cloneRaw(q.raw), Token: s.tokenKind(tok), Received: received}

	if s.stallCall(r, name, tok, call, q, perr) {
		return
	}
	if !s.wait(r, name) {
		return
	}

	s.mu.Lock()
	status, resp := s.answerLocked(name, tok, call.Token, q, perr, w)
	call.At = s.now()
	call.Status = status
	if e, _ := resp["error"].(string); e != "" {
		call.Error = e
	}
	s.calls = append(s.calls, call)
	s.notifyLocked()
	s.mu.Unlock()
	writeJSON(w, status, resp)
}

func (s *Server) answerLocked(name, tok, kind string, q *request, perr error, w http.ResponseWriter) (int, map[string]any) {
	if rl := s.rateLimit[name]; len(rl) > 0 {
		if rl[0].after > 0 {
			rl[0].after--
		} else {
			s.rateLimit[name] = rl[1:]
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(rl[0].retryAfter.Seconds()))))
			return http.StatusTooManyRequests, apiError("ratelimited")
		}
	}
	if fails := s.failNext[name]; len(fails) > 0 {
		s.failNext[name] = fails[1:]
		return http.StatusOK, apiError(fails[0])
	}
	m, known := methods[name]
	if !known {
		if s.tb != nil && !s.closed {
			s.tb.Errorf("slacktest: the bot called unknown Web API method %q", name)
		}
		return http.StatusOK, apiError("unknown_method")
	}
	if perr != nil {
		return http.StatusOK, apiError("invalid_form_data")
	}
	switch {
	case tok == "":
		return http.StatusOK, apiError("not_authed")
	case kind == "invalid":
		return http.StatusOK, apiError("invalid_auth")
	case m.token == needApp && kind != "app", m.token == needBot && kind != "bot":
		return http.StatusOK, apiError("not_allowed_token_type")
	}
	return http.StatusOK, m.fn(s, q)
}

// apps.connections.open

func (s *Server) appsConnectionsOpenLocked(*request) map[string]any {
	ticket := newUUID()
	s.tickets[ticket] = true
	u := "ws" + strings.TrimPrefix(s.URL, "http") + "/link/?ticket=" + ticket + "&app_id=" + s.opts.AppID
	return ok(map[string]any{"url": u})
}

// auth.test

func (s *Server) authTestLocked(*request) map[string]any {
	return ok(map[string]any{
		"url":                   "https://" + teamDomain + ".slack.com/",
		"team":                  "Bookbot Test",
		"user":                  DefaultBotName,
		"team_id":               s.opts.TeamID,
		"user_id":               s.opts.BotUserID,
		"bot_id":                DefaultBotID,
		"is_enterprise_install": false,
	})
}

// users.info

func (s *Server) userJSONLocked(u User) map[string]any {
	tz := u.TZ
	if tz == "" {
		tz = "UTC"
	}
	offset, label := 0, "Coordinated Universal Time"
	if loc, err := time.LoadLocation(tz); err == nil {
		name, off := s.now().In(loc).Zone()
		offset, label = off, name
	}
	name := u.Name
	if name == "" {
		name = strings.ToLower(u.ID)
	}
	real := u.RealName
	if real == "" {
		real = name
	}
	profile := map[string]any{
		"real_name":               real,
		"real_name_normalized":    real,
		"display_name":            name,
		"display_name_normalized": name,
		"team":                    s.opts.TeamID,
	}
	if u.Email != "" {
		profile["email"] = u.Email
	}
	if u.IsBot {
		profile["bot_id"] = DefaultBotID
	}
	return map[string]any{
		"id":          u.ID,
		"team_id":     s.opts.TeamID,
		"name":        name,
		"deleted":     false,
		"real_name":   real,
		"tz":          tz,
		"tz_label":    label,
		"tz_offset":   offset,
		"profile":     profile,
		"is_bot":      u.IsBot,
		"is_app_user": false,
		"locale":      "en-US",
		"updated":     s.now().Unix(),
	}
}

func (s *Server) usersInfoLocked(q *request) map[string]any {
	if list := q.str("users"); list != "" {
		var out []any
		for _, id := range strings.Split(list, ",") {
			u, found := s.users[strings.TrimSpace(id)]
			if !found {
				return apiError("user_not_found")
			}
			out = append(out, s.userJSONLocked(u))
		}
		return ok(map[string]any{"users": out})
	}
	id := q.str("user")
	if id == "" {
		return apiError("user_not_found")
	}
	u, found := s.users[id]
	if !found {
		return apiError("user_not_found")
	}
	return ok(map[string]any{"user": s.userJSONLocked(u)})
}

// conversations.*

// conv is a resolved conversation.
type conv struct {
	id      string
	name    string
	im      bool
	user    string // the DM's person
	private bool
	members []string
}

// resolveLocked finds a conversation the bot can see. A user ID resolves to
// the app's DM with that user, as chat.postMessage does.
func (s *Server) resolveLocked(id string) (conv, string) {
	switch {
	case id == "":
		return conv{}, "channel_not_found"
	case strings.HasPrefix(id, "U") || strings.HasPrefix(id, "W"):
		if _, found := s.users[id]; !found {
			return conv{}, "channel_not_found"
		}
		dm := s.dmLocked(id)
		return conv{id: dm, im: true, user: id, private: true, members: []string{id, s.opts.BotUserID}}, ""
	case strings.HasPrefix(id, "D"):
		u, found := s.dms[id]
		if !found {
			return conv{}, "channel_not_found"
		}
		return conv{id: id, im: true, user: u, private: true, members: []string{u, s.opts.BotUserID}}, ""
	}
	c, found := s.channels[id]
	if !found {
		return conv{}, "channel_not_found"
	}
	cv := conv{id: c.ID, name: c.Name, private: c.IsPrivate, members: slices.Clone(c.Members)}
	if c.IsPrivate && !slices.Contains(c.Members, s.opts.BotUserID) {
		return conv{}, "channel_not_found"
	}
	return cv, ""
}

func (s *Server) conversationsInfoLocked(q *request) map[string]any {
	c, code := s.resolveLocked(q.str("channel"))
	if code != "" {
		return apiError(code)
	}
	ch := map[string]any{
		"id":          c.id,
		"created":     1700000000,
		"is_archived": false,
		"is_private":  c.private,
		"is_member":   slices.Contains(c.members, s.opts.BotUserID),
		"is_im":       c.im,
		"is_mpim":     false,
	}
	if c.im {
		ch["user"] = c.user
		ch["is_open"] = true
	} else {
		ch["name"] = c.name
		ch["name_normalized"] = c.name
		ch["is_channel"] = !c.private
		ch["is_group"] = c.private
		ch["is_general"] = c.name == "general"
		if q.bool("include_num_members") {
			ch["num_members"] = len(c.members)
		}
	}
	if q.bool("include_locale") {
		ch["locale"] = "en-US"
	}
	return ok(map[string]any{"channel": ch})
}

func (s *Server) conversationsMembersLocked(q *request) map[string]any {
	c, code := s.resolveLocked(q.str("channel"))
	if code != "" {
		return apiError(code)
	}
	start := 0
	if cur := q.str("cursor"); cur != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(cur, "members:"))
		if err != nil || n < 0 || n > len(c.members) {
			return apiError("invalid_cursor")
		}
		start = n
	}
	limit := 100
	if l, err := strconv.Atoi(q.str("limit")); err == nil && l > 0 {
		limit = min(l, 1000)
	}
	end := min(start+limit, len(c.members))
	next := ""
	if end < len(c.members) {
		next = fmt.Sprintf("members:%d", end)
	}
	members := c.members[start:end]
	if members == nil {
		members = []string{}
	}
	return ok(map[string]any{"members": members, "response_metadata": map[string]any{"next_cursor": next}})
}

func (s *Server) conversationsOpenLocked(q *request) map[string]any {
	if ch := q.str("channel"); ch != "" {
		c, code := s.resolveLocked(ch)
		if code != "" {
			return apiError(code)
		}
		return ok(map[string]any{"channel": map[string]any{"id": c.id}})
	}
	users := strings.Split(q.str("users"), ",")
	if len(users) != 1 || users[0] == "" {
		return apiError("users_list_not_supplied")
	}
	if _, found := s.users[users[0]]; !found {
		return apiError("user_not_found")
	}
	return ok(map[string]any{"channel": map[string]any{"id": s.dmLocked(users[0])}})
}

// chat.*

const maxMessageText = 40_000

// messageContent reads and checks text and blocks.
func (s *Server) messageContent(q *request) (text string, blocks json.RawMessage, resp map[string]any) {
	text = q.str("text")
	blocks = q.json("blocks")
	if utf8.RuneCountInString(text) > maxMessageText {
		return "", nil, apiError("msg_too_long")
	}
	if len(blocks) > 0 {
		var bl []any
		if err := json.Unmarshal(blocks, &bl); err != nil {
			return "", nil, apiErrorMessages("invalid_blocks_format", []string{"[ERROR] blocks must be a JSON array"})
		}
		if msgs := validateBlocks(bl, surfaceMessage, "/blocks"); len(msgs) > 0 {
			s.blockKitBreach("message", msgs)
			return "", nil, apiErrorMessages("invalid_blocks", msgs)
		}
		if len(bl) == 0 {
			blocks = nil
		}
	}
	if text == "" && len(blocks) == 0 && q.json("attachments") == nil {
		return "", nil, apiError("no_text")
	}
	return text, blocks, nil
}

// renderMessageBlocks fills in block_id and action_id as Slack does.
func renderMessageBlocks(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var bl []any
	if json.Unmarshal(raw, &bl) != nil {
		return cloneRaw(raw)
	}
	out, _ := json.Marshal(renderBlocks(bl))
	return out
}

func (s *Server) botMessageJSON(ts, text string, blocks json.RawMessage) map[string]any {
	m := map[string]any{
		"type":    "message",
		"subtype": "bot_message",
		"text":    text,
		"user":    s.opts.BotUserID,
		"bot_id":  DefaultBotID,
		"app_id":  s.opts.AppID,
		"team":    s.opts.TeamID,
		"ts":      ts,
	}
	if len(blocks) > 0 {
		m["blocks"] = blocks
	}
	return m
}

func (s *Server) chatPostMessageLocked(q *request) map[string]any {
	channel := q.str("channel")
	c, code := s.resolveLocked(channel)
	if code != "" {
		return apiError(code)
	}
	if !c.im && !slices.Contains(c.members, s.opts.BotUserID) {
		return apiError("not_in_channel")
	}
	text, blocks, errResp := s.messageContent(q)
	if errResp != nil {
		return errResp
	}
	threadTS := q.str("thread_ts")
	if threadTS != "" {
		if p, found := s.posted[threadTS]; !found || p.deleted || p.ephemeral {
			return apiError("thread_not_found")
		}
	}
	metadata, errResp := messageMetadata(q)
	if errResp != nil {
		return errResp
	}
	// Slack ignores reply_broadcast outside a thread.
	broadcast := threadTS != "" && q.bool("reply_broadcast")
	ts := s.tsLocked()
	rendered := renderMessageBlocks(blocks)
	s.posted[ts] = &postedMessage{channel: channel, dm: c.id, text: text, blocks: rendered, threadTS: threadTS, broadcast: broadcast, metadata: metadata}
	s.messages = append(s.messages, Message{
		Kind: "message", Channel: channel, TS: ts, Text: text, Blocks: cloneRaw(blocks),
		ThreadTS: threadTS, Broadcast: broadcast, Metadata: cloneRaw(metadata), At: s.now(),
	})
	return ok(map[string]any{"channel": c.id, "ts": ts, "message": s.botMessageJSON(ts, text, rendered)})
}

func (s *Server) chatPostEphemeralLocked(q *request) map[string]any {
	channel := q.str("channel")
	c, code := s.resolveLocked(channel)
	if code != "" {
		return apiError(code)
	}
	user := q.str("user")
	if user == "" {
		return apiError("user_not_found")
	}
	if _, found := s.users[user]; !found {
		return apiError("user_not_found")
	}
	if c.im {
		if c.user != user {
			return apiError("user_not_in_channel")
		}
	} else if !slices.Contains(c.members, user) {
		return apiError("user_not_in_channel")
	}
	text, blocks, errResp := s.messageContent(q)
	if errResp != nil {
		return errResp
	}
	ts := s.tsLocked()
	s.posted[ts] = &postedMessage{channel: channel, dm: c.id, text: text, blocks: renderMessageBlocks(blocks), ephemeral: true, user: user}
	s.messages = append(s.messages, Message{
		Kind: "ephemeral", Channel: channel, User: user, TS: ts, Text: text, Blocks: cloneRaw(blocks),
		ThreadTS: q.str("thread_ts"), At: s.now(),
	})
	return ok(map[string]any{"message_ts": ts})
}

// findPostedLocked finds a message the bot can still edit.
func (s *Server) findPostedLocked(channel, ts string) (*postedMessage, string) {
	if channel == "" {
		return nil, "channel_not_found"
	}
	if ts == "" {
		return nil, "message_not_found"
	}
	p, found := s.posted[ts]
	if !found || p.deleted || p.ephemeral {
		return nil, "message_not_found"
	}
	if p.channel != channel && p.dm != channel {
		if c, code := s.resolveLocked(channel); code != "" || c.id != p.dm {
			return nil, "message_not_found"
		}
	}
	return p, ""
}

func (s *Server) chatUpdateLocked(q *request) map[string]any {
	channel, ts := q.str("channel"), q.str("ts")
	p, code := s.findPostedLocked(channel, ts)
	if code != "" {
		return apiError(code)
	}
	text, blocks, errResp := s.messageContent(q)
	if errResp != nil {
		return errResp
	}
	metadata, errResp := messageMetadata(q)
	if errResp != nil {
		return errResp
	}
	p.text, p.blocks = text, renderMessageBlocks(blocks)
	if metadata != nil {
		p.metadata = metadata
	}
	s.messages = append(s.messages, Message{
		Kind: "update", Channel: channel, TS: ts, Text: text, Blocks: cloneRaw(blocks), Metadata: cloneRaw(metadata), At: s.now(),
	})
	return ok(map[string]any{"channel": p.dm, "ts": ts, "text": text, "message": s.botMessageJSON(ts, text, p.blocks)})
}

func (s *Server) chatDeleteLocked(q *request) map[string]any {
	channel, ts := q.str("channel"), q.str("ts")
	p, code := s.findPostedLocked(channel, ts)
	if code != "" {
		return apiError(code)
	}
	p.deleted = true
	s.messages = append(s.messages, Message{Kind: "delete", Channel: channel, TS: ts, At: s.now()})
	return ok(map[string]any{"channel": p.dm, "ts": ts})
}

// response_url

func (s *Server) issueResponseURLLocked(kind, channel, user, originalTS string) string {
	path := fmt.Sprintf("/%s/%s/%d/%s", kind, s.opts.TeamID, 1000000+s.nextLocked(), randomHex(24))
	s.responseURLs[path] = &responseURL{channel: channel, user: user, originalTS: originalTS, issued: s.now()}
	return s.URL + path
}

// serveResponseURL answers posts to a response_url this server issued.
func (s *Server) serveResponseURL(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(http.MaxBytesReader(w, r.Body, 8<<20))
	call := Call{Method: "response_url", Form: url.Values{}, JSON: cloneRaw(body)}
	if !s.wait(r, "response_url") {
		return
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	status, resp := s.answerResponseURLLocked(r, body)
	call.At, call.Status = s.now(), status
	call.Error, _ = resp["error"].(string)
	s.calls = append(s.calls, call)
	s.notifyLocked()
	writeJSON(w, status, resp)
}

func (s *Server) answerResponseURLLocked(r *http.Request, body []byte) (int, map[string]any) {
	if fails := s.failNext["response_url"]; len(fails) > 0 {
		s.failNext["response_url"] = fails[1:]
		return http.StatusOK, apiError(fails[0])
	}
	ru, found := s.responseURLs[r.URL.Path]
	if !found || r.Method != http.MethodPost {
		return http.StatusNotFound, apiError("invalid_url")
	}
	if s.now().Sub(ru.issued) > ResponseURLTTL {
		return http.StatusOK, apiError("expired_url")
	}
	if ru.uses >= ResponseURLUses {
		return http.StatusOK, apiError("used_url")
	}
	var msg struct {
		Text            string          `json:"text"`
		Blocks          json.RawMessage `json:"blocks"`
		ResponseType    string          `json:"response_type"`
		ReplaceOriginal bool            `json:"replace_original"`
		DeleteOriginal  bool            `json:"delete_original"`
		ThreadTS        string          `json:"thread_ts"`
		Metadata        json.RawMessage `json:"metadata"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		return http.StatusBadRequest, apiError("invalid_payload")
	}
	metadata, errResp := messageMetadata(&request{body: map[string]json.RawMessage{"metadata": msg.Metadata}})
	if errResp != nil {
		return http.StatusOK, errResp
	}
	if string(msg.Blocks) == "null" {
		msg.Blocks = nil
	}
	if len(msg.Blocks) > 0 {
		var bl []any
		if json.Unmarshal(msg.Blocks, &bl) != nil {
			return http.StatusBadRequest, apiError("invalid_blocks_format")
		}
		if msgs := validateBlocks(bl, surfaceMessage, "/blocks"); len(msgs) > 0 {
			s.blockKitBreach("response_url message", msgs)
			return http.StatusOK, apiErrorMessages("invalid_blocks", msgs)
		}
	}
	if msg.Text == "" && len(msg.Blocks) == 0 && !msg.DeleteOriginal {
		return http.StatusOK, apiError("no_text")
	}
	ru.uses++
	m := Message{
		Kind: "response_url", Channel: ru.channel, User: ru.user, Text: msg.Text, Blocks: cloneRaw(msg.Blocks),
		ReplaceOriginal: msg.ReplaceOriginal, DeleteOriginal: msg.DeleteOriginal, ResponseType: msg.ResponseType,
		ThreadTS: msg.ThreadTS, Metadata: cloneRaw(metadata), At: s.now(),
	}
	if ru.originalTS != "" && (msg.ReplaceOriginal || msg.DeleteOriginal) {
		m.OriginalTS = ru.originalTS
		m.TS = ru.originalTS
		if p, found := s.posted[ru.originalTS]; found {
			if msg.DeleteOriginal {
				p.deleted = true
			} else {
				p.text, p.blocks = msg.Text, renderMessageBlocks(msg.Blocks)
				if metadata != nil {
					p.metadata = metadata
				}
			}
		}
	} else if !msg.DeleteOriginal {
		m.TS = s.tsLocked()
		s.posted[m.TS] = &postedMessage{
			channel: ru.channel, dm: ru.channel, text: msg.Text, blocks: renderMessageBlocks(msg.Blocks),
			ephemeral: msg.ResponseType != "in_channel", user: ru.user, metadata: metadata,
		}
	}
	s.messages = append(s.messages, m)
	return http.StatusOK, ok(nil)
}

package slacktest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"
)

// wsConn is one Socket Mode connection.
type wsConn struct {
	id      int
	c       *websocket.Conn
	writeMu sync.Mutex
	gone    chan struct{} // closed when the reader stops

	// Guarded by Server.mu.
	host        string // debug_info.host in its hello
	remote      string
	connectedAt time.Time
	deliveries  int
}

// ConnInfo describes a live Socket Mode connection. The server cannot tell
// which process holds a connection (every replica uses the same app
// token); a client learns its ID from the host in its hello (slack-go
// passes the hello on as an EventTypeHello event whose
// Request.DebugInfo.Host is Host), a test from the order it started
// clients in.
type ConnInfo struct {
	// ID numbers connections in the order they were opened, from 1; a
	// client that reconnects gets a new ID. ToConnection takes it.
	ID int
	// Host is the debug_info.host the hello carried, "slacktest-applink-ID".
	Host string
	// RemoteAddr is the client's address (host:port) as the server saw it.
	RemoteAddr string
	// ConnectedAt is when the connection was opened, on the server clock.
	ConnectedAt time.Time
	// Deliveries counts the envelopes written to the connection,
	// redeliveries included.
	Deliveries int
}

func (c *wsConn) info() ConnInfo {
	return ConnInfo{ID: c.id, Host: c.host, RemoteAddr: c.remote, ConnectedAt: c.connectedAt, Deliveries: c.deliveries}
}

// DeliverOption adjusts how an envelope is delivered; the methods that
// send envelopes (SendSlashCommand, SendInteraction, SendEvent, Redeliver,
// Submit, …) take them.
type DeliverOption func(*deliverConfig)

type deliverConfig struct {
	targeted bool
	conn     int // the targeted connection's ID
}

// ToConnection delivers the envelope on the live connection with this ID
// (see LiveConnections) instead of the one the server would pick. When
// that connection is not live, or fails the write, the delivery fails
// with ErrNoConnection; it is not handed to another connection. A
// targeted delivery does not take a turn from Options.Spread.
func ToConnection(id int) DeliverOption {
	return func(c *deliverConfig) { c.targeted, c.conn = true, id }
}

func deliverConfigOf(opts []DeliverOption) deliverConfig {
	var c deliverConfig
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

func (c *wsConn) write(b []byte) error { return c.writeStamped(b, nil) }

// writeStamped calls stamp as the message goes onto the socket, after any
// writes queued before it, so a delivery time excludes the server's own
// queueing.
func (c *wsConn) writeStamped(b []byte, stamp func()) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if stamp != nil {
		stamp()
	}
	_ = c.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	defer func() { _ = c.c.SetWriteDeadline(time.Time{}) }()
	return c.c.WriteMessage(websocket.TextMessage, b)
}

// envelope is a Socket Mode request the server sent.
type envelope struct {
	id           string
	typ          string // slash_commands, interactive, events_api
	payload      json.RawMessage
	accepts      bool
	retryAttempt int
	retryReason  string

	// What the ack means.
	interaction string // the interactive payload's type
	viewID      string // view_submission: the view submitted
	channel     string // slash command: where the person typed it
	user        string

	deliveredAt time.Time
	delivery    *delivery // the latest delivery
	acked       bool
}

func (e *envelope) wire() []byte {
	m := map[string]any{
		"envelope_id":              e.id,
		"type":                     e.typ,
		"payload":                  e.payload,
		"accepts_response_payload": e.accepts,
	}
	if e.typ == "events_api" || e.retryAttempt > 0 {
		m["retry_attempt"] = e.retryAttempt
		m["retry_reason"] = e.retryReason
	}
	b, _ := json.Marshal(m)
	return b
}

type ackResult struct {
	ack Ack
	err error
}

type delivery struct {
	at   time.Time
	sent atomic.Int64 // UnixNano when written to the socket; 0 before
	ch   chan ackResult
}

// deliveredAt is when the envelope went onto the socket (at, if unknown).
func (d *delivery) deliveredAt() time.Time {
	if n := d.sent.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return d.at
}

// serveLink is the Socket Mode WebSocket endpoint apps.connections.open
// hands out.
func (s *Server) serveLink(w http.ResponseWriter, r *http.Request) {
	ticket := r.URL.Query().Get("ticket")
	s.mu.Lock()
	valid := s.tickets[ticket] && !s.closed
	delete(s.tickets, ticket)
	s.mu.Unlock()
	if !valid {
		http.Error(w, "invalid or used ticket", http.StatusUnauthorized)
		return
	}
	c, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	wc := &wsConn{c: c, gone: make(chan struct{})}

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = c.Close()
		return
	}
	s.opened++
	wc.id = s.opened
	wc.host = "slacktest-applink-" + fmt.Sprint(wc.id)
	wc.remote = r.RemoteAddr
	wc.connectedAt = s.now()
	hello, _ := json.Marshal(map[string]any{
		"type":            "hello",
		"num_connections": len(s.conns) + 1,
		"debug_info": map[string]any{
			"host":                        wc.host,
			"build_number":                1,
			"approximate_connection_time": 18060,
		},
		"connection_info": map[string]any{"app_id": s.opts.AppID},
	})
	s.wg.Add(2)
	s.mu.Unlock()

	go s.ping(wc)
	defer s.wg.Done()
	defer close(wc.gone)
	defer s.dropConn(wc)

	// The hello is written and the connection made live in one step, so
	// that a client which has read its hello gets the next envelope (the
	// newest connection does), and no envelope goes out before a hello.
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	if err := wc.write(hello); err != nil {
		s.mu.Unlock()
		return
	}
	// In opening order, though hellos may go out in another.
	i, _ := slices.BinarySearchFunc(s.conns, wc.id, func(c *wsConn, id int) int { return c.id - id })
	s.conns = slices.Insert(slices.Clone(s.conns), i, wc)
	s.notifyLocked()
	s.mu.Unlock()

	// Acks are read and stamped by a reader of their own: matching one
	// waits for the server's lock, which envelopes being made hold, and
	// the acks behind it would be timed by that wait, not the client's.
	type read struct {
		msg []byte
		at  time.Time
	}
	reads := make(chan read, 1024)
	go func() {
		defer close(reads)
		for {
			_, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			reads <- read{msg, s.now()}
		}
	}()
	for r := range reads { // every ack read is matched before the connection is gone
		s.handleAck(wc, r.msg, r.at)
	}
}

func (s *Server) dropConn(wc *wsConn) {
	_ = wc.c.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, c := range s.conns {
		if c == wc {
			s.conns = append(s.conns[:i:i], s.conns[i+1:]...)
			break
		}
	}
	s.notifyLocked()
}

// ping sends WebSocket pings; slack-go reconnects without them.
func (s *Server) ping(wc *wsConn) {
	defer s.wg.Done()
	t := time.NewTicker(s.opts.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if err := wc.c.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(10*time.Second)); err != nil {
				return
			}
		case <-wc.gone:
			return
		case <-s.done:
			return
		}
	}
}

// WaitConnected blocks until a client is connected and has been sent hello.
func (s *Server) WaitConnected(ctx context.Context) error {
	return s.waitFor(ctx, func() bool { return len(s.conns) > 0 })
}

// WaitConnections blocks until n connections have been opened in total and
// one is live. WaitLiveConnections waits for n at once.
func (s *Server) WaitConnections(ctx context.Context, n int) error {
	return s.waitFor(ctx, func() bool { return s.opened >= n && len(s.conns) > 0 })
}

// Connections is how many Socket Mode connections have been opened in total.
// LiveConnections describes the ones open now.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opened
}

// LiveConnections describes the live connections (hello sent, not closed),
// in the order they were opened.
func (s *Server) LiveConnections() []ConnInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.liveLocked()
}

// WaitLiveConnections blocks until exactly n connections are live (n
// clients connected, or the rest gone) and returns them as LiveConnections
// does, or until ctx is done.
func (s *Server) WaitLiveConnections(ctx context.Context, n int) ([]ConnInfo, error) {
	var live []ConnInfo
	err := s.waitFor(ctx, func() bool {
		if len(s.conns) != n {
			return false
		}
		live = s.liveLocked()
		return true
	})
	if err != nil {
		return nil, err
	}
	return live, nil
}

func (s *Server) liveLocked() []ConnInfo {
	out := make([]ConnInfo, 0, len(s.conns))
	for _, c := range s.conns {
		out = append(out, c.info())
	}
	return out
}

// DropConnection cuts one live connection, as Drop does every one: no
// disconnect message, no close frame. It fails with ErrNoConnection when
// no live connection has that ID.
func (s *Server) DropConnection(id int) error {
	s.mu.Lock()
	i := slices.IndexFunc(s.conns, func(c *wsConn) bool { return c.id == id })
	if i < 0 {
		s.mu.Unlock()
		return fmt.Errorf("%w: %d", ErrNoConnection, id)
	}
	c := s.conns[i]
	s.conns = slices.Delete(slices.Clone(s.conns), i, i+1)
	s.notifyLocked()
	s.mu.Unlock()
	_ = c.c.Close()
	return nil
}

// Disconnect sends {"type":"disconnect","reason":reason} on every live
// connection and closes them; slack-go then reconnects through
// apps.connections.open.
func (s *Server) Disconnect(reason string) {
	s.mu.Lock()
	conns := s.conns
	s.conns = nil
	s.notifyLocked()
	s.mu.Unlock()
	msg, _ := json.Marshal(map[string]any{
		"type":   "disconnect",
		"reason": reason,
		"debug_info": map[string]any{
			"host": "slacktest-applink",
		},
	})
	for _, c := range conns {
		_ = c.write(msg)
		_ = c.c.WriteControl(websocket.CloseMessage,
			websocket.FormatCloseMessage(websocket.CloseNormalClosure, reason), time.Now().Add(time.Second))
		_ = c.c.Close()
	}
}

// Drop cuts every live Socket Mode connection at once, without a
// disconnect message or a close frame, as when the network fails; slack-go
// notices the dead socket and reconnects through apps.connections.open.
func (s *Server) Drop() {
	s.mu.Lock()
	conns := s.conns
	s.conns = nil
	s.notifyLocked()
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.c.Close() // gorilla's Close sends no close frame
	}
}

// deliver sends env to a live connection and waits for its ack: the one
// ToConnection names, else the next in turn with Options.Spread, else the
// newest. A connection that fails the write is dropped and the next one is
// tried, as Slack does (unless the delivery was targeted); so is one that
// closes before it acks (see redeliverAfterClose). A redelivery (retry)
// counts one more retry_attempt when it goes out.
func (s *Server) deliver(ctx context.Context, env *envelope, retry bool, opts []DeliverOption) (Ack, error) {
	cfg := deliverConfigOf(opts)
	d := &delivery{ch: make(chan ackResult, 1)}
	retried := false
	for {
		var c *wsConn
		var wire []byte
		var pickErr error
		if err := s.waitFor(ctx, func() bool {
			if s.closed {
				return false // waitFor answers ErrClosed
			}
			c, pickErr = s.pickLocked(cfg)
			if c == nil {
				return pickErr != nil
			}
			if retry && !retried {
				env.retryAttempt++
				env.retryReason = "timeout"
				retried = true
			}
			d.at = s.now()
			env.deliveredAt = d.at
			env.delivery = d
			env.acked = false
			s.envelopes[env.id] = env
			s.pending[env.id] = append(s.pending[env.id], d)
			wire = env.wire()
			return true
		}); err != nil {
			return Ack{EnvelopeID: env.id}, err
		}
		if pickErr != nil {
			return Ack{EnvelopeID: env.id}, pickErr
		}
		if err := c.writeStamped(wire, func() { d.sent.Store(s.now().UnixNano()) }); err != nil {
			s.forget(env.id, d)
			s.dropConn(c)
			if cfg.targeted {
				return Ack{EnvelopeID: env.id}, fmt.Errorf("%w: %d failed the write: %v", ErrNoConnection, c.id, err)
			}
			continue
		}
		s.mu.Lock()
		c.deliveries++
		s.mu.Unlock()
		select {
		case r := <-d.ch:
			return r.ack, r.err
		case <-ctx.Done():
			s.forget(env.id, d)
			return Ack{EnvelopeID: env.id}, ctx.Err()
		case <-s.done:
			return Ack{EnvelopeID: env.id}, ErrClosed
		case <-c.gone:
			if r, acked := s.redeliverAfterClose(env.id, d); acked {
				return r.ack, r.err
			}
			if cfg.targeted {
				return Ack{EnvelopeID: env.id}, fmt.Errorf("%w: %d closed before the ack", ErrNoConnection, c.id)
			}
			d = &delivery{ch: make(chan ackResult, 1)}
			retry, retried = true, false
		}
	}
}

// redeliverAfterClose is what Slack does with an envelope whose connection
// closed before it was acked: it sends it again, retry_attempt one higher,
// to another connection (here at once, not after the ack timeout). The ack
// may have come in just before the close: then it stands.
func (s *Server) redeliverAfterClose(id string, d *delivery) (ackResult, bool) {
	// The connection's reader matched every ack it read before it stopped.
	select {
	case r := <-d.ch:
		return r, true
	default:
	}
	s.forget(id, d)
	return ackResult{}, false
}

// pickLocked chooses the connection for a delivery: nil and no error when
// none is live yet.
func (s *Server) pickLocked(cfg deliverConfig) (*wsConn, error) {
	if cfg.targeted {
		for _, c := range s.conns {
			if c.id == cfg.conn {
				return c, nil
			}
		}
		return nil, fmt.Errorf("%w: %d", ErrNoConnection, cfg.conn)
	}
	if len(s.conns) == 0 {
		return nil, nil
	}
	if !s.opts.Spread {
		return s.conns[len(s.conns)-1], nil
	}
	// The live connection opened next after the last one served, else
	// the first opened: a turn each, skipping the gone, in opening order.
	next := s.conns[0]
	for _, c := range s.conns {
		if c.id > s.spreadLast {
			next = c
			break
		}
	}
	s.spreadLast = next.id
	return next, nil
}

func (s *Server) forget(id string, d *delivery) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ds := s.pending[id]
	for i, x := range ds {
		if x == d {
			s.pending[id] = append(ds[:i:i], ds[i+1:]...)
			break
		}
	}
	if len(s.pending[id]) == 0 {
		delete(s.pending, id)
	}
}

// handleAck matches an ack to its envelope and does what Slack does with it.
func (s *Server) handleAck(wc *wsConn, raw []byte, received time.Time) {
	var msg struct {
		EnvelopeID string          `json:"envelope_id"`
		Payload    json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(raw, &msg); err != nil || msg.EnvelopeID == "" {
		s.reportf("slacktest: client sent something that is not an ack: %.200s", raw)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := received
	ack := Ack{EnvelopeID: msg.EnvelopeID, Raw: cloneRaw(raw), ConnID: wc.id}
	if len(msg.Payload) > 0 && string(msg.Payload) != "null" {
		ack.Payload = cloneRaw(msg.Payload)
	}
	env, known := s.envelopes[msg.EnvelopeID]
	var err error
	switch {
	case !known:
		err = fmt.Errorf("%w: ack for %s", ErrUnknownEnvelope, msg.EnvelopeID)
	case len(raw) >= MaxAckBytes:
		ack.Dropped = true
		err = fmt.Errorf("%w (%d bytes)", ErrAckTooLarge, len(raw))
	}
	if known {
		ack.Envelope = env.wire()
		ack.Delay = now.Sub(env.deliveredAt)
		if env.delivery != nil {
			ack.Delay = now.Sub(env.delivery.deliveredAt())
		}
		ack.Late = ack.Delay > AckTimeout
		switch {
		case ack.Dropped:
		case env.acked:
			ack.Duplicate = true
		case ack.Late:
			env.acked = true
		default:
			env.acked = true
			err = s.applyAckLocked(env, ack.Payload)
		}
	}
	s.acks = append(s.acks, ack)
	ds := s.pending[msg.EnvelopeID]
	delete(s.pending, msg.EnvelopeID)
	s.notifyLocked()
	for _, d := range ds {
		a := copyAck(ack)
		a.Sent = d.deliveredAt()
		a.Delay = now.Sub(a.Sent)
		d.ch <- ackResult{ack: a, err: err}
	}
}

func (s *Server) applyAckLocked(env *envelope, payload json.RawMessage) error {
	switch {
	case env.typ == "slash_commands" && len(payload) > 0:
		var msg struct {
			Text         string          `json:"text"`
			Blocks       json.RawMessage `json:"blocks"`
			ResponseType string          `json:"response_type"`
		}
		if err := json.Unmarshal(payload, &msg); err != nil {
			return fmt.Errorf("slacktest: slash command ack payload: %w", err)
		}
		if string(msg.Blocks) == "null" {
			msg.Blocks = nil
		}
		if len(msg.Blocks) > 0 {
			var bl []any
			if json.Unmarshal(msg.Blocks, &bl) != nil {
				return errors.New("slacktest: slash command ack blocks are not a JSON array")
			}
			if msgs := validateBlocks(bl, surfaceMessage, "/blocks"); len(msgs) > 0 {
				s.blockKitBreach("slash command ack", msgs)
				return fmt.Errorf("slacktest: slash command ack has invalid blocks: %v", msgs)
			}
		}
		if msg.Text == "" && len(msg.Blocks) == 0 {
			return nil
		}
		rt := msg.ResponseType
		if rt == "" {
			rt = "ephemeral"
		}
		ts := s.tsLocked()
		s.posted[ts] = &postedMessage{channel: env.channel, dm: env.channel, text: msg.Text, blocks: renderMessageBlocks(msg.Blocks), ephemeral: rt != "in_channel", user: env.user}
		s.messages = append(s.messages, Message{
			Kind: "ack", Channel: env.channel, User: env.user, TS: ts, Text: msg.Text,
			Blocks: cloneRaw(msg.Blocks), ResponseType: rt, At: s.now(),
		})
	case env.typ == "interactive" && env.interaction == "view_submission":
		return s.applySubmissionAckLocked(env.viewID, payload)
	}
	return nil
}

// Redeliver sends an envelope again, as Slack does when an ack is missing
// (the server does so by itself when a connection closes before its ack):
// same envelope_id and payload, retry_attempt one higher, retry_reason
// "timeout". Like Slack's, the retry may go to another connection than the
// first delivery: the server's pick (Options.Spread), or the one given with
// ToConnection.
func (s *Server) Redeliver(ctx context.Context, envelopeID string, opts ...DeliverOption) (Ack, error) {
	s.mu.Lock()
	env, known := s.envelopes[envelopeID]
	s.mu.Unlock()
	if !known {
		return Ack{EnvelopeID: envelopeID}, ErrUnknownEnvelope
	}
	return s.deliver(ctx, env, true, opts)
}

// SendSlashCommand delivers a slash command the way Slack does and waits for
// its ack. Team, trigger_id, response_url, channel and user name are filled
// in; the channel defaults to the person's DM with the app.
func (s *Server) SendSlashCommand(ctx context.Context, cmd SlashCommand, opts ...DeliverOption) (Ack, error) {
	if cmd.UserID == "" {
		return Ack{}, errors.New("slacktest: SlashCommand.UserID is required")
	}
	if !strings.HasPrefix(cmd.Command, "/") {
		return Ack{}, fmt.Errorf("slacktest: command %q must start with /", cmd.Command)
	}
	s.mu.Lock()
	if cmd.TeamID == "" {
		cmd.TeamID = s.opts.TeamID
	}
	if cmd.ChannelID == "" {
		cmd.ChannelID = s.dmLocked(cmd.UserID)
	}
	channelName := "directmessage"
	if c, found := s.channels[cmd.ChannelID]; found {
		channelName = c.Name
		if c.IsPrivate {
			channelName = "privategroup"
		}
	}
	userName := strings.ToLower(cmd.UserID)
	if u, found := s.users[cmd.UserID]; found && u.Name != "" {
		userName = u.Name
	}
	sc := slack.SlashCommand{
		Token:       verificationToken,
		TeamID:      cmd.TeamID,
		TeamDomain:  teamDomain,
		ChannelID:   cmd.ChannelID,
		ChannelName: channelName,
		UserID:      cmd.UserID,
		UserName:    userName,
		Command:     cmd.Command,
		Text:        cmd.Text,
		APIAppID:    s.opts.AppID,
		ResponseURL: s.issueResponseURLLocked("commands", cmd.ChannelID, cmd.UserID, ""),
		TriggerID:   s.issueTriggerLocked(cmd.UserID, ""),
	}
	// Slack sends every slash command field as a string, booleans included.
	fields, _ := toMap(sc)
	fields["is_enterprise_install"] = "false"
	delete(fields, "enterprise_id")
	delete(fields, "enterprise_name")
	payload, _ := json.Marshal(fields)
	env := &envelope{
		id: newUUID(), typ: "slash_commands", payload: payload, accepts: true,
		channel: cmd.ChannelID, user: cmd.UserID,
	}
	s.mu.Unlock()
	return s.deliver(ctx, env, false, opts)
}

// SendEvent delivers an Events API event (for example an app_home_opened
// event as a map or a slackevents type) wrapped in an event_callback, and
// waits for its ack. An event that already is an event_callback is sent as
// is, with missing fields filled in.
func (s *Server) SendEvent(ctx context.Context, event any, opts ...DeliverOption) (Ack, error) {
	m, err := toMap(event)
	if err != nil {
		return Ack{}, err
	}
	s.mu.Lock()
	outer := m
	if str(m, "type") != "event_callback" {
		outer = map[string]any{"type": "event_callback", "event": m}
	}
	inner, _ := outer["event"].(map[string]any)
	if inner == nil || str(inner, "type") == "" {
		s.mu.Unlock()
		return Ack{}, errors.New("slacktest: event has no type")
	}
	now := s.now()
	if str(inner, "event_ts") == "" {
		inner["event_ts"] = fmt.Sprintf("%d.%06d", now.Unix(), now.Nanosecond()/1000)
	}
	if str(inner, "type") == "app_home_opened" {
		user := str(inner, "user")
		if str(inner, "channel") == "" && user != "" {
			inner["channel"] = s.dmLocked(user)
		}
		if str(inner, "tab") == "" {
			inner["tab"] = "home"
		}
		if _, has := inner["view"]; !has && str(inner, "tab") == "home" {
			if id, found := s.homes[user]; found {
				inner["view"] = s.renderLocked(s.views[id])
			}
		}
	}
	setDefault(outer, "token", verificationToken)
	setDefault(outer, "team_id", s.opts.TeamID)
	setDefault(outer, "api_app_id", s.opts.AppID)
	setDefault(outer, "event_id", fmt.Sprintf("Ev%010d", s.nextLocked()))
	setDefault(outer, "event_time", now.Unix())
	setDefault(outer, "event_context", "4-"+randomHex(40))
	setDefault(outer, "is_ext_shared_channel", false)
	setDefault(outer, "authorizations", []any{map[string]any{
		"enterprise_id": nil, "team_id": s.opts.TeamID, "user_id": s.opts.BotUserID,
		"is_bot": true, "is_enterprise_install": false,
	}})
	payload, err := json.Marshal(outer)
	if err != nil {
		s.mu.Unlock()
		return Ack{}, err
	}
	env := &envelope{id: newUUID(), typ: "events_api", payload: payload}
	s.mu.Unlock()
	return s.deliver(ctx, env, false, opts)
}

// OpenAppHome delivers app_home_opened for the Home tab, as when the person
// clicks the app, carrying the last published Home view.
func (s *Server) OpenAppHome(ctx context.Context, userID string, opts ...DeliverOption) (Ack, error) {
	return s.SendEvent(ctx, map[string]any{"type": "app_home_opened", "user": userID, "tab": "home"}, opts...)
}

func setDefault(m map[string]any, k string, v any) {
	if cur, has := m[k]; !has || cur == nil || cur == "" {
		m[k] = v
	}
}

// toMap turns a payload into a JSON object. slack.InteractionCallback is
// marshalled through its pointer so its MarshalJSON (which writes state)
// runs.
func toMap(v any) (map[string]any, error) {
	var b []byte
	var err error
	switch x := v.(type) {
	case json.RawMessage:
		b = x
	case []byte:
		b = x
	case string:
		b = []byte(x)
	case slack.InteractionCallback:
		b, err = json.Marshal(&x)
	default:
		b, err = json.Marshal(v)
	}
	if err != nil {
		return nil, fmt.Errorf("slacktest: marshalling payload: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("slacktest: payload must be a JSON object: %w", err)
	}
	return m, nil
}

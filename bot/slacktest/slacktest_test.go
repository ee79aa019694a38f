package slacktest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/bookbot/bookbot/internal/fakeclock"
)

func TestConnectAndHello(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	b := startBot(t, srv)
	ctx := testCtx(t)
	if err := srv.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	if got := srv.Connections(); got != 1 {
		t.Errorf("Connections() = %d, want 1", got)
	}
	call, err := srv.WaitCall(ctx, "apps.connections.open")
	if err != nil {
		t.Fatal(err)
	}
	if call.Token != "app" {
		t.Errorf("apps.connections.open token = %q, want app", call.Token)
	}
	// The bot can use the Web API too.
	res, err := b.api.AuthTestContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.UserID != DefaultBotUserID || res.TeamID != DefaultTeamID || res.BotID == "" {
		t.Errorf("auth.test = %+v", res)
	}
}

func TestSlashCommandDeliveredAndAcked(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	srv.AddUser(User{ID: "U1", Name: "ada", RealName: "Ada Lovelace", TZ: "Europe/London"})
	srv.AddChannel(Channel{ID: "C1", Name: "bookings", Members: []string{"U1", DefaultBotUserID}})
	b := startBot(t, srv)
	b.onEvent(func(evt socketmode.Event) any {
		return map[string]any{"text": "Working on it…"}
	})
	ctx := testCtx(t)

	ack, err := srv.SendSlashCommand(ctx, SlashCommand{Command: "/booking", Text: "list", UserID: "U1", ChannelID: "C1"})
	if err != nil {
		t.Fatal(err)
	}
	evt := b.next(t)
	if evt.Type != socketmode.EventTypeSlashCommand {
		t.Fatalf("event type = %s", evt.Type)
	}
	cmd := evt.Data.(slack.SlashCommand)
	if cmd.Command != "/booking" || cmd.Text != "list" || cmd.UserID != "U1" || cmd.UserName != "ada" ||
		cmd.ChannelID != "C1" || cmd.ChannelName != "bookings" || cmd.TeamID != DefaultTeamID || cmd.APIAppID != DefaultAppID {
		t.Errorf("slash command = %+v", cmd)
	}
	if cmd.TriggerID == "" || !strings.HasPrefix(cmd.ResponseURL, srv.URL+"/commands/") {
		t.Errorf("trigger_id %q, response_url %q", cmd.TriggerID, cmd.ResponseURL)
	}
	if !evt.Request.AcceptsResponsePayload {
		t.Error("slash commands accept a response payload")
	}
	if ack.EnvelopeID != evt.Request.EnvelopeID {
		t.Errorf("ack envelope %q, delivered %q", ack.EnvelopeID, evt.Request.EnvelopeID)
	}
	var p struct{ Text string }
	if err := json.Unmarshal(ack.Payload, &p); err != nil || p.Text != "Working on it…" {
		t.Errorf("ack payload %s (%v)", ack.Payload, err)
	}
	if ack.Late || ack.Dropped || ack.Delay < 0 {
		t.Errorf("ack = %+v", ack)
	}
	// Slack shows the ack payload to the person.
	m, err := srv.WaitMessage(ctx, func(m Message) bool { return m.Kind == "ack" })
	if err != nil {
		t.Fatal(err)
	}
	if m.Text != "Working on it…" || m.Channel != "C1" || m.User != "U1" || m.ResponseType != "ephemeral" {
		t.Errorf("ack message = %+v", m)
	}

	// Without a channel the command comes from the person's DM with the app.
	if _, err := srv.SendSlashCommand(ctx, SlashCommand{Command: "/booking", UserID: "U1"}); err != nil {
		t.Fatal(err)
	}
	cmd = b.next(t).Data.(slack.SlashCommand)
	if cmd.ChannelID != srv.DMChannel("U1") || cmd.ChannelName != "directmessage" {
		t.Errorf("default channel %q %q", cmd.ChannelID, cmd.ChannelName)
	}
}

func TestLateAckIsFlagged(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New(jan15)
	srv := NewServer(t, func(o *Options) { o.Now = clk.Now })
	b := startBot(t, srv)
	b.onEvent(func(socketmode.Event) any {
		clk.Advance(AckTimeout + time.Second)
		return map[string]any{"text": "too late"}
	})
	ack, err := srv.SendSlashCommand(testCtx(t), SlashCommand{Command: "/booking", UserID: "U1"})
	if err != nil {
		t.Fatal(err)
	}
	if !ack.Late || ack.Delay != AckTimeout+time.Second {
		t.Errorf("ack = %+v, want late by 4s", ack)
	}
	for _, m := range srv.Messages() {
		if m.Kind == "ack" {
			t.Errorf("a late ack's payload must not be shown: %+v", m)
		}
	}
}

func TestInteractiveAndEventsDelivered(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	srv.AddUser(User{ID: "U1", Name: "ada"})
	b := startBot(t, srv)
	ctx := testCtx(t)

	if _, err := srv.SendInteraction(ctx, BlockAction("U1", "cancel_booking", "bk_1")); err != nil {
		t.Fatal(err)
	}
	evt := b.next(t)
	if evt.Type != socketmode.EventTypeInteractive {
		t.Fatalf("event type = %s", evt.Type)
	}
	ic := evt.Data.(slack.InteractionCallback)
	if ic.Type != slack.InteractionTypeBlockActions || ic.User.ID != "U1" || ic.User.Name != "ada" ||
		ic.Team.ID != DefaultTeamID || ic.TriggerID == "" || ic.APIAppID != DefaultAppID {
		t.Errorf("interaction = %+v", ic)
	}
	if n := len(ic.ActionCallback.BlockActions); n != 1 {
		t.Fatalf("%d block actions", n)
	}
	if a := ic.ActionCallback.BlockActions[0]; a.ActionID != "cancel_booking" || a.Value != "bk_1" || a.Type != "button" {
		t.Errorf("action = %+v", a)
	}

	// A map payload works too.
	if _, err := srv.SendInteraction(ctx, map[string]any{
		"type": "shortcut", "callback_id": "new_booking", "user": map[string]any{"id": "U1"},
	}); err != nil {
		t.Fatal(err)
	}
	ic = b.next(t).Data.(slack.InteractionCallback)
	if ic.Type != slack.InteractionTypeShortcut || ic.CallbackID != "new_booking" || ic.TriggerID == "" {
		t.Errorf("shortcut = %+v", ic)
	}

	if _, err := srv.SendEvent(ctx, slackevents.AppHomeOpenedEvent{Type: "app_home_opened", User: "U1", Tab: "home"}); err != nil {
		t.Fatal(err)
	}
	evt = b.next(t)
	if evt.Type != socketmode.EventTypeEventsAPI {
		t.Fatalf("event type = %s", evt.Type)
	}
	ev := evt.Data.(slackevents.EventsAPIEvent)
	if ev.Type != slackevents.CallbackEvent || ev.TeamID != DefaultTeamID || ev.APIAppID != DefaultAppID {
		t.Errorf("outer event = %+v", ev)
	}
	home, isHome := ev.InnerEvent.Data.(*slackevents.AppHomeOpenedEvent)
	if !isHome || home.User != "U1" || home.Channel != srv.DMChannel("U1") || home.Tab != "home" {
		t.Errorf("inner event = %#v", ev.InnerEvent.Data)
	}
	if evt.Request.AcceptsResponsePayload || evt.Request.RetryAttempt != 0 {
		t.Errorf("events_api envelope = %+v", evt.Request)
	}
}

func TestRedeliverySameEnvelope(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	b := startBot(t, srv)
	ctx := testCtx(t)
	first, err := srv.SendEvent(ctx, map[string]any{"type": "app_home_opened", "user": "U1", "tab": "messages"})
	if err != nil {
		t.Fatal(err)
	}
	e1 := b.next(t)
	second, err := srv.Redeliver(ctx, first.EnvelopeID)
	if err != nil {
		t.Fatal(err)
	}
	e2 := b.next(t)
	if e1.Request.EnvelopeID != e2.Request.EnvelopeID || second.EnvelopeID != first.EnvelopeID {
		t.Errorf("envelope IDs %q, %q", e1.Request.EnvelopeID, e2.Request.EnvelopeID)
	}
	if e2.Request.RetryAttempt != 1 || e2.Request.RetryReason != "timeout" {
		t.Errorf("redelivery retry_attempt %d reason %q", e2.Request.RetryAttempt, e2.Request.RetryReason)
	}
	id1 := e1.Data.(slackevents.EventsAPIEvent).Data.(*slackevents.EventsAPICallbackEvent).EventID
	id2 := e2.Data.(slackevents.EventsAPIEvent).Data.(*slackevents.EventsAPICallbackEvent).EventID
	if id1 == "" || id1 != id2 {
		t.Errorf("event_id %q then %q; a redelivery carries the same event", id1, id2)
	}
	if _, err := srv.Redeliver(ctx, "nope"); !errors.Is(err, ErrUnknownEnvelope) {
		t.Errorf("Redeliver(unknown) = %v", err)
	}
}

func TestUnackedThenRedelivered(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	b := startBot(t, srv)
	acked := make(chan struct{})
	b.onEvent(func(evt socketmode.Event) any {
		if evt.Request.RetryAttempt == 0 {
			close(acked) // signal delivery, but do not ack
			return noAck
		}
		return nil
	})
	ctx := testCtx(t)
	short, cancel := contextWithCancelOn(ctx, acked)
	defer cancel()
	ack, err := srv.SendEvent(short, map[string]any{"type": "app_home_opened", "user": "U1"})
	if !errors.Is(err, errCanceled) {
		t.Fatalf("unacked delivery: %v", err)
	}
	if _, err := srv.Redeliver(ctx, ack.EnvelopeID); err != nil {
		t.Fatal(err)
	}
}

func TestDisconnectReconnects(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	b := startBot(t, srv)
	ctx := testCtx(t)
	if err := srv.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	srv.Disconnect("refresh_requested")
	if err := srv.WaitConnections(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if got := srv.Connections(); got != 2 {
		t.Errorf("Connections() = %d, want 2", got)
	}
	if calls, err := srv.WaitCalls(ctx, "apps.connections.open", 2); err != nil || len(calls) != 2 {
		t.Errorf("apps.connections.open calls: %d, %v", len(calls), err)
	}
	// The new connection receives envelopes.
	if _, err := srv.SendSlashCommand(ctx, SlashCommand{Command: "/booking", UserID: "U1"}); err != nil {
		t.Fatal(err)
	}
	if evt := b.next(t); evt.Type != socketmode.EventTypeSlashCommand {
		t.Errorf("after reconnect got %s", evt.Type)
	}
}

// A dropped socket (no disconnect message) makes slack-go reconnect; while
// apps.connections.open is held, a client whose calls time out asks again,
// and WaitHeld sees each attempt; once released, the client connects.
func TestDropAndHeldReconnect(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	b := startBot(t, srv, slack.OptionHTTPClient(&http.Client{Timeout: 100 * time.Millisecond}))
	ctx := testCtx(t)
	if err := srv.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	release := srv.Hold("apps.connections.open")
	defer release()
	srv.Drop()
	if err := srv.WaitHeld(ctx, "apps.connections.open", 2); err != nil {
		t.Fatalf("a timed-out apps.connections.open was not asked again: %v", err)
	}
	if got := srv.Connections(); got != 1 {
		t.Errorf("Connections() while held = %d, want 1", got)
	}
	// Calls given up on were never answered, so not recorded.
	if calls, _ := srv.WaitCalls(ctx, "apps.connections.open", 1); len(calls) != 1 {
		t.Errorf("apps.connections.open calls recorded while held: %d, want the first only", len(calls))
	}
	release()
	if err := srv.WaitConnections(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.SendSlashCommand(ctx, SlashCommand{Command: "/booking", UserID: "U1"}); err != nil {
		t.Fatal(err)
	}
	if evt := b.next(t); evt.Type != socketmode.EventTypeSlashCommand {
		t.Errorf("after reconnect got %s", evt.Type)
	}
}

// rawConnect opens a Socket Mode connection with gorilla directly.
func rawConnect(t *testing.T, srv *Server) *websocket.Conn {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.APIURL+"apps.connections.open", nil)
	req.Header.Set("Authorization", "Bearer "+srv.AppToken())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var open struct {
		OK  bool
		URL string
	}
	if err := json.NewDecoder(res.Body).Decode(&open); err != nil || !open.OK || !strings.HasPrefix(open.URL, "ws://127.0.0.1:") {
		t.Fatalf("apps.connections.open = %+v, %v", open, err)
	}
	c, _, err := websocket.DefaultDialer.DialContext(t.Context(), open.URL, http.Header{"Origin": {"https://api.slack.com"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	// A ticket is single use.
	if _, _, err := websocket.DefaultDialer.DialContext(t.Context(), open.URL, nil); err == nil {
		t.Error("a used ticket connected again")
	}
	return c
}

func TestWireFormatAndOversizedAck(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	c := rawConnect(t, srv)
	var hello struct {
		Type           string `json:"type"`
		NumConnections int    `json:"num_connections"`
		ConnectionInfo struct {
			AppID string `json:"app_id"`
		} `json:"connection_info"`
		DebugInfo map[string]any `json:"debug_info"`
	}
	if err := c.ReadJSON(&hello); err != nil {
		t.Fatal(err)
	}
	if hello.Type != "hello" || hello.NumConnections != 1 || hello.ConnectionInfo.AppID != DefaultAppID || hello.DebugInfo == nil {
		t.Errorf("hello = %+v", hello)
	}

	type result struct {
		ack Ack
		err error
	}
	done := make(chan result, 1)
	go func() {
		a, err := srv.SendSlashCommand(testCtx(t), SlashCommand{Command: "/booking", UserID: "U1"})
		done <- result{a, err}
	}()
	var env struct {
		EnvelopeID string          `json:"envelope_id"`
		Type       string          `json:"type"`
		Payload    json.RawMessage `json:"payload"`
		Accepts    *bool           `json:"accepts_response_payload"`
	}
	if err := c.ReadJSON(&env); err != nil {
		t.Fatal(err)
	}
	if env.Type != "slash_commands" || env.EnvelopeID == "" || env.Accepts == nil || !*env.Accepts || len(env.Payload) == 0 {
		t.Errorf("envelope = %+v", env)
	}
	var fields map[string]any
	if err := json.Unmarshal(env.Payload, &fields); err != nil || fields["is_enterprise_install"] != "false" || fields["command"] != "/booking" {
		t.Errorf("slash command payload = %s (%v); Slack sends string fields", env.Payload, err)
	}
	big := map[string]any{"envelope_id": env.EnvelopeID, "payload": map[string]any{"text": strings.Repeat("x", MaxAckBytes)}}
	if err := c.WriteJSON(big); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if !errors.Is(r.err, ErrAckTooLarge) || !r.ack.Dropped {
		t.Errorf("oversized ack: %+v, %v", r.ack, r.err)
	}
	acks := srv.Acks()
	if len(acks) != 1 || !acks[0].Dropped {
		t.Errorf("Acks() = %+v", acks)
	}
	if len(srv.Messages()) != 0 {
		t.Error("a dropped ack's payload must not be shown")
	}
}

func TestNewestConnectionGetsEnvelopes(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	c1 := rawConnect(t, srv)
	var hello struct {
		NumConnections int `json:"num_connections"`
	}
	if err := c1.ReadJSON(&hello); err != nil || hello.NumConnections != 1 {
		t.Fatalf("first hello: %+v %v", hello, err)
	}
	c2 := rawConnect(t, srv)
	if err := c2.ReadJSON(&hello); err != nil || hello.NumConnections != 2 {
		t.Fatalf("second hello: %+v %v", hello, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := srv.SendEvent(testCtx(t), map[string]any{"type": "app_home_opened", "user": "U1"})
		done <- err
	}()
	var env struct {
		EnvelopeID   string `json:"envelope_id"`
		Type         string `json:"type"`
		RetryAttempt *int   `json:"retry_attempt"`
	}
	if err := c2.ReadJSON(&env); err != nil {
		t.Fatal(err)
	}
	if env.Type != "events_api" || env.RetryAttempt == nil || *env.RetryAttempt != 0 {
		t.Errorf("envelope = %+v", env)
	}
	if err := c2.WriteJSON(map[string]any{"envelope_id": env.EnvelopeID}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := srv.Connections(); got != 2 {
		t.Errorf("Connections() = %d", got)
	}
}

func TestWaitLiveConnections(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	ctx := testCtx(t)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := srv.WaitLiveConnections(short, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitLiveConnections with no client = %v", err)
	}
	if live, err := srv.WaitLiveConnections(ctx, 0); err != nil || len(live) != 0 {
		t.Errorf("WaitLiveConnections(0) = %+v, %v", live, err)
	}

	bots := startBots(t, srv, 2)
	live, err := srv.WaitLiveConnections(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(live) != 2 || live[0].ID != bots[0].id || live[1].ID != bots[1].id {
		t.Fatalf("live = %+v, bots on %d and %d", live, bots[0].id, bots[1].id)
	}
	for _, c := range live {
		if c.Host != fmt.Sprintf("slacktest-applink-%d", c.ID) || !strings.HasPrefix(c.RemoteAddr, "127.0.0.1:") ||
			c.ConnectedAt.IsZero() || c.Deliveries != 0 {
			t.Errorf("connection = %+v", c)
		}
	}
	if live[0].RemoteAddr == live[1].RemoteAddr || live[1].ConnectedAt.Before(live[0].ConnectedAt) {
		t.Errorf("two clients: %+v", live)
	}

	// A client that goes away is no longer live; the total still counts it.
	bots[0].stop()
	live, err = srv.WaitLiveConnections(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if live[0].ID != bots[1].id || !slices.Equal(srv.LiveConnections(), live) {
		t.Errorf("after the first client stopped: %+v", live)
	}
	if got := srv.Connections(); got != 2 {
		t.Errorf("Connections() = %d, want 2", got)
	}
}

// With Spread, two replicas of a bot take commands in turn, and a retry
// goes to the next in turn.
func TestSpreadAlternates(t *testing.T) {
	t.Parallel()
	srv := NewServer(t, func(o *Options) { o.Spread = true })
	bots := startBots(t, srv, 2)
	ctx := testCtx(t)

	var last Ack
	for i := range 4 {
		want := bots[i%2]
		ack, err := srv.SendSlashCommand(ctx, SlashCommand{Command: "/booking", Text: fmt.Sprint(i), UserID: "U1"})
		if err != nil {
			t.Fatal(err)
		}
		if ack.ConnID != want.id {
			t.Errorf("command %d acked on connection %d, want %d", i, ack.ConnID, want.id)
		}
		if cmd := want.next(t).Data.(slack.SlashCommand); cmd.Text != fmt.Sprint(i) {
			t.Errorf("connection %d got command %q, want %d", want.id, cmd.Text, i)
		}
		bots[(i+1)%2].idle(t, fmt.Sprintf("connection %d, out of turn,", bots[(i+1)%2].id))
		last = ack
	}
	for _, c := range srv.LiveConnections() {
		if c.Deliveries != 2 {
			t.Errorf("connection %d had %d deliveries, want 2", c.ID, c.Deliveries)
		}
	}

	// The last command went to the second client; its retry goes to the first.
	ack, err := srv.Redeliver(ctx, last.EnvelopeID)
	if err != nil {
		t.Fatal(err)
	}
	evt := bots[0].next(t)
	if ack.ConnID != bots[0].id || evt.Request.EnvelopeID != last.EnvelopeID ||
		evt.Request.RetryAttempt != 1 || evt.Request.RetryReason != "timeout" {
		t.Errorf("redelivery on %d (ack on %d): %+v", bots[0].id, ack.ConnID, evt.Request)
	}
	if cmd := evt.Data.(slack.SlashCommand); cmd.Text != "3" {
		t.Errorf("redelivered command %q, want 3", cmd.Text)
	}
	bots[1].idle(t, "the connection that had it first")
}

// ToConnection picks the connection for slash commands, interactions and
// events; without it the newest connection gets them, as before.
func TestTargetedDelivery(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	srv.AddUser(User{ID: "U1", Name: "ada"})
	bots := startBots(t, srv, 3)
	ctx := testCtx(t)
	idleExcept := func(k int) {
		t.Helper()
		for i, b := range bots {
			if i != k {
				b.idle(t, fmt.Sprintf("connection %d", b.id))
			}
		}
	}

	ack, err := srv.SendSlashCommand(ctx, SlashCommand{Command: "/booking", Text: "list", UserID: "U1"}, ToConnection(bots[0].id))
	if err != nil {
		t.Fatal(err)
	}
	if cmd := bots[0].next(t).Data.(slack.SlashCommand); cmd.Text != "list" || ack.ConnID != bots[0].id {
		t.Errorf("slash command %+v acked on %d, want %d", cmd, ack.ConnID, bots[0].id)
	}
	idleExcept(0)

	ack, err = srv.SendInteraction(ctx, BlockAction("U1", "cancel_booking", "bk_1"), ToConnection(bots[1].id))
	if err != nil {
		t.Fatal(err)
	}
	if ic := bots[1].next(t).Data.(slack.InteractionCallback); ic.Type != slack.InteractionTypeBlockActions || ack.ConnID != bots[1].id {
		t.Errorf("interaction %s acked on %d, want %d", ic.Type, ack.ConnID, bots[1].id)
	}
	idleExcept(1)

	ack, err = srv.OpenAppHome(ctx, "U1", ToConnection(bots[0].id))
	if err != nil {
		t.Fatal(err)
	}
	if evt := bots[0].next(t); evt.Type != socketmode.EventTypeEventsAPI || ack.ConnID != bots[0].id {
		t.Errorf("event %s acked on %d, want %d", evt.Type, ack.ConnID, bots[0].id)
	}
	idleExcept(0)

	// Untargeted: the newest connection.
	for range 2 {
		ack, err = srv.SendSlashCommand(ctx, SlashCommand{Command: "/booking", UserID: "U1"})
		if err != nil {
			t.Fatal(err)
		}
		bots[2].next(t)
		if ack.ConnID != bots[2].id {
			t.Errorf("untargeted command acked on %d, want the newest, %d", ack.ConnID, bots[2].id)
		}
		idleExcept(2)
	}

	// A connection that is not live fails the delivery; nobody gets it.
	for _, id := range []int{0, 99} {
		if _, err := srv.SendSlashCommand(ctx, SlashCommand{Command: "/booking", UserID: "U1"}, ToConnection(id)); !errors.Is(err, ErrNoConnection) {
			t.Errorf("ToConnection(%d) = %v, want ErrNoConnection", id, err)
		}
	}
	bots[1].stop()
	if _, err := srv.WaitLiveConnections(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.SendEvent(ctx, map[string]any{"type": "app_home_opened", "user": "U1"}, ToConnection(bots[1].id)); !errors.Is(err, ErrNoConnection) {
		t.Errorf("delivery to a stopped client = %v, want ErrNoConnection", err)
	}
	idleExcept(-1)
	want := map[int]int{bots[0].id: 2, bots[2].id: 2}
	for _, c := range srv.LiveConnections() {
		if c.Deliveries != want[c.ID] {
			t.Errorf("connection %d had %d deliveries, want %d", c.ID, c.Deliveries, want[c.ID])
		}
	}
}

// A replica that never acks: Slack's retry lands on another connection,
// with the same envelope and payload and retry_attempt/retry_reason set.
func TestRedeliveryToAnotherConnection(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	bots := startBots(t, srv, 2)
	stuck, healthy := bots[0], bots[1]
	delivered := make(chan struct{})
	var once sync.Once
	stuck.onEvent(func(socketmode.Event) any {
		once.Do(func() { close(delivered) })
		return noAck
	})
	ctx := testCtx(t)

	short, cancel := contextWithCancelOn(ctx, delivered)
	defer cancel()
	first, err := srv.SendSlashCommand(short, SlashCommand{Command: "/booking", Text: "new", UserID: "U1"}, ToConnection(stuck.id))
	if !errors.Is(err, errCanceled) {
		t.Fatalf("unacked delivery: %v", err)
	}
	e1 := stuck.next(t)
	if e1.Request.RetryAttempt != 0 || e1.Request.RetryReason != "" {
		t.Errorf("first delivery: %+v", e1.Request)
	}

	// Targeting a connection that is not live neither sends nor counts a retry.
	if _, err := srv.Redeliver(ctx, first.EnvelopeID, ToConnection(99)); !errors.Is(err, ErrNoConnection) {
		t.Errorf("Redeliver to an unknown connection = %v", err)
	}

	for attempt := 1; attempt <= 2; attempt++ {
		ack, err := srv.Redeliver(ctx, first.EnvelopeID, ToConnection(healthy.id))
		if err != nil {
			t.Fatal(err)
		}
		e2 := healthy.next(t)
		if e2.Request.EnvelopeID != first.EnvelopeID || ack.EnvelopeID != first.EnvelopeID || ack.ConnID != healthy.id {
			t.Errorf("redelivery envelope %q acked %q on %d; first was %q", e2.Request.EnvelopeID, ack.EnvelopeID, ack.ConnID, first.EnvelopeID)
		}
		if e2.Request.RetryAttempt != attempt || e2.Request.RetryReason != "timeout" {
			t.Errorf("redelivery %d: retry_attempt %d, retry_reason %q", attempt, e2.Request.RetryAttempt, e2.Request.RetryReason)
		}
		c1, c2 := e1.Data.(slack.SlashCommand), e2.Data.(slack.SlashCommand)
		if c1.TriggerID != c2.TriggerID || c1.ResponseURL != c2.ResponseURL || c2.Text != "new" {
			t.Errorf("redelivered payload %+v, first %+v", c2, c1)
		}
		stuck.idle(t, "the stuck connection")
	}
}

// Spread goes round three connections in opening order and skips one that
// is gone; a client that reconnects takes its turn under its new ID.
func TestSpreadSkipsDroppedConnection(t *testing.T) {
	t.Parallel()
	srv := NewServer(t, func(o *Options) { o.Spread = true })
	bots := startBots(t, srv, 3)
	ctx := testCtx(t)
	send := func(want connBot) {
		t.Helper()
		ack, err := srv.SendEvent(ctx, map[string]any{"type": "app_home_opened", "user": "U1"})
		if err != nil {
			t.Fatal(err)
		}
		if ack.ConnID != want.id {
			t.Errorf("event acked on connection %d, want %d", ack.ConnID, want.id)
		}
		if evt := want.next(t); evt.Request.EnvelopeID != ack.EnvelopeID {
			t.Errorf("connection %d got %s, want %s", want.id, evt.Request.EnvelopeID, ack.EnvelopeID)
		}
	}
	for _, b := range bots {
		send(b)
	}

	// The middle replica exits.
	bots[1].stop()
	if _, err := srv.WaitLiveConnections(ctx, 2); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		send(bots[0])
		send(bots[2])
	}
	bots[1].idle(t, "the stopped client")

	// The first loses its socket and reconnects, last in the order now.
	if err := srv.DropConnection(bots[0].id); err != nil {
		t.Fatal(err)
	}
	old := bots[0].id
	bots[0].id = bots[0].connID(t, srv)
	if bots[0].id <= bots[2].id {
		t.Fatalf("reconnected as %d, after %d", bots[0].id, bots[2].id)
	}
	live, err := srv.WaitLiveConnections(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if live[0].ID != bots[2].id || live[1].ID != bots[0].id {
		t.Errorf("live after the reconnect: %+v", live)
	}
	send(bots[0]) // the third had the last turn
	send(bots[2])
	send(bots[0])
	if err := srv.DropConnection(old); !errors.Is(err, ErrNoConnection) {
		t.Errorf("DropConnection(gone) = %v", err)
	}
}

func TestServerPings(t *testing.T) {
	t.Parallel()
	srv := NewServer(t, func(o *Options) { o.PingInterval = 10 * time.Millisecond })
	c := rawConnect(t, srv)
	pinged := make(chan struct{})
	var once bool
	c.SetPingHandler(func(string) error {
		if !once {
			once = true
			close(pinged)
		}
		return nil
	})
	go func() {
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				return
			}
		}
	}()
	select {
	case <-pinged:
	case <-testCtx(t).Done():
		t.Fatal("no ping from the server")
	}
}

func TestTriggerRules(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New(jan15)
	rec := &recordingTB{TB: t} // one view is invalid on purpose
	srv := NewServer(rec, func(o *Options) { o.Now = clk.Now })
	defer expectBreach(t, rec)
	b := startBot(t, srv)
	ctx := testCtx(t)

	trigger := func() string {
		t.Helper()
		if _, err := srv.SendSlashCommand(ctx, SlashCommand{Command: "/booking", Text: "new", UserID: "U1"}); err != nil {
			t.Fatal(err)
		}
		return b.next(t).Data.(slack.SlashCommand).TriggerID
	}

	tid := trigger()
	clk.Advance(TriggerTTL - time.Millisecond)
	res, err := b.api.OpenViewContext(ctx, tid, bookingModal("Book a meeting"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.ID, "V") || res.Hash == "" || res.CallbackID != "booking_create" || res.TeamID != DefaultTeamID {
		t.Errorf("views.open = %+v", res.View)
	}
	v, found := srv.View(res.ID)
	if !found || v.TriggerUser != "U1" || v.Stack != 1 || v.Closed || v.Title != "Book a meeting" {
		t.Errorf("stored view = %+v", v)
	}
	if _, err := b.api.OpenViewContext(ctx, tid, simpleModal("Again")); err == nil || err.Error() != "exchanged_trigger_id" {
		t.Errorf("reused trigger: %v", err)
	}

	tid = trigger()
	clk.Advance(TriggerTTL)
	if _, err := b.api.OpenViewContext(ctx, tid, simpleModal("Late")); err == nil || err.Error() != "expired_trigger_id" {
		t.Errorf("expired trigger: %v", err)
	}
	if _, err := b.api.OpenViewContext(ctx, "123.456.abc", simpleModal("Made up")); err == nil || err.Error() != "invalid_trigger_id" {
		t.Errorf("made-up trigger: %v", err)
	}
	// A failed views.open does not use the trigger up.
	tid = trigger()
	if _, err := b.api.OpenViewContext(ctx, tid, simpleModal(strings.Repeat("T", 25))); err == nil || err.Error() != "invalid_arguments" {
		t.Errorf("long title: %v", err)
	}
	if _, err := b.api.OpenViewContext(ctx, tid, simpleModal("Fine")); err != nil {
		t.Errorf("trigger after a failed views.open: %v", err)
	}
}

func TestViewsUpdatePushAndHash(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	b := startBot(t, srv)
	ctx := testCtx(t)
	if _, err := srv.SendSlashCommand(ctx, SlashCommand{Command: "/booking", UserID: "U1"}); err != nil {
		t.Fatal(err)
	}
	tid := b.next(t).Data.(slack.SlashCommand).TriggerID
	mv := bookingModal("Book")
	mv.ExternalID = "booking-U1"
	opened, err := b.api.OpenViewContext(ctx, tid, mv)
	if err != nil {
		t.Fatal(err)
	}

	updated, err := b.api.UpdateViewContext(ctx, bookingModal("Book (2)"), "", opened.Hash, opened.ID)
	if err != nil {
		t.Fatal(err)
	}
	if updated.ID != opened.ID || updated.Hash == opened.Hash {
		t.Errorf("update kept id %q→%q, hash %q→%q", opened.ID, updated.ID, opened.Hash, updated.Hash)
	}
	if _, err := b.api.UpdateViewContext(ctx, bookingModal("Stale"), "", opened.Hash, opened.ID); err == nil || err.Error() != "hash_conflict" {
		t.Errorf("stale hash: %v", err)
	}
	byExt := bookingModal("By external id")
	byExt.ExternalID = "booking-U1"
	if _, err := b.api.UpdateViewContext(ctx, byExt, "booking-U1", "", ""); err != nil {
		t.Errorf("update by external_id: %v", err)
	}
	if _, err := b.api.UpdateViewContext(ctx, bookingModal("Nope"), "", "", "V404"); err == nil || err.Error() != "not_found" {
		t.Errorf("update unknown view: %v", err)
	}
	if v, _ := srv.View(opened.ID); v.Title != "By external id" || v.Updates != 2 {
		t.Errorf("view after updates = %q, %d updates", v.Title, v.Updates)
	}

	// Pushing needs a trigger from inside the modal on top.
	top := opened.ID
	push := func(title string) (*slack.ViewResponse, error) {
		t.Helper()
		v, _ := srv.View(top)
		if _, err := srv.SendInteraction(ctx, BlockAction("U1", "more", "", InView(v))); err != nil {
			t.Fatal(err)
		}
		ic := b.next(t).Data.(slack.InteractionCallback)
		if ic.View.ID != top || ic.Container.ViewID != top {
			t.Errorf("block_actions from the modal: view %q container %+v", ic.View.ID, ic.Container)
		}
		step := simpleModal(title)
		step.Blocks.BlockSet = append(step.Blocks.BlockSet,
			slack.NewActionBlock("", slack.NewButtonBlockElement("more", "", plain("More"))))
		res, err := b.api.PushViewContext(ctx, ic.TriggerID, step)
		if err == nil {
			top = res.ID
		}
		return res, err
	}
	second, err := push("Second")
	if err != nil {
		t.Fatal(err)
	}
	third, err := push("Third")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := srv.View(third.ID); v.Stack != 3 || v.RootViewID != opened.ID || v.PreviousViewID != second.ID {
		t.Errorf("third view = %+v", v)
	}
	if third.RootViewID != opened.ID || third.PreviousViewID != second.ID {
		t.Errorf("views.push response root %q previous %q", third.RootViewID, third.PreviousViewID)
	}
	if _, err := push("Fourth"); err == nil || err.Error() != "push_limit_reached" {
		t.Errorf("fourth push: %v", err)
	}
	// The views opened from the second on, as a long test reads them.
	var ids []string
	for _, v := range srv.ViewsFrom(1) {
		ids = append(ids, v.ID)
	}
	if want := []string{second.ID, third.ID}; !slices.Equal(ids, want) {
		t.Errorf("ViewsFrom(1) = %v, want %v", ids, want)
	}
	if vs := srv.ViewsFrom(3); len(vs) != 0 {
		t.Errorf("ViewsFrom past the last: %v", vs)
	}
	// The person cannot use a modal that is under another one.
	root, _ := srv.View(opened.ID)
	if _, err := srv.SendInteraction(ctx, BlockAction("U1", "more", "", InView(root))); !errors.Is(err, ErrInvalidAction) {
		t.Errorf("acting on a covered modal: %v", err)
	}

	// view_too_large.
	if _, err := srv.SendSlashCommand(ctx, SlashCommand{Command: "/booking", UserID: "U1"}); err != nil {
		t.Fatal(err)
	}
	tid = b.next(t).Data.(slack.SlashCommand).TriggerID
	huge := simpleModal("Huge")
	huge.Blocks.BlockSet = nil
	for range 100 {
		huge.Blocks.BlockSet = append(huge.Blocks.BlockSet, slack.NewSectionBlock(
			slack.NewTextBlockObject(slack.MarkdownType, strings.Repeat("é", 2600), false, false), nil, nil))
	}
	if _, err := b.api.OpenViewContext(ctx, tid, huge); err == nil || err.Error() != "view_too_large" {
		t.Errorf("huge view: %v", err)
	}
}

// openBookingModal opens the booking modal for U1 and returns it.
func openBookingModal(t *testing.T, srv *Server, b *bot) View {
	t.Helper()
	ctx := testCtx(t)
	if _, err := srv.SendSlashCommand(ctx, SlashCommand{Command: "/booking", Text: "new", UserID: "U1"}); err != nil {
		t.Fatal(err)
	}
	tid := b.next(t).Data.(slack.SlashCommand).TriggerID
	res, err := b.api.OpenViewContext(ctx, tid, bookingModal("Book"))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := srv.View(res.ID)
	return v
}

func TestViewSubmissionResponseActions(t *testing.T) {
	t.Parallel()
	next := bookingModal("Confirm")
	next.CallbackID = "booking_confirm"
	tests := []struct {
		name  string
		ack   any
		check func(t *testing.T, srv *Server, v View)
	}{
		{"empty ack closes", nil, func(t *testing.T, srv *Server, v View) {
			if got, _ := srv.View(v.ID); !got.Closed {
				t.Error("view still open")
			}
		}},
		{"errors", slack.NewErrorsViewSubmissionResponse(map[string]string{"name_block": "Too short"}), func(t *testing.T, srv *Server, v View) {
			got, _ := srv.View(v.ID)
			if got.Closed || got.Errors["name_block"] != "Too short" {
				t.Errorf("view = closed %v errors %v", got.Closed, got.Errors)
			}
		}},
		{"update", slack.NewUpdateViewSubmissionResponse(&next), func(t *testing.T, srv *Server, v View) {
			got, _ := srv.View(v.ID)
			if got.Closed || got.CallbackID != "booking_confirm" || got.Title != "Confirm" || got.Hash == v.Hash {
				t.Errorf("view = %+v", got)
			}
		}},
		{"push", slack.NewPushViewSubmissionResponse(&next), func(t *testing.T, srv *Server, v View) {
			pushed, err := srv.WaitView(testCtx(t), func(x View) bool { return x.PreviousViewID == v.ID })
			if err != nil {
				t.Fatal(err)
			}
			if pushed.Stack != 2 || pushed.RootViewID != v.ID || pushed.CallbackID != "booking_confirm" {
				t.Errorf("pushed = %+v", pushed)
			}
		}},
		{"clear", slack.NewClearViewSubmissionResponse(), func(t *testing.T, srv *Server, v View) {
			if got, _ := srv.View(v.ID); !got.Closed {
				t.Error("view still open")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := NewServer(t)
			srv.AddUser(User{ID: "U1", Name: "ada"})
			b := startBot(t, srv)
			v := openBookingModal(t, srv, b)
			b.onEvent(func(evt socketmode.Event) any {
				if ic, isIC := evt.Data.(slack.InteractionCallback); isIC && ic.Type == slack.InteractionTypeViewSubmission {
					return tt.ack
				}
				return nil
			})
			ack, err := srv.SubmitInputs(testCtx(t), "U1", v.ID, map[string]string{"name": "Ada", "event_type": "30min"})
			if err != nil {
				t.Fatal(err)
			}
			evt := b.next(t)
			ic := evt.Data.(slack.InteractionCallback)
			if ic.Type != slack.InteractionTypeViewSubmission || ic.View.ID != v.ID || ic.View.CallbackID != "booking_create" || ic.View.Hash != v.Hash {
				t.Errorf("submission = type %s view %s %s hash %s", ic.Type, ic.View.ID, ic.View.CallbackID, ic.View.Hash)
			}
			st := ic.View.State.Values
			if st["name_block"]["name"].Value != "Ada" {
				t.Errorf("name = %+v", st["name_block"]["name"])
			}
			sel := st["type_block"]["event_type"].SelectedOption
			if sel.Value != "30min" || sel.Text == nil || sel.Text.Text != "30 minutes" {
				t.Errorf("event_type = %+v", sel)
			}
			if !evt.Request.AcceptsResponsePayload {
				t.Error("view_submission accepts a response payload")
			}
			if ack.EnvelopeID != evt.Request.EnvelopeID {
				t.Error("ack for another envelope")
			}
			tt.check(t, srv, v)
		})
	}
}

func TestClearClosesWholeStack(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	b := startBot(t, srv)
	v := openBookingModal(t, srv, b)
	ctx := testCtx(t)
	next := simpleModal("Step 2")
	next.Submit = plain("Done")
	b.onEvent(func(evt socketmode.Event) any {
		ic, _ := evt.Data.(slack.InteractionCallback)
		if ic.Type != slack.InteractionTypeViewSubmission {
			return nil
		}
		if ic.View.ID == v.ID {
			return slack.NewPushViewSubmissionResponse(&next)
		}
		return slack.NewClearViewSubmissionResponse()
	})
	if _, err := srv.SubmitInputs(ctx, "U1", v.ID, map[string]string{"name": "Ada", "event_type": "60min"}); err != nil {
		t.Fatal(err)
	}
	pushed, err := srv.WaitView(ctx, func(x View) bool { return x.PreviousViewID == v.ID })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Submit(ctx, "U1", pushed.ID, nil); err != nil {
		t.Fatal(err)
	}
	for _, x := range srv.Views() {
		if !x.Closed {
			t.Errorf("view %s (stack %d) still open after clear", x.ID, x.Stack)
		}
	}
	if _, err := srv.Submit(ctx, "U1", v.ID, nil); !errors.Is(err, ErrViewClosed) {
		t.Errorf("submitting a closed view: %v", err)
	}
}

func TestSubmitRules(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	b := startBot(t, srv)
	v := openBookingModal(t, srv, b)
	ctx := testCtx(t)
	if _, err := srv.SubmitInputs(ctx, "U1", v.ID, map[string]string{"event_type": "30min"}); !errors.Is(err, ErrRequiredInput) {
		t.Errorf("missing name: %v", err)
	}
	if _, err := srv.SubmitInputs(ctx, "U1", v.ID, map[string]string{"name": "Ada", "event_type": "45min"}); !errors.Is(err, ErrInvalidAction) {
		t.Errorf("option not offered: %v", err)
	}
	if _, err := srv.SubmitInputs(ctx, "U1", v.ID, map[string]string{"nope": "x"}); !errors.Is(err, ErrInvalidAction) {
		t.Errorf("unknown action_id: %v", err)
	}
	// Explicit values by block and action ID; note is optional.
	_, err := srv.Submit(ctx, "U1", v.ID, map[string]map[string]slack.BlockAction{
		"name_block": {"name": {Type: "plain_text_input", Value: "Ada"}},
		"type_block": {"event_type": {Value: "60min"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ic := b.next(t).Data.(slack.InteractionCallback)
	if got := ic.View.State.Values["type_block"]["event_type"].SelectedOption.Value; got != "60min" {
		t.Errorf("event_type = %q", got)
	}
	if _, has := ic.View.State.Values["note_block"]["note"]; !has {
		t.Error("an empty optional input is still in state")
	}
}

func TestBlockActionCarriesStateAndUpdateKeepsInput(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	b := startBot(t, srv)
	v := openBookingModal(t, srv, b)
	ctx := testCtx(t)

	if _, err := srv.SendInteraction(ctx, BlockAction("U1", "event_type", "60min", InView(v))); err != nil {
		t.Fatal(err)
	}
	ic := b.next(t).Data.(slack.InteractionCallback)
	a := ic.ActionCallback.BlockActions[0]
	if a.Type != "static_select" || a.BlockID != "type_block" || a.SelectedOption.Value != "60min" || a.SelectedOption.Text.Text != "60 minutes" {
		t.Errorf("action = %+v", a)
	}
	if got := ic.View.State.Values["type_block"]["event_type"].SelectedOption.Value; got != "60min" {
		t.Errorf("view state event_type = %q", got)
	}
	if _, err := srv.SendInteraction(ctx, BlockAction("U1", "event_type", "15min", InView(v))); !errors.Is(err, ErrInvalidAction) {
		t.Errorf("choosing an option that is not offered: %v", err)
	}
	if _, err := srv.SendInteraction(ctx, BlockAction("U1", "name", "Ada", InView(v))); !errors.Is(err, ErrInvalidAction) {
		t.Errorf("block_actions from an input without dispatch_action: %v", err)
	}

	// The bot updates the modal; the chosen option stays, as in Slack.
	mv := bookingModal("Pick a slot")
	if _, err := b.api.UpdateViewContext(ctx, mv, "", "", v.ID); err != nil {
		t.Fatal(err)
	}
	got, _ := srv.View(v.ID)
	if got.State["type_block"]["event_type"].SelectedOption.Value != "60min" {
		t.Errorf("state after update = %+v", got.State)
	}

	// Blocks without IDs get generated ones, so input does not survive.
	var blocks []map[string]any
	_ = json.Unmarshal(got.Blocks, &blocks)
	for _, bl := range blocks {
		if bl["block_id"] == "" || bl["block_id"] == nil {
			t.Errorf("rendered block without block_id: %v", bl)
		}
	}
}

func TestMessageButtonsAndResponseURL(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	srv.AddUser(User{ID: "U1", Name: "ada"})
	b := startBot(t, srv)
	ctx := testCtx(t)

	cancel := slack.NewButtonBlockElement("cancel_booking", "bk_1", plain("Cancel"))
	cancel.Style = slack.StyleDanger
	if _, _, err := b.api.PostMessageContext(ctx, "U1", slack.MsgOptionText("Your bookings", false),
		slack.MsgOptionBlocks(slack.NewActionBlock("", cancel))); err != nil {
		t.Fatal(err)
	}
	msg, err := srv.WaitMessage(ctx, func(m Message) bool { return m.Kind == "message" })
	if err != nil {
		t.Fatal(err)
	}
	if msg.Channel != "U1" {
		t.Errorf("App Home message recorded in %q, want the user ID as given", msg.Channel)
	}

	if _, err := srv.SendInteraction(ctx, BlockAction("U1", "cancel_booking", "", InMessage(msg))); err != nil {
		t.Fatal(err)
	}
	ic := b.next(t).Data.(slack.InteractionCallback)
	a := ic.ActionCallback.BlockActions[0]
	if a.Value != "bk_1" || a.BlockID == "" || a.Text.Text != "Cancel" {
		t.Errorf("action = %+v", a)
	}
	if ic.Container.MessageTs != msg.TS || ic.Message.Timestamp != msg.TS || ic.ResponseURL == "" {
		t.Errorf("container %+v, message ts %q, response_url %q", ic.Container, ic.Message.Timestamp, ic.ResponseURL)
	}

	if _, _, err := b.api.PostMessageContext(ctx, "", slack.MsgOptionReplaceOriginal(ic.ResponseURL),
		slack.MsgOptionText("Cancelled", false)); err != nil {
		t.Fatal(err)
	}
	m, err := srv.WaitMessage(ctx, func(m Message) bool { return m.Kind == "response_url" })
	if err != nil {
		t.Fatal(err)
	}
	if !m.ReplaceOriginal || m.OriginalTS != msg.TS || m.Text != "Cancelled" || m.User != "U1" {
		t.Errorf("response_url message = %+v", m)
	}
}

func TestResponseURLFromSlashCommand(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	b := startBot(t, srv)
	ctx := testCtx(t)
	if _, err := srv.SendSlashCommand(ctx, SlashCommand{Command: "/booking", UserID: "U1", ChannelID: "C9"}); err != nil {
		t.Fatal(err)
	}
	url := b.next(t).Data.(slack.SlashCommand).ResponseURL
	for i := range ResponseURLUses {
		_, _, err := b.api.PostMessageContext(ctx, "", slack.MsgOptionResponseURL(url, slack.ResponseTypeEphemeral),
			slack.MsgOptionText("slots", false))
		if err != nil {
			t.Fatalf("use %d: %v", i+1, err)
		}
	}
	_, _, err := b.api.PostMessageContext(ctx, "", slack.MsgOptionResponseURL(url, slack.ResponseTypeEphemeral),
		slack.MsgOptionText("one too many", false))
	if err == nil || err.Error() != "used_url" {
		t.Errorf("sixth use: %v", err)
	}
	msgs := srv.Messages()
	if len(msgs) != ResponseURLUses {
		t.Fatalf("%d messages", len(msgs))
	}
	if m := msgs[0]; m.Kind != "response_url" || m.ResponseType != "ephemeral" || m.Channel != "C9" || m.User != "U1" || m.TS == "" {
		t.Errorf("message = %+v", m)
	}
}

func TestUsersInfo(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New(jan15) // January: Berlin is UTC+1
	srv := NewServer(t, func(o *Options) { o.Now = clk.Now })
	srv.AddUser(User{ID: "U1", Name: "ada", RealName: "Ada Lovelace", TZ: "Europe/Berlin", Email: "ada@example.com"})
	api := slack.New(srv.BotToken(), slack.OptionAPIURL(srv.APIURL))
	ctx := testCtx(t)
	u, err := api.GetUserInfoContext(ctx, "U1")
	if err != nil {
		t.Fatal(err)
	}
	if u.ID != "U1" || u.Name != "ada" || u.RealName != "Ada Lovelace" || u.TZ != "Europe/Berlin" ||
		u.TZOffset != 3600 || u.TZLabel != "CET" || u.Profile.Email != "ada@example.com" || u.IsBot {
		t.Errorf("user = %+v", u)
	}
	if _, err := api.GetUserInfoContext(ctx, "U404"); err == nil || err.Error() != "user_not_found" {
		t.Errorf("unknown user: %v", err)
	}
	bot, err := api.GetUserInfoContext(ctx, DefaultBotUserID)
	if err != nil || !bot.IsBot {
		t.Errorf("bot user: %+v, %v", bot, err)
	}
}

func TestConversations(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	srv.AddUser(User{ID: "U1"})
	srv.AddChannel(Channel{ID: "C1", Name: "digest", Members: []string{"U1", DefaultBotUserID}})
	srv.AddChannel(Channel{ID: "G1", Name: "secret", Members: []string{"U1"}, IsPrivate: true})
	api := slack.New(srv.BotToken(), slack.OptionAPIURL(srv.APIURL))
	ctx := testCtx(t)
	ch, err := api.GetConversationInfoContext(ctx, &slack.GetConversationInfoInput{ChannelID: "C1", IncludeNumMembers: true})
	if err != nil {
		t.Fatal(err)
	}
	if ch.Name != "digest" || !ch.IsMember || !ch.IsChannel || ch.NumMembers != 2 {
		t.Errorf("channel = %+v", ch)
	}
	members, _, err := api.GetUsersInConversationContext(ctx, &slack.GetUsersInConversationParameters{ChannelID: "C1"})
	if err != nil || !slices.Equal(members, []string{"U1", DefaultBotUserID}) {
		t.Errorf("members = %v, %v", members, err)
	}
	page, cursor, err := api.GetUsersInConversationContext(ctx, &slack.GetUsersInConversationParameters{ChannelID: "C1", Limit: 1})
	if err != nil || len(page) != 1 || cursor == "" {
		t.Errorf("first page = %v, cursor %q, %v", page, cursor, err)
	}
	if _, err := api.GetConversationInfoContext(ctx, &slack.GetConversationInfoInput{ChannelID: "G1"}); err == nil || err.Error() != "channel_not_found" {
		t.Errorf("private channel without the bot: %v", err)
	}
	if _, _, err := api.PostMessageContext(ctx, "C404", slack.MsgOptionText("hi", false)); err == nil || err.Error() != "channel_not_found" {
		t.Errorf("unknown channel: %v", err)
	}
}

func TestChatMessages(t *testing.T) {
	t.Parallel()
	rec := &recordingTB{TB: t} // one message is too long on purpose
	srv := NewServer(rec)
	defer expectBreach(t, rec)
	srv.AddUser(User{ID: "U1"})
	srv.AddUser(User{ID: "U2"})
	srv.AddChannel(Channel{ID: "C1", Name: "team", Members: []string{"U1", DefaultBotUserID}})
	srv.AddChannel(Channel{ID: "C2", Name: "elsewhere", Members: []string{"U1"}})
	api := slack.New(srv.BotToken(), slack.OptionAPIURL(srv.APIURL))
	ctx := testCtx(t)

	if _, err := api.PostEphemeralContext(ctx, "C1", "U2", slack.MsgOptionText("hi", false)); err == nil || err.Error() != "user_not_in_channel" {
		t.Errorf("ephemeral to a non-member: %v", err)
	}
	if _, err := api.PostEphemeralContext(ctx, "C1", "U1", slack.MsgOptionText("hi", false)); err != nil {
		t.Errorf("ephemeral to a member: %v", err)
	}
	if _, err := api.PostEphemeralContext(ctx, srv.DMChannel("U2"), "U2", slack.MsgOptionText("hi", false)); err != nil {
		t.Errorf("ephemeral in the person's DM: %v", err)
	}
	if _, _, err := api.PostMessageContext(ctx, "C2", slack.MsgOptionText("hi", false)); err == nil || err.Error() != "not_in_channel" {
		t.Errorf("post where the bot is not a member: %v", err)
	}
	if _, _, err := api.PostMessageContext(ctx, "C1"); err == nil || err.Error() != "no_text" {
		t.Errorf("empty message: %v", err)
	}
	var tooMany []slack.Block
	for range 51 {
		tooMany = append(tooMany, slack.NewDividerBlock())
	}
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionBlocks(tooMany...)); err == nil || err.Error() != "invalid_blocks" {
		t.Errorf("51 blocks: %v", err)
	}

	ch, ts, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("Digest", false))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, ch, ts, slack.MsgOptionText("Digest (edited)", false)); err != nil {
		t.Errorf("update: %v", err)
	}
	if _, _, err := api.DeleteMessageContext(ctx, ch, ts); err != nil {
		t.Errorf("delete: %v", err)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, ch, ts, slack.MsgOptionText("again", false)); err == nil || err.Error() != "message_not_found" {
		t.Errorf("update after delete: %v", err)
	}

	var kinds []string
	for _, m := range srv.Messages() {
		kinds = append(kinds, m.Kind)
	}
	if want := []string{"ephemeral", "ephemeral", "message", "update", "delete"}; !slices.Equal(kinds, want) {
		t.Errorf("message kinds = %v, want %v", kinds, want)
	}
	if m := srv.Messages()[0]; m.Channel != "C1" || m.User != "U1" || m.Text != "hi" {
		t.Errorf("ephemeral = %+v", m)
	}
	// What a long test reads of each of its steps: from an index on.
	kinds = kinds[:0]
	for _, m := range srv.MessagesFrom(2) {
		kinds = append(kinds, m.Kind)
	}
	if want := []string{"message", "update", "delete"}; !slices.Equal(kinds, want) {
		t.Errorf("MessagesFrom(2) kinds = %v, want %v", kinds, want)
	}
	if ms := srv.MessagesFrom(5); len(ms) != 0 {
		t.Errorf("MessagesFrom past the last: %v", ms)
	}
}

func TestTokenChecks(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	ctx := testCtx(t)
	wrong := slack.New("xoxb-wrong", slack.OptionAPIURL(srv.APIURL))
	if _, err := wrong.AuthTestContext(ctx); err == nil || err.Error() != "invalid_auth" {
		t.Errorf("wrong bot token: %v", err)
	}
	appAsBot := slack.New(srv.AppToken(), slack.OptionAPIURL(srv.APIURL))
	if _, err := appAsBot.GetUserInfoContext(ctx, DefaultBotUserID); err == nil || err.Error() != "not_allowed_token_type" {
		t.Errorf("app token on users.info: %v", err)
	}
	botAsApp := slack.New(srv.BotToken(), slack.OptionAPIURL(srv.APIURL), slack.OptionAppLevelToken(srv.BotToken()))
	if _, _, err := botAsApp.StartSocketModeContext(ctx); err == nil || err.Error() != "not_allowed_token_type" {
		t.Errorf("bot token on apps.connections.open: %v", err)
	}
	res, err := http.PostForm(srv.APIURL+"auth.test", url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	var body struct{ Error string }
	_ = json.NewDecoder(res.Body).Decode(&body)
	res.Body.Close()
	if body.Error != "not_authed" {
		t.Errorf("no token: %q", body.Error)
	}

	// socketmode gives up on an invalid app token.
	bad := socketmode.New(slack.New(srv.BotToken(), slack.OptionAPIURL(srv.APIURL), slack.OptionAppLevelToken("xapp-wrong")))
	if err := bad.RunContext(ctx); err == nil || err.Error() != "invalid_auth" {
		t.Errorf("socketmode with a wrong app token: %v", err)
	}

	var kinds []string
	for _, c := range srv.Calls() {
		kinds = append(kinds, c.Token)
		if c.Form.Has("token") || strings.Contains(string(c.JSON), "xoxb") || strings.Contains(string(c.JSON), "xapp") {
			t.Errorf("call %s recorded a token: %v %s", c.Method, c.Form, c.JSON)
		}
	}
	if want := []string{"invalid", "app", "bot", "invalid", "invalid"}; !slices.Equal(kinds, want) {
		t.Errorf("token kinds = %v, want %v", kinds, want)
	}
	if c := srv.Calls()[0]; c.Error != "invalid_auth" || c.Method != "auth.test" {
		t.Errorf("first call = %+v", c)
	}
}

func TestUnknownMethodFailsTheTest(t *testing.T) {
	t.Parallel()
	rec := &recordingTB{TB: t}
	srv := NewServer(rec)
	res, err := http.PostForm(srv.APIURL+"chat.scheduleMessage", url.Values{"token": {srv.BotToken()}})
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		OK    bool
		Error string
	}
	_ = json.NewDecoder(res.Body).Decode(&body)
	res.Body.Close()
	if body.OK || body.Error != "unknown_method" {
		t.Errorf("answer = %+v", body)
	}
	if errs := rec.errors(); len(errs) != 1 || !strings.Contains(errs[0], "unknown Web API method") {
		t.Errorf("test errors = %q", errs)
	}
	if c := srv.Calls(); len(c) != 1 || c[0].Method != "chat.scheduleMessage" || c[0].Error != "unknown_method" {
		t.Errorf("calls = %+v", c)
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	api := slack.New(srv.BotToken(), slack.OptionAPIURL(srv.APIURL))
	ctx := testCtx(t)

	srv.FailNext("users.info", "fatal_error")
	if _, err := api.GetUserInfoContext(ctx, DefaultBotUserID); err == nil || err.Error() != "fatal_error" {
		t.Errorf("FailNext: %v", err)
	}
	if _, err := api.GetUserInfoContext(ctx, DefaultBotUserID); err != nil {
		t.Errorf("after FailNext: %v", err)
	}

	srv.RateLimitNext("auth.test", 2*time.Second)
	_, err := api.AuthTestContext(ctx)
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != 2*time.Second {
		t.Errorf("RateLimitNext: %v", err)
	}
	if _, err := api.AuthTestContext(ctx); err != nil {
		t.Errorf("after RateLimitNext: %v", err)
	}

	srv.RateLimitAfter("auth.test", 2, time.Second)
	for i := range 2 {
		if _, err := api.AuthTestContext(ctx); err != nil {
			t.Errorf("call %d before RateLimitAfter's: %v", i+1, err)
		}
	}
	if _, err := api.AuthTestContext(ctx); !errors.As(err, &rl) || rl.RetryAfter != time.Second {
		t.Errorf("RateLimitAfter: %v", err)
	}
	if _, err := api.AuthTestContext(ctx); err != nil {
		t.Errorf("after RateLimitAfter: %v", err)
	}

	srv.SetLatency("auth.test", 30*time.Millisecond)
	start := time.Now()
	if _, err := api.AuthTestContext(ctx); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Errorf("latency %v, want at least 30ms", d)
	}
	srv.SetLatency("auth.test", time.Hour)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := api.AuthTestContext(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a call slower than its context: %v", err)
	}
}

func TestHold(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	api := slack.New(srv.BotToken(), slack.OptionAPIURL(srv.APIURL))
	ctx := testCtx(t)

	release := srv.Hold("auth.test")
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := api.AuthTestContext(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a held call answered: %v", err)
	}
	if _, err := api.GetUserInfoContext(ctx, DefaultBotUserID); err != nil {
		t.Errorf("another method was held too: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := api.AuthTestContext(ctx)
		done <- err
	}()
	release()
	if err := <-done; err != nil {
		t.Errorf("a held call after release: %v", err)
	}
	release() // a second release is harmless
	if _, err := api.AuthTestContext(ctx); err != nil {
		t.Errorf("a call after release: %v", err)
	}
}

func TestViewOptions(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	b := startBot(t, srv)
	v := openBookingModal(t, srv, b)
	want := []Option{{"30min", "30 minutes"}, {"60min", "60 minutes"}}
	if got := v.Options("event_type"); !slices.Equal(got, want) {
		t.Errorf("Options(event_type) = %v, want %v", got, want)
	}
	if got := v.Options("name"); got != nil {
		t.Errorf("Options(name) = %v, want none for a text input", got)
	}
	if got := v.Options("nowhere"); got != nil {
		t.Errorf("Options(nowhere) = %v, want none", got)
	}

	grouped := slack.NewOptionsGroupSelectBlockElement(slack.OptTypeStatic, plain("Time"), "slot",
		slack.NewOptionGroupBlockElement(plain("Mon"), slack.NewOptionBlockObject("a", plain("09:00"), nil)),
		slack.NewOptionGroupBlockElement(plain("Tue"), slack.NewOptionBlockObject("b", plain("10:00"), nil),
			slack.NewOptionBlockObject("c", plain("11:00"), nil)))
	modal := simpleModal("Slots")
	modal.Submit = plain("Book")
	modal.Blocks.BlockSet = append(modal.Blocks.BlockSet, slack.NewInputBlock("slot_block", plain("Time"), nil, grouped))
	res, err := b.api.UpdateViewContext(testCtx(t), modal, "", "", v.ID)
	if err != nil {
		t.Fatal(err)
	}
	v, _ = srv.View(res.ID)
	want = []Option{{"a", "09:00"}, {"b", "10:00"}, {"c", "11:00"}}
	if got := v.Options("slot"); !slices.Equal(got, want) {
		t.Errorf("Options(slot) = %v, want %v, groups flattened in order", got, want)
	}
}

func TestViewValidation(t *testing.T) {
	t.Parallel()
	rec := &recordingTB{TB: t} // the views are invalid on purpose
	srv := NewServer(rec)
	defer expectBreach(t, rec)
	b := startBot(t, srv)
	ctx := testCtx(t)
	if _, err := srv.SendSlashCommand(ctx, SlashCommand{Command: "/booking", UserID: "U1"}); err != nil {
		t.Fatal(err)
	}
	tid := b.next(t).Data.(slack.SlashCommand).TriggerID
	mv := bookingModal("Book")
	mv.Submit = nil
	sel := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, nil, "slot",
		slack.NewOptionBlockObject("a", plain("A"), nil))
	sel.InitialOption = slack.NewOptionBlockObject("b", plain("B"), nil)
	mv.Blocks.BlockSet = append(mv.Blocks.BlockSet, slack.NewInputBlock("slot_block", plain("Slot"), nil, sel))
	_, err := b.api.OpenViewContext(ctx, tid, mv)
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) || se.Err != "invalid_arguments" {
		t.Fatalf("invalid modal: %v", err)
	}
	joined := strings.Join(se.ResponseMetadata.Messages, "\n")
	for _, want := range []string{"/view/submit", "/view/blocks/4/element/initial_option"} {
		if !strings.Contains(joined, want) {
			t.Errorf("messages %q lack %s", joined, want)
		}
	}
}

func TestHomeTab(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	srv.AddUser(User{ID: "U1"})
	b := startBot(t, srv)
	ctx := testCtx(t)
	home := slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: []slack.Block{
		slack.NewSectionBlock(plain("Upcoming"), nil, nil),
	}}}
	first, err := b.api.PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: "U1", View: home})
	if err != nil {
		t.Fatal(err)
	}
	stale := first.Hash
	second, err := b.api.PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: "U1", View: home, Hash: &stale})
	if err != nil {
		t.Fatal(err)
	}
	if second.ID != first.ID {
		t.Errorf("a user's Home view keeps its ID: %s then %s", first.ID, second.ID)
	}
	if _, err := b.api.PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: "U1", View: home, Hash: &stale}); err == nil || err.Error() != "hash_conflict" {
		t.Errorf("stale hash: %v", err)
	}
	if _, err := b.api.PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: "U404", View: home}); err == nil || err.Error() != "user_not_found" {
		t.Errorf("unknown user: %v", err)
	}
	hv, found := srv.HomeView("U1")
	if !found || hv.Type != "home" || hv.ID != first.ID || hv.Updates != 1 {
		t.Errorf("HomeView = %+v", hv)
	}
	if _, err := srv.OpenAppHome(ctx, "U1"); err != nil {
		t.Fatal(err)
	}
	ev := b.next(t).Data.(slackevents.EventsAPIEvent).InnerEvent.Data.(*slackevents.AppHomeOpenedEvent)
	if ev.View == nil || ev.View.ID != first.ID || ev.View.Hash != hv.Hash {
		t.Errorf("app_home_opened view = %+v", ev.View)
	}
}

func TestCancelNotifiesOnClose(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	b := startBot(t, srv)
	ctx := testCtx(t)
	if _, err := srv.SendSlashCommand(ctx, SlashCommand{Command: "/booking", UserID: "U1"}); err != nil {
		t.Fatal(err)
	}
	tid := b.next(t).Data.(slack.SlashCommand).TriggerID
	mv := simpleModal("Bye")
	mv.NotifyOnClose = true
	res, err := b.api.OpenViewContext(ctx, tid, mv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Cancel(ctx, "U1", res.ID); err != nil {
		t.Fatal(err)
	}
	ic := b.next(t).Data.(slack.InteractionCallback)
	if ic.Type != slack.InteractionTypeViewClosed || ic.View.ID != res.ID {
		t.Errorf("view_closed = %s %s", ic.Type, ic.View.ID)
	}
	if v, _ := srv.View(res.ID); !v.Closed {
		t.Error("view still open")
	}
	if _, err := b.api.UpdateViewContext(ctx, simpleModal("Too late"), "", "", res.ID); err == nil || err.Error() != "not_found" {
		t.Errorf("updating a closed view: %v", err)
	}
}

func TestWaitersUnblockOnChange(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	srv.AddChannel(Channel{ID: "C1", Members: []string{DefaultBotUserID}})
	api := slack.New(srv.BotToken(), slack.OptionAPIURL(srv.APIURL))
	ctx := testCtx(t)
	changed := srv.Changed()
	got := make(chan Message, 1)
	go func() {
		m, _ := srv.WaitMessage(ctx, func(m Message) bool { return m.Text == "later" })
		got <- m
	}()
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("later", false)); err != nil {
		t.Fatal(err)
	}
	if m := <-got; m.Channel != "C1" {
		t.Errorf("WaitMessage = %+v", m)
	}
	select {
	case <-changed:
	default:
		t.Error("Changed() was not closed by a new message")
	}
	cctx, cancel := contextWithCancelOn(ctx, nil)
	cancel()
	if _, err := srv.WaitCall(cctx, "never.called"); !errors.Is(err, errCanceled) {
		t.Errorf("WaitCall on a done context: %v", err)
	}
	srv.Close()
	if _, err := srv.WaitView(ctx, func(View) bool { return false }); !errors.Is(err, ErrClosed) {
		t.Errorf("WaitView after Close: %v", err)
	}
}

func TestSuggestExternalSelect(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	b := startBot(t, srv)
	ctx := testCtx(t)
	if _, err := srv.SendSlashCommand(ctx, SlashCommand{Command: "/booking", UserID: "U1"}); err != nil {
		t.Fatal(err)
	}
	tid := b.next(t).Data.(slack.SlashCommand).TriggerID
	mv := simpleModal("Slots")
	mv.Submit = plain("Book")
	ext := slack.NewOptionsSelectBlockElement(slack.OptTypeExternal, plain("Search"), "slot")
	mv.Blocks.BlockSet = append(mv.Blocks.BlockSet, slack.NewInputBlock("slot_block", plain("Slot"), nil, ext))
	res, err := b.api.OpenViewContext(ctx, tid, mv)
	if err != nil {
		t.Fatal(err)
	}
	b.onEvent(func(evt socketmode.Event) any {
		return slack.OptionsResponse{Options: []*slack.OptionBlockObject{
			slack.NewOptionBlockObject("2025-01-16T09:00:00Z", plain("Thu 09:00"), nil),
		}}
	})
	if _, err := srv.Suggest(ctx, "U1", res.ID, "slot", "th"); !errors.Is(err, ErrInvalidAction) {
		t.Errorf("two characters: %v", err)
	}
	ack, err := srv.Suggest(ctx, "U1", res.ID, "slot", "thu")
	if err != nil {
		t.Fatal(err)
	}
	ic := b.next(t).Data.(slack.InteractionCallback)
	if ic.Type != slack.InteractionTypeBlockSuggestion || ic.ActionID != "slot" || ic.BlockID != "slot_block" || ic.Value != "thu" || ic.View.ID != res.ID {
		t.Errorf("block_suggestion = %+v", ic)
	}
	if !strings.Contains(string(ack.Payload), "Thu 09:00") {
		t.Errorf("ack payload = %s", ack.Payload)
	}
	// The person picks the suggested option and submits.
	if _, err := srv.SubmitInputs(ctx, "U1", res.ID, map[string]string{"slot": "2025-01-16T09:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	ic = b.next(t).Data.(slack.InteractionCallback)
	if got := ic.View.State.Values["slot_block"]["slot"].SelectedOption.Value; got != "2025-01-16T09:00:00Z" {
		t.Errorf("submitted slot = %q", got)
	}
}

// expectBreach checks that the server failed the test for a Block Kit breach.
func expectBreach(t *testing.T, rec *recordingTB) {
	t.Helper()
	for _, e := range rec.errors() {
		if strings.Contains(e, "Block Kit breach") {
			return
		}
	}
	t.Errorf("no Block Kit breach reported; errors: %q", rec.errors())
}

package slacktest

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
)

// noAck tells the bot harness to leave a request unacked.
type noAckT struct{}

var noAck = noAckT{}

// bot is an unmodified slack-go Socket Mode client wired to a Server.
type bot struct {
	api *slack.Client
	sm  *socketmode.Client

	mu     sync.Mutex
	handle func(evt socketmode.Event) any // returns the ack payload
	events chan socketmode.Event          // every event with a request
	hellos chan string                    // debug_info.host of each hello
	stop   func()                         // disconnects the client for good
}

// startBot connects a slack-go client and keeps it running until the test
// ends. By default every request is acked without payload.
func startBot(t *testing.T, srv *Server, opts ...slack.Option) *bot {
	t.Helper()
	// A transport of its own: the default one is shared with the
	// package's other tests, and each httptest.Server.Close closes its
	// idle connections, under a call about to reuse one.
	own := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	t.Cleanup(own.CloseIdleConnections)
	opts = append([]slack.Option{slack.OptionAPIURL(srv.APIURL), slack.OptionAppLevelToken(srv.AppToken()), slack.OptionHTTPClient(own)}, opts...)
	api := slack.New(srv.BotToken(), opts...)
	b := &bot{
		api:    api,
		sm:     socketmode.New(api),
		events: make(chan socketmode.Event, 100),
		hellos: make(chan string, 10),
	}
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	loopDone := make(chan struct{})
	go func() { runDone <- b.sm.RunContext(ctx) }()
	go func() {
		defer close(loopDone)
		for {
			select {
			case evt := <-b.sm.Events:
				if evt.Type == socketmode.EventTypeHello && evt.Request != nil {
					select {
					case b.hellos <- evt.Request.DebugInfo.Host:
					default:
					}
				}
				b.dispatch(evt)
			case <-ctx.Done():
				return
			}
		}
	}()
	var once sync.Once
	b.stop = func() {
		once.Do(func() {
			cancel()
			<-runDone
			<-loopDone
		})
	}
	t.Cleanup(b.stop)
	return b
}

// connID waits for the bot's next hello and returns the server's ID for
// the connection it came on.
func (b *bot) connID(t *testing.T, srv *Server) int {
	t.Helper()
	var host string
	select {
	case host = <-b.hellos:
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for the bot's hello")
	}
	// The server counts a connection live once the hello is written, so
	// the bot may read it first.
	id := 0
	if err := srv.waitFor(testCtx(t), func() bool {
		for _, c := range srv.liveLocked() {
			if c.Host == host {
				id = c.ID
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatalf("no live connection with host %q: %v", host, err)
	}
	return id
}

func (b *bot) onEvent(f func(evt socketmode.Event) any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.handle = f
}

func (b *bot) dispatch(evt socketmode.Event) {
	if evt.Request == nil || evt.Request.EnvelopeID == "" {
		return
	}
	select {
	case b.events <- evt:
	default:
	}
	b.mu.Lock()
	h := b.handle
	b.mu.Unlock()
	var payload any
	if h != nil {
		payload = h(evt)
	}
	switch payload.(type) {
	case noAckT:
		return
	case nil:
		_ = b.sm.Ack(*evt.Request)
	default:
		_ = b.sm.Ack(*evt.Request, payload)
	}
}

// next returns the next request event the bot saw.
func (b *bot) next(t *testing.T) socketmode.Event {
	t.Helper()
	select {
	case evt := <-b.events:
		return evt
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for the bot to receive an event")
		return socketmode.Event{}
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// jan15 is Wednesday 2025-01-15 09:00 UTC, where the tests' clocks start.
var jan15 = time.Date(2025, 1, 15, 9, 0, 0, 0, time.UTC)

// recordingTB captures Errorf so a test can expect the server to fail it.
type recordingTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, format)
}

func (r *recordingTB) errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

// Block Kit helpers.

func plain(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, s, false, false)
}

func bookingModal(title string) slack.ModalViewRequest {
	nameInput := slack.NewInputBlock("name_block", plain("Your name"), nil,
		slack.NewPlainTextInputBlockElement(plain("Name"), "name"))
	noteInput := slack.NewInputBlock("note_block", plain("Note"), nil,
		slack.NewPlainTextInputBlockElement(nil, "note"))
	noteInput.Optional = true
	sel := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plain("Pick one"), "event_type",
		slack.NewOptionBlockObject("30min", plain("30 minutes"), nil),
		slack.NewOptionBlockObject("60min", plain("60 minutes"), nil))
	typeInput := slack.NewInputBlock("type_block", plain("Event type"), nil, sel)
	typeInput.DispatchAction = true
	more := slack.NewActionBlock("more_block", slack.NewButtonBlockElement("more", "more", plain("More")))
	return slack.ModalViewRequest{
		Type:       slack.VTModal,
		Title:      plain(title),
		Submit:     plain("Book"),
		Close:      plain("Cancel"),
		CallbackID: "booking_create",
		Blocks:     slack.Blocks{BlockSet: []slack.Block{typeInput, nameInput, noteInput, more}},
	}
}

func simpleModal(title string) slack.ModalViewRequest {
	return slack.ModalViewRequest{
		Type:   slack.VTModal,
		Title:  plain(title),
		Close:  plain("Close"),
		Blocks: slack.Blocks{BlockSet: []slack.Block{slack.NewSectionBlock(plain("Hello"), nil, nil)}},
	}
}

var errCanceled = context.Canceled

// contextWithCancelOn returns a context that is cancelled when ch closes
// (never, for a nil ch) or when its cancel func is called.
func contextWithCancelOn(parent context.Context, ch <-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	if ch != nil {
		go func() {
			select {
			case <-ch:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}

// connBot is a slack-go client and the server's ID for its connection.
type connBot struct {
	*bot
	id int
}

// startBots connects n slack-go clients at once and returns them in the
// order their connections were opened (by ID), once all n are live.
func startBots(t *testing.T, srv *Server, n int) []connBot {
	t.Helper()
	bots := make([]connBot, n)
	for i := range bots {
		// A transport each, as separate processes have: clients sharing
		// http.DefaultTransport at once can leave a connection dialled and
		// never used, which holds up the server's Close for seconds.
		tr := &http.Transport{}
		t.Cleanup(tr.CloseIdleConnections)
		bots[i].bot = startBot(t, srv, slack.OptionHTTPClient(&http.Client{Transport: tr}))
	}
	for i := range bots {
		bots[i].id = bots[i].connID(t, srv)
	}
	if _, err := srv.WaitLiveConnections(testCtx(t), n); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(bots, func(a, b connBot) int { return a.id - b.id })
	return bots
}

// idle fails the test when the bot has received a request.
func (b *bot) idle(t *testing.T, who string) {
	t.Helper()
	select {
	case evt := <-b.events:
		t.Errorf("%s received %s envelope %s", who, evt.Type, evt.Request.EnvelopeID)
	default:
	}
}

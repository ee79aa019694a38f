package slacktest

import (
	"context"
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
}

// startBot connects a slack-go client and keeps it running until the test
// ends. By default every request is acked without payload.
func startBot(t *testing.T, srv *Server, opts ...slack.Option) *bot {
	t.Helper()
	opts = append([]slack.Option{slack.OptionAPIURL(srv.APIURL), slack.OptionAppLevelToken(srv.AppToken())}, opts...)
	api := slack.New(srv.BotToken(), opts...)
	b := &bot{
		api:    api,
		sm:     socketmode.New(api),
		events: make(chan socketmode.Event, 100),
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
				b.dispatch(evt)
			case <-ctx.Done():
				return
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-runDone
		<-loopDone
	})
	return b
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

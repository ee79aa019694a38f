package bot

import (
	"time"

	"github.com/slack-go/slack/socketmode"
)

// Metrics is told how the bot's Socket Mode side is doing. bookbot's
// metrics implement it; its methods must be quick, as they run on the
// event loop.
type Metrics interface {
	// Acked reports the time from taking an envelope off the Socket Mode
	// client to its ack being queued. kind is the envelope type:
	// slash_commands, interactive or events_api.
	Acked(kind string, took time.Duration)
	// Connected reports whether Socket Mode is connected.
	Connected(up bool)
}

// acked reports an ack to the metrics, if any.
func (b *Bot) acked(kind socketmode.EventType, took time.Duration) {
	if b.cfg.Metrics != nil {
		b.cfg.Metrics.Acked(string(kind), took)
	}
}

// connection reports Socket Mode's state, as told by the client's events,
// to the metrics. It runs on the event loop, so states arrive in order.
func (b *Bot) connection(kind socketmode.EventType) {
	if b.cfg.Metrics == nil {
		return
	}
	switch kind {
	case socketmode.EventTypeConnected:
		b.cfg.Metrics.Connected(true)
	case socketmode.EventTypeConnecting, socketmode.EventTypeDisconnect,
		socketmode.EventTypeConnectionError, socketmode.EventTypeInvalidAuth:
		b.cfg.Metrics.Connected(false)
	}
}

// connectionEnded reports that Run has stopped serving Socket Mode.
func (b *Bot) connectionEnded() {
	if b.cfg.Metrics != nil {
		b.cfg.Metrics.Connected(false)
	}
}

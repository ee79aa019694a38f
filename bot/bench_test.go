package bot_test

import (
	"log/slog"
	"strconv"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/store/bolt"
)

// BenchmarkAck is what an envelope costs until its ack, for a command
// from another workspace (acked, nothing started): Handle alone (the seen
// set, the team check, the route; the refusal's warning is logged to
// nowhere), and the whole way from the stand-in writing it on the
// WebSocket, through slack-go's reading and decoding and Handle, to the
// ack read back, the stand-in's own work and allocations included. One
// after another, so the second is a round trip's latency, not a burst's
// throughput. Both with the embedded state's envelopes seen, in memory, as
// `bookbot run` gives them.
func BenchmarkAck(b *testing.B) {
	b.Run("handle", func(b *testing.B) {
		h := newHarness(b, func(_ *harness, c *bot.Config) {
			c.Log = slog.New(slog.DiscardHandler)
			c.Seen = bolt.NewDedupe(bot.SeenTTL)
		})
		cmd := slack.SlashCommand{
			TeamID: "TFOREIGN", ChannelID: "D1", UserID: ada, Command: "/booking", Text: "list",
			ResponseURL: h.sl.URL + "/commands/none", TriggerID: "1.2.3",
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			evt := socketmode.Event{Type: socketmode.EventTypeSlashCommand, Data: cmd,
				Request: &socketmode.Request{Type: "slash_commands", EnvelopeID: strconv.Itoa(i)}}
			h.bot.Handle(evt, func(any) {})
			if i%10000 == 0 {
				h.clock.Advance(bot.SeenTTL) // the seen set forgets, as it does in 15 minutes of bursts
			}
		}
	})
	b.Run("socket", func(b *testing.B) {
		h := newHarness(b, func(_ *harness, c *bot.Config) { c.Seen = bolt.NewDedupe(bot.SeenTTL) })
		cmd := slacktest.SlashCommand{TeamID: "TFOREIGN", Command: "/booking", Text: "list", UserID: ada}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := h.sl.SendSlashCommand(b.Context(), cmd); err != nil {
				b.Fatal(err)
			}
		}
	})
}

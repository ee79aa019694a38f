package slacktest

import (
	"errors"
	"testing"

	"github.com/slack-go/slack/socketmode"
)

// A connection that closes before acking its envelope (a replica
// stopping) has it sent again to another connection, as Slack does; a
// targeted delivery fails instead.
func TestRedeliveredAfterClose(t *testing.T) {
	t.Parallel()
	srv := NewServer(t, func(o *Options) { o.Spread = true })
	bots := startBots(t, srv, 2)
	ctx := testCtx(t)
	got := make(chan struct{})
	bots[0].onEvent(func(socketmode.Event) any {
		close(got)
		return noAck
	})
	type result struct {
		ack Ack
		err error
	}
	done := make(chan result, 1)
	go func() {
		ack, err := srv.SendSlashCommand(ctx, SlashCommand{Command: "/booking", Text: "help", UserID: "U1"})
		done <- result{ack, err}
	}()
	<-got
	first := bots[0].next(t)
	bots[0].stop()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	again := bots[1].next(t)
	if r.ack.ConnID != bots[1].id || again.Request.EnvelopeID != first.Request.EnvelopeID || r.ack.EnvelopeID != first.Request.EnvelopeID {
		t.Errorf("acked %s on %d, redelivered %s; want %s on %d", r.ack.EnvelopeID, r.ack.ConnID, again.Request.EnvelopeID, first.Request.EnvelopeID, bots[1].id)
	}
	if again.Request.RetryAttempt != 1 || again.Request.RetryReason != "timeout" {
		t.Errorf("redelivery retry_attempt %d, reason %q", again.Request.RetryAttempt, again.Request.RetryReason)
	}

	// Targeted at a connection that closes unacked: no other connection.
	bots[1].onEvent(func(socketmode.Event) any { return noAck })
	go func() {
		ack, err := srv.SendSlashCommand(ctx, SlashCommand{Command: "/booking", Text: "help", UserID: "U1"}, ToConnection(bots[1].id))
		done <- result{ack, err}
	}()
	bots[1].next(t)
	bots[1].stop()
	if r := <-done; !errors.Is(r.err, ErrNoConnection) {
		t.Errorf("targeted delivery to a connection closed before its ack: %v, want ErrNoConnection", r.err)
	}
}

package console

import (
	"testing"

	"github.com/bookbot/bookbot/bot/slacktest"
)

// A thread reply says it is in a thread, and a broadcast one that the
// channel sees it too, as Slack shows it there.
func TestMessageHeadingOfReplies(t *testing.T) {
	c := &Console{Slack: slacktest.NewServer(t), User: "UDEMO"}
	for _, tc := range []struct {
		m    slacktest.Message
		want string
	}{
		{slacktest.Message{Kind: "message", Channel: "CNOTES", TS: "2.000002"}, "── bookbot in channel CNOTES (message 2.000002) ──"},
		{slacktest.Message{Kind: "message", Channel: "CNOTES", TS: "2.000002", ThreadTS: "1.000001"}, "── bookbot in channel CNOTES, in the thread of 1.000001 ──"},
		{slacktest.Message{Kind: "message", Channel: "CNOTES", TS: "2.000002", ThreadTS: "1.000001", Broadcast: true},
			"── bookbot in channel CNOTES, in the thread of 1.000001 and also sent to the channel ──"},
	} {
		if got := c.messageHeading(tc.m); got != tc.want {
			t.Errorf("heading of %+v = %q, want %q", tc.m, got, tc.want)
		}
	}
}

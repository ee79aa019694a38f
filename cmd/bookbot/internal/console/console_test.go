package console

import (
	"strings"
	"testing"
	"time"

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

// A card posted in the conversation is everyone's, whoever typed the
// command, and so is its update; a reply to someone else is not shown.
func TestMessageHeadingOfConversationPosts(t *testing.T) {
	c := &Console{Slack: slacktest.NewServer(t), User: "UGRACE"}
	for _, tc := range []struct {
		m    slacktest.Message
		want string
	}{
		{slacktest.Message{Kind: "response_url", ResponseType: "in_channel", Channel: "CTEAM", User: "UDEMO", TS: "2.000002"},
			"── bookbot in channel CTEAM (message 2.000002, everyone there sees it) ──"},
		{slacktest.Message{Kind: "response_url", ResponseType: "in_channel", ReplaceOriginal: true, Channel: "CTEAM", User: "UDEMO", OriginalTS: "2.000002"},
			"── bookbot updated its message 2.000002 in channel CTEAM (everyone there sees it) ──"},
		{slacktest.Message{Kind: "response_url", ResponseType: "ephemeral", Channel: "CTEAM", User: "UDEMO"}, ""},
	} {
		if got := c.messageHeading(tc.m); got != tc.want {
			t.Errorf("heading of %+v = %q, want %q", tc.m, got, tc.want)
		}
	}
}

// :as acts as another person, and :as me as the console's own again; a
// name not known is refused with those that are.
func TestAs(t *testing.T) {
	var out strings.Builder
	c := &Console{Slack: slacktest.NewServer(t), User: "UDEMO", Zone: time.UTC, Out: &out,
		People: map[string]Person{"grace": {ID: "UGRACE", Name: "Grace Hopper", Zone: time.UTC}}}
	if err := c.Exec(t.Context(), ":as grace"); err != nil || c.User != "UGRACE" {
		t.Fatalf(":as grace: %v, user %s", err, c.User)
	}
	if err := c.Exec(t.Context(), ":as bob"); err == nil || !strings.Contains(err.Error(), "grace, or me") {
		t.Errorf(":as bob: %v", err)
	}
	if err := c.Exec(t.Context(), ":as me"); err != nil || c.User != "UDEMO" {
		t.Fatalf(":as me: %v, user %s", err, c.User)
	}
}

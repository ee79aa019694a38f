package slacktest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
)

func TestHistoryRepliesAndMetadata(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	srv.AddChannel(Channel{ID: "CNOTES", Name: "notes", Members: []string{DefaultBotUserID}})
	srv.AddChannel(Channel{ID: "COUT", Name: "out"})
	api := slack.New(srv.BotToken(), slack.OptionAPIURL(srv.APIURL))
	ctx := testCtx(t)

	meta := slack.SlackMetadata{EventType: "bookbot_notice", EventPayload: map[string]any{"claims": "a1"}}
	_, root, err := api.PostMessageContext(ctx, "CNOTES", slack.MsgOptionText("first", false), slack.MsgOptionMetadata(meta))
	if err != nil {
		t.Fatal(err)
	}
	if m := srv.Messages(); len(m) != 1 || string(m[0].Metadata) == "" {
		t.Fatalf("posted %+v, want its metadata recorded", m)
	}
	var tops []string
	for i := range 150 {
		_, ts, err := api.PostMessageContext(ctx, "CNOTES", slack.MsgOptionText("more", false))
		if err != nil {
			t.Fatal(err)
		}
		if i < 2 {
			if _, _, err := api.PostMessageContext(ctx, "CNOTES", slack.MsgOptionText("reply", false), slack.MsgOptionTS(root)); err != nil {
				t.Fatal(err)
			}
		}
		tops = append(tops, ts)
	}

	// History: top-level only, newest first, page by page.
	var all []slack.Message
	cursor := ""
	for {
		h, err := api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{
			ChannelID: "CNOTES", Cursor: cursor, Limit: 200, IncludeAllMetadata: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, h.Messages...)
		if !h.HasMore {
			break
		}
		cursor = h.ResponseMetaData.NextCursor
	}
	if len(all) != 151 || all[0].Timestamp != tops[149] || all[150].Timestamp != root {
		t.Fatalf("history: %d messages, first %s, last %s", len(all), all[0].Timestamp, all[len(all)-1].Timestamp)
	}
	if got := all[150].Metadata; got.EventType != "bookbot_notice" || got.EventPayload["claims"] != "a1" {
		t.Errorf("metadata in history = %+v", got)
	}
	h, err := api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: "CNOTES", Oldest: tops[147]})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Messages) != 2 || h.Messages[0].Metadata.EventType != "" {
		t.Errorf("after oldest, without metadata asked for: %+v", h.Messages)
	}

	// Replies: the parent, then its replies.
	msgs, _, _, err := api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: "CNOTES", Timestamp: root, IncludeAllMetadata: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 || msgs[0].Timestamp != root || msgs[1].ThreadTimestamp != root || msgs[0].Metadata.EventType != "bookbot_notice" {
		t.Errorf("replies: %+v", msgs)
	}
	if _, _, _, err := api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: "CNOTES", Timestamp: "1.000001"}); err == nil || err.Error() != "thread_not_found" {
		t.Errorf("replies of no thread: %v", err)
	}
	if _, err := api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: "COUT"}); err == nil || err.Error() != "not_in_channel" {
		t.Errorf("history of a channel the bot is not in: %v", err)
	}
	bad := slack.SlackMetadata{EventType: "", EventPayload: map[string]any{"x": 1}}
	if _, _, err := api.PostMessageContext(ctx, "CNOTES", slack.MsgOptionText("x", false), slack.MsgOptionMetadata(bad)); err == nil || err.Error() != "invalid_metadata_format" {
		t.Errorf("metadata without event_type: %v", err)
	}
}

func TestStallNext(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	srv.AddChannel(Channel{ID: "CNOTES", Name: "notes", Members: []string{DefaultBotUserID}})
	api := slack.New(srv.BotToken(), slack.OptionAPIURL(srv.APIURL))
	ctx := testCtx(t)

	post := func(text string) error {
		short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		_, _, err := api.PostMessageContext(short, "CNOTES", slack.MsgOptionText(text, false))
		return err
	}
	srv.StallNext("chat.postMessage", true)
	srv.StallNext("chat.postMessage", false)
	if err := post("carried out"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a stalled call answered: %v", err)
	}
	if err := post("lost"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a stalled call answered: %v", err)
	}
	if err := srv.WaitStalled(ctx, "chat.postMessage", 2); err != nil {
		t.Fatal(err)
	}
	if err := post("answered"); err != nil {
		t.Errorf("the call after the stalled ones: %v", err)
	}
	var texts []string
	for _, m := range srv.Messages() {
		texts = append(texts, m.Text)
	}
	if len(texts) != 2 || texts[0] != "carried out" || texts[1] != "answered" {
		t.Errorf("messages %q, want the carried-out stall and the answered call", texts)
	}
}

// A thread reply posted with reply_broadcast is also in the channel: its
// history lists it, as Slack does, with subtype thread_broadcast. Outside
// a thread the flag means nothing.
func TestThreadBroadcast(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	srv.AddChannel(Channel{ID: "CNOTES", Name: "notes", Members: []string{DefaultBotUserID}})
	api := slack.New(srv.BotToken(), slack.OptionAPIURL(srv.APIURL))
	ctx := testCtx(t)

	post := func(text string, opts ...slack.MsgOption) string {
		t.Helper()
		_, ts, err := api.PostMessageContext(ctx, "CNOTES", append(opts, slack.MsgOptionText(text, false))...)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	root := post("root", slack.MsgOptionBroadcast())
	post("quiet reply", slack.MsgOptionTS(root))
	loud := post("broadcast reply", slack.MsgOptionTS(root), slack.MsgOptionBroadcast())

	var broadcast []string
	for _, m := range srv.Messages() {
		if m.Broadcast {
			broadcast = append(broadcast, m.Text)
		}
	}
	if len(broadcast) != 1 || broadcast[0] != "broadcast reply" {
		t.Errorf("recorded as broadcast: %q, want only the broadcast reply", broadcast)
	}
	h, err := api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: "CNOTES"})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Messages) != 2 || h.Messages[0].Timestamp != loud || h.Messages[0].SubType != "thread_broadcast" ||
		h.Messages[0].ThreadTimestamp != root || h.Messages[1].Timestamp != root {
		t.Errorf("history: %+v, want the broadcast reply, then the root", h.Messages)
	}
	msgs, _, _, err := api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: "CNOTES", Timestamp: root})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 {
		t.Errorf("replies: %d messages, want the root and both replies", len(msgs))
	}
}

// Message metadata stays with its message: chat.update and a response_url
// that replaces the message change it only when they send some, and
// conversations.history returns it as it is now.
func TestUpdatesKeepMetadata(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	srv.AddUser(User{ID: "U1", Name: "ada"})
	srv.AddChannel(Channel{ID: "CNOTES", Name: "notes", Members: []string{DefaultBotUserID, "U1"}})
	b := startBot(t, srv)
	ctx := testCtx(t)

	first := slack.SlackMetadata{EventType: "bookbot_booking_new", EventPayload: map[string]any{"booking_id": "b1"}}
	btn := slack.NewButtonBlockElement("cancel_booking", "b1", plain("Cancel"))
	_, ts, err := b.api.PostMessageContext(ctx, "CNOTES", slack.MsgOptionText("New booking", false),
		slack.MsgOptionBlocks(slack.NewActionBlock("", btn)), slack.MsgOptionMetadata(first))
	if err != nil {
		t.Fatal(err)
	}
	history := func() slack.SlackMetadata {
		t.Helper()
		h, err := b.api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: "CNOTES", IncludeAllMetadata: true})
		if err != nil || len(h.Messages) != 1 {
			t.Fatalf("history: %v %+v", err, h)
		}
		return h.Messages[0].Metadata
	}

	if _, _, _, err := b.api.UpdateMessageContext(ctx, "CNOTES", ts, slack.MsgOptionText("New booking, edited", false)); err != nil {
		t.Fatal(err)
	}
	if got := history(); got.EventType != "bookbot_booking_new" || got.EventPayload["booking_id"] != "b1" {
		t.Errorf("after an update without metadata: %+v", got)
	}
	cancelled := slack.SlackMetadata{EventType: "bookbot_booking_cancelled", EventPayload: map[string]any{"booking_id": "b1"}}
	if _, _, _, err := b.api.UpdateMessageContext(ctx, "CNOTES", ts, slack.MsgOptionText("Cancelled", false), slack.MsgOptionMetadata(cancelled)); err != nil {
		t.Fatal(err)
	}
	if got := history(); got.EventType != "bookbot_booking_cancelled" {
		t.Errorf("after an update with metadata: %+v", got)
	}
	if m := srv.Messages(); m[len(m)-1].Kind != "update" || len(m[len(m)-1].Metadata) == 0 {
		t.Errorf("the update is recorded as %+v, want its metadata", m[len(m)-1])
	}

	// A response_url that replaces the message: its metadata replaces the
	// message's.
	posted, _ := srv.WaitMessage(ctx, func(m Message) bool { return m.Kind == "message" })
	if _, err := srv.SendInteraction(ctx, BlockAction("U1", "cancel_booking", "", InMessage(posted))); err != nil {
		t.Fatal(err)
	}
	ic := b.next(t).Data.(slack.InteractionCallback)
	body := `{"replace_original":true,"text":"Booked","metadata":{"event_type":"bookbot_offer_booked","event_payload":{"booking_id":"b2"}}}`
	resp, err := http.Post(ic.ResponseURL, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := history(); got.EventType != "bookbot_offer_booked" || got.EventPayload["booking_id"] != "b2" {
		t.Errorf("after a response_url with metadata: %+v", got)
	}
	if m, _ := srv.WaitMessage(ctx, func(m Message) bool { return m.Kind == "response_url" }); len(m.Metadata) == 0 {
		t.Errorf("the response_url post is recorded as %+v, want its metadata", m)
	}
	bad := `{"replace_original":true,"text":"x","metadata":{"event_payload":{}}}`
	resp, err = http.Post(ic.ResponseURL, "application/json", strings.NewReader(bad))
	if err != nil {
		t.Fatal(err)
	}
	var answer struct{ Error string }
	_ = json.NewDecoder(resp.Body).Decode(&answer)
	resp.Body.Close()
	if answer.Error != "invalid_metadata_format" {
		t.Errorf("metadata without event_type through a response_url: %q", answer.Error)
	}
}

// A slash command's response_url post to the whole channel is one of its
// messages in conversations.history, its metadata with it; an ephemeral
// reply is not.
func TestHistoryHasInChannelResponses(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	srv.AddUser(User{ID: "U1", Name: "ada"})
	srv.AddChannel(Channel{ID: "CTEAM", Name: "team", Members: []string{DefaultBotUserID, "U1"}})
	b := startBot(t, srv)
	ctx := testCtx(t)
	if _, err := srv.SendSlashCommand(ctx, SlashCommand{Command: "/booking", Text: "offer", UserID: "U1", ChannelID: "CTEAM"}); err != nil {
		t.Fatal(err)
	}
	url := b.next(t).Data.(slack.SlashCommand).ResponseURL
	for _, body := range []string{
		`{"response_type":"ephemeral","text":"only you"}`,
		`{"response_type":"in_channel","text":"Offer","metadata":{"event_type":"bookbot_offer","event_payload":{"offer_id":"o1"}}}`,
	} {
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	h, err := b.api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: "CTEAM", IncludeAllMetadata: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Messages) != 1 || h.Messages[0].Text != "Offer" || h.Messages[0].Metadata.EventPayload["offer_id"] != "o1" {
		t.Errorf("history %+v, want the in_channel post alone, with its metadata", h.Messages)
	}
}

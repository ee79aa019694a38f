package bot

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/internal/fakeclock"
	"github.com/bookbot/bookbot/notices"
)

// channelHistory passes every page of a channel's top-level messages
// posted since a time, newest first; threadReplies a thread's messages,
// oldest first.
func TestHistoryPages(t *testing.T) {
	t.Parallel()
	clock := fakeclock.New(time.Date(2026, 3, 23, 10, 0, 0, 0, time.UTC))
	sl := slacktest.NewServer(t, func(o *slacktest.Options) { o.Now = clock.Now })
	sl.AddChannel(slacktest.Channel{ID: "C1", Name: "notes", Members: []string{sl.BotUserID()}})
	api := slack.New(sl.BotToken(), slack.OptionAPIURL(sl.APIURL))
	ctx := t.Context()
	post := func(opts ...slack.MsgOption) string {
		t.Helper()
		_, ts, err := api.PostMessageContext(ctx, "C1", append([]slack.MsgOption{slack.MsgOptionText("m", false)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	post() // before since
	clock.Advance(time.Second)
	since := clock.Now()
	root := post()
	tops, thread := []string{root}, []string{root}
	for range 250 { // three pages of slacktest's 100
		tops = append(tops, post())
	}
	for range 120 {
		thread = append(thread, post(slack.MsgOptionTS(root)))
	}
	slices.Reverse(tops)

	var got []string
	collect := func(ms []slack.Message) {
		for _, m := range ms {
			got = append(got, m.Timestamp)
		}
	}
	if err := channelHistory(ctx, api, "C1", since, collect); err != nil || !slices.Equal(got, tops) {
		t.Errorf("channel history: %v, %d messages; want the %d since, newest first", err, len(got), len(tops))
	}
	got = nil
	if err := threadReplies(ctx, api, notices.Message{Channel: "C1", TS: root}, since, collect); err != nil || !slices.Equal(got, thread) {
		t.Errorf("thread replies: %v, %d messages; want the %d, oldest first", err, len(got), len(thread))
	}
}

// endlessHistory always has a page more.
type endlessHistory struct{ pages int }

func (e *endlessHistory) GetConversationHistoryContext(context.Context, *slack.GetConversationHistoryParameters) (*slack.GetConversationHistoryResponse, error) {
	e.pages++
	h := &slack.GetConversationHistoryResponse{HasMore: true}
	h.ResponseMetaData.NextCursor = "more"
	return h, nil
}

func (e *endlessHistory) GetConversationRepliesContext(context.Context, *slack.GetConversationRepliesParameters) ([]slack.Message, bool, string, error) {
	e.pages++
	return nil, true, "more", nil
}

// A look back gives up past historyPages pages.
func TestHistoryPagesBounded(t *testing.T) {
	t.Parallel()
	var sl endlessHistory
	if err := channelHistory(t.Context(), &sl, "C1", time.Time{}, func([]slack.Message) {}); !errors.Is(err, errTooMuchHistory) || sl.pages != historyPages {
		t.Errorf("channel history: %v after %d pages; want errTooMuchHistory after %d", err, sl.pages, historyPages)
	}
	sl.pages = 0
	if err := threadReplies(t.Context(), &sl, notices.Message{Channel: "C1", TS: "1.000001"}, time.Time{}, func([]slack.Message) {}); !errors.Is(err, errTooMuchHistory) || sl.pages != historyPages {
		t.Errorf("thread replies: %v after %d pages; want errTooMuchHistory after %d", err, sl.pages, historyPages)
	}
}

// TestWebhookJSONIsJSONMarshal checks that a response_url message goes out
// with the fields and values json.Marshal gives it.
func TestWebhookJSONIsJSONMarshal(t *testing.T) {
	t.Parallel()
	unfurl := false
	for _, msg := range []*slack.WebhookMessage{
		{Text: "plain"},
		{Text: "none", Blocks: &slack.Blocks{}},
		{Text: "<b>&</b>", ResponseType: "ephemeral", ReplaceOriginal: true, UnfurlLinks: &unfurl, Blocks: &slack.Blocks{BlockSet: []slack.Block{
			section("*hi* <https://example.com|there> & more"),
			slack.NewActionBlock("a", slack.NewButtonBlockElement("go", "v<1>", slack.NewTextBlockObject(slack.PlainTextType, "Go", false, false))),
		}}},
	} {
		want, err := json.Marshal(msg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := webhookJSON(msg, nil)
		if err != nil {
			t.Fatal(err)
		}
		var w, g any
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("webhookJSON:\n%s\njson.Marshal:\n%s", got, want)
		}
	}
	// With metadata, which slack-go's WebhookMessage has no field for.
	meta := &slack.SlackMetadata{EventType: "bookbot_offer_booked", EventPayload: map[string]any{"booking_id": "b<1>"}}
	got, err := webhookJSON(&slack.WebhookMessage{Text: "Booked", ReplaceOriginal: true}, meta)
	if err != nil {
		t.Fatal(err)
	}
	var g map[string]any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if m, _ := g["metadata"].(map[string]any); g["text"] != "Booked" || m["event_type"] != "bookbot_offer_booked" || m["event_payload"].(map[string]any)["booking_id"] != "b<1>" {
		t.Errorf("webhookJSON with metadata: %s", got)
	}
}

// fixedHistory answers one page: the channel's messages, then a thread's.
type fixedHistory struct{ channel, thread []slack.Message }

func (f fixedHistory) GetConversationHistoryContext(context.Context, *slack.GetConversationHistoryParameters) (*slack.GetConversationHistoryResponse, error) {
	return &slack.GetConversationHistoryResponse{Messages: f.channel}, nil
}

func (f fixedHistory) GetConversationRepliesContext(context.Context, *slack.GetConversationRepliesParameters) ([]slack.Message, bool, string, error) {
	return f.thread, false, "", nil
}

// Where several messages carry a key (a post made again after its answer
// was lost), Find finds the oldest, in the channel (newest first) and in a
// thread (oldest first) alike.
func TestFindFindsTheOldest(t *testing.T) {
	t.Parallel()
	carrying := func(ts, claims string) slack.Message {
		var m slack.Message
		m.Timestamp = ts
		m.Metadata = slack.SlackMetadata{EventType: noticeEvent, EventPayload: map[string]any{"claims": claims}}
		return m
	}
	h := fixedHistory{
		channel: []slack.Message{carrying("1763976603.000100", "k"), carrying("1763976602.000100", "k"), carrying("1763976601.000900", "k")},
		thread:  []slack.Message{carrying("1763976600.000100", "j"), carrying("1763976600.000200", "j"), carrying("1763976610.000100", "j")},
	}
	found, err := SlackFinder{Slack: h}.Find(t.Context(), "C1", []notices.Message{{Channel: "C1", TS: "1763976599.000100"}}, []string{"k", "j"}, time.Unix(1763976000, 0))
	if err != nil {
		t.Fatal(err)
	}
	if got := found["k"].TS; got != "1763976601.000900" {
		t.Errorf("in the channel, found %s; want the oldest, 1763976601.000900", got)
	}
	if got := found["j"].TS; got != "1763976600.000100" {
		t.Errorf("in a thread, found %s; want the oldest, 1763976600.000100", got)
	}
}

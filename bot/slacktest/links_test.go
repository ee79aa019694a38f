package slacktest

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

// linkShared is a link_shared event as the app reads it, with the fields
// slack-go's LinkSharedEvent leaves out.
type linkShared struct {
	slackevents.LinkSharedEvent
	UnfurlID        string `json:"unfurl_id"`
	Source          string `json:"source"`
	IsBotUserMember bool   `json:"is_bot_user_member"`
}

func readLinkShared(t *testing.T, evt socketmode.Event) linkShared {
	t.Helper()
	ev, ok := evt.Data.(slackevents.EventsAPIEvent)
	if !ok || ev.InnerEvent.Type != "link_shared" {
		t.Fatalf("want link_shared, got %v %+v", evt.Type, evt.Data)
	}
	if _, ok := ev.InnerEvent.Data.(*slackevents.LinkSharedEvent); !ok {
		t.Errorf("slack-go did not read it as a LinkSharedEvent: %T", ev.InnerEvent.Data)
	}
	var ls linkShared
	if err := json.Unmarshal(*ev.Data.(*slackevents.EventsAPICallbackEvent).InnerEvent, &ls); err != nil {
		t.Fatal(err)
	}
	return ls
}

func unfurlOf(text string, button *slack.ButtonBlockElement) map[string]slack.Attachment {
	blocks := []slack.Block{slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, text, false, false), nil, nil)}
	if button != nil {
		blocks = append(blocks, slack.NewActionBlock("", button))
	}
	return map[string]slack.Attachment{"https://book.example.com/ada/intro-call": {Fallback: text, Blocks: slack.Blocks{BlockSet: blocks}}}
}

// A person's link to an unfurl domain reaches the app from the composer
// and then from the posted message; the app unfurls it by either, only
// links of that message, and a button in the unfurl arrives as Slack sends
// it from an app unfurl.
func TestLinkSharedAndUnfurled(t *testing.T) {
	t.Parallel()
	srv := NewServer(t, func(o *Options) { o.UnfurlDomains = []string{"example.com"} })
	srv.AddUser(User{ID: "UADA", Name: "ada"})
	srv.AddUser(User{ID: "UEVE", Name: "eve"})
	srv.AddChannel(Channel{ID: "C1", Name: "team", Members: []string{"UADA", "UEVE", srv.BotUserID()}})
	b := startBot(t, srv)
	ctx := testCtx(t)

	if _, err := srv.Say(ctx, "UADA", "CNONE", "hi"); !errors.Is(err, ErrInvalidAction) {
		t.Errorf("Say in an unknown channel: %v", err)
	}
	link := "https://book.example.com/ada/intro-call"
	msg, err := srv.Say(ctx, "UADA", "C1", "Pick a time: <"+link+"> (or <https://other.test/x>)")
	if err != nil {
		t.Fatal(err)
	}
	draft, posted := readLinkShared(t, b.next(t)), readLinkShared(t, b.next(t))
	if draft.Source != "composer" || draft.Channel != "COMPOSER" || draft.UnfurlID == "" || draft.User != "UADA" {
		t.Errorf("composer event: %+v", draft)
	}
	if posted.Source != "conversations_history" || posted.Channel != "C1" || posted.MessageTimeStamp != msg.TS || !posted.IsBotUserMember {
		t.Errorf("posted event: %+v", posted)
	}
	if len(posted.Links) != 1 || posted.Links[0].URL != link || posted.Links[0].Domain != "example.com" {
		t.Errorf("links: %+v (only the unfurl domain's)", posted.Links)
	}

	// By unfurl_id from the composer; by channel and ts once posted.
	if _, _, _, err := b.api.UnfurlMessageByIDContext(ctx, draft.UnfurlID, "composer", unfurlOf("draft", nil)); err != nil {
		t.Fatal(err)
	}
	btn := slack.NewButtonBlockElement("offer_slot", "o1 2026-03-23T10:00:00Z", slack.NewTextBlockObject(slack.PlainTextType, "Book", false, false))
	if _, _, _, err := b.api.UnfurlMessageContext(ctx, "C1", msg.TS, unfurlOf("Intro call", btn)); err != nil {
		t.Fatal(err)
	}
	u, ok := srv.Unfurl(msg, link)
	if !ok || u.Text != "Intro call" || u.Attachment != 1 || u.Channel != "C1" {
		t.Fatalf("unfurl = %+v, %v", u, ok)
	}

	for name, call := range map[string]func() error{
		"cannot_unfurl_url": func() error {
			_, _, _, err := b.api.UnfurlMessageContext(ctx, "C1", msg.TS, map[string]slack.Attachment{"https://other.test/x": {Text: "x"}})
			return err
		},
		"cannot_unfurl_message": func() error {
			_, _, _, err := b.api.UnfurlMessageContext(ctx, "C1", "1.000001", unfurlOf("x", nil))
			return err
		},
		"cannot_find_channel": func() error {
			_, _, _, err := b.api.UnfurlMessageContext(ctx, "CNONE", msg.TS, unfurlOf("x", nil))
			return err
		},
		"cant_update_message": func() error {
			_, _, _, err := b.api.UpdateMessageContext(ctx, "C1", msg.TS, slack.MsgOptionText("mine now", false))
			return err
		},
	} {
		var se slack.SlackErrorResponse
		if err := call(); !errors.As(err, &se) || se.Err != name {
			t.Errorf("%s: got %v", name, err)
		}
	}

	if _, err := srv.SendInteraction(ctx, BlockAction("UEVE", "offer_slot", "", InUnfurl(u))); err != nil {
		t.Fatal(err)
	}
	ic := b.next(t).Data.(slack.InteractionCallback)
	a := ic.ActionCallback.BlockActions[0]
	if a.Value != "o1 2026-03-23T10:00:00Z" || !ic.Container.IsAppUnfurl || ic.Container.Type != "message_attachment" ||
		ic.Container.MessageTs != msg.TS || ic.Channel.ID != "C1" || ic.Message.User != "UADA" || ic.ResponseURL == "" {
		t.Errorf("block_actions from the unfurl: %+v / %+v", ic.Container, a)
	}
	// The response_url answers the clicker; the person's message is theirs.
	if _, _, err := b.api.PostMessageContext(ctx, "", slack.MsgOptionReplaceOriginal(ic.ResponseURL), slack.MsgOptionText("mine now", false)); err == nil {
		t.Error("replace_original replaced a person's message")
	}
	if _, _, err := b.api.PostMessageContext(ctx, "", slack.MsgOptionResponseURL(ic.ResponseURL, slack.ResponseTypeEphemeral), slack.MsgOptionText("Booked", false)); err != nil {
		t.Error(err)
	}
}

// A message shortcut carries the message it was chosen on, the
// conversation, a trigger_id and a response_url.
func TestMessageShortcut(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	srv.AddUser(User{ID: "UADA", Name: "ada"})
	srv.AddUser(User{ID: "UGRACE", Name: "grace"})
	srv.AddChannel(Channel{ID: "C1", Name: "team", Members: []string{"UADA", "UGRACE"}})
	b := startBot(t, srv)
	ctx := testCtx(t)
	msg, err := srv.Say(ctx, "UGRACE", "C1", "let's talk")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.SendInteraction(ctx, MessageShortcut("UADA", "offer_times", msg)); err != nil {
		t.Fatal(err)
	}
	ic := b.next(t).Data.(slack.InteractionCallback)
	if ic.Type != slack.InteractionTypeMessageAction || ic.CallbackID != "offer_times" || ic.Message.User != "UGRACE" ||
		ic.Message.Text != "let's talk" || ic.Message.Timestamp != msg.TS || ic.Channel.ID != "C1" || ic.TriggerID == "" || ic.ResponseURL == "" {
		t.Errorf("message_action: %+v", ic)
	}
	if _, err := srv.SendInteraction(ctx, MessageShortcut("UADA", "offer_times", Message{Channel: "C1", TS: "1.000002"})); !errors.Is(err, ErrInvalidAction) {
		t.Errorf("a shortcut on no message: %v", err)
	}
}

var offerStep = Function{
	CallbackID: "offer_times_step",
	Inputs: []Param{
		{Name: "event_type", Type: "string", Required: true},
		{Name: "people", Type: "array", Items: "slack#/types/user_id"},
		{Name: "channel_id", Type: "slack#/types/channel_id", Required: true},
		{Name: "count", Type: "integer"},
	},
	Outputs: []Param{
		{Name: "booking_id", Type: "string", Required: true},
		{Name: "start_time", Type: "slack#/types/timestamp", Required: true},
		{Name: "attendee", Type: "slack#/types/user_id", Required: true},
	},
}

// A step reaches the app as function_executed, as slack-go reads it; it
// ends once, with outputs of the declared types, and its token works only
// while it runs.
func TestFunctionExecutedAndCompleted(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	srv.AddChannel(Channel{ID: "C1", Name: "team", Members: []string{srv.BotUserID()}})
	b := startBot(t, srv)
	ctx := testCtx(t)

	if _, err := srv.RunFunction(ctx, offerStep, map[string]any{"event_type": "intro-call"}); !errors.Is(err, ErrInvalidAction) {
		t.Errorf("a run without its required channel: %v", err)
	}
	run, err := srv.RunFunction(ctx, offerStep, map[string]any{"event_type": "intro-call", "channel_id": "C1", "people": []string{"UGRACE"}})
	if err != nil {
		t.Fatal(err)
	}
	ev := b.next(t).Data.(slackevents.EventsAPIEvent)
	fe, ok := ev.InnerEvent.Data.(*slackevents.FunctionExecutedEvent)
	if !ok {
		t.Fatalf("slack-go read %T", ev.InnerEvent.Data)
	}
	if fe.Function.CallbackID != "offer_times_step" || fe.FunctionExecutionID != run.ExecutionID || fe.Inputs["channel_id"] != "C1" ||
		!slices.Equal(fe.Inputs["people"].([]any), []any{"UGRACE"}) || !strings.HasPrefix(fe.BotAccessToken, "xwfp-") {
		t.Errorf("function_executed: %+v", fe)
	}
	step := slack.New(fe.BotAccessToken, slack.OptionAPIURL(srv.APIURL))
	if _, _, err := step.PostMessageContext(ctx, "C1", slack.MsgOptionText("posted with the step's token", false)); err != nil {
		t.Errorf("the step's token while it runs: %v", err)
	}

	fail := func(outputs map[string]string, want string) {
		t.Helper()
		var se slack.SlackErrorResponse
		if err := b.api.FunctionCompleteSuccessContext(ctx, run.ExecutionID, slack.FunctionCompleteSuccessRequestOptionOutput(outputs)); !errors.As(err, &se) || se.Err != want {
			t.Errorf("completeSuccess(%v) = %v, want %s", outputs, err, want)
		}
	}
	// slack-go sends every output as a string: a timestamp is a number.
	fail(map[string]string{"booking_id": "b1", "start_time": "1774260000", "attendee": "UGRACE"}, "parameter_validation_failed")
	fail(map[string]string{"booking_id": "b1"}, "parameter_validation_failed")
	var se slack.SlackErrorResponse
	if err := b.api.FunctionCompleteErrorContext(ctx, "Fx404", "nope"); !errors.As(err, &se) || se.Err != "function_execution_not_found" {
		t.Errorf("completeError of no run: %v", err)
	}
	if err := b.api.FunctionCompleteErrorContext(ctx, run.ExecutionID, "The offer expired"); err != nil {
		t.Fatal(err)
	}
	got, err := srv.WaitStepEnded(ctx, run.ExecutionID)
	if err != nil || got.State != "failed" || got.Error != "The offer expired" {
		t.Errorf("run = %+v, %v", got, err)
	}
	if err := b.api.FunctionCompleteErrorContext(ctx, run.ExecutionID, "again"); !errors.As(err, &se) || se.Err != "execution_not_in_running_state" {
		t.Errorf("a second end: %v", err)
	}
	if _, _, err := step.PostMessageContext(ctx, "C1", slack.MsgOptionText("late", false)); !errors.As(err, &se) || se.Err != "invalid_auth" {
		t.Errorf("the step's token after it ended: %v", err)
	}
}

package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/digest"
	"github.com/bookbot/bookbot/internal/pause"
	"github.com/bookbot/bookbot/outbox"
)

// ephemeral is a slash command's ack payload: an instant reply only the
// person sees.
func (b *Bot) ephemeral(m message) map[string]any {
	m = b.mark(m)
	return map[string]any{"response_type": "ephemeral", "text": m.Text, "blocks": m.Blocks}
}

// responder replies to the person: through the response_url when there is
// one (ephemeral, optionally replacing the message the button was on), else
// as a direct message.
func (b *Bot) responder(responseURL, userID string, replace bool) func(message) {
	return func(m message) {
		m = b.mark(m)
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if responseURL == "" {
			b.dm(ctx, userID, m)
			return
		}
		msg := &slack.WebhookMessage{ResponseType: slack.ResponseTypeEphemeral, Text: m.Text, Blocks: &slack.Blocks{BlockSet: m.Blocks}, ReplaceOriginal: replace}
		if err := b.postResponse(ctx, responseURL, msg, m.Metadata); err != nil {
			b.log.Warn("reply via response_url failed; sending a direct message", "err", err)
			b.dm(ctx, userID, m)
		}
	}
}

// postResponse posts to a response_url, with metadata when it is not nil.
// slack-go's webhook helper checks only the HTTP status, but Slack refuses
// an expired or used response_url with {"ok":false,"error":…}; that must
// count as a failure so the reply comes as a direct message instead of
// being lost.
func (b *Bot) postResponse(ctx context.Context, responseURL string, msg *slack.WebhookMessage, metadata *slack.SlackMetadata) error {
	body, err := webhookJSON(msg, metadata)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, responseURL, bytes.NewReader(body))
	if err != nil {
		return errors.New("response_url is not usable")
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.cfg.HTTPClient.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is a credential of sorts; keep it out of logs
		}
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("response_url answered %s", resp.Status)
	}
	var answer struct {
		OK    *bool  `json:"ok"`
		Error string `json:"error"`
	}
	if json.Unmarshal(raw, &answer) == nil && answer.OK != nil && !*answer.OK {
		return fmt.Errorf("response_url answered %s", answer.Error)
	}
	return nil
}

// webhook is slack.WebhookMessage without the blocks, which webhookJSON
// marshals in the same pass.
type webhook slack.WebhookMessage

// webhookJSON is msg as JSON, with the same fields and values as
// json.Marshal gives, and metadata when it is not nil (slack-go's
// WebhookMessage has no field for it; a response_url takes it). slack-go's
// Blocks marshals the blocks on its own, and encoding/json then reads that
// output again to check and compact it: a fifth of the CPU a burst of 300
// list replies cost.
func webhookJSON(msg *slack.WebhookMessage, metadata *slack.SlackMetadata) ([]byte, error) {
	if (msg.Blocks == nil || len(msg.Blocks.BlockSet) == 0) && metadata == nil {
		return json.Marshal(msg)
	}
	var blocks []slack.Block
	if msg.Blocks != nil {
		blocks = msg.Blocks.BlockSet
	}
	return json.Marshal(struct {
		*webhook
		Blocks   []slack.Block        `json:"blocks,omitempty"` // hides the embedded one
		Metadata *slack.SlackMetadata `json:"metadata,omitempty"`
	}{(*webhook)(msg), blocks, metadata})
}

func (b *Bot) dm(ctx context.Context, userID string, msg message) {
	if _, _, err := b.post(ctx, userID, msg); err != nil {
		b.log.Warn("direct message failed", "user", userID, "err", err)
	}
}

// post sends m, marked as a dry run's when it is one, to channel: a
// channel's ID, or a person's, for their DM with bookbot. It returns the
// channel and the message's timestamp.
func (b *Bot) post(ctx context.Context, channel string, m message, opts ...slack.MsgOption) (string, string, error) {
	return postMessage(ctx, b.slack, channel, b.mark(m), opts...)
}

// messagePoster posts chat messages: the Bot's SlackAPI, and the digest's
// and the notices' publishers' interfaces.
type messagePoster interface {
	PostMessageContext(ctx context.Context, channelID string, options ...slack.MsgOption) (string, string, error)
}

// postMessage is chat.postMessage of m, its text already escaped, with
// opts, to channel. It returns the channel and the message's timestamp.
func postMessage(ctx context.Context, sl messagePoster, channel string, m message, opts ...slack.MsgOption) (string, string, error) {
	return sl.PostMessageContext(ctx, channel, append(m.options(), opts...)...)
}

// options are m as chat.postMessage's and chat.update's arguments.
func (m message) options() []slack.MsgOption {
	opts := []slack.MsgOption{slack.MsgOptionText(m.Text, false), slack.MsgOptionBlocks(m.Blocks...)}
	if m.Metadata != nil {
		opts = append(opts, slack.MsgOptionMetadata(*m.Metadata))
	}
	return opts
}

// noUnfurl keeps Slack from unfurling the links and media of a message
// bookbot posts on its own, not in answer to someone.
func noUnfurl(more ...slack.MsgOption) []slack.MsgOption {
	return append([]slack.MsgOption{slack.MsgOptionDisableLinkUnfurl(), slack.MsgOptionDisableMediaUnfurl()}, more...)
}

// openView opens a modal (views.open) and returns its ID; when Slack
// refuses, the person is told through reply that what could not be
// opened, and it returns false.
func (b *Bot) openView(ctx context.Context, triggerID string, view slack.ModalViewRequest, what string, reply func(message)) (string, bool) {
	v, err := b.slack.OpenViewContext(ctx, triggerID, view)
	if err != nil {
		b.log.Warn("views.open failed", "err", err)
		text := "The " + what + " could not be opened (" + escape(slackErr(err)) + "). Please try again."
		reply(message{Text: text, Blocks: []slack.Block{section(":warning: " + text)}})
		return "", false
	}
	return v.ID, true
}

// updateView replaces an open modal by its ID (views.update).
func (b *Bot) updateView(ctx context.Context, view slack.ModalViewRequest, viewID string) error {
	_, err := b.slack.UpdateViewContext(ctx, view, "", "", viewID)
	return err
}

// publishHomeView shows blocks as the person's App Home (views.publish).
func (b *Bot) publishHomeView(ctx context.Context, userID string, blocks []slack.Block) {
	req := slack.PublishViewContextRequest{UserID: userID, View: slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: blocks}}}
	if _, err := b.slack.PublishViewContext(ctx, req); err != nil {
		b.log.Warn("views.publish failed", "user", userID, "err", err)
	}
}

// signedViews signs every booking form bookbot opens or updates, whichever
// flow builds it.
type signedViews struct {
	SlackAPI
	signer signer
}

func (s signedViews) OpenViewContext(ctx context.Context, triggerID string, v slack.ModalViewRequest) (*slack.ViewResponse, error) {
	return s.SlackAPI.OpenViewContext(ctx, triggerID, s.signer.view(v))
}

func (s signedViews) UpdateViewContext(ctx context.Context, v slack.ModalViewRequest, externalID, hash, viewID string) (*slack.ViewResponse, error) {
	return s.SlackAPI.UpdateViewContext(ctx, s.signer.view(v), externalID, hash, viewID)
}

// dryRunViews puts the banner on every view bookbot opens, updates or
// publishes, whichever flow builds it.
type dryRunViews struct{ SlackAPI }

func (d dryRunViews) OpenViewContext(ctx context.Context, triggerID string, v slack.ModalViewRequest) (*slack.ViewResponse, error) {
	v.Blocks.BlockSet = withBanner(v.Blocks.BlockSet)
	return d.SlackAPI.OpenViewContext(ctx, triggerID, v)
}

func (d dryRunViews) UpdateViewContext(ctx context.Context, v slack.ModalViewRequest, externalID, hash, viewID string) (*slack.ViewResponse, error) {
	v.Blocks.BlockSet = withBanner(v.Blocks.BlockSet)
	return d.SlackAPI.UpdateViewContext(ctx, v, externalID, hash, viewID)
}

func (d dryRunViews) PublishViewContext(ctx context.Context, req slack.PublishViewContextRequest) (*slack.ViewResponse, error) {
	req.View.Blocks.BlockSet = withBanner(req.View.Blocks.BlockSet)
	return d.SlackAPI.PublishViewContext(ctx, req)
}

// profileZone asks Slack for the zone a person's profile names
// (users.info).
func profileZone(sl SlackAPI) func(ctx context.Context, user string) (string, error) {
	return func(ctx context.Context, user string) (string, error) {
		info, err := sl.GetUserInfoContext(ctx, user)
		if err != nil {
			return "", err
		}
		return info.TZ, nil
	}
}

// displayName is a person's name as their Slack profile gives it, or
// fallback when Slack does not say.
func (b *Bot) displayName(ctx context.Context, user, fallback string) string {
	if info, err := b.slack.GetUserInfoContext(ctx, user); err == nil {
		return firstNonEmpty(info.RealName, firstNonEmpty(info.Profile.DisplayName, fallback))
	}
	return fallback
}

// person is what Slack's profile says of someone who books from an offer.
type person struct {
	name, email string
	zone        *time.Location
}

// profile is the person's name, email and zone from users.info; what Slack
// does not say is left for them to type (the zone: UTC).
func (b *Bot) profile(ctx context.Context, user string) person {
	p := person{zone: time.UTC}
	info, err := b.slack.GetUserInfoContext(ctx, user)
	if err != nil {
		b.log.Info("users.info failed; the offer's form is left for the person to fill in", "user", user, "err", slackErr(err))
		return p
	}
	p.name = firstNonEmpty(info.RealName, info.Profile.RealName)
	p.email = info.Profile.Email
	if loc, err := booking.LoadZone(info.TZ); err == nil && info.TZ != "" {
		p.zone = loc
	}
	return p
}

// Deactivated reports whether Slack says user was deactivated
// (users.info), for PurgeAccounts; an error counts as not.
func (b *Bot) Deactivated(ctx context.Context, user string) bool {
	u, err := b.slack.GetUserInfoContext(ctx, user)
	return err == nil && u.Deleted
}

// messageUpdater rewrites chat messages: the notices' publisher's
// interface.
type messageUpdater interface {
	UpdateMessageContext(ctx context.Context, channelID, timestamp string, options ...slack.MsgOption) (string, string, string, error)
}

// updateMessage rewrites a message bookbot posted (chat.update) to m.
func updateMessage(ctx context.Context, sl messageUpdater, channel, ts string, m message) error {
	_, _, _, err := sl.UpdateMessageContext(ctx, channel, ts, m.options()...)
	return err
}

// update rewrites a message bookbot posted (chat.update) to m, marked
// already when it is to be.
func (b *Bot) update(ctx context.Context, channel, ts string, m message) error {
	return updateMessage(ctx, b.slack, channel, ts, m)
}

// unfurl shows cards under the links they are for, in the message channel
// and ts (chat.unfurl); unfurling again replaces them.
func (b *Bot) unfurl(ctx context.Context, channel, ts string, cards map[string]message) error {
	unfurls := make(map[string]slack.Attachment, len(cards))
	for link, m := range cards {
		unfurls[link] = slack.Attachment{Fallback: m.Text, Blocks: slack.Blocks{BlockSet: m.Blocks}}
	}
	_, _, _, err := b.slack.UnfurlMessageContext(ctx, channel, ts, unfurls)
	return err
}

func slackErr(err error) string {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err
	}
	return err.Error()
}

// updateSubmitted updates the view a submission ack put in place. Until
// Slack has applied that ack, views.update answers not_found; it is asked
// again until the ack's own deadline has passed (then the modal was closed).
func (b *Bot) updateSubmitted(ctx context.Context, view slack.ModalViewRequest, externalID string) error {
	wait := 5 * time.Millisecond
	deadline := time.Now().Add(ackWindow)
	for {
		_, err := b.slack.UpdateViewContext(ctx, view, externalID, "", "")
		var se slack.SlackErrorResponse
		if err == nil || !errors.As(err, &se) || se.Err != "not_found" || time.Now().After(deadline) {
			return err
		}
		if pause.For(ctx, wait) != nil {
			return err
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// reportTimeout bounds telling a person a write's outcome, apart from the
// time the write itself took.
const reportTimeout = 15 * time.Second

// ackWindow is how long Slack waits for an ack.
const ackWindow = 3 * time.Second

// ackWrite is how long slack-go is given, at shutdown, to write the acks
// queued last: each is a write of a few hundred bytes on a socket.
const ackWrite = 250 * time.Millisecond

// HistoryReader reads a channel's history and a thread's replies, with
// message metadata. *slack.Client satisfies it.
type HistoryReader interface {
	GetConversationHistoryContext(ctx context.Context, params *slack.GetConversationHistoryParameters) (*slack.GetConversationHistoryResponse, error)
	GetConversationRepliesContext(ctx context.Context, params *slack.GetConversationRepliesParameters) ([]slack.Message, bool, string, error)
}

var _ HistoryReader = (*slack.Client)(nil)

// SlackFinder finds the messages bookbot posted by what their metadata
// carries (outbox.Finder): for every kind of post, the one look in Slack's
// history that settles a claim whose post's answer never came. It needs
// the channels:history scope (groups:history for a private channel);
// without it, or when bookbot is not in the channel, it fails with
// outbox.ErrCannotLook.
type SlackFinder struct {
	Slack HistoryReader
}

var _ outbox.Finder = SlackFinder{}

// Find looks for the messages that carry keys among those posted at or
// after since: in channel, and in each of threads. Where several carry a
// key, the oldest is the one found.
func (f SlackFinder) Find(ctx context.Context, channel string, threads []outbox.Message, keys []string, since time.Time) (map[string]outbox.Found, error) {
	if f.Slack == nil {
		return nil, errors.New("no Slack client")
	}
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	found := map[string]outbox.Found{}
	look := func(ch string, msgs []slack.Message) {
		for _, m := range msgs {
			carries, burst := carried(m)
			for _, k := range carries {
				if f, seen := found[k]; want[k] && (!seen || tsBefore(m.Timestamp, f.TS)) {
					found[k] = outbox.Found{Message: outbox.Message{Channel: ch, TS: m.Timestamp}, Burst: burst}
				}
			}
		}
	}
	if err := channelHistory(ctx, f.Slack, channel, since, func(ms []slack.Message) { look(channel, ms) }); err != nil {
		return nil, findErr("the history of "+channel, err)
	}
	for _, thread := range threads {
		err := threadReplies(ctx, f.Slack, thread, since, func(ms []slack.Message) { look(thread.Channel, ms) })
		var se slack.SlackErrorResponse
		if errors.As(err, &se) && se.Err == "thread_not_found" {
			continue // its first message was deleted: nothing was posted in it
		}
		if err != nil {
			return nil, findErr("a thread of "+thread.Channel, err)
		}
	}
	return found, nil
}

// tsBefore reports whether Slack timestamp a ("seconds.micros") is
// earlier than b.
func tsBefore(a, b string) bool {
	as, af, _ := strings.Cut(a, ".")
	bs, bf, _ := strings.Cut(b, ".")
	if len(as) != len(bs) {
		return len(as) < len(bs)
	}
	if as != bs {
		return as < bs
	}
	return af+strings.Repeat("0", max(0, len(bf)-len(af))) < bf+strings.Repeat("0", max(0, len(af)-len(bf)))
}

// carried is what a message bookbot posted carries for SlackFinder: a
// digest's first message, its date's key (digest.Key); a notice, its
// keys' IDs (notices.Key.ID), and whether it is a burst. A notice's event
// type is its kind's, or noticeEvent for a burst's summary and for what
// an earlier bookbot posted.
func carried(m slack.Message) (keys []string, burst bool) {
	p := m.Metadata.EventPayload
	switch m.Metadata.EventType {
	case digestEvent:
		date, _ := p["date"].(string)
		if day, err := time.Parse(time.DateOnly, date); err == nil {
			return []string{digest.Key(day)}, false
		}
	case noticeEvent, eventBookingNew, eventBookingCancelled, eventBookingMoved:
		ids, _ := p["claims"].(string)
		burst, _ := p["burst"].(bool)
		return strings.Fields(ids), burst
	}
	return nil, false
}

// findErr is a failed look at where, as outbox.ErrCannotLook when Slack
// refused it for good: no scope, no access, no channel.
func findErr(where string, err error) error {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		switch se.Err {
		case "missing_scope", "not_in_channel", "channel_not_found", "no_permission", "access_denied",
			"invalid_auth", "not_authed", "account_inactive", "token_revoked", "not_allowed_token_type":
			return fmt.Errorf("%w: reading %s: %s", outbox.ErrCannotLook, where, slackErr(err))
		}
	}
	if errors.Is(err, errTooMuchHistory) {
		return fmt.Errorf("%w: reading %s: %w", outbox.ErrCannotLook, where, err)
	}
	return fmt.Errorf("reading %s: %w", where, err)
}

// historyPages bounds a look back through a channel or a thread: past it,
// what bookbot looks for (a post cut short) is not looked for further.
const historyPages = 10

// errTooMuchHistory means more than historyPages pages of messages were
// posted since the time looked back to.
var errTooMuchHistory = fmt.Errorf("more than %d pages of messages to look through", historyPages)

// channelHistory passes visit the channel's top-level messages posted at or
// after since, page by page, newest first.
func channelHistory(ctx context.Context, sl HistoryReader, channel string, since time.Time, visit func([]slack.Message)) error {
	cursor := ""
	for range historyPages {
		h, err := sl.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{
			ChannelID: channel, Oldest: slackTS(since), Inclusive: true, Limit: 200, Cursor: cursor, IncludeAllMetadata: true,
		})
		if err != nil {
			return err
		}
		visit(h.Messages)
		if !h.HasMore || h.ResponseMetaData.NextCursor == "" {
			return nil
		}
		cursor = h.ResponseMetaData.NextCursor
	}
	return errTooMuchHistory
}

// threadReplies passes visit the thread's messages posted at or after
// since, page by page, oldest first.
func threadReplies(ctx context.Context, sl HistoryReader, thread outbox.Message, since time.Time, visit func([]slack.Message)) error {
	cursor := ""
	for range historyPages {
		msgs, more, next, err := sl.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
			ChannelID: thread.Channel, Timestamp: thread.TS, Oldest: slackTS(since), Inclusive: true, Limit: 200, Cursor: cursor, IncludeAllMetadata: true,
		})
		if err != nil {
			return err
		}
		visit(msgs)
		if !more || next == "" {
			return nil
		}
		cursor = next
	}
	return errTooMuchHistory
}

// slackTS is t as a Slack message timestamp.
func slackTS(t time.Time) string {
	return fmt.Sprintf("%d.%06d", t.Unix(), t.Nanosecond()/1000)
}

// rateLimited reports a 429 and how long to wait.
func rateLimited(err error) (time.Duration, bool) {
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return max(rl.RetryAfter, time.Second), true
	}
	var sc slack.StatusCodeError
	if errors.As(err, &sc) && sc.Code == http.StatusTooManyRequests {
		return time.Second, true
	}
	return 0, false
}

// notPosted reports whether err proves the message was not posted:
// Slack answered with an error, or the connection was never made. Slack's
// internal_error and fatal_error are not proof: Slack says some of the
// call may have been carried out before it failed.
func notPosted(err error) bool {
	var se slack.SlackErrorResponse
	var rl *slack.RateLimitedError
	var sc slack.StatusCodeError
	var op *net.OpError
	switch {
	case errors.As(err, &se):
		return se.Err != "internal_error" && se.Err != "fatal_error"
	case errors.As(err, &rl):
		return true
	case errors.As(err, &sc):
		return sc.Code < 500
	case errors.As(err, &op):
		return op.Op == "dial"
	}
	return false
}

// FunctionSteps ends Workflow Builder steps with Slack's
// functions.completeSuccess and functions.completeError, with bookbot's
// bot token: slack-go's FunctionCompleteSuccess sends every output as a
// string, and a step's timestamp output must be a number.
type FunctionSteps struct {
	http  *http.Client
	api   string        // the Web API's base URL, ending in "/"
	token func() string // the bot token, kept out of anything printed
}

// NewFunctionSteps calls the Web API at apiURL (SLACK_API_URL) with
// token, the bot token, through client.
func NewFunctionSteps(client *http.Client, apiURL, token string) FunctionSteps {
	return FunctionSteps{http: client, api: apiURL, token: func() string { return token }}
}

// CompleteStep is functions.completeSuccess.
func (f FunctionSteps) CompleteStep(ctx context.Context, executionID string, outputs map[string]any) error {
	return f.call(ctx, "functions.completeSuccess", map[string]any{"function_execution_id": executionID, "outputs": outputs})
}

// FailStep is functions.completeError.
func (f FunctionSteps) FailStep(ctx context.Context, executionID, reason string) error {
	return f.call(ctx, "functions.completeError", map[string]any{"function_execution_id": executionID, "error": reason})
}

// call posts body to method as JSON, with slack-go's errors: a
// RateLimitedError for a 429, a StatusCodeError for any other status but
// 200, a SlackErrorResponse for "ok": false.
func (f FunctionSteps) call(ctx context.Context, method string, body any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.api+method, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Authorization", "Bearer "+f.token())
	resp, err := f.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		wait, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return &slack.RateLimitedError{RetryAfter: time.Duration(wait) * time.Second}
	case resp.StatusCode != http.StatusOK:
		return slack.StatusCodeError{Code: resp.StatusCode, Status: resp.Status}
	}
	var r slack.SlackResponse
	if err := json.Unmarshal(answer, &r); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if !r.Ok {
		return slack.SlackErrorResponse{Err: r.Error, ResponseMetadata: r.ResponseMetadata}
	}
	return nil
}

var _ StepEnder = FunctionSteps{}

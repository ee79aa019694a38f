package slacktest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/slack-go/slack"
)

// People's messages and the links in them. A person's message (Say) that
// links to one of the app's unfurl domains (Options.UnfurlDomains) sends
// the app link_shared twice, as Slack does for a link pasted and then
// posted: first from the composer (source "composer", channel "COMPOSER",
// an unfurl_id and no message yet), then from the posted message (source
// "conversations_history", its channel and ts). The app answers with
// chat.unfurl, by channel and ts or by unfurl_id and source, and the
// server keeps each link's unfurl, shown under the link (Message Kind
// "unfurl") until the app unfurls it again. InUnfurl presses a button in
// one, as Slack's block_actions from an app unfurl do.

// MaxUnfurlLinks is how many links of one message Slack offers an app to
// unfurl.
const MaxUnfurlLinks = 5

// composer is a link_shared sent from the composer: the unfurl_id the app
// may answer by, until the message is posted.
type composer struct {
	user  string
	links []string
}

// linkRE is a link as Slack writes it in a message's text: <URL> or
// <URL|label>, or a bare URL a person typed.
var linkRE = regexp.MustCompile(`<(https?://[^|>\s]+)(?:\|[^>]*)?>|(https?://[^\s<>|]+)`)

// linksIn are the distinct links in a message's text, in order.
func linksIn(text string) []string {
	var out []string
	for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
		u := m[1]
		if u == "" {
			u = m[2]
		}
		if !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	return out
}

// SetUnfurlDomains replaces the app's unfurl domains (Options.UnfurlDomains),
// as an app's manifest changes.
func (s *Server) SetUnfurlDomains(domains ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.UnfurlDomains = slices.Clone(domains)
}

// unfurlDomain is the app's unfurl domain that u's host falls under (the
// domain itself, or a subdomain of it), "" for none.
func (s *Server) unfurlDomain(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return ""
	}
	host := strings.ToLower(p.Hostname())
	for _, d := range s.opts.UnfurlDomains {
		d = strings.ToLower(d)
		if host == d || strings.HasSuffix(host, "."+d) {
			return d
		}
	}
	return ""
}

// Say is a person posting text in channel (a channel ID, or a user ID for
// their DM with the app): the message is recorded (Kind "user"), and when
// it links to the app's unfurl domains the app gets link_shared, from the
// composer and then from the posted message; Say returns once both are
// acked. Like Slack, it offers at most MaxUnfurlLinks links. The person
// must be a member of the channel.
func (s *Server) Say(ctx context.Context, user, channel, text string, opts ...DeliverOption) (Message, error) {
	s.mu.Lock()
	if _, known := s.users[user]; !known {
		s.mu.Unlock()
		return Message{}, fmt.Errorf("%w: no user %s", ErrInvalidAction, user)
	}
	c, code := s.resolveLocked(channel)
	if code != "" {
		s.mu.Unlock()
		return Message{}, fmt.Errorf("%w: %s: %s", ErrInvalidAction, channel, code)
	}
	if c.im {
		if c.user != user {
			s.mu.Unlock()
			return Message{}, fmt.Errorf("%w: %s cannot post in another person's DM with the app", ErrInvalidAction, user)
		}
	} else if !slices.Contains(c.members, user) {
		s.mu.Unlock()
		return Message{}, fmt.Errorf("%w: %s is not a member of %s", ErrInvalidAction, user, channel)
	}
	var links []string
	for _, l := range linksIn(text) {
		if s.unfurlDomain(l) != "" && len(links) < MaxUnfurlLinks {
			links = append(links, l)
		}
	}
	ts := s.tsLocked()
	s.posted[ts] = &postedMessage{channel: channel, dm: c.id, text: text, person: user, links: links}
	m := Message{Kind: "user", Channel: c.id, User: user, TS: ts, Text: text, At: s.now()}
	s.messages = append(s.messages, m)
	member := slices.Contains(c.members, s.opts.BotUserID)
	var events []map[string]any
	if len(links) > 0 {
		draft := user + "-" + newUUID()
		s.composers[draft] = composer{user: user, links: links}
		events = append(events,
			s.linkSharedLocked(user, "COMPOSER", draft, draft, "composer", links, member),
			s.linkSharedLocked(user, c.id, ts, unfurlIDOf(c.id, ts), "conversations_history", links, member))
		s.unfurlIDs[unfurlIDOf(c.id, ts)] = ts
	}
	s.notifyLocked()
	s.mu.Unlock()
	for _, ev := range events {
		if _, err := s.SendEvent(ctx, ev, opts...); err != nil {
			return copyMessage(m), err
		}
	}
	return copyMessage(m), nil
}

// unfurlIDOf is the unfurl_id of a posted message's links.
func unfurlIDOf(channel, ts string) string {
	return channel + "." + strings.ReplaceAll(ts, ".", "") + "." + randomHex(16)
}

func (s *Server) linkSharedLocked(user, channel, ts, unfurlID, source string, links []string, member bool) map[string]any {
	var ls []any
	for _, l := range links {
		ls = append(ls, map[string]any{"domain": s.unfurlDomain(l), "url": l})
	}
	return map[string]any{
		"type": "link_shared", "channel": channel, "is_bot_user_member": member, "user": user,
		"message_ts": ts, "unfurl_id": unfurlID, "source": source, "links": ls,
	}
}

// unfurlKey names a link's unfurl: the message's ts (or the composer's
// unfurl_id) and the link.
func unfurlKey(ts, link string) string { return ts + "\x00" + link }

// chat.unfurl

func (s *Server) chatUnfurlLocked(q *request) map[string]any {
	channel, ts := q.str("channel"), q.str("ts")
	id, source := q.str("unfurl_id"), q.str("source")
	var links []string
	var where, dm string
	switch {
	case channel != "" && ts != "":
		c, code := s.resolveLocked(channel)
		if code != "" {
			return apiError("cannot_find_channel")
		}
		p := s.posted[ts]
		if p == nil || p.deleted || p.person == "" || p.dm != c.id {
			return apiError("cannot_unfurl_message")
		}
		links, where, dm = p.links, ts, c.id
	case id != "" && source == "composer":
		d, found := s.composers[id]
		if !found {
			return apiError("cannot_unfurl_message")
		}
		links, where, dm = d.links, id, "COMPOSER"
	case id != "" && source == "conversations_history":
		mts, found := s.unfurlIDs[id]
		if !found {
			return apiError("cannot_unfurl_message")
		}
		links, where, dm = s.posted[mts].links, mts, s.posted[mts].dm
	case id != "":
		return apiError("invalid_source")
	default:
		return apiError("invalid_arguments")
	}
	raw := q.json("unfurls")
	var unfurls map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &unfurls) != nil {
		return apiError("cannot_parse_attachment")
	}
	type shown struct {
		link, text string
		blocks     json.RawMessage
	}
	var all []shown
	for link, a := range unfurls {
		if !slices.Contains(links, link) {
			return apiError("cannot_unfurl_url")
		}
		var att struct {
			Blocks   json.RawMessage `json:"blocks"`
			Fallback string          `json:"fallback"`
			Text     string          `json:"text"`
		}
		if json.Unmarshal(a, &att) != nil {
			return apiError("cannot_parse_attachment")
		}
		var bl []any
		if len(att.Blocks) > 0 && string(att.Blocks) != "null" {
			if json.Unmarshal(att.Blocks, &bl) != nil {
				return apiError("cannot_parse_attachment")
			}
			if msgs := validateBlocks(bl, surfaceMessage, "/unfurls/"+link+"/blocks"); len(msgs) > 0 {
				s.blockKitBreach("link unfurl", msgs)
				return apiErrorMessages("invalid_blocks", msgs)
			}
		}
		if len(bl) == 0 && att.Text == "" {
			return apiError("cannot_parse_attachment")
		}
		all = append(all, shown{link, firstOf(att.Fallback, att.Text), cloneRaw(att.Blocks)})
	}
	slices.SortFunc(all, func(a, b shown) int { return slices.Index(links, a.link) - slices.Index(links, b.link) })
	for _, u := range all {
		s.unfurls[unfurlKey(where, u.link)] = &postedMessage{channel: dm, dm: dm, text: u.text, blocks: renderMessageBlocks(u.blocks)}
		s.messages = append(s.messages, Message{Kind: "unfurl", Channel: dm, TS: where, Link: u.link, Attachment: slices.Index(links, u.link) + 1, Text: u.text, Blocks: u.blocks, At: s.now()})
	}
	return ok(nil)
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// Unfurl is the unfurl the app last gave link in the message m (a
// person's message, from Say), as a Message of Kind "unfurl"; ok is false
// when it gave none.
func (s *Server) Unfurl(m Message, link string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unfurlLocked(m.TS, link)
}

func (s *Server) unfurlLocked(ts, link string) (Message, bool) {
	u, p := s.unfurls[unfurlKey(ts, link)], s.posted[ts]
	if u == nil || p == nil {
		return Message{}, false
	}
	return Message{Kind: "unfurl", Channel: u.dm, TS: ts, Link: link, Attachment: slices.Index(p.links, link) + 1, Text: u.text, Blocks: cloneRaw(u.blocks)}, true
}

// WaitUnfurl blocks until the app has unfurled link in the person's
// message m so that match (nil: any) accepts it, and returns that unfurl,
// or until ctx is done.
func (s *Server) WaitUnfurl(ctx context.Context, m Message, link string, match func(Message) bool) (Message, error) {
	var found Message
	err := s.waitFor(ctx, func() bool {
		u, ok := s.unfurlLocked(m.TS, link)
		if !ok || match != nil && !match(u) {
			return false
		}
		found = u
		return true
	})
	return found, err
}

// InUnfurl makes the action happen in the app's unfurl of a link (an
// unfurl Message, from Unfurl or WaitUnfurl): Slack sends it from a
// message_attachment container, is_app_unfurl, whose attachment_id is the
// unfurl's, in the person's message, with a response_url tied to that
// message.
func InUnfurl(u Message) ActionOption {
	return func(ic *slack.InteractionCallback, _ *slack.BlockAction) {
		ic.Container = slack.Container{
			Type: "message_attachment", MessageTs: u.TS, ChannelID: u.Channel, IsAppUnfurl: true,
			AttachmentID: json.Number(strconv.Itoa(u.Attachment)),
		}
		ic.Channel.ID = u.Channel
		ic.Message.Timestamp = u.TS
	}
}

// unfurlOfLocked is the unfurl an action in an app unfurl happened in:
// the one its container's attachment_id names, in its message.
func (s *Server) unfurlOfLocked(container map[string]any) (p, u *postedMessage, link string, err error) {
	ts := str(container, "message_ts")
	p = s.posted[ts]
	if p == nil || p.deleted || p.person == "" {
		return nil, nil, "", fmt.Errorf("%w: no person's message with ts %s", ErrInvalidAction, ts)
	}
	n, _ := strconv.Atoi(fmt.Sprint(container["attachment_id"]))
	if n < 1 || n > len(p.links) {
		return nil, nil, "", fmt.Errorf("%w: message %s has no attachment %v", ErrInvalidAction, ts, container["attachment_id"])
	}
	link = p.links[n-1]
	if u = s.unfurls[unfurlKey(ts, link)]; u == nil {
		return nil, nil, "", fmt.Errorf("%w: the app has not unfurled %q in message %s", ErrInvalidAction, link, ts)
	}
	return p, u, link, nil
}

// personMessageJSON is a person's message as Slack sends it in payloads
// and history, with the app's unfurls as its attachments.
func (s *Server) personMessageJSON(ts string, p *postedMessage) map[string]any {
	m := map[string]any{"type": "message", "user": p.person, "text": p.text, "ts": ts, "team": s.opts.TeamID}
	if p.threadTS != "" {
		m["thread_ts"] = p.threadTS
	}
	var atts []any
	for i, l := range p.links {
		if u := s.unfurls[unfurlKey(ts, l)]; u != nil {
			atts = append(atts, map[string]any{
				"id": i + 1, "app_unfurl_url": l, "from_url": l, "is_app_unfurl": true,
				"fallback": u.text, "blocks": json.RawMessage(u.blocks), "app_id": s.opts.AppID,
			})
		}
	}
	if atts != nil {
		m["attachments"] = atts
	}
	return m
}

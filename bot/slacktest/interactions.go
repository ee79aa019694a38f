package slacktest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"

	"github.com/slack-go/slack"
)

// ActionOption adjusts a BlockAction payload.
type ActionOption func(*slack.InteractionCallback, *slack.BlockAction)

// InView makes the action happen inside a view (modal or Home tab). The
// server sends the view as it currently is, state included.
func InView(v View) ActionOption {
	return func(ic *slack.InteractionCallback, _ *slack.BlockAction) {
		ic.Container = slack.Container{Type: "view", ViewID: v.ID}
		ic.View = slack.View{ID: v.ID, Hash: v.Hash, CallbackID: v.CallbackID, Type: slack.ViewType(v.Type)}
	}
}

// InMessage makes the action happen on a message the bot posted (from
// Messages or WaitMessage). The server fills in the channel, the message,
// state and a response_url tied to that message.
func InMessage(m Message) ActionOption {
	return func(ic *slack.InteractionCallback, _ *slack.BlockAction) {
		ic.Container = slack.Container{
			Type: "message", MessageTs: m.TS, ChannelID: m.Channel,
			IsEphemeral: m.Kind == "ephemeral" || (m.ResponseType != "in_channel" && (m.Kind == "ack" || m.Kind == "response_url")),
		}
		ic.Channel.ID = m.Channel
		ic.Message.Timestamp = m.TS
	}
}

// WithBlockID sets the action's block_id (otherwise found from the view or
// message by action_id).
func WithBlockID(id string) ActionOption {
	return func(_ *slack.InteractionCallback, a *slack.BlockAction) { a.BlockID = id }
}

// WithType sets the element type (otherwise found from the view or message).
func WithType(t slack.ActionType) ActionOption {
	return func(_ *slack.InteractionCallback, a *slack.BlockAction) { a.Type = t }
}

// WithTriggerID sets the trigger_id instead of letting the server issue one.
func WithTriggerID(id string) ActionOption {
	return func(ic *slack.InteractionCallback, _ *slack.BlockAction) { ic.TriggerID = id }
}

// BlockAction builds the block_actions payload for a person using one
// element: pressing a button (value is its value) or choosing in a select,
// date picker, user picker, … (value is the option value, date, user ID…).
// With InView or InMessage the server finds the element, fills block_id,
// type and texts, and checks that value is something Slack would offer.
func BlockAction(user, actionID, value string, opts ...ActionOption) slack.InteractionCallback {
	a := &slack.BlockAction{ActionID: actionID, Value: value}
	ic := slack.InteractionCallback{
		Type: slack.InteractionTypeBlockActions,
		User: slack.User{ID: user},
	}
	for _, o := range opts {
		o(&ic, a)
	}
	ic.ActionCallback.BlockActions = []*slack.BlockAction{a}
	return ic
}

// ViewSubmission builds the view_submission payload for a person pressing
// Submit on view with values entered (block_id → action_id → value), on top
// of what the view's state already holds.
func ViewSubmission(user string, view View, values map[string]map[string]slack.BlockAction) slack.InteractionCallback {
	st := copyState(view.State)
	for b, acts := range values {
		if st[b] == nil {
			st[b] = map[string]slack.BlockAction{}
		}
		maps.Copy(st[b], acts)
	}
	return slack.InteractionCallback{
		Type: slack.InteractionTypeViewSubmission,
		User: slack.User{ID: user},
		View: slack.View{
			ID:              view.ID,
			Type:            slack.ViewType(view.Type),
			Hash:            view.Hash,
			CallbackID:      view.CallbackID,
			PrivateMetadata: view.PrivateMetadata,
			ExternalID:      view.ExternalID,
			RootViewID:      view.RootViewID,
			PreviousViewID:  view.PreviousViewID,
			State:           &slack.ViewState{Values: st},
		},
	}
}

// Submit is a person pressing Submit on a modal with values entered. Like
// Slack's client it refuses when a required input is empty. The ack's
// response_action is applied to the stored views.
func (s *Server) Submit(ctx context.Context, user, viewID string, values map[string]map[string]slack.BlockAction, opts ...DeliverOption) (Ack, error) {
	v, found := s.View(viewID)
	if !found {
		return Ack{}, fmt.Errorf("%w %q", ErrUnknownView, viewID)
	}
	if v.Closed {
		return Ack{}, fmt.Errorf("%w: %s", ErrViewClosed, viewID)
	}
	if v.Type != "modal" {
		return Ack{}, fmt.Errorf("%w: only modals can be submitted", ErrInvalidAction)
	}
	ic := ViewSubmission(user, v, values)
	var blocks []any
	_ = json.Unmarshal(v.Blocks, &blocks)
	var missing []string
	for _, bl := range blocks {
		bm, _ := bl.(map[string]any)
		if str(bm, "type") != "input" {
			continue
		}
		if opt, _ := bm["optional"].(bool); opt {
			continue
		}
		el, _ := bm["element"].(map[string]any)
		b, a := str(bm, "block_id"), str(el, "action_id")
		entry := ic.View.State.Values[b][a]
		if entry.Type == "" {
			entry.Type = slack.ActionType(str(el, "type"))
		}
		if err := normalizeValue(&entry, el); err != nil {
			return Ack{}, err
		}
		if isEmpty(entry) {
			missing = append(missing, b+"/"+a)
		}
	}
	if len(missing) > 0 {
		return Ack{}, fmt.Errorf("%w: %s", ErrRequiredInput, strings.Join(missing, ", "))
	}
	return s.SendInteraction(ctx, ic, opts...)
}

// SubmitInputs is Submit with values keyed by action_id and given as plain
// strings: text for text inputs, the option value for selects and radio
// buttons (comma-separated for multi-selects and checkboxes), the date,
// time or ID for pickers. Only options the view offers can be chosen.
func (s *Server) SubmitInputs(ctx context.Context, user, viewID string, inputs map[string]string, opts ...DeliverOption) (Ack, error) {
	v, found := s.View(viewID)
	if !found {
		return Ack{}, fmt.Errorf("%w %q", ErrUnknownView, viewID)
	}
	var blocks []any
	_ = json.Unmarshal(v.Blocks, &blocks)
	values := map[string]map[string]slack.BlockAction{}
	for actionID, value := range inputs {
		blockID, el, found := findElement(blocks, actionID)
		if !found {
			return Ack{}, fmt.Errorf("%w: view %s has no element with action_id %q", ErrInvalidAction, viewID, actionID)
		}
		ba := slack.BlockAction{ActionID: actionID, BlockID: blockID, Type: slack.ActionType(str(el, "type")), Value: value}
		if err := normalizeValue(&ba, el); err != nil {
			return Ack{}, err
		}
		ba.ActionID, ba.BlockID = "", ""
		if values[blockID] == nil {
			values[blockID] = map[string]slack.BlockAction{}
		}
		values[blockID][actionID] = ba
	}
	return s.Submit(ctx, user, viewID, values, opts...)
}

// Cancel is a person closing a modal with its Close button (or the X). The
// view and those stacked on it close (the whole stack with clear_on_close);
// with notify_on_close the app gets view_closed and Cancel waits for the ack.
func (s *Server) Cancel(ctx context.Context, user, viewID string, opts ...DeliverOption) (Ack, error) {
	s.mu.Lock()
	r, found := s.views[viewID]
	if !found || r.v.Type != "modal" {
		s.mu.Unlock()
		return Ack{}, fmt.Errorf("%w %q", ErrUnknownView, viewID)
	}
	if r.v.Closed {
		s.mu.Unlock()
		return Ack{}, fmt.Errorf("%w: %s", ErrViewClosed, viewID)
	}
	rendered := s.renderLocked(r)
	s.closeLocked(r, r.v.ClearOnClose)
	notify := r.v.NotifyOnClose
	s.notifyLocked()
	var env *envelope
	if notify {
		p := map[string]any{
			"type":                  "view_closed",
			"team":                  map[string]any{"id": s.opts.TeamID, "domain": teamDomain},
			"user":                  s.userRefLocked(user),
			"api_app_id":            s.opts.AppID,
			"token":                 verificationToken,
			"view":                  rendered,
			"is_cleared":            r.v.ClearOnClose,
			"is_enterprise_install": false,
		}
		payload, _ := json.Marshal(p)
		env = &envelope{id: newUUID(), typ: "interactive", payload: payload, interaction: "view_closed", user: user}
	}
	s.mu.Unlock()
	if env == nil {
		return Ack{}, nil
	}
	return s.deliver(ctx, env, false, opts)
}

func (s *Server) userRefLocked(id string) map[string]any {
	name := strings.ToLower(id)
	if u, found := s.users[id]; found && u.Name != "" {
		name = u.Name
	}
	return map[string]any{"id": id, "username": name, "name": name, "team_id": s.opts.TeamID}
}

// SendInteraction delivers an "interactive" envelope and waits for its ack.
// payload is a slack.InteractionCallback (see BlockAction, ViewSubmission),
// a map or raw JSON. Team, user details, api_app_id, trigger_id and
// response_url are filled in when empty; a payload about a stored view
// carries that view as it currently is, with the person's input in its
// state. A view_submission ack's response_action is applied.
func (s *Server) SendInteraction(ctx context.Context, payload any, opts ...DeliverOption) (Ack, error) {
	m, err := toMap(payload)
	if err != nil {
		return Ack{}, err
	}
	switch payload.(type) {
	case slack.InteractionCallback, *slack.InteractionCallback:
		// slack-go writes every field; Slack sends only what applies.
		keepBlockIDs(m)
		prune(m)
	}
	s.mu.Lock()
	env, err := s.interactionLocked(m)
	s.mu.Unlock()
	if err != nil {
		return Ack{}, err
	}
	return s.deliver(ctx, env, false, opts)
}

// keepBlockIDs protects actions' block_id from prune: slack-go decodes an
// action as a block action only when block_id is a string.
func keepBlockIDs(m map[string]any) {
	acts, _ := m["actions"].([]any)
	for _, a := range acts {
		if am, isObj := a.(map[string]any); isObj && str(am, "block_id") == "" {
			am["block_id"] = "\x00"
		}
	}
}

func (s *Server) interactionLocked(m map[string]any) (_ *envelope, err error) {
	typ := str(m, "type")
	if typ == "" {
		return nil, errors.New("slacktest: interaction payload has no type")
	}
	userMap, _ := m["user"].(map[string]any)
	user := str(userMap, "id")
	if user == "" {
		return nil, errors.New("slacktest: interaction payload has no user.id")
	}
	ref := s.userRefLocked(user)
	for k, v := range userMap {
		ref[k] = v
	}
	m["user"] = ref
	setDefault(m, "team", map[string]any{"id": s.opts.TeamID, "domain": teamDomain})
	setDefault(m, "api_app_id", s.opts.AppID)
	setDefault(m, "token", verificationToken)
	setDefault(m, "is_enterprise_install", false)
	if _, has := m["enterprise"]; !has {
		m["enterprise"] = nil
	}

	env := &envelope{id: newUUID(), typ: "interactive", interaction: typ, user: user}
	container, _ := m["container"].(map[string]any)
	viewMap, _ := m["view"].(map[string]any)
	viewID := str(viewMap, "id")
	if viewID == "" && str(container, "type") == "view" {
		viewID = str(container, "view_id")
	}
	var rec *viewRec
	if viewID != "" {
		rec = s.views[viewID]
		if rec == nil {
			return nil, fmt.Errorf("%w %q", ErrUnknownView, viewID)
		}
		if rec.v.Closed {
			return nil, fmt.Errorf("%w: %s", ErrViewClosed, viewID)
		}
		if !s.topOfStackLocked(rec) {
			return nil, fmt.Errorf("%w: view %s is under another modal", ErrInvalidAction, viewID)
		}
	}

	// Where the elements live, to resolve actions.
	var blocks []any
	var posted, unfurl *postedMessage
	var unfurled string // the link of the unfurl acted in
	msgTS := str(container, "message_ts")
	switch {
	case rec != nil:
		blocks = rec.blocks
	case str(container, "type") == "message_attachment" && container["is_app_unfurl"] == true:
		if posted, unfurl, unfurled, err = s.unfurlOfLocked(container); err != nil {
			return nil, err
		}
		_ = json.Unmarshal(unfurl.blocks, &blocks)
	case msgTS != "":
		posted = s.posted[msgTS]
		if posted == nil || posted.deleted {
			return nil, fmt.Errorf("%w: no message with ts %s", ErrInvalidAction, msgTS)
		}
		_ = json.Unmarshal(posted.blocks, &blocks)
	}
	if typ == "message_action" {
		if err := s.messageActionLocked(m); err != nil {
			return nil, err
		}
	}

	if rec != nil {
		// Nothing the person did counts unless the interaction is sent.
		state, touched := copyState(rec.v.State), copyTouched(rec.touched)
		defer func() {
			if err != nil {
				rec.v.State, rec.touched = state, touched
			}
		}()
		// The person's input, from the payload's view state.
		if st, isObj := viewMap["state"].(map[string]any); isObj {
			if err := s.mergeStateLocked(rec, st["values"]); err != nil {
				return nil, err
			}
		}
	}

	// A message's state: its elements' initial values plus this action.
	var msgState map[string]map[string]slack.BlockAction
	if posted != nil && typ != "message_action" {
		msgState = initialState(blocks)
	}

	// Actions: fill in what Slack knows, apply selections to the state.
	acts, _ := m["actions"].([]any)
	now := s.now()
	for _, a := range acts {
		am, isObj := a.(map[string]any)
		if !isObj {
			continue
		}
		if str(am, "block_id") == "\x00" {
			delete(am, "block_id")
		}
		var ba slack.BlockAction
		b, _ := json.Marshal(am)
		_ = json.Unmarshal(b, &ba)
		var el map[string]any
		if blocks != nil {
			bid, e, found := findElement(blocks, ba.ActionID)
			if ba.BlockID != "" {
				bid = ba.BlockID
				e, found = findElementIn(blocks, bid, ba.ActionID)
			}
			if !found {
				return nil, fmt.Errorf("%w: no element with block_id %q action_id %q where the action happened", ErrInvalidAction, ba.BlockID, ba.ActionID)
			}
			ba.BlockID, el = bid, e
			if typ == "block_actions" {
				if bl := blockByID(blocks, bid); str(bl, "type") == "input" {
					if dispatch, _ := bl["dispatch_action"].(bool); !dispatch {
						return nil, fmt.Errorf("%w: input block %q has no dispatch_action, so Slack sends no block_actions for %q",
							ErrInvalidAction, bid, ba.ActionID)
					}
				}
			}
			if ba.Type == "" {
				ba.Type = slack.ActionType(str(e, "type"))
			}
			if ba.Type == "button" {
				if ba.Text.Text == "" {
					if t, isObj := e["text"].(map[string]any); isObj {
						ba.Text = slack.TextBlockObject{Type: str(t, "type"), Text: str(t, "text")}
					}
				}
				if ba.Value == "" {
					ba.Value = str(e, "value")
				}
			}
			if err := normalizeValue(&ba, e); err != nil {
				return nil, err
			}
		}
		if ba.Type == "" {
			ba.Type = "button"
		}
		if ba.ActionTs == "" {
			ba.ActionTs = fmt.Sprintf("%d.%06d", now.Unix(), now.Nanosecond()/1000)
		}
		out := actionJSON(ba, el)
		clear(am)
		maps.Copy(am, out)
		if statefulTypes[string(ba.Type)] {
			switch {
			case rec != nil:
				s.setStateLocked(rec, ba.BlockID, ba.ActionID, ba)
			case msgState != nil:
				if msgState[ba.BlockID] == nil {
					msgState[ba.BlockID] = map[string]slack.BlockAction{}
				}
				msgState[ba.BlockID][ba.ActionID] = ba
			}
		}
	}

	switch {
	case rec != nil:
		m["view"] = s.renderLocked(rec)
		if typ == "block_actions" {
			m["container"] = map[string]any{"type": "view", "view_id": rec.v.ID}
		}
		if typ == "view_submission" {
			env.viewID = rec.v.ID
			setDefault(m, "response_urls", []any{})
		}
	case unfurl != nil:
		channel := posted.dm
		container["channel_id"] = channel
		container["is_ephemeral"] = false
		m["container"] = container
		m["channel"] = map[string]any{"id": channel, "name": s.channelNameLocked(channel)}
		m["message"] = s.personMessageJSON(msgTS, posted)
		m["app_unfurl"] = map[string]any{"app_unfurl_url": unfurled, "from_url": unfurled, "is_app_unfurl": true, "blocks": blocks, "fallback": unfurl.text}
		m["state"] = map[string]any{"values": stateJSON(msgState)}
		if str(m, "response_url") == "" {
			m["response_url"] = s.issueResponseURLLocked("actions", channel, user, msgTS)
		}
	case posted != nil:
		channel := posted.dm
		container["type"] = "message"
		container["channel_id"] = channel
		container["is_ephemeral"] = posted.ephemeral
		m["container"] = container
		m["channel"] = map[string]any{"id": channel, "name": s.channelNameLocked(channel)}
		switch {
		case posted.ephemeral:
			delete(m, "message")
		case posted.person != "":
			m["message"] = s.personMessageJSON(msgTS, posted)
		default:
			m["message"] = s.botMessageJSON(msgTS, posted.text, posted.blocks)
		}
		m["state"] = map[string]any{"values": stateJSON(msgState)}
		if str(m, "response_url") == "" {
			m["response_url"] = s.issueResponseURLLocked("actions", channel, user, msgTS)
		}
	}

	switch typ {
	case "block_actions", "shortcut", "message_action", "view_submission":
		if str(m, "trigger_id") == "" {
			from := ""
			if rec != nil {
				from = rec.v.ID
			}
			m["trigger_id"] = s.issueTriggerLocked(user, from)
		}
	}
	if typ == "message_action" && str(m, "response_url") == "" {
		if ch, _ := m["channel"].(map[string]any); str(ch, "id") != "" {
			m["response_url"] = s.issueResponseURLLocked("actions", str(ch, "id"), user, "")
		}
	}
	env.accepts = typ == "view_submission" || typ == "block_suggestion"
	payload, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("slacktest: marshalling interaction: %w", err)
	}
	env.payload = payload
	s.notifyLocked()
	return env, nil
}

// mergeStateLocked records what the person entered (a state.values object).
func (s *Server) mergeStateLocked(rec *viewRec, values any) error {
	vm, isObj := values.(map[string]any)
	if !isObj {
		return nil
	}
	for b, acts := range vm {
		am, _ := acts.(map[string]any)
		for a, entry := range am {
			el, found := findElementIn(rec.blocks, b, a)
			if !found {
				return fmt.Errorf("%w: view %s has no input %s/%s", ErrInvalidAction, rec.v.ID, b, a)
			}
			var ba slack.BlockAction
			raw, _ := json.Marshal(entry)
			if err := json.Unmarshal(raw, &ba); err != nil {
				return fmt.Errorf("slacktest: state %s/%s: %w", b, a, err)
			}
			if ba.Type == "" {
				ba.Type = slack.ActionType(str(el, "type"))
			}
			if err := normalizeValue(&ba, el); err != nil {
				return err
			}
			cur, had := rec.v.State[b][a]
			if had && stateEqual(cur, ba) {
				continue
			}
			s.setStateLocked(rec, b, a, ba)
		}
	}
	return nil
}

func copyTouched(t map[string]map[string]bool) map[string]map[string]bool {
	out := make(map[string]map[string]bool, len(t))
	for b, acts := range t {
		out[b] = maps.Clone(acts)
	}
	return out
}

func stateEqual(a, b slack.BlockAction) bool {
	x, _ := json.Marshal(stateEntry(a))
	y, _ := json.Marshal(stateEntry(b))
	return string(x) == string(y)
}

func (s *Server) setStateLocked(rec *viewRec, blockID, actionID string, ba slack.BlockAction) {
	entry := slack.BlockAction{
		Type: ba.Type, Value: ba.Value, SelectedOption: ba.SelectedOption, SelectedOptions: ba.SelectedOptions,
		SelectedUser: ba.SelectedUser, SelectedUsers: ba.SelectedUsers, SelectedChannel: ba.SelectedChannel,
		SelectedChannels: ba.SelectedChannels, SelectedConversation: ba.SelectedConversation,
		SelectedConversations: ba.SelectedConversations, SelectedDate: ba.SelectedDate,
		SelectedTime: ba.SelectedTime, SelectedDateTime: ba.SelectedDateTime, Timezone: ba.Timezone,
		RichTextValue: ba.RichTextValue,
	}
	if rec.v.State[blockID] == nil {
		rec.v.State[blockID] = map[string]slack.BlockAction{}
	}
	rec.v.State[blockID][actionID] = entry
	if rec.touched[blockID] == nil {
		rec.touched[blockID] = map[string]bool{}
	}
	rec.touched[blockID][actionID] = true
}

// normalizeValue moves a plain Value into the field the element type uses
// and checks that a chosen option is one the element offers.
func normalizeValue(ba *slack.BlockAction, el map[string]any) error {
	v := ba.Value
	offered := elementOptions(el)
	pick := func(value string) (slack.OptionBlockObject, error) {
		for _, o := range offered {
			if str(o, "value") == value {
				if op := toOption(o); op != nil {
					return *op, nil
				}
			}
		}
		return slack.OptionBlockObject{}, fmt.Errorf("%w: %q is not an option of %s %q (offered: %v)",
			ErrInvalidAction, value, str(el, "type"), str(el, "action_id"), optionValues(offered))
	}
	switch string(ba.Type) {
	case "static_select", "radio_buttons", "overflow":
		if ba.SelectedOption.Value == "" && v != "" {
			ba.SelectedOption.Value = v
			ba.Value = ""
		}
		if ba.SelectedOption.Value != "" {
			o, err := pick(ba.SelectedOption.Value)
			if err != nil {
				return err
			}
			ba.SelectedOption = o
		}
	case "external_select":
		if ba.SelectedOption.Value == "" && v != "" {
			ba.SelectedOption = slack.OptionBlockObject{Value: v, Text: &slack.TextBlockObject{Type: "plain_text", Text: v}}
			ba.Value = ""
		}
	case "multi_static_select", "checkboxes":
		if len(ba.SelectedOptions) == 0 && v != "" {
			for _, part := range strings.Split(v, ",") {
				ba.SelectedOptions = append(ba.SelectedOptions, slack.OptionBlockObject{Value: strings.TrimSpace(part)})
			}
			ba.Value = ""
		}
		for i, so := range ba.SelectedOptions {
			o, err := pick(so.Value)
			if err != nil {
				return err
			}
			ba.SelectedOptions[i] = o
		}
	case "multi_external_select":
		if len(ba.SelectedOptions) == 0 && v != "" {
			for _, part := range strings.Split(v, ",") {
				p := strings.TrimSpace(part)
				ba.SelectedOptions = append(ba.SelectedOptions, slack.OptionBlockObject{Value: p, Text: &slack.TextBlockObject{Type: "plain_text", Text: p}})
			}
			ba.Value = ""
		}
	case "users_select":
		if ba.SelectedUser == "" {
			ba.SelectedUser, ba.Value = v, ""
		}
	case "multi_users_select":
		if len(ba.SelectedUsers) == 0 && v != "" {
			ba.SelectedUsers, ba.Value = splitList(v), ""
		}
	case "conversations_select":
		if ba.SelectedConversation == "" {
			ba.SelectedConversation, ba.Value = v, ""
		}
	case "multi_conversations_select":
		if len(ba.SelectedConversations) == 0 && v != "" {
			ba.SelectedConversations, ba.Value = splitList(v), ""
		}
	case "channels_select":
		if ba.SelectedChannel == "" {
			ba.SelectedChannel, ba.Value = v, ""
		}
	case "multi_channels_select":
		if len(ba.SelectedChannels) == 0 && v != "" {
			ba.SelectedChannels, ba.Value = splitList(v), ""
		}
	case "datepicker":
		if ba.SelectedDate == "" {
			ba.SelectedDate, ba.Value = v, ""
		}
		if ba.SelectedDate != "" && !dateRE.MatchString(ba.SelectedDate) {
			return fmt.Errorf("%w: date %q is not YYYY-MM-DD", ErrInvalidAction, ba.SelectedDate)
		}
	case "timepicker":
		if ba.SelectedTime == "" {
			ba.SelectedTime, ba.Value = v, ""
		}
		if ba.SelectedTime != "" && !timeRE.MatchString(ba.SelectedTime) {
			return fmt.Errorf("%w: time %q is not HH:mm", ErrInvalidAction, ba.SelectedTime)
		}
		if ba.Timezone == "" {
			ba.Timezone = str(el, "timezone")
		}
	case "plain_text_input":
		n := len([]rune(v))
		if f, isNum := el["max_length"].(float64); isNum && n > int(f) {
			return fmt.Errorf("%w: %q is longer than max_length %d", ErrInvalidAction, v, int(f))
		}
		if f, isNum := el["min_length"].(float64); isNum && n > 0 && n < int(f) {
			return fmt.Errorf("%w: %q is shorter than min_length %d", ErrInvalidAction, v, int(f))
		}
	case "number_input":
		if v == "" {
			break
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("%w: %q is not a number", ErrInvalidAction, v)
		}
		if dec, _ := el["is_decimal_allowed"].(bool); !dec && x != math.Trunc(x) {
			return fmt.Errorf("%w: %q is not a whole number", ErrInvalidAction, v)
		}
		if lo, err := strconv.ParseFloat(str(el, "min_value"), 64); err == nil && x < lo {
			return fmt.Errorf("%w: %q is below min_value", ErrInvalidAction, v)
		}
		if hi, err := strconv.ParseFloat(str(el, "max_value"), 64); err == nil && x > hi {
			return fmt.Errorf("%w: %q is above max_value", ErrInvalidAction, v)
		}
	case "email_text_input":
		if v != "" && (!strings.Contains(v, "@") || strings.ContainsAny(v, " \t")) {
			return fmt.Errorf("%w: %q is not an email address; Slack's client refuses it", ErrInvalidAction, v)
		}
	}
	return nil
}

func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func optionValues(opts []map[string]any) []string {
	var out []string
	for _, o := range opts {
		out = append(out, str(o, "value"))
	}
	return out
}

// actionJSON encodes an action the way Slack sends it in "actions".
func actionJSON(ba slack.BlockAction, el map[string]any) map[string]any {
	m := stateEntry(ba)
	if ba.Type == "button" || string(ba.Type) == "workflow_button" {
		m = map[string]any{"type": string(ba.Type)}
		if ba.Text.Text != "" {
			m["text"] = ba.Text
		}
		if ba.Value != "" {
			m["value"] = ba.Value
		}
		if st := str(el, "style"); st != "" {
			m["style"] = st
		}
	}
	m["action_id"] = ba.ActionID
	m["block_id"] = ba.BlockID
	m["action_ts"] = ba.ActionTs
	if p, isObj := el["placeholder"].(map[string]any); isObj && ba.Type != "button" {
		m["placeholder"] = p
	}
	for _, k := range []string{"initial_option", "initial_options", "initial_date", "initial_time", "initial_user"} {
		if v, has := el[k]; has {
			m[k] = v
		}
	}
	return m
}

// Suggest is a person typing query into an external_select in a view: the
// app gets block_suggestion and answers with options in the ack (see
// Ack.Payload). Like Slack, nothing is sent before min_query_length
// (default 3) characters.
func (s *Server) Suggest(ctx context.Context, user, viewID, actionID, query string, opts ...DeliverOption) (Ack, error) {
	s.mu.Lock()
	r, found := s.views[viewID]
	if !found {
		s.mu.Unlock()
		return Ack{}, fmt.Errorf("%w %q", ErrUnknownView, viewID)
	}
	blockID, el, found := findElement(r.blocks, actionID)
	s.mu.Unlock()
	if !found {
		return Ack{}, fmt.Errorf("%w: view %s has no element with action_id %q", ErrInvalidAction, viewID, actionID)
	}
	if t := str(el, "type"); t != "external_select" && t != "multi_external_select" {
		return Ack{}, fmt.Errorf("%w: %q is a %s, not an external select", ErrInvalidAction, actionID, t)
	}
	minLen := 3
	if f, isNum := el["min_query_length"].(float64); isNum {
		minLen = int(f)
	}
	if len([]rune(query)) < minLen {
		return Ack{}, fmt.Errorf("%w: Slack sends no block_suggestion before %d characters", ErrInvalidAction, minLen)
	}
	return s.SendInteraction(ctx, map[string]any{
		"type":      "block_suggestion",
		"user":      map[string]any{"id": user},
		"action_id": actionID,
		"block_id":  blockID,
		"value":     query,
		"container": map[string]any{"type": "view", "view_id": viewID},
		"view":      map[string]any{"id": viewID},
	}, opts...)
}

// MessageShortcut builds the message_action payload of a person choosing
// the app's message shortcut callbackID in the "⋯" menu of m, a message in
// a conversation (a person's from Say, or one the bot posted). Sent with
// SendInteraction, it carries the message as it is now, the channel, a
// trigger_id and a response_url for that conversation.
func MessageShortcut(user, callbackID string, m Message) map[string]any {
	return map[string]any{
		"type":        "message_action",
		"user":        map[string]any{"id": user},
		"callback_id": callbackID,
		"channel":     map[string]any{"id": m.Channel},
		"message_ts":  m.TS,
		"message":     map[string]any{"ts": m.TS},
	}
}

// messageActionLocked fills in a message_action's message and channel
// from the message it names, which must be one a person can see there.
func (s *Server) messageActionLocked(m map[string]any) error {
	if str(m, "callback_id") == "" {
		return errors.New("slacktest: message_action has no callback_id")
	}
	msg, _ := m["message"].(map[string]any)
	ts := firstOf(str(m, "message_ts"), str(msg, "ts"))
	p := s.posted[ts]
	if p == nil || p.deleted || p.ephemeral {
		return fmt.Errorf("%w: no message with ts %s to open the menu of", ErrInvalidAction, ts)
	}
	if ch, _ := m["channel"].(map[string]any); str(ch, "id") != "" && str(ch, "id") != p.dm && str(ch, "id") != p.channel {
		return fmt.Errorf("%w: message %s is not in %s", ErrInvalidAction, ts, str(ch, "id"))
	}
	m["message_ts"] = ts
	m["channel"] = map[string]any{"id": p.dm, "name": s.channelNameLocked(p.dm)}
	if p.person != "" {
		m["message"] = s.personMessageJSON(ts, p)
	} else {
		m["message"] = s.botMessageJSON(ts, p.text, p.blocks)
	}
	if p.threadTS != "" {
		m["message"].(map[string]any)["thread_ts"] = p.threadTS
	}
	return nil
}

// channelNameLocked is a conversation's name as payloads give it.
func (s *Server) channelNameLocked(id string) string {
	if c, found := s.channels[id]; found {
		return c.Name
	}
	return "directmessage"
}

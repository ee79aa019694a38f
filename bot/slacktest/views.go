package slacktest

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/slack-go/slack"
)

// viewRec is a stored view.
type viewRec struct {
	v      View
	spec   map[string]any // the view as sent
	blocks []any          // rendered, with block_id and action_id filled in
	// touched marks state entries a person has set; they survive views.update
	// when block_id and action_id stay the same.
	touched map[string]map[string]bool
}

func (r *viewRec) snapshot() View {
	v := r.v
	v.Raw = cloneRaw(v.Raw)
	v.Blocks = cloneRaw(v.Blocks)
	v.State = copyState(v.State)
	if v.Errors != nil {
		v.Errors = maps.Clone(v.Errors)
	}
	return v
}

func copyState(st map[string]map[string]slack.BlockAction) map[string]map[string]slack.BlockAction {
	out := make(map[string]map[string]slack.BlockAction, len(st))
	for b, acts := range st {
		out[b] = maps.Clone(acts)
	}
	return out
}

// newHashLocked returns a fresh view hash.
func (s *Server) newHashLocked() string {
	return fmt.Sprintf("%d.%s", s.now().Unix(), randomHex(8))
}

// parseView decodes and checks a view the bot sent. kind is "modal" or "home".
func (s *Server) parseView(raw json.RawMessage, kind string) (map[string]any, map[string]any) {
	if len(raw) == 0 {
		return nil, apiError("invalid_arguments")
	}
	if len(raw) > MaxViewBytes {
		return nil, apiError("view_too_large")
	}
	var spec map[string]any
	if err := json.Unmarshal(raw, &spec); err != nil {
		return nil, apiErrorMessages("invalid_arguments", []string{"[ERROR] view must be a JSON object [json-pointer:/view]"})
	}
	if msgs := ValidateView(spec, kind); len(msgs) > 0 {
		s.blockKitBreach(kind+" view", msgs)
		return nil, apiErrorMessages("invalid_arguments", msgs)
	}
	return spec, nil
}

// setContentLocked replaces a view's content with spec, keeping what the
// person typed into inputs whose block_id and action_id did not change.
func (s *Server) setContentLocked(r *viewRec, raw json.RawMessage, spec map[string]any) {
	blocks, _ := spec["blocks"].([]any)
	blocks = renderBlocks(blocks)
	state := initialState(blocks)
	touched := map[string]map[string]bool{}
	for b, acts := range r.touched {
		for a := range acts {
			old, hadOld := r.v.State[b][a]
			cur, inNew := state[b][a]
			if hadOld && inNew && old.Type == cur.Type {
				state[b][a] = old
				if touched[b] == nil {
					touched[b] = map[string]bool{}
				}
				touched[b][a] = true
			}
		}
	}
	rb, _ := json.Marshal(blocks)
	r.spec = spec
	r.blocks = blocks
	r.touched = touched
	r.v.Raw = cloneRaw(raw)
	r.v.Blocks = rb
	r.v.State = state
	r.v.Type = str(spec, "type")
	r.v.CallbackID = str(spec, "callback_id")
	if ext := str(spec, "external_id"); ext != "" {
		// An update without external_id keeps the one the view has.
		r.v.ExternalID = ext
	}
	r.v.PrivateMetadata = str(spec, "private_metadata")
	r.v.Title = textOf(spec["title"])
	r.v.NotifyOnClose, _ = spec["notify_on_close"].(bool)
	r.v.ClearOnClose, _ = spec["clear_on_close"].(bool)
	r.v.Hash = s.newHashLocked()
	r.v.Errors = nil
}

func (s *Server) newViewLocked(raw json.RawMessage, spec map[string]any, user string) *viewRec {
	id := fmt.Sprintf("V%010d", s.nextLocked())
	r := &viewRec{v: View{ID: id, TriggerUser: user}}
	s.setContentLocked(r, raw, spec)
	s.views[id] = r
	s.viewOrder = append(s.viewOrder, id)
	return r
}

// renderLocked is the view object Slack returns and puts in payloads.
func (s *Server) renderLocked(r *viewRec) map[string]any {
	v := map[string]any{
		"id":                    r.v.ID,
		"team_id":               s.opts.TeamID,
		"type":                  r.v.Type,
		"blocks":                r.blocks,
		"private_metadata":      r.v.PrivateMetadata,
		"callback_id":           r.v.CallbackID,
		"state":                 map[string]any{"values": stateJSON(r.v.State)},
		"hash":                  r.v.Hash,
		"clear_on_close":        r.v.ClearOnClose,
		"notify_on_close":       r.v.NotifyOnClose,
		"external_id":           r.v.ExternalID,
		"app_id":                s.opts.AppID,
		"app_installed_team_id": s.opts.TeamID,
		"bot_id":                DefaultBotID,
		"root_view_id":          nil,
		"previous_view_id":      nil,
	}
	if r.v.Type == "modal" {
		for _, k := range []string{"title", "close", "submit"} {
			v[k] = r.spec[k]
		}
		v["root_view_id"] = r.v.RootViewID
		if r.v.PreviousViewID != "" {
			v["previous_view_id"] = r.v.PreviousViewID
		}
	}
	return v
}

// checkTriggerLocked applies Slack's trigger_id rules.
func (s *Server) checkTriggerLocked(id string) (*trigger, string) {
	if id == "" {
		return nil, "invalid_arguments"
	}
	t, found := s.triggers[id]
	if !found {
		return nil, "invalid_trigger_id"
	}
	if t.used {
		return nil, "exchanged_trigger_id"
	}
	if s.now().Sub(t.issued) >= TriggerTTL {
		return nil, "expired_trigger_id"
	}
	return t, ""
}

func (s *Server) issueTriggerLocked(user, viewID string) string {
	id := fmt.Sprintf("%d.%d.%s", 1000000000+s.nextLocked(), 7000000000+s.seq, randomHex(32))
	s.triggers[id] = &trigger{user: user, viewID: viewID, issued: s.now()}
	return id
}

func (s *Server) externalIDTakenLocked(ext, except string) bool {
	if ext == "" {
		return false
	}
	for id, r := range s.views {
		if id != except && r.v.ExternalID == ext {
			return true
		}
	}
	return false
}

// views.open

func (s *Server) viewsOpenLocked(q *request) map[string]any {
	t, code := s.checkTriggerLocked(q.str("trigger_id"))
	if code != "" {
		return apiError(code)
	}
	raw := q.json("view")
	spec, errResp := s.parseView(raw, "modal")
	if errResp != nil {
		return errResp
	}
	if s.externalIDTakenLocked(str(spec, "external_id"), "") {
		return apiError("duplicate_external_id")
	}
	t.used = true
	r := s.newViewLocked(raw, spec, t.user)
	r.v.Stack = 1
	r.v.RootViewID = r.v.ID
	return ok(map[string]any{"view": s.renderLocked(r)})
}

// topOfStackLocked reports whether a modal is the one the person sees.
func (s *Server) topOfStackLocked(r *viewRec) bool {
	if r.v.Type != "modal" {
		return true
	}
	stack := s.stackLocked(r.v.RootViewID)
	return len(stack) > 0 && stack[len(stack)-1] == r
}

// stackLocked returns the open views stacked on root, bottom first.
func (s *Server) stackLocked(root string) []*viewRec {
	var out []*viewRec
	for _, id := range s.viewOrder {
		r := s.views[id]
		if r.v.Type == "modal" && r.v.RootViewID == root && !r.v.Closed {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b *viewRec) int { return a.v.Stack - b.v.Stack })
	return out
}

// pushLocked stacks a new modal on top of root's stack.
func (s *Server) pushLocked(root string, raw json.RawMessage, spec map[string]any, user string) (*viewRec, string) {
	stack := s.stackLocked(root)
	if len(stack) == 0 {
		return nil, "not_found"
	}
	if len(stack) >= MaxViewStack {
		return nil, "push_limit_reached"
	}
	if s.externalIDTakenLocked(str(spec, "external_id"), "") {
		return nil, "duplicate_external_id"
	}
	top := stack[len(stack)-1]
	r := s.newViewLocked(raw, spec, user)
	r.v.Stack = top.v.Stack + 1
	r.v.RootViewID = root
	r.v.PreviousViewID = top.v.ID
	return r, ""
}

// views.push

func (s *Server) viewsPushLocked(q *request) map[string]any {
	t, code := s.checkTriggerLocked(q.str("trigger_id"))
	if code != "" {
		return apiError(code)
	}
	raw := q.json("view")
	spec, errResp := s.parseView(raw, "modal")
	if errResp != nil {
		return errResp
	}
	root := ""
	if from, found := s.views[t.viewID]; found && from.v.Type == "modal" && !from.v.Closed {
		root = from.v.RootViewID
	} else {
		// Not from inside a modal: the person's most recent open modal.
		for _, id := range slices.Backward(s.viewOrder) {
			if r := s.views[id]; r.v.Type == "modal" && !r.v.Closed && r.v.TriggerUser == t.user {
				root = r.v.RootViewID
				break
			}
		}
	}
	r, code := s.pushLocked(root, raw, spec, t.user)
	if code != "" {
		return apiError(code)
	}
	t.used = true
	return ok(map[string]any{"view": s.renderLocked(r)})
}

// views.update

func (s *Server) viewsUpdateLocked(q *request) map[string]any {
	var r *viewRec
	if id := q.str("view_id"); id != "" {
		r = s.views[id]
	} else if ext := q.str("external_id"); ext != "" {
		for _, cand := range s.views {
			if cand.v.ExternalID == ext {
				r = cand
				break
			}
		}
	} else {
		return apiError("invalid_arguments")
	}
	if r == nil || r.v.Closed {
		return apiError("not_found")
	}
	if h := q.str("hash"); h != "" && h != r.v.Hash {
		return apiError("hash_conflict")
	}
	raw := q.json("view")
	spec, errResp := s.parseView(raw, r.v.Type)
	if errResp != nil {
		return errResp
	}
	if s.externalIDTakenLocked(str(spec, "external_id"), r.v.ID) {
		return apiError("duplicate_external_id")
	}
	s.setContentLocked(r, raw, spec)
	r.v.Updates++
	return ok(map[string]any{"view": s.renderLocked(r)})
}

// views.publish

func (s *Server) viewsPublishLocked(q *request) map[string]any {
	user := q.str("user_id")
	if _, found := s.users[user]; !found || user == "" {
		return apiError("user_not_found")
	}
	raw := q.json("view")
	spec, errResp := s.parseView(raw, "home")
	if errResp != nil {
		return errResp
	}
	if id, found := s.homes[user]; found {
		r := s.views[id]
		if h := q.str("hash"); h != "" && h != r.v.Hash {
			return apiError("hash_conflict")
		}
		if s.externalIDTakenLocked(str(spec, "external_id"), r.v.ID) {
			return apiError("duplicate_external_id")
		}
		s.setContentLocked(r, raw, spec)
		r.v.Updates++
		return ok(map[string]any{"view": s.renderLocked(r)})
	}
	if s.externalIDTakenLocked(str(spec, "external_id"), "") {
		return apiError("duplicate_external_id")
	}
	r := s.newViewLocked(raw, spec, user)
	s.homes[user] = r.v.ID
	return ok(map[string]any{"view": s.renderLocked(r)})
}

// closeLocked closes a modal; with all, the whole stack it is in.
func (s *Server) closeLocked(r *viewRec, all bool) {
	if all {
		for _, v := range s.stackLocked(r.v.RootViewID) {
			v.v.Closed = true
		}
		return
	}
	// Closing a view closes the views stacked above it too.
	for _, v := range s.stackLocked(r.v.RootViewID) {
		if v.v.Stack >= r.v.Stack {
			v.v.Closed = true
		}
	}
}

// applySubmissionAckLocked does what Slack does with a view_submission ack.
func (s *Server) applySubmissionAckLocked(viewID string, payload json.RawMessage) error {
	r, found := s.views[viewID]
	if !found || r.v.Closed {
		return nil
	}
	var resp struct {
		ResponseAction string            `json:"response_action"`
		View           json.RawMessage   `json:"view"`
		Errors         map[string]string `json:"errors"`
	}
	if len(payload) > 0 && string(payload) != "null" {
		if err := json.Unmarshal(payload, &resp); err != nil {
			return fmt.Errorf("%w: payload is not a view submission response: %v", ErrResponseAction, err)
		}
	}
	switch resp.ResponseAction {
	case "":
		s.closeLocked(r, false)
	case "clear":
		s.closeLocked(r, true)
	case "update":
		spec, errResp := s.parseView(resp.View, "modal")
		if errResp != nil {
			return fmt.Errorf("%w: update: %v %v", ErrResponseAction, errResp["error"], errResp["response_metadata"])
		}
		s.setContentLocked(r, resp.View, spec)
		r.v.Updates++
	case "push":
		spec, errResp := s.parseView(resp.View, "modal")
		if errResp != nil {
			return fmt.Errorf("%w: push: %v %v", ErrResponseAction, errResp["error"], errResp["response_metadata"])
		}
		if _, code := s.pushLocked(r.v.RootViewID, resp.View, spec, r.v.TriggerUser); code != "" {
			return fmt.Errorf("%w: push: %s", ErrResponseAction, code)
		}
	case "errors":
		if len(resp.Errors) == 0 {
			return fmt.Errorf("%w: errors: no errors given", ErrResponseAction)
		}
		inputs := inputBlockIDs(r.blocks)
		var bad []string
		for b := range resp.Errors {
			if !inputs[b] {
				bad = append(bad, b)
			}
		}
		r.v.Errors = maps.Clone(resp.Errors)
		if len(bad) > 0 {
			slices.Sort(bad)
			return fmt.Errorf("%w: errors: %q are not input block IDs; Slack shows a generic error instead", ErrResponseAction, bad)
		}
	default:
		return fmt.Errorf("%w: unknown response_action %q", ErrResponseAction, resp.ResponseAction)
	}
	return nil
}

// Blocks and state.

var statefulTypes = map[string]bool{
	"plain_text_input": true, "email_text_input": true, "url_text_input": true, "number_input": true,
	"static_select": true, "external_select": true, "users_select": true, "conversations_select": true,
	"channels_select": true, "multi_static_select": true, "multi_external_select": true,
	"multi_users_select": true, "multi_conversations_select": true, "multi_channels_select": true,
	"checkboxes": true, "radio_buttons": true, "datepicker": true, "timepicker": true,
	"datetimepicker": true, "rich_text_input": true,
}

var interactiveTypes = map[string]bool{"button": true, "overflow": true, "workflow_button": true}

// renderBlocks deep-copies blocks, filling in block_id and action_id the way
// Slack does when a bot leaves them out.
func renderBlocks(in []any) []any {
	b, _ := json.Marshal(in)
	var blocks []any
	_ = json.Unmarshal(b, &blocks)
	for _, bl := range blocks {
		bm, okm := bl.(map[string]any)
		if !okm {
			continue
		}
		if str(bm, "block_id") == "" {
			bm["block_id"] = randomAlnum(5)
		}
		for _, el := range blockElements(bm) {
			t := str(el, "type")
			if (statefulTypes[t] || interactiveTypes[t]) && str(el, "action_id") == "" {
				el["action_id"] = randomAlnum(5)
			}
		}
	}
	return blocks
}

func randomAlnum(n int) string {
	return rand.Text()[:n]
}

// blockElements are a block's interactive elements.
func blockElements(b map[string]any) []map[string]any {
	var out []map[string]any
	switch str(b, "type") {
	case "input":
		if el, okm := b["element"].(map[string]any); okm {
			out = append(out, el)
		}
	case "section":
		if el, okm := b["accessory"].(map[string]any); okm {
			out = append(out, el)
		}
	case "actions":
		els, _ := b["elements"].([]any)
		for _, e := range els {
			if el, okm := e.(map[string]any); okm {
				out = append(out, el)
			}
		}
	}
	return out
}

// findElement finds the block and element with actionID.
func findElement(blocks []any, actionID string) (blockID string, el map[string]any, found bool) {
	for _, bl := range blocks {
		bm, okm := bl.(map[string]any)
		if !okm {
			continue
		}
		for _, e := range blockElements(bm) {
			if str(e, "action_id") == actionID {
				return str(bm, "block_id"), e, true
			}
		}
	}
	return "", nil, false
}

// blockByID finds a block.
func blockByID(blocks []any, blockID string) map[string]any {
	for _, bl := range blocks {
		if bm, okm := bl.(map[string]any); okm && str(bm, "block_id") == blockID {
			return bm
		}
	}
	return nil
}

// findElementIn finds the element with actionID in the block blockID.
func findElementIn(blocks []any, blockID, actionID string) (map[string]any, bool) {
	for _, bl := range blocks {
		bm, okm := bl.(map[string]any)
		if !okm || str(bm, "block_id") != blockID {
			continue
		}
		for _, e := range blockElements(bm) {
			if str(e, "action_id") == actionID {
				return e, true
			}
		}
	}
	return nil, false
}

func inputBlockIDs(blocks []any) map[string]bool {
	out := map[string]bool{}
	for _, bl := range blocks {
		if bm, okm := bl.(map[string]any); okm && str(bm, "type") == "input" {
			out[str(bm, "block_id")] = true
		}
	}
	return out
}

// initialState is the state Slack reports before anyone types anything.
func initialState(blocks []any) map[string]map[string]slack.BlockAction {
	st := map[string]map[string]slack.BlockAction{}
	for _, bl := range blocks {
		bm, okm := bl.(map[string]any)
		if !okm {
			continue
		}
		for _, el := range blockElements(bm) {
			t := str(el, "type")
			if !statefulTypes[t] {
				continue
			}
			ba := slack.BlockAction{Type: slack.ActionType(t)}
			switch t {
			case "plain_text_input", "email_text_input", "url_text_input", "number_input":
				ba.Value = str(el, "initial_value")
			case "static_select", "external_select", "radio_buttons":
				if o := toOption(el["initial_option"]); o != nil {
					ba.SelectedOption = *o
				}
			case "multi_static_select", "multi_external_select", "checkboxes":
				opts, _ := el["initial_options"].([]any)
				for _, o := range opts {
					if op := toOption(o); op != nil {
						ba.SelectedOptions = append(ba.SelectedOptions, *op)
					}
				}
			case "users_select":
				ba.SelectedUser = str(el, "initial_user")
			case "multi_users_select":
				ba.SelectedUsers = strList(el["initial_users"])
			case "conversations_select":
				ba.SelectedConversation = str(el, "initial_conversation")
			case "multi_conversations_select":
				ba.SelectedConversations = strList(el["initial_conversations"])
			case "channels_select":
				ba.SelectedChannel = str(el, "initial_channel")
			case "multi_channels_select":
				ba.SelectedChannels = strList(el["initial_channels"])
			case "datepicker":
				ba.SelectedDate = str(el, "initial_date")
			case "timepicker":
				ba.SelectedTime = str(el, "initial_time")
				ba.Timezone = str(el, "timezone")
			case "datetimepicker":
				if f, okf := el["initial_date_time"].(float64); okf {
					ba.SelectedDateTime = int64(f)
				}
			}
			bid := str(bm, "block_id")
			if st[bid] == nil {
				st[bid] = map[string]slack.BlockAction{}
			}
			st[bid][str(el, "action_id")] = ba
		}
	}
	return st
}

func toOption(v any) *slack.OptionBlockObject {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var o slack.OptionBlockObject
	if json.Unmarshal(b, &o) != nil {
		return nil
	}
	return &o
}

// elementOptions lists an element's options, flattening option groups.
func elementOptions(el map[string]any) []map[string]any {
	var out []map[string]any
	add := func(list any) {
		l, _ := list.([]any)
		for _, o := range l {
			if om, okm := o.(map[string]any); okm {
				out = append(out, om)
			}
		}
	}
	add(el["options"])
	groups, _ := el["option_groups"].([]any)
	for _, g := range groups {
		if gm, okm := g.(map[string]any); okm {
			add(gm["options"])
		}
	}
	return out
}

// stateJSON encodes state the way Slack does: only the fields that apply to
// each element type, with null for nothing entered.
func stateJSON(st map[string]map[string]slack.BlockAction) map[string]any {
	out := map[string]any{}
	for b, acts := range st {
		m := map[string]any{}
		for a, ba := range acts {
			m[a] = stateEntry(ba)
		}
		out[b] = m
	}
	return out
}

func stateEntry(ba slack.BlockAction) map[string]any {
	t := string(ba.Type)
	m := map[string]any{"type": t}
	switch t {
	case "plain_text_input", "email_text_input", "url_text_input", "number_input":
		m["value"] = nullIfEmpty(ba.Value)
	case "static_select", "external_select", "radio_buttons":
		if ba.SelectedOption.Value != "" || ba.SelectedOption.Text != nil {
			m["selected_option"] = ba.SelectedOption
		} else {
			m["selected_option"] = nil
		}
	case "multi_static_select", "multi_external_select", "checkboxes":
		m["selected_options"] = nonNil(ba.SelectedOptions)
	case "users_select":
		m["selected_user"] = nullIfEmpty(ba.SelectedUser)
	case "multi_users_select":
		m["selected_users"] = nonNil(ba.SelectedUsers)
	case "conversations_select":
		m["selected_conversation"] = nullIfEmpty(ba.SelectedConversation)
	case "multi_conversations_select":
		m["selected_conversations"] = nonNil(ba.SelectedConversations)
	case "channels_select":
		m["selected_channel"] = nullIfEmpty(ba.SelectedChannel)
	case "multi_channels_select":
		m["selected_channels"] = nonNil(ba.SelectedChannels)
	case "datepicker":
		m["selected_date"] = nullIfEmpty(ba.SelectedDate)
	case "timepicker":
		m["selected_time"] = nullIfEmpty(ba.SelectedTime)
		if ba.Timezone != "" {
			m["timezone"] = ba.Timezone
		}
	case "datetimepicker":
		if ba.SelectedDateTime != 0 {
			m["selected_date_time"] = ba.SelectedDateTime
		} else {
			m["selected_date_time"] = nil
		}
	default:
		// Unknown or unset type: send what is there.
		b, _ := json.Marshal(ba)
		var full map[string]any
		_ = json.Unmarshal(b, &full)
		prune(full)
		full["type"] = t
		return full
	}
	return m
}

// isEmpty reports whether a state entry holds nothing.
func isEmpty(ba slack.BlockAction) bool {
	return ba.Value == "" && ba.SelectedOption.Value == "" && len(ba.SelectedOptions) == 0 &&
		ba.SelectedUser == "" && len(ba.SelectedUsers) == 0 && ba.SelectedChannel == "" &&
		len(ba.SelectedChannels) == 0 && ba.SelectedConversation == "" && len(ba.SelectedConversations) == 0 &&
		ba.SelectedDate == "" && ba.SelectedTime == "" && ba.SelectedDateTime == 0 && len(ba.RichTextValue.Elements) == 0
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func strList(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		if s, okS := x.(string); okS {
			out = append(out, s)
		}
	}
	return out
}

// textOf is a text object's text.
func textOf(v any) string {
	if m, okm := v.(map[string]any); okm {
		return str(m, "text")
	}
	return ""
}

// prune drops zero values (empty strings, false, 0, null, empty objects
// and arrays) from a decoded JSON object, recursively.
func prune(m map[string]any) {
	for k, v := range m {
		switch x := v.(type) {
		case nil:
			delete(m, k)
		case string:
			if x == "" {
				delete(m, k)
			}
		case bool:
			if !x {
				delete(m, k)
			}
		case float64:
			if x == 0 {
				delete(m, k)
			}
		case map[string]any:
			prune(x)
			if len(x) == 0 {
				delete(m, k)
			}
		case []any:
			for _, e := range x {
				if em, okm := e.(map[string]any); okm {
					prune(em)
				}
			}
			if len(x) == 0 {
				delete(m, k)
			}
		}
	}
}

// Option is one choice a select offers.
type Option struct{ Value, Text string }

// Options lists the options of the view's element with this action_id,
// option groups flattened, in order; nil when there is no such element.
func (v View) Options(actionID string) []Option {
	var blocks []any
	if json.Unmarshal(v.Blocks, &blocks) != nil {
		return nil
	}
	_, el, ok := findElement(blocks, actionID)
	if !ok {
		return nil
	}
	var out []Option
	for _, o := range elementOptions(el) {
		out = append(out, Option{Value: str(o, "value"), Text: textOf(o["text"])})
	}
	return out
}

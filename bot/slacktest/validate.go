package slacktest

import (
	"fmt"
	"regexp"
	"unicode/utf8"
)

// Block Kit limits Slack enforces, checked on every view and message so a
// bot that breaks them fails here the way it would in Slack.

type surface int

const (
	surfaceMessage surface = iota
	surfaceModal
	surfaceHome
)

type validator struct {
	msgs     []string
	surface  surface
	blockIDs map[string]bool
}

func (v *validator) errf(ptr, format string, args ...any) {
	v.msgs = append(v.msgs, fmt.Sprintf("[ERROR] %s [json-pointer:%s]", fmt.Sprintf(format, args...), ptr))
}

// ValidateMessage checks a message's notification text and blocks, as
// decoded from JSON, against the limits Slack enforces on chat.postMessage
// and chat.update. It returns Slack's error messages, none when Slack would
// take the message, so a renderer's test can hold its output to them
// without a server.
func ValidateMessage(text string, blocks []any) []string {
	v := &validator{surface: surfaceMessage, blockIDs: map[string]bool{}}
	if utf8.RuneCountInString(text) > maxMessageText {
		v.errf("/text", "must be less than %d characters", maxMessageText+1)
	}
	v.blocks(blocks, "/blocks")
	return v.msgs
}

// ValidateView checks a modal or App Home view, as decoded from JSON,
// against the limits Slack enforces on views.open, views.update, views.push
// and views.publish; kind is "modal" or "home". It returns Slack's error
// messages, none when Slack would take the view.
func ValidateView(spec map[string]any, kind string) []string {
	v := &validator{surface: surfaceModal, blockIDs: map[string]bool{}}
	if kind == "home" {
		v.surface = surfaceHome
	}
	if t := str(spec, "type"); t != kind {
		v.errf("/view/type", "must be %q, not %q", kind, t)
		return v.msgs
	}
	if kind == "modal" {
		if spec["title"] == nil {
			v.errf("/view/title", "missing required field: title")
		} else {
			v.text(spec["title"], "/view/title", 24, true)
		}
		if spec["close"] != nil {
			v.text(spec["close"], "/view/close", 24, true)
		}
		if spec["submit"] != nil {
			v.text(spec["submit"], "/view/submit", 24, true)
		}
	}
	if n := utf8.RuneCountInString(str(spec, "private_metadata")); n > 3000 {
		v.errf("/view/private_metadata", "must be less than 3001 characters")
	}
	if n := utf8.RuneCountInString(str(spec, "callback_id")); n > 255 {
		v.errf("/view/callback_id", "must be less than 256 characters")
	}
	if n := utf8.RuneCountInString(str(spec, "external_id")); n > 255 {
		v.errf("/view/external_id", "must be less than 256 characters")
	}
	blocks, isList := spec["blocks"].([]any)
	if !isList {
		v.errf("/view/blocks", "missing required field: blocks")
		return v.msgs
	}
	v.blocks(blocks, "/view/blocks")
	if kind == "modal" && spec["submit"] == nil && len(inputBlockIDs(blocks)) > 0 {
		v.errf("/view/submit", "must provide submit when the view has input blocks")
	}
	return v.msgs
}

// validateBlocks checks a message's or view's blocks.
func validateBlocks(blocks []any, s surface, ptr string) []string {
	v := &validator{surface: s, blockIDs: map[string]bool{}}
	v.blocks(blocks, ptr)
	return v.msgs
}

func (v *validator) blocks(blocks []any, ptr string) {
	limit := 100
	if v.surface == surfaceMessage {
		limit = 50
	}
	if len(blocks) > limit {
		v.errf(ptr, "no more than %d items allowed", limit)
	}
	for i, b := range blocks {
		bm, isObj := b.(map[string]any)
		p := fmt.Sprintf("%s/%d", ptr, i)
		if !isObj {
			v.errf(p, "must be an object")
			continue
		}
		v.block(bm, p)
	}
}

func (v *validator) block(b map[string]any, p string) {
	if id, has := b["block_id"]; has {
		s, isStr := id.(string)
		switch {
		case !isStr:
			v.errf(p+"/block_id", "must be a string")
		case utf8.RuneCountInString(s) > 255:
			v.errf(p+"/block_id", "must be less than 256 characters")
		case v.blockIDs[s]:
			v.errf(p+"/block_id", "duplicate block_id %q", s)
		default:
			v.blockIDs[s] = true
		}
	}
	switch t := str(b, "type"); t {
	case "":
		v.errf(p, "missing required field: type")
	case "section":
		if b["text"] == nil && b["fields"] == nil {
			v.errf(p, "must provide text or fields")
		}
		if b["text"] != nil {
			v.textRange(b["text"], p+"/text", 1, 3000, false)
		}
		if f, has := b["fields"]; has {
			fields, _ := f.([]any)
			if len(fields) > 10 {
				v.errf(p+"/fields", "no more than 10 items allowed")
			}
			for i, fl := range fields {
				v.textRange(fl, fmt.Sprintf("%s/fields/%d", p, i), 1, 2000, false)
			}
		}
		if a, isObj := b["accessory"].(map[string]any); isObj {
			v.element(a, p+"/accessory")
		}
	case "header":
		v.text(b["text"], p+"/text", 150, true)
	case "actions":
		els, _ := b["elements"].([]any)
		if len(els) == 0 {
			v.errf(p+"/elements", "must have at least 1 item")
		}
		if len(els) > 25 {
			v.errf(p+"/elements", "no more than 25 items allowed")
		}
		seen := map[string]bool{}
		for i, e := range els {
			em, isObj := e.(map[string]any)
			ep := fmt.Sprintf("%s/elements/%d", p, i)
			if !isObj {
				v.errf(ep, "must be an object")
				continue
			}
			if id := str(em, "action_id"); id != "" {
				if seen[id] {
					v.errf(ep+"/action_id", "duplicate action_id %q in the block", id)
				}
				seen[id] = true
			}
			v.element(em, ep)
		}
	case "context":
		els, _ := b["elements"].([]any)
		if len(els) == 0 {
			v.errf(p+"/elements", "must have at least 1 item")
		}
		if len(els) > 10 {
			v.errf(p+"/elements", "no more than 10 items allowed")
		}
		for i, e := range els {
			if em, isObj := e.(map[string]any); isObj && str(em, "type") != "image" {
				v.textRange(em, fmt.Sprintf("%s/elements/%d", p, i), 1, 3000, false)
			}
		}
	case "input":
		v.text(b["label"], p+"/label", 2000, true)
		if b["hint"] != nil {
			v.text(b["hint"], p+"/hint", 2000, true)
		}
		el, isObj := b["element"].(map[string]any)
		if !isObj {
			v.errf(p+"/element", "missing required field: element")
			return
		}
		v.element(el, p+"/element")
	case "image":
		if str(b, "image_url") == "" && b["slack_file"] == nil {
			v.errf(p+"/image_url", "missing required field: image_url")
		}
		if utf8.RuneCountInString(str(b, "alt_text")) > 2000 {
			v.errf(p+"/alt_text", "must be less than 2001 characters")
		}
	}
}

var (
	dateRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	timeRE = regexp.MustCompile(`^\d{2}:\d{2}$`)
)

func (v *validator) element(el map[string]any, p string) {
	if utf8.RuneCountInString(str(el, "action_id")) > 255 {
		v.errf(p+"/action_id", "must be less than 256 characters")
	}
	if el["placeholder"] != nil {
		v.text(el["placeholder"], p+"/placeholder", 150, true)
	}
	if el["confirm"] != nil {
		v.confirm(el["confirm"], p+"/confirm")
	}
	switch t := str(el, "type"); t {
	case "":
		v.errf(p, "missing required field: type")
	case "button":
		v.text(el["text"], p+"/text", 75, true)
		if utf8.RuneCountInString(str(el, "value")) > 2000 {
			v.errf(p+"/value", "must be less than 2001 characters")
		}
		if utf8.RuneCountInString(str(el, "url")) > 3000 {
			v.errf(p+"/url", "must be less than 3001 characters")
		}
		if s := str(el, "style"); s != "" && s != "primary" && s != "danger" {
			v.errf(p+"/style", "must be one of primary, danger")
		}
	case "static_select", "multi_static_select":
		_, hasOpts := el["options"]
		_, hasGroups := el["option_groups"]
		if hasOpts == hasGroups {
			v.errf(p, "must provide exactly one of options or option_groups")
		}
		if hasOpts {
			v.options(el["options"], p+"/options", 100, true)
		}
		if hasGroups {
			groups, _ := el["option_groups"].([]any)
			if len(groups) > 100 {
				v.errf(p+"/option_groups", "no more than 100 items allowed")
			}
			for i, g := range groups {
				gm, _ := g.(map[string]any)
				gp := fmt.Sprintf("%s/option_groups/%d", p, i)
				v.text(gm["label"], gp+"/label", 75, true)
				v.options(gm["options"], gp+"/options", 100, true)
			}
		}
		v.initialOptions(el, p)
	case "external_select", "multi_external_select":
		if f, isNum := el["min_query_length"].(float64); isNum && f < 0 {
			v.errf(p+"/min_query_length", "must be at least 0")
		}
	case "overflow":
		v.options(el["options"], p+"/options", 5, true)
	case "radio_buttons", "checkboxes":
		v.options(el["options"], p+"/options", 10, false)
		v.initialOptions(el, p)
	case "plain_text_input":
		maxLen := 3000
		if f, isNum := el["max_length"].(float64); isNum {
			if f < 1 || f > 3000 {
				v.errf(p+"/max_length", "must be between 1 and 3000")
			} else {
				maxLen = int(f)
			}
		}
		if f, isNum := el["min_length"].(float64); isNum && (f < 0 || f > 3000 || int(f) > maxLen) {
			v.errf(p+"/min_length", "must be between 0 and max_length")
		}
		if utf8.RuneCountInString(str(el, "initial_value")) > maxLen {
			v.errf(p+"/initial_value", "must be no longer than max_length")
		}
	case "datepicker":
		if d := str(el, "initial_date"); d != "" && !dateRE.MatchString(d) {
			v.errf(p+"/initial_date", "must be YYYY-MM-DD")
		}
	case "timepicker":
		if d := str(el, "initial_time"); d != "" && !timeRE.MatchString(d) {
			v.errf(p+"/initial_time", "must be HH:mm")
		}
	}
}

func (v *validator) options(list any, p string, limit int, plainOnly bool) {
	opts, isList := list.([]any)
	if !isList || len(opts) == 0 {
		v.errf(p, "must have at least 1 item")
		return
	}
	if len(opts) > limit {
		v.errf(p, "no more than %d items allowed", limit)
	}
	for i, o := range opts {
		om, _ := o.(map[string]any)
		op := fmt.Sprintf("%s/%d", p, i)
		v.text(om["text"], op+"/text", 75, plainOnly)
		switch n := utf8.RuneCountInString(str(om, "value")); {
		case n == 0:
			v.errf(op+"/value", "missing required field: value")
		case n > 150:
			v.errf(op+"/value", "must be less than 151 characters")
		}
		if om["description"] != nil {
			v.text(om["description"], op+"/description", 75, plainOnly)
		}
	}
}

// confirm checks the dialog that asks before an element acts.
func (v *validator) confirm(c any, p string) {
	cm, isObj := c.(map[string]any)
	if !isObj {
		v.errf(p, "must be an object")
		return
	}
	v.text(cm["title"], p+"/title", 100, true)
	v.text(cm["text"], p+"/text", 300, false)
	v.text(cm["confirm"], p+"/confirm", 30, true)
	v.text(cm["deny"], p+"/deny", 30, true)
}

// initialOptions checks that initial options are among the options, exactly.
func (v *validator) initialOptions(el map[string]any, p string) {
	offered := elementOptions(el)
	match := func(o any) bool {
		om, _ := o.(map[string]any)
		for _, c := range offered {
			if str(c, "value") == str(om, "value") && textOf(c["text"]) == textOf(om["text"]) {
				return true
			}
		}
		return false
	}
	if io := el["initial_option"]; io != nil && !match(io) {
		v.errf(p+"/initial_option", "must exactly match one of the provided options")
	}
	list, _ := el["initial_options"].([]any)
	for i, io := range list {
		if !match(io) {
			v.errf(fmt.Sprintf("%s/initial_options/%d", p, i), "must exactly match one of the provided options")
		}
	}
}

// text checks a text object of at most max characters.
func (v *validator) text(t any, p string, max int, plainOnly bool) {
	v.textRange(t, p, 1, max, plainOnly)
}

func (v *validator) textRange(t any, p string, minLen, max int, plainOnly bool) {
	tm, isObj := t.(map[string]any)
	if !isObj {
		v.errf(p, "must be a text object")
		return
	}
	switch typ := str(tm, "type"); {
	case typ == "plain_text":
	case typ == "mrkdwn" && !plainOnly:
	case typ == "mrkdwn":
		v.errf(p+"/type", "must be plain_text")
	default:
		v.errf(p+"/type", "must be plain_text or mrkdwn")
	}
	n := utf8.RuneCountInString(str(tm, "text"))
	if n < minLen {
		v.errf(p+"/text", "must be more than %d characters", minLen-1)
	}
	if n > max {
		v.errf(p+"/text", "must be less than %d characters", max+1)
	}
}

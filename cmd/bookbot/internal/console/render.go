// Package console shows bookbot's Slack surfaces as text and lets a person
// work them from a terminal: it is the face of `bookbot demo`. Rendering is
// pure (Block Kit JSON in, text and numbered controls out); the Console
// type drives the local Slack stand-in the way a person's clicks would.
package console

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Control is something a person can use: a button, a select or an input,
// numbered in the order it was shown.
type Control struct {
	N        int
	Kind     string // "button", "select" or "input"
	Type     string // the Block Kit element type
	ActionID string
	BlockID  string
	Label    string
	Value    string   // a button's value
	Options  []Option // a select's options
	Confirm  string   // a button's confirmation question, if any
	// Dispatch is set for selects Slack reports at once (in actions blocks,
	// or inputs with dispatch_action); other inputs go with the submission.
	Dispatch bool
	Where    Where
}

// Option is one choice of a select.
type Option struct{ Text, Value string }

// Where says which surface a control is on.
type Where struct {
	Message int    // index into the stand-in's messages, -1 for a view
	ViewID  string // "" for a message
}

type block = map[string]any

// Renderer turns blocks into text, numbering controls from First.
type Renderer struct {
	Zone     *time.Location   // for Slack date tokens
	Now      func() time.Time // for "Today" in date tokens; nil means time.Now
	Controls []Control
	// Typed holds what the person entered but has not submitted yet, by
	// action_id; it shows over the view's state.
	Typed map[string]string
}

// Blocks renders a surface's blocks. state holds a view's current values
// (block_id → action_id → value) and errs the input errors shown on it.
func (r *Renderer) Blocks(raw json.RawMessage, where Where, state map[string]map[string]string, errs map[string]string) string {
	var blocks []block
	if len(raw) == 0 || json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var b strings.Builder
	for _, bl := range blocks {
		r.block(&b, bl, where, state, errs)
	}
	return strings.TrimRight(b.String(), "\n")
}

func (r *Renderer) block(b *strings.Builder, bl block, where Where, state map[string]map[string]string, errs map[string]string) {
	id, _ := bl["block_id"].(string)
	switch bl["type"] {
	case "header":
		fmt.Fprintf(b, "== %s ==\n", r.text(bl["text"]))
	case "divider":
		b.WriteString("----\n")
	case "section":
		if t := r.text(bl["text"]); t != "" {
			b.WriteString(t + "\n")
		}
		if fields, ok := bl["fields"].([]any); ok {
			for _, f := range fields {
				b.WriteString("  " + r.text(f) + "\n")
			}
		}
		if acc, ok := bl["accessory"].(map[string]any); ok {
			r.element(b, acc, id, "", false, where, state)
		}
	case "context":
		var parts []string
		for _, e := range list(bl["elements"]) {
			if t := r.text(e); t != "" {
				parts = append(parts, t)
			}
		}
		if len(parts) > 0 {
			b.WriteString("  (" + strings.Join(parts, " · ") + ")\n")
		}
	case "actions":
		for _, e := range list(bl["elements"]) {
			if el, ok := e.(map[string]any); ok {
				r.element(b, el, id, "", true, where, state)
			}
		}
	case "input":
		label := r.text(bl["label"])
		if opt, _ := bl["optional"].(bool); opt {
			label += " (optional)"
		}
		dispatch, _ := bl["dispatch_action"].(bool)
		if el, ok := bl["element"].(map[string]any); ok {
			r.element(b, el, id, label, dispatch, where, state)
		}
		if h := r.text(bl["hint"]); h != "" {
			b.WriteString("      " + h + "\n")
		}
		if e := errs[id]; e != "" {
			b.WriteString("      ! " + e + "\n")
		}
	case "image":
		fmt.Fprintf(b, "[image: %s]\n", str(bl["alt_text"]))
	default:
		if t := r.text(bl["text"]); t != "" {
			b.WriteString(t + "\n")
		}
	}
}

// element renders one interactive element and numbers it.
func (r *Renderer) element(b *strings.Builder, el map[string]any, blockID, label string, dispatch bool, where Where, state map[string]map[string]string) {
	typ := str(el["type"])
	c := Control{N: len(r.Controls) + 1, Type: typ, ActionID: str(el["action_id"]), BlockID: blockID, Label: label, Dispatch: dispatch, Where: where}
	current := state[blockID][c.ActionID]
	if t, ok := r.Typed[c.ActionID]; ok && where.ViewID != "" {
		current = t
	}
	switch {
	case typ == "button":
		c.Kind, c.Value = "button", str(el["value"])
		c.Label = r.text(el["text"])
		if conf, ok := el["confirm"].(map[string]any); ok {
			c.Confirm = strings.TrimSpace(r.text(conf["title"]) + ": " + r.text(conf["text"]))
		}
		fmt.Fprintf(b, "  [%d] %s\n", c.N, c.Label)
	case typ == "overflow":
		// A row's "⋯" menu: its choices on one line, chosen with :pick.
		c.Kind = "select"
		c.Options = options(r, el)
		var items []string
		for i, o := range c.Options {
			items = append(items, fmt.Sprintf("%d) %s", i+1, o.Text))
		}
		fmt.Fprintf(b, "  [%d] ⋯ %s\n", c.N, strings.Join(items, "  "))
	case strings.HasSuffix(typ, "_select") || typ == "radio_buttons":
		c.Kind = "select"
		c.Options = options(r, el)
		if current == "" {
			if init, ok := el["initial_option"].(map[string]any); ok {
				current = str(init["value"])
			}
		}
		name := label
		if name == "" {
			name = r.text(el["placeholder"])
		}
		shown := "nothing chosen"
		for _, o := range c.Options {
			if o.Value == current {
				shown = o.Text
			}
		}
		if current != "" && shown == "nothing chosen" {
			shown = current
		}
		fmt.Fprintf(b, "  [%d] %s: %s\n", c.N, name, shown)
		if typ == "external_select" {
			b.WriteString("      type to search: :set " + strconv.Itoa(c.N) + " <text>\n")
		} else if len(c.Options) > 0 {
			b.WriteString(wrapOptions(c.Options))
		}
	default: // text inputs, pickers
		c.Kind = "input"
		if current == "" {
			current = str(el["initial_value"])
		}
		if current == "" {
			current = "_"
		}
		name := label
		if name == "" {
			name = c.ActionID
		}
		fmt.Fprintf(b, "  [%d] %s: %s\n", c.N, name, current)
	}
	r.Controls = append(r.Controls, c)
}

// options lists a select's options, option groups flattened.
func options(r *Renderer, el map[string]any) []Option {
	var out []Option
	add := func(opts any) {
		for _, o := range list(opts) {
			if m, ok := o.(map[string]any); ok {
				out = append(out, Option{Text: r.text(m["text"]), Value: str(m["value"])})
			}
		}
	}
	add(el["options"])
	for _, g := range list(el["option_groups"]) {
		if m, ok := g.(map[string]any); ok {
			add(m["options"])
		}
	}
	return out
}

// wrapOptions numbers options in lines of about 76 characters.
func wrapOptions(opts []Option) string {
	var b strings.Builder
	line := "     "
	for i, o := range opts {
		item := fmt.Sprintf(" %d) %s", i+1, o.Text)
		if len(line)+len(item) > 76 && line != "     " {
			b.WriteString(line + "\n")
			line = "     "
		}
		line += item
	}
	return b.String() + line + "\n"
}

var (
	dateToken  = regexp.MustCompile(`<!date\^(\d+)\^([^|>]*)(?:\|([^>]*))?>`)
	linkToken  = regexp.MustCompile(`<((?:https?|mailto):[^|>]+)(?:\|([^>]+))?>`)
	userToken  = regexp.MustCompile(`<@([A-Z0-9]+)(?:\|[^>]*)?>`)
	otherToken = regexp.MustCompile(`<!([a-z]+)(?:\|[^>]*)?>`)
	emoji      = strings.NewReplacer(
		":white_check_mark:", "✅", ":x:", "❌", ":warning:", "⚠️", ":hourglass_flowing_sand:", "⏳",
		":stopwatch:", "⏱", ":calendar:", "📅", ":wave:", "👋", ":no_entry:", "⛔", ":mag:", "🔍",
		":spiral_calendar_pad:", "🗓", ":information_source:", "ℹ️", ":lock:", "🔒",
		":wastebasket:", "🗑", ":ok_hand:", "👌", ":arrow_right:", "➡️", ":alarm_clock:", "⏰",
		":envelope:", "✉️",
	)
	entities = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")
)

// text renders a text object (or a context element) as a person reads it.
func (r *Renderer) text(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	s := str(m["text"])
	if m["type"] == "image" {
		s = "[" + str(m["alt_text"]) + "]"
	}
	return r.Mrkdwn(s)
}

// Mrkdwn resolves Slack's tokens: dates in the reader's zone, links,
// mentions, emoji codes and HTML entities.
func (r *Renderer) Mrkdwn(s string) string {
	zone := r.Zone
	if zone == nil {
		zone = time.UTC
	}
	s = dateToken.ReplaceAllStringFunc(s, func(tok string) string {
		m := dateToken.FindStringSubmatch(tok)
		sec, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			return m[3]
		}
		return r.date(time.Unix(sec, 0).In(zone), m[2], m[3])
	})
	s = linkToken.ReplaceAllStringFunc(s, func(tok string) string {
		m := linkToken.FindStringSubmatch(tok)
		if m[2] != "" {
			return m[2] + " (" + m[1] + ")"
		}
		return m[1]
	})
	s = userToken.ReplaceAllString(s, "@$1")
	s = otherToken.ReplaceAllString(s, "@$1")
	return emoji.Replace(entities.Replace(s))
}

// date renders a date token's format as a Slack client set to 24-hour
// time does, with bookbot's own day layout for the dates; a format it does
// not know shows the fallback, as Slack does.
func (r *Renderer) date(t time.Time, format, fallback string) string {
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	pretty := t.Format("Mon 2 Jan")
	n := now().In(t.Location())
	switch day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC); day.Sub(time.Date(n.Year(), n.Month(), n.Day(), 0, 0, 0, 0, time.UTC)) / (24 * time.Hour) {
	case -1:
		pretty = "Yesterday"
	case 0:
		pretty = "Today"
	case 1:
		pretty = "Tomorrow"
	}
	out := strings.NewReplacer("{date_short_pretty}", pretty, "{date_short}", t.Format("Mon 2 Jan"), "{time}", t.Format("15:04")).Replace(format)
	if strings.Contains(out, "{") {
		return fallback
	}
	return out
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

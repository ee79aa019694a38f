package oracle_test

import (
	"strings"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/internal/blockkit"
)

// How a person works the bot: through the Slack stand-in only, as Slack's
// client would let them.

// slash types /booking text as user.
func (w *world) slash(user, text string) {
	ctx, cancel := w.ctx()
	defer cancel()
	if _, err := w.sl.SendSlashCommand(ctx, slacktest.SlashCommand{Command: "/booking", Text: text, UserID: user}); err != nil {
		w.fatal("/booking %s: %v", text, err)
	}
}

// press delivers a button press or a choice.
func (w *world) press(payload slack.InteractionCallback) {
	ctx, cancel := w.ctx()
	defer cancel()
	if _, err := w.sl.SendInteraction(ctx, payload); err != nil {
		w.fatal("pressing %s: %v", payload.ActionCallback.BlockActions[0].ActionID, err)
	}
}

// until waits until cond holds, looking again at every change the Slack
// stand-in records.
func (w *world) until(what string, cond func() bool) {
	ctx, cancel := w.ctx()
	defer cancel()
	for {
		changed := w.sl.Changed()
		if cond() {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			w.fatal("waiting for %s: %v", what, ctx.Err())
		}
	}
}

// stepMessages are the messages of this step so far.
func (w *world) stepMessages() []slacktest.Message { return w.sl.MessagesFrom(w.msgs) }

// form waits for a booking form opened for user in this step, not one
// of seen, once it shows its times (or why there are none).
func (w *world) form(user string, seen map[string]bool) slacktest.View {
	var found slacktest.View
	w.until("the booking form of "+user, func() bool {
		for _, v := range w.sl.ViewsFrom(w.views) {
			if seen[v.ID] || v.TriggerUser != user || v.CallbackID != "booking_create" || v.Closed {
				continue
			}
			if ready(v) {
				found = v
				return true
			}
		}
		return false
	})
	return found
}

// ready reports whether a booking form is done loading.
func ready(v slacktest.View) bool {
	text := textOf(v.Blocks)
	if strings.Contains(text, "Loading") {
		return false
	}
	return len(elements(v.Blocks, "slot")) > 0 || strings.Contains(text, "No free slots") || strings.Contains(text, ":warning:")
}

// view is the current state of a view.
func (w *world) view(id string) slacktest.View {
	v, ok := w.sl.View(id)
	if !ok {
		w.fatal("view %s: %v", id, errNoView)
	}
	return v
}

// Block Kit, read as a person reads it (internal/blockkit).
var (
	decode   = blockkit.Decode
	textOf   = blockkit.Text
	elements = blockkit.Elements
)

// optionValues are a select's option values, in order.
func optionValues(el map[string]any) []string {
	var out []string
	add := func(list any) {
		l, _ := list.([]any)
		for _, o := range l {
			om, _ := o.(map[string]any)
			if v, _ := om["value"].(string); v != "" {
				out = append(out, v)
			}
		}
	}
	add(el["options"])
	groups, _ := el["option_groups"].([]any)
	for _, g := range groups {
		gm, _ := g.(map[string]any)
		add(gm["options"])
	}
	return out
}

// buttonValue is the value of the first button with actionID, "" when
// there is none.
func buttonValue(raw []byte, actionID string) string {
	for _, el := range elements(raw, actionID) {
		if t, _ := el["type"].(string); t == "button" {
			v, _ := el["value"].(string)
			return v
		}
	}
	return ""
}

// slotBlock is the block ID of a form's time select.
func slotBlock(v slacktest.View) string {
	blocks, _ := decode(v.Blocks).([]any)
	for _, b := range blocks {
		bm, _ := b.(map[string]any)
		el, _ := bm["element"].(map[string]any)
		if id, _ := el["action_id"].(string); id == "slot" {
			s, _ := bm["block_id"].(string)
			return s
		}
	}
	return ""
}

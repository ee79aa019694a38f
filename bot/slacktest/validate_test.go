package slacktest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

// decoded is v as the server reads it from the wire.
func decoded[T any](t *testing.T, v any) T {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestValidateMessage(t *testing.T) {
	confirmed := func(text string) slack.Block {
		btn := slack.NewButtonBlockElement("cancel", "bk_1", plain("Cancel"))
		btn.Confirm = slack.NewConfirmationBlockObject(plain("Cancel this booking?"), plain(text), plain("Cancel booking"), plain("Keep it"))
		return slack.NewActionBlock("", btn)
	}
	overflow := func(value string) slack.Block {
		return slack.NewActionBlock("", slack.NewOverflowBlockElement("more", slack.NewOptionBlockObject(value, plain("Book again"), nil)))
	}
	for _, c := range []struct {
		name   string
		text   string
		blocks []slack.Block
		want   string // a part of the only message, or "" for none
	}{
		{"valid", "Cancel?", []slack.Block{confirmed("This cannot be undone."), overflow("again")}, ""},
		{"text too long", strings.Repeat("x", maxMessageText+1), nil, "/text"},
		{"confirm text too long", "Cancel?", []slack.Block{confirmed(strings.Repeat("x", 301))}, "/blocks/0/elements/0/confirm/text/text"},
		{"option without a value", "More", []slack.Block{overflow("")}, "/blocks/0/elements/0/options/0/value"},
	} {
		msgs := ValidateMessage(c.text, decoded[[]any](t, c.blocks))
		switch {
		case c.want == "" && len(msgs) > 0:
			t.Errorf("%s: %q, want none", c.name, msgs)
		case c.want != "" && (len(msgs) != 1 || !strings.Contains(msgs[0], c.want)):
			t.Errorf("%s: %q, want one at %s", c.name, msgs, c.want)
		}
	}
}

func TestValidateView(t *testing.T) {
	blocks := []slack.Block{slack.NewSectionBlock(plain("Upcoming bookings"), nil, nil)}
	modal := slack.ModalViewRequest{Type: slack.VTModal, Title: plain("Book"), Blocks: slack.Blocks{BlockSet: blocks}}
	if msgs := ValidateView(decoded[map[string]any](t, modal), "modal"); len(msgs) > 0 {
		t.Errorf("valid modal: %q", msgs)
	}
	modal.Title = plain(strings.Repeat("x", 25))
	if msgs := ValidateView(decoded[map[string]any](t, modal), "modal"); len(msgs) != 1 || !strings.Contains(msgs[0], "/view/title/text") {
		t.Errorf("long title: %q", msgs)
	}
	for range 100 {
		blocks = append(blocks, slack.NewDividerBlock())
	}
	home := slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: blocks}}
	if msgs := ValidateView(decoded[map[string]any](t, home), "home"); len(msgs) != 1 || !strings.Contains(msgs[0], "/view/blocks]") {
		t.Errorf("101 blocks: %q", msgs)
	}
}

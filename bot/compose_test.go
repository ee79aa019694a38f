package bot_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bookbot/bookbot/bot/slacktest"
)

// openCompose chooses "Offer times…" on m as user and returns the form
// once its event types are there.
func (h *harness) openCompose(user string, m slacktest.Message) slacktest.View {
	h.t.Helper()
	h.interact(slacktest.MessageShortcut(user, "offer_times", m))
	return h.waitView("the offer form", func(v slacktest.View) bool {
		return v.TriggerUser == user && v.CallbackID == "offer_compose" && len(elements(v.Blocks, "event_type")) == 1
	})
}

// "Offer times…" on Grace's message: the form picks her, and its card,
// posted by bookbot in the conversation, is booked by her; the card then
// says so, with the booking's ID in its metadata.
func TestOfferTimesFromAMessagesMenu(t *testing.T) {
	t.Parallel()
	h := linkHarness(t)
	msg := h.say(grace, "Can we talk this week?")
	form := h.openCompose(ada, msg)
	if st := form.State["people"]["people"]; len(st.SelectedUsers) != 1 || st.SelectedUsers[0] != grace {
		t.Fatalf("the form's people: %+v", st)
	}
	h.submit(ada, form.ID, map[string]string{"event_type": "intro-call"})
	h.waitView("the form's outcome", func(v slacktest.View) bool {
		return v.ID == form.ID && strings.Contains(textOf(v.Blocks), "Posted")
	})
	card := h.waitMessage("the card", func(m slacktest.Message) bool {
		return m.Kind == "message" && m.Channel == "C0TEAM" && strings.HasPrefix(m.Text, "Offer")
	})
	if !strings.Contains(card.Text, "for <@UGRACE>") {
		t.Errorf("the card is not for Grace: %q", card.Text)
	}

	times := values(elements(card.Blocks, "offer_slot"))
	h.pick(eve, card, times[0])
	h.reply(eve, "This offer is for <@UGRACE>")
	h.pick(grace, card, times[0])
	gf := h.waitView("Grace's form", func(v slacktest.View) bool { return v.TriggerUser == grace && v.CallbackID == "offer_book" })
	h.submit(grace, gf.ID, map[string]string{})
	booked := h.waitMessage("the card, booked", func(m slacktest.Message) bool {
		return m.Kind == "update" && m.TS == card.TS && strings.HasPrefix(m.Text, "Booked")
	})
	id := bookedFor(h, "grace@example.com")
	var meta struct {
		EventType    string         `json:"event_type"`
		EventPayload map[string]any `json:"event_payload"`
	}
	if err := json.Unmarshal(booked.Metadata, &meta); err != nil || meta.EventType != "bookbot_offer_booked" || meta.EventPayload["booking_id"] != id {
		t.Errorf("the booked card's metadata %s, %v; want bookbot_offer_booked with %s", booked.Metadata, err, id)
	}
	if n := len(h.requests("POST /bookings")); n != 1 {
		t.Errorf("%d POST /bookings, want 1", n)
	}
	h.dm(ada, "Booked from your offer")
}

// Where bookbot is not a member it cannot post: the form says so and
// what to do, nothing is posted, and the offer is withdrawn.
func TestOfferTimesWhereBookbotCannotPost(t *testing.T) {
	t.Parallel()
	h := linkHarness(t)
	h.sl.AddChannel(slacktest.Channel{ID: "C0QUIET", Name: "quiet", Members: []string{ada, grace}})
	msg, err := h.sl.Say(h.ctx(), grace, "C0QUIET", "let's talk")
	if err != nil {
		t.Fatal(err)
	}
	form := h.openCompose(ada, msg)
	h.submit(ada, form.ID, map[string]string{"event_type": "intro-call"})
	out := h.waitView("the form's outcome", func(v slacktest.View) bool {
		return v.ID == form.ID && strings.Contains(textOf(v.Blocks), "Not posted")
	})
	if txt := textOf(out.Blocks); !strings.Contains(txt, "not a member of this conversation") || !strings.Contains(txt, "/invite @bookbot") {
		t.Errorf("the outcome does not say why and what to do:\n%s", txt)
	}
	h.drain()
	for _, m := range h.sl.Messages() {
		if m.Kind == "message" && strings.HasPrefix(m.Text, "Offer") {
			t.Errorf("a card was posted: %q in %s", m.Text, m.Channel)
		}
	}
}

// The form checks what cannot work before anything is made; someone not
// on the allow-list is refused at the menu.
func TestOfferTimesChecksAndRefuses(t *testing.T) {
	t.Parallel()
	h := linkHarness(t)
	msg := h.say(grace, "hello")
	form := h.openCompose(ada, msg)
	ack := h.submit(ada, form.ID, map[string]string{"event_type": "intro-call", "count": "2"})
	if !strings.Contains(string(ack.Payload), "Each person books one meeting") {
		t.Errorf("two meetings for one person: ack %s", ack.Payload)
	}
	h.interact(slacktest.MessageShortcut(eve, "offer_times", msg))
	h.reply(eve, "only open to the people")
	h.drain()
	if n := len(h.requests("")); n > 1 { // the event types of Ada's form
		t.Errorf("%d booking API calls", n)
	}
}

package bot

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/slack-go/slack"
)

// A form's metadata, signed, fits Slack's 3000 characters whatever the
// note: a note that fits is kept, one that does not is the one thing
// dropped.
func TestSignedMetadataFits(t *testing.T) {
	s := newSigner(ViewKey("xapp-test"))
	base := modalMeta{Zone: "America/Argentina/ComodRivadavia", Event: strings.Repeat("e", 150), Start: "2026-03-23T10:15:00.000000001+05:45",
		Name: strings.Repeat("<", 200), Email: strings.Repeat("&", 64) + "@example.com", TZ: "America/Argentina/ComodRivadavia", Review: 1 << 62}
	notes := []string{"", "short", strings.Repeat("é", 2000), strings.Repeat("<", 2000), strings.Repeat("\U0001F600", 1000)}
	for n := range 2001 { // every length, so one ends right at the limit
		notes = append(notes, strings.Repeat("a", n))
	}
	for _, note := range notes {
		m := base
		m.Note = note
		signed := s.sign(callbackBooking, m.encode())
		if n := utf8.RuneCountInString(signed); n > maxMetadata {
			t.Errorf("a note of %d characters: metadata of %d characters", utf8.RuneCountInString(note), n)
		}
		meta, ok := s.open(callbackBooking, signed)
		if !ok {
			t.Fatalf("bookbot's own signature refused: %q", signed)
		}
		if note == "short" && !strings.Contains(meta, `"o":"short"`) {
			t.Errorf("a short note was dropped: %s", meta)
		}
	}
}

// A booking form's signed metadata is not an offer's: the signature
// covers the view's callback_id, and the two kinds' JSON fields share
// names (a note reads as an offer's ID).
func TestSignatureIsBoundToItsView(t *testing.T) {
	b := &Bot{signer: newSigner(ViewKey("xapp-test"))}
	form := b.signer.view(slack.ModalViewRequest{CallbackID: callbackBooking,
		PrivateMetadata: modalMeta{Note: "heqpch52vrox4pgq", Start: "2026-03-23T10:15:00Z", Zone: "UTC"}.encode()})
	if _, ok := b.metaOf(slack.View{CallbackID: callbackBooking, PrivateMetadata: form.PrivateMetadata}); !ok {
		t.Fatal("a booking form's own metadata refused")
	}
	for _, cb := range []string{callbackOfferBook, callbackOfferTimes} {
		if m, ok := b.offerMetaOf(slack.View{CallbackID: cb, PrivateMetadata: form.PrivateMetadata}); ok {
			t.Errorf("a booking form's metadata verifies as %s's: %+v", cb, m)
		}
	}
	card := b.signer.view(slack.ModalViewRequest{CallbackID: callbackOfferBook, PrivateMetadata: offerMeta{Offer: "heqpch52vrox4pgq"}.encode()})
	if _, ok := b.offerMetaOf(slack.View{CallbackID: callbackOfferBook, PrivateMetadata: card.PrivateMetadata}); !ok {
		t.Error("an offer form's own metadata refused")
	}
	if _, ok := b.metaOf(slack.View{CallbackID: callbackBooking, PrivateMetadata: card.PrivateMetadata}); ok {
		t.Error("an offer form's metadata verifies as a booking form's")
	}
}

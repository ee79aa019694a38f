package bot

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/booking"
)

// A booking form's private_metadata carries bookbot's signature, and a
// submission is booked only when its metadata carries it: Slack delivers
// submissions only for views the app opened, but one that did not come
// from a form bookbot made (a view bookbot never opened, metadata changed
// on its way) must book nothing.
//
// The signature is HMAC-SHA256 over the view's callback_id and the
// metadata, so a form's metadata is good for its own kind of form only (a
// booking form's and an offer's share JSON field names), under a key every
// replica holds (a form opened on one may be submitted to another), and
// nobody outside: ViewKey derives it from the Slack app-level token.

// ViewKey is the key booking forms are signed with, derived from the Slack
// app-level token: every replica has that token, and whoever has it can
// receive bookbot's envelopes anyway. The token itself keys nothing but
// this derivation, and a new token makes forms opened under the old one
// ask to be opened again.
func ViewKey(appToken string) []byte {
	m := hmac.New(sha256.New, []byte(appToken))
	m.Write([]byte("bookbot booking form private_metadata v1"))
	return m.Sum(nil)
}

// signatureLen is the length of a signature and the separator after it.
var signatureLen = base64.RawURLEncoding.EncodedLen(sha256.Size) + 1

// maxMetadata is the most private_metadata Slack keeps (characters; the
// metadata is measured in bytes, which are never fewer).
const maxMetadata = 3000

// signer signs and checks booking forms' metadata.
type signer struct{ key []byte }

// newSigner signs with key; without one, with a key of this process's
// own, which only a single process can use.
func newSigner(key []byte) signer {
	if len(key) == 0 {
		key = make([]byte, 32)
		_, _ = rand.Read(key) // never fails (crypto/rand)
	}
	return signer{key: key}
}

func (s signer) mac(callbackID, meta string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(callbackID))
	m.Write([]byte{0}) // a callback_id holds no NUL
	m.Write([]byte(meta))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// sign is meta, for a view of callbackID, with its signature in front.
func (s signer) sign(callbackID, meta string) string { return s.mac(callbackID, meta) + "." + meta }

// open is the metadata signed, and whether the signature is bookbot's for
// a view of callbackID.
func (s signer) open(callbackID, signed string) (string, bool) {
	if len(signed) < signatureLen || signed[signatureLen-1] != '.' {
		return "", false
	}
	meta := signed[signatureLen:]
	if !hmac.Equal([]byte(signed[:signatureLen-1]), []byte(s.mac(callbackID, meta))) {
		return "", false
	}
	return meta, true
}

// view signs the metadata of a booking form and of an offer's modals; other
// views are left as they are.
func (s signer) view(v slack.ModalViewRequest) slack.ModalViewRequest {
	switch v.CallbackID {
	case callbackBooking, callbackOfferBook, callbackOfferMore, callbackOfferCompose:
		v.PrivateMetadata = s.sign(v.CallbackID, v.PrivateMetadata)
	}
	return v
}

// What a booking form carries, in its private_metadata and in the
// buttons and options that open it again.

// modalMeta travels in the modal's private_metadata (≤ 3000 characters).
type modalMeta struct {
	Zone  string `json:"z,omitempty"` // the requester's zone
	Event string `json:"e,omitempty"`
	Day   string `json:"d,omitempty"`
	// What was asked, for "pick another time" and "check again".
	Start string `json:"s,omitempty"` // raw slot start
	Name  string `json:"n,omitempty"`
	Email string `json:"m,omitempty"`
	TZ    string `json:"t,omitempty"`
	Note  string `json:"o,omitempty"`
	// Review is the journal entry a person is asked to check, when "Check
	// again" was pressed on its review report: the answer keeps its
	// "Mark as checked".
	Review uint64 `json:"q,omitempty"`
	// Cal is the calendar (calendarID) the form's times were read from:
	// it books on that one or not at all.
	Cal string `json:"k,omitempty"`
}

// requester is the requester's zone, UTC when the metadata names none
// bookbot knows.
func (m modalMeta) requester() *time.Location {
	if loc, err := booking.LoadZone(m.Zone); err == nil {
		return loc
	}
	return time.UTC
}

// encode is m as a form's private_metadata, leaving room for its
// signature.
func (m modalMeta) encode() string {
	b, _ := json.Marshal(m)
	if len(b) > maxMetadata-signatureLen { // a long note does not fit; it is the one thing dropped
		m.Note = ""
		b, _ = json.Marshal(m)
	}
	return string(b)
}

// metaOf is the metadata of a booking form, and whether bookbot signed it;
// unsigned, it is empty.
func (b *Bot) metaOf(v slack.View) (modalMeta, bool) {
	s, ok := b.signer.open(v.CallbackID, v.PrivateMetadata)
	if !ok {
		return modalMeta{}, false
	}
	var m modalMeta
	_ = json.Unmarshal([]byte(s), &m)
	return m, true
}

// recheckValue is what "Check again" needs: event, start and email.
func recheckValue(m modalMeta) string {
	return buttonMeta(modalMeta{Event: m.Event, Start: m.Start, Email: m.Email, Name: m.Name, Zone: m.Zone, TZ: m.TZ, Review: m.Review})
}

// pickValue is what "Pick another time" needs to open the form again as
// it was, but for the time: the note too, when it fits.
func pickValue(m modalMeta) string {
	m.Start = ""
	return formValue(m)
}

// formValue is the form's data as a button's value, the note dropped when
// it does not fit.
func formValue(m modalMeta) string {
	m.Day = ""
	if v := buttonMeta(m); v != "" {
		return v
	}
	m.Note = ""
	return buttonMeta(m)
}

// buttonMeta is m as a button's value, "" when it is longer than the
// 2000 characters a value may hold (a cut would not decode).
func buttonMeta(m modalMeta) string {
	b, _ := json.Marshal(m)
	if utf8.RuneCount(b) > 2000 {
		return ""
	}
	return string(b)
}

// pickedMeta reads a "Pick another time" or "Edit and try again" value:
// the form's data, or, from a message sent before the form's data
// travelled with it, the event slug.
func pickedMeta(value string) modalMeta {
	var m modalMeta
	if json.Unmarshal([]byte(value), &m) != nil {
		return modalMeta{Event: value}
	}
	m.Day, m.Cal = "", "" // a button's value is not signed; the form reads its calendar afresh
	return m
}

// bookAgainMeta is what booking the attendee again fills in the form: the
// event and the attendee, not the time.
func bookAgainMeta(b booking.Booking) modalMeta {
	return modalMeta{Event: b.EventType.String, Name: b.BookerName.String, Email: b.BookerEmail.String}
}

// slotValue is what a book_slot option carries: the event and the slot's
// start exactly as the API sent it.
func slotValue(s booking.Slot) string { return s.EventType() + " " + s.RawStart() }

func parseSlotValue(v string) (eventType, rawStart string, ok bool) {
	eventType, rawStart, ok = strings.Cut(v, " ")
	return eventType, rawStart, ok && eventType != "" && rawStart != ""
}

// inputs are the values a booking form holds, the booking form's and an
// offer's alike: their inputs have the contract's action IDs.
type inputs struct {
	event, day, slot, name, email, tz, note string
}

// readInputs reads a form's inputs from its view's state.
func readInputs(v slack.View) inputs {
	var in inputs
	if v.State == nil {
		return in
	}
	for blockID, actions := range v.State.Values {
		for actionID, a := range actions {
			switch actionID {
			case actionEventType:
				in.event = a.SelectedOption.Value
			case actionSlotDay:
				in.day = a.SelectedOption.Value
			case actionSlot:
				if strings.HasPrefix(blockID, actionSlot) {
					in.slot = a.SelectedOption.Value
				}
			case actionName:
				in.name = strings.TrimSpace(a.Value)
			case actionEmail:
				in.email = strings.TrimSpace(a.Value)
			case actionBookerTZ:
				in.tz = a.SelectedOption.Value
				if in.tz == "" {
					in.tz = strings.TrimSpace(a.Value)
				}
			case actionNote:
				in.note = a.Value
			}
		}
	}
	return in
}

package bot

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"

	"github.com/slack-go/slack"
)

// A booking form's private_metadata carries bookbot's signature, and a
// submission is booked only when its metadata carries it: Slack delivers
// submissions only for views the app opened, but one that did not come
// from a form bookbot made (a view bookbot never opened, metadata changed
// on its way) must book nothing.
//
// The signature is HMAC-SHA256 over the metadata, under a key every
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

func (s signer) mac(meta string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(meta))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// sign is meta with its signature in front.
func (s signer) sign(meta string) string { return s.mac(meta) + "." + meta }

// open is the metadata signed, and whether the signature is bookbot's.
func (s signer) open(signed string) (string, bool) {
	if len(signed) < signatureLen || signed[signatureLen-1] != '.' {
		return "", false
	}
	meta := signed[signatureLen:]
	if !hmac.Equal([]byte(signed[:signatureLen-1]), []byte(s.mac(meta))) {
		return "", false
	}
	return meta, true
}

// view signs a booking form's metadata; other views are left as they are.
func (s signer) view(v slack.ModalViewRequest) slack.ModalViewRequest {
	if v.CallbackID == callbackBooking {
		v.PrivateMetadata = s.sign(v.PrivateMetadata)
	}
	return v
}

// signedViews signs every booking form bookbot opens or updates, whichever
// flow builds it.
type signedViews struct {
	SlackAPI
	signer signer
}

func (s signedViews) OpenViewContext(ctx context.Context, triggerID string, v slack.ModalViewRequest) (*slack.ViewResponse, error) {
	return s.SlackAPI.OpenViewContext(ctx, triggerID, s.signer.view(v))
}

func (s signedViews) UpdateViewContext(ctx context.Context, v slack.ModalViewRequest, externalID, hash, viewID string) (*slack.ViewResponse, error) {
	return s.SlackAPI.UpdateViewContext(ctx, s.signer.view(v), externalID, hash, viewID)
}

package outbox

import (
	"context"
	"errors"
	"time"
)

// Message is a Slack message: where a post is.
type Message struct {
	Channel string `json:"channel"`
	TS      string `json:"ts"`
}

// Found is a message a Finder found.
type Found struct {
	Message
	Burst bool // one message of many posts at once, not any one's own
}

// Finder looks in Slack for the messages bookbot posted, by what their
// metadata carries: the key (the digest's), or the ID of a notice's key.
// It settles a claim whose post's answer never came: the process posting
// it died, or the answer was lost on the way. Package bot implements it
// once, for every kind.
type Finder interface {
	// Find returns, of the keys given, those a message carries that
	// bookbot posted at or after since: in channel, and in each of
	// threads. It fails with an error matching ErrCannotLook when no look
	// can succeed.
	Find(ctx context.Context, channel string, threads []Message, keys []string, since time.Time) (map[string]Found, error)
}

// ErrCannotLook wraps a Finder's error when no look can succeed (bookbot
// may not read the channel's history): such a post stays unsettled and is
// not posted again.
var ErrCannotLook = errors.New("cannot look for posts in Slack")

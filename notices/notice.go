package notices

import (
	"context"
	"errors"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/journal"
	"github.com/bookbot/bookbot/outbox"
)

// ErrNotPosted wraps a Publisher's error when Slack certainly did not post
// the notice (it answered with an error, a 429 included): the claim is
// released and the notice is tried again on the next read. Any other error may have posted
// it: with a Finder, Slack's history settles it later; without one, it is
// not tried again.
var ErrNotPosted = errors.New("notice not posted")

// ErrCannotLook wraps a Finder's error when no look can succeed (bookbot
// may not read the channel's history): such a notice stays unsettled and
// is not posted again.
var ErrCannotLook = outbox.ErrCannotLook

// Notice is a change as people are told of it.
type Notice struct {
	Change
	Title string // the event type's title; its slug when unknown
	By    *By    // who made it through bookbot; nil when it was made elsewhere
	// EmailCheck is bookbot's create of this booking (event, start and
	// attendee) that the service answered 409 with body status 200, when a
	// New booking made elsewhere follows one: the attendee confirmed by
	// email, with the link the service mailed them. nil otherwise.
	EmailCheck *By
	// Unclear is bookbot's write that may have made the change, when
	// nothing made it through bookbot for sure: a create of a New
	// booking's event, start and attendee, or a cancel of a Cancelled
	// booking, whose answer was unclear and that the list could not settle
	// then. It is not credited (By), nor is the change a stranger's. nil
	// otherwise.
	Unclear *By
	// Since is when the list was read before the read that found it: a
	// burst says "since" then. Zero when not known.
	Since time.Time
	// Claim is its key's ID, which its message carries so that Finder can
	// find it.
	Claim string
}

// By is the person who asked bookbot for a booking or a cancel.
type By struct {
	Actor string // Slack user ID; "" when not recorded
	At    time.Time
}

// Publisher puts notices in Slack.
type Publisher interface {
	// Post posts a notice as a message of its own.
	Post(ctx context.Context, channel string, n Notice) (Message, error)
	// Reply posts a notice in the thread of the booking's first notice.
	Reply(ctx context.Context, thread Message, n Notice) (Message, error)
	// Update rewrites the booking's first notice to show it as it is now.
	Update(ctx context.Context, thread Message, n Notice) error
	// Burst posts many notices at once, compactly (a summary, with the
	// list of them in its thread), in as few messages as Slack's limits
	// allow, in order. It returns what became of each
	// notice it sent, in the order of ns: it stops at the first message
	// not surely posted, and the notices after that one's, not sent, have
	// no entry.
	Burst(ctx context.Context, channel string, ns []Notice) []Sent
}

// Sent is what became of a notice a Publisher sent.
type Sent struct {
	Message Message // where it was posted, when Err is nil
	// Err is nil when the notice was posted, wraps ErrNotPosted when Slack
	// certainly did not post it, and is any other error when it may have.
	Err error
}

// Finder finds notices in Slack by their claims (their keys' IDs, which
// their messages carry). It settles a claim whose post's answer never
// came: the process posting it died, or the answer was lost on the way.
type Finder = outbox.Finder

// Found is a message a Finder found.
type Found = outbox.Found

// Alerter tells the people who look after bookbot that notices are
// paused, and that they resumed.
type Alerter interface {
	Alert(ctx context.Context, text string) error
}

// Lister reads the bookings list; the booking client shares one read
// among everyone asking at once, so the watcher adds no load of its own.
type Lister interface {
	Bookings(ctx context.Context) ([]booking.Booking, error)
	EventTypes(ctx context.Context) ([]booking.EventType, error)
}

// Writes are the writes bookbot made, to tell its own from strangers'.
type Writes interface {
	Since(t time.Time) ([]journal.Entry, error)
}

// Metrics is what the watcher reports.
type Metrics interface {
	NoticePoll(ok bool, at time.Time)
	Notice(kind Kind, result string) // result: posted, maybe_posted, failed
}

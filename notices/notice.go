package notices

import (
	"context"
	"errors"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/journal"
)

// ErrNotPosted wraps a Publisher's error when Slack certainly did not post
// the notice (it answered with an error): the claim is released and the
// notice is tried again on the next read. Any other error may have posted
// it, and it is not tried again.
var ErrNotPosted = errors.New("notice not posted")

// Notice is a change as people are told of it.
type Notice struct {
	Change
	Title string // the event type's title; its slug when unknown
	By    *By    // who made it through bookbot; nil when it was made elsewhere
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
	// Burst posts many notices at once, compactly.
	Burst(ctx context.Context, channel string, ns []Notice) (Message, error)
}

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

package notices

import (
	"context"
	"time"
)

// Store keeps what the watcher must not forget across restarts: the last
// good read of the list, and every notice it posted. The embedded store
// (BoltStore) implements it; a shared database can too.
type Store interface {
	// Last returns the snapshot saved last; ok is false before the first.
	Last(ctx context.Context) (s Snapshot, ok bool, err error)
	// SaveLast replaces the saved snapshot.
	SaveLast(ctx context.Context, s Snapshot) error

	// Claim records, before its notice is posted, that the notice of a
	// change is being posted. It returns false when the change was claimed
	// before (posted, or possibly posted by a process that died): a change
	// is announced at most once.
	Claim(ctx context.Context, k Key, at time.Time) (bool, error)
	// Posted records where the notice of a claimed change lives in Slack.
	// With root set it becomes the booking's thread: where later notices
	// about the booking update it in place and reply.
	Posted(ctx context.Context, k Key, m Message, root bool) error
	// Release forgets a claim whose notice Slack certainly did not post,
	// so the next read tries it again. It fails when a message was recorded
	// for it, and does nothing when there is no claim.
	Release(ctx context.Context, k Key) error
	// Thread returns the booking's thread; ok is false when none was
	// recorded.
	Thread(ctx context.Context, bookingID string) (m Message, ok bool, err error)

	// Prune forgets the claims and threads of bookings whose latest end
	// (over their claims and thread) is before cutoff.
	Prune(ctx context.Context, cutoff time.Time) error
}

// Key names a change exactly: the same change seen again after a restart
// has the same key, and the same booking moved to the same time twice has
// two. Times compare as instants; End is not part of the identity.
type Key struct {
	BookingID string
	Kind      Kind
	Start     time.Time // the booking's start (for Cancelled, as last listed)
	End       time.Time // the booking's end, for pruning
	Since     time.Time // the At of the snapshot the change was found against
}

// Message is a Slack message a notice lives in.
type Message struct {
	Channel string `json:"channel"`
	TS      string `json:"ts"`
}

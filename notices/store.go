package notices

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/outbox"
)

// Store keeps what the watcher must not forget across restarts: the last
// good read of the list, and every notice it posted. The embedded store
// (store/bolt) and store/pg implement it, their claims in the outbox
// (Claims).
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
	// Unsettled returns when k was claimed, if its claim has no message
	// recorded: a post whose answer never came, or one a process that
	// died was making. ok is false when k holds no claim or a settled one.
	Unsettled(ctx context.Context, k Key) (at time.Time, ok bool, err error)
	// Thread returns the booking's thread; ok is false when none was
	// recorded.
	Thread(ctx context.Context, bookingID string) (m Message, ok bool, err error)

	// Prune forgets the claims of keys whose End is before cutoff, and the
	// threads of bookings whose latest end posted in them is.
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

// String names the key in errors.
func (k Key) String() string {
	return fmt.Sprintf("%s notice of booking %q starting %s, against the list of %s",
		k.Kind, k.BookingID, k.Start.UTC().Format(time.RFC3339Nano), k.Since.UTC().Format(time.RFC3339Nano))
}

// ID names the key in Slack: the claim a notice's message carries in its
// metadata, by which the message is found again when the answer to its
// post never came. Equal keys have equal IDs.
func (k Key) ID() string {
	sum := sha256.Sum256(k.Bytes())
	return hex.EncodeToString(sum[:16])
}

// Bytes is the key's identity: the booking ID and the kind, each preceded
// by its length, then the start and since as instants. Two keys give the
// same bytes exactly when the IDs, kinds and instants are equal: the zone
// a time is in does not count, nor does End.
func (k Key) Bytes() []byte {
	b := make([]byte, 0, 4+len(k.BookingID)+4+len(k.Kind)+2*12)
	b = binary.BigEndian.AppendUint32(b, uint32(len(k.BookingID)))
	b = append(b, k.BookingID...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(k.Kind)))
	b = append(b, k.Kind...)
	b = appendInstant(b, k.Start)
	return appendInstant(b, k.Since)
}

// appendInstant appends t's seconds since the epoch (sign bit flipped, so
// the bytes sort as the instants do) and its nanoseconds: exact for any
// time, where UnixNano is not.
func appendInstant(b []byte, t time.Time) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(t.Unix())^(1<<63))
	return binary.BigEndian.AppendUint32(b, uint32(t.Nanosecond()))
}

// Message is a Slack message a notice lives in.
type Message = outbox.Message

// EncodeSnapshot is s as every Store keeps it: JSON of its times, its
// bookings and its unseen ones (Unseen and Beyond).
func EncodeSnapshot(s Snapshot) ([]byte, error) {
	w := wireSnapshot{At: s.At, ServiceAt: s.ServiceAt, Of: s.Of, Bookings: make([]wireBooking, len(s.Bookings))}
	for i, b := range s.Bookings {
		w.Bookings[i] = wireBooking(b)
	}
	for _, b := range s.Unseen {
		w.Unseen = append(w.Unseen, wireBooking(b))
	}
	for _, b := range s.Beyond {
		w.Beyond = append(w.Beyond, wireBooking(b))
	}
	return json.Marshal(w)
}

// DecodeSnapshot reads a snapshot EncodeSnapshot wrote. Its times are the
// saved instants, without their zone names or monotonic readings. One
// saved before snapshots kept the service's time has none, nor unseen
// bookings one saved before they were kept; one saved before Beyond was
// kept has those in Unseen, as said of.
func DecodeSnapshot(v []byte) (Snapshot, error) {
	var w wireSnapshot
	if err := json.Unmarshal(v, &w); err != nil {
		return Snapshot{}, err
	}
	s := Snapshot{At: w.At, ServiceAt: w.ServiceAt, Of: w.Of, Bookings: make([]booking.Booking, len(w.Bookings))}
	for i, b := range w.Bookings {
		s.Bookings[i] = booking.Booking(b)
	}
	for _, b := range w.Unseen {
		s.Unseen = append(s.Unseen, booking.Booking(b))
	}
	for _, b := range w.Beyond {
		s.Beyond = append(s.Beyond, booking.Booking(b))
	}
	return s, nil
}

// wireSnapshot is a Snapshot as stored.
type wireSnapshot struct {
	At        time.Time     `json:"at"`
	ServiceAt time.Time     `json:"service_at,omitzero"`
	Of        string        `json:"of,omitempty"`
	Bookings  []wireBooking `json:"bookings"`
	Unseen    []wireBooking `json:"unseen,omitempty"`
	Beyond    []wireBooking `json:"beyond,omitempty"`
}

// wireBooking is a booking.Booking as stored. It converts to and from
// booking.Booking, so a field added there fails to compile here rather
// than go unsaved.
type wireBooking struct {
	ID          string             `json:"id"`
	Start       time.Time          `json:"start"`
	End         time.Time          `json:"end"`
	Status      string             `json:"status"`
	BookerName  booking.NullString `json:"booker_name"`
	BookerEmail booking.NullString `json:"booker_email"`
	EventType   booking.NullString `json:"event_type"`
}

// Outbox is the key's key in the outbox: its identity (Bytes), in hex,
// after the kind "notice/".
func (k Key) Outbox() string { return outboxPrefix + hex.EncodeToString(k.Bytes()) }

const outboxPrefix = "notice/"

// Claims are the claims of a Store (Claim, Release, Unsettled, and the
// claims' part of Posted and Prune) kept in an outbox. A store embeds them
// and keeps the bookings' threads itself. A claim is kept until its key's
// End: a change is found against one snapshot, so once the booking ended
// the same key does not come back.
type Claims struct{ Box outbox.Store }

// Claim claims k's change (see Store).
func (c Claims) Claim(ctx context.Context, k Key, at time.Time) (bool, error) {
	ok, err := c.Box.Claim(ctx, k.Outbox(), at, k.End)
	if err != nil {
		return false, fmt.Errorf("claim of the %s: %w", k, err)
	}
	return ok, nil
}

// PostedClaim records m on k's claim, failing when there is none.
func (c Claims) PostedClaim(ctx context.Context, k Key, m Message) error {
	if err := c.Box.Posted(ctx, k.Outbox(), outbox.Post{Channel: m.Channel, TS: m.TS}); err != nil {
		return fmt.Errorf("the %s: %w", k, err)
	}
	return nil
}

// Release forgets k's claim unless a message was recorded on it (see
// Store).
func (c Claims) Release(ctx context.Context, k Key) error {
	if err := c.Box.Release(ctx, k.Outbox()); err != nil {
		return fmt.Errorf("the %s: %w", k, err)
	}
	return nil
}

// Unsettled returns when k was claimed, if no message is recorded on it.
func (c Claims) Unsettled(ctx context.Context, k Key) (time.Time, bool, error) {
	return outbox.Unsettled(ctx, c.Box, k.Outbox())
}

// PruneClaims forgets the claims of keys whose End is before cutoff.
func (c Claims) PruneClaims(ctx context.Context, cutoff time.Time) error {
	return c.Box.Prune(ctx, outboxPrefix, cutoff)
}

// Package journal is bookbot's durable record of writes to the booking API.
// Every create and cancel is written down before its request is sent (who
// asked, what, when) and its outcome after, so a write whose process died
// in flight is never forgotten: on start it is reconciled against the
// bookings list and put in front of a person.
//
// The package holds what an entry is and means, and the Store interface;
// the embedded store (store/bolt) and store/pg keep the entries.
//
// It keeps only what settling a write and auditing it need: who asked,
// the event, the slot, the attendee's name and email, the outcome. The
// attendee's note and zone are never written.
package journal

import (
	"errors"
	"time"

	"github.com/bookbot/bookbot/booking"
)

// Entry is one write: the intent, and once known, its outcome and review.
type Entry struct {
	Seq   uint64    `json:"seq"`
	At    time.Time `json:"at"`              // recorded, just before the request was sent
	Owner string    `json:"owner,omitempty"` // the process that sent it (the store's owner)
	booking.Write

	// Outcome is empty while the write is in flight, and stays empty when
	// the process died before the answer was recorded.
	Outcome    booking.Outcome `json:"outcome,omitempty"`
	DoneAt     time.Time       `json:"done_at,omitzero"`
	Created    string          `json:"created,omitempty"`   // the booking a create made (or that the list shows)
	Verified   bool            `json:"verified,omitempty"`  // the bookings list agrees
	Recovered  bool            `json:"recovered,omitempty"` // settled after a restart, by listing
	RetryAfter time.Duration   `json:"retry_after,omitempty"`
	Held       bool            `json:"held,omitempty"`     // RateLimited by bookbot's own guard: nothing was sent
	Conflict   string          `json:"conflict,omitempty"` // NotBooked: the kind of 409 (booking.Result.Conflict)
	Reason     booking.Reason  `json:"reason,omitempty"`   // why, where the outcome alone does not say (booking.Result.Reason)
	Seen       []string        `json:"seen,omitempty"`

	// NeedsReview marks an outcome a person must look at: unclear, or
	// recovered after a restart. Reported says it was put in front of one.
	NeedsReview bool      `json:"needs_review,omitempty"`
	ReportedAt  time.Time `json:"reported_at,omitzero"`
	ReportedTo  string    `json:"reported_to,omitempty"`
	ReviewedAt  time.Time `json:"reviewed_at,omitzero"`
	ReviewedBy  string    `json:"reviewed_by,omitempty"`
}

// Open reports whether the write has no recorded outcome.
func (e Entry) Open() bool { return e.Outcome == "" }

// AwaitingReview reports whether the entry needs a person and none has
// marked it checked.
func (e Entry) AwaitingReview() bool { return e.NeedsReview && e.ReviewedAt.IsZero() }

// ErrNoEntry means the journal does not hold the entry: it was pruned (see
// Store.Prune), or never existed.
var ErrNoEntry = errors.New("no such entry")

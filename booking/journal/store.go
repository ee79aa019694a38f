package journal

import (
	"cmp"
	"context"
	"crypto/sha256"
	"strings"
	"time"

	"github.com/bookbot/bookbot/booking"
)

// Store is the write journal as bookbot uses it. The embedded store
// (store/bolt) keeps it in its file under the state directory; store/pg
// keeps it in PostgreSQL, for replicas that share one database. Both keep
// the semantics that journaltest checks.
//
// A store is made for one process, its owner: the entries it begins carry
// that owner, and its Recover leaves them alone (store/bolt's Journal.Owner,
// store/pg's Journal(owner)).
type Store interface {
	// Begin records a write before it is sent; the returned function
	// records its outcome, and fails when the store cannot record it now
	// (it may be called again). A create that an earlier one stands in the
	// way of is refused with a *booking.DuplicateError and not recorded:
	// the check and the record are one step, for every handle on the
	// store.
	Begin(ctx context.Context, w booking.Write) (func(*booking.Result) error, error)
	// Finish records the outcome of entry seq; recovered says it was
	// settled after a restart.
	Finish(seq uint64, res *booking.Result, recovered bool) (Entry, error)
	// Settle records res, an outcome the bookings list showed, for entry
	// seq if it has none yet (it is in flight, or its outcome was lost),
	// as Finish would; an entry with an outcome is left as it is.
	Settle(ctx context.Context, seq uint64, res *booking.Result) error
	// Recover settles, with settle, every write whose outcome was never
	// recorded and that another owner (or none) began, and returns the
	// entries it settled.
	Recover(ctx context.Context, settle func(context.Context, booking.Write) *booking.Result) ([]Entry, error)
	// Unreported lists the entries that need a person and have not yet
	// been put in front of one, oldest first.
	Unreported() ([]Entry, error)
	// MarkReported records that entry seq was reported, and where.
	MarkReported(seq uint64, to string) error
	// MarkReviewed records that a person checked entry seq; checking it
	// again keeps the first record.
	MarkReviewed(seq uint64, by string) (Entry, error)
	// AwaitingReview counts the entries that need a person and that no one
	// has marked checked.
	AwaitingReview() (int, error)
	// Entry returns entry seq; ErrNoEntry when there is none (never
	// recorded, or pruned).
	Entry(seq uint64) (Entry, error)
	// Since lists the entries recorded at or after t, oldest first.
	Since(t time.Time) ([]Entry, error)
	// Prune deletes the entries recorded before t that need no one any
	// more, and returns how many went.
	Prune(t time.Time) (int, error)
}

var _ booking.Journal = Store(nil)

// The rules below are what an entry means, shared by every Store so that
// they agree: a store keeps entries and finds them, these say what to do
// with them.

// CreateKey is the key a store finds a create's earlier ones of the same
// event, start and attendee email under: the start as an instant, however
// the API wrote it, and the email in any case, hashed (16 bytes), so an
// index of it holds no address. ok is false for a write no earlier create
// can stand in the way of, and that stands in the way of none: a cancel, a
// dry run, a start that does not parse.
func CreateKey(w booking.Write) (key []byte, ok bool) {
	if w.Op != booking.OpCreate || w.DryRun {
		return nil, false
	}
	start, err := time.Parse(time.RFC3339Nano, w.Start)
	if err != nil {
		return nil, false
	}
	id := w.EventType + "\x00" + start.UTC().Format(time.RFC3339Nano) + "\x00" + strings.ToLower(w.Email)
	// A person's own calendar: its event types are not the owner's. By
	// its ID, so that a create through one key of a calendar finds one
	// through another (older entries have only the label).
	if cal := cmp.Or(w.CalendarID, w.Calendar); cal != "" && cal != booking.Owner {
		id = cal + "\x00" + id
	}
	sum := sha256.Sum256([]byte(id))
	return sum[:16], true
}

// CalendarOf is the ID of the calendar e went to (booking.Write's
// CalendarID): booking.Owner for the owner's, whichever key it went
// through; "" for a person's own calendar in an entry older than IDs,
// which only its label (e.Calendar, the person) tells.
func (e Entry) CalendarOf() string {
	switch {
	case e.CalendarID != "":
		return e.CalendarID
	case e.Calendar == "" || e.Calendar == booking.Owner:
		return booking.Owner
	}
	return ""
}

// Stands reports whether e, an earlier create of the same event, start
// and attendee as another, stands in the way of that one: it is in flight,
// confirmed and not cancelled through bookbot since, or unclear and not
// checked by a person. cancelled says whether the journal holds a cancel
// of e.Created whose outcome is Cancelled (see CancelledBooking). Of
// several earlier creates that stand, the newest is the Prior.
func (e Entry) Stands(cancelled bool) bool {
	switch e.Outcome {
	case "":
		return true
	case booking.Confirmed:
		return e.Created == "" || !cancelled
	case booking.Unknown, booking.ProbablyNotBooked:
		return e.AwaitingReview()
	}
	return false
}

// Prior is e as a *booking.DuplicateError names it.
func (e Entry) Prior() booking.Prior {
	return booking.Prior{Seq: e.Seq, Actor: e.Actor, At: e.At, Outcome: e.Outcome, BookingID: e.Created}
}

// CancelledBooking is the booking a cancel entry cancelled through bookbot
// (outcome Cancelled, not a dry run); ok is false for any other entry.
func (e Entry) CancelledBooking() (id string, ok bool) {
	if e.Op == booking.OpCancel && e.Outcome == booking.Cancelled && !e.DryRun {
		return e.BookingID, true
	}
	return "", false
}

// NeedsAttention reports whether the entry is in flight or awaits a
// person's review: what Recover, Unreported and AwaitingReview look among,
// and what Prune keeps however old.
func (e Entry) NeedsAttention() bool { return e.Open() || e.AwaitingReview() }

// Settle records res as the entry's outcome, known at at. recovered says
// it was settled after a restart, by listing; such an entry, an unclear
// one, and a create booked as the service answered where the list could
// not check it (beyond what it shows, or unread: the API asks that a
// person look at it) need a person, unless it was a dry run.
func (e *Entry) Settle(res *booking.Result, recovered bool, at time.Time) {
	e.Outcome, e.DoneAt = res.Outcome, at
	e.Verified, e.Recovered, e.RetryAfter = res.Verified, recovered, res.RetryAfter
	e.Held, e.Conflict, e.Reason, e.Seen = res.Held, res.Conflict(), res.Reason, res.Seen
	switch {
	case e.Op != booking.OpCreate:
	case res.Booking != nil:
		e.Created = res.Booking.ID
	case res.Receipt != nil:
		e.Created = res.Receipt.ID
	}
	unchecked := e.Op == booking.OpCreate && (res.Reason == booking.ReasonBeyondList || res.Reason == booking.ReasonListUnread)
	e.NeedsReview = !e.DryRun && (res.NeedsHuman() || recovered || unchecked)
}

// LeftBehind reports whether Recover by owner settles e: it is in flight,
// and another owner began it, or one that gave no name.
func (e Entry) LeftBehind(owner string) bool {
	return e.Open() && (e.Owner == "" || e.Owner != owner)
}

// Reconcile is the outcome Recover records for e, left behind: a dry run
// sent nothing; any other write is settled by settle, which lists.
func Reconcile(ctx context.Context, e Entry, settle func(context.Context, booking.Write) *booking.Result) *booking.Result {
	if e.DryRun {
		return &booking.Result{Outcome: booking.DryRun, Seen: []string{"dry run: nothing was sent"}}
	}
	return settle(ctx, e.Write)
}

package booking

import (
	"context"
	"fmt"
	"time"
)

// Journal keeps a durable record of every write: Begin is called before a
// create or cancel is sent, and the function it returns with the outcome.
// When Begin fails, the write is not sent: a write bookbot could lose track
// of is worse than one that was refused. When finish fails, the write was
// sent all the same: the client calls it again later, until it records
// the outcome. (A journal.Store implements it.)
//
// Begin also stands between an attendee and a second booking: it refuses a
// create, with a *DuplicateError, while the journal holds one for the same
// event, start and attendee email that is in flight, confirmed (and not
// cancelled since), or unclear and not yet checked by a person. The check
// and the record are one step, so two creates cannot both pass it.
type Journal interface {
	Begin(ctx context.Context, w Write) (finish func(*Result) error, err error)
	// Settle records res, an outcome the bookings list showed, for entry
	// seq, if the entry has none yet; one with an outcome is left as it is.
	Settle(ctx context.Context, seq uint64, res *Result) error
}

// DuplicateError is a journal's refusal to begin a create that an earlier
// one stands in the way of.
type DuplicateError struct {
	Prior Prior
}

func (e *DuplicateError) Error() string {
	what := "confirmed"
	switch {
	case e.Prior.Outcome == "":
		what = "still in flight"
	case e.Prior.Outcome != Confirmed:
		what = "unclear and not yet checked by a person"
	}
	return fmt.Sprintf("an earlier booking of the same event, start and attendee (journal entry %d) is %s", e.Prior.Seq, what)
}

// Prior is an earlier create of the same event, start and attendee email,
// as the journal recorded it.
type Prior struct {
	Seq       uint64
	Actor     string    // who asked for it; "" when not known
	At        time.Time // when it was sent
	Outcome   Outcome   // "" while it is in flight
	BookingID string    // the booking it made, when known
}

// Observer is told about every request the client makes and every write's
// outcome. Its methods must be quick; bookbot's metrics implement it.
type Observer interface {
	// Request reports one HTTP exchange; status is 0 when none came back.
	Request(endpoint string, status int, took time.Duration)
	// Wrote reports the outcome of a create or cancel, including those held
	// back by the guard and dry runs.
	Wrote(op Op, res *Result)
	// ClockSkew reports the booking API's clock minus bookbot's, each time
	// an answer's Date header tells it (see Client.Skew).
	ClockSkew(d time.Duration)
}

// WithJournal records every create and cancel in j.
func WithJournal(j Journal) Option { return func(c *Client) { c.journal = j } }

// WithObserver reports requests and write outcomes to o.
func WithObserver(o Observer) Option { return func(c *Client) { c.observer = o } }

// WithDryRun makes creates and cancels send nothing: reads still go to the
// API, and a write's Result (outcome DryRun) says what would have been sent.
func WithDryRun() Option { return func(c *Client) { c.dryRun = true } }

// Op names a write.
type Op string

const (
	OpCreate Op = "create"
	OpCancel Op = "cancel"
)

// Write is a create or cancel about to be sent, as the journal records it.
type Write struct {
	Op    Op     `json:"op"`
	Actor string `json:"actor,omitempty"` // who asked (a Slack user ID), from WithActor
	// Calendar is whose calendar it went to (WithCalendar): "owner", a
	// Slack user ID, or "" in entries older than own calendars (the
	// owner's). CalendarID names that calendar, the same whoever
	// connected its key: "owner", a person's calendar ID (a keyed hash of
	// the key), or "" in entries older than it. Never the key.
	Calendar   string `json:"calendar,omitempty"`
	CalendarID string `json:"calendar_id,omitempty"`
	// Create: the slot as the API gave it, and the attendee. Cancel: the
	// booking's event and start as last listed, when it was.
	EventType string `json:"event_type,omitempty"`
	Start     string `json:"start,omitempty"`
	End       string `json:"end,omitempty"`
	// Only what settling and auditing need is kept: the attendee's note
	// and zone went to the API and stay there.
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
	// Cancel: the booking, and what the list showed of it before the
	// cancel was sent (its start, event and attendee name), when it did.
	BookingID string `json:"booking_id,omitempty"`
	DryRun    bool   `json:"dry_run,omitempty"`
}

type actorKey struct{}

// WithActor returns a context that says who asked for the writes made with
// it, for the journal.
func WithActor(ctx context.Context, actor string) context.Context {
	return context.WithValue(ctx, actorKey{}, actor)
}

// WithListed returns ctx, in which a cancel calls fn once it has read the
// bookings list and before it sends anything, with the booking as the list
// shows it, nil when it does not (or could not be read): a person is shown
// what is being cancelled while the booking service works, at no read of
// its own.
func WithListed(ctx context.Context, fn func(*Booking)) context.Context {
	return context.WithValue(ctx, listedKey{}, fn)
}

type listedKey struct{}

func listedHook(ctx context.Context) func(*Booking) {
	fn, _ := ctx.Value(listedKey{}).(func(*Booking))
	return fn
}

func actorOf(ctx context.Context) string {
	s, _ := ctx.Value(actorKey{}).(string)
	return s
}

// nopObserver stands in when no Observer is set.
type nopObserver struct{}

func (nopObserver) Request(string, int, time.Duration) {}
func (nopObserver) Wrote(Op, *Result)                  {}
func (nopObserver) ClockSkew(time.Duration)            {}

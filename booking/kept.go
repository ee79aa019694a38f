package booking

import (
	"context"
	"time"
)

// TypeStore keeps the event type each booking of a calendar was last
// listed with, until the booking ends: the service lists a booking its
// attendee rescheduled with event_type null from then on, so a process
// that never listed it before (one started since, another replica) would
// otherwise not know it. A record is the calendar's label (WithCalendar)
// and the booking's ID: booking IDs are the service's, unique across its
// accounts, and the label keeps one calendar's records from ever filling
// another's list all the same. store/bolt and store/pg implement it;
// typestoretest is the suite both pass.
type TypeStore interface {
	// Types returns what is kept for each of ids on calendar, by booking
	// ID; an ID with nothing kept is absent.
	Types(ctx context.Context, calendar string, ids []string) (map[string]KeptType, error)
	// Keep records each of kept on calendar, replacing what was kept for
	// its booking; of a booking given twice, the last counts.
	Keep(ctx context.Context, calendar string, kept []KeptType) error
	// Prune forgets, on every calendar, what is kept of the bookings that
	// ended before cutoff.
	Prune(ctx context.Context, cutoff time.Time) error
}

// KeptType is the event type a booking was last listed with.
type KeptType struct {
	BookingID string
	EventType string    // the event type's slug
	End       time.Time // the booking's end as last listed: kept until then
}

package booking

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Kind is an event type's scheduling kind.
type Kind string

const (
	KindSolo       Kind = "solo"
	KindRoundRobin Kind = "round_robin"
	KindCollective Kind = "collective"
)

// EventType is one of the owner's event types.
type EventType struct {
	ScheduleID      string `json:"schedule_id"`
	Slug            string `json:"slug"`
	Title           string `json:"title"`
	DurationMinutes int    `json:"duration_minutes"`
	SchedulingKind  Kind   `json:"scheduling_kind"`
}

// Bookable reports whether bookbot may create bookings for the type. The API
// supports only solo events reliably; team events can give ambiguous results
// and go through the public booking page instead.
func (e EventType) Bookable() bool { return e.SchedulingKind == KindSolo }

// Duration is the event's length.
func (e EventType) Duration() time.Duration {
	return time.Duration(e.DurationMinutes) * time.Minute
}

// Slot is a free slot of one event type as GET /slots returned it. It keeps
// the exact start and end strings, because a create must send them back byte
// for byte; only Client.Slots makes Slots, so a booking can only be made from
// a slot the API actually offered.
type Slot struct {
	Start, End time.Time

	eventType string
	rawStart  string
	rawEnd    string
}

// EventType is the slug of the event type the slot belongs to.
func (s Slot) EventType() string { return s.eventType }

// RawStart is the start exactly as the API sent it.
func (s Slot) RawStart() string { return s.rawStart }

// RawEnd is the end exactly as the API sent it.
func (s Slot) RawEnd() string { return s.rawEnd }

// IsZero reports whether the slot did not come from the API.
func (s Slot) IsZero() bool { return s.eventType == "" || s.rawStart == "" || s.rawEnd == "" }

// Receipt is what a successful create returns. The API finds it by owner and
// start time, so it is not proof that this request made it.
type Receipt struct {
	ID    string
	Start time.Time
	End   time.Time
}

// NullString is a string that legacy records may leave null. Null (unknown)
// and "" (known to be empty) are different things.
type NullString struct {
	String string
	Valid  bool
}

// Some returns a known value.
func Some(s string) NullString { return NullString{String: s, Valid: true} }

// Or returns the value, or fallback when it is unknown.
func (n NullString) Or(fallback string) string {
	if !n.Valid {
		return fallback
	}
	return n.String
}

func nullable(p *string) NullString {
	if p == nil {
		return NullString{}
	}
	return Some(*p)
}

func (n *NullString) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*n = NullString{}
		return nil
	}
	if err := json.Unmarshal(b, &n.String); err != nil {
		return err
	}
	n.Valid = true
	return nil
}

func (n NullString) MarshalJSON() ([]byte, error) {
	if !n.Valid {
		return []byte("null"), nil
	}
	return json.Marshal(n.String)
}

// StatusConfirmed is the one status GET /bookings gives its entries.
const StatusConfirmed = "confirmed"

// Booking is an upcoming confirmed booking from GET /bookings. A list with
// an entry of another status is not read (ErrBadResponse).
type Booking struct {
	ID          string
	Start, End  time.Time
	Status      string
	BookerName  NullString
	BookerEmail NullString
	EventType   NullString // event slug
}

// parseTime reads an API timestamp as an instant. Any RFC 3339 form is
// accepted: Z or an offset, with any number of fraction digits or none.
func parseTime(field, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s %q is not an RFC 3339 date-time", field, truncate(s, 40))
	}
	return t, nil
}

// Wire shapes, decoded leniently: unknown fields are ignored.
type (
	wireEventTypes struct {
		EventTypes []EventType `json:"event_types"`
	}
	wireSlot struct {
		Start string `json:"start"`
		End   string `json:"end"`
	}
	wireSlots struct {
		Slots []wireSlot `json:"slots"`
	}
	wireReceipt struct {
		BookingID string `json:"booking_id"`
		StartsAt  string `json:"starts_at"`
		EndsAt    string `json:"ends_at"`
	}
	// wireCreated is a create's answer: booking null is one the API
	// documents (a flow it does not support), no booking key at all is not.
	wireCreated struct {
		Booking *wireReceipt
		has     bool // the answer had a booking key, null or not
	}
	wireBooking struct {
		BookingID   string  `json:"booking_id"`
		StartsAt    string  `json:"starts_at"`
		EndsAt      string  `json:"ends_at"`
		Status      string  `json:"status"`
		BookerName  *string `json:"booker_name"`  // plain pointers decode
		BookerEmail *string `json:"booker_email"` // several times faster than
		EventType   *string `json:"event_type"`   // a custom UnmarshalJSON
	}
	wireBookings struct {
		Bookings []wireBooking `json:"bookings"`
	}
	wireCancelled struct {
		Cancelled bool `json:"cancelled"`
	}
	wireError struct {
		Error  string `json:"error"`
		Status *int   `json:"status"`
	}
)

// shaped is a wire answer that says whether it had the shape the API text
// gives it. json.Unmarshal leaves a missing or null field at its zero
// value, and a list read so is empty: {"error":"upstream timeout"} with
// status 200 would say that every booking is gone.
type shaped interface {
	// misshapen says what the answer lacks, "" when it lacks nothing.
	misshapen() string
}

// An empty array decodes to an empty slice, missing and null to nil.
func (w *wireEventTypes) misshapen() string { return missing(w.EventTypes == nil, "event_types") }
func (w *wireSlots) misshapen() string      { return missing(w.Slots == nil, "slots") }
func (w *wireBookings) misshapen() string   { return missing(w.Bookings == nil, "bookings") }
func (w *wireCreated) misshapen() string {
	if !w.has {
		return `no "booking" key`
	}
	return ""
}

func missing(absent bool, array string) string {
	if absent {
		return fmt.Sprintf("no %q array", array)
	}
	return ""
}

func (w *wireCreated) UnmarshalJSON(b []byte) error {
	var raw struct {
		Booking json.RawMessage `json:"booking"` // "null" when null, nil when absent
	}
	if err := json.Unmarshal(b, &raw); err != nil || raw.Booking == nil {
		return err
	}
	w.has = true
	return json.Unmarshal(raw.Booking, &w.Booking)
}

func (w wireSlot) slot(eventType string) (Slot, error) {
	start, err := parseTime("slot start", w.Start)
	if err != nil {
		return Slot{}, err
	}
	end, err := parseTime("slot end", w.End)
	if err != nil {
		return Slot{}, err
	}
	if !end.After(start) {
		return Slot{}, fmt.Errorf("slot %q ends before it starts", truncate(w.Start, 40))
	}
	return Slot{Start: start, End: end, eventType: eventType, rawStart: w.Start, rawEnd: w.End}, nil
}

func (w wireReceipt) receipt() (Receipt, error) {
	start, err := parseTime("receipt starts_at", w.StartsAt)
	if err != nil {
		return Receipt{}, err
	}
	end, err := parseTime("receipt ends_at", w.EndsAt)
	if err != nil {
		return Receipt{}, err
	}
	return Receipt{ID: w.BookingID, Start: start, End: end}, nil
}

func (w wireBooking) booking() (Booking, error) {
	if w.BookingID == "" {
		return Booking{}, fmt.Errorf("a booking has no booking_id")
	}
	// The list holds only upcoming confirmed bookings, and says so in each
	// entry; one that says otherwise is no booking bookbot can count on.
	if w.Status != StatusConfirmed {
		return Booking{}, fmt.Errorf("booking %s has status %q, where the list holds only %q ones", truncate(w.BookingID, 40), truncate(w.Status, 40), StatusConfirmed)
	}
	start, err := parseTime("booking starts_at", w.StartsAt)
	if err != nil {
		return Booking{}, err
	}
	end, err := parseTime("booking ends_at", w.EndsAt)
	if err != nil {
		return Booking{}, err
	}
	return Booking{
		ID:          w.BookingID,
		Start:       start,
		End:         end,
		Status:      w.Status,
		BookerName:  nullable(w.BookerName),
		BookerEmail: nullable(w.BookerEmail),
		EventType:   nullable(w.EventType),
	}, nil
}

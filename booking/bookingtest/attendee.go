package bookingtest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Errors of the attendee methods, wrapped with details.
var (
	// ErrNotOffered: the time is not one the event's booking page offers
	// now (taken, past, outside the hours or the window, not on a slot).
	ErrNotOffered = errors.New("that time is not offered")
	// ErrNoBooking: there is no such booking, or it was cancelled.
	ErrNoBooking = errors.New("no such booking")
	// ErrRefused: the owner's settings refuse the booking: the attendee is
	// on the block list, or the calendar is full.
	ErrRefused = errors.New("the booking page refuses it")
	// ErrNoConfirmation: no create waits for this attendee's email
	// confirmation, or it was followed already.
	ErrNoConfirmation = errors.New("no booking waits for this confirmation")
)

// The attendee methods act as an attendee does on the owner's public booking
// page and through the links in their confirmation mail, outside the API:
// the API sees only the result, in GET /bookings, exactly as if a create or
// cancel had made it. They are neither rate limited nor logged as requests,
// and faults and latency do not touch them. They use the Sandbox's clock.

// BookAsAttendee books the owner's event type slug at start for the
// attendee, as the public booking page does, and returns the new booking's
// ID. start must be the start of a slot GET /slots offers for the event now
// (any form of the instant will do: the page sends what it showed), else
// the error wraps [ErrNotOffered]. The end is start plus the event's
// duration. As with a create, a repeat of an earlier booking of the event
// at start for the same email, even a cancelled one, is refused, as are an
// attendee the owner's block list refuses and any booking while the
// calendar is full (wrapping [ErrRefused]); a round robin booking goes to
// the free host with the fewest upcoming bookings (a teammate's is not
// listed for the owner's key). Email verification and required questions
// are no obstacle: the attendee confirms and answers on the page. The
// booker's time zone is stored as UTC.
func (s *Sandbox) BookAsAttendee(ownerID, slug string, start time.Time, name, email string) (id string, err error) {
	if strings.TrimSpace(name) == "" || strings.TrimSpace(email) == "" {
		return "", errors.New("bookingtest: an attendee needs a name and an email")
	}
	s.lock()
	defer s.mu.Unlock()
	o := s.owners[ownerID]
	if o == nil {
		return "", fmt.Errorf("bookingtest: unknown owner %q", ownerID)
	}
	et := o.eventType(slug)
	if et == nil {
		return "", fmt.Errorf("bookingtest: owner %q has no event type %q", ownerID, slug)
	}
	return s.bookAsAttendeeLocked(o, et, start, Booking{EventType: &slug, BookerName: &name, BookerEmail: &email, BookerTZ: "UTC"})
}

// bookAsAttendeeLocked books b, as the attendee asked on the page, at
// start: its ID, start and end are set here.
func (s *Sandbox) bookAsAttendeeLocked(o *owner, et *EventType, start time.Time, b Booking) (string, error) {
	email, now := *b.BookerEmail, s.now()
	switch {
	case o.refuses(email):
		return "", fmt.Errorf("bookingtest: the owner's settings refuse %s: %w", email, ErrRefused)
	case s.fullLocked(o, now):
		return "", fmt.Errorf("bookingtest: the calendar holds as many bookings as it takes: %w", ErrRefused)
	case s.repeatLocked(o, et, start, email):
		return "", fmt.Errorf("bookingtest: %s already had a %s booking at %s; the page refuses a repeat", email, et.Slug, slotTime(start))
	}
	slot, ok := s.offeredLocked(o, et, start)
	if !ok {
		return "", fmt.Errorf("bookingtest: %s at %s: %w", et.Slug, slotTime(start), ErrNotOffered)
	}
	host, _ := s.hostLocked(o, et, slot, now) // the slot is offered: a host is free
	b.ID, b.Start, b.End = s.newBookingIDLocked(), slot.Start, slot.End
	s.bookings[b.ID] = &record{owner: host, event: o.id, b: b}
	return b.ID, nil
}

// Pending returns the creates of an owner's event types waiting for their
// attendee's email confirmation, oldest first, as the create asked (no ID;
// End is the end it asked for): what [Sandbox.ConfirmEmail] can confirm.
func (s *Sandbox) Pending(ownerID string) []Booking {
	s.lock()
	defer s.mu.Unlock()
	var out []Booking
	for _, p := range s.pending {
		if p.owner == ownerID {
			b := cloneBooking(p.b)
			b.End, _ = time.Parse(time.RFC3339, p.raw[1])
			out = append(out, b)
		}
	}
	return out
}

// ConfirmEmail follows the link the service mailed an attendee after a
// create of an event type that needs email verification (answered 409
// with body status 200): it books what that create asked for, as the page
// does, and returns the booking's ID; GET /bookings then lists it as any
// other. The newest such create of the owner's event type slug at start
// for email is the one confirmed, once. No such create is an error
// wrapping [ErrNoConfirmation]; a time taken meanwhile (a pending
// confirmation holds nothing) wraps [ErrNotOffered].
func (s *Sandbox) ConfirmEmail(ownerID, slug string, start time.Time, email string) (string, error) {
	s.lock()
	defer s.mu.Unlock()
	for i := len(s.pending) - 1; i >= 0; i-- {
		p := s.pending[i]
		if p.owner != ownerID || *p.b.EventType != slug || !p.b.Start.Equal(start) || !strings.EqualFold(*p.b.BookerEmail, email) {
			continue
		}
		o, et := s.owners[ownerID], (*EventType)(nil)
		if o != nil {
			et = o.eventType(slug)
		}
		if et == nil {
			return "", fmt.Errorf("bookingtest: owner %q has no event type %q any more", ownerID, slug)
		}
		// The link books the time as the create wrote it, or nothing.
		if slot, ok := s.offeredLocked(o, et, start); !ok || slotTime(slot.Start) != p.raw[0] || slotTime(slot.End) != p.raw[1] {
			return "", fmt.Errorf("bookingtest: %s at %s: %w", slug, p.raw[0], ErrNotOffered)
		}
		id, err := s.bookAsAttendeeLocked(o, et, start, cloneBooking(p.b))
		if err == nil {
			s.pending = slices.Delete(s.pending, i, i+1)
		}
		return id, err
	}
	return "", fmt.Errorf("bookingtest: %s for %s at %s: %w", slug, email, slotTime(start), ErrNoConfirmation)
}

// CancelAsAttendee cancels a booking as its attendee does through the link in
// their mail: it leaves GET /bookings as after a cancel through the API. An
// unknown or already cancelled booking is an error wrapping [ErrNoBooking].
func (s *Sandbox) CancelAsAttendee(id string) error {
	s.lock()
	defer s.mu.Unlock()
	r, err := s.liveBookingLocked(id)
	if err != nil {
		return err
	}
	r.b.Cancelled = true
	return nil
}

// MoveAsAttendee reschedules a booking as its attendee does through the link
// in their mail: the same booking, with the same ID, host and attendee,
// gets the new start and an end one event duration later, and GET /bookings
// lists it with event_type null from then on, as upstream does (it stays
// of its event type here: Rescheduled is set). start must be
// offered for the booking's event type now, counting the booking's own
// time as free, else the error wraps [ErrNotOffered]; an unknown or
// cancelled booking wraps [ErrNoBooking]. A legacy booking without an event
// type, or one whose type was removed, cannot be moved.
func (s *Sandbox) MoveAsAttendee(id string, start time.Time) error {
	s.lock()
	defer s.mu.Unlock()
	r, err := s.liveBookingLocked(id)
	if err != nil {
		return err
	}
	o := s.owners[r.event]
	if r.b.EventType == nil || o == nil {
		return fmt.Errorf("bookingtest: booking %s has no event type to reschedule within", id)
	}
	et := o.eventType(*r.b.EventType)
	if et == nil {
		return fmt.Errorf("bookingtest: booking %s: its event type %q was removed", id, *r.b.EventType)
	}
	// The booking does not stand in its own way: it is left out while the
	// slots are computed, under the lock, so nobody sees it cancelled. Its
	// host stays: a round robin's must be free at the new time.
	r.b.Cancelled = true
	slot, ok := s.offeredLocked(o, et, start)
	ok = ok && !overlapsAny(s.ownerBookingsLocked(r.owner, true), slot.Start, slot.End)
	r.b.Cancelled = false
	if !ok {
		return fmt.Errorf("bookingtest: moving %s to %s: %w", id, slotTime(start), ErrNotOffered)
	}
	r.b.Start, r.b.End, r.b.Rescheduled = slot.Start, slot.End, true
	return nil
}

// offeredLocked returns the slot of et starting at start, if GET /slots
// offers it now.
func (s *Sandbox) offeredLocked(o *owner, et *EventType, start time.Time) (Slot, bool) {
	for _, sl := range s.slotsLocked(o, et, s.now()) {
		if sl.Start.Equal(start) {
			return sl, true
		}
	}
	return Slot{}, false
}

// liveBookingLocked returns the booking with this ID, in any owner's or
// host's calendar, unless it is unknown or cancelled.
func (s *Sandbox) liveBookingLocked(id string) (*record, error) {
	r := s.bookings[id]
	if r == nil {
		return nil, fmt.Errorf("bookingtest: booking %q: %w", id, ErrNoBooking)
	}
	if r.b.Cancelled {
		return nil, fmt.Errorf("bookingtest: booking %q was cancelled: %w", id, ErrNoBooking)
	}
	return r, nil
}

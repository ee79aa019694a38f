// Package personal is what bookbot does for each allowed person on their
// own: a direct message a set time before every booking (reminders), the
// day's bookings at a set time of their morning (the agenda), both in the
// person's own time zone, each exactly once.
//
// The scheduling is pure (schedule.go); the Runner reads the bookings list
// and sends what is due; a Store keeps the settings and the record of what
// was sent, so a restart sends nothing twice.
package personal

import (
	"context"
	"errors"
	"time"

	"github.com/bookbot/bookbot/outbox"
)

// Reminder bounds: from a minute to a day before a booking.
const (
	MinRemind = time.Minute
	MaxRemind = 24 * time.Hour
)

// Settings are one person's choices. The zero value is everything off.
type Settings struct {
	// Remind is how long before each booking a reminder comes; 0 is off.
	Remind time.Duration
	// Agenda is when the day's agenda comes; nil is off.
	Agenda *Agenda
	// Updated is when the person last changed them.
	Updated time.Time
}

// Off reports whether nothing is on.
func (s Settings) Off() bool { return s.Remind == 0 && s.Agenda == nil }

// Agenda is a time of the person's day, in their own zone.
type Agenda struct {
	Minute   int  // minutes after local midnight, 0–1439
	Weekdays bool // Monday to Friday only
}

// Store keeps the settings and the record of what was sent. The embedded
// store (store/bolt) and store/pg implement it, the record in the outbox
// (Claims).
type Store interface {
	// Settings returns a person's settings; ok is false when they never
	// set any.
	Settings(ctx context.Context, user string) (s Settings, ok bool, err error)
	// SaveSettings replaces a person's settings.
	SaveSettings(ctx context.Context, user string, s Settings) error
	// AllSettings returns everyone's settings, by Slack user ID.
	AllSettings(ctx context.Context) (map[string]Settings, error)

	// Claim records, before a message is sent, that it is being sent. It
	// returns false when the key was claimed before: each reminder and
	// agenda is sent at most once.
	Claim(ctx context.Context, key string, at time.Time) (bool, error)
	// Release forgets a claim whose message Slack certainly did not send,
	// so it can be tried again.
	Release(ctx context.Context, key string) error
	// Prune forgets claims made before cutoff.
	Prune(ctx context.Context, cutoff time.Time) error
}

// ReminderKey names one reminder: a person, a booking and its start (a
// booking moved to another time is reminded of again, once).
func ReminderKey(user, bookingID string, start time.Time) string {
	return "remind\x00" + user + "\x00" + bookingID + "\x00" + start.UTC().Format(time.RFC3339Nano)
}

// AgendaKey names one agenda: a person and their local date.
func AgendaKey(user string, day Date) string {
	return "agenda\x00" + user + "\x00" + day.String()
}

// Date is a calendar date in someone's zone.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// DateOf is t's date in loc.
func DateOf(t time.Time, loc *time.Location) Date {
	y, m, d := t.In(loc).Date()
	return Date{y, m, d}
}

func (d Date) String() string {
	return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
}

// OutboxKey is a claim's key in the outbox: key after the kind
// "personal/".
func OutboxKey(key string) string { return outboxPrefix + key }

const outboxPrefix = "personal/"

// errNoKey is the error for an empty claim key.
var errNoKey = errors.New("no claim key")

// Claims are the claims of a Store (Claim, Release, Prune) kept in an
// outbox; a store embeds them beside its settings.
type Claims struct{ Box outbox.Store }

// Claim claims key at at (see Store).
func (c Claims) Claim(ctx context.Context, key string, at time.Time) (bool, error) {
	if key == "" {
		return false, errNoKey
	}
	return c.Box.Claim(ctx, OutboxKey(key), at, at)
}

// Release forgets key's claim; a key that holds none is left as it is.
func (c Claims) Release(ctx context.Context, key string) error {
	if key == "" {
		return nil
	}
	return c.Box.Release(ctx, OutboxKey(key))
}

// Prune forgets the claims made before cutoff (exactly cutoff is kept).
func (c Claims) Prune(ctx context.Context, cutoff time.Time) error {
	return c.Box.Prune(ctx, outboxPrefix, cutoff)
}

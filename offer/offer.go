// Package offer is an offer of free times made in a Slack conversation:
// who made it, for whom, how many meetings it may book, until when, and
// what it has booked. The rules of taking a time from it are here, once;
// a Store keeps offers so that any replica answers a click on any card.
package offer

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"slices"
	"strings"
	"time"
)

// Offer is one card of free times.
type Offer struct {
	ID string `json:"id"`
	// Offerer is the Slack user whose calendar is booked; "" for an offer
	// on the owner's calendar that nobody made: a link to the owner's
	// booking page unfurled, or a Workflow Builder step.
	Offerer string `json:"offerer"`
	// Contact is whom people booking from an offer nobody made ask about
	// it (the operator's contact when it was made); "" for none.
	Contact string `json:"contact,omitempty"`
	// Calendar is which of the offerer's calendars, and which connection
	// of it, the offer was made on: it books on that one or not at all.
	// Empty on offers made before it was recorded.
	Calendar string   `json:"calendar,omitempty"`
	Name     string   `json:"name"`          // the offerer's name, as Slack gave it
	For      []string `json:"for,omitempty"` // the Slack users who may book; empty: anyone who sees the card
	Max      int      `json:"max"`           // how many meetings it may book, at least 1, one a person

	Event   string `json:"event"`   // the event type's slug
	Title   string `json:"title"`   // its title when offered
	Minutes int    `json:"minutes"` // its length

	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
	// Withdrawn is when the offerer withdrew it; zero while it stands.
	Withdrawn time.Time `json:"withdrawn,omitzero"`
	// Warned is when the offerer was told that someone was turned away
	// because their calendar needs them (its key was refused): they are
	// told once an offer, not at every click.
	Warned time.Time `json:"warned,omitzero"`

	// Uses are the times taken from it: booked, or being booked.
	Uses []Use `json:"uses,omitempty"`

	// Where the card is, when bookbot can change it whenever it needs to:
	// a message it posted (Channel and TS, changed with chat.update), or
	// its unfurl of Link in a person's message Channel and TS (changed
	// with chat.unfurl). Empty: the card went through a slash command's
	// response_url, and is changed through those of clicks on it.
	Channel string `json:"channel,omitempty"`
	TS      string `json:"ts,omitempty"`
	Link    string `json:"link,omitempty"`

	// Step is the Workflow Builder step (its function_execution_id) that
	// posted the card: it ends with the offer's first booking, or with an
	// error once the offer closes without one. StepEnded is when Slack was
	// told it ended; zero until then.
	Step      string    `json:"step,omitempty"`
	StepEnded time.Time `json:"step_ended,omitzero"`
	// StepError is why the step ends in error when bookbot knows it before
	// the offer closes on its own: its run was refused, or its card not
	// posted. "": the step ends as the offer does.
	StepError string `json:"step_error,omitempty"`
}

// Use is a time taken from an offer. Until Booking is set the create is
// on its way, or its outcome was unclear: it counts against Max either
// way, so an offer never books more than Max meetings.
type Use struct {
	Key     string    `json:"key"` // who holds it: the form that books it
	By      string    `json:"by"`  // the Slack user who booked
	Name    string    `json:"name"`
	Start   string    `json:"start"` // the slot's start as GET /slots gave it
	End     time.Time `json:"end,omitzero"`
	At      time.Time `json:"at"`
	Booking string    `json:"booking,omitempty"` // the booking's ID once confirmed

	// Owner names the process that took the time, and Sent is when it
	// handed the create to the write path (zero until then): a time never
	// sent booked nothing, and one sent is settled by the write's journal
	// entry, when its process stopped before it could.
	Owner string    `json:"owner,omitempty"`
	Sent  time.Time `json:"sent,omitzero"`
	// Card is the response_url of the click that opened the form, through
	// which the card is updated when the time is settled after a restart
	// (Slack takes it for 30 minutes, 5 times).
	Card string `json:"card,omitempty"`
}

// Why a time cannot be taken. Each is a truthful answer to the clicker.
var (
	ErrNotFound  = errors.New("no such offer")
	ErrExists    = errors.New("an offer with this ID exists")
	ErrWithdrawn = errors.New("the offer was withdrawn")
	ErrExpired   = errors.New("the offer has expired")
	ErrUsedUp    = errors.New("the offer is booked")
	ErrTaken     = errors.New("that time is taken")
	ErrNotNamed  = errors.New("the offer is for other people")
	ErrOneEach   = errors.New("this person has a time from the offer already")
	// ErrSettled: the time is no longer held as it was read (booked, given
	// back, or sent since), so what was decided about it stands no more.
	ErrSettled = errors.New("that time was settled meanwhile")
	// ErrWarned: the offerer was told already (Warn).
	ErrWarned = errors.New("the offerer was told already")
	// ErrStepEnded: the offer's step was ended already (EndStep).
	ErrStepEnded = errors.New("the offer's step was ended already")
	// ErrPlaced: the offer's card was recorded as posted, or a time was
	// taken from it, since it was read as unposted (Unposted).
	ErrPlaced = errors.New("the offer's card was posted or used meanwhile")
)

// Store keeps offers. Every method fails with the context's error, and
// records nothing, when ctx is done.
type Store interface {
	// Create records a new offer; ErrExists when its ID is taken.
	Create(ctx context.Context, o Offer) error
	// Get returns the offer; ErrNotFound when there is none.
	Get(ctx context.Context, id string) (Offer, error)
	// Update changes the offer with fn atomically: concurrent updates of
	// one offer, from any process on the store, take turns, each fn seeing
	// what the one before it left. An error from fn leaves the offer
	// unchanged and is returned as it is, with the offer fn was given (so
	// a refusal is told without reading it again; this package's fns
	// refuse before they change anything); ErrNotFound when there is none.
	Update(ctx context.Context, id string, fn func(*Offer) error) (Offer, error)
	// Prune deletes the offers that expired before cutoff.
	Prune(ctx context.Context, cutoff time.Time) error
	// Unsettled lists, in no given order, the offers holding a time not
	// booked (a Use without Booking): being booked now, unclear, or left
	// so by a process that stopped. Expired and withdrawn offers are
	// listed too, until they are pruned.
	Unsettled(ctx context.Context) ([]Offer, error)
	// Steps lists, in no given order, the offers whose Workflow Builder
	// step has not ended (Step set, StepEnded zero), expired and withdrawn
	// ones too, until they are pruned.
	Steps(ctx context.Context) ([]Offer, error)
}

// NewID is a new offer's ID: random, short, and safe in a button's value.
func NewID() string {
	b := make([]byte, 10)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return encodeID(b)
}

// IDOf is the ID of the one offer that what names (a link's message and
// address, a step's execution): the same parts give the same ID, so that
// of the replicas and redeliveries making it, one creates it and the rest
// find it (ErrExists). It looks like NewID's.
func IDOf(what ...string) string {
	h := sha256.New()
	for _, p := range what {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return encodeID(h.Sum(nil)[:10])
}

func encodeID(b []byte) string {
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

// Named reports whether user may book from the offer.
func (o Offer) Named(user string) bool {
	return len(o.For) == 0 || slices.Contains(o.For, user)
}

// UseOf is the time user took from the offer, booked or being booked:
// each person books one meeting of an offer.
func (o Offer) UseOf(user string) (Use, bool) {
	i := slices.IndexFunc(o.Uses, func(u Use) bool { return u.By == user })
	if i < 0 {
		return Use{}, false
	}
	return o.Uses[i], true
}

// Booked are the uses confirmed as bookings.
func (o Offer) Booked() []Use {
	var out []Use
	for _, u := range o.Uses {
		if u.Booking != "" {
			out = append(out, u)
		}
	}
	return out
}

// Pending are the uses not booked (yet): being booked, or unclear.
func (o Offer) Pending() []Use {
	var out []Use
	for _, u := range o.Uses {
		if u.Booking == "" {
			out = append(out, u)
		}
	}
	return out
}

// EncodedPending reports whether raw, an Offer as encoding/json writes
// it, holds a use not booked, without decoding it: each use has a "key"
// and a booked one a "booking", and a field's name with its colon is never
// spelt by a string, whose quotes JSON escapes. Stores look through every
// offer with it (store/pg's 0012 counts the same in SQL).
func EncodedPending(raw []byte) bool {
	return bytes.Count(raw, []byte(`"key":`)) > bytes.Count(raw, []byte(`"booking":`))
}

// EncodedStepOpen reports whether raw, an Offer as encoding/json writes
// it, has a step not ended, without decoding it: a "step" field and no
// "step_ended" one, names no string spells (see EncodedPending). Stores
// look through every offer with it (store/pg's 0014 tests the same in
// SQL).
func EncodedStepOpen(raw []byte) bool {
	return bytes.Contains(raw, []byte(`"step":`)) && !bytes.Contains(raw, []byte(`"step_ended":`))
}

// StepOpen reports whether the offer has a step not ended.
func (o Offer) StepOpen() bool { return o.Step != "" && o.StepEnded.IsZero() }

// Left is how many more meetings the offer may book.
func (o Offer) Left() int { return max(o.Max-len(o.Uses), 0) }

// Open says why no time can be taken from the offer now, or nil when one
// can. A used-up offer says so before an expired or withdrawn one: what
// it booked is the news.
func (o Offer) Open(now time.Time) error {
	switch {
	case o.Left() == 0:
		return ErrUsedUp
	case !o.Withdrawn.IsZero():
		return ErrWithdrawn
	case !now.Before(o.Expires):
		return ErrExpired
	}
	return nil
}

// Take takes the time t.Start for t.By, for the form t.Key, at t.At: an
// Update's fn. A form takes a time once: the same key again is ErrUsedUp,
// so a form delivered twice never books twice. A person takes one time:
// another form of theirs is ErrOneEach, so one of several people named
// cannot book them all. A time is taken once: a start another form holds
// is ErrTaken, so two forms never book one slot.
func Take(t Use) func(*Offer) error {
	t.Booking, t.End, t.Sent = "", time.Time{}, time.Time{}
	return func(o *Offer) error {
		if !o.Named(t.By) {
			return ErrNotNamed
		}
		for _, u := range o.Uses {
			switch {
			case u.Key == t.Key:
				return ErrUsedUp
			case u.By == t.By:
				return ErrOneEach
			case u.Start == t.Start:
				return ErrTaken
			}
		}
		if err := o.Open(t.At); err != nil {
			return err
		}
		o.Uses = append(o.Uses, t)
		return nil
	}
}

// Send records that the form key's create is handed to the write path,
// at now: from then on only the write's outcome settles the time. A time
// given back meanwhile (its process was taken for stopped) is
// ErrSettled, and the create must not be sent.
func Send(key string, now time.Time) func(*Offer) error {
	return func(o *Offer) error {
		i := slices.IndexFunc(o.Uses, func(u Use) bool { return u.Key == key && u.Booking == "" })
		if i < 0 {
			return ErrSettled
		}
		o.Uses[i].Sent = now
		return nil
	}
}

// Release gives back the time the form key took: nothing was booked.
func Release(key string) func(*Offer) error {
	return func(o *Offer) error {
		o.Uses = slices.DeleteFunc(o.Uses, func(u Use) bool { return u.Key == key && u.Booking == "" })
		return nil
	}
}

// Cancelled gives back the time whose booking was cancelled through the
// offer (its guest cancelled it): the meeting no longer counts against
// Max, the time is free on the card again, and its guest may book another.
func Cancelled(bookingID string) func(*Offer) error {
	return func(o *Offer) error {
		o.Uses = slices.DeleteFunc(o.Uses, func(u Use) bool { return u.Booking != "" && u.Booking == bookingID })
		return nil
	}
}

// Confirm records the booking the form key's time became.
func Confirm(key, bookingID string, end time.Time) func(*Offer) error {
	return func(o *Offer) error {
		for i := range o.Uses {
			if o.Uses[i].Key == key {
				o.Uses[i].Booking, o.Uses[i].End = bookingID, end
			}
		}
		return nil
	}
}

// held is the index of u in o as it was read: not booked, and not sent
// since; -1 when it is no longer held so.
func held(o *Offer, u Use) int {
	return slices.IndexFunc(o.Uses, func(v Use) bool {
		return v.Key == u.Key && v.Booking == "" && v.Sent.Equal(u.Sent)
	})
}

// ReleaseLeft gives back u, a time read from the offer whose process left
// it unsettled, when the offer still holds it as read; ErrSettled when it
// does not (booked, given back, or sent since), so that a process still
// at work on it is not raced.
func ReleaseLeft(u Use) func(*Offer) error {
	return func(o *Offer) error {
		i := held(o, u)
		if i < 0 {
			return ErrSettled
		}
		o.Uses = slices.Delete(o.Uses, i, i+1)
		return nil
	}
}

// ConfirmLeft records the booking u, a time read from the offer whose
// process left it unsettled, became, when the offer still holds it as
// read; ErrSettled when it does not. Of the processes that settle u at
// once, one records it, and it alone tells of it.
func ConfirmLeft(u Use, bookingID string, end time.Time) func(*Offer) error {
	return func(o *Offer) error {
		i := held(o, u)
		if i < 0 {
			return ErrSettled
		}
		o.Uses[i].Booking, o.Uses[i].End = bookingID, end
		return nil
	}
}

// Warn records, at now, that the offerer is told their calendar turned
// someone away; ErrWarned when they were told before. Of the processes
// turning people away at once, one tells them.
func Warn(now time.Time) func(*Offer) error {
	return func(o *Offer) error {
		if !o.Warned.IsZero() {
			return ErrWarned
		}
		o.Warned = now
		return nil
	}
}

// EndStep records, at now, that the offer's step was ended; ErrStepEnded
// when it was before.
func EndStep(now time.Time) func(*Offer) error {
	return func(o *Offer) error {
		if !o.StepEnded.IsZero() {
			return ErrStepEnded
		}
		o.StepEnded = now
		return nil
	}
}

// Unposted withdraws, at now, the offer whose card was not posted, or not
// known to be, and records why its step ends in error (StepError);
// ErrPlaced when its card was recorded as posted or a time taken from it.
func Unposted(why string, now time.Time) func(*Offer) error {
	return func(o *Offer) error {
		if o.TS != "" || len(o.Uses) > 0 {
			return ErrPlaced
		}
		if err := Withdraw("", now)(o); err != nil {
			return err
		}
		o.StepError = why
		return nil
	}
}

// Placed records where bookbot posted the offer's card: channel and ts.
func Placed(channel, ts string) func(*Offer) error {
	return func(o *Offer) error {
		o.Channel, o.TS = channel, ts
		return nil
	}
}

// Withdraw withdraws the offer, when by made it. An offer nobody made
// (on the owner's calendar) is withdrawn by bookbot alone: by "".
func Withdraw(by string, now time.Time) func(*Offer) error {
	return func(o *Offer) error {
		if by != o.Offerer {
			return ErrNotNamed
		}
		if o.Withdrawn.IsZero() {
			o.Withdrawn = now
		}
		return nil
	}
}

// Package account is whose calendar a person acts on, and their key: each
// allowed person may connect their own booking API key, which bookbot
// keeps sealed (AES-256-GCM under the operator's secret key) in a Store.
// People who have not connected act on the owner's calendar.
package account

import (
	"context"
	"errors"
	"time"

	"github.com/bookbot/bookbot/booking"
)

// State is whether an account's key is used.
type State string

const (
	// OK: the key worked when it was last used.
	OK State = "ok"
	// Reconnect: the API refused the key (401); it is not used until the
	// person connects again.
	Reconnect State = "reconnect"
)

// Notices is where a connected person's live notices go.
const (
	NoticesDM  = ""    // by direct message (the default)
	NoticesOff = "off" // nowhere
	// anything else: a channel ID
)

// Account is one person's connected calendar.
type Account struct {
	User        string    // the Slack user ID; the account's ID, bound into Sealed
	Sealed      []byte    // the API key, sealed by a Sealer for User
	ConnectedAt time.Time // when the key was connected
	LastUsed    time.Time // when bookbot last acted with it; zero: never
	State       State
	Notices     string // NoticesDM, NoticesOff or a channel ID
	// Calendar is the ID of the calendar the key acts on, shared by every
	// account holding the same key (see Sealer.CalendarID): what the
	// journal, the duplicate check and the review queue know the calendar
	// by. "" in accounts connected before it was recorded: the sealer's ID
	// of the key stands in (CalendarOf).
	Calendar string
	// Page is the person's own public booking page, as they gave it when
	// they connected: links to its event types unfurl into cards of their
	// calendar's free times. "" for none.
	Page string
}

// Store keeps the accounts. Implementations: store/bolt and store/pg;
// accounttest is the suite both pass.
type Store interface {
	// Get returns the user's account; ok is false when there is none.
	Get(ctx context.Context, user string) (a Account, ok bool, err error)
	// Put adds or replaces the account of a.User: a connect. The last read
	// of their calendar kept for notices goes in the same step, as it may
	// be another calendar's.
	Put(ctx context.Context, a Account) error
	// SwapKeys replaces each account's sealed key Old with New, and its
	// Calendar with the swap's when that is not empty, in one step, all or
	// none: ErrKeyChanged, and nothing changed, when any
	// account is gone or holds another key than Old.
	SwapKeys(ctx context.Context, swaps []KeySwap) error
	// SetNotices sets where the user's notices go; ok is false, and
	// nothing is written, when they have no account.
	SetNotices(ctx context.Context, user, notices string) (ok bool, err error)
	// Delete removes the user's account; deleted is false when there was
	// none.
	Delete(ctx context.Context, user string) (deleted bool, err error)
	// All returns every account, by user ID order.
	All(ctx context.Context) ([]Account, error)
	// Refuse marks the user's account Reconnect and deletes its key, but
	// only while its key is still sealed: a key connected since, or a
	// disconnect, stays as it is. marked is false when nothing changed.
	Refuse(ctx context.Context, user string, sealed []byte) (marked bool, err error)
	// Touch records that the user's key was used at at.
	Touch(ctx context.Context, user string, at time.Time) error
}

// KeySwap is one account's key sealed again (see Reseal), with its
// calendar's ID, which is written with it: a calendar keeps its ID when
// the secret key changes.
type KeySwap struct {
	User     string
	Old, New []byte
	Calendar string
}

// ErrKeyChanged: an account's key changed (or the account was deleted)
// since it was read.
var ErrKeyChanged = errors.New("a stored key changed while the keys were re-encrypted (bookbot is running?)")

// ErrNotHeld: the refused key is not the account's key (connected again
// since, or disconnected).
var ErrNotHeld = errors.New("the refused key is not the account's key")

// Why a person's own key cannot be used (see Open): besides these, a key
// that does not open is ErrOpen.
var (
	// ErrNotConnected: the person has no account; they act on the owner's
	// calendar, if there is one.
	ErrNotConnected = errors.New("no calendar of their own is connected")
	// ErrReconnect: the API refused the account's key, which is deleted;
	// the person must connect again.
	ErrReconnect = errors.New("the calendar's key was refused: it must be connected again")
	// ErrNoSealer: keys cannot be opened, as BOOKBOT_SECRET_KEY is not set.
	ErrNoSealer = errors.New("keys cannot be opened: BOOKBOT_SECRET_KEY is not set")
)

// Open is the one way bookbot gets a person's own calendar: it gets
// user's account from s, checks that it is connected and opens its key
// with sealer (see Account.Key). An error that is none of ErrNotConnected,
// ErrReconnect, ErrNoSealer and ErrOpen is s's: the account could not be
// read.
func Open(ctx context.Context, s Store, sealer *Sealer, user string) (Account, booking.Key, error) {
	a, ok, err := s.Get(ctx, user)
	switch {
	case err != nil:
		return Account{}, booking.Key{}, err
	case !ok:
		return Account{}, booking.Key{}, ErrNotConnected
	}
	key, err := a.Key(sealer)
	return a, key, err
}

// Key checks that a is connected, and opens its key with s: ErrReconnect
// when the API refused it, ErrNoSealer when s is nil, ErrOpen when it does
// not open (s is not the secret key it was sealed with).
func (a Account) Key(s *Sealer) (booking.Key, error) {
	switch {
	case a.State != OK:
		return booking.Key{}, ErrReconnect
	case s == nil:
		return booking.Key{}, ErrNoSealer
	}
	return s.Open(a.User, a.Sealed)
}

// Unusable reports whether err, of Open or Account.Key, says why a
// person's own key cannot be used, rather than that the accounts could
// not be read.
func Unusable(err error) bool {
	return errors.Is(err, ErrNotConnected) || errors.Is(err, ErrReconnect) || errors.Is(err, ErrNoSealer) || errors.Is(err, ErrOpen)
}

// Refused marks user's account Reconnect and deletes its key when key,
// which the API refused, is still its key; ErrNotHeld when it is not: an
// older key's refusal never touches a newer one.
func Refused(ctx context.Context, s Store, sealer *Sealer, user string, key booking.Key) error {
	a, held, err := Open(ctx, s, sealer, user)
	switch {
	case Unusable(err), err == nil && !held.Equal(key):
		return ErrNotHeld
	case err != nil:
		return err
	}
	marked, err := s.Refuse(ctx, user, a.Sealed)
	if err == nil && !marked {
		err = ErrNotHeld
	}
	return err
}

// CalendarOf is the ID of the calendar key, a's opened key, acts on:
// booking.Owner when it is the owner's key (isOwner says so; nil when
// there is none), else the ID recorded when it was connected, else the
// sealer's ID of the key. Two people who connected the same key, or one
// who connected the owner's, act on one calendar.
func CalendarOf(a Account, key booking.Key, s *Sealer, isOwner func(booking.Key) bool) string {
	switch {
	case isOwner != nil && isOwner(key):
		return booking.Owner
	case a.Calendar != "":
		return a.Calendar
	}
	return s.CalendarID(key)
}

// Connecting is the calendar ID a key being connected takes: that of an
// account that holds the same key already (connected under an earlier
// secret key, whose ID for it differs), else the sealer's ID of the key.
// others are the accounts as All gives them; those whose keys do not open
// are passed over.
func Connecting(key booking.Key, s *Sealer, others []Account) string {
	for _, o := range others {
		if o.Calendar == "" || o.State != OK {
			continue
		}
		if k, err := s.Open(o.User, o.Sealed); err == nil && k.Equal(key) {
			return o.Calendar
		}
	}
	return s.CalendarID(key)
}

package booking

import (
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf16"
)

// MaxNote is the longest note to the host the API accepts.
const MaxNote = 2000

// CreateRequest is a booking to make. The slot must come from Client.Slots.
type CreateRequest struct {
	Slot     Slot
	Name     string // attendee's name
	Email    string // attendee's email address
	TimeZone string // attendee's IANA time zone; empty means the API's default, UTC
	Note     string // note shared with the host, at most MaxNote characters
}

// FieldError is one problem with one field of a request.
type FieldError struct {
	Field   string // "slot", "name", "email", "booker_tz" or "note"
	Problem string
}

// ValidationError lists every problem found in a request. Nothing was sent.
type ValidationError []FieldError

func (v ValidationError) Error() string {
	parts := make([]string, len(v))
	for i, f := range v {
		parts[i] = f.Field + ": " + f.Problem
	}
	return "booking not sent: " + strings.Join(parts, "; ")
}

// Problem returns the problem with field, or "".
func (v ValidationError) Problem(field string) string {
	for _, f := range v {
		if f.Field == field {
			return f.Problem
		}
	}
	return ""
}

// Validate checks everything that can be checked without the API, so a
// person can fix it before an attempt is spent. It returns a ValidationError
// or nil.
func (r CreateRequest) Validate() error {
	var v ValidationError
	if r.Slot.IsZero() {
		v = append(v, FieldError{"slot", "pick a slot from the current list of free slots"})
	}
	if strings.TrimSpace(r.Name) == "" {
		v = append(v, FieldError{"name", "enter the attendee's name"})
	}
	if p := EmailProblem(r.Email); p != "" {
		v = append(v, FieldError{"email", p})
	}
	if r.TimeZone != "" {
		if _, err := LoadZone(r.TimeZone); err != nil {
			v = append(v, FieldError{"booker_tz", err.Error()})
		}
	}
	if n := NoteLength(r.Note); n > MaxNote {
		v = append(v, FieldError{"note", fmt.Sprintf("the note is %d characters long; the limit is %d", n, MaxNote)})
	}
	if len(v) > 0 {
		return v
	}
	return nil
}

// EmailProblem says what is wrong with an attendee's address, or "" when it
// is a plain address such as ada@example.com.
func EmailProblem(email string) string {
	switch {
	case strings.TrimSpace(email) == "":
		return "enter the attendee's email address"
	case len(email) > 254:
		return "the email address is too long"
	}
	a, err := mail.ParseAddress(email)
	if err != nil || a.Name != "" || a.Address != email || !strings.Contains(a.Address[strings.LastIndexByte(a.Address, '@')+1:], ".") {
		return "enter a plain email address such as ada@example.com"
	}
	return ""
}

// LoadZone loads an IANA time zone by name, refusing names that are not
// zones a person could mean ("" and "Local").
func LoadZone(name string) (*time.Location, error) {
	if loc, ok := zones.Load(name); ok {
		return loc.(*time.Location), nil
	}
	if name == "" || name == "Local" {
		return nil, fmt.Errorf("%q is not an IANA time zone name such as Europe/Berlin", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("%q is not an IANA time zone name such as Europe/Berlin", truncate(name, 60))
	}
	zones.Store(name, loc)
	return loc, nil
}

// zones caches loaded zones: time.LoadLocation reads the zone database on
// every call, and the bot renders every time in someone's zone.
var zones sync.Map

// NoteLength counts a note the way a JavaScript server does, in UTF-16 code
// units, which is never less than the count of characters: an emoji counts
// two. Line breaks count as sent (CRLF is two).
func NoteLength(note string) int {
	n := 0
	for _, r := range note {
		n += utf16.RuneLen(r)
	}
	return n
}

// ValidateBookingID rejects IDs that could not be one path segment of the
// cancel URL, or that hold characters a person cannot see, before any
// request is made.
func ValidateBookingID(id string) error {
	switch {
	case id == "":
		return errors.New("the booking ID is empty")
	case id == "." || id == "..":
		return fmt.Errorf("%q is not a booking ID", id)
	case len(id) > 200:
		return errors.New("the booking ID is too long")
	}
	for _, r := range id {
		switch {
		case unicode.IsSpace(r) || strings.ContainsRune(`/\?#%`, r) || r == unicode.ReplacementChar:
			return fmt.Errorf("%q is not a booking ID: it contains %q", truncate(id, 60), r)
		case !unicode.IsGraphic(r):
			// Control and format characters (U+202E reverses the text after
			// it, U+200B shows nothing) make an ID look like another one.
			return fmt.Errorf("%q is not a booking ID: it contains the invisible or control character %U", truncate(id, 60), r)
		}
	}
	return nil
}

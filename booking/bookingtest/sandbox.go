package bookingtest

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"
)

// Scheduling kinds of an [EventType]. A collective booking lands in the
// owner's calendar like a solo one; a round robin booking goes to whichever
// host's turn it is (see [EventType.Hosts]).
const (
	KindSolo       = "solo"
	KindRoundRobin = "round_robin"
	KindCollective = "collective"
)

// Default rate limits of POST /bookings, as documented upstream.
const (
	DefaultPerIPPerMinute  = 5
	DefaultPerEventPerHour = 20
)

// slotWindow is how far ahead GET /slots looks.
const slotWindow = 14 * 24 * time.Hour

// Options configures [New].
type Options struct {
	// Now is the clock; nil means time.Now. Everything time-dependent uses it:
	// the slot window, what counts as upcoming, the rate-limit windows, the
	// request log and the seed data. It must not call back into the Sandbox.
	Now func() time.Time
	// Seed loads the sample data: the owners behind DemoKey and OtherKey with
	// their event types and bookings, placed relative to Now.
	Seed bool
}

// Sandbox is an http.Handler serving {base}/api/v1/... as the booking API
// does. All state is in memory behind one mutex, so it is safe for concurrent
// use. The zero value is ready to use: it has no owners (every request is
// 401) and the default rate limits.
type Sandbox struct {
	mu       sync.Mutex
	inited   bool
	now      func() time.Time
	owners   map[string]*owner  // by owner ID
	keys     map[string]*owner  // by API key
	bookings map[string]*record // by booking ID, all owners and hosts
	nextSch  int                // for generated schedule IDs

	requests []*Request

	perIP, perEvent int
	ipHits          slidingWindow
	eventHits       slidingWindow

	pending []pendingCreate // creates waiting for their attendee's email confirmation

	latency map[string]time.Duration
	holds   map[string][]chan struct{} // HoldNext: each closed by its release
	faults  map[string][]fault
	edits   map[string]func(map[string]any)
	quit    chan struct{} // closed by release: stop hanging and waiting

	// onUnknownRoute is set by NewServer to fail the test; answered says
	// how the request was answered.
	onUnknownRoute func(method, path, answered string)
	// testHookServed, when set, runs when ServeHTTP returns.
	testHookServed func()
}

type owner struct {
	id, key    string
	zone       *time.Location
	hours      WeeklyHours
	eventTypes []EventType // in the order added; GET /event-types sorts them by slug
	blocked    []string    // addresses and domains whose bookings are refused, lowercase
	ceiling    int         // the most upcoming confirmed bookings the calendar takes; < 0: no limit
}

type record struct {
	owner string // whose calendar holds it: the owner, or a teammate of a round robin
	event string // owner of the event type it was booked through
	b     Booking
}

// TimeRange is a span of a local day, as offsets from local midnight: 9h to
// 17h is 09:00–17:00 wall-clock time, also on days with a DST change.
type TimeRange struct {
	From, To time.Duration
}

// WeeklyHours are an owner's working hours per weekday, in the owner's zone.
// Days without ranges have no availability.
type WeeklyHours map[time.Weekday][]TimeRange

// Weekdays returns hours from..to on Monday to Friday.
func Weekdays(from, to time.Duration) WeeklyHours {
	h := WeeklyHours{}
	for d := time.Monday; d <= time.Friday; d++ {
		h[d] = []TimeRange{{From: from, To: to}}
	}
	return h
}

// EventType is an owner's event type.
type EventType struct {
	Slug            string
	Title           string
	DurationMinutes int
	Kind            string // KindSolo, KindRoundRobin or KindCollective; "" means solo
	ScheduleID      string // "" generates one
	Removed         bool   // removed types are not listed and cannot be used
	// PeriodDays limits slots to the next N days; 0 means the full 14-day window.
	PeriodDays int
	// AsksForNote is whether the event's booking form has the note question.
	// With it, q:booking-note is kept, cut to 2000 characters; without it the
	// note is dropped without a word, as upstream does.
	AsksForNote bool
	// RequiresNote makes the note question required: a create whose note
	// is missing or blank answers 400, as for any required question left
	// unanswered. It implies AsksForNote.
	RequiresNote bool
	// RequiredQuestions are the IDs of other required questions: a create
	// that does not answer each (q:<id>, not blank) answers 400. The API
	// says neither which questions there are nor which are required.
	RequiredQuestions []string
	// RequiresEmailVerification makes the attendee confirm their email before
	// the booking exists, which the API cannot do: a create answers 409 with
	// body status 200 and books nothing, and the service mails the attendee
	// a link that books it ([Sandbox.ConfirmEmail]).
	RequiresEmailVerification bool
	// Hosts are a round_robin event's hosts: each booking goes to the one
	// that is free at its time and has the fewest upcoming bookings (the
	// first of them, on a tie), and its slots are the times one of them is
	// free. The owner's ID books into the owner's calendar (a receipt, then
	// listed); any other name is a teammate, whose booking this key can
	// neither see nor cancel (the receipt is null). Empty means the owner
	// takes every booking. Other kinds ignore it.
	Hosts []string
}

// pendingCreate is a create of an event type that needs email
// verification, waiting for the attendee to follow the link they were
// mailed. It holds no slot.
type pendingCreate struct {
	owner string
	raw   [2]string // the start and end as the create wrote them
	b     Booking   // as the create asked, without an ID or an end
}

// Booking is a stored booking. The pointer fields are nil for legacy records
// and then render as JSON null.
type Booking struct {
	ID          string
	EventType   *string // slug
	Start, End  time.Time
	BookerName  *string
	BookerEmail *string
	Cancelled   bool
	// Rescheduled: the attendee moved it (see [Sandbox.MoveAsAttendee]).
	// Upstream lists such a booking with event_type null from then on,
	// though it still belongs to its event type.
	Rescheduled bool

	// What the create request carried besides the above, for assertions.
	BookerTZ       string
	Note           string            // q:booking-note
	LocationOption string            // location_option
	Answers        map[string]string // q:<question_id> fields other than the note, keyed by question ID
}

// Slot is a bookable slot as GET /slots offers it.
type Slot struct {
	Start, End time.Time
}

// New returns a Sandbox, seeded with the sample data when opts.Seed is set.
func New(opts Options) *Sandbox {
	s := &Sandbox{}
	s.mu.Lock()
	s.initLocked()
	if opts.Now != nil {
		s.now = opts.Now
	}
	now := s.now()
	s.mu.Unlock()
	if opts.Seed {
		seed(s, now)
	}
	return s
}

// initLocked makes the zero value usable.
func (s *Sandbox) initLocked() {
	if s.inited {
		return
	}
	s.inited = true
	s.now = time.Now
	s.owners = map[string]*owner{}
	s.keys = map[string]*owner{}
	s.bookings = map[string]*record{}
	s.nextSch = 9001
	s.perIP, s.perEvent = DefaultPerIPPerMinute, DefaultPerEventPerHour
	s.latency = map[string]time.Duration{}
	s.holds = map[string][]chan struct{}{}
	s.faults = map[string][]fault{}
	s.edits = map[string]func(map[string]any){}
	s.quit = make(chan struct{})
}

func (s *Sandbox) lock() {
	s.mu.Lock()
	s.initLocked()
}

// AddOwner adds an owner whose API key is key, or updates the key, zone and
// hours of an existing one (its event types and bookings stay). A nil zone
// means UTC. It panics when key or ownerID is empty or key belongs to another
// owner.
func (s *Sandbox) AddOwner(key, ownerID string, zone *time.Location, hours WeeklyHours) {
	if key == "" || ownerID == "" {
		panic("bookingtest: AddOwner needs a key and an owner ID")
	}
	if zone == nil {
		zone = time.UTC
	}
	s.lock()
	defer s.mu.Unlock()
	if o := s.keys[key]; o != nil && o.id != ownerID {
		panic(fmt.Sprintf("bookingtest: AddOwner: key already belongs to owner %q", o.id))
	}
	o := s.owners[ownerID]
	if o == nil {
		o = &owner{id: ownerID, ceiling: -1}
		s.owners[ownerID] = o
	}
	delete(s.keys, o.key)
	o.key, o.zone, o.hours = key, zone, cloneHours(hours)
	s.keys[key] = o
}

// AddEventType adds an event type to an owner, or replaces the owner's event
// type with the same slug in place. It panics for an unknown owner, an empty
// slug or a non-positive duration.
func (s *Sandbox) AddEventType(ownerID string, et EventType) {
	if et.Slug == "" || et.DurationMinutes <= 0 {
		panic(fmt.Sprintf("bookingtest: AddEventType: invalid event type %+v", et))
	}
	if et.Kind == "" {
		et.Kind = KindSolo
	}
	et.Hosts = slices.Clone(et.Hosts)
	et.RequiredQuestions = slices.Clone(et.RequiredQuestions)
	s.lock()
	defer s.mu.Unlock()
	o := s.ownerLocked(ownerID)
	if et.ScheduleID == "" {
		et.ScheduleID = fmt.Sprintf("sch_%d", s.nextSch)
		s.nextSch++
	}
	if i := o.eventTypeIndex(et.Slug); i >= 0 {
		o.eventTypes[i] = et
		return
	}
	o.eventTypes = append(o.eventTypes, et)
}

// RemoveEventType marks an owner's event type removed, as deleting it in the
// web application would: it disappears from listings, GET /slots and
// POST /bookings answer 404 for it, and its existing bookings stay.
func (s *Sandbox) RemoveEventType(ownerID, slug string) {
	s.lock()
	defer s.mu.Unlock()
	o := s.ownerLocked(ownerID)
	if i := o.eventTypeIndex(slug); i >= 0 {
		o.eventTypes[i].Removed = true
	}
}

// EventTypes returns all of an owner's event types, removed ones included,
// in the order they were added; nil for an unknown owner.
func (s *Sandbox) EventTypes(ownerID string) []EventType {
	s.lock()
	defer s.mu.Unlock()
	o := s.owners[ownerID]
	if o == nil {
		return nil
	}
	out := slices.Clone(o.eventTypes)
	for i := range out {
		out[i].Hosts = slices.Clone(out[i].Hosts)
		out[i].RequiredQuestions = slices.Clone(out[i].RequiredQuestions)
	}
	return out
}

// AddBooking stores a booking for an owner and returns its ID, generating one
// when b.ID is empty. A booking with an existing ID is replaced. When b.End
// is zero and b.EventType names one of the owner's event types, End is Start
// plus its duration. It panics for an unknown owner or when End is not after
// Start.
func (s *Sandbox) AddBooking(ownerID string, b Booking) string {
	s.lock()
	defer s.mu.Unlock()
	o := s.ownerLocked(ownerID)
	if b.End.IsZero() && b.EventType != nil {
		if i := o.eventTypeIndex(*b.EventType); i >= 0 {
			b.End = b.Start.Add(time.Duration(o.eventTypes[i].DurationMinutes) * time.Minute)
		}
	}
	if !b.End.After(b.Start) {
		panic(fmt.Sprintf("bookingtest: AddBooking: end %v is not after start %v", b.End, b.Start))
	}
	if b.ID == "" {
		b.ID = s.newBookingIDLocked()
	}
	s.bookings[b.ID] = &record{owner: ownerID, event: ownerID, b: cloneBooking(b)}
	return b.ID
}

// Bookings returns all stored bookings in an owner's calendar, cancelled and
// past ones included, ordered by start (ties by ID); nil for an unknown
// owner. A round robin teammate's ID (see [EventType.Hosts]) gives the
// bookings that went to that teammate.
func (s *Sandbox) Bookings(ownerID string) []Booking {
	s.lock()
	defer s.mu.Unlock()
	var out []Booking
	for _, r := range s.ownerBookingsLocked(ownerID, false) {
		out = append(out, cloneBooking(*r))
	}
	return out
}

// Slots returns what GET /slots would offer right now for an owner's event
// type, or nil when the type is unknown or removed.
func (s *Sandbox) Slots(ownerID, slug string) []Slot {
	s.lock()
	defer s.mu.Unlock()
	o := s.owners[ownerID]
	if o == nil {
		return nil
	}
	et := o.eventType(slug)
	if et == nil {
		return nil
	}
	return s.slotsLocked(o, et, s.now())
}

// SetLimits sets the POST /bookings rate limits: attempts per client IP per
// minute and per event type per hour. A limit <= 0 disables it. The defaults
// are DefaultPerIPPerMinute and DefaultPerEventPerHour.
func (s *Sandbox) SetLimits(perIPPerMinute, perEventPerHour int) {
	s.lock()
	defer s.mu.Unlock()
	s.perIP, s.perEvent = perIPPerMinute, perEventPerHour
}

// SetBlocked replaces an owner's block list: email addresses
// ("eve@example.com") and domains ("example.net", or "@example.net"),
// matched in any case, whose bookings the owner's settings refuse. A create
// for such an attendee answers 403 {"error":"not booked","status":403},
// and the booking page refuses them too. No entries clears the list. It
// panics for an unknown owner.
func (s *Sandbox) SetBlocked(ownerID string, entries ...string) {
	var list []string
	for _, e := range entries {
		if e = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(e), "@")); e != "" {
			list = append(list, e)
		}
	}
	s.lock()
	defer s.mu.Unlock()
	s.ownerLocked(ownerID).blocked = list
}

// SetCeiling sets the most upcoming confirmed bookings an owner's calendar
// takes: at n, the service is full, and a create answers 503
// {"error":"not booked","status":503} and books nothing (the booking page
// refuses too) until bookings end or are cancelled. n < 0 removes the
// ceiling. It panics for an unknown owner.
func (s *Sandbox) SetCeiling(ownerID string, n int) {
	s.lock()
	defer s.mu.Unlock()
	s.ownerLocked(ownerID).ceiling = max(n, -1)
}

// Full makes an owner's calendar full now: its ceiling is the upcoming
// confirmed bookings it holds, so the next create is refused with 503.
func (s *Sandbox) Full(ownerID string) {
	s.lock()
	defer s.mu.Unlock()
	s.ownerLocked(ownerID).ceiling = s.upcomingLocked(ownerID, s.now())
}

// ExhaustEventLimit records attempts of an owner's event type, as other
// clients of the API and the booking page's visitors make, until its
// hourly limit is reached now: the next creates of it answer 429 without
// Retry-After until the oldest of them is an hour old. Other event types
// are not touched. It does nothing without a limit per event.
func (s *Sandbox) ExhaustEventLimit(ownerID, slug string) {
	s.lock()
	defer s.mu.Unlock()
	s.ownerLocked(ownerID)
	now := s.now()
	for s.perEvent > 0 && s.eventHits.allow(ownerID+"\x00"+slug, s.perEvent, time.Hour, now) {
	}
}

// SetNow swaps the clock; nil means time.Now.
func (s *Sandbox) SetNow(now func() time.Time) {
	if now == nil {
		now = time.Now
	}
	s.lock()
	defer s.mu.Unlock()
	s.now = now
}

func (s *Sandbox) ownerLocked(ownerID string) *owner {
	o := s.owners[ownerID]
	if o == nil {
		panic(fmt.Sprintf("bookingtest: unknown owner %q (AddOwner first)", ownerID))
	}
	return o
}

// ownerBookingsLocked returns the owner's bookings ordered by start, then ID;
// with confirmedOnly, cancelled ones are left out.
func (s *Sandbox) ownerBookingsLocked(ownerID string, confirmedOnly bool) []*Booking {
	var out []*Booking
	for _, r := range s.bookings {
		if r.owner == ownerID && !(confirmedOnly && r.b.Cancelled) {
			out = append(out, &r.b)
		}
	}
	slices.SortFunc(out, func(a, b *Booking) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

func (o *owner) eventTypeIndex(slug string) int {
	return slices.IndexFunc(o.eventTypes, func(et EventType) bool { return et.Slug == slug })
}

// refuses reports whether the owner's block list refuses email.
func (o *owner) refuses(email string) bool {
	email = strings.ToLower(strings.TrimSpace(email))
	_, domain, _ := strings.Cut(email, "@")
	for _, b := range o.blocked {
		if b == email || b == domain {
			return true
		}
	}
	return false
}

// fullLocked reports whether the owner's calendar holds as many upcoming
// confirmed bookings as its ceiling.
func (s *Sandbox) fullLocked(o *owner, now time.Time) bool {
	return o.ceiling >= 0 && s.upcomingLocked(o.id, now) >= o.ceiling
}

// upcomingLocked counts the confirmed bookings in a calendar that have not
// started at now.
func (s *Sandbox) upcomingLocked(calendar string, now time.Time) int {
	n := 0
	for _, b := range s.ownerBookingsLocked(calendar, true) {
		if b.Start.After(now) {
			n++
		}
	}
	return n
}

// eventType returns the owner's non-removed event type with this slug, or nil.
func (o *owner) eventType(slug string) *EventType {
	i := o.eventTypeIndex(slug)
	if i < 0 || o.eventTypes[i].Removed {
		return nil
	}
	return &o.eventTypes[i]
}

// newBookingIDLocked returns an unused ID shaped like upstream's: a random
// (version 4) UUID in lowercase. The IDs need not be unguessable, only
// distinct.
func (s *Sandbox) newBookingIDLocked() string {
	for {
		var b [16]byte
		binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
		binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
		b[6] = b[6]&0x0f | 0x40 // version 4
		b[8] = b[8]&0x3f | 0x80 // RFC 9562 variant
		id := fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
		if s.bookings[id] == nil {
			return id
		}
	}
}

// cloneBooking copies b deeply, so callers never share memory with the
// Sandbox's state.
func cloneBooking(b Booking) Booking {
	b.EventType = cloneString(b.EventType)
	b.BookerName = cloneString(b.BookerName)
	b.BookerEmail = cloneString(b.BookerEmail)
	b.Answers = maps.Clone(b.Answers)
	return b
}

func cloneString(p *string) *string {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func cloneHours(h WeeklyHours) WeeklyHours {
	out := make(WeeklyHours, len(h))
	for d, rs := range h {
		out[d] = slices.Clone(rs)
	}
	return out
}

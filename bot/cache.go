package bot

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/bookbot/bookbot/booking"
)

// userZones caches each person's Slack time zone (users.info), so every
// time is shown in the zone of the person reading it.
type userZones struct {
	profile func(ctx context.Context, user string) (zone string, err error) // profileZone
	ttl     time.Duration
	now     func() time.Time

	mu    sync.Mutex
	zones map[string]zoneEntry
}

type zoneEntry struct {
	loc *time.Location
	at  time.Time
	// guess is set when Slack named no zone bookbot knows, and loc is UTC.
	guess bool
}

func newUserZones(profile func(ctx context.Context, user string) (string, error), ttl time.Duration, now func() time.Time) *userZones {
	return &userZones{profile: profile, ttl: ttl, now: now, zones: make(map[string]zoneEntry)}
}

// zone returns the person's zone, or UTC when Slack does not say (the
// rendering always names the zone, so UTC is never mistaken for local).
func (u *userZones) zone(ctx context.Context, userID string) *time.Location {
	u.mu.Lock()
	e, ok := u.zones[userID]
	u.mu.Unlock()
	if ok && u.now().Sub(e.at) < u.ttl {
		return e.loc
	}
	loc, guess := time.UTC, true
	tz, err := u.profile(ctx, userID)
	switch {
	case err == nil && tz != "":
		if l, err := booking.LoadZone(tz); err == nil {
			loc, guess = l, false
		}
	case ok:
		return e.loc // keep the last known zone through a Slack hiccup
	case err != nil:
		return loc // a failed lookup is not remembered: the next request asks again
	}
	u.mu.Lock()
	u.zones[userID] = zoneEntry{loc: loc, at: u.now(), guess: guess}
	u.mu.Unlock()
	return loc
}

// known returns the person's zone as Slack names it, asking Slack when the
// cached one is older than the TTL. Unlike zone it never guesses: when
// Slack cannot be asked (or names no zone bookbot knows) and no zone of
// theirs is known, it returns an error, not UTC. Through a Slack hiccup
// the last known zone is kept.
func (u *userZones) known(ctx context.Context, userID string) (*time.Location, error) {
	u.mu.Lock()
	e, ok := u.zones[userID]
	u.mu.Unlock()
	ok = ok && !e.guess
	if ok && u.now().Sub(e.at) < u.ttl {
		return e.loc, nil
	}
	tz, err := u.profile(ctx, userID)
	if err == nil {
		var loc *time.Location
		if loc, err = zoneOf(tz); err == nil {
			u.mu.Lock()
			u.zones[userID] = zoneEntry{loc: loc, at: u.now()}
			u.mu.Unlock()
			return loc, nil
		}
	}
	if ok {
		return e.loc, nil
	}
	return nil, fmt.Errorf("the time zone of %s is not known: %w", userID, err)
}

// zoneOf is the zone Slack names in a user's profile.
func zoneOf(name string) (*time.Location, error) {
	if name == "" {
		return nil, errors.New("no time zone in the Slack profile")
	}
	loc, err := booking.LoadZone(name)
	if err != nil {
		return nil, fmt.Errorf("the Slack profile names the time zone %q, which bookbot does not know: %w", name, err)
	}
	return loc, nil
}

// cached returns the person's zone if it is known, without asking Slack.
func (u *userZones) cached(userID string) (*time.Location, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	e, ok := u.zones[userID]
	return e.loc, ok
}

// eventTypeCache keeps the event types briefly, so a modal can open with
// them inside Slack's 3-second trigger window.
type eventTypeCache struct {
	booker Booker
	ttl    time.Duration
	now    func() time.Time

	mu    sync.Mutex
	types []booking.EventType
	at    time.Time
}

func newEventTypeCache(b Booker, ttl time.Duration, now func() time.Time) *eventTypeCache {
	return &eventTypeCache{booker: b, ttl: ttl, now: now}
}

// get returns fresh event types from the API and remembers them.
func (c *eventTypeCache) get(ctx context.Context) ([]booking.EventType, error) {
	types, err := c.booker.EventTypes(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.types, c.at = types, c.now()
	c.mu.Unlock()
	return types, nil
}

// recent returns the remembered types when they are young enough.
func (c *eventTypeCache) recent() ([]booking.EventType, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.types == nil || c.now().Sub(c.at) > c.ttl {
		return nil, false
	}
	return c.types, true
}

// modalTTL is how long a modal's pick of event is kept without a
// view_closed; slotsTTL is how long the slot list it shows is kept. After
// staleSlots a submission re-checks its slot with the API anyway, so an
// older list only saves a GET /slots when the person picks another day;
// past slotsTTL that pick loads the slots afresh.
const (
	modalTTL = 2 * time.Hour
	slotsTTL = 15 * time.Minute
)

// modalSlots remembers the slots each open booking modal shows, so a
// submission books exactly a slot the API offered, byte for byte.
//
// Modals showing the same slots share one list: a list equal to the newest
// one kept for its event type is replaced by it, so a hundred modals opened
// on an unchanged calendar keep one list, not a hundred.
type modalSlots struct {
	now func() time.Time

	mu     sync.Mutex
	views  map[string]shownSlots
	latest map[string]wanted     // the event each modal last asked slots for
	newest map[string]shownSlots // by calendar and event type: the newest list, shared

	viewsPeak, latestPeak int // most entries views and latest have held
}

type wanted struct {
	eventType string
	at        time.Time
}

type shownSlots struct {
	cal       string // the calendar (calendarID) they are of
	eventType string
	slots     []booking.Slot
	at        time.Time
}

func newModalSlots(now func() time.Time) *modalSlots {
	return &modalSlots{now: now, views: make(map[string]shownSlots), latest: make(map[string]wanted), newest: make(map[string]shownSlots)}
}

// want records that a modal now asks for eventType's slots; an answer for
// an earlier pick is then dropped (wanted reports false).
func (m *modalSlots) want(viewID, eventType string) {
	m.mu.Lock()
	m.latest[viewID] = wanted{eventType, m.now()}
	m.latestPeak = max(m.latestPeak, len(m.latest))
	m.mu.Unlock()
}

func (m *modalSlots) wanted(viewID, eventType string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	latest, ok := m.latest[viewID]
	return !ok || latest.eventType == eventType
}

func (m *modalSlots) put(viewID, eventType string, slots []booking.Slot) {
	m.putFor(viewID, booking.Owner, eventType, slots)
}

// putFor records the slots a modal shows of the calendar cal (calendarID):
// lists are shared among modals of one calendar only.
func (m *modalSlots) putFor(viewID, cal, eventType string, slots []booking.Slot) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	// Modals are short-lived; forget those closed without a view_closed.
	for id, s := range m.views {
		if now.Sub(s.at) > slotsTTL {
			delete(m.views, id)
		}
	}
	for et, s := range m.newest {
		if now.Sub(s.at) > slotsTTL {
			delete(m.newest, et)
		}
	}
	for id, w := range m.latest {
		if now.Sub(w.at) > modalTTL {
			delete(m.latest, id)
		}
	}
	m.views, m.viewsPeak = shrunk(m.views, m.viewsPeak)
	m.latest, m.latestPeak = shrunk(m.latest, m.latestPeak)
	newest := cal + "\x00" + eventType
	if prev, ok := m.newest[newest]; ok && sameSlots(prev.slots, slots) {
		slots = prev.slots
	}
	shown := shownSlots{cal: cal, eventType: eventType, slots: slots, at: now}
	m.newest[newest] = shown
	m.views[viewID] = shown
	m.viewsPeak = max(m.viewsPeak, len(m.views))
}

// shrunk returns m, or when m holds under a quarter of the most it has held
// (peak), a copy in a map of its own size, since a Go map keeps the space of
// deleted entries; and the peak from then on.
func shrunk[K comparable, V any](m map[K]V, peak int) (map[K]V, int) {
	if 4*len(m) >= peak {
		return m, peak
	}
	c := make(map[K]V, len(m))
	maps.Copy(c, m)
	return c, len(c)
}

// sameSlots reports whether two lists offer the same slots, as the API
// wrote them.
func sameSlots(a, b []booking.Slot) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].EventType() != b[i].EventType() || a[i].RawStart() != b[i].RawStart() || a[i].RawEnd() != b[i].RawEnd() {
			return false
		}
	}
	return true
}

func (m *modalSlots) get(viewID string) (shownSlots, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.views[viewID]
	if ok && m.now().Sub(s.at) > slotsTTL {
		return shownSlots{}, false // kept until the next put's sweep, but too old to show
	}
	return s, ok
}

func (m *modalSlots) drop(viewID string) {
	m.mu.Lock()
	delete(m.views, viewID)
	delete(m.latest, viewID)
	m.mu.Unlock()
}

// find returns the shown slot with this exact start string, and how old the
// list it came from is.
func (s shownSlots) find(rawStart string) (booking.Slot, bool) {
	for _, sl := range s.slots {
		if sl.RawStart() == rawStart {
			return sl, true
		}
	}
	return booking.Slot{}, false
}

// personZone is the person's zone as Slack names it; false, and UTC,
// when Slack cannot say now and bookbot never learned it.
func (b *Bot) personZone(ctx context.Context, user string) (*time.Location, bool) {
	loc, err := b.users.known(ctx, user)
	if err != nil {
		b.log.Info("the person's time zone is not known", "user", user, "err", err)
		return time.UTC, false
	}
	return loc, true
}

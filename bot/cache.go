package bot

import (
	"context"
	"sync"
	"time"

	"github.com/bookbot/bookbot/booking"
)

// userZones caches each person's Slack time zone (users.info), so every
// time is shown in the zone of the person reading it.
type userZones struct {
	slack SlackAPI
	ttl   time.Duration
	now   func() time.Time

	mu    sync.Mutex
	zones map[string]zoneEntry
}

type zoneEntry struct {
	loc *time.Location
	at  time.Time
}

func newUserZones(s SlackAPI, ttl time.Duration, now func() time.Time) *userZones {
	return &userZones{slack: s, ttl: ttl, now: now, zones: make(map[string]zoneEntry)}
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
	loc := time.UTC
	info, err := u.slack.GetUserInfoContext(ctx, userID)
	switch {
	case err == nil && info.TZ != "":
		if l, err := booking.LoadZone(info.TZ); err == nil {
			loc = l
		}
	case ok:
		return e.loc // keep the last known zone through a Slack hiccup
	case err != nil:
		return loc // a failed lookup is not remembered: the next request asks again
	}
	u.mu.Lock()
	u.zones[userID] = zoneEntry{loc: loc, at: u.now()}
	u.mu.Unlock()
	return loc
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

// modalTTL is how long a modal's slots are kept without a view_closed.
const modalTTL = 2 * time.Hour

// modalSlots remembers the slots each open booking modal shows, so a
// submission books exactly a slot the API offered, byte for byte.
type modalSlots struct {
	now func() time.Time

	mu     sync.Mutex
	views  map[string]shownSlots
	latest map[string]wanted // the event each modal last asked slots for
}

type wanted struct {
	eventType string
	at        time.Time
}

type shownSlots struct {
	eventType string
	slots     []booking.Slot
	at        time.Time
}

func newModalSlots(now func() time.Time) *modalSlots {
	return &modalSlots{now: now, views: make(map[string]shownSlots), latest: make(map[string]wanted)}
}

// want records that a modal now asks for eventType's slots; an answer for
// an earlier pick is then dropped (wanted reports false).
func (m *modalSlots) want(viewID, eventType string) {
	m.mu.Lock()
	m.latest[viewID] = wanted{eventType, m.now()}
	m.mu.Unlock()
}

func (m *modalSlots) wanted(viewID, eventType string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	latest, ok := m.latest[viewID]
	return !ok || latest.eventType == eventType
}

func (m *modalSlots) put(viewID, eventType string, slots []booking.Slot) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	// Modals are short-lived; forget those closed without a view_closed.
	for id, s := range m.views {
		if now.Sub(s.at) > modalTTL {
			delete(m.views, id)
		}
	}
	for id, w := range m.latest {
		if now.Sub(w.at) > modalTTL {
			delete(m.latest, id)
		}
	}
	m.views[viewID] = shownSlots{eventType: eventType, slots: slots, at: now}
}

func (m *modalSlots) get(viewID string) (shownSlots, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.views[viewID]
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

package bot

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/journal"
	"github.com/bookbot/bookbot/notices"
	"github.com/bookbot/bookbot/personal"
)

// The calendar a person acts on: their own when they connected it, else
// the owner's. Every flow reaches the booking API through calendarFor (or
// actsOn, which does not count as their use of it), and tells a person who
// has no calendar to act on so with noCalendarMessage. A calendar's public
// booking page is known by its address (pageOf, slugOf).

// Calendars makes the client of a person's own calendar
// (*booking.Calendars, adapted): one per key, kept while it is used.
type Calendars interface {
	// For returns the client of user's calendar, whose ID is id, acting
	// with key; a 401 it gets goes to Bot.KeyRefused.
	For(user, id string, key booking.Key) (Booker, error)
	// Drop lets go of user's client.
	Drop(user string)
}

// touchEvery is how often an account's last use is written: not on every
// command.
const touchEvery = time.Minute

// NoCalendarError is the answer of calendarFor when a person has no
// calendar to act on: bookbot runs without the owner's key and they have
// not connected theirs, or the API refused their key (Reconnect).
type NoCalendarError struct {
	Reconnect bool
	// Unopened: the stored key does not open under BOOKBOT_SECRET_KEY,
	// which changed without `bookbot keys rotate`: the operator's to fix.
	Unopened bool
	Err      error // what refused the key, when something did
}

func (e *NoCalendarError) Error() string {
	if e.Unopened {
		return "your calendar's key cannot be opened: the operator's secret key changed; ask them to fix it, or connect your calendar again"
	}
	if e.Reconnect {
		return "your calendar's key was refused by the booking service: connect your calendar again"
	}
	return "connect your calendar: this bookbot acts only on calendars people connect"
}

func (e *NoCalendarError) Unwrap() error { return e.Err }

// errNoSecretKey is the answer of calendarFor for a person who connected
// a calendar when bookbot runs without BOOKBOT_SECRET_KEY.
var errNoSecretKey = errors.New("your calendar's key cannot be opened: the operator has not set BOOKBOT_SECRET_KEY")

// calendar is a calendar a person acts on: the owner's or their own, with
// its event types briefly cached.
type calendar struct {
	Booker
	label string // booking.Owner or the Slack user ID
	// id is which calendar it is, the same for everyone acting on it:
	// booking.Owner, or a person's calendar ID (account.CalendarOf).
	id    string
	gen   int64 // a person's: when the key was connected (UnixNano); 0: the owner's
	types *eventTypeCache

	recent  time.Duration // Config.RecentList
	mu      sync.Mutex
	readers map[string]*reader // by what reads: the reminders, the notices
}

// reader is the calendar's reader of its bookings for one kind of
// periodic work, made at its first use and kept with the calendar.
func (c *calendar) reader(kind string) *reader {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.readers[kind]; ok {
		return r
	}
	r := &reader{c: c}
	if c.recent > 0 {
		r.recent = c.Booker.Recent(c.recent)
	}
	if c.readers == nil {
		c.readers = map[string]*reader{}
	}
	c.readers[kind] = r
	return r
}

// reader reads a calendar's bookings for one kind of periodic work (the
// reminders, the live notices) through a booking.Recent of its own, so the
// kinds of work on one calendar take each other's list when it is recent
// and cost the API one read between them, as the owner's calendar's do.
type reader struct {
	c      *calendar
	recent *booking.Recent // nil: each read is the calendar's own
}

func (r *reader) Bookings(ctx context.Context) ([]booking.Booking, error) {
	if r.recent == nil {
		return r.c.Bookings(ctx)
	}
	l, err := r.recent.Bookings(ctx)
	return l, r.c.own(err)
}

// BookingsAsked is Bookings with when the list was asked for, which a
// shared list can predate by up to RecentList: the notices date their
// read by it, as the owner's calendar's do.
func (r *reader) BookingsAsked(ctx context.Context) ([]booking.Booking, time.Time, error) {
	if r.recent == nil {
		l, err := r.c.Bookings(ctx)
		return l, time.Time{}, err // zero: the watcher's now
	}
	l, asked, err := r.recent.BookingsAsked(ctx)
	return l, asked, r.c.own(err)
}

func (r *reader) EventTypes(ctx context.Context) ([]booking.EventType, error) {
	return r.c.EventTypes(ctx)
}

// calendarID names the calendar c is, and which connection of it: what
// an offer or a form read is tied to, so that nothing books on a calendar
// connected (or disconnected) since.
func (c *calendar) calendarID() string {
	if c.label == booking.Owner {
		return booking.Owner
	}
	return c.label + "@" + strconv.FormatInt(c.gen, 10)
}

// own wraps a refusal of a person's own key as a *NoCalendarError, so it
// reads "connect your calendar again", not "the owner must fix bookbot's
// key".
func (c *calendar) own(err error) error {
	if err != nil && c.label != booking.Owner && errors.Is(err, booking.ErrUnauthorized) {
		return &NoCalendarError{Reconnect: true, Err: err}
	}
	return err
}

func (c *calendar) EventTypes(ctx context.Context) ([]booking.EventType, error) {
	t, err := c.Booker.EventTypes(ctx)
	return t, c.own(err)
}

func (c *calendar) Slots(ctx context.Context, eventType string) ([]booking.Slot, error) {
	s, err := c.Booker.Slots(ctx, eventType)
	return s, c.own(err)
}

func (c *calendar) Bookings(ctx context.Context) ([]booking.Booking, error) {
	l, err := c.Booker.Bookings(ctx)
	return l, c.own(err)
}

// Create and Cancel say a refusal of a person's own key in their
// outcome's words as "connect your calendar again".
func (c *calendar) Create(ctx context.Context, req booking.CreateRequest) (*booking.Result, error) {
	res, err := c.Booker.Create(ctx, req)
	if res != nil {
		res.Err = c.own(res.Err)
	}
	return res, c.own(err)
}

func (c *calendar) Cancel(ctx context.Context, id string) (*booking.Result, error) {
	res, err := c.Booker.Cancel(ctx, id)
	if res != nil {
		res.Err = c.own(res.Err)
	}
	return res, c.own(err)
}

// calendarSet is the calendars in use, by label.
type calendarSet struct {
	ttl    time.Duration
	now    func() time.Time
	recent time.Duration // Config.RecentList

	mu      sync.Mutex
	byLabel map[string]*calendar
	owners  map[string]bool // the people last seen acting on the owner's calendar
}

func newCalendarSet(ttl, recent time.Duration, now func() time.Time) *calendarSet {
	return &calendarSet{ttl: ttl, recent: recent, now: now, byLabel: map[string]*calendar{}, owners: map[string]bool{}}
}

// owner is the owner's calendar, acting through bk; one kept through
// another client is replaced, its cache with it.
func (s *calendarSet) owner(bk Booker) *calendar {
	return s.of(booking.Owner, booking.Owner, 0, bk)
}

// of is label's calendar, the calendar id, in its connection gen, acting
// through bk; a calendar kept for label through another client (a new
// key) is replaced, its cache with it.
func (s *calendarSet) of(label, id string, gen int64, bk Booker) *calendar {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.byLabel[label]; ok && c.Booker == bk && c.gen == gen && c.id == id {
		return c
	}
	delete(s.owners, label)
	c := &calendar{Booker: bk, label: label, id: id, gen: gen, recent: s.recent}
	c.types = newEventTypeCache(c, s.ttl, s.now)
	s.byLabel[label] = c
	return c
}

// kept is label's calendar if one is in use, without asking anything.
func (s *calendarSet) kept(label string) *calendar {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byLabel[label]
}

func (s *calendarSet) drop(label string) {
	s.mu.Lock()
	delete(s.byLabel, label)
	delete(s.owners, label)
	s.mu.Unlock()
}

// actsOnOwner records that user was found acting on the owner's calendar.
func (s *calendarSet) actsOnOwner(user string) {
	s.mu.Lock()
	delete(s.byLabel, user)
	s.owners[user] = true
	s.mu.Unlock()
}

// onOwner reports whether user was last found acting on the owner's
// calendar.
func (s *calendarSet) onOwner(user string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.owners[user]
}

// calendarFor is the calendar user acts on: their own when they
// connected it, else the owner's (BOOKING_API_KEY). Without an owner's
// key, or when their key was refused, it is a *NoCalendarError, which
// the messages turn into "connect your calendar" with a Connect button;
// nothing falls back to the owner's calendar then.
func (b *Bot) calendarFor(ctx context.Context, user string) (*calendar, error) {
	return b.resolve(ctx, user, true)
}

// upcoming is the calendar user acts on, as calendarFor gives it, and its
// upcoming bookings; the calendar is nil when there is none (err says why).
func (b *Bot) upcoming(ctx context.Context, user string) (*calendar, []booking.Booking, error) {
	cal, err := b.calendarFor(ctx, user)
	if err != nil {
		return nil, nil, err
	}
	list, err := cal.Bookings(ctx)
	return cal, list, err
}

// CalendarOf is the calendar user's reminders and agenda come from, as
// calendarFor gives it, without counting as their use of it: its label
// and the reminders' reader of its bookings (see Config.RecentList).
func (b *Bot) CalendarOf(ctx context.Context, user string) (string, personal.Lister, error) {
	return b.readerOf(ctx, user, "reminders")
}

// NoticesOf is the calendar of a person's own key, a, for its live
// notices: its ID and the notices' reader of its bookings, the same
// reader as long as the calendar acts with the same key. It takes the
// account already read, as the notices look at every account in turn.
func (b *Bot) NoticesOf(ctx context.Context, a account.Account) (string, notices.Lister, error) {
	key, err := a.Key(b.cfg.Sealer)
	cal, err := b.ownCalendar(ctx, a, key, err, false)
	if err != nil {
		return "", nil, err
	}
	return cal.id, cal.reader("notices"), nil
}

// noticed reports whether a new booking of slug on cal is announced by a
// live notice: a person's own calendar's unless they turned its notices
// off, the owner's calendar's as Config.Noticed says.
func (b *Bot) noticed(ctx context.Context, cal *calendar, slug string) bool {
	if cal.label != booking.Owner && b.cfg.Accounts != nil {
		if a, ok, err := b.cfg.Accounts.Get(ctx, cal.label); err == nil && ok && a.Notices != account.NoticesOff {
			return true
		}
	}
	return cal.id == booking.Owner && b.cfg.Noticed != nil && b.cfg.Noticed(slug)
}

// actsOn is the calendar user acts on, as calendarFor gives it, without
// counting as their use of it.
func (b *Bot) actsOn(ctx context.Context, user string) (*calendar, error) {
	return b.resolve(ctx, user, false)
}

// entryOn reports whether e went to the calendar c: by the calendar's ID,
// or, for an entry older than IDs, by its person.
func entryOn(e journal.Entry, c *calendar) bool {
	if id := e.CalendarOf(); id != "" {
		return id == c.id
	}
	return e.Calendar == c.label
}

func (b *Bot) readerOf(ctx context.Context, user, kind string) (string, *reader, error) {
	cal, err := b.actsOn(ctx, user)
	if err != nil {
		return "", nil, err
	}
	return cal.label, cal.reader(kind), nil
}

// resolve is calendarFor; touch records the use of a person's own key.
func (b *Bot) resolve(ctx context.Context, user string, touch bool) (*calendar, error) {
	if b.cfg.Accounts != nil {
		a, key, err := account.Open(ctx, b.cfg.Accounts, b.cfg.Sealer, user)
		switch {
		case errors.Is(err, account.ErrNotConnected): // the owner's
		case err == nil, account.Unusable(err):
			return b.ownCalendar(ctx, a, key, err, touch)
		default:
			return nil, fmt.Errorf("which calendar you act on could not be read: %w", err)
		}
	}
	b.cals.actsOnOwner(user)
	if b.booking == nil {
		return nil, &NoCalendarError{}
	}
	return b.cals.owner(b.booking), nil
}

// ownCalendar is the calendar of a's key, as account.Open or
// Account.Key gave it: key, or err, why it cannot be used.
func (b *Bot) ownCalendar(ctx context.Context, a account.Account, key booking.Key, err error, touch bool) (*calendar, error) {
	switch {
	case errors.Is(err, account.ErrReconnect):
		return nil, &NoCalendarError{Reconnect: true}
	case errors.Is(err, account.ErrNoSealer), b.cfg.Calendars == nil:
		return nil, errNoSecretKey
	case err != nil:
		b.log.Error("a stored key does not open under BOOKBOT_SECRET_KEY: it changed without `bookbot keys rotate`; set the secret key the keys were sealed with (`bookbot check` counts the keys that do not open). The key is kept; the person is told to ask you", "user", a.User, "err", err)
		return nil, &NoCalendarError{Unopened: true, Err: err}
	}
	user, id := a.User, account.CalendarOf(a, key, b.cfg.Sealer, b.cfg.IsOwnerKey)
	bk, err := b.cfg.Calendars.For(user, id, key)
	if err != nil {
		return nil, err
	}
	if now := b.cfg.Now(); touch && now.Sub(a.LastUsed) >= touchEvery {
		if err := b.cfg.Accounts.Touch(ctx, user, now); err != nil {
			b.log.Warn("an account's last use could not be recorded", "user", user, "err", err)
		}
	}
	return b.cals.of(user, id, a.ConnectedAt.UnixNano(), bk), nil
}

// recentTypes is the event types of user's calendar if they are cached,
// from memory only (at ack time), and the calendar (calendarID) they are
// of: their own calendar's when one is in use, the owner's when this
// process knows they act on it. Never another calendar's: when which
// calendar they act on is not known here (right after a connect, a
// restart, another replica's), there are none.
func (b *Bot) recentTypes(user string) ([]booking.EventType, string, bool) {
	c := b.cals.kept(user)
	if c == nil && (b.cfg.Accounts == nil || b.cals.onOwner(user)) {
		c = b.cals.kept(booking.Owner)
	}
	if c == nil {
		return nil, "", false
	}
	t, fresh := c.types.recent()
	return t, c.calendarID(), fresh
}

// keptTypes are the event types of label's calendar if they are cached.
func (b *Bot) keptTypes(label string) []booking.EventType {
	if label == "" {
		label = booking.Owner
	}
	if c := b.cals.kept(label); c != nil {
		t, _ := c.types.recent()
		return t
	}
	return nil
}

// calendarTypes are the event types of the calendar a journal entry went
// to, for titles, read through the key of someone acting on it now; nil
// when no key reaches it or it cannot be read: slugs do then, never the
// titles of the calendar its person acts on now.
func (b *Bot) calendarTypes(ctx context.Context, e journal.Entry) []booking.EventType {
	if e.CalendarOf() == booking.Owner {
		if b.booking == nil {
			return nil
		}
		return b.titles(ctx, b.cals.owner(b.booking))
	}
	if cal := b.entryCalendar(ctx, e); cal != nil {
		return b.titles(ctx, cal)
	}
	return nil
}

// entryCalendar is the person's own calendar e went to, through whoever
// acts on it now: the person whose key it went through, else an allowed
// person who connected the same calendar; nil when nobody does.
func (b *Bot) entryCalendar(ctx context.Context, e journal.Entry) *calendar {
	if e.Calendar != "" {
		if cal, err := b.actsOn(ctx, e.Calendar); err == nil && entryOn(e, cal) {
			return cal
		}
	}
	id := e.CalendarOf()
	if id == "" || b.cfg.Accounts == nil || b.cfg.Sealer == nil {
		return nil
	}
	all, err := b.cfg.Accounts.All(ctx)
	if err != nil {
		return nil
	}
	for _, a := range all {
		key, err := a.Key(b.cfg.Sealer)
		if err != nil || !b.cfg.Allowed(a.User) || account.CalendarOf(a, key, b.cfg.Sealer, b.cfg.IsOwnerKey) != id {
			continue
		}
		if cal, err := b.ownCalendar(ctx, a, key, nil, false); err == nil {
			return cal
		}
	}
	return nil
}

// titles are the event types of cal, for titles; slugs do when they
// cannot be read. cal nil: the owner's, if any are cached.
func (b *Bot) titles(ctx context.Context, cal *calendar) []booking.EventType {
	if cal == nil {
		return b.keptTypes(booking.Owner)
	}
	types, _ := cal.types.recent()
	if types == nil {
		types, _ = cal.types.get(ctx)
	}
	return types
}

// titlesFor are the event types of the calendar user acts on, for titles.
func (b *Bot) titlesFor(ctx context.Context, user string) []booking.EventType {
	cal, err := b.resolve(ctx, user, false)
	if err != nil {
		return nil
	}
	return b.titles(ctx, cal)
}

// reconnectMessage tells a person the booking service refused their key,
// so bookbot stopped using it, and offers to connect again.
func reconnectMessage() message {
	text := "Your calendar's key was refused by the booking service (revoked or rotated), so bookbot stopped using it. Connect your calendar again with a new key."
	return message{Text: text, Blocks: []slack.Block{
		section(":warning: " + escape(text)),
		slack.NewActionBlock("reconnect_actions", connectButton("Connect again")),
	}}
}

// noCalendarMessage is what a flow answers with a *NoCalendarError.
func noCalendarMessage(e *NoCalendarError) message {
	if e.Unopened {
		text := "Your calendar's key cannot be opened: the operator's secret key changed, so bookbot cannot use your key. Ask the operator to fix it; connecting your calendar again also works. Nothing was done."
		return message{Text: text, Blocks: []slack.Block{
			section(":warning: " + escape(text)),
			slack.NewActionBlock("unopened_actions", connectButton("Connect again")),
		}}
	}
	if e.Reconnect {
		return reconnectMessage()
	}
	text := "Connect your calendar first: this bookbot acts only on calendars people connect, and yours is not connected."
	return message{Text: text, Blocks: []slack.Block{
		section(":calendar: " + escape(text)),
		slack.NewActionBlock("connect_actions", connectButton("Connect your calendar")),
	}}
}

// Booking pages' addresses. A link to one of a page's event types is the
// page's address, then /event-slug, with any query or fragment and a
// trailing slash or not; the scheme may differ, the host's case too.

// pageOf checks the address of a booking page a person gave, and returns
// it as kept, without query, fragment or trailing slash; problem says
// what is wrong with it (plain text), "" when nothing.
func pageOf(raw string) (page, problem string) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
		return "", "Give the page's whole address, such as https://book.example.com/you."
	case u.User != nil:
		return "", "Give the page's address without a name or password in it."
	}
	u.RawQuery, u.Fragment, u.RawFragment = "", "", ""
	u.Path, u.RawPath = strings.TrimRight(u.Path, "/"), ""
	return u.String(), ""
}

// pageParts are a page's host, in lower case, and path, without a
// trailing slash; ok is false when addr is no http(s) address.
func pageParts(addr string) (host, path string, ok bool) {
	u, err := url.Parse(addr)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", "", false
	}
	return strings.ToLower(u.Host), strings.TrimRight(u.Path, "/"), true
}

// samePage reports whether two addresses are of one booking page.
func samePage(a, b string) bool {
	ah, ap, aok := pageParts(a)
	bh, bp, bok := pageParts(b)
	return aok && bok && ah == bh && ap == bp
}

// slugOf is the event slug link names on page; ok is false when link is
// not to one of page's event types.
func slugOf(page, link string) (slug string, ok bool) {
	ph, pp, pok := pageParts(page)
	lh, lp, lok := pageParts(link)
	if !pok || !lok || ph != lh {
		return "", false
	}
	rest, found := strings.CutPrefix(lp, pp+"/")
	if !found || rest == "" || strings.Contains(rest, "/") {
		return "", false
	}
	return rest, true
}

package booking

import (
	"cmp"
	"context"
	"log/slog"
	"sync"
	"time"
)

// TypeStore keeps the event type each booking of a calendar was last
// listed with, until after the booking ends: the service lists a booking
// its attendee rescheduled with event_type null from then on, so a
// process that never listed it before (one started since, another
// replica) would otherwise not know it. A record is the calendar's ID (WithCalendar)
// and the booking's ID: booking IDs are the service's, unique across its
// accounts, and the calendar keeps one calendar's records from ever
// filling another's list all the same. store/bolt and store/pg implement it;
// typestoretest is the suite both pass.
type TypeStore interface {
	// Types returns what is kept for each of ids on calendar, by booking
	// ID; an ID with nothing kept is absent.
	Types(ctx context.Context, calendar string, ids []string) (map[string]KeptType, error)
	// Keep records each of kept on calendar, replacing what was kept for
	// its booking; of a booking given twice, the last counts.
	Keep(ctx context.Context, calendar string, kept []KeptType) error
	// Prune forgets, on every calendar, what is kept of the bookings that
	// ended before cutoff.
	Prune(ctx context.Context, cutoff time.Time) error
}

// KeptType is the event type a booking was last listed with.
type KeptType struct {
	BookingID string
	EventType string    // the event type's slug
	End       time.Time // the booking's end as last listed: kept until then
}

// WithTypeStore keeps the event type of each booking the client lists
// with one in s, and gives a booking listed with none the one kept for
// it there (see Bookings).
func WithTypeStore(s TypeStore) Option { return func(c *Client) { c.kept.store = s } }

// keptAs is the calendar the client's event types are kept under: its ID,
// shared by everyone acting on it, or the owner's when it has none (as
// the journal reads it).
func (c *Client) keptAs() string { return cmp.Or(c.calendarID, c.calendar, Owner) }

// typeStoreTimeout bounds each call to the TypeStore: a list read waits
// for it, and its answer is shown without it rather than late.
const typeStoreTimeout = 5 * time.Second

// keptTypes is what a client knows of the event types of the bookings its
// latest lists showed: each booking's as the store keeps it (saved), or
// as it was listed when the store could not keep it. It holds the IDs of
// the last two lists only, so it is bounded, and one list that left
// bookings out for a moment does not make the next forget them. What it
// does not hold it asks the store for, once, and it writes to the store
// only what the store does not hold yet: a read that shows what the last
// one did writes nothing.
type keptTypes struct {
	store TypeStore // nil: memory only

	mu         sync.Mutex
	last, prev map[string]known // by booking ID
}

// known is one booking's event type as a client knows it; slug "": the
// booking was listed without one and nothing is kept for it.
type known struct {
	slug  string
	end   time.Time
	saved bool // the store holds slug and end for it
}

// fill gives each booking of list with a null event type the one known for
// its ID, and keeps what list shows. calendar is the client's calendar ID
// (keptAs); the store's failures are logged to log, and list is shown as
// it was listed. Without write, what changed is not written now but at the
// next read that writes.
func (k *keptTypes) fill(ctx context.Context, calendar string, log *slog.Logger, list []Booking, write bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var stored map[string]KeptType
	var unread bool // the store was asked, and could not answer
	if k.store != nil {
		var ask []string
		for _, b := range list {
			if _, ok := k.lookup(b.ID); !ok {
				ask = append(ask, b.ID)
			}
		}
		if len(ask) > 0 {
			var err error
			sctx, cancel := context.WithTimeout(ctx, typeStoreTimeout)
			stored, err = k.store.Types(sctx, calendar, ask)
			cancel()
			if unread = err != nil; unread {
				log.LogAttrs(ctx, slog.LevelWarn, "event types: the kept event types of bookings could not be read; a booking listed without one may show none",
					slog.String("calendar", calendar), slog.String("err", err.Error()))
			}
		}
	}
	seen := make(map[string]known, len(list))
	var changed []KeptType
	for i := range list {
		b := &list[i]
		if first, dup := seen[b.ID]; dup {
			// An ID listed twice: its first entry counts.
			if !b.EventType.Valid && first.slug != "" {
				b.EventType = Some(first.slug)
			}
			continue
		}
		was, ok := k.lookup(b.ID)
		if kt, found := stored[b.ID]; !ok && found {
			was, ok = known{slug: kt.EventType, end: kt.End, saved: true}, true
		}
		if !b.EventType.Valid && ok && was.slug != "" {
			b.EventType = Some(was.slug)
		}
		if !b.EventType.Valid {
			if ok || !unread {
				seen[b.ID] = known{} // nothing kept (a legacy record): not asked again
			}
			continue
		}
		now := known{slug: b.EventType.String, end: b.End}
		now.saved = k.store == nil || ok && was.saved && was.slug == now.slug && was.end.Equal(now.end)
		if !now.saved {
			changed = append(changed, KeptType{BookingID: b.ID, EventType: now.slug, End: now.end})
		}
		seen[b.ID] = now
	}
	if len(changed) > 0 && write {
		if err := k.keep(ctx, calendar, changed); err != nil {
			log.LogAttrs(ctx, slog.LevelWarn, "event types: the event types of bookings could not be kept; tried again at the next read",
				slog.String("calendar", calendar), slog.Int("bookings", len(changed)), slog.String("err", err.Error()))
		} else {
			for _, kt := range changed {
				seen[kt.BookingID] = known{slug: kt.EventType, end: kt.End, saved: true}
			}
		}
	}
	k.prev, k.last = k.last, seen
}

// created keeps the event type of a booking a create made that no list has
// shown yet (it lies beyond the first MaxListed, or the list could not be
// read): the receipt names it, and the event type is the one asked for.
// A booking a list showed (verified) is left to what the list showed, and
// a receipt of a create not Confirmed may name another booking.
func (k *keptTypes) created(ctx context.Context, calendar string, log *slog.Logger, slug string, res *Result) {
	if res == nil || res.Outcome != Confirmed || res.Verified || res.Receipt == nil || res.Receipt.ID == "" || slug == "" {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, listed := k.lookup(res.Receipt.ID); listed {
		return
	}
	kt := KeptType{BookingID: res.Receipt.ID, EventType: slug, End: res.Receipt.End}
	now := known{slug: slug, end: kt.End, saved: k.store == nil}
	if !now.saved {
		if err := k.keep(ctx, calendar, []KeptType{kt}); err != nil {
			log.LogAttrs(ctx, slog.LevelWarn, "event types: the event type of a new booking could not be kept",
				slog.String("calendar", calendar), slog.String("booking_id", kt.BookingID), slog.String("err", err.Error()))
		} else {
			now.saved = true
		}
	}
	if k.last == nil {
		k.last = map[string]known{}
	}
	k.last[kt.BookingID] = now
}

func (k *keptTypes) keep(ctx context.Context, calendar string, kept []KeptType) error {
	ctx, cancel := context.WithTimeout(ctx, typeStoreTimeout)
	defer cancel()
	return k.store.Keep(ctx, calendar, kept)
}

func (k *keptTypes) lookup(id string) (known, bool) {
	if v, ok := k.last[id]; ok {
		return v, true
	}
	v, ok := k.prev[id]
	return v, ok
}

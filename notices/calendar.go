package notices

import (
	"context"
	"time"
)

// Snapshots keeps the last read of each person's own calendar, for the
// notices of that calendar (store/bolt's and store/pg's Accounts).
type Snapshots interface {
	LastOf(ctx context.Context, calendar string) (s Snapshot, ok bool, err error)
	SaveLastOf(ctx context.Context, calendar string, s Snapshot) error
}

// ForCalendar is st for the notices of one person's own calendar: its
// last read kept in snaps under the calendar's label, and its claims and
// threads named by the calendar and the booking, so that each calendar's
// changes are announced once, apart from every other calendar's.
//
// conn names the connection of the calendar (when its key was
// connected): a last read of another connection is no last read, so a
// watcher of a calendar connected again starts afresh even when the
// watcher of the one before saved its read after the new connection was
// made. Compared with another calendar's bookings, every booking would be
// announced as cancelled.
func ForCalendar(st Store, snaps Snapshots, calendar, conn string) Store {
	return calendarStore{st: st, snaps: snaps, label: calendar, conn: conn, prefix: "cal\x00" + calendar + "\x00"}
}

type calendarStore struct {
	st     Store
	snaps  Snapshots
	label  string
	conn   string
	prefix string
}

func (c calendarStore) key(k Key) Key { k.BookingID = c.prefix + k.BookingID; return k }

func (c calendarStore) Last(ctx context.Context) (Snapshot, bool, error) {
	s, ok, err := c.snaps.LastOf(ctx, c.label)
	if err != nil || !ok || s.Of != c.conn {
		return Snapshot{}, false, err
	}
	return s, true, nil
}

func (c calendarStore) SaveLast(ctx context.Context, s Snapshot) error {
	s.Of = c.conn
	return c.snaps.SaveLastOf(ctx, c.label, s)
}

func (c calendarStore) Claim(ctx context.Context, k Key, at time.Time) (bool, error) {
	return c.st.Claim(ctx, c.key(k), at)
}

func (c calendarStore) Posted(ctx context.Context, k Key, m Message, root bool) error {
	return c.st.Posted(ctx, c.key(k), m, root)
}

func (c calendarStore) Release(ctx context.Context, k Key) error {
	return c.st.Release(ctx, c.key(k))
}

func (c calendarStore) Unsettled(ctx context.Context, k Key) (time.Time, bool, error) {
	return c.st.Unsettled(ctx, c.key(k))
}

func (c calendarStore) Thread(ctx context.Context, bookingID string) (Message, bool, error) {
	return c.st.Thread(ctx, c.prefix+bookingID)
}

func (c calendarStore) Prune(ctx context.Context, cutoff time.Time) error {
	return c.st.Prune(ctx, cutoff)
}

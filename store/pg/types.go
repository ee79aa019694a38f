package pg

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookbot/bookbot/booking"
)

// Types is the event type each upcoming booking was last listed with
// (booking.TypeStore), in the database that replicas share.
func (db *DB) Types() booking.TypeStore { return typeStore{db.pool} }

type typeStore struct{ pool *pgxpool.Pool }

func typesErr(what string, err error) error {
	return fmt.Errorf("event types store (postgres): %s: %w", what, err)
}

func (s typeStore) Types(ctx context.Context, calendar string, ids []string) (map[string]booking.KeptType, error) {
	if err := ctx.Err(); err != nil {
		return nil, typesErr("read", err)
	}
	out := map[string]booking.KeptType{}
	if len(ids) == 0 {
		return out, nil
	}
	keys := make([][]byte, len(ids))
	for i, id := range ids {
		keys[i] = []byte(id)
	}
	rows, err := s.pool.Query(ctx, `SELECT booking_id, event_type, end_s, end_ns FROM bookbot_booking_types
		WHERE calendar = $1 AND booking_id = ANY($2::bytea[])`, []byte(calendar), keys)
	if err != nil {
		return nil, typesErr("read", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id, slug []byte
			endS     int64
			endNS    int32
		)
		if err := rows.Scan(&id, &slug, &endS, &endNS); err != nil {
			return nil, typesErr("read", err)
		}
		out[string(id)] = booking.KeptType{BookingID: string(id), EventType: string(slug), End: fromUnix(endS, endNS)}
	}
	if err := rows.Err(); err != nil {
		return nil, typesErr("read", err)
	}
	return out, nil
}

// keepTypes inserts or replaces each booking's row ($2: IDs, $3: slugs,
// $4 and $5: ends) of calendar $1. A row that holds the same already is
// left as it is, so that replicas keeping what another kept write no new
// row version.
const keepTypes = `INSERT INTO bookbot_booking_types AS t (calendar, booking_id, event_type, end_s, end_ns)
	SELECT $1, * FROM unnest($2::bytea[], $3::bytea[], $4::bigint[], $5::integer[])
	ON CONFLICT (calendar, booking_id) DO UPDATE
	SET event_type = excluded.event_type, end_s = excluded.end_s, end_ns = excluded.end_ns
	WHERE (t.event_type, t.end_s, t.end_ns) IS DISTINCT FROM (excluded.event_type, excluded.end_s, excluded.end_ns)`

func (s typeStore) Keep(ctx context.Context, calendar string, kept []booking.KeptType) error {
	if err := ctx.Err(); err != nil || len(kept) == 0 {
		return err
	}
	if calendar == "" {
		return typesErr("keep", errors.New("no calendar"))
	}
	// One row a booking, its last record: a statement may not change a
	// row twice.
	last := make(map[string]int, len(kept))
	for i, kt := range kept {
		last[kt.BookingID] = i
	}
	var (
		ids, slugs [][]byte
		ends       []int64
		endsNS     []int32
	)
	for i, kt := range kept {
		if last[kt.BookingID] != i {
			continue
		}
		sec, nsec := unix(kt.End)
		ids, slugs = append(ids, []byte(kt.BookingID)), append(slugs, []byte(kt.EventType))
		ends, endsNS = append(ends, sec), append(endsNS, nsec)
	}
	if _, err := s.pool.Exec(ctx, keepTypes, []byte(calendar), ids, slugs, ends, endsNS); err != nil {
		return typesErr("keep", err)
	}
	return nil
}

func (s typeStore) Prune(ctx context.Context, cutoff time.Time) error {
	cutS, cutNS := unix(cutoff)
	_, err := s.pool.Exec(ctx, `DELETE FROM bookbot_booking_types WHERE (end_s, end_ns) < ($1::bigint, $2::integer)`, cutS, cutNS)
	if err != nil {
		return typesErr("prune", err)
	}
	return nil
}

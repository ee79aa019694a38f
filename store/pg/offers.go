package pg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookbot/bookbot/offer"
)

// Offers is the offer store in the database.
func (db *DB) Offers() offer.Store { return offerStore{db.pool} }

type offerStore struct{ pool *pgxpool.Pool }

func offerErr(what string, err error) error {
	return fmt.Errorf("offer store (postgres): %s: %w", what, err)
}

func (s offerStore) Create(ctx context.Context, o offer.Offer) error {
	if o.ID == "" {
		return offerErr("create", errors.New("no offer ID"))
	}
	v, err := json.Marshal(o)
	if err != nil {
		return offerErr(fmt.Sprintf("offer %q", o.ID), err)
	}
	expS, expNS := unix(o.Expires)
	_, err = s.pool.Exec(ctx, `INSERT INTO bookbot_offers (id, offer, expires_s, expires_ns) VALUES ($1, $2, $3, $4)`,
		[]byte(o.ID), v, expS, expNS)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" { // unique_violation
		return offer.ErrExists
	}
	if err != nil {
		return offerErr(fmt.Sprintf("create %q", o.ID), err)
	}
	return nil
}

func (s offerStore) Get(ctx context.Context, id string) (offer.Offer, error) {
	return getOffer(ctx, s.pool, id, "")
}

func getOffer(ctx context.Context, q queryRower, id, lock string) (offer.Offer, error) {
	var v []byte
	err := q.QueryRow(ctx, "SELECT offer FROM bookbot_offers WHERE id = $1"+lock, []byte(id)).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return offer.Offer{}, offer.ErrNotFound
	}
	if err != nil {
		return offer.Offer{}, offerErr(fmt.Sprintf("offer %q", id), err)
	}
	var o offer.Offer
	if err := json.Unmarshal(v, &o); err != nil {
		return offer.Offer{}, offerErr(fmt.Sprintf("offer %q", id), err)
	}
	return o, nil
}

// Update locks the offer's row for the transaction, so updates from any
// replica take turns; fn's error rolls it back.
func (s offerStore) Update(ctx context.Context, id string, fn func(*offer.Offer) error) (offer.Offer, error) {
	var o offer.Offer
	var refused error
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		if o, err = getOffer(ctx, tx, id, " FOR UPDATE"); err != nil {
			return err
		}
		if refused = fn(&o); refused != nil {
			return refused
		}
		v, err := json.Marshal(o)
		if err != nil {
			return offerErr(fmt.Sprintf("offer %q", id), err)
		}
		if _, err := tx.Exec(ctx, "UPDATE bookbot_offers SET offer = $2 WHERE id = $1", []byte(id), v); err != nil {
			return offerErr(fmt.Sprintf("update %q", id), err)
		}
		return nil
	})
	switch {
	case refused != nil:
		return o, refused
	case errors.Is(err, offer.ErrNotFound):
		return offer.Offer{}, err
	case err != nil && ctx.Err() != nil:
		return offer.Offer{}, offerErr("update", ctx.Err())
	case err != nil:
		return offer.Offer{}, err
	}
	return o, nil
}

// Unsettled reads the offers the unsettled column marks (0012), through
// its partial index: none but them.
func (s offerStore) Unsettled(ctx context.Context) ([]offer.Offer, error) {
	return s.where(ctx, "unsettled")
}

// Steps reads the offers the step_open column marks (0014), through its
// partial index.
func (s offerStore) Steps(ctx context.Context) ([]offer.Offer, error) {
	return s.where(ctx, "step_open")
}

// where reads the offers a boolean column marks.
func (s offerStore) where(ctx context.Context, column string) ([]offer.Offer, error) {
	rows, err := s.pool.Query(ctx, "SELECT offer FROM bookbot_offers WHERE "+column)
	if err != nil {
		return nil, offerErr(column, err)
	}
	vals, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, offerErr(column, err)
	}
	out := make([]offer.Offer, 0, len(vals))
	for _, v := range vals {
		var o offer.Offer
		if err := json.Unmarshal(v, &o); err != nil {
			return nil, offerErr(column, err)
		}
		out = append(out, o)
	}
	return out, nil
}

func (s offerStore) Prune(ctx context.Context, cutoff time.Time) error {
	cutS, cutNS := unix(cutoff)
	_, err := s.pool.Exec(ctx, `DELETE FROM bookbot_offers WHERE (expires_s, expires_ns) < ($1::bigint, $2::integer)`, cutS, cutNS)
	if err != nil {
		return offerErr("prune", err)
	}
	return nil
}

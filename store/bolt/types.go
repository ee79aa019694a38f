package bolt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/internal/boltfile"
)

// Types is the event type each upcoming booking was last listed with
// (booking.TypeStore) in the store: a bucket of each calendar in
// bookingTypes, mapping a booking ID to its wireType.
type Types struct {
	file     *boltfile.File
	readOnly bool
}

// Types is the store's booking.TypeStore. Opened read-only, a missing
// file keeps nothing.
func (db *DB) Types() *Types { return &Types{file: db.file, readOnly: db.readOnly} }

var _ booking.TypeStore = (*Types)(nil)

// wireType is a booking's event type as the file keeps it.
type wireType struct {
	EventType string    `json:"event_type"`
	End       time.Time `json:"end"`
}

var errNoCalendar = errors.New("no calendar or booking ID")

func (s *Types) Types(ctx context.Context, calendar string, ids []string) (map[string]booking.KeptType, error) {
	out := map[string]booking.KeptType{}
	err := s.file.View(ctx, func(tx *bbolt.Tx) error {
		top := tx.Bucket(bookingTypes)
		if top == nil || calendar == "" {
			return nil // a file an older bookbot wrote, read-only: nothing kept
		}
		b := top.Bucket([]byte(calendar))
		if b == nil {
			return nil
		}
		for _, id := range ids {
			v := b.Get([]byte(id))
			if v == nil {
				continue
			}
			var w wireType
			if err := json.Unmarshal(v, &w); err != nil {
				return fmt.Errorf("event type of booking %q: %w", id, err)
			}
			out[id] = booking.KeptType{BookingID: id, EventType: w.EventType, End: w.End}
		}
		return nil
	})
	if s.readOnly && errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Types) Keep(ctx context.Context, calendar string, kept []booking.KeptType) error {
	if len(kept) == 0 {
		return ctx.Err()
	}
	return s.file.Update(ctx, func(tx *bbolt.Tx) error {
		if calendar == "" {
			return errNoCalendar
		}
		b, err := tx.Bucket(bookingTypes).CreateBucketIfNotExists([]byte(calendar))
		if err != nil {
			return err
		}
		for _, kt := range kept {
			if kt.BookingID == "" {
				return errNoCalendar
			}
			v, err := json.Marshal(wireType{EventType: kt.EventType, End: kt.End.UTC()})
			if err != nil {
				return err
			}
			if err := b.Put([]byte(kt.BookingID), v); err != nil {
				return err
			}
		}
		return nil
	})
}

// Prune reads every calendar's records: they are the upcoming bookings of
// the calendars, a few hundred, pruned daily. A calendar left without any
// goes too.
func (s *Types) Prune(ctx context.Context, cutoff time.Time) error {
	return s.file.Update(ctx, func(tx *bbolt.Tx) error {
		top := tx.Bucket(bookingTypes)
		var cals [][]byte
		if err := top.ForEachBucket(func(cal []byte) error { cals = append(cals, cal); return nil }); err != nil {
			return err
		}
		for _, cal := range cals {
			b := top.Bucket(cal)
			var ended [][]byte
			n := 0
			err := b.ForEach(func(id, v []byte) error {
				n++
				var w wireType
				if err := json.Unmarshal(v, &w); err != nil {
					return fmt.Errorf("event type of booking %q: %w", id, err)
				}
				if w.End.Before(cutoff) {
					ended = append(ended, id)
				}
				return nil
			})
			if err != nil {
				return err
			}
			if n == len(ended) {
				if err := top.DeleteBucket(cal); err != nil {
					return err
				}
				continue
			}
			for _, id := range ended {
				if err := b.Delete(id); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

package journaltest

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/journal"
)

// Flaky is a real journal whose outcomes cannot be recorded while Down is
// set, as when its database is away for a moment; it records them once it
// is back.
type Flaky struct {
	journal.Store
	Down atomic.Bool
	// Recorded receives each outcome once it is recorded.
	Recorded chan *booking.Result
}

// NewFlaky is j, flaky; Recorded holds up to 10 outcomes unread.
func NewFlaky(j journal.Store) *Flaky {
	return &Flaky{Store: j, Recorded: make(chan *booking.Result, 10)}
}

// Begin begins the write in the journal; its outcome fails to be recorded
// while Down is set.
func (f *Flaky) Begin(ctx context.Context, w booking.Write) (func(*booking.Result) error, error) {
	finish, err := f.Store.Begin(ctx, w)
	if err != nil {
		return nil, err
	}
	return func(res *booking.Result) error {
		if f.Down.Load() {
			return errors.New("journal: the database did not answer")
		}
		if err := finish(res); err != nil {
			return err
		}
		f.Recorded <- res
		return nil
	}, nil
}

package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/bookbot/bookbot/booking"
)

// refusingBooker answers every call as the API answers a revoked key.
type refusingBooker struct{ Booker }

var errRefused = fmt.Errorf("booking API: 401: %w", booking.ErrUnauthorized)

func (refusingBooker) EventTypes(context.Context) ([]booking.EventType, error) {
	return nil, errRefused
}
func (refusingBooker) Create(context.Context, booking.CreateRequest) (*booking.Result, error) {
	return &booking.Result{Outcome: booking.Rejected, Err: errRefused}, nil
}

// A refusal of a person's own key reads "connect your calendar again";
// of the owner's, it stays the operator's to fix.
func TestOwnKeyRefusalSaysConnectAgain(t *testing.T) {
	t.Parallel()
	set := newCalendarSet(0, 0, nil)
	own, owner := set.of("U1", "cal-1", 1, refusingBooker{}), set.owner(refusingBooker{})
	_, err := own.EventTypes(t.Context())
	if nc, ok := errors.AsType[*NoCalendarError](err); !ok || !nc.Reconnect || !errors.Is(err, booking.ErrUnauthorized) {
		t.Errorf("own calendar's refusal = %v", err)
	}
	res, _ := own.Create(t.Context(), booking.CreateRequest{})
	if got := failureText(res.Err); !strings.Contains(got, "connect your calendar again") {
		t.Errorf("own calendar's refused create says %q", got)
	}
	if _, err := owner.EventTypes(t.Context()); errors.As(err, new(*NoCalendarError)) {
		t.Errorf("the owner's refusal became a NoCalendarError: %v", err)
	}
}

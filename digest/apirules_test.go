package digest

// Rules of the booking API text (shared/booking-api.md) held against the
// digest runner, through real HTTP and the booking client.

import (
	"errors"
	"slices"
	"testing"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
)

// §2 Booking and §3: listings hold only confirmed bookings, with status
// confirmed; cancelled ones are not listed. A booking of the day that its
// attendee has cancelled, listed all the same with status "cancelled", is
// not put in the day's digest: the list is not read (ErrBadResponse),
// nothing is posted but the failure notice, and once the list reads as
// documented the digest holds only the confirmed bookings.
func TestAPIRuleListedStatusOtherThanConfirmedIsNotInTheDigest(t *testing.T) {
	t.Parallel()
	env := newRunnerEnv(t)
	day := Tomorrow(env.clock.Now(), berlin)
	const gone = "5eed0000-0000-4000-8000-000000000002"

	// The attendee's cancel is listed first against the text, as an entry
	// with status cancelled, and then as documented, by leaving it out.
	env.srv.EditAnswers(bookingtest.EndpointListBookings, bookingtest.ListedStatus(map[string]string{gone: "cancelled"}))

	res, err := env.runner.Run(t.Context(), day)
	if !errors.Is(err, booking.ErrBadResponse) || res.Posted {
		t.Fatalf("run over a cancelled entry = %+v, %v; want ErrBadResponse, nothing posted", res, err)
	}
	if n := len(env.pub.Digests()); n != 0 {
		t.Fatalf("%d digests posted over a list with a cancelled entry", n)
	}
	if fails := env.pub.Failures(); len(fails) != 1 || fails[0].Reason != booking.ErrBadResponse.Error() {
		t.Errorf("failure notices = %+v, want one saying %q", fails, booking.ErrBadResponse)
	}

	if err := env.srv.CancelAsAttendee(gone); err != nil {
		t.Fatal(err)
	}
	env.srv.EditAnswers(bookingtest.EndpointListBookings, nil)
	res, err = env.runner.Run(t.Context(), day)
	if err != nil || !res.Posted {
		t.Fatalf("once listed as documented: %+v, %v", res, err)
	}
	got := env.pub.Digests()
	if len(got) != 1 {
		t.Fatalf("%d digests", len(got))
	}
	if ids := ids(got[0].Digest); !slices.Equal(ids, []string{"5eed0000-0000-4000-8000-000000000001", "5eed0000-0000-4000-8000-000000000003"}) {
		t.Errorf("entries = %q, want the day's confirmed bookings only", ids)
	}
}

package offer_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/offer"
)

var now = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)

func TestTake(t *testing.T) {
	base := offer.Offer{Offerer: "UADA", For: []string{"UGRACE"}, Max: 1, Expires: now.Add(time.Hour)}
	for _, tc := range []struct {
		name string
		edit func(*offer.Offer)
		user string
		want error
	}{
		{"named", nil, "UGRACE", nil},
		{"not named", nil, "UEVE", offer.ErrNotNamed},
		{"anyone", func(o *offer.Offer) { o.For = nil }, "UEVE", nil},
		{"used up", func(o *offer.Offer) { o.Uses = []offer.Use{{Key: "V0"}} }, "UGRACE", offer.ErrUsedUp},
		{"the same form again", func(o *offer.Offer) { o.Max, o.Uses = 2, []offer.Use{{Key: "V1"}} }, "UGRACE", offer.ErrUsedUp},
		{"a time another form took", func(o *offer.Offer) { o.Max, o.Uses = 2, []offer.Use{{Key: "V0", Start: "s"}} }, "UGRACE", offer.ErrTaken},
		{"a time booked", func(o *offer.Offer) { o.Max, o.Uses = 3, []offer.Use{{Key: "V0", Start: "s", Booking: "b0"}} }, "UGRACE", offer.ErrTaken},
		{"another time", func(o *offer.Offer) { o.Max, o.Uses = 2, []offer.Use{{Key: "V0", Start: "t"}} }, "UGRACE", nil},
		{"a second time for one person", func(o *offer.Offer) { o.Max, o.Uses = 3, []offer.Use{{Key: "V0", By: "UGRACE", Start: "t"}} }, "UGRACE", offer.ErrOneEach},
		{"a second meeting for one person", func(o *offer.Offer) {
			o.Max, o.Uses = 3, []offer.Use{{Key: "V0", By: "UGRACE", Start: "t", Booking: "b0"}}
		}, "UGRACE", offer.ErrOneEach},
		{"a time for another person named", func(o *offer.Offer) {
			o.Max, o.For, o.Uses = 2, []string{"UGRACE", "UBOB"}, []offer.Use{{Key: "V0", By: "UBOB", Start: "t", Booking: "b0"}}
		}, "UGRACE", nil},
		{"withdrawn", func(o *offer.Offer) { o.Withdrawn = now }, "UGRACE", offer.ErrWithdrawn},
		{"expired", func(o *offer.Offer) { o.Expires = now }, "UGRACE", offer.ErrExpired},
		{"withdrawn and used up says booked", func(o *offer.Offer) { o.Withdrawn, o.Uses = now, []offer.Use{{Key: "V0"}} }, "UGRACE", offer.ErrUsedUp},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := base
			if tc.edit != nil {
				tc.edit(&o)
			}
			n := len(o.Uses)
			err := offer.Take(offer.Use{By: tc.user, Key: "V1", Name: "Grace", Start: "s", At: now})(&o)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Take: %v, want %v", err, tc.want)
			}
			if took := len(o.Uses) - n; (err == nil) != (took == 1) {
				t.Errorf("Take added %d uses with error %v", took, err)
			}
		})
	}
}

func TestReleaseKeepsBookings(t *testing.T) {
	o := offer.Offer{Max: 2, Uses: []offer.Use{{Key: "V1"}, {Key: "V2", Booking: "b2"}}}
	_ = offer.Release("V1")(&o)
	_ = offer.Release("V2")(&o)
	if len(o.Uses) != 1 || o.Uses[0].Booking != "b2" || o.Left() != 1 {
		t.Errorf("after releases: %+v", o.Uses)
	}
	_ = offer.Confirm("V2", "b2", now)(&o)
	if got := o.Booked(); len(got) != 1 || !got[0].End.Equal(now) {
		t.Errorf("Booked = %+v", got)
	}
}

// A time its process left is settled only as it was read: one sent, or
// settled, since is left to what did that.
func TestLeftTimesSettleOnlyAsRead(t *testing.T) {
	taken := offer.Offer{Max: 3, Expires: now.Add(time.Hour)}
	for _, key := range []string{"V1", "V2", "V3"} {
		if err := offer.Take(offer.Use{Key: key, By: "U" + key, Start: key, At: now})(&taken); err != nil {
			t.Fatal(err)
		}
	}
	unsent := taken.Uses[0]
	if err := offer.Send("V1", now)(&taken); err != nil {
		t.Fatal(err)
	}
	if err := offer.ReleaseLeft(unsent)(&taken); !errors.Is(err, offer.ErrSettled) || len(taken.Pending()) != 3 {
		t.Errorf("a time sent since it was read was given back: %v, %+v", err, taken.Uses)
	}
	sent := taken.Uses[0]
	if err := offer.ConfirmLeft(sent, "b1", now)(&taken); err != nil || len(taken.Booked()) != 1 {
		t.Fatalf("ConfirmLeft: %v, %+v", err, taken.Uses)
	}
	if err := offer.ConfirmLeft(sent, "b1", now)(&taken); !errors.Is(err, offer.ErrSettled) {
		t.Errorf("a time confirmed twice: %v", err)
	}
	if err := offer.ReleaseLeft(taken.Uses[1])(&taken); err != nil || len(taken.Uses) != 2 || taken.Left() != 1 {
		t.Errorf("ReleaseLeft of an unsent time: %v, %+v", err, taken.Uses)
	}
	if err := offer.Send("V2", now)(&taken); !errors.Is(err, offer.ErrSettled) {
		t.Errorf("a time given back was sent: %v", err)
	}
	if got := taken.Pending(); len(got) != 1 || got[0].Key != "V3" {
		t.Errorf("Pending = %+v", got)
	}
}

// EncodedPending agrees with Pending on offers whose names and titles
// spell a use's fields.
func TestEncodedPending(t *testing.T) {
	spelt := `x","key":"V9"},{"key":"V9","booking":"`
	for _, o := range []offer.Offer{
		{},
		{Name: spelt, Title: `"booking":`, Uses: []offer.Use{{Key: "V1", Name: spelt, Booking: "b1"}}},
		{Name: `"booking":"b"`, Uses: []offer.Use{{Key: "V1", Name: `","booking":"b`, Card: `"booking":`}}},
		{Uses: []offer.Use{{Key: "V1", Booking: "b1"}, {Key: "V2", Sent: now}}},
	} {
		raw, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := offer.EncodedPending(raw), len(o.Pending()) > 0; got != want {
			t.Errorf("EncodedPending(%s) = %v, want %v", raw, got, want)
		}
	}
}

func TestWarnOnce(t *testing.T) {
	var o offer.Offer
	if err := offer.Warn(now)(&o); err != nil || !o.Warned.Equal(now) {
		t.Fatalf("first Warn: %v, %v", err, o.Warned)
	}
	if err := offer.Warn(now.Add(time.Hour))(&o); !errors.Is(err, offer.ErrWarned) || !o.Warned.Equal(now) {
		t.Errorf("second Warn: %v, %v", err, o.Warned)
	}
}

func TestWithdrawOnlyByTheOfferer(t *testing.T) {
	o := offer.Offer{Offerer: "UADA"}
	if err := offer.Withdraw("UEVE", now)(&o); !errors.Is(err, offer.ErrNotNamed) || !o.Withdrawn.IsZero() {
		t.Errorf("Withdraw by another: %v, %v", err, o.Withdrawn)
	}
	if err := offer.Withdraw("UADA", now)(&o); err != nil || !o.Withdrawn.Equal(now) {
		t.Errorf("Withdraw by the offerer: %v, %v", err, o.Withdrawn)
	}
}

// Nobody may withdraw an offer nobody made but bookbot itself.
func TestWithdrawAnOfferNobodyMade(t *testing.T) {
	o := offer.Offer{}
	if err := offer.Withdraw("UEVE", now)(&o); !errors.Is(err, offer.ErrNotNamed) || !o.Withdrawn.IsZero() {
		t.Errorf("Withdraw by someone: %v, %v", err, o.Withdrawn)
	}
	if err := offer.Withdraw("", now)(&o); err != nil || !o.Withdrawn.Equal(now) {
		t.Errorf("Withdraw by bookbot: %v, %v", err, o.Withdrawn)
	}
}

// EncodedStepOpen agrees with StepOpen on offers whose names and links
// spell the step's fields.
func TestEncodedStepOpen(t *testing.T) {
	spelt := `x","step":"Fx9","step_ended":"2026`
	for _, o := range []offer.Offer{
		{},
		{Step: "Fx1"},
		{Step: "Fx1", StepEnded: now},
		{Name: spelt, Title: `"step":"Fx1"`, Link: spelt},
		{Step: "Fx1", Name: `"step_ended":"x"`, Link: spelt},
	} {
		raw, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := offer.EncodedStepOpen(raw), o.StepOpen(); got != want {
			t.Errorf("EncodedStepOpen(%s) = %v, want %v", raw, got, want)
		}
	}
}

// Unposted withdraws an offer read as unposted only while it still is:
// not once its card was recorded as posted or a time was taken from it.
func TestUnpostedOnlyWhileUnposted(t *testing.T) {
	for _, o := range []offer.Offer{
		{Step: "Fx1", TS: "1.000001"},
		{Step: "Fx1", Uses: []offer.Use{{By: "UEVE", Start: "2026-03-23T10:00:00Z"}}},
	} {
		if err := offer.Unposted("not posted", now)(&o); !errors.Is(err, offer.ErrPlaced) || !o.Withdrawn.IsZero() || o.StepError != "" {
			t.Errorf("Unposted(%+v): %v", o, err)
		}
	}
	o := offer.Offer{Step: "Fx1"}
	if err := offer.Unposted("not posted", now)(&o); err != nil || !o.Withdrawn.Equal(now) || o.StepError != "not posted" {
		t.Errorf("Unposted of an unposted offer: %v, %+v", err, o)
	}
}

func TestEndStepOnce(t *testing.T) {
	o := offer.Offer{Step: "Fx1"}
	if err := offer.EndStep(now)(&o); err != nil || o.StepOpen() {
		t.Fatalf("first EndStep: %v, %+v", err, o)
	}
	if err := offer.EndStep(now.Add(time.Hour))(&o); !errors.Is(err, offer.ErrStepEnded) || !o.StepEnded.Equal(now) {
		t.Errorf("second EndStep: %v, %v", err, o.StepEnded)
	}
}

// IDOf is one ID for the same parts, another for others, shaped as NewID's.
func TestIDOf(t *testing.T) {
	a, b := offer.IDOf("C1", "1.000001", "https://x/y"), offer.IDOf("C1", "1.000001", "https://x/y")
	if a != b || len(a) != len(offer.NewID()) || strings.ToLower(a) != a {
		t.Errorf("IDOf = %q, %q", a, b)
	}
	for _, other := range [][]string{{"C1", "1.000001", "https://x/z"}, {"C1", "1.0000011", "https://x/y"}, {"C1", "1.000001https://x/y"}} {
		if offer.IDOf(other...) == a {
			t.Errorf("IDOf(%q) = IDOf of other parts", other)
		}
	}
}

// TestCancelled: a booking its guest cancelled through the offer gives its
// time back; another booking, or a time being booked, stays.
func TestCancelled(t *testing.T) {
	o := offer.Offer{Max: 2, Uses: []offer.Use{
		{Key: "V1", By: "UGRACE", Start: "2026-03-24T09:00:00Z", Booking: "bk_1"},
		{Key: "V2", By: "UBOB", Start: "2026-03-24T10:00:00Z", Booking: "bk_2"},
		{Key: "V3", By: "UEVE", Start: "2026-03-24T11:00:00Z"},
	}}
	if err := offer.Cancelled("bk_1")(&o); err != nil {
		t.Fatal(err)
	}
	if _, ok := o.UseOf("UGRACE"); ok || len(o.Uses) != 2 || o.Left() != 0 {
		t.Errorf("after bk_1's cancel: %+v", o.Uses)
	}
	if err := offer.Cancelled("")(&o); err != nil || len(o.Uses) != 2 {
		t.Errorf("a cancel of no booking gave back %+v", o.Uses)
	}
}

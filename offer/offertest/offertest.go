// Package offertest checks an implementation of offer.Store against the
// semantics its documentation gives. It is for tests only.
package offertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/bookbot/bookbot/internal/testutil"
	"github.com/bookbot/bookbot/offer"
)

// Run runs the conformance suite, each subtest against a store of its own.
//
// fresh makes that store: it is called once by each subtest, with the
// subtest's t, and must make an empty store no other subtest sees. It
// returns open, which returns a new handle on that same store each time
// it is called, as a restarted process (or another replica) would get
// one. open reports a failure with t.Fatal and registers with t.Cleanup
// the closing of what it opens.
//
// Where offer.Store's documentation leaves room, the suite holds a store
// to these readings of it:
//   - times are kept as instants: their zone and monotonic reading need
//     not be;
//   - Prune keeps an offer that expired at exactly cutoff;
//   - with a context already cancelled every method fails with an error
//     that is context.Canceled, and records nothing.
func Run(t *testing.T, fresh func(t *testing.T) (open func() offer.Store)) {
	cases.Run(t, fresh)
}

var cases = testutil.Suite[offer.Store]{
	{"Get/absent", getAbsent},
	{"Create/round trip", roundTrip},
	{"Create/taken ID", createTaken},
	{"Update/kept", updateKept},
	{"Update/refused", updateRefused},
	{"Update/absent", updateAbsent},
	{"Update/concurrent takes", concurrentTakes},
	{"Update/concurrent takes of one time", concurrentTakesOfOneTime},
	{"Prune/expired before cutoff", prune},
	{"Unsettled/offers holding a time not booked", unsettled},
	{"Unsettled/follows updates", unsettledFollowsUpdates},
	{"Steps/offers whose step has not ended", steps},
	{"Steps/follows updates", stepsFollowUpdates},
	{"Context/cancelled", cancelled},
}

// base is the time the fixtures are built around.
var base = time.Date(2026, 11, 24, 9, 0, 0, 0, time.FixedZone("CET", 3600))

func sample(id string) offer.Offer {
	return offer.Offer{
		ID: id, Offerer: "UADA", For: []string{"UGRACE", "UBOB"}, Max: 1,
		Event: "intro-call", Title: "Intro call", Minutes: 15,
		Created: base, Expires: base.Add(7 * 24 * time.Hour),
	}
}

// same reports whether two offers are equal as instants.
func same(a, b offer.Offer) bool {
	norm := func(o offer.Offer) string {
		o.Created, o.Expires, o.Withdrawn, o.Warned, o.StepEnded = o.Created.UTC(), o.Expires.UTC(), o.Withdrawn.UTC(), o.Warned.UTC(), o.StepEnded.UTC()
		for i := range o.Uses {
			o.Uses[i].At, o.Uses[i].End, o.Uses[i].Sent = o.Uses[i].At.UTC(), o.Uses[i].End.UTC(), o.Uses[i].Sent.UTC()
		}
		j, _ := json.Marshal(o)
		return string(j)
	}
	return norm(a) == norm(b)
}

func mustCreate(t *testing.T, s offer.Store, o offer.Offer) {
	t.Helper()
	if err := s.Create(t.Context(), o); err != nil {
		t.Fatalf("Create: %v", err)
	}
}

func getAbsent(t *testing.T, open func() offer.Store) {
	if _, err := open().Get(t.Context(), "nope"); !errors.Is(err, offer.ErrNotFound) {
		t.Fatalf("Get of no offer: %v, want ErrNotFound", err)
	}
}

func roundTrip(t *testing.T, open func() offer.Store) {
	o := sample("a1")
	o.Warned = base.Add(time.Minute)
	o.Channel, o.TS, o.Link = "C1", "1700000000.000100", "https://book.example.com/ada/intro-call?x=1#y"
	o.Step, o.StepEnded, o.Contact, o.StepError = "Fx0001", base.Add(2*time.Minute), "UOPS", "bookbot is not in that channel"
	o.Uses = []offer.Use{
		{Key: "V1", By: "UGRACE", Name: "Grace", Start: "2026-11-25T10:00:00Z", At: base, Booking: "b1", End: base.Add(time.Hour)},
		{Key: "V2", By: "UBOB", Name: "Bob", Start: "2026-11-25T11:00:00Z", At: base, Owner: "pid 7 on host", Sent: base.Add(time.Second), Card: "https://hooks.slack.test/actions/T1/2/x"},
	}
	mustCreate(t, open(), o)
	got, err := open().Get(t.Context(), "a1")
	if err != nil || !same(got, o) {
		t.Fatalf("Get = %+v, %v; want %+v", got, err, o)
	}
}

func createTaken(t *testing.T, open func() offer.Store) {
	mustCreate(t, open(), sample("a1"))
	other := sample("a1")
	other.Offerer = "UBOB"
	if err := open().Create(t.Context(), other); !errors.Is(err, offer.ErrExists) {
		t.Fatalf("second Create: %v, want ErrExists", err)
	}
	if got, _ := open().Get(t.Context(), "a1"); got.Offerer != "UADA" {
		t.Errorf("the first offer was replaced: %+v", got)
	}
}

func updateKept(t *testing.T, open func() offer.Store) {
	mustCreate(t, open(), sample("a1"))
	got, err := open().Update(t.Context(), "a1", offer.Take(offer.Use{By: "UGRACE", Key: "V1", Name: "Grace", Start: "s", At: base}))
	if err != nil || len(got.Uses) != 1 {
		t.Fatalf("Update = %+v, %v", got, err)
	}
	again, err := open().Get(t.Context(), "a1")
	if err != nil || !same(again, got) {
		t.Fatalf("after Update, Get = %+v, %v; want %+v", again, err, got)
	}
}

func updateRefused(t *testing.T, open func() offer.Store) {
	mustCreate(t, open(), sample("a1"))
	refusal := errors.New("no")
	seen, err := open().Update(t.Context(), "a1", func(o *offer.Offer) error {
		o.Max = 9
		return refusal
	})
	if !errors.Is(err, refusal) {
		t.Fatalf("Update: %v, want fn's error", err)
	}
	if want := sample("a1"); seen.ID != want.ID || seen.Offerer != want.Offerer || !seen.Expires.Equal(want.Expires) {
		t.Errorf("a refused Update returned %+v, want the offer fn was given", seen)
	}
	if got, _ := open().Get(t.Context(), "a1"); got.Max != 1 {
		t.Errorf("a refused update changed the offer: %+v", got)
	}
}

func updateAbsent(t *testing.T, open func() offer.Store) {
	called := false
	_, err := open().Update(t.Context(), "nope", func(*offer.Offer) error { called = true; return nil })
	if !errors.Is(err, offer.ErrNotFound) || called {
		t.Fatalf("Update of no offer: %v (fn called: %v), want ErrNotFound", err, called)
	}
}

// concurrentTakes: many people, on two handles, take a time each from an
// offer of two meetings at once; two get one.
func concurrentTakes(t *testing.T, open func() offer.Store) {
	o := sample("a1")
	o.For, o.Max = nil, 2
	mustCreate(t, open(), o)
	handles := []offer.Store{open(), open()}
	var wg sync.WaitGroup
	var mu sync.Mutex
	took, refused := 0, 0
	for i := range 16 {
		wg.Go(func() {
			user := fmt.Sprintf("U%d", i)
			_, err := handles[i%2].Update(t.Context(), "a1", offer.Take(offer.Use{By: user, Key: "V" + user, Name: user, Start: "s" + user, At: base}))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				took++
			case errors.Is(err, offer.ErrUsedUp):
				refused++
			default:
				t.Errorf("Take: %v", err)
			}
		})
	}
	wg.Wait()
	got, _ := open().Get(t.Context(), "a1")
	if took != 2 || refused != 14 || len(got.Uses) != 2 {
		t.Fatalf("%d took, %d refused, %d uses; want 2, 14, 2", took, refused, len(got.Uses))
	}
}

// concurrentTakesOfOneTime: many forms, on two handles, take the same time
// from an offer of several meetings at once; one gets it.
func concurrentTakesOfOneTime(t *testing.T, open func() offer.Store) {
	o := sample("a1")
	o.For, o.Max = nil, 4
	mustCreate(t, open(), o)
	handles := []offer.Store{open(), open()}
	var wg sync.WaitGroup
	var mu sync.Mutex
	took, taken := 0, 0
	for i := range 16 {
		wg.Go(func() {
			user := fmt.Sprintf("U%d", i)
			_, err := handles[i%2].Update(t.Context(), "a1", offer.Take(offer.Use{By: user, Key: "V" + user, Name: user, Start: "s", At: base}))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				took++
			case errors.Is(err, offer.ErrTaken):
				taken++
			default:
				t.Errorf("Take: %v", err)
			}
		})
	}
	wg.Wait()
	got, _ := open().Get(t.Context(), "a1")
	if took != 1 || taken != 15 || len(got.Uses) != 1 {
		t.Fatalf("%d took, %d refused as taken, %d uses; want 1, 15, 1", took, taken, len(got.Uses))
	}
}

func prune(t *testing.T, open func() offer.Store) {
	s := open()
	for i, exp := range []time.Duration{-time.Hour, 0, time.Hour} {
		o := sample(fmt.Sprint("p", i))
		o.Expires = base.Add(exp)
		mustCreate(t, s, o)
	}
	if err := open().Prune(t.Context(), base); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{false, true, true} {
		_, err := open().Get(t.Context(), fmt.Sprint("p", i))
		if (err == nil) != want {
			t.Errorf("offer p%d after Prune: %v, kept want %v", i, err, want)
		}
	}
}

// ids are the IDs of offers, sorted.
func ids(list []offer.Offer) []string {
	out := make([]string, len(list))
	for i, o := range list {
		out[i] = o.ID
	}
	slices.Sort(out)
	return out
}

func mustUnsettled(t *testing.T, s offer.Store) []string {
	t.Helper()
	list, err := s.Unsettled(t.Context())
	if err != nil {
		t.Fatalf("Unsettled: %v", err)
	}
	return ids(list)
}

// unsettled: of offers with no use, booked uses, uses not booked, expired
// or withdrawn, and names and titles that spell a use's fields, the ones
// holding a time not booked are listed, each whole.
func unsettled(t *testing.T, open func() offer.Store) {
	s := open()
	booked := offer.Use{Key: "V1", By: "UGRACE", Name: "Grace", Start: "s1", At: base, Booking: "b1", End: base.Add(time.Hour)}
	pending := offer.Use{Key: "V2", By: "UBOB", Name: "Bob", Start: "s2", At: base, Sent: base}
	// JSON would hold these as field names, were quotes not escaped.
	spelt := `x","key":"V9"},{"key":"V9`
	for id, edit := range map[string]func(*offer.Offer){
		"none":      func(o *offer.Offer) {},
		"booked":    func(o *offer.Offer) { o.Uses = []offer.Use{booked} },
		"pending":   func(o *offer.Offer) { o.Uses = []offer.Use{pending} },
		"both":      func(o *offer.Offer) { o.Max, o.Uses = 2, []offer.Use{booked, pending} },
		"expired":   func(o *offer.Offer) { o.Expires, o.Uses = base.Add(-time.Hour), []offer.Use{pending} },
		"withdrawn": func(o *offer.Offer) { o.Withdrawn, o.Uses = base, []offer.Use{pending} },
		"spelt booked": func(o *offer.Offer) {
			o.Name, o.Title, o.Uses = spelt, `"booking":"x"`, []offer.Use{booked}
			o.Uses[0].Name = spelt
		},
		"spelt pending": func(o *offer.Offer) {
			o.Name, o.Title, o.Uses = `"booking":"x",`, spelt, []offer.Use{pending}
			o.Uses[0].Name, o.Uses[0].Card = `","booking":"b`, `"booking":`
		},
	} {
		o := sample(id)
		edit(&o)
		mustCreate(t, s, o)
	}
	want := []string{"both", "expired", "pending", "spelt pending", "withdrawn"}
	list, err := open().Unsettled(t.Context())
	if err != nil {
		t.Fatalf("Unsettled: %v", err)
	}
	if got := ids(list); !slices.Equal(got, want) {
		t.Fatalf("Unsettled = %q, want %q", got, want)
	}
	for _, o := range list {
		if got, _ := open().Get(t.Context(), o.ID); !same(o, got) {
			t.Errorf("Unsettled gave %+v, Get %+v", o, got)
		}
	}
}

// unsettledFollowsUpdates: a time taken lists its offer, on every handle,
// and its booking or release no longer does.
func unsettledFollowsUpdates(t *testing.T, open func() offer.Store) {
	o := sample("a1")
	o.For, o.Max = nil, 2
	mustCreate(t, open(), o)
	if got := mustUnsettled(t, open()); len(got) != 0 {
		t.Fatalf("Unsettled before any take = %q", got)
	}
	take := func(user string) {
		t.Helper()
		if _, err := open().Update(t.Context(), "a1", offer.Take(offer.Use{By: user, Key: "V" + user, Name: user, Start: "s" + user, At: base})); err != nil {
			t.Fatal(err)
		}
	}
	take("U1")
	take("U2")
	if got := mustUnsettled(t, open()); !slices.Equal(got, []string{"a1"}) {
		t.Fatalf("Unsettled after two takes = %q", got)
	}
	if _, err := open().Update(t.Context(), "a1", offer.Confirm("VU1", "b1", base)); err != nil {
		t.Fatal(err)
	}
	if got := mustUnsettled(t, open()); !slices.Equal(got, []string{"a1"}) {
		t.Fatalf("Unsettled with one time still being booked = %q", got)
	}
	if _, err := open().Update(t.Context(), "a1", offer.Release("VU2")); err != nil {
		t.Fatal(err)
	}
	if got := mustUnsettled(t, open()); len(got) != 0 {
		t.Fatalf("Unsettled once every time is booked or given back = %q", got)
	}
}

func mustSteps(t *testing.T, s offer.Store) []string {
	t.Helper()
	list, err := s.Steps(t.Context())
	if err != nil {
		t.Fatalf("Steps: %v", err)
	}
	return ids(list)
}

// steps: of offers without a step, with one running, ended, expired or
// withdrawn, and names and links that spell the fields, the ones whose
// step has not ended are listed, each whole.
func steps(t *testing.T, open func() offer.Store) {
	s := open()
	spelt := `x","step":"Fx9","step_ended":"2026`
	for id, edit := range map[string]func(*offer.Offer){
		"none":    func(o *offer.Offer) {},
		"running": func(o *offer.Offer) { o.Step = "Fx1" },
		"ended":   func(o *offer.Offer) { o.Step, o.StepEnded = "Fx2", base },
		"expired": func(o *offer.Offer) { o.Step, o.Expires = "Fx3", base.Add(-time.Hour) },
		"withdrawn": func(o *offer.Offer) {
			o.Step, o.Withdrawn = "Fx4", base
			o.Uses = []offer.Use{{Key: "V1", By: "UGRACE", Name: "Grace", Start: "s1", At: base, Booking: "b1", End: base}}
		},
		"spelt none":    func(o *offer.Offer) { o.Name, o.Title, o.Link = spelt, `"step":"Fx8"`, spelt },
		"spelt running": func(o *offer.Offer) { o.Step, o.Name, o.Link = "Fx5", `"step_ended":"x"`, spelt },
	} {
		o := sample(id)
		edit(&o)
		mustCreate(t, s, o)
	}
	want := []string{"expired", "running", "spelt running", "withdrawn"}
	list, err := open().Steps(t.Context())
	if err != nil {
		t.Fatalf("Steps: %v", err)
	}
	if got := ids(list); !slices.Equal(got, want) {
		t.Fatalf("Steps = %q, want %q", got, want)
	}
	for _, o := range list {
		if got, _ := open().Get(t.Context(), o.ID); !same(o, got) {
			t.Errorf("Steps gave %+v, Get %+v", o, got)
		}
	}
}

// stepsFollowUpdates: a step's offer is listed on every handle until its
// end is recorded, which is recorded once.
func stepsFollowUpdates(t *testing.T, open func() offer.Store) {
	o := sample("a1")
	o.Step = "Fx1"
	mustCreate(t, open(), o)
	if got := mustSteps(t, open()); !slices.Equal(got, []string{"a1"}) {
		t.Fatalf("Steps with the step running = %q", got)
	}
	if _, err := open().Update(t.Context(), "a1", offer.Placed("C1", "1.000001")); err != nil {
		t.Fatal(err)
	}
	if got := mustSteps(t, open()); !slices.Equal(got, []string{"a1"}) {
		t.Fatalf("Steps after the card was placed = %q", got)
	}
	if _, err := open().Update(t.Context(), "a1", offer.EndStep(base)); err != nil {
		t.Fatal(err)
	}
	if _, err := open().Update(t.Context(), "a1", offer.EndStep(base.Add(time.Minute))); !errors.Is(err, offer.ErrStepEnded) {
		t.Fatalf("a second EndStep: %v, want ErrStepEnded", err)
	}
	if got := mustSteps(t, open()); len(got) != 0 {
		t.Fatalf("Steps once the step ended = %q", got)
	}
	if got, _ := open().Get(t.Context(), "a1"); !got.StepEnded.Equal(base) || got.TS != "1.000001" {
		t.Errorf("after the step ended: %+v", got)
	}
}

func cancelled(t *testing.T, open func() offer.Store) {
	s := open()
	mustCreate(t, s, sample("a1"))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	checks := map[string]error{}
	checks["Create"] = s.Create(ctx, sample("a2"))
	_, checks["Get"] = s.Get(ctx, "a1")
	_, checks["Update"] = s.Update(ctx, "a1", func(o *offer.Offer) error { o.Max = 5; return nil })
	checks["Prune"] = s.Prune(ctx, base.Add(365*24*time.Hour))
	_, checks["Unsettled"] = s.Unsettled(ctx)
	_, checks["Steps"] = s.Steps(ctx)
	for name, err := range checks {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v", name, err)
		}
	}
	if _, err := open().Get(t.Context(), "a2"); !errors.Is(err, offer.ErrNotFound) {
		t.Errorf("Create with a cancelled context recorded the offer: %v", err)
	}
	if got, err := open().Get(t.Context(), "a1"); err != nil || got.Max != 1 {
		t.Errorf("after cancelled calls: %+v, %v", got, err)
	}
}

// Package personaltest checks an implementation of personal.Store against
// the semantics its documentation gives. It is for tests only.
package personaltest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/bookbot/bookbot/internal/testutil"
	"github.com/bookbot/bookbot/personal"
)

// Run runs the conformance suite, each subtest against a store of its own.
//
// fresh makes that store: it is called once by each subtest, with the
// subtest's t, and must make an empty store no other subtest sees (a file
// under t.TempDir(), a database schema of its own). It returns open, which
// returns a new handle on that same store each time it is called, as a
// restarted process would get one: the suite calls it more than once to
// check that what a handle recorded is there for the next, and that
// handles used at once agree. open is called on the subtest's goroutine;
// it reports a failure with t.Fatal, and registers with t.Cleanup the
// closing of what it opens, if anything needs it.
//
// Where personal.Store's documentation leaves room, the suite holds a
// store to these readings of it:
//   - settings that are all off (the zero value) are saved settings: ok is
//     true when they are read back;
//   - Updated is kept as an instant: its zone and monotonic reading need
//     not be;
//   - what AllSettings returns, and the Agenda a saved Settings points to,
//     are the caller's: changing them changes nothing stored, nor does
//     changing, after SaveSettings, the Agenda it was given;
//   - a claim key is an opaque string: keys differing in any byte are
//     distinct;
//   - Prune deletes the claims made (the at given to Claim) before cutoff,
//     keeps one made at exactly cutoff, and leaves settings alone;
//   - with a context already cancelled every method fails with an error
//     that is context.Canceled, and records nothing.
//
// What every claim does, whatever it claims (one winner among many at
// once, release of a key that holds none), is the outbox's, which
// outboxtest checks.
//
// The subtests run in parallel with each other.
func Run(t *testing.T, fresh func(t *testing.T) (open func() personal.Store)) {
	cases.Run(t, fresh)
}

var cases = testutil.Suite[personal.Store]{
	{"Settings/absent", settingsAbsent},
	{"Settings/round trip", settingsRoundTrip},
	{"Settings/off", settingsOff},
	{"Settings/replace", settingsReplace},
	{"Settings/users distinct", settingsUsersDistinct},
	{"Settings/caller's agenda", settingsCallersAgenda},
	{"AllSettings/none", allSettingsNone},
	{"AllSettings/several users", allSettingsSeveral},
	{"AllSettings/a copy", allSettingsCopy},
	{"Claim/once", claimOnce},
	{"Claim/distinct keys", claimDistinct},
	{"Release/then claim again", releaseClaimAgain},
	{"Prune/before cutoff", pruneBeforeCutoff},
	{"Reopen", reopen},
	{"Context/cancelled", cancelled},
}

// base is the time the fixtures are built around.
var base = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)

// at is base plus minutes.
func at(minutes int) time.Time { return base.Add(time.Duration(minutes) * time.Minute) }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// sample is settings with everything set: a reminder, a weekday agenda
// and an Updated with a zone and a monotonic reading.
func sample() personal.Settings {
	return personal.Settings{
		Remind:  15 * time.Minute,
		Agenda:  &personal.Agenda{Minute: 7*60 + 45, Weekdays: true},
		Updated: time.Now().In(time.FixedZone("IST", 5*3600+1800)),
	}
}

// equal reports whether a and b are the same settings: the same agenda
// (not the same pointer) and the same Updated instant.
func equal(a, b personal.Settings) bool {
	if a.Remind != b.Remind || !a.Updated.Equal(b.Updated) || (a.Agenda == nil) != (b.Agenda == nil) {
		return false
	}
	return a.Agenda == nil || *a.Agenda == *b.Agenda
}

func show(s personal.Settings) string {
	agenda := "off"
	if s.Agenda != nil {
		agenda = fmt.Sprintf("%+v", *s.Agenda)
	}
	return fmt.Sprintf("{remind %v agenda %s updated %s}", s.Remind, agenda, s.Updated.Format(time.RFC3339Nano))
}

// wantSettings fails unless user's settings are want (none when want is
// nil).
func wantSettings(t *testing.T, s personal.Store, user string, want *personal.Settings) {
	t.Helper()
	got, ok, err := s.Settings(t.Context(), user)
	must(t, err)
	switch {
	case want == nil && ok:
		t.Errorf("Settings(%q) = %s, want none", user, show(got))
	case want != nil && !ok:
		t.Errorf("Settings(%q): none, want %s", user, show(*want))
	case want != nil && !equal(got, *want):
		t.Errorf("Settings(%q) = %s, want %s", user, show(got), show(*want))
	}
}

// wantAll fails unless AllSettings is want.
func wantAll(t *testing.T, s personal.Store, want map[string]personal.Settings) {
	t.Helper()
	got, err := s.AllSettings(t.Context())
	must(t, err)
	if !maps.EqualFunc(got, want, equal) {
		t.Errorf("AllSettings = %v, want %v", showAll(got), showAll(want))
	}
}

func showAll(m map[string]personal.Settings) map[string]string {
	out := map[string]string{}
	for u, s := range m {
		out[u] = show(s)
	}
	return out
}

func claim(t *testing.T, s personal.Store, key string, when time.Time) bool {
	t.Helper()
	ok, err := s.Claim(t.Context(), key, when)
	must(t, err)
	return ok
}

// wantClaim claims key (made at base) and fails unless the claim was new
// exactly when want says so.
func wantClaim(t *testing.T, s personal.Store, key string, want bool) {
	t.Helper()
	if got := claim(t, s, key, base); got != want {
		t.Errorf("Claim(%q) = %v, want %v", key, got, want)
	}
}

func settingsAbsent(t *testing.T, open func() personal.Store) {
	s := open()
	wantSettings(t, s, "U1", nil)
	must(t, s.SaveSettings(t.Context(), "U2", sample()))
	wantSettings(t, s, "U1", nil)
}

func settingsRoundTrip(t *testing.T, open func() personal.Store) {
	s := open()
	cases := map[string]personal.Settings{
		"U1": sample(),
		"U2": {Remind: personal.MinRemind},
		"U3": {Remind: personal.MaxRemind, Updated: base},
		"U4": {Agenda: &personal.Agenda{Minute: 0}},
		"U5": {Agenda: &personal.Agenda{Minute: 1439, Weekdays: true}, Updated: base.Add(123456789)},
		"U6": {Remind: 90 * time.Second, Agenda: &personal.Agenda{Minute: 8 * 60}},
	}
	for user, want := range cases {
		must(t, s.SaveSettings(t.Context(), user, want))
	}
	for _, s := range []personal.Store{s, open()} {
		for user, want := range cases {
			wantSettings(t, s, user, &want)
		}
	}
}

func settingsOff(t *testing.T, open func() personal.Store) {
	s := open()
	must(t, s.SaveSettings(t.Context(), "U1", personal.Settings{}))
	off := personal.Settings{}
	for _, s := range []personal.Store{s, open()} {
		wantSettings(t, s, "U1", &off)
		got, _, err := s.Settings(t.Context(), "U1")
		must(t, err)
		if !got.Off() {
			t.Errorf("the zero value read back as %s: not off", show(got))
		}
	}
	wantAll(t, s, map[string]personal.Settings{"U1": off})

	// Turned off, with when.
	offAt := personal.Settings{Updated: base}
	must(t, s.SaveSettings(t.Context(), "U2", sample()))
	must(t, s.SaveSettings(t.Context(), "U2", offAt))
	wantSettings(t, open(), "U2", &offAt)
}

func settingsReplace(t *testing.T, open func() personal.Store) {
	s := open()
	first := sample()
	must(t, s.SaveSettings(t.Context(), "U1", first))
	// The agenda goes: nothing of the first is kept.
	second := personal.Settings{Remind: 5 * time.Minute, Updated: base}
	must(t, s.SaveSettings(t.Context(), "U1", second))
	wantSettings(t, s, "U1", &second)
	wantSettings(t, open(), "U1", &second)

	third := personal.Settings{Agenda: &personal.Agenda{Minute: 9 * 60}, Updated: at(1)}
	must(t, open().SaveSettings(t.Context(), "U1", third))
	wantSettings(t, s, "U1", &third)
	wantAll(t, s, map[string]personal.Settings{"U1": third})
}

func settingsUsersDistinct(t *testing.T, open func() personal.Store) {
	s := open()
	users := []string{"U1", "U10", "u1", "U1\x00", "W1", "U1 ", "Ü1"}
	want := map[string]personal.Settings{}
	for i, u := range users {
		set := personal.Settings{Remind: time.Duration(i+1) * time.Minute}
		must(t, s.SaveSettings(t.Context(), u, set))
		want[u] = set
	}
	for _, s := range []personal.Store{s, open()} {
		for u, set := range want {
			wantSettings(t, s, u, &set)
		}
		wantSettings(t, s, "U", nil)
	}
	wantAll(t, s, want)
}

func settingsCallersAgenda(t *testing.T, open func() personal.Store) {
	s := open()
	set := sample()
	want := set
	want.Agenda = &personal.Agenda{Minute: set.Agenda.Minute, Weekdays: set.Agenda.Weekdays}
	must(t, s.SaveSettings(t.Context(), "U1", set))
	set.Agenda.Minute, set.Agenda.Weekdays = 1, false // the caller's, after saving
	wantSettings(t, s, "U1", &want)

	got, _, err := s.Settings(t.Context(), "U1")
	must(t, err)
	got.Agenda.Minute = 2 // the caller's, after reading
	wantSettings(t, s, "U1", &want)
	wantSettings(t, open(), "U1", &want)
}

func allSettingsNone(t *testing.T, open func() personal.Store) {
	got, err := open().AllSettings(t.Context())
	must(t, err)
	if len(got) != 0 {
		t.Errorf("AllSettings of an empty store = %v, want none", showAll(got))
	}
}

func allSettingsSeveral(t *testing.T, open func() personal.Store) {
	s := open()
	want := map[string]personal.Settings{
		"U1": sample(),
		"U2": {Remind: time.Hour},
		"U3": {Agenda: &personal.Agenda{Minute: 8 * 60}},
		"U4": {},
	}
	for u, set := range want {
		must(t, s.SaveSettings(t.Context(), u, set))
	}
	// Claims are not settings.
	wantClaim(t, s, personal.AgendaKey("U5", personal.DateOf(base, time.UTC)), true)
	wantAll(t, s, want)
	wantAll(t, open(), want)
}

func allSettingsCopy(t *testing.T, open func() personal.Store) {
	s := open()
	want := map[string]personal.Settings{
		"U1": sample(),
		"U2": {Agenda: &personal.Agenda{Minute: 8 * 60}},
	}
	for u, set := range want {
		must(t, s.SaveSettings(t.Context(), u, set))
	}
	got, err := s.AllSettings(t.Context())
	must(t, err)
	// The map and what it points to are the caller's.
	delete(got, "U1")
	got["U3"] = personal.Settings{Remind: time.Minute}
	got["U2"].Agenda.Minute = 9 * 60
	u2 := got["U2"]
	u2.Remind = time.Hour
	got["U2"] = u2

	fresh := map[string]personal.Settings{
		"U1": want["U1"],
		"U2": {Agenda: &personal.Agenda{Minute: 8 * 60}},
	}
	wantAll(t, s, fresh)
	wantAll(t, open(), fresh)
	wantSettings(t, s, "U3", nil)

	// Two calls give two maps.
	a, err := s.AllSettings(t.Context())
	must(t, err)
	b, err := s.AllSettings(t.Context())
	must(t, err)
	a["U9"] = personal.Settings{}
	if _, ok := b["U9"]; ok {
		t.Error("two AllSettings calls share a map")
	}
}

// keys are claim keys of every kind, some alike.
func keys() []string {
	day := personal.Date{Year: 2026, Month: time.November, Day: 24}
	return []string{
		personal.ReminderKey("U1", "b1", at(60)),
		personal.ReminderKey("U1", "b1", at(60).Add(1)), // the booking moved a ns
		personal.ReminderKey("U1", "b1", at(120)),       // the booking moved
		personal.ReminderKey("U1", "b10", at(60)),
		personal.ReminderKey("U10", "b1", at(60)),
		personal.ReminderKey("U2", "b1", at(60)), // another person, the same booking
		personal.AgendaKey("U1", day),
		personal.AgendaKey("U1", personal.Date{Year: 2026, Month: time.November, Day: 25}),
		personal.AgendaKey("U2", day),
		"k", "K", "k\x00", "k ", "kk", "\x00", "ü", "remind",
	}
}

func claimOnce(t *testing.T, open func() personal.Store) {
	s := open()
	k := personal.ReminderKey("U1", "b1", at(60))
	wantClaim(t, s, k, true)
	wantClaim(t, s, k, false)
	wantClaim(t, open(), k, false)
	// Claimed later, it is still claimed.
	if claim(t, s, k, at(600)) {
		t.Errorf("Claim(%q) at another time = true, want false", k)
	}
}

func claimDistinct(t *testing.T, open func() personal.Store) {
	s := open()
	all := keys()
	seen := map[string]bool{}
	for _, k := range all {
		if seen[k] {
			t.Fatalf("fixture: key %q twice", k)
		}
		seen[k] = true
	}
	for _, k := range all {
		wantClaim(t, s, k, true)
	}
	for _, s := range []personal.Store{s, open()} {
		for _, k := range all {
			wantClaim(t, s, k, false)
		}
	}
}

func releaseClaimAgain(t *testing.T, open func() personal.Store) {
	s := open()
	k := personal.AgendaKey("U1", personal.DateOf(base, time.UTC))
	other := personal.AgendaKey("U2", personal.DateOf(base, time.UTC))
	wantClaim(t, s, k, true)
	wantClaim(t, s, other, true)
	must(t, s.Release(t.Context(), k))
	wantClaim(t, open(), k, true) // released, claimed again
	wantClaim(t, s, k, false)
	wantClaim(t, s, other, false) // only k was released

	// Released from another handle.
	must(t, open().Release(t.Context(), k))
	wantClaim(t, s, k, true)
}

func pruneBeforeCutoff(t *testing.T, open func() personal.Store) {
	s := open()
	must(t, s.Prune(t.Context(), base)) // nothing to prune

	set := sample()
	must(t, s.SaveSettings(t.Context(), "U1", set))
	cutoff := at(0)
	claims := []struct {
		key  string
		at   time.Time
		kept bool
	}{
		{"long ago", at(-7 * 24 * 60), false},
		{"a ns before", cutoff.Add(-1), false},
		{"zoned before", cutoff.Add(-time.Minute).In(time.FixedZone("", 14*3600)), false},
		{"at the cutoff", cutoff, true},
		{"at the cutoff, zoned", cutoff.In(time.FixedZone("", -12*3600)), true},
		{"a ns after", cutoff.Add(1), true},
		{"later", at(60), true},
	}
	for _, c := range claims {
		if !claim(t, s, c.key, c.at) {
			t.Fatalf("Claim(%q) = false, want true", c.key)
		}
	}
	must(t, s.Prune(t.Context(), cutoff))
	// The kept are claimed; the pruned can be claimed again.
	h := open()
	for _, c := range claims {
		if got := claim(t, h, c.key, at(120)); got == c.kept {
			t.Errorf("after Prune: Claim(%q), claimed at %v, = %v, want %v", c.key, c.at, got, !c.kept)
		}
	}
	wantSettings(t, s, "U1", &set)

	// Claimed again at 120, nothing is before the cutoff now.
	must(t, s.Prune(t.Context(), cutoff))
	for _, c := range claims {
		wantClaim(t, s, c.key, false)
	}
	// A later cutoff takes them all.
	must(t, open().Prune(t.Context(), at(121)))
	for _, c := range claims {
		wantClaim(t, s, c.key, true)
	}
	wantSettings(t, s, "U1", &set)
}

func reopen(t *testing.T, open func() personal.Store) {
	s := open()
	set := sample()
	must(t, s.SaveSettings(t.Context(), "U1", set))
	must(t, s.SaveSettings(t.Context(), "U2", personal.Settings{}))
	k1 := personal.ReminderKey("U1", "b1", at(60))
	k2 := personal.AgendaKey("U1", personal.DateOf(base, time.UTC))
	wantClaim(t, s, k1, true)
	wantClaim(t, s, k2, true)
	must(t, s.Release(t.Context(), k2))

	again := open()
	wantSettings(t, again, "U1", &set)
	wantSettings(t, again, "U2", &personal.Settings{})
	wantAll(t, again, map[string]personal.Settings{"U1": set, "U2": {}})
	wantClaim(t, again, k1, false)
	wantClaim(t, again, k2, true)
	wantClaim(t, s, k2, false)
}

func cancelled(t *testing.T, open func() personal.Store) {
	s := open()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	k := personal.ReminderKey("U1", "b1", at(60))
	old := personal.AgendaKey("U1", personal.DateOf(base, time.UTC))
	wantClaim(t, s, old, true)
	wantCanceled := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v, want an error that is context.Canceled", op, err)
		}
	}

	_, _, err := s.Settings(ctx, "U1")
	wantCanceled("Settings", err)
	wantCanceled("SaveSettings", s.SaveSettings(ctx, "U1", sample()))
	_, err = s.AllSettings(ctx)
	wantCanceled("AllSettings", err)
	ok, err := s.Claim(ctx, k, base)
	wantCanceled("Claim", err)
	if ok {
		t.Error("Claim with a cancelled context = true")
	}
	wantCanceled("Release", s.Release(ctx, old))
	wantCanceled("Prune", s.Prune(ctx, at(1000)))

	// Nothing was saved, claimed, released or pruned.
	wantSettings(t, s, "U1", nil)
	wantAll(t, s, map[string]personal.Settings{})
	wantClaim(t, s, k, true)
	wantClaim(t, s, old, false)
}

package bolt_test

import (
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/bookbot/bookbot/personal"
)

var (
	reminderKey = personal.ReminderKey("U1", "b1", start)
	settings    = personal.Settings{Remind: 15 * time.Minute, Agenda: &personal.Agenda{Minute: 8 * 60, Weekdays: true}, Updated: start}
)

// TestPersonalFormat pins what the file holds, so that a change of Settings'
// JSON does not change it unnoticed.
func TestPersonalFormat(t *testing.T) {
	t.Parallel()
	db := openBeside(t, t.TempDir())
	path, s := db.Path(), db.Personal()
	if err := s.SaveSettings(t.Context(), "U1", settings); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveSettings(t.Context(), "U2", personal.Settings{}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Claim(t.Context(), reminderKey, start.Add(time.Hour)); err != nil || !ok {
		t.Fatal(ok, err)
	}
	got := map[string]string{}
	update(t, path, func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			if string(name) == "outbox" { // TestOutboxFormat
				return nil
			}
			return b.ForEach(func(k, v []byte) error {
				got[string(name)+" "+string(k)] = string(v)
				return nil
			})
		})
	})
	want := map[string]string{
		"meta version":         "\x00\x00\x00\x00\x00\x00\x00\x02",
		"personal.settings U1": `{"remind_ns":900000000000,"agenda":{"minute":480,"weekdays":true},"updated":"2026-11-24T09:00:00Z"}`,
		"personal.settings U2": `{}`,
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%q = %q, want %q", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("the file holds %q, want %q", got, want)
	}
}

func TestPersonalEmptyNames(t *testing.T) {
	t.Parallel()
	s := openBeside(t, t.TempDir()).Personal()
	if err := s.SaveSettings(t.Context(), "", settings); err == nil {
		t.Error("SaveSettings of no user: no error")
	}
	if _, ok, err := s.Settings(t.Context(), ""); err == nil || ok {
		t.Errorf("Settings of no user: %v, %v; want an error", ok, err)
	}
	if ok, err := s.Claim(t.Context(), "", start); err == nil || ok {
		t.Errorf("Claim of no key: %v, %v; want an error", ok, err)
	}
	if err := s.Release(t.Context(), ""); err != nil {
		t.Errorf("Release of no key: %v, want none: it holds no claim", err)
	}
	if all, err := s.AllSettings(t.Context()); err != nil || len(all) != 0 {
		t.Errorf("AllSettings after the refusals: %v, %v", all, err)
	}
}

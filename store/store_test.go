package store_test

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/config"
	"github.com/bookbot/bookbot/personal"
	"github.com/bookbot/bookbot/statedir"
	"github.com/bookbot/bookbot/store"
	"github.com/bookbot/bookbot/store/pg"
	"github.com/bookbot/bookbot/store/pg/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// options is how a command opens the state its environment names.
func options(t *testing.T, mode store.Mode, env ...string) store.Options {
	t.Helper()
	vars := map[string]string{}
	for i := 0; i+1 < len(env); i += 2 {
		vars[env[i]] = env[i+1]
	}
	cfg, err := config.Load(func(k string) string { return vars[k] }, 0)
	if err != nil {
		t.Fatal(err)
	}
	return store.Options{StateDir: cfg.StateDir, DatabaseURL: cfg.DatabaseURL, Mode: mode}
}

func open(t *testing.T, o store.Options) store.State {
	t.Helper()
	st, err := store.Open(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

// complete fails the test for each field of st that is not set, but
// Database, which only PostgreSQL has.
func complete(t *testing.T, st store.State, database bool) {
	t.Helper()
	v := reflect.ValueOf(st)
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		set := !v.Field(i).IsNil()
		if want := f.Name != "Database" || database; set != want {
			t.Errorf("State.%s set: %v, want %v", f.Name, set, want)
		}
	}
}

var remind = personal.Settings{Remind: time.Hour}

func save(t *testing.T, st store.State, user string) error {
	t.Helper()
	return st.Personal.SaveSettings(t.Context(), user, remind)
}

func saved(t *testing.T, st store.State, user string) bool {
	t.Helper()
	set, ok, err := st.Personal.Settings(t.Context(), user)
	if err != nil {
		t.Fatal(err)
	}
	return ok && set.Remind == remind.Remind
}

// The embedded store comes whole: the directory held by one process, a
// digest beside it sharing its file, a read-only look that changes
// nothing, and the work that replicas share run here at once.
func TestOpenEmbedded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := []string{"BOOKBOT_STATE_DIR", dir}

	run := open(t, options(t, store.Hold, env...))
	complete(t, run, false)
	if _, err := store.Open(t.Context(), options(t, store.Hold, env...)); !isLocked(err) {
		t.Errorf("a second process holding the directory: %v, want a *statedir.LockedError", err)
	}
	if err := save(t, run, "UADA"); err != nil {
		t.Fatal(err)
	}
	beside := open(t, options(t, store.Beside, env...))
	complete(t, beside, false)
	if !saved(t, beside, "UADA") {
		t.Error("beside: the settings saved by the process holding the directory are not there")
	}
	if err := save(t, beside, "UBOB"); err != nil || !saved(t, run, "UBOB") {
		t.Errorf("beside: a save is not the holder's to read (%v)", err)
	}
	look := open(t, options(t, store.ReadOnly, env...))
	complete(t, look, false)
	if !saved(t, look, "UADA") {
		t.Error("read-only: the settings saved are not there")
	}
	if err := save(t, look, "UCAT"); err == nil || saved(t, run, "UCAT") {
		t.Errorf("read-only: a save: %v", err)
	}

	ran := false
	run.Singleton(t.Context(), func(context.Context) { ran = true })
	if !ran {
		t.Error("the singleton work did not run at once")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	run.PersonalSaved(ctx, func() { t.Error("woken by a save no other process made") })

	run.Close()
	if _, err := store.Open(t.Context(), options(t, store.Hold, env...)); err != nil {
		t.Errorf("holding the directory after Close: %v", err)
	}
}

func isLocked(err error) bool {
	_, ok := errors.AsType[*statedir.LockedError](err)
	return ok
}

// PostgreSQL comes whole, migrated when asked; a read-only look changes
// nothing; the replica that leads runs the singleton work.
func TestOpenPostgres(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	env := []string{"BOOKBOT_DATABASE_URL", url}

	ro := options(t, store.ReadOnly, env...)
	ro.Migrate = true
	if _, err := store.Open(t.Context(), ro); err == nil {
		t.Error("a read-only state migrated")
	}
	o := options(t, store.Hold, env...)
	o.Migrate, o.LeaderCheck = true, 50*time.Millisecond
	run := open(t, o)
	complete(t, run, true)
	if v, latest, err := run.Database.Version(t.Context()); err != nil || v != pg.Latest() || latest != pg.Latest() {
		t.Errorf("schema after Open with Migrate: %d (of %d), %v; want %d", v, latest, err, pg.Latest())
	}
	if err := save(t, run, "UADA"); err != nil {
		t.Fatal(err)
	}
	replica := open(t, options(t, store.Hold, env...))
	complete(t, replica, true)
	if !saved(t, replica, "UADA") {
		t.Error("another replica: the settings saved are not there")
	}
	look := open(t, options(t, store.ReadOnly, env...))
	if !saved(t, look, "UADA") {
		t.Error("read-only: the settings saved are not there")
	}
	if err := save(t, look, "UCAT"); err == nil || saved(t, run, "UCAT") {
		t.Errorf("read-only: a save: %v", err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	led := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		run.Singleton(ctx, func(ctx context.Context) { close(led); <-ctx.Done() })
	}()
	select {
	case <-led:
	case <-t.Context().Done():
		t.Fatal("the only replica never led")
	}
	cancel()
	<-done
}

// An error opening the state names the variable that chose it, and never
// the password.
func TestOpenErrors(t *testing.T) {
	t.Parallel()
	_, err := store.Open(t.Context(), options(t, store.Hold, "BOOKBOT_DATABASE_URL", "postgres://u:hunter2@127.0.0.1:1/bookbot?connect_timeout=5"))
	if err == nil || !strings.Contains(err.Error(), "database (BOOKBOT_DATABASE_URL)") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("an unreachable database: %v", err)
	}
	file := t.TempDir() + "/file"
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = store.Open(t.Context(), options(t, store.Hold, "BOOKBOT_STATE_DIR", file))
	if err == nil || !strings.Contains(err.Error(), "state (BOOKBOT_STATE_DIR "+file+")") {
		t.Errorf("a state directory that is a file: %v", err)
	}
}

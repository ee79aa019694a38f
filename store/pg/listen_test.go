package pg_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookbot/bookbot/personal"
	"github.com/bookbot/bookbot/store/pg"
)

// listening is a Listen in the background; calls gets one value per call
// of its fn.
type listening struct {
	*running
	calls chan struct{}
}

// listen starts a Listen, and waits for its first call of fn. When the test
// ends, it is stopped, and must return nil.
func listen(t *testing.T, db *pg.DB, channel string) *listening {
	t.Helper()
	l := &listening{calls: make(chan struct{}, 100)}
	l.running = background(t, "Listen", func(ctx context.Context) error {
		return db.Listen(ctx, channel, nil, func() { l.calls <- struct{}{} })
	})
	t.Cleanup(func() {
		if err := l.stop(t); err != nil {
			t.Errorf("Listen after its context was cancelled: %v", err)
		}
	})
	l.called(t, "when listening began")
	return l
}

// called waits for a call of fn.
func (l *listening) called(t *testing.T, what string) {
	t.Helper()
	select {
	case <-l.calls:
	case <-time.After(10 * time.Second):
		t.Fatalf("fn not called %s", what)
	}
}

// idle checks that fn has no call pending.
func (l *listening) idle(t *testing.T, what string) {
	t.Helper()
	if n := len(l.calls); n > 0 {
		t.Errorf("%d calls of fn %s, want none", n, what)
	}
}

func notify(t *testing.T, c *pgx.Conn, channel string) {
	t.Helper()
	if _, err := c.Exec(t.Context(), "SELECT pg_notify($1, '')", channel); err != nil {
		t.Fatal(err)
	}
}

// A save of someone's settings through one DB reaches the listener of
// another; notifications on other channels do not, and a channel's name
// is taken as it is.
func TestListenAcrossHandles(t *testing.T) {
	t.Parallel()
	u := migrated(t)
	a, b := open(t, u), open(t, u)
	admin := conn(t, u)
	l := listen(t, a, pg.PersonalChannel)
	odd := listen(t, a, "Bookbot Odd-Name")

	if err := b.Personal().SaveSettings(t.Context(), "UADA", personal.Settings{Remind: 15 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	l.called(t, "after a save through another DB")

	// Sent in order by one session, and delivered so: once the last has
	// come, any other would have too.
	notify(t, admin, "bookbot_other")
	notify(t, admin, "Bookbot Odd-Name")
	notify(t, admin, pg.PersonalChannel)
	l.called(t, "on its channel")
	odd.called(t, "on a channel whose name needs quoting")
	l.idle(t, "for one save and one notification")
	odd.idle(t, "for one notification")
}

// The listener's session ended from the server: Listen listens again on
// a new one, calls fn once it does, and goes on passing notifications.
func TestListenBackendTerminated(t *testing.T) {
	t.Parallel()
	u := migrated(t)
	a := open(t, u)
	admin := conn(t, u)
	l := listen(t, a, pg.PersonalChannel)

	backend := func() (pid int32) {
		t.Helper()
		err := admin.QueryRow(t.Context(), `SELECT pid FROM pg_stat_activity
			WHERE datname = current_database() AND application_name = $1`, "bookbot listen "+pg.PersonalChannel).Scan(&pid)
		if err != nil {
			t.Fatalf("the listener's backend: %v", err)
		}
		return pid
	}
	first := backend()
	if _, err := admin.Exec(t.Context(), "SELECT pg_terminate_backend($1)", first); err != nil {
		t.Fatal(err)
	}
	at := time.Now()
	l.called(t, "after listening again")
	t.Logf("listening again %v after the backend was terminated", time.Since(at))
	if again := backend(); again == first {
		t.Errorf("listening on backend %d, the one terminated", again)
	}
	notify(t, admin, pg.PersonalChannel)
	l.called(t, "on a notification after listening again")
	l.idle(t, "after one notification")
}

// Listen returns nil when its context ends, and an error on a closed DB;
// Close does not wait for a Listen under way.
func TestListenEnds(t *testing.T) {
	t.Parallel()
	u := migrated(t)
	a := open(t, u)
	l := listen(t, a, pg.PersonalChannel)
	closed := make(chan struct{})
	go func() { a.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close waited for Listen")
	}
	if err := l.stop(t); err != nil {
		t.Errorf("Listen after its context ended = %v", err)
	}

	err := a.Listen(t.Context(), pg.PersonalChannel, nil, func() { t.Error("fn called on a closed DB") })
	if err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Listen on a closed DB = %v; want an error saying it was closed", err)
	}
	if err := open(t, u).Listen(t.Context(), "", nil, func() {}); err == nil {
		t.Error("Listen with no channel: no error")
	}
}

package pg_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/internal/testutil"
	"github.com/bookbot/bookbot/notices"
	"github.com/bookbot/bookbot/personal"
	"github.com/bookbot/bookbot/store/pg"
	"github.com/bookbot/bookbot/store/pg/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// open opens another handle on the database at url, as another replica
// would, closed when the test ends.
func open(t testing.TB, url string) *pg.DB {
	t.Helper()
	db, err := pg.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

// conn is a plain connection to the database at url, to look behind the
// stores.
func conn(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// migrated is the URL of a fresh database, migrated: a copy of one that
// Migrate migrated, made again only when the migrations change.
func migrated(t testing.TB) string {
	t.Helper()
	return pgtest.Copy(t, migrations(t), func(ctx context.Context, u string) error {
		db, err := pg.Open(ctx, u)
		if err != nil {
			return err
		}
		defer db.Close()
		_, _, err = db.Migrate(ctx)
		return err
	})
}

// migrations is the name and text of every migration, in order.
func migrations(t testing.TB) string {
	t.Helper()
	files, err := filepath.Glob("migrations/*.sql") // sorted
	if err != nil || len(files) == 0 {
		t.Fatalf("the migrations: %d files, %v", len(files), err)
	}
	var all strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&all, "%s %d\n%s\n", f, len(b), b)
	}
	return all.String()
}

// A NUL in a snapshot's strings is kept: jsonb would refuse it.
func TestSnapshotNUL(t *testing.T) {
	t.Parallel()
	s := open(t, migrated(t)).Notices()
	b := booking.Booking{ID: "b\x00", Start: time.Unix(0, 1), End: time.Unix(0, 2), BookerName: booking.Some("a\x00b")}
	if err := s.SaveLast(t.Context(), notices.Snapshot{At: time.Unix(0, 3), Bookings: []booking.Booking{b}}); err != nil {
		t.Fatal(err)
	}
	got, _, err := s.Last(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Bookings) != 1 || got.Bookings[0].ID != b.ID || got.Bookings[0].BookerName != b.BookerName {
		t.Errorf("Last = %+v, want the booking %+v", got, b)
	}
}

// Replicas starting together each migrate; each step is applied once.
func TestMigrateConcurrent(t *testing.T) {
	t.Parallel()
	u := pgtest.URL(t)
	handles := make([]*pg.DB, 5)
	for i := range handles {
		handles[i] = open(t, u)
	}
	cur, latest, err := handles[0].Version(t.Context())
	if err != nil || cur != 0 || latest < 1 {
		t.Fatalf("Version of an empty database = %d, %d, %v; want 0, at least 1, nil", cur, latest, err)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(handles))
	from, to := make([]int, len(handles)), make([]int, len(handles))
	start := make(chan struct{})
	for i, db := range handles {
		wg.Go(func() {
			<-start
			from[i], to[i], errs[i] = db.Migrate(t.Context())
		})
	}
	close(start)
	wg.Wait()
	fromEmpty := 0
	for i, err := range errs {
		if err != nil {
			t.Errorf("Migrate %d: %v", i, err)
		}
		if from[i] == 0 {
			fromEmpty++
		}
		if to[i] != latest || from[i] != 0 && from[i] != latest {
			t.Errorf("Migrate %d: from %d to %d; want from 0 or %d, to %d", i, from[i], to[i], latest, latest)
		}
	}
	if fromEmpty != 1 {
		t.Errorf("%d Migrates found the schema empty, want 1", fromEmpty)
	}

	cur, _, err = handles[0].Version(t.Context())
	if err != nil || cur != latest {
		t.Fatalf("Version after Migrate = %d, %d, %v; want the latest twice", cur, latest, err)
	}
	// A step applied twice would have failed above (its CREATE TABLEs are
	// not IF NOT EXISTS); its row is there once.
	var rows, distinct int
	err = conn(t, u).QueryRow(t.Context(),
		"SELECT count(*), count(DISTINCT version) FROM bookbot_schema_migrations").Scan(&rows, &distinct)
	if err != nil {
		t.Fatal(err)
	}
	if rows != latest || distinct != latest {
		t.Errorf("%d migration rows, %d versions; want %d of each", rows, distinct, latest)
	}
	if from, to, err := open(t, u).Migrate(t.Context()); err != nil || from != latest || to != latest {
		t.Errorf("Migrate of a migrated database: from %d to %d, %v", from, to, err)
	}
}

// Each step's record says whether it is additive, as its file does; a
// record from before additive steps gets the column.
func TestMigrateRecordsAdditive(t *testing.T) {
	t.Parallel()
	u := migrated(t)
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) != pg.Latest() {
		t.Fatalf("%d migration files, %v; want %d", len(files), err, pg.Latest())
	}
	admin := conn(t, u)
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var additive bool
		if err := admin.QueryRow(t.Context(), "SELECT additive FROM bookbot_schema_migrations WHERE version = $1", i+1).Scan(&additive); err != nil {
			t.Fatal(err)
		}
		if want := strings.HasPrefix(string(b), "-- additive:"); additive != want {
			t.Errorf("%s recorded additive %v, want %v", f, additive, want)
		}
	}
	if _, err := admin.Exec(t.Context(), "ALTER TABLE bookbot_schema_migrations DROP COLUMN additive"); err != nil {
		t.Fatal(err)
	}
	if from, to, err := open(t, u).Migrate(t.Context()); err != nil || from != pg.Latest() || to != from {
		t.Errorf("Migrate of a record without the column: from %d to %d, %v", from, to, err)
	}
	if b, err := open(t, u).Breaking(t.Context()); err != nil || b != 0 {
		t.Errorf("Breaking after the column came back = %d, %v", b, err)
	}
}

// Steps lists the steps after a version, each with its file's name and
// mark.
func TestSteps(t *testing.T) {
	t.Parallel()
	all := pg.Steps(0)
	if len(all) != pg.Latest() || len(pg.Steps(-1)) != len(all) || len(pg.Steps(pg.Latest())) != 0 || len(pg.Steps(pg.Latest()+1)) != 0 {
		t.Fatalf("Steps: %d of %d from 0", len(all), pg.Latest())
	}
	if got := pg.Steps(5); len(got) == 0 || got[0] != (pg.Step{Version: 6, Name: "0006_envelope_acks.sql", Additive: true}) {
		t.Errorf("Steps(5) = %+v", got)
	}
	if all[0] != (pg.Step{Version: 1, Name: "0001_stores.sql"}) {
		t.Errorf("the first step: %+v", all[0])
	}
}

// A database a newer bookbot migrated runs this one while the newer steps
// are additive (replicas being upgraded or rolled back), and is refused
// from the first that is not.
func TestMigrateNewer(t *testing.T) {
	t.Parallel()
	u := migrated(t)
	db := open(t, u)
	_, latest, err := db.Version(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if latest != pg.Latest() {
		t.Errorf("Version's latest %d, Latest() %d", latest, pg.Latest())
	}
	step := func(v int, additive bool) {
		t.Helper()
		_, err := conn(t, u).Exec(t.Context(), "INSERT INTO bookbot_schema_migrations VALUES ($1, now(), $2)", v, additive)
		if err != nil {
			t.Fatal(err)
		}
	}
	step(latest+1, true)
	if from, to, err := db.Migrate(t.Context()); err != nil || from != latest+1 || to != latest+1 {
		t.Errorf("Migrate with an additive newer step: from %d to %d, %v; want from and to %d", from, to, err, latest+1)
	}
	if b, err := db.Breaking(t.Context()); err != nil || b != 0 {
		t.Errorf("Breaking = %d, %v; want 0", b, err)
	}
	step(latest+2, false)
	step(latest+3, true)
	_, _, err = db.Migrate(t.Context())
	if want := fmt.Sprintf("step %d is not additive", latest+2); err == nil || !strings.Contains(err.Error(), "newer") || !strings.Contains(err.Error(), want) {
		t.Errorf("Migrate of a database of version %d, latest %d: %v; want it refused as newer, %s", latest+3, latest, err, want)
	}
	if b, err := db.Breaking(t.Context()); err != nil || b != latest+2 {
		t.Errorf("Breaking = %d, %v; want %d", b, err, latest+2)
	}
	if cur, _, err := db.Version(t.Context()); err != nil || cur != latest+3 {
		t.Errorf("Version = %d, %v; want %d", cur, err, latest+3)
	}
	// The lock was given back: another replica of this database (advisory
	// locks are a database's own) takes it, and is refused the same way.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, _, err := open(t, u).Migrate(ctx); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("Migrate on another handle: %v; want it refused as newer", err)
	}
}

// Open's errors never hold the password, however it fails.
func TestOpenHidesPassword(t *testing.T) {
	t.Parallel()
	const pw = "s3cr3t-PW"
	u, err := url.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	user := u.User.Username()
	u.User = url.UserPassword(user, pw)
	missing := *u
	missing.Path += "_missing"
	unreachable := *u
	unreachable.Host = "127.0.0.1:1"
	for name, dsn := range map[string]string{
		"no such database":   missing.String(),
		"unreachable":        unreachable.String(),
		"escaped":            fmt.Sprintf("postgres://%s:%s@127.0.0.1:1/x", user, url.QueryEscape(pw+"/@:")),
		"bad port":           fmt.Sprintf("postgres://%s:%s@127.0.0.1:port/x", user, pw),
		"unescaped":          fmt.Sprintf("postgres://%s:%s/@127.0.0.1:1/x", user, pw),
		"in the query":       fmt.Sprintf("postgres://%s@127.0.0.1:1/x?password=%s", user, pw),
		"key=value":          fmt.Sprintf("host=127.0.0.1 port=1 user=%s password=%s dbname=x", user, pw),
		"key=value, quoted":  fmt.Sprintf("host=127.0.0.1 port=1 user=%s password='%s x' dbname=x", user, pw),
		"key=value, bad key": fmt.Sprintf("host=127.0.0.1 port=x user=%s password=%s", user, pw),
		// pgx's own masking misses this one.
		"key = value, bad key": fmt.Sprintf("host=127.0.0.1 port=x user=%s password = %s", user, pw),
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		db, err := pg.Open(ctx, dsn)
		cancel()
		if err == nil {
			db.Close()
			t.Errorf("%s: Open succeeded", name)
			continue
		}
		t.Logf("%s: %v", name, err)
		if strings.Contains(err.Error(), pw) || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%s: the error holds the password: %v", name, err)
		}
		// pgx's ParseConfigError holds the URL as given.
		if pe := (*pgconn.ParseConfigError)(nil); errors.As(err, &pe) {
			t.Errorf("%s: the error wraps pgx's, which holds the URL", name)
		}
		for e := errors.Unwrap(err); e != nil; e = errors.Unwrap(e) {
			if strings.Contains(e.Error(), "s3cr3t") {
				t.Errorf("%s: an error it wraps holds the password: %v", name, e)
			}
		}
	}
}

func TestOpenCancelled(t *testing.T) {
	t.Parallel()
	u := pgtest.URL(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := pg.Open(ctx, u); !errors.Is(err, context.Canceled) {
		t.Errorf("Open with a cancelled context: %v, want context.Canceled", err)
	}
	if err := open(t, u).Ping(t.Context()); err != nil {
		t.Error(err)
	}
}

// BenchmarkNoticeClaim is one new claim: one round trip.
func BenchmarkNoticeClaim(b *testing.B) {
	s := open(b, migrated(b)).Notices()
	start := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	i := 0
	for b.Loop() {
		i++
		k := notices.Key{BookingID: fmt.Sprintf("b%d", i), Kind: notices.New, Start: start, End: start.Add(time.Hour), Since: start}
		if ok, err := s.Claim(b.Context(), k, start); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}

// A store opened ReadOnly reads, and writes nothing.
func TestReadOnly(t *testing.T) {
	t.Parallel()
	url := migrated(t)
	if err := open(t, url).Personal().SaveSettings(t.Context(), "UADA", personal.Settings{Remind: time.Hour}); err != nil {
		t.Fatal(err)
	}
	db, err := pg.Open(t.Context(), url, pg.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	if set, ok, err := db.Personal().Settings(t.Context(), "UADA"); err != nil || !ok || set.Remind != time.Hour {
		t.Errorf("read: %+v, %v, %v", set, ok, err)
	}
	if err := db.Personal().SaveSettings(t.Context(), "UBOB", personal.Settings{Remind: time.Hour}); err == nil {
		t.Error("a read-only store saved settings")
	}
	if _, ok, _ := open(t, url).Personal().Settings(t.Context(), "UBOB"); ok {
		t.Error("the settings a read-only store was given are in the database")
	}
}

// OnQueryError counts the statements the database refused.
func TestOnQueryError(t *testing.T) {
	t.Parallel()
	url := migrated(t)
	var failed atomic.Int32
	db, err := pg.Open(t.Context(), url, pg.OnQueryError(func() { failed.Add(1) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	if _, _, err := db.Notices().Last(t.Context()); err != nil || failed.Load() != 0 {
		t.Fatalf("a working store: %v, %d failed", err, failed.Load())
	}
	drop, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer drop.Close(t.Context())
	if _, err := drop.Exec(t.Context(), "DROP TABLE bookbot_notices_last"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Notices().Last(t.Context()); err == nil || failed.Load() != 1 {
		t.Errorf("a missing table: %v, %d failed, want 1", err, failed.Load())
	}

	// A statement its caller gave up on, while the database carried it
	// out, is not counted: here one waiting for a table another session
	// locked.
	tx, err := drop.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(t.Context(), "LOCK TABLE bookbot_outbox IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	waited := make(chan error, 1)
	go func() { _, _, err := db.Outbox().Lookup(ctx, "digest/2026-11-24"); waited <- err }()
	testutil.WaitFor(t, 10*time.Second, "the lookup to wait for the lock", func() bool { return lockWaiters(t, drop) > 0 })
	cancel()
	if err := <-waited; !errors.Is(err, context.Canceled) || failed.Load() != 1 {
		t.Errorf("a statement given up on: %v, %d failed, want context.Canceled and still 1", err, failed.Load())
	}
}

// lockWaiters counts the sessions of c's database waiting for a lock;
// other tests' databases are not counted.
func lockWaiters(t *testing.T, c *pgx.Conn) int {
	t.Helper()
	var n int
	err := c.QueryRow(t.Context(), `SELECT count(*) FROM pg_locks k JOIN pg_database d ON d.oid = k.database
		WHERE NOT k.granted AND d.datname = current_database()`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

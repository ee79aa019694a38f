// Package pgtest gives tests a PostgreSQL database of their own: an empty
// one (URL), or a copy of a template built once (Copy), which under Main is
// one a test before used, emptied, when that test left its schema as it
// found it. A package whose tests use it runs them through Main. It is for
// tests only.
//
// The server is the one at BOOKBOT_TEST_DATABASE_URL (by default
// postgres://postgres@127.0.0.1:5432/test), as a user who may create
// databases. When it cannot be reached the tests that need it are skipped,
// unless CI=true or BOOKBOT_REQUIRE_POSTGRES=true: then they fail.
package pgtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/bookbot/bookbot/internal/testutil"
)

// DefaultAdminURL is the server tests use when BOOKBOT_TEST_DATABASE_URL
// is not set.
const DefaultAdminURL = "postgres://postgres@127.0.0.1:5432/test"

// connectWait bounds the wait for the server.
const connectWait = 5 * time.Second

// unreachable is the first failure to reach the server, so that later
// tests do not wait for it again.
var unreachable struct {
	sync.Mutex
	err error
}

// URL creates an empty database for the test, dropped when it ends, and
// returns its URL.
func URL(t testing.TB) string {
	t.Helper()
	admin, conn := connect(t)
	defer conn.Close(context.Background())
	return create(t, admin, conn, "")
}

// Copy gives the test a database as a copy of a template database, and
// returns its URL. Copying is much quicker than building: build runs once,
// on an empty database, the first time a template of key is asked for on
// the server, and leaves the template at url as every copy starts; it must
// close its connections to it.
//
// key says what build makes, say the text of the migrations it runs:
// another key is another template, so a changed build never meets a stale
// template. The template is named after a hash of key, is kept on the
// server for the next test run, and is built under an advisory lock, so
// that test binaries running at once build it once.
//
// Under Main, a copy a test is done with is emptied for the next test
// rather than dropped, when the test left it as the template made it but
// for the rows of tables the template left empty (see reuse); else it is
// dropped when the test ends.
func Copy(t testing.TB, key string, build func(ctx context.Context, url string) error) string {
	t.Helper()
	sum := sha256.Sum256([]byte(key))
	tpl := "bookbot_template_" + hex.EncodeToString(sum[:8])
	reuse := dropping.under() // only Main drops the copies left at the end
	if reuse {
		if c, ok := reusing.take(tpl); ok {
			t.Cleanup(func() { reusing.giveBack(c, tpl) })
			return withDatabase(c.admin, c.name)
		}
	}
	admin, conn := connect(t)
	defer conn.Close(context.Background())
	if err := templates.ready(t.Context(), admin, conn, tpl, build); err != nil {
		t.Fatalf("PostgreSQL: template database %s: %v", tpl, err)
	}
	if !reuse {
		return create(t, admin, conn, tpl)
	}
	c, err := reusing.create(t.Context(), admin, conn, tpl)
	if err != nil {
		t.Fatalf("PostgreSQL: %v", err)
	}
	t.Cleanup(func() { reusing.giveBack(c, tpl) })
	return withDatabase(admin, c.name)
}

// connect connects to the server as its admin, or skips or fails the test
// when it cannot be reached.
func connect(t testing.TB) (admin string, conn *pgx.Conn) {
	t.Helper()
	admin = os.Getenv("BOOKBOT_TEST_DATABASE_URL")
	if admin == "" {
		admin = DefaultAdminURL
	}
	cfg, err := pgconn.ParseConfig(admin)
	if err != nil {
		t.Fatalf("BOOKBOT_TEST_DATABASE_URL: cannot parse it") // its text may hold a password
	}
	where := fmt.Sprintf("%s:%d", cfg.Host, cfg.Port)

	unreachable.Lock()
	err = unreachable.err
	unreachable.Unlock()
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), connectWait)
		defer cancel()
		if conn, err = pgx.Connect(ctx, admin); err != nil {
			unreachable.Lock()
			unreachable.err = err
			unreachable.Unlock()
		}
	}
	if err != nil {
		if os.Getenv("CI") == "true" || os.Getenv("BOOKBOT_REQUIRE_POSTGRES") == "true" {
			t.Fatalf("PostgreSQL not reachable at %s, and CI or BOOKBOT_REQUIRE_POSTGRES requires it: %v", where, err)
		}
		t.Skipf("PostgreSQL not reachable at %s: tests of the PostgreSQL store not run (set BOOKBOT_TEST_DATABASE_URL)", where)
	}
	return admin, conn
}

// create creates the test's database, from template tpl ("": the server's
// default), dropped when the test ends.
func create(t testing.TB, admin string, conn *pgx.Conn, tpl string) string {
	t.Helper()
	name, err := createDatabase(t.Context(), conn, tpl)
	if err != nil {
		t.Fatalf("PostgreSQL: %v", err)
	}
	t.Cleanup(func() { drop(t, admin, name) })
	return withDatabase(admin, name)
}

// createDatabase creates a database of a new name, from template tpl ("":
// the server's default), and returns its name.
func createDatabase(ctx context.Context, conn *pgx.Conn, tpl string) (string, error) {
	name := "bookbot_t_" + hex.EncodeToString(random(8))
	sql := "CREATE DATABASE " + name
	if tpl != "" {
		sql += " TEMPLATE " + tpl
	}
	_, err := conn.Exec(ctx, sql)
	return name, err
}

// templates are the templates this process has found or built.
var templates = &built{done: map[string]bool{}}

type built struct {
	mu   sync.Mutex // held while one is built: the others wait for it
	done map[string]bool
}

// templateLock is the first key of the advisory lock a template is built
// under, "tmpl" in ASCII; the second is the template's hash.
const templateLock int32 = 0x746d706c

// ready makes sure the template tpl is on the server, built by build.
func (b *built) ready(ctx context.Context, admin string, conn *pgx.Conn, tpl string, build func(context.Context, string) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done[tpl] {
		return nil
	}
	h := fnv.New32a()
	h.Write([]byte(tpl))
	key := int32(h.Sum32() & 0x7fffffff)
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1::int4, $2::int4)", templateLock, key); err != nil {
		return err
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1::int4, $2::int4)", templateLock, key)
	}()
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", tpl).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		// Built under another name and renamed when whole: a build that
		// died on the way leaves no template, only this, dropped here.
		partial := tpl + "_partial"
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+partial+" WITH (FORCE)"); err != nil {
			return err
		}
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+partial); err != nil {
			return err
		}
		if err := build(ctx, withDatabase(admin, partial)); err != nil {
			return fmt.Errorf("build: %w", err)
		}
		if _, err := conn.Exec(ctx, "ALTER DATABASE "+partial+" RENAME TO "+tpl); err != nil {
			return err
		}
		// A session on the template would stop its copies.
		if _, err := conn.Exec(ctx, "ALTER DATABASE "+tpl+" WITH ALLOW_CONNECTIONS false"); err != nil {
			return err
		}
	}
	b.done[tpl] = true
	return nil
}

// drop drops the test's database, closing what the test left connected,
// or has it dropped in the background under Main.
func drop(t testing.TB, admin, name string) {
	if dropping.later(admin, name) {
		return
	}
	if err := dropNow(admin, name); err != nil {
		t.Error(err)
	}
}

// dropWait bounds a drop. DROP DATABASE waits for a checkpoint, which on
// a server busy with other tests' writes has taken 45 s.
const dropWait = 2 * time.Minute

func dropNow(admin, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), dropWait)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}

// Parallel is how many tests Main runs at once, unless -test.parallel
// says otherwise.
const Parallel = 6

// dropsAtOnce bounds the drops under way in the background.
const dropsAtOnce = 16

// Main runs the tests of a package whose tests use the server, from its
// TestMain, and returns the exit code for os.Exit:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
// Such tests wait on the server, not on this machine's processors, whose
// number is the default of -test.parallel: Main runs Parallel of them at
// once. It empties a copy a test is done with for the next (see Copy),
// and drops each other database in the background once its test has
// ended, the copies left at the end too; it waits for the drops before it
// returns: DROP DATABASE waits for a checkpoint of the whole server, which
// drops at once share.
func Main(m *testing.M) int {
	testutil.Parallel(Parallel)
	dropping.start()
	code := m.Run()
	reusing.dropAll()
	if err := dropping.wait(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = max(code, 1)
	}
	return code
}

// dropping is the drops under way in the background, under Main.
var dropping drops

type drops struct {
	mu    sync.Mutex
	on    bool
	slots chan struct{}
	wg    sync.WaitGroup
	errs  []error
}

func (d *drops) start() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.on, d.slots = true, make(chan struct{}, dropsAtOnce)
}

// later drops the database in the background, and reports whether it
// does: only under Main.
func (d *drops) later(admin, name string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.on {
		return false
	}
	d.wg.Go(func() {
		d.slots <- struct{}{}
		err := dropNow(admin, name)
		<-d.slots
		if err != nil {
			d.mu.Lock()
			d.errs = append(d.errs, err)
			d.mu.Unlock()
		}
	})
	return true
}

// under reports whether the tests run under Main.
func (d *drops) under() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.on
}

// wait waits for the drops under way, and returns their errors.
func (d *drops) wait() error {
	d.wg.Wait()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.on = false
	return errors.Join(d.errs...)
}

// withDatabase is admin with the database name replaced.
func withDatabase(admin, name string) string {
	if strings.HasPrefix(admin, "postgres://") || strings.HasPrefix(admin, "postgresql://") {
		if u, err := url.Parse(admin); err == nil {
			u.Path, u.RawPath = "/"+name, ""
			return u.String()
		}
	}
	return admin + " dbname=" + name // key=value: the last dbname counts
}

func random(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails
	return b
}

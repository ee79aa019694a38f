// Package pgtest gives tests a PostgreSQL database of their own. It is
// for tests only.
//
// The server is the one at BOOKBOT_TEST_DATABASE_URL (by default
// postgres://postgres@127.0.0.1:5432/test), as a user who may create
// databases. When it cannot be reached the tests that need it are skipped,
// unless CI=true or BOOKBOT_REQUIRE_POSTGRES=true: then they fail.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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
	admin := os.Getenv("BOOKBOT_TEST_DATABASE_URL")
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
	var conn *pgx.Conn
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
	defer conn.Close(context.Background())

	name := "bookbot_t_" + hex.EncodeToString(random(8))
	if _, err := conn.Exec(t.Context(), "CREATE DATABASE "+name); err != nil {
		t.Fatalf("PostgreSQL at %s: %v", where, err)
	}
	t.Cleanup(func() { drop(t, admin, name) })
	return withDatabase(admin, name)
}

// drop drops the test's database, closing what the test left connected.
func drop(t testing.TB, admin, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Errorf("drop database %s: %v", name, err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		t.Errorf("drop database %s: %v", name, err)
	}
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

package pg

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrationFiles are the schema's steps, NNNN_name.sql, numbered from 1
// without gaps. A step, once released, is never edited: a change is a new
// step. A step whose first line begins "-- additive:" (saying why) leaves
// the schema one a bookbot that knows only the steps before it runs on:
// new tables, new nullable columns. Replicas being upgraded, or rolled
// back, then run old and new binaries on one database.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

type migration struct {
	version  int
	name     string
	sql      string
	additive bool
}

// additiveMark begins the first line of an additive step.
const additiveMark = "-- additive:"

// Latest is the schema version this bookbot migrates to.
func Latest() int { return len(migrations) }

// Step is one of the schema's steps.
type Step struct {
	Version  int
	Name     string // its file's: 0006_envelope_acks.sql
	Additive bool   // older bookbots run on the schema it leaves
}

// Steps returns this bookbot's steps after version from.
func Steps(from int) []Step {
	var steps []Step
	for _, m := range migrations[min(max(from, 0), len(migrations)):] {
		steps = append(steps, Step{Version: m.version, Name: m.name, Additive: m.additive})
	}
	return steps
}

// migrations are the steps in order; a misnumbered file fails every test.
var migrations = mustLoad(migrationFiles)

func mustLoad(fsys fs.FS) []migration {
	ms, err := load(fsys)
	if err != nil {
		panic(err)
	}
	return ms
}

func load(fsys fs.FS) ([]migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql") // sorted
	if err != nil {
		return nil, err
	}
	var ms []migration
	for i, name := range names {
		num, _, _ := strings.Cut(path.Base(name), "_")
		v, err := strconv.Atoi(num)
		if err != nil || len(num) != 4 || v != i+1 {
			return nil, fmt.Errorf("migration %s: want the number %04d", name, i+1)
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: path.Base(name), sql: string(b), additive: strings.HasPrefix(string(b), additiveMark)})
	}
	return ms, nil
}

// migrateLock is the key of the advisory lock Migrate holds: "bookbot" in
// ASCII.
const migrateLock int64 = 0x626f6f6b626f74

// createMigrations and recordAdditive make the record of the steps run;
// additive came after the first bookbots.
const (
	createMigrations = `CREATE TABLE IF NOT EXISTS bookbot_schema_migrations (
	version    integer PRIMARY KEY,
	applied_at timestamptz NOT NULL
)`
	recordAdditive = `ALTER TABLE bookbot_schema_migrations ADD COLUMN IF NOT EXISTS additive boolean NOT NULL DEFAULT false`
)

// Migrate brings the schema to the latest version this bookbot knows,
// each step in a transaction of its own. Replicas starting together take
// turns: the steps run under a session advisory lock. A database of a
// newer version than this bookbot knows is left as it is when every newer
// step is additive, and refused otherwise. It returns the schema's version
// as it found it under the lock, and as it left it.
func (db *DB) Migrate(ctx context.Context) (from, to int, err error) {
	// A session lock belongs to a connection, and ends with it if this
	// process dies.
	err = db.holdingMigrateLock(ctx, func(conn *pgxpool.Conn) error {
		// Without arguments, both statements go in one round trip.
		if _, err := conn.Exec(ctx, createMigrations+";\n"+recordAdditive); err != nil {
			return err
		}
		var err error
		if from, err = version(ctx, conn); err != nil {
			return err
		}
		to = from
		if from > len(migrations) {
			b, err := breaking(ctx, conn)
			if err == nil && b != 0 {
				err = fmt.Errorf("the database's schema version %d is newer than this bookbot knows (%d), and its step %d is not additive: it was migrated by a newer bookbot", from, len(migrations), b)
			}
			return err
		}
		for _, m := range migrations[from:] {
			err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, m.sql); err != nil {
					return err
				}
				_, err := tx.Exec(ctx, "INSERT INTO bookbot_schema_migrations (version, applied_at, additive) VALUES ($1, now(), $2)", m.version, m.additive)
				return err
			})
			if err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
			to = m.version
		}
		return nil
	})
	if err != nil {
		return from, to, fmt.Errorf("postgres migrate: %w", err)
	}
	return from, to, nil
}

// Version returns the schema's version (0 before the first Migrate) and
// the latest this bookbot knows.
func (db *DB) Version(ctx context.Context) (current, latest int, err error) {
	var exists bool
	err = db.pool.QueryRow(ctx, "SELECT to_regclass('bookbot_schema_migrations') IS NOT NULL").Scan(&exists)
	if err == nil && exists {
		current, err = version(ctx, db.pool)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("postgres schema version: %w", err)
	}
	return current, len(migrations), nil
}

// Breaking returns the first step above this bookbot's latest that the
// database has run and that is not additive, 0 if none: then this bookbot
// runs on the database, whatever its version.
func (db *DB) Breaking(ctx context.Context) (int, error) {
	b, err := breaking(ctx, db.pool)
	if err != nil {
		return 0, fmt.Errorf("postgres schema steps: %w", err)
	}
	return b, nil
}

// queryRower is a pool or a connection of one.
type queryRower interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}

func breaking(ctx context.Context, q queryRower) (int, error) {
	var v int
	err := q.QueryRow(ctx, "SELECT coalesce(min(version), 0) FROM bookbot_schema_migrations WHERE version > $1 AND NOT additive", len(migrations)).Scan(&v)
	return v, err
}

func version(ctx context.Context, q queryRower) (int, error) {
	var v int
	err := q.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM bookbot_schema_migrations").Scan(&v)
	return v, err
}

// unlockTimeout bounds giving a session lock back.
const unlockTimeout = 5 * time.Second

// holdingMigrateLock runs fn with a connection of its own, taken from the
// pool, whose session holds the advisory lock migrateLock. A session that
// cannot give it back is ended rather than put back in the pool holding
// it.
func (db *DB) holdingMigrateLock(ctx context.Context, fn func(*pgxpool.Conn) error) error {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrateLock); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	defer func() {
		// ctx may be done: unlock on a context of its own.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unlockTimeout)
		defer cancel()
		if _, err := conn.Exec(uctx, "SELECT pg_advisory_unlock($1)", migrateLock); err != nil {
			_ = conn.Conn().Close(uctx)
		}
	}()
	return fn(conn)
}

package pgstore

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrationFiles are the schema's steps, NNNN_name.sql, numbered from 1
// without gaps. A step, once released, is never edited: a change is a new
// step.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

type migration struct {
	version int
	name    string
	sql     string
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
		ms = append(ms, migration{version: v, name: path.Base(name), sql: string(b)})
	}
	return ms, nil
}

// migrateLock is the key of the advisory lock Migrate holds: "bookbot" in
// ASCII.
const migrateLock int64 = 0x626f6f6b626f74

const createMigrations = `CREATE TABLE IF NOT EXISTS bookbot_schema_migrations (
	version    integer PRIMARY KEY,
	applied_at timestamptz NOT NULL
)`

// Migrate brings the schema to the latest version this bookbot knows,
// each step in a transaction of its own. Replicas starting together take
// turns: the steps run under a session advisory lock. A database of a
// newer version than this bookbot knows is refused. It returns the
// schema's version as it found it under the lock, and as it left it.
func (db *DB) Migrate(ctx context.Context) (from, to int, err error) {
	// A session lock belongs to a connection, and ends with it if this
	// process dies.
	err = db.holding(ctx, "SELECT pg_advisory_lock($1)", "SELECT pg_advisory_unlock($1)", []any{migrateLock}, func(conn *pgxpool.Conn) error {
		if _, err := conn.Exec(ctx, createMigrations); err != nil {
			return err
		}
		var err error
		if from, err = version(ctx, conn); err != nil {
			return err
		}
		to = from
		if from > len(migrations) {
			return fmt.Errorf("the database's schema version %d is newer than this bookbot knows (%d): it was migrated by a newer bookbot", from, len(migrations))
		}
		for _, m := range migrations[from:] {
			err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, m.sql); err != nil {
					return err
				}
				_, err := tx.Exec(ctx, "INSERT INTO bookbot_schema_migrations (version, applied_at) VALUES ($1, now())", m.version)
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

func version(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (int, error) {
	var v int
	err := q.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM bookbot_schema_migrations").Scan(&v)
	return v, err
}

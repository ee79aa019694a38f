// Package pg keeps bookbot's state in PostgreSQL, so that several
// replicas share it: the notices store and the personal store, in tables
// named bookbot_*, which Migrate creates and updates.
package pg

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DB is a pool of connections to bookbot's database. It is safe for
// concurrent use.
type DB struct {
	pool *pgxpool.Pool
	// closing is set by Close. The pool's Close waits for a Leader's
	// connection to come back: the Leader looks at it at every check.
	closing atomic.Bool
}

// DefaultMaxConns is the pool's size unless the URL sets pool_max_conns.
// The leader holds one, and each lock held (migrations, review reports)
// holds one while it lasts.
const DefaultMaxConns = 16

// Open connects to the database at dbURL (postgres://user:password@host/db,
// or key=value form) and checks that it answers. Its errors never hold the
// password.
func Open(ctx context.Context, dbURL string, opts ...Option) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return nil, openFailed(ctx, "cannot parse the database URL", err, passwords(dbURL, ""))
	}
	where := fmt.Sprintf("%s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = "bookbot"
	}
	if !strings.Contains(dbURL, "pool_max_conns") {
		// A burst of envelopes checks each one against the envelopes seen
		// before it is acked; pgx's default of max(4, CPUs) connections
		// queues those checks (the ack's p99 measured 2.4 times as high).
		cfg.MaxConns = DefaultMaxConns
	}
	for _, o := range opts {
		o(cfg)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, openFailed(ctx, "postgres "+where, err, passwords(dbURL, cfg.ConnConfig.Password))
	}
	// The pool connects lazily: connect now, so a wrong URL fails here.
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, openFailed(ctx, "postgres "+where, err, passwords(dbURL, cfg.ConnConfig.Password))
	}
	return &DB{pool: pool}, nil
}

// Option adjusts how Open connects.
type Option func(*pgxpool.Config)

// OnQueryError has f called for every statement the database did not
// carry out (an error other than the caller giving up), for a metric.
func OnQueryError(f func()) Option {
	return func(cfg *pgxpool.Config) { cfg.ConnConfig.Tracer = errorTracer(f) }
}

// ReadOnly opens sessions whose transactions change nothing
// (default_transaction_read_only), for a command that only reads.
func ReadOnly() Option {
	return func(cfg *pgxpool.Config) { cfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on" }
}

// errorTracer counts the statements that failed.
type errorTracer func()

func (errorTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}

func (f errorTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	if data.Err != nil && ctx.Err() == nil {
		f()
	}
}

// Close closes every connection.
func (db *DB) Close() {
	db.closing.Store(true)
	db.pool.Close()
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}

// openError is an error of Open. Its text has every password masked, and
// it unwraps only to the context's error: pgx's errors may hold the
// connection string (ParseConfigError.ConnString, a url.Error).
type openError struct {
	msg string
	ctx error
}

func (e *openError) Error() string { return e.msg }
func (e *openError) Unwrap() error { return e.ctx }

func openFailed(ctx context.Context, what string, err error, secrets []string) error {
	msg := what + ": " + err.Error()
	for _, s := range secrets {
		msg = strings.ReplaceAll(msg, s, "xxxxx")
	}
	e := &openError{msg: msg}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		e.ctx = ctx.Err()
		if e.ctx == nil {
			e.ctx = context.DeadlineExceeded // a connect timeout of the URL's own
		}
	}
	return e
}

// kvPassword finds the password of a key=value connection string, quoted or
// not.
var kvPassword = regexp.MustCompile(`password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)`)

// passwords returns the forms the password may take in an error's text:
// as parsed, and as written in the URL, escaped or not, even when the URL
// does not parse.
func passwords(raw, parsed string) []string {
	var out []string
	add := func(p string) {
		if p != "" {
			out = append(out, p, url.QueryEscape(p), url.PathEscape(p))
		}
	}
	add(parsed)
	if u, err := url.Parse(raw); err == nil {
		if p, ok := u.User.Password(); ok {
			add(p)
		}
		add(u.Query().Get("password"))
	}
	// As written: between the first ':' after the scheme and the last '@'
	// before the query.
	if _, rest, ok := strings.Cut(raw, "://"); ok {
		rest, _, _ = strings.Cut(rest, "?")
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if _, p, ok := strings.Cut(rest[:at], ":"); ok {
				add(p)
			}
		}
	}
	for _, m := range kvPassword.FindAllStringSubmatch(raw, -1) {
		add(m[1])
		add(strings.Trim(m[1], "'"))
	}
	return out
}

// unix is t as stored: Unix seconds and nanoseconds, exact for any time,
// where timestamptz keeps microseconds and UnixNano overflows.
func unix(t time.Time) (sec int64, nsec int32) { return t.Unix(), int32(t.Nanosecond()) }

// fromUnix is the instant unix stored, in UTC.
func fromUnix(sec int64, nsec int32) time.Time { return time.Unix(sec, int64(nsec)).UTC() }

// fromNullUnix is fromUnix of a pair of columns that may be NULL; ok is
// false when either is.
func fromNullUnix(sec *int64, nsec *int32) (t time.Time, ok bool) {
	if sec == nil || nsec == nil {
		return time.Time{}, false
	}
	return fromUnix(*sec, *nsec), true
}

package pgtest

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Under Main, a package's copies of a template are made once per test
// running at once rather than once per test: a copy a test is done with is
// emptied for the next. A copy writes every page of the template, its
// system catalogs' 8 MB included, which the server's next checkpoint writes
// again, and DROP DATABASE waits for a checkpoint of the whole server: a
// package of a hundred tests spent as long dropping its databases as
// testing.

// reusing is the copies free for a test, under Main.
var reusing = &pool{free: map[string][]copyOf{}, plans: map[string]*plan{}}

type pool struct {
	mu    sync.Mutex
	free  map[string][]copyOf // by template
	plans map[string]*plan    // by template: what a copy of it holds
}

// copyOf is a copy of a template, on the server at admin.
type copyOf struct{ admin, name string }

// plan is what a copy holds as its template made it: its schema, by a
// digest of what the catalogs say of it; a digest of the rows of each
// table the template put rows in; and the tables it left empty, which the
// tests fill.
type plan struct {
	schema string
	filled map[string]string
	empty  []string
}

// emptyWait bounds emptying a copy; past it, the copy is dropped instead.
const emptyWait = 30 * time.Second

// take returns a copy of tpl a test before emptied, if there is one.
func (p *pool) take(tpl string) (copyOf, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	free := p.free[tpl]
	if len(free) == 0 {
		return copyOf{}, false
	}
	p.free[tpl] = free[:len(free)-1]
	return free[len(free)-1], true
}

// create makes a new copy of tpl for a test. The first of a template, which
// no test has used yet, says what the template made.
func (p *pool) create(ctx context.Context, admin string, conn *pgx.Conn, tpl string) (copyOf, error) {
	name, err := createDatabase(ctx, conn, tpl)
	if err != nil {
		return copyOf{}, err
	}
	c := copyOf{admin, name}
	p.mu.Lock()
	known := p.plans[tpl] != nil
	p.mu.Unlock()
	if known {
		return c, nil
	}
	db, err := pgx.Connect(ctx, withDatabase(admin, name))
	if err == nil {
		var pl *plan
		pl, err = look(ctx, db, nil)
		db.Close(context.Background())
		if err == nil {
			p.mu.Lock()
			if p.plans[tpl] == nil {
				p.plans[tpl] = pl
			}
			p.mu.Unlock()
			return c, nil
		}
	}
	dropping.later(admin, name)
	return copyOf{}, err
}

// giveBack empties the copy a test is done with for the next test, or
// drops it when the test changed more than the rows of tables the template
// left empty (its schema, the rows the template made).
func (p *pool) giveBack(c copyOf, tpl string) {
	ctx, cancel := context.WithTimeout(context.Background(), emptyWait)
	defer cancel()
	p.mu.Lock()
	pl := p.plans[tpl]
	p.mu.Unlock()
	if err := empty(ctx, c, pl); err != nil {
		dropping.later(c.admin, c.name)
		return
	}
	p.mu.Lock()
	p.free[tpl] = append(p.free[tpl], c)
	p.mu.Unlock()
}

// dropAll drops the copies free, once the tests have ended.
func (p *pool) dropAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for tpl, free := range p.free {
		for _, c := range free {
			dropping.later(c.admin, c.name)
		}
		delete(p.free, tpl)
	}
}

// errChanged is a copy a test changed beyond emptying.
var errChanged = errors.New("the test changed more than rows")

// empty ends the sessions a test left on the copy (a handle not closed, a
// connection pgx closes in the background), which could hold locks or
// write later, checks that the copy holds what pl says but for the rows of
// the tables the template left empty, and empties those.
func empty(ctx context.Context, c copyOf, pl *plan) error {
	if pl == nil {
		return errChanged
	}
	db, err := pgx.Connect(ctx, withDatabase(c.admin, c.name))
	if err != nil {
		return err
	}
	defer db.Close(context.Background())
	if err := endSessions(ctx, db); err != nil {
		return err
	}
	now, err := look(ctx, db, pl)
	if err != nil {
		return err
	}
	if now.schema != pl.schema || !maps.Equal(now.filled, pl.filled) {
		return errChanged
	}
	if len(pl.empty) == 0 {
		return nil
	}
	tables := make([]string, len(pl.empty))
	for i, tb := range pl.empty {
		tables[i] = pgx.Identifier{tb}.Sanitize()
	}
	_, err = db.Exec(ctx, "TRUNCATE "+strings.Join(tables, ", ")+" RESTART IDENTITY")
	return err
}

// endSessions ends the other sessions on the database db is connected to,
// and waits for them to end. The server ends only sessions the WHERE
// clause kept: a function that ends a session belongs in the select list,
// never in the WHERE clause, where the server may call it before it has
// looked at the session's database.
func endSessions(ctx context.Context, db *pgx.Conn) error {
	var ended *bool // NULL: there was none
	err := db.QueryRow(ctx, `SELECT bool_and(pg_terminate_backend(pid, 10000)) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&ended)
	if err == nil && ended != nil && !*ended {
		err = errors.New("a session on the copy did not end")
	}
	return err
}

// schemaDigest is a digest of the schema of a database as its catalogs
// say: schemas, relations, columns, indexes, constraints, functions and
// triggers.
const schemaDigest = `SELECT md5(coalesce(string_agg(d, E'\n' ORDER BY d), '')) FROM (
	SELECT 'schema ' || nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\_%' AND nspname <> 'information_schema'
	UNION ALL SELECT format('relation %s %s.%s', c.relkind, n.nspname, c.relname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname NOT LIKE 'pg\_%' AND n.nspname <> 'information_schema'
	UNION ALL SELECT format('column %s.%s.%s %s %s %s', table_schema, table_name, column_name, data_type, is_nullable, column_default)
		FROM information_schema.columns WHERE table_schema NOT LIKE 'pg\_%' AND table_schema <> 'information_schema'
	UNION ALL SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname NOT LIKE 'pg\_%' AND schemaname <> 'information_schema'
	UNION ALL SELECT format('constraint %s %s %s', conrelid::regclass, conname, pg_get_constraintdef(oid)) FROM pg_constraint
		WHERE connamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
	UNION ALL SELECT 'function ' || oid::regprocedure FROM pg_proc
		WHERE pronamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
	UNION ALL SELECT format('trigger %s %s', tgrelid::regclass, tgname) FROM pg_trigger WHERE NOT tgisinternal
) s(d)`

// look reads what the database c is connected to holds: its schema's
// digest and a digest of the rows of each table pl says the template
// filled. With no plan it looks at every table of the public schema, and
// the plan it returns says which are empty.
func look(ctx context.Context, c *pgx.Conn, pl *plan) (*plan, error) {
	got := &plan{filled: map[string]string{}}
	if err := c.QueryRow(ctx, schemaDigest).Scan(&got.schema); err != nil {
		return nil, err
	}
	var tables []string
	if pl != nil {
		tables = slices.Sorted(maps.Keys(pl.filled))
	} else {
		rows, err := c.Query(ctx, "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")
		if err != nil {
			return nil, err
		}
		if tables, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return nil, err
		}
	}
	for _, tb := range tables {
		var n int64
		var digest string
		err := c.QueryRow(ctx, "SELECT count(*), md5(coalesce(string_agg(r::text, E'\\n' ORDER BY r::text), '')) FROM "+
			pgx.Identifier{tb}.Sanitize()+" r").Scan(&n, &digest)
		if err != nil {
			return nil, err
		}
		if pl == nil && n == 0 {
			got.empty = append(got.empty, tb)
			continue
		}
		got.filled[tb] = digest
	}
	return got, nil
}

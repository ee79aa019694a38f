package pgtest

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// A copy a test is done with is the next test's, emptied: the rows of the
// tables the template left empty gone, their counters back at the start,
// the template's own rows kept. A copy whose schema or template rows a test
// changed is dropped, and the next test gets a new one.
func TestCopyReused(t *testing.T) {
	key := "pgtest: a table of rows, and a table of one row"
	build := func(ctx context.Context, url string) error {
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			return err
		}
		defer c.Close(ctx)
		_, err = c.Exec(ctx, `CREATE TABLE rows (n serial PRIMARY KEY, s text);
			CREATE TABLE kept (s text); INSERT INTO kept VALUES ('the template''s')`)
		return err
	}
	type seen struct {
		name string
		rows []string
		kept string
	}
	// use runs a test on a copy: it reads the copy, then does what to it.
	use := func(name, what string) (s seen) {
		t.Run(name, func(t *testing.T) {
			u := Copy(t, key, build)
			c, err := pgx.Connect(t.Context(), u)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(context.Background())
			ctx := t.Context()
			if err := c.QueryRow(ctx, "SELECT current_database(), (SELECT string_agg(s, ',') FROM kept)").Scan(&s.name, &s.kept); err != nil {
				t.Fatal(err)
			}
			rows, err := c.Query(ctx, "SELECT n || ':' || s FROM rows ORDER BY n")
			if err != nil {
				t.Fatal(err)
			}
			if s.rows, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Exec(ctx, what); err != nil {
				t.Fatal(err)
			}
		})
		return s
	}
	first := use("rows", "INSERT INTO rows (s) VALUES ('a'), ('b')")
	second := use("schema", "ALTER TABLE rows ADD COLUMN t text")
	third := use("template rows", "UPDATE kept SET s = 'changed'")
	fourth := use("after", "SELECT 1")
	if first.name != second.name || len(second.rows) != 0 || second.kept != "the template's" {
		t.Errorf("after rows were written: %+v, then %+v; want the copy again, emptied, the template's row kept", first, second)
	}
	if third.name == second.name || len(third.rows) != 0 {
		t.Errorf("after the schema was changed: %+v, then %+v; want a new copy", second, third)
	}
	if fourth.name == third.name || fourth.kept != "the template's" {
		t.Errorf("after the template's row was changed: %+v, then %+v; want a new copy", third, fourth)
	}
	again := use("counters", "INSERT INTO rows (s) VALUES ('c')")
	if again.name != fourth.name {
		t.Errorf("a copy read and left alone: %s, then %s; want it again", fourth.name, again.name)
	}
	t.Run("a session left in a transaction", func(t *testing.T) {
		c, err := pgx.Connect(context.Background(), Copy(t, key, build))
		if err != nil {
			t.Fatal(err)
		}
		// Never closed: its lock would hold up emptying the copy.
		if _, err := c.Exec(t.Context(), "BEGIN; INSERT INTO rows (s) VALUES ('left')"); err != nil {
			t.Fatal(err)
		}
	})
	last := use("last", "SELECT 1")
	if last.name != again.name || strings.Join(last.rows, " ") != "" {
		t.Errorf("after a session was left in a transaction on %s: %+v; want it emptied", again.name, last)
	}
	t.Run("counters start again", func(t *testing.T) {
		c, err := pgx.Connect(t.Context(), Copy(t, key, build))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(context.Background())
		var n int
		if err := c.QueryRow(t.Context(), "INSERT INTO rows (s) VALUES ('d') RETURNING n").Scan(&n); err != nil || n != 1 {
			t.Errorf("the first row of an emptied copy is %d (%v), want 1", n, err)
		}
	})
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/bookbot/bookbot/cmd/internal/app"
	"github.com/bookbot/bookbot/config"
	"github.com/bookbot/bookbot/store"
	"github.com/bookbot/bookbot/store/pg"
)

// migrateTimeout bounds connecting and migrating; a migration waits for
// another replica's to finish first, under the same lock.
const migrateTimeout = 2 * time.Minute

// embeddedOnly refuses BOOKBOT_DATABASE_URL to a command that keeps its
// state under BOOKBOT_STATE_DIR only: beside replicas sharing PostgreSQL,
// a process using its own files would post the digest a second time.
func embeddedOnly(cfg *config.Config, cmd string) error {
	if cfg.DatabaseURL.IsZero() {
		return nil
	}
	return fmt.Errorf("bookbot %s: BOOKBOT_DATABASE_URL is set, but %s works on the embedded store under BOOKBOT_STATE_DIR only; with replicas over PostgreSQL, the replica that leads posts the digest, and `/booking audit` shows the journal", cmd, cmd)
}

// runMigrate brings the PostgreSQL schema of BOOKBOT_DATABASE_URL up to
// this binary's version and exits, for deployments that migrate before
// starting replicas; `bookbot run` does the same at start.
func runMigrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	status := fs.Bool("status", false, "only print the schema's version and the binary's; change nothing")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("migrate: unexpected argument %q", fs.Arg(0))
	}
	cfg, err := config.Load(getenv, 0)
	if err != nil {
		return err
	}
	cfg.LogWarnings(app.NewLogger(cfg, stderr))
	if cfg.DatabaseURL.IsZero() {
		return errors.New("migrate: BOOKBOT_DATABASE_URL is not set: the embedded store under BOOKBOT_STATE_DIR needs no migration")
	}
	ctx, cancel := context.WithTimeout(ctx, migrateTimeout)
	defer cancel()
	// Opened as it is: what migrating changes is said here.
	mode := store.Hold
	if *status {
		mode = store.ReadOnly
	}
	st, err := store.Open(ctx, stateOf(cfg, mode))
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer st.Close()
	db := st.Database
	if *status {
		current, latest, err := db.Version(ctx)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		fmt.Fprintf(stdout, "schema version %d; this bookbot's is %d\n", current, latest)
		for _, st := range pg.Steps(current) {
			switch {
			case current == 0:
				fmt.Fprintf(stdout, "to run: %s\n", st.Name)
			case st.Additive:
				fmt.Fprintf(stdout, "to run: %s (additive: replicas of the older bookbot run on it too)\n", st.Name)
			default:
				fmt.Fprintf(stdout, "to run: %s (not additive: stop replicas of the older bookbot first)\n", st.Name)
			}
		}
		return nil
	}
	before, after, err := db.Migrate(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	switch {
	case before > pg.Latest():
		fmt.Fprintf(stdout, "schema at version %d, newer than this bookbot's %d by additive steps only: nothing to do\n", before, pg.Latest())
		return nil
	case after == before:
		fmt.Fprintf(stdout, "schema already at version %d\n", after)
		return nil
	}
	fmt.Fprintf(stdout, "schema migrated from version %d to %d\n", before, after)
	return nil
}

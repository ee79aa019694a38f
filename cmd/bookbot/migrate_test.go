package main

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/store/pg"
	"github.com/bookbot/bookbot/store/pg/pgtest"
)

func TestMigrate(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	migrate := func(args ...string) (string, error) {
		cmd := exec.CommandContext(t.Context(), binary, append([]string{"migrate"}, args...)...)
		cmd.Env = []string{"BOOKBOT_DATABASE_URL=" + url, "HOME=" + t.TempDir()}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := migrate("-status")
	if err != nil || !regexp.MustCompile(`^schema version 0; this bookbot's is [1-9]\d*\nto run: 0001_stores.sql\n(to run: \d{4}_\w+\.sql\n)+$`).MatchString(out) {
		t.Fatalf("status before: %v %q", err, out)
	}
	if out, err = migrate(); err != nil || !regexp.MustCompile(`^schema migrated from version 0 to [1-9]\d*\n$`).MatchString(out) {
		t.Fatalf("migrate: %v %q", err, out)
	}
	if out, err = migrate(); err != nil || !strings.HasPrefix(out, "schema already at version ") {
		t.Fatalf("migrate again: %v %q", err, out)
	}

	// A newer bookbot's steps: additive ones are left as they are, and
	// the first that is not is refused.
	step(t, url, pg.Latest()+1, true)
	if out, err = migrate(); err != nil || !strings.Contains(out, "newer than this bookbot's") || !strings.Contains(out, "nothing to do") {
		t.Fatalf("migrate with an additive newer step: %v %q", err, out)
	}
	step(t, url, pg.Latest()+2, false)
	if out, err = migrate(); err == nil || !strings.Contains(out, fmt.Sprintf("step %d is not additive", pg.Latest()+2)) {
		t.Fatalf("migrate with a newer step that is not additive: %v %q", err, out)
	}
}

// step records that a newer bookbot ran schema step v.
func step(t *testing.T, url string, v int, additive bool) {
	t.Helper()
	c, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(t.Context())
	if _, err := c.Exec(t.Context(), "INSERT INTO bookbot_schema_migrations (version, applied_at, additive) VALUES ($1, now(), $2)", v, additive); err != nil {
		t.Fatal(err)
	}
}

func TestMigrateErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ url, want string }{
		{"", "BOOKBOT_DATABASE_URL is not set"},
		{"postgres://bookbot:hunter2@127.0.0.1:1/bookbot?connect_timeout=5", "migrate: "},
	} {
		cmd := exec.CommandContext(t.Context(), binary, "migrate")
		cmd.Env = []string{"BOOKBOT_DATABASE_URL=" + tc.url, "HOME=" + t.TempDir()}
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) || strings.Contains(string(out), "hunter2") {
			t.Errorf("url %q: %v\n%s", tc.url, err, out)
		}
	}
}

// Commands that keep their state in BOOKBOT_STATE_DIR refuse a database
// URL rather than ignore it; run uses it, and says when it cannot.
func TestEmbeddedOnlyCommandsRefuseADatabase(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"digest", "-dry-run"}, {"audit"}} {
		cmd := exec.CommandContext(t.Context(), binary, args...)
		cmd.Env = append(env(bookingtest.NewServer(t), slacktest.NewServer(t)), "BOOKBOT_DATABASE_URL=postgres://u:hunter2@db.example.com/bookbot")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "BOOKBOT_DATABASE_URL is set") || strings.Contains(string(out), "hunter2") {
			t.Errorf("%v: %v\n%s", args, err, out)
		}
	}
}

func TestRunSaysWhenTheDatabaseCannotBeReached(t *testing.T) {
	t.Parallel()
	cmd := exec.CommandContext(t.Context(), binary, "run")
	cmd.Env = append(env(bookingtest.NewServer(t), slacktest.NewServer(t)), "BOOKBOT_DATABASE_URL=postgres://u:hunter2@127.0.0.1:1/bookbot?connect_timeout=5")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "database (BOOKBOT_DATABASE_URL)") || strings.Contains(string(out), "hunter2") {
		t.Errorf("%v\n%s", err, out)
	}
}

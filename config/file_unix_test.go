//go:build unix

package config_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bookbot/bookbot/config"
)

// TestFileThatIsNotAFile: a _FILE that names a named pipe (nobody writing
// to it), a directory or a device is refused at once, naming the variable
// and what the path is. Opening a pipe the usual way waits for a writer,
// and reading a terminal waits for input: `check` and `run` would hang
// with nothing said.
func TestFileThatIsNotAFile(t *testing.T) {
	t.Parallel()
	pipe := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	paths := []struct{ path, kind string }{
		{pipe, "a named pipe"},
		{t.TempDir(), "a directory"},
		{os.DevNull, "a character device"},
	}
	for _, name := range []string{"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "BOOKING_API_KEY", "BOOKBOT_SECRET_KEY", "BOOKBOT_DATABASE_URL"} {
		fileVar := name + "_FILE"
		for _, p := range paths {
			done := make(chan *config.Error, 1)
			go func() { done <- problems(t, with(without(base(), name), fileVar, p.path), config.NeedAll) }()
			select {
			case e := <-done:
				if got := problemVars(e); !slices.Contains(got, fileVar) {
					t.Errorf("%s=%s (%s): problems about %v, want %s among them:\n%v", fileVar, p.path, p.kind, got, fileVar, e)
				}
				if want := fileVar + ": " + p.path + " is " + p.kind + ", not a regular file"; !strings.Contains(e.Error(), want) {
					t.Errorf("%s=%s: error does not say %q:\n%v", fileVar, p.path, want, e)
				}
			case <-time.After(time.Minute): // a guard against hanging the suite, not a timing check
				t.Fatalf("%s=%s (%s): Load did not return", fileVar, p.path, p.kind)
			}
		}
	}
}

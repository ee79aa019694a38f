//go:build unix

package config_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/bookbot/bookbot/config"
)

// TestFileWithoutASize: a _FILE that names something with no size known in
// advance (a pipe here; /dev/zero in the field) is read only up to the
// limit. A pipe rather than /dev/zero, so that a regression fails this test
// instead of reading the whole suite out of memory: the writer sends a
// valid token and a megabyte of padding, then closes, so reading it all
// would end, and give the token.
func TestFileWithoutASize(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	wrote := make(chan error, 1)
	go func() {
		w, err := os.OpenFile(path, os.O_WRONLY, 0) // waits for the reader
		if err != nil {
			wrote <- err
			return
		}
		// Fails with EPIPE once Load has stopped reading and closed it.
		_, err = w.WriteString("xoxb-4-" + botSecret + strings.Repeat("\n", 1<<20))
		w.Close()
		wrote <- err
	}()
	t.Cleanup(func() {
		// Should Load not have opened the pipe, a reader of our own lets
		// the writer's open return; closing it ends the writer's write.
		if r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			r.Close()
		}
		<-wrote
	})

	e := problems(t, with(without(base(), "SLACK_BOT_TOKEN"), "SLACK_BOT_TOKEN_FILE", path), config.NeedAll)
	if got := problemVars(e); !slices.Equal(got, []string{"SLACK_BOT_TOKEN_FILE"}) || !strings.Contains(e.Error(), path+" is larger than 64 KiB") {
		t.Errorf("want one problem naming SLACK_BOT_TOKEN_FILE, %s and the limit, got %v", path, e)
	}
}

//go:build unix

package secretfile_test

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bookbot/bookbot/internal/secretfile"
)

// TestReadDoesNotWaitForAPipe: a named pipe nobody writes to is refused at
// once; opening it the usual way would wait for a writer for ever.
func TestReadDoesNotWaitForAPipe(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := secretfile.Read(path, 64)
		done <- err
	}()
	select {
	case err := <-done:
		var nr *secretfile.NotRegularError
		if !errors.As(err, &nr) || !strings.Contains(err.Error(), "is a named pipe") {
			t.Errorf("Read of a pipe = %v, want a NotRegularError naming a pipe", err)
		}
	case <-time.After(time.Minute): // a guard against hanging the suite, not a timing check
		t.Fatal("Read waited on a named pipe with no writer")
	}
}

package statedir_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bookbot/bookbot/statedir"
)

// A second hold on a directory is refused at once, naming the holder; once
// released, the directory can be taken again.
func TestSecondHoldIsRefused(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	first, err := statedir.Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(first.Owner, fmt.Sprintf("pid %d", os.Getpid())) {
		t.Errorf("owner %q does not name this process", first.Owner)
	}
	_, err = statedir.Acquire(dir)
	var locked *statedir.LockedError
	if !errors.As(err, &locked) || locked.Holder != first.Owner || locked.Dir != dir {
		t.Fatalf("second Acquire: %v, want a LockedError naming %q", err, first.Owner)
	}
	if msg := err.Error(); !strings.Contains(msg, first.Owner) || !strings.Contains(msg, "BOOKBOT_STATE_DIR") {
		t.Errorf("message %q does not say who holds it and what to do", msg)
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	again, err := statedir.Acquire(dir)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	if err := again.Release(); err != nil {
		t.Fatal(err)
	}
}

// A lock file left by a process that died does not hold the directory: the
// lock is the kernel's, not the file's existence.
func TestLeftoverLockFileDoesNotHold(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, statedir.LockName), []byte("pid 1 on gone, since 2026-01-01T00:00:00Z\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := statedir.Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire over a leftover file: %v", err)
	}
	defer l.Release()
	b, _ := os.ReadFile(filepath.Join(dir, statedir.LockName))
	if strings.TrimSpace(string(b)) != l.Owner {
		t.Errorf("lock file says %q, want %q", b, l.Owner)
	}
}

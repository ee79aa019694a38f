// Package statedir guards bookbot's state directory (BOOKBOT_STATE_DIR).
// The embedded store there (the write journal, the digest record) serves
// one process: two `bookbot run` on one directory would each settle the
// other's writes in flight as abandoned. Lock makes the second refuse to
// start instead.
package statedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// LockName is the lock file under the state directory. It names the
// holder, for the message the next process shows.
const LockName = "bookbot.lock"

// Lock is an exclusive hold on a state directory, kept until Release or
// the process's end (the kernel releases it then, however the process
// died, so a crash leaves no stale lock).
type Lock struct {
	f     *os.File
	Owner string // this process, as the lock file names it
}

// LockedError says another process holds the directory.
type LockedError struct {
	Dir    string
	Holder string // what the lock file says of it; "" when unreadable
}

func (e *LockedError) Error() string {
	who := "another bookbot"
	if e.Holder != "" {
		who += " (" + e.Holder + ")"
	}
	return fmt.Sprintf("%s is already running on the state directory %s; stop it first, or give this one another BOOKBOT_STATE_DIR", who, e.Dir)
}

// Acquire takes the directory's lock, creating the directory if needed,
// and records this process in it. It fails at once, with a *LockedError,
// when another process holds it.
func Acquire(dir string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, LockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f); err != nil {
		_ = f.Close()
		if errors.Is(err, errHeld) {
			return nil, &LockedError{Dir: dir, Holder: holder(path)}
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	host, _ := os.Hostname()
	owner := fmt.Sprintf("pid %d on %s, since %s", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt([]byte(owner+"\n"), 0)
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return &Lock{f: f, Owner: owner}, nil
}

// holder reads what the lock file says of the process holding it.
func holder(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	s := strings.TrimSpace(string(b))
	if len(s) > 200 || strings.ContainsFunc(s, func(r rune) bool { return !strconv.IsPrint(r) }) {
		return ""
	}
	return s
}

// Release gives the directory up.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the file drops the lock
	l.f = nil
	return err
}

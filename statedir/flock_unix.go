//go:build unix

package statedir

import (
	"errors"
	"os"
	"syscall"
)

var errHeld = errors.New("held by another process")

// lockFile takes an exclusive flock without waiting. flock belongs to the
// open file, so a second open in the same process is refused too.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return errHeld
		default:
			return err
		}
	}
}

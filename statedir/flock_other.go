//go:build !unix

package statedir

import (
	"errors"
	"os"
	"runtime"
)

var errHeld = errors.New("held by another process")

// lockFile refuses: without flock, two processes on one directory could
// not be told apart, and bookbot does not run unguarded.
func lockFile(*os.File) error {
	return errors.New("bookbot run needs flock, which " + runtime.GOOS + " does not have")
}

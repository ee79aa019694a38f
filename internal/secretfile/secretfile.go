// Package secretfile reads the small files that hold secrets (tokens,
// keys, a database URL): a regular file only, and only so much of it.
//
// A named pipe with no writer, a terminal or a device would make a read
// wait for ever, and a directory never holds a secret: each is refused
// before anything is read, and opening one never blocks.
package secretfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// NotRegularError is a path that names something other than a regular
// file (after following symbolic links, as Kubernetes' secret volumes
// use).
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file holding the secret", e.Path, kind(e.Mode))
}

// kind names what a file mode is, with its article.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a file"
}

// TooLargeError is a regular file larger than the most a secret may be.
type TooLargeError struct {
	Path string
	Max  int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %d KiB: it must hold the secret alone", e.Path, e.Max>>10)
}

// Read returns the contents of the regular file at path, at most max
// bytes. Its errors name the path and the reason, never the contents:
// an *os.PathError, a *NotRegularError or a *TooLargeError.
func Read(path string, max int64) ([]byte, error) {
	// Opened without blocking (a pipe's open waits for a writer
	// otherwise), then checked as opened, so a file swapped for a pipe
	// after a look at its path cannot make the read wait.
	f, err := os.OpenFile(path, os.O_RDONLY|nonblock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Mode: st.Mode()}
	}
	// One byte over the limit tells a file of exactly the limit from a
	// larger one, without reading the rest.
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &TooLargeError{Path: path, Max: max}
	}
	return b, nil
}

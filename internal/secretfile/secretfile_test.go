package secretfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bookbot/bookbot/internal/secretfile"
)

func TestRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	if err := os.WriteFile(file, []byte("xoxb-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Kubernetes mounts a secret as a link to a file.
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{file, link} {
		b, err := secretfile.Read(path, 64)
		if err != nil || string(b) != "xoxb-1\n" {
			t.Errorf("Read(%s) = %q, %v; want the contents", path, b, err)
		}
	}

	exact := filepath.Join(dir, "exact")
	if err := os.WriteFile(exact, []byte(strings.Repeat("k", 64)), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := secretfile.Read(exact, 64); err != nil || len(b) != 64 {
		t.Errorf("a file of exactly the limit: %d bytes, %v", len(b), err)
	}
	var large *secretfile.TooLargeError
	if _, err := secretfile.Read(exact, 63); !errors.As(err, &large) || strings.Contains(err.Error(), "kkk") {
		t.Errorf("a file over the limit: %v, want a TooLargeError without the contents", err)
	}

	var pe *os.PathError
	if _, err := secretfile.Read(filepath.Join(dir, "missing"), 64); !errors.As(err, &pe) {
		t.Errorf("a missing file: %v, want a *os.PathError", err)
	}
}

func TestReadRefusesWhatIsNotARegularFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct{ path, kind string }{
		{dir, "is a directory"},
		{os.DevNull, "is a character device"},
	} {
		var nr *secretfile.NotRegularError
		if _, err := secretfile.Read(c.path, 64); !errors.As(err, &nr) || !strings.Contains(err.Error(), c.path+" "+c.kind) {
			t.Errorf("Read(%s) = %v, want %q", c.path, err, c.kind)
		}
	}
}

package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The clock the end-to-end tests move: not moved without its file, moved by
// the duration the file holds once it is read again, and left where it was
// by a file that holds no duration.
func TestFileClock(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "clock")
	c := &fileClock{path: path}
	ahead := func() time.Duration { return time.Until(c.Now()).Round(time.Minute) }
	if got := ahead(); got != 0 {
		t.Errorf("without a file: %v ahead, want 0", got)
	}
	for _, tc := range []struct {
		text string
		want time.Duration
	}{
		{"90m\n", 90 * time.Minute},
		{"not a duration", 90 * time.Minute},
		{"1m", time.Minute},
	} {
		if err := os.WriteFile(path, []byte(tc.text), 0o600); err != nil {
			t.Fatal(err)
		}
		c.read = time.Time{} // as if fileReread had passed
		if got := ahead(); got != tc.want {
			t.Errorf("file %q: %v ahead, want %v", tc.text, got, tc.want)
		}
	}
}

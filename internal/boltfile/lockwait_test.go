package boltfile

import (
	"path/filepath"
	"testing"
)

// A File opened without a lock wait of its own waits LockWait for another
// process's hold, not forever (bbolt's Timeout 0). Waiting it out would
// take the test 5 seconds, so the setting is checked instead.
func TestDefaultLockWait(t *testing.T) {
	t.Parallel()
	for _, opts := range []Options{{}, {ReadOnly: true}} {
		f, err := OpenWith(filepath.Join(t.TempDir(), "test.db"), "test", 1, opts)
		if err != nil {
			t.Fatal(err)
		}
		if f.opts.LockWait != LockWait {
			t.Errorf("read-only %v: lock wait %v, want %v", opts.ReadOnly, f.opts.LockWait, LockWait)
		}
	}
}

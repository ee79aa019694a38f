// Package pause is what bookbot's packages share about waiting on the
// machine's clock. Tests replace these waits through each package's own
// options, and move internal/fakeclock instead.
package pause

import (
	"context"
	"time"
)

// For waits d, or less when ctx ends first: then it returns ctx's error.
func For(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

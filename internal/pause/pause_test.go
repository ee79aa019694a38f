package pause_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/bookbot/bookbot/internal/pause"
)

func TestForEnds(t *testing.T) {
	t.Parallel()
	if err := pause.For(t.Context(), time.Nanosecond); err != nil {
		t.Errorf("a wait that ran its course: %v", err)
	}
}

func TestForEndsWithItsContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := pause.For(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("a wait whose context ended: %v, want context.Canceled", err)
	}
}

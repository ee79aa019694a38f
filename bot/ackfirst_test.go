package bot

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestWorkWaitsForEnvelopesBeingHandled(t *testing.T) {
	t.Parallel()
	var b Bot
	b.acksFirst(time.Hour) // none being handled: no wait

	b.handling.add(1)
	var handled atomic.Bool
	go func() {
		handled.Store(true)
		b.handling.add(-1)
	}()
	b.acksFirst(time.Hour)
	if !handled.Load() {
		t.Fatal("work went ahead while an envelope was still being handled")
	}
}

func TestWorkWaitsForEnvelopesBeingHandledAtMost(t *testing.T) {
	t.Parallel()
	var b Bot
	b.handling.add(1) // stuck, as a submission asking a slow database is
	done := make(chan struct{})
	go func() { b.acksFirst(time.Millisecond); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("work waited past its bound for an envelope being handled")
	}
	if got := b.heldOut.Load(); got != 1 {
		t.Errorf("work that waited all of its bound: %d, want 1", got)
	}
}

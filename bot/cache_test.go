package bot

import (
	"testing"
	"time"
)

// A modal's slots are forgotten when it closes, or after modalTTL when
// Slack never says it closed, so a long-running bot does not grow.
func TestModalSlotsForgetClosedAndOldModals(t *testing.T) {
	now := time.Date(2026, 3, 23, 10, 0, 0, 0, time.UTC)
	m := newModalSlots(func() time.Time { return now })

	m.want("V1", "intro-call")
	m.put("V1", "intro-call", nil)
	m.want("V2", "consultation") // its slots never arrived
	m.drop("V1")
	if _, ok := m.get("V1"); ok {
		t.Error("V1's slots kept after view_closed")
	}
	if !m.wanted("V1", "anything") {
		t.Error("V1's pick kept after view_closed")
	}
	if m.wanted("V2", "intro-call") {
		t.Error("V2 lost its pick too early")
	}

	now = now.Add(modalTTL + time.Minute)
	m.put("V3", "intro-call", nil)
	if len(m.views) != 1 || len(m.latest) != 0 {
		t.Errorf("after %v: %d views and %d picks kept, want 1 and 0", modalTTL, len(m.views), len(m.latest))
	}
}

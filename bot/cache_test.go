package bot

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/bookbot/bookbot/booking"
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

// slotsOf returns a new list of n slots. Slots come only from the API, so
// these are zero slots: lists of equal length are equal.
func slotsOf(n int) []booking.Slot { return make([]booking.Slot, n) }

// Modals showing an unchanged calendar share one slot list, so a hundred
// open modals do not keep a hundred copies.
func TestModalSlotsShareEqualLists(t *testing.T) {
	now := time.Date(2026, 3, 23, 10, 0, 0, 0, time.UTC)
	m := newModalSlots(func() time.Time { return now })

	m.put("V1", "intro-call", slotsOf(2))
	m.put("V2", "intro-call", slotsOf(2))
	m.put("V3", "intro-call", slotsOf(1)) // one was booked meanwhile
	v1, _ := m.get("V1")
	v2, _ := m.get("V2")
	v3, _ := m.get("V3")
	if &v1.slots[0] != &v2.slots[0] {
		t.Error("two modals showing the same slots keep two lists")
	}
	if len(v1.slots) != 2 || len(v3.slots) != 1 {
		t.Errorf("V1 shows %d slots and V3 %d, want 2 and 1", len(v1.slots), len(v3.slots))
	}
}

// A modal's slots are kept slotsTTL, its pick of event modalTTL.
func TestModalSlotsExpireBeforeThePick(t *testing.T) {
	now := time.Date(2026, 3, 23, 10, 0, 0, 0, time.UTC)
	m := newModalSlots(func() time.Time { return now })
	m.want("V1", "intro-call")
	m.put("V1", "intro-call", slotsOf(1))

	now = now.Add(slotsTTL - time.Second)
	if _, ok := m.get("V1"); !ok {
		t.Fatalf("slots gone before %v", slotsTTL)
	}
	now = now.Add(2 * time.Second)
	if _, ok := m.get("V1"); ok {
		t.Errorf("slots still shown after %v", slotsTTL)
	}
	m.put("V2", "consultation", nil) // sweeps
	if _, ok := m.views["V1"]; ok {
		t.Errorf("slots still kept after %v and a sweep", slotsTTL)
	}
	if m.wanted("V1", "consultation") {
		t.Error("V1's pick of event gone with its slots")
	}
}

// After a burst of modals has expired, the maps are rebuilt at their new
// size: a Go map keeps the space of deleted entries.
func TestModalSlotsMapsShrinkAfterABurst(t *testing.T) {
	now := time.Date(2026, 3, 23, 10, 0, 0, 0, time.UTC)
	m := newModalSlots(func() time.Time { return now })
	for i := range 100 {
		id := fmt.Sprintf("V%d", i)
		m.want(id, "intro-call")
		m.put(id, "intro-call", nil)
	}
	views, latest := mapID(m.views), mapID(m.latest)

	now = now.Add(modalTTL + time.Minute)
	m.want("W", "intro-call")
	m.put("W", "intro-call", nil)
	if len(m.views) != 1 || len(m.latest) != 1 {
		t.Fatalf("%d views and %d picks kept, want 1 and 1", len(m.views), len(m.latest))
	}
	if mapID(m.views) == views || mapID(m.latest) == latest {
		t.Error("a map sized for 100 modals kept after they expired")
	}
	if m.viewsPeak != 1 || m.latestPeak != 1 {
		t.Errorf("peaks %d and %d, want 1 and 1 from the new maps", m.viewsPeak, m.latestPeak)
	}
}

func TestShrunk(t *testing.T) {
	m := map[int]bool{}
	for i := range 10 {
		m[i] = true
	}
	if got, peak := shrunk(m, 40); mapID(got) != mapID(m) || peak != 40 {
		t.Errorf("a map at a quarter of its peak was copied (peak %d)", peak)
	}
	got, peak := shrunk(m, 41)
	if mapID(got) == mapID(m) || peak != 10 || !maps.Equal(got, m) {
		t.Errorf("a map under a quarter of its peak: copied %v, peak %d, same entries %v",
			mapID(got) != mapID(m), peak, maps.Equal(got, m))
	}
}

// mapID tells maps apart: the same ID is the same map.
func mapID[K comparable, V any](m map[K]V) uintptr {
	return reflect.ValueOf(m).Pointer()
}

// Expired envelopes are swept, and the set shrinks once a burst expires;
// equal acks share their bytes.
func TestSeenSetSweepsAndSharesAcks(t *testing.T) {
	now := time.Date(2026, 3, 23, 10, 0, 0, 0, time.UTC)
	s := newSeenSet(15*time.Minute, func() time.Time { return now })
	help := map[string]string{"text": "help"}
	for i := range 100 {
		id := fmt.Sprintf("E%d", i)
		if _, seen := s.check(id); seen {
			t.Fatalf("%s seen before it came", id)
		}
		s.store(id, help)
	}
	ack, seen := s.check("E7")
	if !seen || string(ack.(json.RawMessage)) != `{"text":"help"}` {
		t.Fatalf("redelivered E7: seen %v, ack %s", seen, ack)
	}
	if unsafe.StringData(s.seen["E1"].ack) != unsafe.StringData(s.seen["E2"].ack) {
		t.Error("equal acks keep their bytes twice")
	}
	before := mapID(s.seen)

	now = now.Add(16 * time.Minute)
	if _, seen := s.check("E7"); seen {
		t.Error("an envelope seen 16 minutes ago is still seen")
	}
	if len(s.seen) != 1 || mapID(s.seen) == before {
		t.Errorf("after the burst expired: %d entries, map replaced %v; want 1, true", len(s.seen), mapID(s.seen) != before)
	}
}

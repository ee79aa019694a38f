package pg

import (
	"testing"
	"time"
)

// The zero LeaderOptions are the default timing, which the leader tests
// prove in proportion (a check every 5 s, lost after 15 s: another replica
// leads within 5 s of a leader killed, 20 s of one cut off), and LostAfter
// is never less than 3 × Check.
func TestLeaderTiming(t *testing.T) {
	t.Parallel()
	db := &DB{}
	for _, tc := range []struct {
		given, want LeaderOptions
	}{
		{LeaderOptions{}, LeaderOptions{Check: 5 * time.Second, LostAfter: 15 * time.Second}},
		{LeaderOptions{Check: time.Second}, LeaderOptions{Check: time.Second, LostAfter: 15 * time.Second}},
		{LeaderOptions{Check: time.Second, LostAfter: 2 * time.Second}, LeaderOptions{Check: time.Second, LostAfter: 3 * time.Second}},
		{LeaderOptions{Check: 10 * time.Second}, LeaderOptions{Check: 10 * time.Second, LostAfter: 30 * time.Second}},
	} {
		o := db.Leader("singletons", tc.given).opts
		if o.Check != tc.want.Check || o.LostAfter != tc.want.LostAfter {
			t.Errorf("given %v and %v: check %v, lost after %v; want %v and %v",
				tc.given.Check, tc.given.LostAfter, o.Check, o.LostAfter, tc.want.Check, tc.want.LostAfter)
		}
	}
}

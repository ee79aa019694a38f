package booking_test

import (
	"testing"

	"github.com/bookbot/bookbot/internal/testutil"
)

// The tests wait on the sandbox, its faults and the client's pauses rather
// than on this machine's processors: 8 run at once.
func TestMain(m *testing.M) {
	testutil.Parallel(8)
	m.Run()
}

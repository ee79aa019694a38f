package notices_test

import (
	"testing"

	"github.com/bookbot/bookbot/internal/testutil"
)

// Most tests wait on the watcher's timers and the stand-ins rather than on
// this machine's processors: 8 run at once.
func TestMain(m *testing.M) {
	testutil.Parallel(8)
	m.Run()
}

package bot_test

import (
	"testing"

	"github.com/bookbot/bookbot/internal/testutil"
)

// The tests wait on the Slack stand-in, the sandbox and each other's
// timers far more than on this machine's processors: 8 run at once.
func TestMain(m *testing.M) {
	testutil.Parallel(8)
	m.Run()
}

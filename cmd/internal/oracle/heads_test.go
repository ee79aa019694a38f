package oracle_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The oracle reads a create's outcome by the words the bot uses, which
// bot's golden files hold: each outcome's notification text (but a dry
// run's, which the oracle never runs) begins with a head the oracle knows,
// and each head it knows begins one, so that a head reworded in the bot
// cannot leave the oracle reading none of its messages.
func TestCreateHeadsAreTheBotsWords(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../../../bot/testdata/golden/create_*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("bot's golden create outcomes: %d files, %v", len(files), err)
	}
	used := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text, ok := strings.CutPrefix(strings.SplitN(string(b), "\n", 2)[0], "text: ")
		if !ok || strings.HasPrefix(text, "Dry run: ") {
			continue
		}
		if _, ok := createSaid(text, "", ""); !ok {
			t.Errorf("%s: the oracle reads no outcome in %q", filepath.Base(f), text)
		}
		for _, h := range createHeads { // as createSaid reads them
			if strings.HasPrefix(text, h.head) {
				used[h.head] = true
				break
			}
		}
	}
	for _, h := range createHeads {
		if !used[h.head] {
			t.Errorf("no outcome of the bot's begins %q", h.head)
		}
	}
}

package bot

import (
	"slices"
	"testing"
)

func TestSplitLines(t *testing.T) {
	lines := []string{"aaaa", "bbbb", "cccc"}
	for _, tc := range []struct {
		limit int
		want  []string
	}{
		{100, []string{"*H*\naaaa\nbbbb\ncccc"}},
		{12, []string{"*H*\naaaa", "bbbb\ncccc"}},
		{8, []string{"*H*\naaaa", "bbbb", "cccc"}},
		{3, []string{"*H*", "aa…", "bb…", "cc…"}},
	} {
		got := splitLines("*H*", lines, tc.limit)
		if !slices.Equal(got, tc.want) {
			t.Errorf("limit %d: %q, want %q", tc.limit, got, tc.want)
		}
		for _, s := range got {
			if len([]rune(s)) > tc.limit {
				t.Errorf("limit %d: %q is too long", tc.limit, s)
			}
		}
	}
}

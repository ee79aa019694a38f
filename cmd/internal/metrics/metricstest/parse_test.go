package metricstest

import (
	"strings"
	"testing"
)

// good is an exposition as Prometheus's encoder writes it.
const good = `# HELP a_total A counter.
# TYPE a_total counter
a_total{kind="x"} 1
a_total{kind="y"} 2
# HELP b_seconds A histogram.
# TYPE b_seconds histogram
b_seconds_bucket{kind="x",le="0.1"} 1
b_seconds_bucket{kind="x",le="+Inf"} 2
b_seconds_sum{kind="x"} 0.6
b_seconds_count{kind="x"} 2
`

// Parse reads what the encoder writes, and refuses each way an exposition
// can be read by the parser and still be wrong for a scraper.
func TestParse(t *testing.T) {
	t.Parallel()
	fams, err := Parse(good)
	if err != nil || len(fams) != 2 {
		t.Fatalf("Parse(good) = %d families, %v", len(fams), err)
	}
	if got, want := Signature(fams[1]), "b_seconds histogram {kind} le=0.1,+Inf"; got != want {
		t.Errorf("Signature = %q, want %q", got, want)
	}
	for _, tc := range []struct{ name, from, to, says string }{
		{"not parsed", `a_total{kind="y"} 2`, `a_total{kind="y"} two`, "float"},
		{"families out of order", good, good[strings.Index(good, "# HELP b"):] + good[:strings.Index(good, "# HELP b")], "line 1"},
		{"a second HELP", "# TYPE a_total counter\n", "# TYPE a_total counter\n# HELP a_total Again.\n", "HELP"},
		{"TYPE first", "# HELP a_total A counter.\n# TYPE a_total counter\n", "# TYPE a_total counter\n# HELP a_total A counter.\n", "line 1"},
		{"samples apart", `a_total{kind="y"} 2` + "\n", "", "line"},
		{"a series twice", `a_total{kind="y"} 2`, `a_total{kind="x"} 2`, "twice"},
		{"other labels", `a_total{kind="y"} 2`, `a_total{sort="y"} 2`, "labels"},
		{"a negative counter", `a_total{kind="y"} 2`, `a_total{kind="y"} -2`, "negative"},
		{"not cumulative", `le="+Inf"} 2`, `le="+Inf"} 0`, "cumulative"},
		{"no +Inf", `b_seconds_bucket{kind="x",le="+Inf"} 2` + "\n", "", "+Inf"},
		{"+Inf not the count", `b_seconds_count{kind="x"} 2`, `b_seconds_count{kind="x"} 3`, "+Inf"},
		{"other buckets", `b_seconds_count{kind="x"} 2` + "\n",
			`b_seconds_count{kind="x"} 2` + "\n" + `b_seconds_bucket{kind="y",le="1"} 0` + "\n" + `b_seconds_bucket{kind="y",le="+Inf"} 0` + "\n" + `b_seconds_sum{kind="y"} 0` + "\n" + `b_seconds_count{kind="y"} 0` + "\n",
			"buckets"},
	} {
		text := strings.Replace(good, tc.from, tc.to, 1)
		if tc.name == "samples apart" {
			text += tc.from
		}
		if text == good {
			t.Fatalf("%s: the case changes nothing", tc.name)
		}
		if _, err := Parse(text); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: Parse = %v, want an error saying %q\n%s", tc.name, err, tc.says, text)
		}
	}
}

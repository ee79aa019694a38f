package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/bookbot/bookbot/cmd/internal/metrics/metricstest"
)

// The exposition bookbot writes itself parses with Prometheus's own text
// parser, every family and sample of it, not only with metricstest's:
// a scraper reads what the library wrote, not what bookbot thinks it wrote.
// The parser is for this test alone; the binary does not link it.
func TestExpositionParsesWithPrometheus(t *testing.T) {
	t.Parallel()
	m := New()
	bornAll(m)
	text := scrape(t, m.Handler())
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("Prometheus's parser refuses /metrics: %v\n%s", err, text)
	}
	ours, err := metricstest.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(fams) != len(ours) {
		t.Errorf("Prometheus's parser read %d families, metricstest %d", len(fams), len(ours))
	}
	for _, o := range ours {
		f, ok := fams[o.Name]
		if !ok {
			t.Errorf("%s: not read by Prometheus's parser", o.Name)
			continue
		}
		series := len(o.Lines)
		if o.Type == "histogram" || o.Type == "summary" {
			series = 0
			for _, l := range o.Lines {
				if strings.HasSuffix(l.Name, "_count") {
					series++
				}
			}
		}
		if got := strings.ToLower(f.GetType().String()); got != o.Type || f.GetHelp() != o.Help || len(f.GetMetric()) != series {
			t.Errorf("%s: Prometheus's parser read a %s of %d series, help %q; metricstest a %s of %d, help %q",
				o.Name, got, len(f.GetMetric()), f.GetHelp(), o.Type, series, o.Help)
		}
	}
}

package metricstest

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Parse reads a text exposition with Prometheus's own parser, strictly: it
// must also be exactly what Prometheus's encoder writes for the families
// read, one after another by name, so each family's HELP and TYPE come
// once and first, its samples together, nothing else between. Beyond that,
// it checks what the parser leaves to its callers: no series twice, the
// same label names in each series of a family, no negative counter, and a
// histogram's buckets the same for each series, cumulative, ending with
// +Inf equal to its count. It returns the families sorted by name.
func Parse(text string) ([]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.LegacyValidation)
	byName, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	fams := slices.SortedFunc(maps.Values(byName), func(a, b *dto.MetricFamily) int {
		return cmp.Compare(a.GetName(), b.GetName())
	})
	var again strings.Builder
	for _, f := range fams {
		if err := check(f); err != nil {
			return nil, fmt.Errorf("%s: %w", f.GetName(), err)
		}
		if _, err := expfmt.MetricFamilyToText(&again, f); err != nil {
			return nil, err
		}
	}
	if w := again.String(); w != text {
		n, got, want := diffLine(text, w)
		return nil, fmt.Errorf("not what Prometheus's encoder writes of the same families, by name: line %d is %q, not %q", n, got, want)
	}
	return fams, nil
}

// Signature says what a scraper depends on: the name, the type, the label
// names (sorted, without a histogram's le or a summary's quantile) and, for
// a histogram, the bucket bounds.
func Signature(f *dto.MetricFamily) string {
	var labels []string
	if ms := f.GetMetric(); len(ms) > 0 {
		labels = labelNames(ms[0])
	}
	s := f.GetName() + " " + strings.ToLower(f.GetType().String()) + " {" + strings.Join(labels, ",") + "}"
	if f.GetType() == dto.MetricType_HISTOGRAM {
		var b []string
		for _, bucket := range f.GetMetric()[0].GetHistogram().GetBucket() {
			b = append(b, strconv.FormatFloat(bucket.GetUpperBound(), 'g', -1, 64))
		}
		s += " le=" + strings.Join(b, ",")
	}
	return s
}

// check checks what the parser does not.
func check(f *dto.MetricFamily) error {
	ms := f.GetMetric()
	seen := map[string]bool{}
	for _, m := range ms {
		var key strings.Builder
		for _, l := range m.GetLabel() {
			fmt.Fprintf(&key, "%q=%q,", l.GetName(), l.GetValue())
		}
		if seen[key.String()] {
			return fmt.Errorf("series {%s} is there twice", key.String())
		}
		seen[key.String()] = true
		if got, want := labelNames(m), labelNames(ms[0]); !slices.Equal(got, want) {
			return fmt.Errorf("series with labels %v and %v", want, got)
		}
		if f.GetType() == dto.MetricType_COUNTER && m.GetCounter().GetValue() < 0 {
			return fmt.Errorf("a negative counter")
		}
		if f.GetType() == dto.MetricType_HISTOGRAM {
			if err := checkHistogram(m.GetHistogram(), ms[0].GetHistogram()); err != nil {
				return fmt.Errorf("{%s}: %w", key.String(), err)
			}
		}
	}
	return nil
}

func checkHistogram(h, first *dto.Histogram) error {
	bs := h.GetBucket()
	for i, b := range bs {
		if i > 0 && (b.GetUpperBound() <= bs[i-1].GetUpperBound() || count(b) < count(bs[i-1])) {
			return fmt.Errorf("buckets out of order or not cumulative")
		}
		if fb := first.GetBucket(); len(fb) != len(bs) || fb[i].GetUpperBound() != b.GetUpperBound() {
			return fmt.Errorf("buckets other than its first series'")
		}
	}
	total := float64(h.GetSampleCount())
	if h.SampleCountFloat != nil {
		total = h.GetSampleCountFloat()
	}
	if len(bs) == 0 || !math.IsInf(bs[len(bs)-1].GetUpperBound(), 1) || count(bs[len(bs)-1]) != total {
		return fmt.Errorf("no +Inf bucket equal to the count")
	}
	return nil
}

// count is a bucket's cumulative count, however the parser kept it.
func count(b *dto.Bucket) float64 {
	if b.CumulativeCountFloat != nil {
		return b.GetCumulativeCountFloat()
	}
	return float64(b.GetCumulativeCount())
}

// labelNames are a series' label names, sorted, without le and quantile,
// which the parser keeps apart.
func labelNames(m *dto.Metric) []string {
	var names []string
	for _, l := range m.GetLabel() {
		names = append(names, l.GetName())
	}
	slices.Sort(names)
	return names
}

// diffLine is the first line (from 1) where a and b differ, and the two.
func diffLine(a, b string) (int, string, string) {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return i + 1, x, y
		}
	}
	return 0, "", ""
}

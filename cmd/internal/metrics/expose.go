package metrics

import (
	"bufio"
	"cmp"
	"compress/gzip"
	"io"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// bookbot writes the Prometheus text exposition (format 0.0.4) itself: a
// few counters, gauges and histograms do not need a client library, and
// one (with its protobuf model and /proc reader) was a seventh of the
// binary and of its resident set at idle. The output is what the library
// wrote: the same families, HELP, TYPE, labels, bucket bounds and order
// (testdata/families.txt).

// family is one metric family: a counter, gauge or histogram with labels
// fixed at creation, or a gauge read at each scrape (value).
type family struct {
	name, help, kind string
	labels           []string  // sorted by name, as they are written
	order            []int     // order[i]: which argument of with is labels[i]
	buckets          []float64 // a histogram's upper bounds, without +Inf
	value            func() float64

	mu     sync.Mutex
	series map[string]*series // by label values joined with "\xff"
}

type series struct {
	labels string   // `{a="x",b="y"}` or ""
	value  float64  // a counter's or gauge's; a histogram's sum
	counts []uint64 // a histogram's, per bucket (not cumulative), +Inf last
	count  uint64   // a histogram's
	sortBy []string // label values in written order
}

// newFamily declares a family whose series take label values in the order
// of labelNames.
func newFamily(name, kind, help string, labelNames ...string) *family {
	f := &family{name: name, kind: kind, help: help, series: map[string]*series{}}
	f.order = make([]int, len(labelNames))
	for i := range f.order {
		f.order[i] = i
	}
	slices.SortFunc(f.order, func(a, b int) int { return cmp.Compare(labelNames[a], labelNames[b]) })
	for _, i := range f.order {
		f.labels = append(f.labels, labelNames[i])
	}
	return f
}

func newHistogram(name, help string, buckets []float64, labelNames ...string) *family {
	f := newFamily(name, "histogram", help, labelNames...)
	f.buckets = buckets
	return f
}

func newGaugeFunc(name, help string, value func() float64) *family {
	return &family{name: name, kind: "gauge", help: help, value: value}
}

// with returns the series of these label values, creating it; f.mu is held.
func (f *family) with(values []string) *series {
	key := strings.Join(values, "\xff")
	if s, ok := f.series[key]; ok {
		return s
	}
	s := &series{}
	if len(f.labels) > 0 {
		var b strings.Builder
		b.WriteByte('{')
		for i, j := range f.order {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(f.labels[i])
			b.WriteString(`="`)
			b.WriteString(labelEscaper.Replace(values[j]))
			b.WriteByte('"')
			s.sortBy = append(s.sortBy, values[j])
		}
		b.WriteByte('}')
		s.labels = b.String()
	}
	if f.kind == "histogram" {
		s.counts = make([]uint64, len(f.buckets)+1)
	}
	f.series[key] = s
	return s
}

// add adds v to a counter (or gauge) of these label values.
func (f *family) add(v float64, values ...string) {
	f.mu.Lock()
	f.with(values).value += v
	f.mu.Unlock()
}

// set sets a gauge of these label values.
func (f *family) set(v float64, values ...string) {
	f.mu.Lock()
	f.with(values).value = v
	f.mu.Unlock()
}

// observe counts v in a histogram of these label values: in the first
// bucket whose upper bound is ≥ v.
func (f *family) observe(v float64, values ...string) {
	i := sort.SearchFloat64s(f.buckets, v)
	f.mu.Lock()
	s := f.with(values)
	s.counts[i]++
	s.count++
	s.value += v
	f.mu.Unlock()
}

// write writes the family, if it has a series.
func (f *family) write(w *bufio.Writer) {
	if f.value != nil {
		header(w, f.name, f.kind, f.help)
		sample(w, f.name, "", "", f.value())
		return
	}
	all := f.snapshot()
	if len(all) == 0 {
		return
	}
	slices.SortFunc(all, func(a, b *series) int { return slices.Compare(a.sortBy, b.sortBy) })
	header(w, f.name, f.kind, f.help)
	for _, s := range all {
		if f.kind != "histogram" {
			sample(w, f.name, s.labels, "", s.value)
			continue
		}
		var cum uint64
		for i, n := range s.counts {
			cum += n
			le := math.Inf(1)
			if i < len(f.buckets) {
				le = f.buckets[i]
			}
			sample(w, f.name+"_bucket", s.labels, `le="`+formatFloat(le)+`"`, float64(cum))
		}
		sample(w, f.name+"_sum", s.labels, "", s.value)
		sample(w, f.name+"_count", s.labels, "", float64(s.count))
	}
}

// snapshot copies the family's series under its lock, so that writing
// them to a slow scraper does not hold up add, set and observe.
func (f *family) snapshot() []*series {
	f.mu.Lock()
	defer f.mu.Unlock()
	all := make([]*series, 0, len(f.series))
	for _, s := range f.series {
		c := *s
		c.counts = slices.Clone(s.counts)
		all = append(all, &c)
	}
	return all
}

var (
	labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
)

func header(w *bufio.Writer, name, kind, help string) {
	w.WriteString("# HELP " + name + " " + helpEscaper.Replace(help) + "\n# TYPE " + name + " " + kind + "\n")
}

// sample writes one line; extra is one more label (a histogram's le, a
// summary's quantile), written last.
func sample(w *bufio.Writer, name, labels, extra string, v float64) {
	w.WriteString(name)
	switch {
	case extra != "" && labels != "":
		w.WriteString(labels[:len(labels)-1] + "," + extra + "}")
	case extra != "":
		w.WriteString("{" + extra + "}")
	default:
		w.WriteString(labels)
	}
	w.WriteByte(' ')
	w.WriteString(formatFloat(v))
	w.WriteByte('\n')
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// serveMetrics writes bookbot's families, then the Go runtime's and the
// process's, gzipped when the scraper accepts it (Prometheus does).
func (m *Recorder) serveMetrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8; escaping=underscores") // as the client library answered
	var out io.Writer = w
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		w.Header().Set("Content-Encoding", "gzip")
		gz := gzip.NewWriter(w)
		defer gz.Close()
		out = gz
	}
	bw := bufio.NewWriter(out)
	for _, f := range m.families {
		f.write(bw)
	}
	writeRuntime(bw)
	bw.Flush()
}

func acceptsGzip(accept string) bool {
	for part := range strings.SplitSeq(accept, ",") {
		coding, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(coding) == "gzip" && strings.ReplaceAll(strings.TrimSpace(q), " ", "") != "q=0" {
			return true
		}
	}
	return false
}

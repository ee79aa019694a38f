package metricstest

import (
	"bufio"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Family is one metric family of a text exposition: its name, TYPE, HELP,
// the names of its labels (sorted; without a histogram's le and a
// summary's quantile), a histogram's bucket bounds and its samples.
type Family struct {
	Name, Type, Help string
	Labels           []string
	Buckets          []float64 // upper bounds, +Inf last
	Lines            []Line
}

// Line is one line of a family: the series' name (the family's, or with a
// histogram's or summary's suffix), its labels in order, and its value.
type Line struct {
	Name   string
	Labels [][2]string
	Value  float64
}

// Signature says what a scraper depends on: the name, the type, the label
// names and, for a histogram, the bucket bounds.
func (f Family) Signature() string {
	s := f.Name + " " + f.Type + " {" + strings.Join(f.Labels, ",") + "}"
	if f.Type == "histogram" {
		var b []string
		for _, v := range f.Buckets {
			b = append(b, strconv.FormatFloat(v, 'g', -1, 64))
		}
		s += " le=" + strings.Join(b, ",")
	}
	return s
}

var (
	metricNameRE = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	labelNameRE  = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
)

// Parse reads a Prometheus text exposition (format 0.0.4) strictly, the
// way a scraper must be able to: every family's HELP and TYPE come once,
// before its samples, which are contiguous; names, labels and values are
// well formed; no series is there twice; a histogram's buckets are the
// same for each of its series, cumulative, end with +Inf and agree with
// its _count. It returns the families in the order they came.
func Parse(text string) ([]Family, error) {
	var fams []Family
	index := map[string]int{}
	seen := map[string]bool{} // series already read
	fam := func(name string) (*Family, error) {
		i, ok := index[name]
		if !ok {
			fams = append(fams, Family{Name: name, Type: "untyped"})
			i = len(fams) - 1
			index[name] = i
		} else if i != len(fams)-1 {
			return nil, fmt.Errorf("%s: its lines are not together", name)
		}
		return &fams[i], nil
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		fail := func(format string, args ...any) error {
			return fmt.Errorf("line %d %q: %s", n, line, fmt.Sprintf(format, args...))
		}
		if line == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "# "); ok {
			kw, rest, _ := strings.Cut(rest, " ")
			name, arg, _ := strings.Cut(rest, " ")
			if kw != "HELP" && kw != "TYPE" {
				continue // a comment
			}
			if !metricNameRE.MatchString(name) {
				return nil, fail("bad metric name")
			}
			f, err := fam(name)
			if err != nil {
				return nil, fail("%v", err)
			}
			if len(f.Lines) > 0 {
				return nil, fail("%s after the samples", kw)
			}
			switch kw {
			case "HELP":
				if f.Help != "" {
					return nil, fail("a second HELP")
				}
				f.Help = unescape(arg, false)
			case "TYPE":
				if f.Type != "untyped" {
					return nil, fail("a second TYPE")
				}
				if !slices.Contains([]string{"counter", "gauge", "histogram", "summary", "untyped"}, arg) {
					return nil, fail("unknown type")
				}
				f.Type = arg
			}
			continue
		}
		s, err := parseSample(line)
		if err != nil {
			return nil, fail("%v", err)
		}
		if seen[line[:strings.LastIndexByte(line, ' ')]] {
			return nil, fail("a series is there twice")
		}
		seen[line[:strings.LastIndexByte(line, ' ')]] = true
		base := s.Name
		if i, ok := index[s.Name]; !ok || i != len(fams)-1 {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if b, ok := strings.CutSuffix(s.Name, suffix); ok {
					if j, ok := index[b]; ok && (fams[j].Type == "histogram" || fams[j].Type == "summary") {
						base = b
					}
				}
			}
		}
		f, err := fam(base)
		if err != nil {
			return nil, fail("%v", err)
		}
		f.Lines = append(f.Lines, s)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for i := range fams {
		if err := fams[i].check(); err != nil {
			return nil, err
		}
	}
	return fams, nil
}

// check fills Labels and Buckets, and checks what a type requires.
func (f *Family) check() error {
	var labels []string
	buckets := map[string][]float64{} // the series' labels → its bucket bounds
	counts := map[string][]float64{}
	total := map[string]float64{}
	for _, s := range f.Lines {
		var names []string
		var key strings.Builder
		var le string
		for _, l := range s.Labels {
			if (f.Type == "histogram" && l[0] == "le") || (f.Type == "summary" && l[0] == "quantile") {
				le = l[1]
				continue
			}
			names = append(names, l[0])
			key.WriteString(l[0] + "=" + l[1] + ",")
		}
		slices.Sort(names)
		if labels == nil {
			labels = names
		} else if !slices.Equal(labels, names) {
			return fmt.Errorf("%s: series with labels %v and %v", f.Name, labels, names)
		}
		switch {
		case f.Type == "histogram" && s.Name == f.Name+"_bucket":
			if le == "" {
				return fmt.Errorf("%s: a bucket without le", f.Name)
			}
			b, err := parseValue(le)
			if err != nil {
				return fmt.Errorf("%s: le=%q: %v", f.Name, le, err)
			}
			k := key.String()
			if n := len(buckets[k]); n > 0 && (b <= buckets[k][n-1] || s.Value < counts[k][n-1]) {
				return fmt.Errorf("%s{%s}: buckets out of order or not cumulative", f.Name, k)
			}
			buckets[k] = append(buckets[k], b)
			counts[k] = append(counts[k], s.Value)
		case f.Type == "histogram" && s.Name == f.Name+"_count":
			total[key.String()] = s.Value
		case f.Type == "histogram" && s.Name == f.Name+"_sum":
		case f.Type == "summary" && (s.Name == f.Name || s.Name == f.Name+"_sum" || s.Name == f.Name+"_count"):
		case s.Name == f.Name && f.Type != "histogram" && f.Type != "summary":
			if f.Type == "counter" && s.Value < 0 {
				return fmt.Errorf("%s: a negative counter", f.Name)
			}
		default:
			return fmt.Errorf("%s: sample %s does not belong to a %s", f.Name, s.Name, f.Type)
		}
	}
	f.Labels = labels
	for k, b := range buckets {
		if !math.IsInf(b[len(b)-1], 1) || counts[k][len(b)-1] != total[k] {
			return fmt.Errorf("%s{%s}: no +Inf bucket equal to the count", f.Name, k)
		}
		if f.Buckets == nil {
			f.Buckets = b
		} else if !slices.Equal(f.Buckets, b) {
			return fmt.Errorf("%s: series with different buckets", f.Name)
		}
	}
	return nil
}

// parseSample reads `name{label="value",…} value`; no timestamps.
func parseSample(line string) (Line, error) {
	var s Line
	end := strings.IndexAny(line, "{ ")
	if end < 0 {
		return s, fmt.Errorf("no value")
	}
	s.Name, line = line[:end], line[end:]
	if !metricNameRE.MatchString(s.Name) {
		return s, fmt.Errorf("bad metric name")
	}
	if strings.HasPrefix(line, "{") {
		line = line[1:]
		for !strings.HasPrefix(line, "}") {
			name, rest, ok := strings.Cut(line, `="`)
			if !ok || !labelNameRE.MatchString(name) {
				return s, fmt.Errorf("bad label")
			}
			for _, l := range s.Labels {
				if l[0] == name {
					return s, fmt.Errorf("label %s twice", name)
				}
			}
			i := 0
			for ; i < len(rest) && rest[i] != '"'; i++ {
				if rest[i] == '\\' {
					if i+1 == len(rest) || !strings.ContainsRune(`\"n`, rune(rest[i+1])) {
						return s, fmt.Errorf("bad escape in label %s", name)
					}
					i++
				}
			}
			if i == len(rest) {
				return s, fmt.Errorf("label %s not closed", name)
			}
			s.Labels = append(s.Labels, [2]string{name, unescape(rest[:i], true)})
			line = rest[i+1:]
			if r, ok := strings.CutPrefix(line, ","); ok {
				line = r
			} else if !strings.HasPrefix(line, "}") {
				return s, fmt.Errorf("labels not closed")
			}
		}
		line = line[1:]
	}
	v, ok := strings.CutPrefix(line, " ")
	if !ok || strings.Contains(v, " ") {
		return s, fmt.Errorf("want one value after one space")
	}
	var err error
	s.Value, err = parseValue(v)
	return s, err
}

func parseValue(v string) (float64, error) {
	switch v {
	case "+Inf":
		return math.Inf(1), nil
	case "-Inf":
		return math.Inf(-1), nil
	case "NaN":
		return math.NaN(), nil
	}
	return strconv.ParseFloat(v, 64)
}

func unescape(s string, quotes bool) string {
	r := strings.NewReplacer(`\\`, `\`, `\n`, "\n")
	if quotes {
		r = strings.NewReplacer(`\\`, `\`, `\n`, "\n", `\"`, `"`)
	}
	return r.Replace(s)
}

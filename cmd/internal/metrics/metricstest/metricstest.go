// Package metricstest reads Prometheus text exposition in tests: the
// metrics package's own, and the end-to-end tests that scrape bookbot's
// /metrics.
package metricstest

import (
	"bufio"
	"math"
	"strconv"
	"strings"
	"testing"
)

// Sample is the value of one series (name plus labels in exposition order,
// which is sorted by label name) in a text exposition; ok is false when the
// series is absent.
func Sample(text, series string) (v float64, ok bool) {
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		rest, found := strings.CutPrefix(sc.Text(), series+" ")
		if !found {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		return v, err == nil
	}
	return 0, false
}

// Want fails t unless series is in text with value want (NaN matches NaN).
func Want(t testing.TB, text, series string, want float64) {
	t.Helper()
	got, ok := Sample(text, series)
	switch {
	case !ok:
		t.Errorf("%s is missing", series)
	case got != want && !(math.IsNaN(want) && math.IsNaN(got)):
		t.Errorf("%s = %v, want %v", series, got, want)
	}
}

package metrics

import (
	"compress/gzip"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/cmd/internal/metrics/metricstest"
	"github.com/bookbot/bookbot/notices"
	"github.com/bookbot/bookbot/personal"
)

var update = flag.Bool("update", false, "rewrite testdata/families.txt from what /metrics serves")

// bornAll makes every series bookbot can serve exist.
func bornAll(m *Recorder) {
	m.Request("GET /bookings", 200, 20*time.Millisecond)
	m.Request("POST /bookings", 0, time.Second)
	m.Wrote(booking.OpCreate, &booking.Result{Outcome: booking.RateLimited, Held: true})
	m.ClockSkew(time.Second)
	m.Acked("slash_commands", time.Millisecond)
	m.Connected(true)
	m.StoreError()
	m.SetLeader(true)
	m.Personal(personal.Reminder, "sent")
	m.NoticePoll(true, time.Now())
	m.Notice(notices.New, "posted")
	m.DigestRun("posted")
	m.slackError("chat.postMessage", `a "quoted" \ code`+"\n")
	m.SetAwaitingReview(func() (int, error) { return 1, nil })
}

// Every family /metrics serves keeps its name, type, label names and
// bucket bounds (testdata/families.txt, written once from what the
// Prometheus client library served), and the whole exposition is what
// Prometheus's own parser reads and its encoder writes, families in order
// of name (metricstest.Parse).
func TestExpositionKeepsEveryFamily(t *testing.T) {
	t.Parallel()
	m := New()
	bornAll(m)
	text := scrape(t, m.Handler())
	fams, err := metricstest.Parse(text)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, text)
	}
	var got []string
	for _, f := range fams {
		if f.GetHelp() == "" {
			t.Errorf("%s has no HELP", f.GetName())
		}
		got = append(got, metricstest.Signature(f))
	}
	const golden = "testdata/families.txt"
	if *update {
		if err := os.WriteFile(golden, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSpace(string(b)), "\n")
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("missing or changed: %s", w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			t.Errorf("new or changed: %s", g)
		}
	}
	metricstest.Want(t, text, `bookbot_slack_api_errors_total{error="a \"quoted\" \\ code\n",method="chat.postMessage"}`, 1)

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); ct != "text/plain; version=0.0.4; charset=utf-8; escaping=underscores" {
		t.Errorf("Content-Type %q, not what the client library answered", ct)
	}

	// Prometheus asks for gzip, and gets the same text.
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	rec = httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, req)
	if rec.Header().Get("Content-Encoding") != "gzip" {
		t.Fatal("a scrape accepting gzip got no gzip")
	}
	zr, err := gzip.NewReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	unzipped, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := metricstest.Parse(string(unzipped)); err != nil || !strings.Contains(string(unzipped), "bookbot_leader 1") {
		t.Errorf("the gzipped exposition: %v\n%s", err, unzipped)
	}
}

// Every metric the Grafana dashboard and the alert rules query is served,
// and so is every go_* and process_* metric they name.
func TestExpositionServesWhatDeployQueries(t *testing.T) {
	t.Parallel()
	m := New()
	bornAll(m)
	fams, err := metricstest.Parse(scrape(t, m.Handler()))
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, f := range fams {
		switch f.GetType() {
		case dto.MetricType_HISTOGRAM:
			served[f.GetName()+"_bucket"] = true
		case dto.MetricType_SUMMARY:
			served[f.GetName()] = true
		default:
			served[f.GetName()] = true
			continue
		}
		served[f.GetName()+"_sum"], served[f.GetName()+"_count"] = true, true
	}
	name := regexp.MustCompile(`\b(bookbot|go|process)_[a-z0-9_]+\b`)
	n := 0
	for _, file := range []string{"grafana/bookbot.json", "prometheus/alerts.yaml", "prometheus/alerts_test.yaml"} {
		b, err := os.ReadFile("../../../deploy/" + file)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range name.FindAllString(string(b), -1) {
			n++
			if !served[q] {
				t.Errorf("deploy/%s names %s, which /metrics does not serve", file, q)
			}
		}
	}
	if n < 10 {
		t.Errorf("only %d metric names found in deploy/", n)
	}
}

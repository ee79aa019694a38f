package main

import (
	"context"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
)

var (
	// metricName is a bookbot metric named in a query.
	metricName = regexp.MustCompile(`\bbookbot_[a-z0-9_]+`)
	bookingID  = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
)

// dashboard is the part of deploy/grafana/bookbot.json the tests read.
type dashboard struct {
	Title      string `json:"title"`
	UID        string `json:"uid"`
	Templating struct {
		List []struct {
			Name string `json:"name"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID         int    `json:"id"`
		Type       string `json:"type"`
		Title      string `json:"title"`
		Datasource *struct {
			UID string `json:"uid"`
		} `json:"datasource"`
		GridPos *struct{ X, Y, W, H int } `json:"gridPos"`
		Targets []struct {
			RefID string `json:"refId"`
			Expr  string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	var d dashboard
	if err := json.Unmarshal([]byte(readDeploy(t, "grafana/bookbot.json")), &d); err != nil {
		t.Fatalf("deploy/grafana/bookbot.json: %v", err)
	}
	return d
}

// alertRule is one rule of deploy/prometheus/alerts.yaml.
type alertRule struct{ name, expr, forDuration, severity, summary, description string }

func readAlerts(t *testing.T) []alertRule {
	t.Helper()
	flat := flatYAML(t, readDeploy(t, "prometheus/alerts.yaml"))
	if flat["groups[0].name"] != "bookbot" || flat["groups[1].name"] != "" {
		t.Errorf("alerts.yaml: want one group, bookbot")
	}
	var rules []alertRule
	for i := 0; ; i++ {
		p := "groups[0].rules[" + strconv.Itoa(i) + "]."
		if flat[p+"alert"] == "" && flat[p+"expr"] == "" {
			return rules
		}
		rules = append(rules, alertRule{
			name: flat[p+"alert"], expr: flat[p+"expr"], forDuration: flat[p+"for"],
			severity: flat[p+"labels.severity"], summary: flat[p+"annotations.summary"], description: flat[p+"annotations.description"],
		})
	}
}

// The dashboard imports into Grafana as it is: every panel has an ID of its
// own, a place, and (unless it is a row) the data source the person picks
// and at least one query.
func TestDashboardShape(t *testing.T) {
	t.Parallel()
	d := readDashboard(t)
	if d.Title == "" || d.UID != "bookbot" {
		t.Errorf("title %q, uid %q", d.Title, d.UID)
	}
	var vars []string
	for _, v := range d.Templating.List {
		vars = append(vars, v.Name)
	}
	if !slices.Equal(vars, []string{"datasource", "instance"}) {
		t.Errorf("template variables %v, want datasource and instance", vars)
	}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] || p.ID == 0 {
			t.Errorf("panel %q: ID %d is zero or taken", p.Title, p.ID)
		}
		ids[p.ID] = true
		if p.GridPos == nil || p.GridPos.W == 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("panel %q has no place on the 24-column grid: %+v", p.Title, p.GridPos)
		}
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q does not use the chosen data source", p.Title)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			if !metricName.MatchString(q.Expr) || !strings.Contains(q.Expr, `instance=~"$instance"`) {
				t.Errorf("panel %q: query %q names no bookbot metric or ignores the instance picked", p.Title, q.Expr)
			}
		}
	}
}

// The alert rules are complete and each says what to do. promtool, where
// .ci/run can install it, checks them further (and runs alerts_test.yaml).
func TestAlertRulesShape(t *testing.T) {
	t.Parallel()
	rules := readAlerts(t)
	names := map[string]bool{}
	for _, r := range rules {
		if names[r.name] {
			t.Errorf("alert %s is there twice", r.name)
		}
		names[r.name] = true
		if r.expr == "" || r.summary == "" || r.description == "" {
			t.Errorf("alert %q lacks an expr, a summary or a description", r.name)
		}
		if r.severity != "page" && r.severity != "ticket" {
			t.Errorf("alert %s: severity %q, want page or ticket", r.name, r.severity)
		}
		if r.forDuration != "" {
			if _, err := time.ParseDuration(r.forDuration); err != nil {
				t.Errorf("alert %s: for %q: %v", r.name, r.forDuration, err)
			}
		}
		if strings.Count(r.expr, "(") != strings.Count(r.expr, ")") || strings.Count(r.expr, "{") != strings.Count(r.expr, "}") {
			t.Errorf("alert %s: unbalanced expr %q", r.name, r.expr)
		}
	}
	// What an operator of bookbot must hear about.
	for _, want := range []string{
		"BookbotDown", "BookbotSlackDisconnected", "BookbotNoGoodRead", "BookbotWriteAwaitingReview",
		"BookbotNoticesFailing", "BookbotNoLeader", "BookbotKeyRefused", "BookbotClockSkew",
	} {
		if !names[want] {
			t.Errorf("no alert %s among %v", want, slices.Sorted(maps.Keys(names)))
		}
	}
}

// Every metric the dashboard and the alert rules query is one bookbot
// serves: the real binary, having listed, failed a Slack call and
// cancelled a booking (so that the series born of those exist), is
// scraped, and each bookbot_* name in a query must be a series there.
func TestDashboardAndAlertsQueryServedMetrics(t *testing.T) {
	t.Parallel()
	queried := map[string][]string{} // metric → where
	for _, p := range readDashboard(t).Panels {
		for _, q := range p.Targets {
			for _, m := range metricName.FindAllString(q.Expr, -1) {
				queried[m] = append(queried[m], "dashboard panel "+strconv.Quote(p.Title))
			}
		}
	}
	for _, r := range readAlerts(t) {
		for _, m := range metricName.FindAllString(r.expr, -1) {
			queried[m] = append(queried[m], "alert "+r.name)
		}
	}

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	sb := bookingtest.NewServer(t)
	sl := slacktest.NewServer(t)
	sl.AddUser(slacktest.User{ID: "UADA", Name: "ada", TZ: "Europe/Berlin"})
	cmd, out := startRun(ctx, t, sl, env(sb, sl))
	base := httpBase(ctx, t, out)
	sl.FailNext("users.info", "user_not_found")
	list := slashReply(ctx, t, sl, out, "list", "cancel_booking")
	id := bookingID.FindString(string(list.Blocks)) // the first listed
	ask := slashReply(ctx, t, sl, out, "cancel "+id, "Cancel this booking?")
	if _, err := sl.SendInteraction(ctx, slacktest.BlockAction("UADA", "cancel_booking", id, slacktest.InMessage(ask))); err != nil {
		t.Fatal(err)
	}
	if _, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Kind == "response_url" && strings.HasPrefix(m.Text, "Cancelled: ")
	}); err != nil {
		t.Fatalf("no cancel reply: %v\n%s", err, out.String())
	}
	out.waitCount(ctx, t, "notices off", 1) // the scheduled work has started
	_, metrics := get(ctx, t, base+"/metrics")
	stopRun(t, cmd, out)

	served := map[string]bool{}
	for line := range strings.Lines(metrics) {
		if name, _, ok := strings.Cut(line, " "); ok && !strings.HasPrefix(line, "#") {
			name, _, _ = strings.Cut(name, "{")
			served[name] = true
		}
	}
	for _, m := range slices.Sorted(maps.Keys(queried)) {
		if !served[m] {
			t.Errorf("%s, queried by %s, is not in bookbot's /metrics", m, strings.Join(slices.Compact(queried[m]), ", "))
		}
	}
	if len(queried) < 10 {
		t.Errorf("only %d metrics queried: %v", len(queried), slices.Sorted(maps.Keys(queried)))
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", metrics)
	}
}

// slashReply runs `/booking text` as UADA and waits for the reply
// containing want.
func slashReply(ctx context.Context, t *testing.T, sl *slacktest.Server, out *logLines, text, want string) slacktest.Message {
	t.Helper()
	if _, err := sl.SendSlashCommand(ctx, slacktest.SlashCommand{Command: "/booking", Text: text, UserID: "UADA"}); err != nil {
		t.Fatal(err)
	}
	m, err := sl.WaitMessage(ctx, func(m slacktest.Message) bool {
		return m.Kind == "response_url" && strings.Contains(m.Text+string(m.Blocks), want)
	})
	if err != nil {
		t.Fatalf("/booking %s: no reply with %q: %v\n%s", text, want, err, out.String())
	}
	return m
}

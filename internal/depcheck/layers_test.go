package depcheck

import (
	"errors"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// mod is bookbot's module path.
const mod = "github.com/bookbot/bookbot/"

// rule says what packages must not depend on, directly or through others.
// A package or a pattern is a path as go list takes it, "..." standing
// for any string (mod+"cmd/..." is cmd and every package under it).
type rule struct {
	pkgs []string
	// bad maps what they must not depend on to why.
	bad map[string]string
	// except are dependencies bad matches that the packages may have, and
	// why.
	except map[string]string
}

// domain is the Slack side and what it stands on: they declare the small
// interfaces they need, and cmd/ hands them an implementation.
var domain = []string{
	mod + "account/...", mod + "booking/...", mod + "bot/...", mod + "digest/...",
	mod + "notices/...", mod + "offer/...", mod + "outbox/...", mod + "personal/...",
}

// layers is every layering rule of bookbot, read in one place.
var layers = []rule{
	{
		pkgs: domain,
		bad: map[string]string{
			mod + "cmd/...":             "the commands stand on the domain, not the other way",
			mod + "store/...":           "a domain package declares the store interface it uses; store/ implements it and cmd/ hands it over",
			mod + "config/...":          "the environment is read once, in cmd/, which hands each package what it needs",
			"github.com/prometheus/...": "metrics are cmd/internal/metrics', behind the interfaces the domain declares (booking.Observer, …)",
			"github.com/jackc/...":      "PostgreSQL is store/pg's",
			"go.etcd.io/bbolt":          "bbolt is the embedded store's (store/bolt, internal/boltfile)",
		},
	},
	{
		pkgs: slices.Concat(slices.DeleteFunc(slices.Clone(domain), func(p string) bool { return p == mod+"bot/..." }),
			[]string{mod + "config/...", mod + "store/bolt/...", mod + "store/pg/...", mod + "statedir", mod + "internal/..."}),
		bad: map[string]string{
			"github.com/slack-go/...": "Slack's payload types stay in bot/ and the commands that start it",
		},
	},
	{
		pkgs: []string{mod + "config/..."},
		bad: map[string]string{
			mod + "cmd/...":   "the configuration is read by cmd/, and stands below it",
			mod + "store/...": "the configuration names the state, and opens none",
			mod + "bot/...":   "the configuration names channels and people, and knows nothing of Slack's side",
		},
	},
	{
		pkgs: []string{mod + "store"},
		bad: map[string]string{
			mod + "cmd/...": "every command opens the state through store.Open: it cannot stand on a command",
		},
	},
	{
		pkgs: []string{mod + "store/bolt/...", mod + "store/pg/..."},
		bad: map[string]string{
			mod + "cmd/...": "a backend keeps the domain's values for any command",
			mod + "store":   "store.Open chooses a backend, which stands below it",
		},
	},
	{
		pkgs: []string{mod + "store/bolt/..."},
		bad:  map[string]string{mod + "store/pg/...": "the embedded store stands alone, without PostgreSQL's driver"},
	},
	{
		pkgs: []string{mod + "store/pg/..."},
		bad:  map[string]string{mod + "store/bolt/...": "PostgreSQL's store stands alone, without the embedded one"},
	},
	{
		pkgs: []string{mod + "statedir", mod + "internal/..."},
		bad: map[string]string{
			mod + "...": "the bottom layer: any package may use these, so they use none of bookbot's but each other",
		},
		except: map[string]string{
			mod + "internal/...": "internal/… packages stand side by side at the bottom",
		},
	},
	{
		pkgs: []string{mod + "cmd/bookbot"},
		bad: map[string]string{
			"testing":                   "the binary links no test code: the stand-ins it runs name only the part of testing.TB they use",
			"net/http/httptest":         "the stand-ins the binary runs serve themselves through internal/loopback",
			"github.com/prometheus/...": "bookbot writes /metrics itself; Prometheus's parser reads it in the tests only",
			mod + "...test":             "test helpers stay out of the binary",
			mod + "internal/testutil":   "test helpers stay out of the binary",
			mod + "internal/blockkit":   "test helpers stay out of the binary",
			mod + "internal/fakeclock":  "the binary keeps time by the machine's clock, or the one the end-to-end tests move through a file",
		},
		except: map[string]string{
			mod + "booking/bookingtest": "the sandbox booking API: `bookbot sandbox` serves it and `bookbot demo` runs on it",
			mod + "bot/slacktest":       "the Slack stand-in `bookbot demo` runs, its console typing into it",
		},
	},
}

// match reports whether the package path matches pattern.
func match(pattern, path string) bool {
	re := regexp.QuoteMeta(pattern)
	re = strings.ReplaceAll(re, `\.\.\.`, `.*`)
	if strings.HasSuffix(re, `/.*`) {
		re = strings.TrimSuffix(re, `/.*`) + `(/.*)?`
	}
	return regexp.MustCompile(`^` + re + `$`).MatchString(path)
}

// violations holds deps, each package's dependencies, to the rules, and
// returns every dependency they forbid, and every pattern of theirs that
// matches nothing in deps (a rule that checks nothing).
func violations(rules []rule, deps map[string][]string) []string {
	var out []string
	pkgs := make([]string, 0, len(deps))
	for p := range deps {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, r := range rules {
		for _, pattern := range r.pkgs {
			if !slices.ContainsFunc(pkgs, func(p string) bool { return match(pattern, p) }) {
				out = append(out, pattern+" is no package: its rule checks nothing")
			}
		}
		for _, p := range pkgs {
			if !slices.ContainsFunc(r.pkgs, func(pattern string) bool { return match(pattern, p) }) {
				continue
			}
			for _, d := range deps[p] {
				if slices.ContainsFunc(mapKeys(r.except), func(e string) bool { return match(e, d) }) {
					continue
				}
				for _, bad := range mapKeys(r.bad) {
					if match(bad, d) {
						out = append(out, p+" depends on "+d+": "+r.bad[bad])
					}
				}
			}
		}
	}
	return out
}

func mapKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// dependencies is every package of the module with what it depends on,
// directly or not, its tests aside, as go list says.
func dependencies(t *testing.T) map[string][]string {
	t.Helper()
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not on PATH")
	}
	cmd := exec.CommandContext(t.Context(), gotool, "list", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		if exit, ok := errors.AsType[*exec.ExitError](err); ok {
			t.Fatalf("go list ./...: %v\n%s", err, exit.Stderr)
		}
		t.Fatalf("go list ./...: %v", err)
	}
	deps := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) > 0 {
			deps[f[0]] = f[1:]
		}
	}
	if _, ok := deps[mod+"cmd/bookbot"]; !ok {
		t.Fatalf("go list ./... does not list bookbot itself:\n%s", out)
	}
	return deps
}

// Every package keeps to the layers.
func TestLayers(t *testing.T) {
	t.Parallel()
	for _, v := range violations(layers, dependencies(t)) {
		t.Error(v)
	}
}

// The check finds a dependency a rule forbids, direct or not, lets one
// its exceptions name through, and says when a rule checks nothing.
func TestViolationsFound(t *testing.T) {
	t.Parallel()
	deps := map[string][]string{
		mod + "account":             {mod + "booking", mod + "store/pg", "github.com/jackc/pgx/v5"},
		mod + "booking":             nil,
		mod + "store/pg":            {"github.com/jackc/pgx/v5"},
		mod + "cmd/bookbot":         {mod + "booking/bookingtest", mod + "outbox/outboxtest", "testing"},
		mod + "booking/bookingtest": nil,
		mod + "outbox/outboxtest":   {"testing"},
		mod + "internal/loopback":   {mod + "internal/plaintext", mod + "booking"},
		mod + "internal/plaintext":  nil,
	}
	got := violations(layers, deps)
	for _, want := range []string{
		mod + "account depends on " + mod + "store/pg: ",
		mod + "account depends on github.com/jackc/pgx/v5: ",
		mod + "cmd/bookbot depends on " + mod + "outbox/outboxtest: ",
		mod + "cmd/bookbot depends on testing: ",
		mod + "internal/loopback depends on " + mod + "booking: ",
		mod + "bot/... is no package",
	} {
		if !slices.ContainsFunc(got, func(v string) bool { return strings.HasPrefix(v, want) }) {
			t.Errorf("not found: %s…", want)
		}
	}
	for _, v := range got {
		for _, allowed := range []string{"on " + mod + "booking/bookingtest", "on " + mod + "internal/plaintext", mod + "booking depends"} {
			if strings.Contains(v, allowed) {
				t.Errorf("found, but allowed: %s", v)
			}
		}
	}
}

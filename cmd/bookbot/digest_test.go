package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/config"
)

// mapEnv is a getenv over a map, for driving run in-process.
func mapEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// Plain http:// to another machine is refused unless
// BOOKBOT_ALLOW_INSECURE_HTTP=true, and then every command that loads the
// configuration says so on stderr, naming the variable. SLACK_API_URL is
// the insecure one here: -dry-run and audit never call Slack, so the
// commands still work against the local fake.
func TestCommandsWarnAboutPlainHTTP(t *testing.T) {
	t.Parallel()
	sb := bookingtest.NewServer(t)
	for _, args := range [][]string{{"digest", "-dry-run"}, {"audit"}} {
		for _, allow := range []bool{false, true} {
			name := strings.Join(args, " ")
			if allow {
				name += "/allowed"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				env := map[string]string{
					"BOOKING_BASE_URL":  sb.URL,
					"BOOKING_API_KEY":   sb.Key,
					"SLACK_API_URL":     "http://slack.internal/api/",
					"DIGEST_TIMEZONE":   "Europe/Berlin",
					"BOOKBOT_STATE_DIR": t.TempDir(),
				}
				if allow {
					env["BOOKBOT_ALLOW_INSECURE_HTTP"] = "true"
				}
				var stdout, stderr bytes.Buffer
				err := run(t.Context(), args, mapEnv(env), &stdout, &stderr)
				noSecrets(t, sb, nil, stdout.String(), stderr.String())
				if !allow {
					var ce *config.Error
					if !errors.As(err, &ce) || len(ce.Problems) != 1 || ce.Problems[0].Var != "SLACK_API_URL" {
						t.Fatalf("err = %v, want the one configuration problem SLACK_API_URL", err)
					}
					noSecrets(t, sb, nil, err.Error())
					return
				}
				if err != nil {
					t.Fatalf("%v: %v\n%s", args, err, stderr.String())
				}
				if got := stderr.String(); !strings.Contains(got, `"level":"WARN"`) || !strings.Contains(got, `SLACK_API_URL is plain http:// to slack.internal`) {
					t.Errorf("stderr has no warning naming SLACK_API_URL:\n%s", got)
				}
			})
		}
	}
}

package main

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
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

// `bookbot digest` against a booking API that accepts the connection and
// never answers gives up at digestReadTimeout, reads and retries together,
// says why, and exits non-zero; posting, the channel hears that the digest
// could not be built, and no digest is posted.
//
// Not parallel: it shortens digestReadTimeout for its subtests.
func TestDigestGivesUpOnAHungBookingAPI(t *testing.T) {
	saved := digestReadTimeout
	digestReadTimeout = 300 * time.Millisecond
	t.Cleanup(func() { digestReadTimeout = saved }) // after the subtests, unlike a defer

	const key = "hung_api_key_5521"
	var requests atomic.Int32
	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(hung.Close)
	t.Cleanup(func() { close(release) }) // first, so Close finds no handler waiting

	tests := []struct {
		name string
		args []string
		post bool
	}{
		{"dry run", []string{"digest", "-dry-run"}, false},
		{"posting", []string{"digest"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{
				"BOOKING_BASE_URL":  hung.URL,
				"BOOKING_API_KEY":   key,
				"DIGEST_TIMEZONE":   "Europe/Berlin",
				"BOOKBOT_STATE_DIR": t.TempDir(),
			}
			secrets := []string{key}
			var sl *slacktest.Server
			if tt.post {
				sl = slacktest.NewServer(t)
				sl.AddChannel(slacktest.Channel{ID: "C0DIGEST", Name: "team", Members: []string{slacktest.DefaultBotUserID}})
				env["SLACK_BOT_TOKEN"], env["SLACK_APP_TOKEN"], env["SLACK_API_URL"] = sl.BotToken(), sl.AppToken(), sl.APIURL
				env["DIGEST_CHANNEL"] = "C0DIGEST"
				secrets = append(secrets, sl.BotToken(), sl.AppToken())
			}

			var stdout, stderr bytes.Buffer
			err := run(t.Context(), tt.args, mapEnv(env), &stdout, &stderr)
			if err == nil || exitCode(err) == 0 {
				t.Fatalf("err = %v (exit %d), want a failure; %d requests\n%s", err, exitCode(err), requests.Load(), stderr.String())
			}
			if want := "the booking API did not answer within 300ms"; !strings.Contains(err.Error(), want) {
				t.Errorf("err = %q, want it to say %q", err, want)
			}
			for _, out := range []string{err.Error(), stdout.String(), stderr.String()} {
				for _, sec := range secrets {
					if strings.Contains(out, sec) {
						t.Errorf("a secret appears in the output: %q", out)
					}
				}
			}
			if tt.post {
				if digests, notices := digestPosts(sl, "C0DIGEST"); digests != 0 || notices != 1 {
					t.Errorf("%d digests and %d failure notices posted, want 0 and 1", digests, notices)
				}
			}
		})
	}
}

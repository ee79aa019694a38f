package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/store/bolt"
)

// Secrets some cases put in the environment instead of the working ones;
// they must not show up in the output either.
const (
	revokedKey    = "sandbox_revoked_key_5e1d07"
	wrongBotToken = "xoxb-revoked-bot-token-77f2"
	wrongAppToken = "xapp-revoked-app-token-91c4"
)

// checkEnv is a working configuration for `bookbot check`: a sandbox booking
// API, a Slack stand-in with a digest and a (private) review channel the bot
// is in, and a fresh state directory.
func checkEnv(t *testing.T, sb *bookingtest.Server, sl *slacktest.Server) map[string]string {
	t.Helper()
	sl.AddChannel(slacktest.Channel{ID: "C0DIGEST", Name: "team", Members: []string{"UADA", sl.BotUserID()}})
	sl.AddChannel(slacktest.Channel{ID: "G0REVIEW", Name: "review", Members: []string{sl.BotUserID()}, IsPrivate: true})
	return map[string]string{
		"BOOKING_BASE_URL":       sb.URL,
		"BOOKING_API_KEY":        sb.Key,
		"SLACK_BOT_TOKEN":        sl.BotToken(),
		"SLACK_APP_TOKEN":        sl.AppToken(),
		"SLACK_API_URL":          sl.APIURL,
		"BOOKBOT_ALLOWED_USERS":  "UADA",
		"DIGEST_CHANNEL":         "C0DIGEST",
		"BOOKBOT_REVIEW_CHANNEL": "G0REVIEW",
		"BOOKBOT_STATE_DIR":      filepath.Join(t.TempDir(), "state"),
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// setup changes the working environment and services into the case's.
		setup func(t *testing.T, e map[string]string, sb *bookingtest.Server, sl *slacktest.Server)
		// want are substrings of the output, in this order.
		want    []string
		wantErr string // "" when no check fails
		warns   bool   // a check warns
	}{
		{
			name: "everything works",
			want: []string{
				"✓ configuration: every variable is valid",
				"✓ allowed users: 1 (BOOKBOT_ALLOWED_USERS)",
				"• BOOKBOT_DRY_RUN is off",
				"• people's own calendars off: BOOKBOT_SECRET_KEY is not set",
				"✓ booking API key works: 6 event types, 4 bookable (key from BOOKING_API_KEY)",
				"✓ booking API's clock agrees with this machine's: 0s apart (up to 30s is fine)",
				"✓ bot token works: team Bookbot Test, bot bookbot",
				"✓ app token works: Socket Mode can connect",
				"✓ digest channel works: #team (C0DIGEST), the bot is a member and can read its history",
				"✓ review channel works: #review (G0REVIEW), the bot is a member",
				"✓ state directory ",
				"All 9 checks passed.",
			},
		},
		{
			name: "key from a file, dry run on, no channels",
			setup: func(t *testing.T, e map[string]string, sb *bookingtest.Server, _ *slacktest.Server) {
				path := filepath.Join(t.TempDir(), "booking.key")
				if err := os.WriteFile(path, []byte(sb.Key+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				delete(e, "BOOKING_API_KEY")
				delete(e, "DIGEST_CHANNEL")
				delete(e, "BOOKBOT_REVIEW_CHANNEL")
				e["BOOKING_API_KEY_FILE"] = path
				e["BOOKBOT_DRY_RUN"] = "true"
			},
			want: []string{
				"• BOOKBOT_DRY_RUN is on: no bookings or cancels are sent",
				"(key from BOOKING_API_KEY_FILE /", // the path follows
				"– digest off: DIGEST_CHANNEL is not set",
				"– review channel not set: the owner's calendar's outcomes that need a human go by direct message",
				"All 7 checks passed.",
			},
		},
		{
			name: "own calendars only",
			setup: func(_ *testing.T, e map[string]string, _ *bookingtest.Server, _ *slacktest.Server) {
				delete(e, "BOOKING_API_KEY")
				e["BOOKBOT_SECRET_KEY"] = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
			},
			want: []string{
				"✓ BOOKBOT_SECRET_KEY is set: people can connect their own calendars",
				"• own calendars only: BOOKING_API_KEY is not set",
				"✓ bot token works",
				"All 8 checks passed.",
			},
		},
		{
			name: "stored keys sealed under another secret key",
			setup: func(t *testing.T, e map[string]string, _ *bookingtest.Server, _ *slacktest.Server) {
				e["BOOKBOT_SECRET_KEY"] = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
				storeKeys(t, e["BOOKBOT_STATE_DIR"], map[string]string{
					"UONE": e["BOOKBOT_SECRET_KEY"],
					"UTWO": "ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA=",
				})
			},
			want: []string{
				"✗ BOOKBOT_SECRET_KEY opens 1 of 2 stored keys: 1 were sealed under another secret key",
				"→ set BOOKBOT_SECRET_KEY back to the secret key they were sealed with",
			},
			wantErr: "1 of 10 checks failed",
		},
		{
			name: "revoked booking key",
			setup: func(_ *testing.T, e map[string]string, _ *bookingtest.Server, _ *slacktest.Server) {
				e["BOOKING_API_KEY"] = revokedKey
			},
			want: []string{
				"✓ configuration",
				"✗ booking API refused the key from BOOKING_API_KEY (401): it is missing, revoked or invalid",
				"    → create a new key on the booking app's API keys page and put it in BOOKING_API_KEY",
				"✓ booking API's clock agrees with this machine's", // a refusal is dated too
				"✓ bot token works",
				"✓ state directory",
			},
			wantErr: "1 of 9 checks failed",
		},
		{
			name: "booking API unreachable",
			setup: func(_ *testing.T, e map[string]string, _ *bookingtest.Server, _ *slacktest.Server) {
				gone := httptest.NewServer(nil)
				gone.Close()
				e["BOOKING_BASE_URL"] = gone.URL
			},
			want: []string{
				"✗ booking API: GET /event-types:",
				"→ check BOOKING_BASE_URL (http://127.0.0.1:",
				"– booking API's clock: not checked, no answer carried a Date header",
				"✓ bot token works",
			},
			wantErr: "1 of 8 checks failed",
		},
		{
			// The API's clock is no part of bookbot's configuration, and
			// bookbot goes by it: a warning with what to do, not a failure.
			name: "booking API's clock 4 minutes ahead",
			setup: func(_ *testing.T, _ map[string]string, sb *bookingtest.Server, _ *slacktest.Server) {
				sb.SetNow(func() time.Time { return time.Now().Add(4*time.Minute + 2*time.Second) })
			},
			want: []string{
				"✓ booking API key works",
				"! booking API's clock differs from this machine's by 4m", // and some seconds
				"(it is ahead)\n",
				"    → check NTP on this machine (timedatectl) — bookbot judges whether a booking has started by the API's clock",
				"✓ bot token works",
				"✓ state directory",
				"No check failed; 1 of 9 warned (!).",
			},
			warns: true,
		},
		{
			name: "booking API's clock 5 minutes behind",
			setup: func(_ *testing.T, _ map[string]string, sb *bookingtest.Server, _ *slacktest.Server) {
				// Two seconds more, as above: the skew is measured to the
				// second, and a slow answer could make 5m read 4m59s.
				sb.SetNow(func() time.Time { return time.Now().Add(-5*time.Minute - 2*time.Second) })
			},
			want: []string{
				"! booking API's clock differs from this machine's by 5m", // and some seconds
				"(it is behind)\n",
				"    → check NTP on this machine",
				"No check failed; 1 of 9 warned (!).",
			},
			warns: true,
		},
		{
			name: "wrong bot token skips the channels",
			setup: func(_ *testing.T, e map[string]string, _ *bookingtest.Server, _ *slacktest.Server) {
				e["SLACK_BOT_TOKEN"] = wrongBotToken
			},
			want: []string{
				"✓ booking API key works",
				"✗ Slack refused the bot token from SLACK_BOT_TOKEN (auth.test: invalid_auth)",
				"→ copy the Bot User OAuth Token (xoxb-…)",
				"✓ app token works",
				"– digest channel C0DIGEST: not checked, the bot token does not work",
				"– review channel G0REVIEW: not checked, the bot token does not work",
				"✓ state directory",
			},
			wantErr: "1 of 7 checks failed",
		},
		{
			name: "wrong app token",
			setup: func(_ *testing.T, e map[string]string, _ *bookingtest.Server, _ *slacktest.Server) {
				e["SLACK_APP_TOKEN"] = wrongAppToken
			},
			want: []string{
				"✓ bot token works",
				"✗ Slack refused the app token from SLACK_APP_TOKEN (apps.connections.open: invalid_auth)",
				"→ generate an app-level token with the connections:write scope",
				"✓ digest channel works",
			},
			wantErr: "1 of 9 checks failed",
		},
		{
			name: "bot not in the digest channel",
			setup: func(_ *testing.T, e map[string]string, _ *bookingtest.Server, sl *slacktest.Server) {
				sl.AddChannel(slacktest.Channel{ID: "C0OUTSIDE", Name: "outside", Members: []string{"UADA"}})
				e["DIGEST_CHANNEL"] = "C0OUTSIDE"
			},
			want: []string{
				"✗ digest channel #outside (C0OUTSIDE): the bot is not a member, so it cannot post there",
				"    → /invite @bookbot in that channel",
				"✓ review channel works",
			},
			wantErr: "1 of 9 checks failed",
		},
		{
			name: "notice channels",
			setup: func(_ *testing.T, e map[string]string, _ *bookingtest.Server, sl *slacktest.Server) {
				sl.AddChannel(slacktest.Channel{ID: "C0NOTES", Name: "bookings", Members: []string{sl.BotUserID()}})
				sl.AddChannel(slacktest.Channel{ID: "C0INTROS", Name: "intros", Members: []string{"UADA"}})
				e["NOTIFY_CHANNEL"] = "C0NOTES"
				e["NOTIFY_ROUTES"] = "intro-call=C0INTROS"
			},
			want: []string{
				"✓ digest channel works",
				"✓ notice channel works: #bookings (C0NOTES), the bot is a member and can read its history",
				"✗ notice channel of intro-call #intros (C0INTROS): the bot is not a member, so it cannot post there",
				"    → /invite @bookbot in that channel",
				"✓ review channel works",
			},
			wantErr: "1 of 11 checks failed",
		},
		{
			name: "digest channel unknown",
			setup: func(_ *testing.T, e map[string]string, _ *bookingtest.Server, _ *slacktest.Server) {
				e["DIGEST_CHANNEL"] = "C0NOSUCH"
			},
			want: []string{
				"✗ digest channel C0NOSUCH (DIGEST_CHANNEL): conversations.info: channel_not_found",
				"→ check the channel ID in DIGEST_CHANNEL",
			},
			wantErr: "1 of 9 checks failed",
		},
		{
			name: "app lacks the scope to read channels' history",
			setup: func(_ *testing.T, e map[string]string, _ *bookingtest.Server, sl *slacktest.Server) {
				sl.AddChannel(slacktest.Channel{ID: "C0NOTES", Name: "bookings", Members: []string{sl.BotUserID()}})
				e["NOTIFY_CHANNEL"] = "C0NOTES"
				sl.FailNext("conversations.history", "missing_scope")
				sl.FailNext("conversations.history", "missing_scope")
			},
			want: []string{
				"✗ digest channel #team (C0DIGEST): conversations.history: missing_scope, so a post cut short cannot be looked for before it is posted again",
				"→ add the channels:history bot scope (and groups:history for a private channel) to the app",
				"✗ notice channel #bookings (C0NOTES): conversations.history: missing_scope, so a post cut short cannot be looked for before it is posted again",
				"→ add the channels:history bot scope (and groups:history for a private channel) to the app",
				"✓ review channel works",
			},
			wantErr: "2 of 10 checks failed",
		},
		{
			name: "app lacks the scope to read channels",
			setup: func(_ *testing.T, _ map[string]string, _ *bookingtest.Server, sl *slacktest.Server) {
				sl.FailNext("conversations.info", "missing_scope") // the digest channel's; the review channel's works
			},
			want: []string{
				"✗ digest channel C0DIGEST (DIGEST_CHANNEL): conversations.info: missing_scope",
				"→ add the channels:read bot scope (and groups:read for a private channel) to the app",
				"✓ review channel works",
			},
			wantErr: "1 of 9 checks failed",
		},
		{
			name: "no allow-list is a failure, not a reason to stop",
			setup: func(_ *testing.T, e map[string]string, _ *bookingtest.Server, _ *slacktest.Server) {
				delete(e, "BOOKBOT_ALLOWED_USERS")
			},
			want: []string{
				"✓ configuration",
				"✗ allowed users: `bookbot run` will not start without them",
				"    - BOOKBOT_ALLOWED_USERS is required",
				"→ set BOOKBOT_ALLOWED_USERS",
				"✓ booking API key works",
				"✓ app token works",
				"✓ state directory",
			},
			wantErr: "1 of 9 checks failed",
		},
		{
			name: "state directory under a file",
			setup: func(t *testing.T, e map[string]string, _ *bookingtest.Server, _ *slacktest.Server) {
				file := filepath.Join(t.TempDir(), "file")
				if err := os.WriteFile(file, nil, 0o600); err != nil {
					t.Fatal(err)
				}
				e["BOOKBOT_STATE_DIR"] = filepath.Join(file, "state")
			},
			want: []string{
				"✓ review channel works",
				"✗ state directory /", // the path follows
				"cannot be created: not a directory",
				"→ make it writable by the user bookbot runs as",
			},
			wantErr: "1 of 9 checks failed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sb := bookingtest.NewServer(t)
			sl := slacktest.NewServer(t)
			e := checkEnv(t, sb, sl)
			if tt.setup != nil {
				tt.setup(t, e, sb, sl)
			}
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), []string{"check"}, func(k string) string { return e[k] }, &stdout, &stderr)
			out := stdout.String()

			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("err = %v, want nil\n%s", err, out)
			case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr):
				t.Errorf("err = %v, want %q\n%s", err, tt.wantErr, out)
			}
			if tt.wantErr == "" && !tt.warns {
				assertAllPassed(t, out)
			}
			assertInOrder(t, out, tt.want)
			secrets := []string{sb.Key, sl.BotToken(), sl.AppToken(), revokedKey, wrongBotToken, wrongAppToken}
			var errText string
			if err != nil {
				errText = err.Error()
			}
			for _, s := range secrets {
				if strings.Contains(out+stderr.String()+errText, s) {
					t.Errorf("a secret appears in the output:\n%s\n%s", out, stderr.String())
				}
			}
			assertOnlyReads(t, sb, sl)
		})
	}
}

// storeKeys stores a key for each user in the state directory dir, sealed
// under that user's secret key.
func storeKeys(t *testing.T, dir string, secrets map[string]string) {
	t.Helper()
	db, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	key, _ := booking.NewKey("sandbox_stored_key_123456")
	for user, secret := range secrets {
		raw, err := account.ParseSecret(secret)
		if err != nil {
			t.Fatal(err)
		}
		sealer, err := account.NewSealer(raw)
		if err != nil {
			t.Fatal(err)
		}
		sealed, err := sealer.Seal(user, key)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Accounts().Put(t.Context(), account.Account{User: user, Sealed: sealed, ConnectedAt: time.Now(), State: account.OK}); err != nil {
			t.Fatal(err)
		}
	}
}

// assertAllPassed checks that a passing run shows no failure and that the
// summary counts every ✓.
func assertAllPassed(t *testing.T, out string) {
	t.Helper()
	passes := 0
	for line := range strings.Lines(out) {
		switch {
		case strings.HasPrefix(line, "✓ "):
			passes++
		case strings.HasPrefix(line, "✗ "), strings.HasPrefix(line, "    → "):
			t.Errorf("a passing check shows a failure: %q", line)
		}
	}
	if want := "All " + strconv.Itoa(passes) + " checks passed.\n"; !strings.HasSuffix(out, want) {
		t.Errorf("%d lines passed, but the summary is not %q:\n%s", passes, want, out)
	}
}

// assertInOrder checks that each of want occurs in out after the one before.
func assertInOrder(t *testing.T, out string, want []string) {
	t.Helper()
	rest := out
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Errorf("output lacks %q (in this order):\n%s", w, out)
			return
		}
		rest = rest[i+len(w):]
	}
}

// assertOnlyReads checks that check only looked: no booking API writes, no
// Slack posts, and no Socket Mode connection.
func assertOnlyReads(t *testing.T, sb *bookingtest.Server, sl *slacktest.Server) {
	t.Helper()
	for _, r := range sb.Requests() {
		if r.Method != "GET" {
			t.Errorf("check sent %s %s to the booking API", r.Method, r.Path)
		}
	}
	reads := []string{"auth.test", "apps.connections.open", "conversations.info", "conversations.history"}
	for _, c := range sl.Calls() {
		if !slices.Contains(reads, c.Method) {
			t.Errorf("check called Slack's %s", c.Method)
		}
	}
	if n := sl.Connections(); n != 0 {
		t.Errorf("check opened %d Socket Mode connections", n)
	}
	if m := sl.Messages(); len(m) != 0 {
		t.Errorf("check made %d messages appear in Slack", len(m))
	}
}

// TestCheckBookingRedirect puts a redirecting front before a working
// sandbox: the check must fail, naming the redirect, and the sandbox must
// not have been asked, so the key never reached it.
func TestCheckBookingRedirect(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			t.Parallel()
			sb := bookingtest.NewServer(t)
			sl := slacktest.NewServer(t)
			e := checkEnv(t, sb, sl)
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Location", sb.URL+r.URL.Path+"?session=front-secret")
				w.WriteHeader(status)
			}))
			t.Cleanup(front.Close)
			e["BOOKING_BASE_URL"] = front.URL

			var stdout, stderr bytes.Buffer
			err := run(t.Context(), []string{"check"}, func(k string) string { return e[k] }, &stdout, &stderr)
			out := stdout.String()
			if err == nil || err.Error() != "1 of 9 checks failed" {
				t.Errorf("err = %v, want 1 of 9 checks failed\n%s", err, out)
			}
			assertInOrder(t, out, []string{
				"✓ configuration",
				fmt.Sprintf("✗ booking API redirects GET /event-types (%d %s) to %s: bookbot follows no redirect, so the key from BOOKING_API_KEY could not be checked",
					status, http.StatusText(status), sb.URL),
				"    → set BOOKING_BASE_URL (" + front.URL + ") to the final address",
				"✓ bot token works",
				"✓ state directory",
			})
			if reqs := sb.Requests(); len(reqs) != 0 {
				t.Errorf("the redirect was followed: the sandbox got %d requests, the first %s %s", len(reqs), reqs[0].Method, reqs[0].Path)
			}
			for _, s := range []string{sb.Key, "front-secret", "/api/v1/event-types?"} {
				if strings.Contains(out+stderr.String(), s) {
					t.Errorf("%q appears in the output:\n%s\n%s", s, out, stderr.String())
				}
			}
		})
	}
}

// A Slack that does not answer is not a Slack that refused the token: check
// says it could not check, and why. (It shortens a package variable, so it
// does not run in parallel.)
func TestCheckSlackNotAnswering(t *testing.T) {
	shorten(t, &slackCallTimeout, 200*time.Millisecond)
	sb := bookingtest.NewServer(t)
	sl := slacktest.NewServer(t)
	t.Cleanup(sl.Hold("auth.test"))
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"check"}, mapEnv(checkEnv(t, sb, sl)), &stdout, &stderr)
	out := stdout.String()
	if err == nil || !strings.Contains(out, "✗ the bot token from SLACK_BOT_TOKEN could not be checked: Slack did not answer auth.test within 200ms") {
		t.Errorf("check = %v:\n%s", err, out)
	}
	if strings.Contains(out, "refused the bot token") {
		t.Errorf("check claims the token was refused:\n%s", out)
	}
	noSecrets(t, sb, sl, out, stderr.String())
}

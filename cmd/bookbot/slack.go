package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/cmd/internal/app"
)

// slackCallTimeout bounds every Slack Web API call (app.SlackCallTimeout).
// It matches `bookbot check`'s bound on each check. Tests shorten it.
var slackCallTimeout = app.SlackCallTimeout

// authTestError says why auth.test failed at start-up: Slack refused the
// bot token (an error answer), or Slack gave no answer, which no token fixes.
func authTestError(err error, timeout time.Duration) error {
	var se slack.SlackErrorResponse
	var rl *slack.RateLimitedError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("slack refused SLACK_BOT_TOKEN (auth.test: %s); check the bot token and that the app is installed", se.Err)
	case errors.As(err, &rl):
		return fmt.Errorf("slack rate-limited auth.test (retry after %v); start bookbot again later", rl.RetryAfter)
	case timedOut(err):
		return fmt.Errorf("slack did not answer auth.test within %v; check SLACK_API_URL and the network", timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the URL is SLACK_API_URL, said in the advice
	}
	var sc slack.StatusCodeError
	if errors.As(err, &sc) {
		return fmt.Errorf("slack answered auth.test with HTTP %d; check SLACK_API_URL", sc.Code)
	}
	return fmt.Errorf("slack could not be reached for auth.test (%v); check SLACK_API_URL and the network", err)
}

// timedOut says whether err is a deadline passing. net/http says so in
// several ways, depending on where the request was when it passed.
func timedOut(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// slackReason is Slack's short error code, which never carries a token.
func slackReason(err error) string {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err
	}
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return "rate limited"
	}
	return "no answer: " + err.Error()
}

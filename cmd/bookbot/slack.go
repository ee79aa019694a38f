package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/slack-go/slack"
)

// slackCallTimeout bounds every Slack Web API call, whatever its context:
// without it a Slack that accepts a connection and never answers hangs
// auth.test at start-up and apps.connections.open on a reconnect for good.
// It matches `bookbot check`'s bound on each check. The Socket Mode
// WebSocket is not cut by it: slack-go dials that with a dialer of its own.
// Tests shorten it.
var slackCallTimeout = 10 * time.Second

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

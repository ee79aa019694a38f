package app

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/slack-go/slack"
)

// slackViews is the Slack client the bot is given: slack-go's, except that
// views.open and views.update read no more of Slack's answer than the bot
// uses, the view's ID. slack-go decodes the whole view Slack sends back
// into Block Kit values; for a booking form that was most of the CPU a
// burst of people opening it cost, competing with the opens still to be
// made. Requests, checks and errors are slack-go's, so the bot sees the
// same answers.
type slackViews struct {
	*slack.Client
	http  *http.Client
	api   string // SLACK_API_URL, ending in "/"
	token string
}

// viewAnswer is the part of a views.open or views.update answer read.
type viewAnswer struct {
	slack.SlackResponse
	View struct {
		ID string `json:"id"`
	} `json:"view"`
}

// OpenViewContext is views.open, as slack-go makes it.
func (s slackViews) OpenViewContext(ctx context.Context, triggerID string, view slack.ModalViewRequest) (*slack.ViewResponse, error) {
	if triggerID == "" {
		return nil, slack.ErrParametersMissing
	}
	if !slack.ValidateUniqueBlockID(view) {
		return nil, slack.ErrBlockIDNotUnique
	}
	return s.post(ctx, "views.open", struct {
		TriggerID string                 `json:"trigger_id"`
		View      slack.ModalViewRequest `json:"view"`
	}{triggerID, view})
}

// UpdateViewContext is views.update, as slack-go makes it.
func (s slackViews) UpdateViewContext(ctx context.Context, view slack.ModalViewRequest, externalID, hash, viewID string) (*slack.ViewResponse, error) {
	if externalID == "" && viewID == "" {
		return nil, slack.ErrParametersMissing
	}
	return s.post(ctx, "views.update", struct {
		View       slack.ModalViewRequest `json:"view"`
		ExternalID string                 `json:"external_id,omitempty"`
		Hash       string                 `json:"hash,omitempty"`
		ViewID     string                 `json:"view_id,omitempty"`
	}{view, externalID, hash, viewID})
}

// post sends body to method and reads the answer's status and view ID,
// with slack-go's errors: a RateLimitedError for a 429 that says when to
// retry, a StatusCodeError for any other status but 200, and a
// SlackErrorResponse for "ok": false.
func (s slackViews) post(ctx context.Context, method string, body any) (*slack.ViewResponse, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.api+method, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if retry := resp.Header.Get("Retry-After"); resp.StatusCode == http.StatusTooManyRequests && retry != "" {
		secs, err := strconv.ParseInt(retry, 10, 64)
		if err != nil {
			return nil, err
		}
		return nil, &slack.RateLimitedError{RetryAfter: time.Duration(secs) * time.Second}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, slack.StatusCodeError{Code: resp.StatusCode, Status: resp.Status}
	}
	var a viewAnswer
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		return nil, err
	}
	v := &slack.ViewResponse{SlackResponse: a.SlackResponse}
	v.ID = a.View.ID
	return v, a.Err()
}

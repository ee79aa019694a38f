package slacktest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Workflow Builder custom steps ("functions"). RunFunction is a workflow
// reaching the app's step: the app gets function_executed with the step's
// inputs, its function_execution_id and a bot_access_token that works
// like the bot token while the step runs and is revoked once it ends.
// The app ends it with functions.completeSuccess, whose outputs Slack
// checks against the step's output parameters, or functions.completeError;
// a step ends once (execution_not_in_running_state after that).

// Function is a custom step as an app's manifest declares it.
type Function struct {
	CallbackID string
	Title      string
	Inputs     []Param
	Outputs    []Param
}

// Param is one of a step's input or output parameters. Type is a Slack
// type: string, integer, number, boolean, slack#/types/user_id,
// slack#/types/channel_id, slack#/types/timestamp, or array (Items the
// type of its items).
type Param struct {
	Name     string
	Type     string
	Items    string
	Required bool
}

// StepRun is one run of a step.
type StepRun struct {
	ExecutionID string
	Function    string // its callback_id
	Inputs      map[string]any
	// State is "running", then "completed" (completeSuccess) or "failed"
	// (completeError).
	State   string
	Outputs map[string]any
	Error   string
	Ended   time.Time
	// EnvelopeID is the function_executed envelope's, for Redeliver.
	EnvelopeID string
}

type stepRun struct {
	run   StepRun
	fn    Function
	token string
	event map[string]any // its function_executed, for SendStepAgain
}

func copyRun(r StepRun) StepRun {
	r.Inputs = maps.Clone(r.Inputs)
	r.Outputs = maps.Clone(r.Outputs)
	return r
}

var (
	userIDRE    = regexp.MustCompile(`^[UW][A-Z0-9]+$`)
	channelIDRE = regexp.MustCompile(`^[CGD][A-Z0-9]+$`)
)

// checkParam reports what is wrong with v as a value of p, "" when nothing.
func checkParam(p Param, v any) string {
	typ := p.Type
	if typ == "array" {
		list, isList := v.([]any)
		if !isList {
			return fmt.Sprintf("%s must be an array", p.Name)
		}
		for _, item := range list {
			if why := checkParam(Param{Name: p.Name + "[]", Type: p.Items}, item); why != "" {
				return why
			}
		}
		return ""
	}
	switch typ {
	case "string":
		if _, isStr := v.(string); !isStr {
			return fmt.Sprintf("%s must be a string", p.Name)
		}
	case "integer", "slack#/types/timestamp":
		f, isNum := v.(float64)
		if !isNum || f != math.Trunc(f) {
			return fmt.Sprintf("%s must be an integer", p.Name)
		}
	case "number":
		if _, isNum := v.(float64); !isNum {
			return fmt.Sprintf("%s must be a number", p.Name)
		}
	case "boolean":
		if _, isBool := v.(bool); !isBool {
			return fmt.Sprintf("%s must be a boolean", p.Name)
		}
	case "slack#/types/user_id":
		if s, _ := v.(string); !userIDRE.MatchString(s) {
			return fmt.Sprintf("%s must be a user ID", p.Name)
		}
	case "slack#/types/channel_id":
		if s, _ := v.(string); !channelIDRE.MatchString(s) {
			return fmt.Sprintf("%s must be a channel ID", p.Name)
		}
	}
	return ""
}

// checkParams checks values against params as Slack checks a step's
// inputs or outputs: every required one given, none undeclared, each of
// its type.
func checkParams(params []Param, values map[string]any) []string {
	var msgs []string
	for _, p := range params {
		v, given := values[p.Name]
		switch {
		case !given || v == nil:
			if p.Required {
				msgs = append(msgs, fmt.Sprintf("%s is required", p.Name))
			}
		default:
			if why := checkParam(p, v); why != "" {
				msgs = append(msgs, why)
			}
		}
	}
	for name := range values {
		if !slices.ContainsFunc(params, func(p Param) bool { return p.Name == name }) {
			msgs = append(msgs, fmt.Sprintf("%s is not a parameter of the step", name))
		}
	}
	slices.Sort(msgs)
	return msgs
}

// RunFunction is a workflow reaching the app's step f with inputs (as
// JSON gives them: numbers are float64, arrays []any): the app gets
// function_executed, and RunFunction returns the run once it is acked.
// Inputs that Workflow Builder would not let through (a required one
// missing, one of another type) are refused before anything is sent.
func (s *Server) RunFunction(ctx context.Context, f Function, inputs map[string]any, opts ...DeliverOption) (StepRun, error) {
	in := map[string]any{}
	if raw, err := json.Marshal(inputs); err != nil || json.Unmarshal(raw, &in) != nil {
		return StepRun{}, fmt.Errorf("slacktest: the step's inputs are not JSON: %v", err)
	}
	if msgs := checkParams(f.Inputs, in); len(msgs) > 0 {
		return StepRun{}, fmt.Errorf("%w: Workflow Builder would not run %s with these inputs: %s", ErrInvalidAction, f.CallbackID, strings.Join(msgs, "; "))
	}
	s.mu.Lock()
	id := fmt.Sprintf("Fx%010d", s.nextLocked())
	r := &stepRun{run: StepRun{ExecutionID: id, Function: f.CallbackID, Inputs: in, State: "running"}, fn: f, token: "xwfp-" + randomHex(32)}
	s.steps[id] = r
	params := func(ps []Param) []any {
		var out []any
		for _, p := range ps {
			m := map[string]any{"type": p.Type, "name": p.Name, "title": p.Name, "is_required": p.Required}
			if p.Items != "" {
				m["items"] = map[string]any{"type": p.Items}
			}
			out = append(out, m)
		}
		return out
	}
	ev := map[string]any{
		"type": "function_executed",
		"function": map[string]any{
			"id": "Fn" + randomHex(8), "callback_id": f.CallbackID, "title": f.Title, "type": "app",
			"input_parameters": params(f.Inputs), "output_parameters": params(f.Outputs),
			"app_id": s.opts.AppID, "date_created": 1700000000, "date_updated": 1700000000, "date_deleted": 0,
		},
		"inputs":                in,
		"function_execution_id": id,
		"workflow_execution_id": fmt.Sprintf("Wx%010d", s.nextLocked()),
		"bot_access_token":      r.token,
	}
	r.event = ev
	run := copyRun(r.run)
	s.notifyLocked()
	s.mu.Unlock()
	ack, err := s.SendEvent(ctx, ev, opts...)
	run.EnvelopeID = ack.EnvelopeID
	s.mu.Lock()
	r.run.EnvelopeID = ack.EnvelopeID
	s.mu.Unlock()
	return run, err
}

// SendStepAgain sends a run's function_executed once more, as a new
// envelope with a new event_id: what an app meets when Slack, having seen
// no ack, sends the event again after the app's memory of envelopes has
// let it go. It returns the new envelope's ack.
func (s *Server) SendStepAgain(ctx context.Context, executionID string, opts ...DeliverOption) (Ack, error) {
	s.mu.Lock()
	r, found := s.steps[executionID]
	var ev map[string]any
	if found {
		ev = maps.Clone(r.event)
	}
	s.mu.Unlock()
	if !found {
		return Ack{}, fmt.Errorf("%w: no run %s", ErrInvalidAction, executionID)
	}
	delete(ev, "event_ts")
	return s.SendEvent(ctx, ev, opts...)
}

// Step is a run of a step as it is now.
func (s *Server) Step(executionID string) (StepRun, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, found := s.steps[executionID]
	if !found {
		return StepRun{}, false
	}
	return copyRun(r.run), true
}

// WaitStepEnded blocks until the run has ended (completed or failed) and
// returns it, or until ctx is done.
func (s *Server) WaitStepEnded(ctx context.Context, executionID string) (StepRun, error) {
	var found StepRun
	err := s.waitFor(ctx, func() bool {
		r, ok := s.steps[executionID]
		if !ok || r.run.State == "running" {
			return false
		}
		found = copyRun(r.run)
		return true
	})
	return found, err
}

// stepOfToken is the running step whose bot_access_token tok is.
func (s *Server) stepOfToken(tok string) *stepRun {
	if !strings.HasPrefix(tok, "xwfp-") {
		return nil
	}
	for _, r := range s.steps {
		if r.token == tok && r.run.State == "running" {
			return r
		}
	}
	return nil
}

// endStepLocked checks that the run named in q can end, and returns it.
func (s *Server) endStepLocked(q *request) (*stepRun, map[string]any) {
	id := q.str("function_execution_id")
	if id == "" {
		return nil, apiError("invalid_arguments")
	}
	r, found := s.steps[id]
	if !found {
		return nil, apiError("function_execution_not_found")
	}
	if r.run.State != "running" {
		return nil, apiError("execution_not_in_running_state")
	}
	return r, nil
}

func (s *Server) functionsCompleteSuccessLocked(q *request) map[string]any {
	r, errResp := s.endStepLocked(q)
	if errResp != nil {
		return errResp
	}
	raw := q.json("outputs")
	outputs := map[string]any{}
	if len(raw) > 0 && json.Unmarshal(raw, &outputs) != nil {
		return apiError("invalid_arguments")
	}
	if msgs := checkParams(r.fn.Outputs, outputs); len(msgs) > 0 {
		return apiErrorMessages("parameter_validation_failed", msgs)
	}
	r.run.State, r.run.Outputs, r.run.Ended = "completed", outputs, s.now()
	return ok(nil)
}

func (s *Server) functionsCompleteErrorLocked(q *request) map[string]any {
	r, errResp := s.endStepLocked(q)
	if errResp != nil {
		return errResp
	}
	msg := q.str("error")
	if msg == "" {
		return apiError("invalid_arguments")
	}
	r.run.State, r.run.Error, r.run.Ended = "failed", msg, s.now()
	return ok(nil)
}

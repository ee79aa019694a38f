package main

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bookbot/bookbot/bot/slacktest"
)

// slackManifest is deploy/slack-app-manifest.yaml, flattened.
func slackManifest(t *testing.T) map[string]string {
	t.Helper()
	return flatYAML(t, readDeploy(t, "slack-app-manifest.yaml"))
}

// listed are the values of the list at path, in order.
func listed(m map[string]string, path string) []string {
	var out []string
	for i := 0; ; i++ {
		v, ok := m[path+"["+strconv.Itoa(i)+"]"]
		if !ok {
			return out
		}
		out = append(out, v)
	}
}

// manifestStep is the "Offer times" step as the manifest declares it, for
// the stand-in to run and to hold its outputs to.
func manifestStep(t *testing.T) slacktest.Function {
	t.Helper()
	m := slackManifest(t)
	const fn = "functions.offer_times_step"
	f := slacktest.Function{CallbackID: "offer_times_step", Title: m[fn+".title"]}
	params := func(kind string) []slacktest.Param {
		var names []string
		prefix := fn + "." + kind + "."
		for k := range m {
			if rest, ok := strings.CutPrefix(k, prefix); ok {
				if name, _, _ := strings.Cut(rest, "."); !slices.Contains(names, name) {
					names = append(names, name)
				}
			}
		}
		slices.Sort(names)
		var out []slacktest.Param
		for _, n := range names {
			p := prefix + n + "."
			out = append(out, slacktest.Param{Name: n, Type: m[p+"type"], Items: m[p+"items.type"], Required: m[p+"is_required"] == "true"})
		}
		return out
	}
	f.Inputs, f.Outputs = params("input_parameters"), params("output_parameters")
	return f
}

// The manifest declares what the contract names and what bookbot answers:
// the scopes and events of unfurls and of the step, the unfurl domain,
// the message shortcut, the step's inputs and outputs, and the settings
// a step needs.
func TestSlackAppManifest(t *testing.T) {
	t.Parallel()
	m := slackManifest(t)
	scopes := listed(m, "oauth_config.scopes.bot")
	for _, s := range []string{"commands", "chat:write", "users:read", "users:read.email", "links:read", "links:write", "channels:read", "groups:read", "channels:history", "groups:history"} {
		if !slices.Contains(scopes, s) {
			t.Errorf("bot scope %s is missing: %v", s, scopes)
		}
	}
	events := listed(m, "settings.event_subscriptions.bot_events")
	for _, e := range []string{"app_home_opened", "user_change", "link_shared", "function_executed"} {
		if !slices.Contains(events, e) {
			t.Errorf("bot event %s is missing: %v", e, events)
		}
	}
	if d := listed(m, "features.unfurl_domains"); len(d) == 0 || len(d) > 5 || strings.Contains(d[0], "/") {
		t.Errorf("unfurl domains %v: one to five domains, without a path", d)
	}
	shortcuts := map[string]string{}
	for i := 0; ; i++ {
		p := "features.shortcuts[" + strconv.Itoa(i) + "]."
		id, ok := m[p+"callback_id"]
		if !ok {
			break
		}
		shortcuts[id] = m[p+"type"]
		if n := len([]rune(m[p+"name"])); n == 0 || n > 24 {
			t.Errorf("shortcut %s's name %q: Slack takes 1 to 24 characters", id, m[p+"name"])
		}
	}
	if shortcuts["book_meeting"] != "global" || shortcuts["offer_times"] != "message" {
		t.Errorf("shortcuts %v: want book_meeting global and offer_times a message shortcut", shortcuts)
	}
	for k, want := range map[string]string{
		"settings.org_deploy_enabled":              "true",
		"settings.function_runtime":                "remote",
		"settings.socket_mode_enabled":             "true",
		"settings.interactivity.is_enabled":        "true",
		"features.slash_commands[0].command":       "/booking",
		"functions.offer_times_step.title":         "Offer times",
		"features.app_home.home_tab_enabled":       "true",
		"features.slash_commands[0].should_escape": "true",
	} {
		if m[k] != want {
			t.Errorf("%s = %q, want %q", k, m[k], want)
		}
	}
	step := manifestStep(t)
	want := slacktest.Function{CallbackID: "offer_times_step", Title: "Offer times",
		Inputs: []slacktest.Param{
			{Name: "channel_id", Type: "slack#/types/channel_id", Required: true},
			{Name: "count", Type: "integer"},
			{Name: "event_type", Type: "string", Required: true},
			{Name: "people", Type: "array", Items: "slack#/types/user_id"},
		},
		Outputs: []slacktest.Param{
			{Name: "attendee", Type: "slack#/types/user_id", Required: true},
			{Name: "booking_id", Type: "string", Required: true},
			{Name: "start_time", Type: "slack#/types/timestamp", Required: true},
		},
	}
	if !slices.Equal(step.Inputs, want.Inputs) || !slices.Equal(step.Outputs, want.Outputs) || step.Title != want.Title {
		t.Errorf("the step:\n %+v\nwant\n %+v", step, want)
	}
	for k, v := range m {
		if strings.HasPrefix(k, "functions.offer_times_step.") && strings.HasSuffix(k, ".title") && v == "" {
			t.Errorf("%s is empty: Workflow Builder shows it", k)
		}
	}
}

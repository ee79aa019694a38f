package main

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/config"
)

// repoRoot is the build context of deploy/Dockerfile, seen from this
// package's directory (where go test runs).
const repoRoot = "../.."

func readDeploy(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "deploy", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDockerfileBuildRunsAndChecks builds bookbot exactly as the image does
// and runs the result: it is static, carries the version it was given, and
// its `check` passes and fails as it should.
func TestDockerfileBuildRunsAndChecks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds bookbot; not with -short")
	}
	t.Parallel()
	const version = "v9.8.7-deploytest"
	buildEnv, args := dockerGoBuild(t, readDeploy(t, "Dockerfile"))
	if !slices.Contains(buildEnv, "CGO_ENABLED=0") {
		t.Errorf("go build runs with %q, want CGO_ENABLED=0 among them", buildEnv)
	}
	if !slices.Contains(args, "-trimpath") {
		t.Errorf("go build %q lacks -trimpath", args)
	}

	bin := filepath.Join(t.TempDir(), "bookbot")
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "${VERSION}", version)
		if i > 0 && args[i-1] == "-o" {
			args[i] = bin
		}
	}
	build := exec.CommandContext(t.Context(), "go", append([]string{"build"}, args...)...)
	build.Dir = repoRoot
	build.Env = append(os.Environ(), buildEnv...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build %q: %v\n%s", args, err, out)
	}
	assertStatic(t, bin)
	assertBuildSettings(t, bin)

	out, err := exec.CommandContext(t.Context(), bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "bookbot "+version+" ") {
		t.Errorf("bookbot version = %q, %v; want it to start %q", out, err, "bookbot "+version+" ")
	}

	sb := bookingtest.NewServer(t)
	sl := slacktest.NewServer(t)
	sl.AddChannel(slacktest.Channel{ID: "C0DIGEST", Name: "team", Members: []string{sl.BotUserID()}})
	good := env(sb, sl, "DIGEST_CHANNEL=C0DIGEST", "BOOKBOT_STATE_DIR="+t.TempDir())
	for _, tt := range []struct {
		name     string
		env      []string
		wantExit int
		want     string
	}{
		{"good configuration", good, 0, "All 8 checks passed."},
		{"revoked key", append(slices.Clone(good), "BOOKING_API_KEY="+revokedKey), 1, "✗ booking API refused the key"},
	} {
		cmd := exec.CommandContext(t.Context(), bin, "check")
		cmd.Env = tt.env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		exit := 0
		var exitErr *exec.ExitError
		switch {
		case errors.As(err, &exitErr):
			exit = exitErr.ExitCode()
		case err != nil:
			t.Fatalf("%s: %v", tt.name, err)
		}
		if exit != tt.wantExit || !strings.Contains(stdout.String(), tt.want) {
			t.Errorf("%s: exit %d, want %d with %q in\n%s%s", tt.name, exit, tt.wantExit, tt.want, stdout.String(), stderr.String())
		}
		noSecrets(t, sb, sl, stdout.String(), stderr.String())
		if strings.Contains(stdout.String()+stderr.String(), revokedKey) {
			t.Errorf("%s: the key appears in the output", tt.name)
		}
	}
}

// dockerGoBuild finds the Dockerfile's one RUN line with go build and
// returns the variables it sets for go and go build's arguments.
func dockerGoBuild(t *testing.T, dockerfile string) (env, args []string) {
	t.Helper()
	var found [][]string
	for line := range strings.Lines(strings.ReplaceAll(dockerfile, "\\\n", " ")) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "RUN ")
		if !ok || !strings.Contains(rest, "go build") {
			continue
		}
		words, err := shellWords(rest)
		if err != nil {
			t.Fatalf("Dockerfile: %v: %s", err, line)
		}
		found = append(found, words)
	}
	if len(found) != 1 {
		t.Fatalf("Dockerfile has %d RUN lines with go build, want exactly 1", len(found))
	}
	words := found[0]
	at := slices.IndexFunc(words[:len(words)-1], func(w string) bool { return w == "go" })
	if at < 0 || words[at+1] != "build" {
		t.Fatalf("Dockerfile: no `go build` command in %q", words)
	}
	for i := at - 1; i >= 0 && strings.Contains(words[i], "=") && !strings.HasPrefix(words[i], "-"); i-- {
		env = append(env, words[i])
	}
	args = words[at+2:]
	if end := slices.IndexFunc(args, func(w string) bool { return w == "&&" || w == ";" || w == "||" }); end >= 0 {
		args = args[:end]
	}
	return env, args
}

// shellWords splits a shell command line into words, honouring single and
// double quotes and backslashes. Variables are left as written.
func shellWords(s string) ([]string, error) {
	var (
		words []string
		word  strings.Builder
		in    bool // inside a word
		quote rune
	)
	for i := 0; i < len(s); i++ {
		c := rune(s[i])
		switch {
		case quote == '\'' && c == '\'', quote == '"' && c == '"':
			quote = 0
		case quote == '"' && c == '\\' && i+1 < len(s) && strings.ContainsRune(`"\$`, rune(s[i+1])):
			i++
			word.WriteByte(s[i])
		case quote != 0:
			word.WriteRune(c)
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, word.String())
				word.Reset()
				in = false
			}
		default:
			word.WriteRune(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, errors.New("unterminated quote")
	}
	if in {
		words = append(words, word.String())
	}
	return words, nil
}

// assertStatic checks that the binary needs no dynamic loader, so it runs in
// distroless/static, which has no libc, and is stripped (-s -w).
func assertStatic(t *testing.T, bin string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		return // the image is Linux; other hosts build other formats
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("bookbot has a %v program header: it is dynamically linked", p.Type)
		}
	}
	for _, name := range []string{".symtab", ".debug_info"} {
		if f.Section(name) != nil {
			t.Errorf("bookbot has a %s section: it was not built with -s -w", name)
		}
	}
}

// assertBuildSettings checks what the binary says about its own build.
func assertBuildSettings(t *testing.T, bin string) {
	t.Helper()
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if settings["CGO_ENABLED"] != "0" || settings["-trimpath"] != "true" {
		t.Errorf("build settings CGO_ENABLED=%q -trimpath=%q, want 0 and true", settings["CGO_ENABLED"], settings["-trimpath"])
	}
	// -trimpath keeps -ldflags out of the build info (it may hold paths):
	// `bookbot version` shows main.version, assertStatic the -s -w.
}

func TestDockerfileRuntimeStage(t *testing.T) {
	t.Parallel()
	lines := map[string]bool{}
	for line := range strings.Lines(readDeploy(t, "Dockerfile")) {
		lines[strings.TrimSpace(line)] = true
	}
	for _, want := range []string{
		"FROM golang:1.26 AS build",
		"FROM gcr.io/distroless/static-debian12:nonroot",
		"USER nonroot",
		`ENTRYPOINT ["/bookbot"]`,
		`CMD ["run"]`,
		"ENV BOOKBOT_STATE_DIR=/var/lib/bookbot",
		"ENV BOOKBOT_HTTP_ADDR=0.0.0.0:8080",
		"VOLUME /var/lib/bookbot",
		"EXPOSE 8080",
	} {
		if !lines[want] {
			t.Errorf("Dockerfile lacks the line %q", want)
		}
	}
}

func TestKubernetesManifests(t *testing.T) {
	t.Parallel()
	dep := flatYAML(t, readDeploy(t, "kubernetes/deployment.yaml"))
	pvc := flatYAML(t, readDeploy(t, "kubernetes/pvc.yaml"))
	secret := flatYAML(t, readDeploy(t, "kubernetes/secret.example.yaml"))
	const pod, c = "spec.template.spec.", "spec.template.spec.containers[0]."

	// The state volume is the PVC, mounted where BOOKBOT_STATE_DIR points.
	stateVolume := find(dep, pod+"volumes", "persistentVolumeClaim.claimName", pvc["metadata.name"])
	secretVolume := find(dep, pod+"volumes", "secret.secretName", secret["metadata.name"])
	stateMount := find(dep, c+"volumeMounts", "name", dep[stateVolume+"name"])
	secretMount := find(dep, c+"volumeMounts", "name", dep[secretVolume+"name"])
	envVar := func(name string) string { return dep[find(dep, c+"env", "name", name)+"value"] }

	for _, tt := range []struct{ what, got, want string }{
		{"kind", dep["kind"], "Deployment"},
		{"replicas", dep["spec.replicas"], "1"},
		{"strategy", dep["spec.strategy.type"], "Recreate"},
		{"liveness probe", dep[c+"livenessProbe.httpGet.path"], "/healthz"},
		{"readiness probe", dep[c+"readinessProbe.httpGet.path"], "/readyz"},
		{"probe port", dep[c+"livenessProbe.httpGet.port"], dep[c+"ports[0].name"]},
		{"container port", dep[c+"ports[0].containerPort"], "8080"},
		{"BOOKBOT_HTTP_ADDR", envVar("BOOKBOT_HTTP_ADDR"), "0.0.0.0:8080"},
		{"runAsNonRoot", dep[pod+"securityContext.runAsNonRoot"], "true"},
		{"seccomp", dep[pod+"securityContext.seccompProfile.type"], "RuntimeDefault"},
		{"readOnlyRootFilesystem", dep[c+"securityContext.readOnlyRootFilesystem"], "true"},
		{"allowPrivilegeEscalation", dep[c+"securityContext.allowPrivilegeEscalation"], "false"},
		{"capabilities", dep[c+"securityContext.capabilities.drop"], `["ALL"]`},
		{"state mount", dep[stateMount+"mountPath"], envVar("BOOKBOT_STATE_DIR")},
		{"state dir", envVar("BOOKBOT_STATE_DIR"), "/var/lib/bookbot"},
		{"secret mount", dep[secretMount+"mountPath"], "/run/secrets/bookbot"},
		{"secret mount read-only", dep[secretMount+"readOnly"], "true"},
		{"PVC access", pvc["spec.accessModes"], `["ReadWriteOnce"]`},
		{"PVC size", pvc["spec.resources.requests.storage"], "1Gi"},
	} {
		if tt.got != tt.want || tt.got == "" {
			t.Errorf("deployment: %s = %q, want %q", tt.what, tt.got, tt.want)
		}
	}
	// Each secret is a file in the mounted Secret, never an env value.
	for _, name := range []string{"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "BOOKING_API_KEY"} {
		file := envVar(name + "_FILE")
		dir, key := path.Split(file)
		if dir != "/run/secrets/bookbot/" || secret["stringData."+key] == "" {
			t.Errorf("deployment: %s_FILE = %q, want a key of the Secret under /run/secrets/bookbot/", name, file)
		}
		if envVar(name) != "" {
			t.Errorf("deployment: %s is set as a plain env value", name)
		}
	}
}

// find returns the path prefix ("list[i].") of the first item of list whose
// field equals want, or "-" (which matches nothing) when none does.
func find(flat map[string]string, list, field, want string) string {
	for i := 0; ; i++ {
		item := list + "[" + strconv.Itoa(i) + "]."
		if !slices.ContainsFunc(mapKeys(flat), func(k string) bool { return strings.HasPrefix(k, item) }) {
			return "-"
		}
		if want != "" && flat[item+field] == want {
			return item
		}
	}
}

func mapKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// flatYAML reads the block-style YAML the deploy files use (mappings, lists,
// flow values kept as written, comments) into path → value, such as
// "spec.strategy.type" → "Recreate" or "…env[2].name" → "BOOKING_API_KEY_FILE".
// go.yaml.in/yaml is not a dependency of bookbot, and this is enough to
// check structure, not just text.
func flatYAML(t *testing.T, doc string) map[string]string {
	t.Helper()
	type level struct {
		indent int
		path   string
	}
	var stack []level
	items := map[string]int{}
	out := map[string]string{}
	for raw := range strings.Lines(doc) {
		line := stripYAMLComment(strings.TrimRight(raw, "\r\n"))
		content := strings.TrimSpace(line)
		if content == "" {
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		parent := ""
		if len(stack) > 0 {
			parent = stack[len(stack)-1].path
		}
		if rest, ok := strings.CutPrefix(content, "- "); ok {
			item := parent + "[" + strconv.Itoa(items[parent]) + "]"
			items[parent]++
			stack = append(stack, level{indent, item})
			indent, content, parent = indent+2, rest, item
			if !strings.Contains(content, ": ") && !strings.HasSuffix(content, ":") {
				out[item] = unquoteYAML(content)
				continue
			}
		}
		key, value, ok := strings.Cut(content, ": ")
		if !ok {
			key, ok = strings.CutSuffix(content, ":")
		}
		if !ok {
			t.Fatalf("YAML line not understood: %q", raw)
		}
		p := key
		if parent != "" {
			p = parent + "." + key
		}
		if value = strings.TrimSpace(value); value == "" {
			stack = append(stack, level{indent, p})
			continue
		}
		out[p] = unquoteYAML(value)
	}
	return out
}

// stripYAMLComment drops a # comment that is not inside quotes.
func stripYAMLComment(line string) string {
	var quote rune
	for i, c := range line {
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
		case quote == 0 && c == '#' && (i == 0 || line[i-1] == ' '):
			return line[:i]
		}
	}
	return line
}

func unquoteYAML(v string) string {
	if s, err := strconv.Unquote(v); err == nil && strings.HasPrefix(v, `"`) {
		return s
	}
	return strings.Trim(v, "'")
}

// systemdUnit is a unit file's settings, each key with its values in order.
func systemdUnit(t *testing.T, name string) map[string][]string {
	t.Helper()
	unit := map[string][]string{}
	for line := range strings.Lines(readDeploy(t, name)) {
		line = strings.TrimSpace(line)
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			unit[k] = append(unit[k], v)
		}
	}
	return unit
}

func TestSystemdUnit(t *testing.T) {
	t.Parallel()
	unit := systemdUnit(t, "systemd/bookbot.service")
	if !slices.Contains(unit["StateDirectory"], "bookbot") {
		t.Errorf("unit: StateDirectory = %q, want bookbot", unit["StateDirectory"])
	}
	checkSystemdUnit(t, unit, "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "BOOKING_API_KEY")
}

// The replicas' template: the same hardening, the database URL a
// credential too, a listener per instance and no state directory.
func TestSystemdReplicaUnit(t *testing.T) {
	t.Parallel()
	unit := systemdUnit(t, "systemd/bookbot@.service")
	if len(unit["StateDirectory"]) > 0 || !slices.Contains(unit["Environment"], "BOOKBOT_HTTP_ADDR=127.0.0.1:808%i") {
		t.Errorf("replica unit: StateDirectory = %q, Environment = %q", unit["StateDirectory"], unit["Environment"])
	}
	checkSystemdUnit(t, unit, "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "BOOKING_API_KEY", "BOOKBOT_DATABASE_URL")
}

func checkSystemdUnit(t *testing.T, unit map[string][]string, secrets ...string) {
	t.Helper()
	for _, tt := range []struct{ key, want string }{
		{"DynamicUser", "yes"},
		{"ProtectSystem", "strict"},
		{"ProtectHome", "yes"},
		{"NoNewPrivileges", "yes"},
		{"CapabilityBoundingSet", ""},
		{"SystemCallFilter", "@system-service"},
		{"RestrictAddressFamilies", "AF_INET AF_INET6 AF_UNIX"},
		{"EnvironmentFile", "/etc/bookbot/bookbot.env"},
		{"Restart", "on-failure"},
	} {
		if !slices.Contains(unit[tt.key], tt.want) {
			t.Errorf("unit: %s = %q, want %q among them", tt.key, unit[tt.key], tt.want)
		}
	}
	if stop, err := strconv.Atoi(strings.Join(unit["TimeoutStopSec"], "")); err != nil || stop <= int(drainTimeout.Seconds()) {
		t.Errorf("unit: TimeoutStopSec = %q, want more than the %v drain", unit["TimeoutStopSec"], drainTimeout)
	}
	if len(unit["ExecStartPre"]) > 0 {
		t.Errorf("unit: ExecStartPre = %q; a check there keeps bookbot down while Slack is", unit["ExecStartPre"])
	}
	// Each secret is a credential, read through its _FILE variable.
	for _, name := range secrets {
		var cred string
		for _, e := range unit["Environment"] {
			if v, ok := strings.CutPrefix(e, name+"_FILE=%d/"); ok {
				cred = v
			}
		}
		loaded := slices.ContainsFunc(unit["LoadCredential"], func(l string) bool { return strings.HasPrefix(l, cred+":") })
		if cred == "" || !loaded {
			t.Errorf("unit: %s_FILE is not %%d/<a LoadCredential= name>: Environment=%q LoadCredential=%q", name, unit["Environment"], unit["LoadCredential"])
		}
	}
}

// TestSystemdEnvExampleListsEveryVariable keeps the example in step with
// config: every setting is there to uncomment, and no secret can be set in it.
func TestSystemdEnvExampleListsEveryVariable(t *testing.T) {
	t.Parallel()
	example := readDeploy(t, "systemd/bookbot.env.example")
	assigned := func(name string, commentedToo bool) bool {
		for line := range strings.Lines(example) {
			if commentedToo {
				line = strings.TrimPrefix(line, "#")
			}
			if strings.HasPrefix(line, name+"=") {
				return true
			}
		}
		return false
	}
	for _, v := range config.Vars() {
		switch {
		case v.Secret, strings.HasSuffix(v.Name, "_FILE"):
			// Secrets come from LoadCredential=; the unit sets the _FILE
			// variables, which this file would override.
			if assigned(v.Name, false) || !strings.Contains(example, v.Name) {
				t.Errorf("env example: %s must be mentioned and not set", v.Name)
			}
		case v.Name == "STATE_DIRECTORY" || v.Name == "XDG_STATE_HOME" || v.Name == "HOME":
			if !strings.Contains(example, "$"+v.Name) {
				t.Errorf("env example: %s (set by systemd or the system) is not explained", v.Name)
			}
		case !assigned(v.Name, true):
			t.Errorf("env example: %s is missing", v.Name)
		}
	}
}

// The replicas' manifests: two pods rolled one at a time with no state
// volume, the database URL a file of the Secret, and a budget that keeps
// one serving.
func TestKubernetesReplicaManifests(t *testing.T) {
	t.Parallel()
	dep := flatYAML(t, readDeploy(t, "kubernetes/replicas/deployment.yaml"))
	pdb := flatYAML(t, readDeploy(t, "kubernetes/replicas/pdb.yaml"))
	const pod, c = "spec.template.spec.", "spec.template.spec.containers[0]."
	envVar := func(name string) string { return dep[find(dep, c+"env", "name", name)+"value"] }
	for _, tt := range []struct{ what, got, want string }{
		{"replicas", dep["spec.replicas"], "2"},
		{"strategy", dep["spec.strategy.type"], "RollingUpdate"},
		{"maxUnavailable", dep["spec.strategy.rollingUpdate.maxUnavailable"], "0"},
		{"readiness probe", dep[c+"readinessProbe.httpGet.path"], "/readyz"},
		{"database URL", envVar("BOOKBOT_DATABASE_URL_FILE"), "/run/secrets/bookbot/database-url"},
		{"readOnlyRootFilesystem", dep[c+"securityContext.readOnlyRootFilesystem"], "true"},
		{"PDB kind", pdb["kind"], "PodDisruptionBudget"},
		{"PDB minAvailable", pdb["spec.minAvailable"], "1"},
		{"PDB selector", pdb["spec.selector.matchLabels.app.kubernetes.io/name"], dep["spec.selector.matchLabels.app.kubernetes.io/name"]},
	} {
		if tt.got != tt.want || tt.got == "" {
			t.Errorf("replicas: %s = %q, want %q", tt.what, tt.got, tt.want)
		}
	}
	for k := range dep {
		if strings.Contains(k, "persistentVolumeClaim") || strings.Contains(k, "BOOKBOT_STATE_DIR") {
			t.Errorf("replicas keep state on a volume: %s", k)
		}
	}
	if envVar("BOOKBOT_DATABASE_URL") != "" || dep[pod+"automountServiceAccountToken"] != "false" {
		t.Error("the database URL is a plain env value, or the pod mounts a service account token")
	}
}

package main

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestBinaryLinksNoTestCode checks that bookbot links neither testing nor
// net/http/httptest, nor the Prometheus code its tests parse /metrics
// with: the sandbox and the Slack stand-in it runs for `bookbot demo` and
// `bookbot sandbox` serve themselves, and their NewServer(t) helpers name
// only the part of testing.TB they use.
func TestBinaryLinksNoTestCode(t *testing.T) {
	t.Parallel()
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not on PATH")
	}
	out, err := exec.CommandContext(t.Context(), gotool, "list", "-deps", ".").Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("go list -deps ./cmd/bookbot: %v\n%s", err, exit.Stderr)
		}
		t.Fatalf("go list -deps ./cmd/bookbot: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/bookbot/bookbot/cmd/bookbot") {
		t.Fatalf("go list -deps ./cmd/bookbot does not list bookbot itself:\n%s", out)
	}
	for _, pkg := range []string{"testing", "net/http/httptest"} {
		if slices.Contains(deps, pkg) {
			t.Errorf("bookbot links %s; test helpers must stay out of the binary (go list -deps ./cmd/bookbot)", pkg)
		}
	}
	// Prometheus's text parser checks /metrics in tests; bookbot writes
	// the format itself and links no Prometheus code.
	for _, pkg := range deps {
		if strings.HasPrefix(pkg, "github.com/prometheus/") {
			t.Errorf("bookbot links %s; it writes /metrics itself (go list -deps ./cmd/bookbot)", pkg)
		}
	}
}

// TestDomainPackagesImportNoStore checks that the domain packages declare
// the stores they use and import none: store/bolt and store/pg are chosen
// and handed to them by cmd/bookbot alone.
func TestDomainPackagesImportNoStore(t *testing.T) {
	t.Parallel()
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not on PATH")
	}
	domain := []string{"account", "booking", "bot", "digest", "notices", "offer", "outbox", "personal"}
	for _, p := range domain {
		out, err := exec.CommandContext(t.Context(), gotool, "list", "-deps", "../../"+p).Output()
		if err != nil {
			t.Fatalf("go list -deps ./%s: %v", p, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, "github.com/bookbot/bookbot/store/") || strings.HasPrefix(dep, "github.com/bookbot/bookbot/cmd/") {
				t.Errorf("%s imports %s; it must declare the interface it needs instead", p, dep)
			}
		}
	}
}

package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/bookbot/bookbot/config"
)

// reference is the generated file, seen from this package's directory.
const reference = "../../../docs/configuration.md"

// docs/configuration.md is exactly what the generator writes from Vars
// today: a variable added, removed or described anew in config/vars.go
// fails here until the reference is regenerated.
func TestReferenceIsCurrent(t *testing.T) {
	t.Parallel()
	got, err := os.ReadFile(reference)
	if err != nil {
		t.Fatalf("%v: run `go generate ./config` to write it", err)
	}
	want := render(config.Vars())
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(gl), len(wl)) {
		g, w := "(end of file)", "(end of file)"
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Fatalf("docs/configuration.md is not what config.Vars() describes: run `go generate ./config` and commit the result.\nFirst difference, line %d:\n file: %s\n code: %s", i+1, g, w)
		}
	}
}

// Every variable is a row, and every chapter linked from a row is for a
// variable that exists.
func TestEveryVariableIsARow(t *testing.T) {
	t.Parallel()
	vars := config.Vars()
	doc := string(render(vars))
	known := map[string]bool{}
	for _, v := range vars {
		known[v.Name] = true
		row := "\n| `" + v.Name + "` |"
		if v.Secret {
			row = "\n| `" + v.Name + "` *secret* |"
		}
		if !strings.Contains(doc, row) {
			t.Errorf("%s has no row starting %q", v.Name, row[1:])
		}
	}
	for name := range seeAlso {
		if !known[name] {
			t.Errorf("seeAlso names %s, which config.Vars() does not list", name)
		}
	}
}

// A | in a meaning stays inside its cell.
func TestCell(t *testing.T) {
	t.Parallel()
	doc := string(render([]config.Var{{Name: "X_Y", Meaning: "a|b, unlike X_Z or X_Y", Default: "1", Secret: true}}))
	if !strings.Contains(doc, "| `X_Y` *secret* | `1` | a\\|b, unlike X_Z or `X_Y` |  |\n") {
		t.Errorf("row not as expected:\n%s", doc)
	}
}

package doccheck

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// root is the repository, seen from this package's directory.
const root = "../.."

// documents are the Markdown files a reader follows links through.
func documents(t *testing.T) []string {
	t.Helper()
	var docs []string
	for _, pattern := range []string{"*.md", "docs/*.md"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, m...)
	}
	for _, must := range []string{"README.md", "ARCHITECTURE.md"} {
		if !slices.Contains(docs, filepath.Join(root, must)) {
			t.Errorf("%s is missing", must)
		}
	}
	return docs
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var (
	fence      = regexp.MustCompile("^\\s*(```|~~~)")
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
	inlineLink = regexp.MustCompile(`!?\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	refLink    = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*(\S+)`)
	heading    = regexp.MustCompile(`^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$`)
	scheme     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// prose is the document's lines outside fenced code blocks, with inline
// code removed, by line number.
func prose(doc string) map[int]string {
	lines := map[int]string{}
	inFence := false
	for i, line := range strings.Split(doc, "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if !inFence {
			lines[i+1] = line
		}
	}
	return lines
}

// anchors are the fragments GitHub gives a document's headings: the text
// as shown, lower-cased, without punctuation but - and _, spaces made
// hyphens, and a repeated slug numbered -1, -2, ….
func anchors(doc string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	lines := prose(doc)
	for i := 1; i <= len(strings.Split(doc, "\n")); i++ {
		m := heading.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		text := inlineLink.ReplaceAllString(m[1], "$1")
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
				b.WriteRune(r)
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// Every relative link in the documents leads somewhere: the file or
// directory exists, and a #fragment names a heading of the document it
// points into.
func TestRelativeLinksResolve(t *testing.T) {
	t.Parallel()
	docs := documents(t)
	for _, doc := range docs {
		name, _ := filepath.Rel(root, doc)
		text := read(t, doc)
		for n, line := range prose(text) {
			line = codeSpan.ReplaceAllString(line, "")
			var targets []string
			for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
				targets = append(targets, m[2])
			}
			if m := refLink.FindStringSubmatch(line); m != nil {
				targets = append(targets, m[1])
			}
			for _, target := range targets {
				if scheme.MatchString(target) {
					continue
				}
				if err := resolve(doc, text, target); err != nil {
					t.Errorf("%s:%d: link %q: %v", name, n, target, err)
				}
			}
		}
	}
}

func resolve(doc, text, target string) error {
	path, fragment, _ := strings.Cut(target, "#")
	if path != "" {
		full := filepath.Join(filepath.Dir(doc), filepath.FromSlash(path))
		if _, err := os.Stat(full); err != nil {
			return fmt.Errorf("no such file")
		}
		if fragment == "" {
			return nil
		}
		if !strings.HasSuffix(path, ".md") {
			return fmt.Errorf("a #fragment into a file that is not Markdown")
		}
		b, err := os.ReadFile(full)
		if err != nil {
			return err
		}
		text = string(b)
	}
	if fragment != "" && !anchors(text)[fragment] {
		return fmt.Errorf("no heading with the anchor #%s", fragment)
	}
	return nil
}

// The slugs follow GitHub's rule, which the links above rely on.
func TestAnchors(t *testing.T) {
	t.Parallel()
	doc := "# bookbot\n\n## Checking the configuration and rotating the key\n\n```sh\n# not a heading\n```\n\n" +
		"## `BOOKBOT_STATE_DIR` and [backups](x.md)\n\n### Live notices\n\n### Live notices\n\n## What's kept, and for how long?\n"
	got := anchors(doc)
	for _, want := range []string{"bookbot", "checking-the-configuration-and-rotating-the-key", "bookbot_state_dir-and-backups", "live-notices", "live-notices-1", "whats-kept-and-for-how-long"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Error("a comment in a code block was taken for a heading")
	}
}

var testName = regexp.MustCompile(`\b(Test|Benchmark)[A-Z][A-Za-z0-9_]*\b`)

// Every test a document names (as the proof of a guarantee, say) is a test
// in the repository, so a renamed or removed test cannot leave a claim
// without its proof.
func TestNamedTestsExist(t *testing.T) {
	t.Parallel()
	defined := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Benchmark)\w+)\(`)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != root {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, "_test.go") {
			for _, m := range decl.FindAllStringSubmatch(read(t, path), -1) {
				defined[m[1]] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range documents(t) {
		name, _ := filepath.Rel(root, doc)
		for n, line := range prose(read(t, doc)) {
			for _, test := range testName.FindAllString(line, -1) {
				if !defined[test] {
					t.Errorf("%s:%d names %s, which is no test in the repository", name, n, test)
				}
			}
		}
	}
}

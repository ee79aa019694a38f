package bot

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The rules of doc.go: flow files use the shared files, not each other,
// but to hand work over; the shared files use no flow; every Slack call
// goes through slackio.go. Every file of bot is a shared file or a flow's.

// sharedFiles are the files every flow stands on; every other file of bot
// (not a test) is a flow's: one per flow, or a publisher's.
var sharedFiles = []string{
	"bot.go", "route.go", "calendar.go", "slackio.go", "render.go", "words.go",
	"metadata.go", "sign.go", "state.go", "cache.go", "dryrun.go", "metrics.go",
	"offercard.go", "doc.go",
}

// handOvers are what a flow may use of another flow's file: where it hands
// work over, by the file and the name it uses there.
var handOvers = map[string]string{
	"modal.go openBookingModal": "opening the booking form",
	"home.go publishHome":       "refreshing App Home",
	"review.go ReportReviews":   "reporting the review queue after a write",
	"review.go reviewsByDMTo":   "whether that report reaches the person who asked, as a DM",
	"review.go reviewReaches":   "whether an entry's report reaches a person",
	"review.go mayReview":       "whether a person may look for an entry again (Check again)",
	"steps.go endStep":          "ending the Workflow Builder step of an offer booked or closed",
	"steps.go settleSteps":      "ending the steps whose offers closed, in the offers' sweep",
}

// TestLayout keeps doc.go's rules true.
func TestLayout(t *testing.T) {
	t.Parallel()
	files := botFiles(t)
	for _, v := range layoutViolations(t, files, nil, sharedFiles) {
		t.Error(v)
	}
	for _, f := range sharedFiles {
		if !slices.Contains(files, f) {
			t.Errorf("sharedFiles names %s, which bot does not have", f)
		}
	}
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f != "doc.go" && !bytes.Contains(doc, []byte(f)) {
			t.Errorf("doc.go does not say what %s is: a flow's file, or a shared one", f)
		}
	}
}

// TestLayoutCatches shows each rule of TestLayout fire on a file that
// breaks it, and a hand-over pass.
func TestLayoutCatches(t *testing.T) {
	t.Parallel()
	files := botFiles(t)
	extra := map[string]string{
		"zzflow.go": `package bot

import "context"

func (b *Bot) zzFlow(ctx context.Context) {
	b.publishHome(ctx, "U1")
	_ = b.listReply(ctx, "U1", 0, listMark{})
	_, _ = b.slack.GetUserInfoContext(ctx, "U1")
}
`,
		"zzshared.go": `package bot

func zzShared() message { return keptMessage() }

func zzSharedUsesAFlow() string { return bookingIDMessage("1").Text }
`,
	}
	got := layoutViolations(t, files, extra, append(slices.Clone(sharedFiles), "zzshared.go"))
	want := []string{
		"zzflow.go uses listReply of list.go",
		"zzflow.go uses listMark of list.go",
		"zzflow.go calls Slack (GetUserInfoContext)",
		"zzflow.go uses the Slack client (slack)",
		"zzshared.go uses bookingIDMessage of list.go",
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(v string) bool { return strings.HasPrefix(v, w) }) {
			t.Errorf("no violation %q; got:\n%s", w, strings.Join(got, "\n"))
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d violations, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
}

// botFiles are the files of bot but its tests.
func botFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(files, func(f string) bool { return strings.HasSuffix(f, "_test.go") })
}

// layoutViolations type-checks bot's files, and extra ones (by name, their
// source), and says where they break the rules, shared naming the shared
// files.
func layoutViolations(t *testing.T, files []string, extra map[string]string, shared []string) []string {
	t.Helper()
	fset := token.NewFileSet()
	var parsed []*ast.File
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, f)
	}
	for name, src := range extra {
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, f)
	}
	imp, err := exportImporter(fset)
	if errors.Is(err, errNoGoTool) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	pkg, err := (&types.Config{Importer: imp}).Check("github.com/bookbot/bookbot/bot", fset, parsed, info)
	if err != nil {
		t.Fatal(err)
	}
	slackCalls, err := slackMethods(imp)
	if err != nil {
		t.Fatal(err)
	}
	isShared := func(file string) bool { return slices.Contains(shared, file) }
	fileOf := func(p token.Pos) string { return filepath.Base(fset.Position(p).Filename) }
	var out []string
	seen := map[string]bool{}
	add := func(v string) {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}

	// What each file uses of the package's declarations: its top-level
	// names, and the methods and fields of its types.
	for id, obj := range info.Uses {
		if obj.Pkg() != pkg || !declaredAtTop(pkg, obj) {
			continue
		}
		from, to := fileOf(id.Pos()), fileOf(obj.Pos())
		if from == to || isShared(to) {
			continue
		}
		where := fmt.Sprintf("%s uses %s of %s (%s)", from, obj.Name(), to, fset.Position(id.Pos()))
		switch {
		case !isShared(from) && handOvers[to+" "+obj.Name()] == "":
			add(where + ": a flow uses the shared files, not another flow's but to hand work over (handOvers)")
		case isShared(from) && !(from == "route.go" && registers(obj)):
			add(where + ": a shared file uses no flow's, but route.go, which lists the flows")
		}
	}

	// Calls to Slack, and the Slack client handed around.
	for _, f := range parsed {
		file := fileOf(f.Pos())
		if file == "slackio.go" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			s := info.Selections[sel]
			if s == nil {
				return true
			}
			switch {
			case s.Kind() == types.MethodVal && slackCalls[s.Obj().Name()] && slackClient(s.Recv()):
				add(fmt.Sprintf("%s calls Slack (%s) at %s: every Slack call goes through slackio.go", file, s.Obj().Name(), fset.Position(sel.Pos())))
			case s.Kind() == types.FieldVal && s.Obj().Name() == "slack" && isBot(s.Recv()):
				add(fmt.Sprintf("%s uses the Slack client (%s) at %s: only slackio.go does", file, s.Obj().Name(), fset.Position(sel.Pos())))
			}
			return true
		})
	}
	slices.Sort(out)
	return out
}

// declaredAtTop reports whether obj is a name of pkg's scope, or a method
// or a field of one of its types.
func declaredAtTop(pkg *types.Package, obj types.Object) bool {
	switch o := obj.(type) {
	case *types.Func:
		return o.Signature().Recv() != nil || o.Parent() == pkg.Scope()
	case *types.Var:
		return o.IsField() || o.Parent() == pkg.Scope()
	}
	return obj.Parent() == pkg.Scope()
}

// registers reports whether obj is a flow's registration, which route.go
// lists: a function returning a flow.
func registers(obj types.Object) bool {
	f, ok := obj.(*types.Func)
	if !ok || f.Signature().Results().Len() != 1 {
		return false
	}
	n, ok := f.Signature().Results().At(0).Type().(*types.Named)
	return ok && n.Obj().Name() == "flow" && n.Obj().Pkg() == f.Pkg()
}

// slackClient reports whether a method of t's is a call to Slack: t is
// slack-go's, or an interface (SlackAPI and the publishers' narrower ones)
// that a Slack client is handed through.
func slackClient(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := types.Unalias(t).(*types.Named); ok && n.Obj().Pkg() != nil && strings.HasPrefix(n.Obj().Pkg().Path(), "github.com/slack-go/slack") {
		return true
	}
	return types.IsInterface(t)
}

// isBot reports whether t is the Bot or a pointer to it.
func isBot(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	return ok && n.Obj().Name() == "Bot"
}

// slackMethods are the names of slack-go's Web API calls: the methods of
// *slack.Client.
func slackMethods(imp types.Importer) (map[string]bool, error) {
	p, err := imp.Import("github.com/slack-go/slack")
	if err != nil {
		return nil, err
	}
	obj := p.Scope().Lookup("Client")
	if obj == nil {
		return nil, errors.New("slack-go has no Client")
	}
	ms := types.NewMethodSet(types.NewPointer(obj.Type()))
	names := map[string]bool{}
	for i := range ms.Len() {
		names[ms.At(i).Obj().Name()] = true
	}
	return names, nil
}

// exportImporter imports bot's dependencies from the export data the go
// tool built for them (go list -export).
func exportImporter(fset *token.FileSet) (types.Importer, error) {
	exports, err := exportData()
	if err != nil {
		return nil, err
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	}), nil
}

var errNoGoTool = errors.New("the go tool is not on PATH")

// exportData is the file of each of bot's dependencies' export data, by
// import path, as go list -export gives them: asked once.
var exportData = sync.OnceValues(func() (map[string]string, error) {
	gotool, err := exec.LookPath("go")
	if err != nil {
		return nil, errNoGoTool
	}
	// Compiled as the end-to-end tests build the binary (and CI's
	// staticcheck reads it): a cold cache compiles bot's dependencies
	// once for the three, not once more for this.
	list := exec.Command(gotool, "list", "-trimpath", "-export", "-deps", "-f", "{{if .Export}}{{.ImportPath}} {{.Export}}{{end}}", ".")
	list.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := list.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return nil, fmt.Errorf("go list -export -deps ./bot: %w\n%s", err, exit.Stderr)
		}
		return nil, fmt.Errorf("go list -export -deps ./bot: %w", err)
	}
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), " "); ok {
			exports[path] = file
		}
	}
	return exports, nil
})

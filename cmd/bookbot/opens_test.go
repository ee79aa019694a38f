package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// backends are the packages whose Open a command must not call: it opens
// the state with store.Open, which chooses between them.
var backends = []string{"github.com/bookbot/bookbot/store/bolt", "github.com/bookbot/bookbot/store/pg"}

// storeOpens returns where f uses an Open… function of a backend, under
// whatever name f imports it.
func storeOpens(fset *token.FileSet, f *ast.File) []string {
	names := map[string]string{} // the name f gives a backend → its path
	var found []string
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if !slices.Contains(backends, path) {
			continue
		}
		name := filepath.Base(path)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if name == "." {
			found = append(found, fset.Position(imp.Pos()).String()+": "+path+" imported into the file's own names")
		}
		names[name] = path
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || !strings.HasPrefix(sel.Sel.Name, "Open") {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && names[x.Name] != "" {
			found = append(found, fset.Position(sel.Pos()).String()+": "+names[x.Name]+"."+sel.Sel.Name)
		}
		return true
	})
	return found
}

// No command opens a store another way than store.Open: every Go file of
// cmd/ but the tests is read, and a use of store/bolt's or store/pg's
// Open fails the test.
func TestCommandsOpenTheStateOneWay(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	var read []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		read = append(read, filepath.ToSlash(path))
		for _, use := range storeOpens(fset, f) {
			t.Errorf("%s opens a store itself; open the state with store.Open", use)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"../bookbot/serve.go", "../bookbot-perf/child.go", "../internal/app/app.go"} {
		if !slices.Contains(read, want) {
			t.Errorf("%s was not read; read %q", want, read)
		}
	}
}

// The check finds an Open under any name a file gives the backend, called
// or taken as a value, and nothing else.
func TestStoreOpensFound(t *testing.T) {
	t.Parallel()
	const src = `package p

import (
	b "github.com/bookbot/bookbot/store/bolt"
	"github.com/bookbot/bookbot/store/pg"
	"github.com/bookbot/bookbot/store"
)

var open = b.Open

func f(ctx context.Context, o store.Options) {
	db, _ := pg.Open(ctx, "")
	_, _ = store.Open(ctx, o)
	_ = pg.Latest()
	_ = os.Open
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	got := storeOpens(fset, f)
	want := []string{
		"p.go:9:12: github.com/bookbot/bookbot/store/bolt.Open",
		"p.go:12:11: github.com/bookbot/bookbot/store/pg.Open",
	}
	if !slices.Equal(got, want) {
		t.Errorf("found %q, want %q", got, want)
	}
}

package hass

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// The simulator extends gonja only through what gonja exports, so a gonja
// upgrade either compiles and works or fails to compile. Writing into its
// unexported fields (unsafe, reflect.NewAt, field lookups by name, the
// linkname directive) would break silently instead; nothing under dev/sim may.
func TestTplNoUnsafeAccess(t *testing.T) {
	t.Parallel()
	forbidden := map[string]bool{"NewAt": true, "UnsafePointer": true, "UnsafeAddr": true, "FieldByName": true,
		"FieldByNameFunc": true, "FieldByIndex": true, "NumField": true}
	root := ".." // dev/sim
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		files++
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "unsafe" {
				t.Errorf("%s imports unsafe", path)
			}
		}
		for _, g := range f.Comments {
			for _, c := range g.List {
				if strings.HasPrefix(c.Text, "//go:linkname") {
					t.Errorf("%s: %s", path, c.Text)
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if s, ok := n.(*ast.SelectorExpr); ok && forbidden[s.Sel.Name] {
				t.Errorf("%s: .%s reaches into a value's fields by reflection", path, s.Sel.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 10 {
		t.Fatalf("walked %d Go files under %s: the walk is looking in the wrong place", files, root)
	}
}

// Every tag the sandbox registers is one the rewriter knows: its
// expressions get HA's semantics and loop and macro bodies spend the
// step budget.
func TestTplRewriterKnowsEveryTag(t *testing.T) {
	t.Parallel()
	snap := testSnapshot(t)
	cases := []struct{ tag, src, want string }{
		{"if", "{% if 1 / 2 == 0.5 %}a{% elif x %}b{% else %}c{% endif %}", "a"},
		{"for", "{% for i in [1, 2] if i > 1 %}{{ i // 2 }}{% else %}none{% endfor %}", "1"},
		{"set", "{% set v = -7 // 2 %}{{ v }}", "-4"},
		{"set", "{% set v = 'a' if none else 'b' %}{{ v }}", "b"},
		{"set", "{% set v %}{{ 1 / 4 }}{% endset %}{{ v }}", "0.25"},
		{"with", "{% with a = 7 // 2, b = 'x' ~ 1 %}{{ a }}{{ b }}{% endwith %}", "3x1"},
		{"macro", "{% macro m(a, b=2 ** 3) %}{{ a / b }}{% endmacro %}{{ m(4) }}", "0.5"},
		{"raw", "{% raw %}{{ 1 / 0 }}{% endraw %}", "{{ 1 / 0 }}"},
		{"break", "{% for i in range(5) %}{% if i == 2 %}{% break %}{% endif %}{{ i }}{% endfor %}", "01"},
		{"continue", "{% for i in range(3) %}{% if i == 1 %}{% continue %}{% endif %}{{ i }}{% endfor %}", "02"},
	}
	for _, c := range cases {
		if !tplEnv().ControlStructures.Exists(c.tag) {
			t.Errorf("tag %q is not registered", c.tag)
			continue
		}
		out, _, err := RenderTemplate(c.src, nil, snap)
		if err != nil || out != c.want {
			t.Errorf("%s: %q, %v; want %q", c.src, out, err, c.want)
		}
	}
}

// unknownTag stands for a tag whose fields the rewriter has not been
// taught: compiling must refuse it rather than run it with gonja's
// operators.
type unknownTag struct{}

func (unknownTag) Position() *tokens.Token { return &tokens.Token{} }
func (unknownTag) String() string          { return "unknownTag" }

func TestTplRewriterRefusesUnknownTag(t *testing.T) {
	t.Parallel()
	w := &rewriter{}
	w.nodes([]nodes.Node{&nodes.ControlStructureBlock{Name: "mystery", ControlStructure: unknownTag{}}})
	if te, ok := w.err.(*TemplateError); !ok || !strings.Contains(te.Msg, "cannot evaluate tag") {
		t.Fatalf("got %v, want a TemplateError naming the tag", w.err)
	}
}

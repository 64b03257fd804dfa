package hass

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/nikolalohinski/gonja/v2/builtins"
	controlStructures "github.com/nikolalohinski/gonja/v2/builtins/control_structures"
	"github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
	"github.com/nikolalohinski/gonja/v2/logging"
	"github.com/nikolalohinski/gonja/v2/parser"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// The Jinja engine is gonja (github.com/nikolalohinski/gonja/v2); this
// file sets it up as HA's sandbox: only the tags HA templates use (no
// include/import/extends, which would read files), HA's filters and tests
// instead of gonja's, and the hidden filters the rewriter calls.

const rendererKey = "$renderer" // not a name a template can write

var tplConfig = config.New()

// tplEnv is built on first use: HA's filter table is filled by init().
var tplEnv = sync.OnceValue(func() *exec.Environment {
	logging.SetEnabled(false) // gonja logs type mismatches it then handles
	tags := map[string]parser.ControlStructureParser{}
	for _, name := range []string{"if", "for", "raw", "macro", "break", "continue"} {
		p, _ := controlStructures.All.Get(name)
		tags[name] = p
	}
	tags["set"], tags["with"] = parseSet, parseWith // ours: the rewriter reaches their expressions
	fs := map[string]exec.FilterFunction{}
	for name, f := range filters {
		fs[name] = bridge(f)
	}
	for name, f := range hiddenFilters {
		fs[name] = bridge(f)
	}
	fs["$name"] = lookupName
	return &exec.Environment{
		Context:           exec.EmptyContext(),
		Filters:           exec.NewFilterSet(fs),
		Tests:             exec.NewTestSet(map[string]exec.TestFunction{}),
		ControlStructures: exec.NewControlStructureSet(tags),
		Methods:           builtins.Methods,
	}
})

// bridge runs one of HA's filters from gonja: model values in and out,
// one step of the budget, errors remembered for the report.
func bridge(f filterFn) exec.FilterFunction {
	return func(e *exec.Evaluator, in *exec.Value, p *exec.VarArgs) *exec.Value {
		if in.IsError() {
			return in
		}
		r := rendererOf(e.Environment.Context)
		if err := r.tick(); err != nil {
			return exec.AsValue(err)
		}
		args, kw := jArgs(p)
		out, err := f(r, fromJ(in), args, kw)
		if err != nil {
			return exec.AsValue(r.fail(err))
		}
		return asJ(out)
	}
}

// asJ is a model value as a gonja value.
func asJ(v any) *exec.Value {
	j := toJ(v)
	if x, ok := j.(*exec.Value); ok {
		return x
	}
	return exec.AsValue(j)
}

func rendererOf(ctx *exec.Context) *renderer {
	r, _ := ctx.Get(rendererKey)
	return r.(*renderer)
}

// hiddenFilters evaluate the rewritten expressions with Python's rules.
var hiddenFilters = map[string]filterFn{
	"$attr": func(r *renderer, v any, a []any, _ map[string]any) (any, error) { return r.getattr(v, a[0].(string)) },
	"$item": func(r *renderer, v any, a []any, _ map[string]any) (any, error) { return r.getitem(v, a[0]) },
	"$slice": func(r *renderer, v any, a []any, _ map[string]any) (any, error) {
		var step any // absent unless written: v[lo:hi]
		if len(a) > 2 {
			step = a[2]
		}
		return slice(v, a[0], a[1], step)
	},
	"$call": func(r *renderer, v any, a []any, kw map[string]any) (any, error) { return r.call(v, a, kw) },
	"$test": func(r *renderer, v any, a []any, _ map[string]any) (any, error) {
		return tests[a[0].(string)](r, v, a[1:])
	},
	"$str":  func(r *renderer, v any, _ []any, _ map[string]any) (any, error) { return pyStr(v), nil },
	"$bool": func(r *renderer, v any, _ []any, _ map[string]any) (any, error) { return truthy(v), nil },
	"$not":  func(r *renderer, v any, _ []any, _ map[string]any) (any, error) { return !truthy(v), nil },
	"$neg":  func(r *renderer, v any, _ []any, _ map[string]any) (any, error) { return arith("-", int64(0), v) },
	"$pos": func(r *renderer, v any, _ []any, _ map[string]any) (any, error) {
		if !isNumber(v) {
			return nil, typeErr("bad operand type for unary +: '%s'", typeName(v))
		}
		return v, nil
	},
	"$iter": func(r *renderer, v any, _ []any, _ map[string]any) (any, error) {
		items, err := r.iterate(v)
		if err == nil { // gonja copies every item before the first pass: that is work too
			r.steps += len(items)
			err = r.tick()
		}
		return items, err
	},
	"$bin": func(r *renderer, v any, a []any, _ map[string]any) (any, error) {
		return binary(a[0].(string), v, a[1])
	},
}

// lookupName is "$name": a variable, which lives in gonja's context.
func lookupName(e *exec.Evaluator, _ *exec.Value, p *exec.VarArgs) *exec.Value {
	r := rendererOf(e.Environment.Context)
	return asJ(r.lookup(e.Environment.Context, p.Args[0].String()))
}

// binary is a Python binary operator other than and/or.
func binary(op string, l, rv any) (any, error) {
	switch op {
	case "==":
		return pyEqual(l, rv), nil
	case "!=":
		return !pyEqual(l, rv), nil
	case "<", ">", "<=", ">=":
		c, err := pyCompare(op, l, rv)
		if err != nil {
			return nil, err
		}
		return map[string]bool{"<": c < 0, ">": c > 0, "<=": c <= 0, ">=": c >= 0}[op], nil
	case "in", "not in":
		ok, err := pyContains(rv, l)
		return ok == (op == "in"), err
	case "%":
		if f, ok := l.(string); ok { // printf-style formatting: 'x=%s' % x, '%s %s' % (a, b)
			if args, ok := rv.([]any); ok {
				return printf(f, args)
			}
			return printf(f, []any{rv})
		}
	case "~":
		s := pyStr(l) + pyStr(rv)
		if len(s) > maxOutput {
			return nil, &TemplateError{Kind: "TemplateError", Msg: "result too large"}
		}
		return s, nil
	}
	return arith(op, l, rv)
}

// oneTemplate is the loader for a single in-memory template: the sandbox
// reads no other file.
type oneTemplate struct{ name, src string }

func (l oneTemplate) Read(path string) (io.Reader, error) {
	if path != l.name {
		return nil, fmt.Errorf("template %q not found", path)
	}
	return strings.NewReader(l.src), nil
}
func (l oneTemplate) Resolve(path string) (string, error)    { return path, nil }
func (l oneTemplate) Inherit(string) (loaders.Loader, error) { return l, nil }

// compiled keeps recent templates, as HA keeps its compiled Template
// objects: subscriptions and automations render the same text again. A
// compiled template is only read while it renders, so renders share it.
var compiled struct {
	sync.Mutex
	m map[string]*exec.Template
}

const maxCompiled = 256

// compile parses src with gonja and rewrites it for HA's semantics.
func compile(src string) (*exec.Template, error) {
	compiled.Lock()
	t, ok := compiled.m[src]
	compiled.Unlock()
	if ok {
		return t, nil
	}
	t, err := compileNew(src)
	if err != nil {
		return nil, err
	}
	compiled.Lock()
	if len(compiled.m) >= maxCompiled || compiled.m == nil {
		compiled.m = map[string]*exec.Template{}
	}
	compiled.m[src] = t
	compiled.Unlock()
	return t, nil
}

func compileNew(src string) (*exec.Template, error) {
	if len(src) > maxTemplateLen {
		return nil, &TemplateError{Kind: "TemplateError", Msg: "template is too large"}
	}
	t, err := parse(src)
	if err != nil {
		return nil, syntaxError(err)
	}
	w := &rewriter{}
	w.nodes(t.Root().Nodes)
	if w.err != nil {
		return nil, w.err
	}
	return t, nil
}

// parse runs gonja's lexer and parser, which panic on a few malformed
// inputs (an empty {% raw %} block, some numbers): syntax errors too.
func parse(src string) (t *exec.Template, err error) {
	defer func() {
		if p := recover(); p != nil {
			t, err = nil, fmt.Errorf("invalid template: %v", p)
		}
	}()
	if err := checkNesting(src); err != nil {
		return nil, err
	}
	return exec.NewTemplate("template", tplConfig, oneTemplate{"template", src}, tplEnv())
}

// checkNesting refuses deeply nested brackets before gonja's recursive
// parser sees them.
func checkNesting(src string) error {
	depth := 0
	s := tokens.LexAll(src, tplConfig)
	for !s.End() {
		switch s.Next().Type {
		case tokens.LeftParenthesis, tokens.LeftBracket, tokens.LeftBrace:
			if depth++; depth > 100 {
				return &TemplateError{Kind: "TemplateSyntaxError", Msg: "expression nested too deeply"}
			}
		case tokens.RightParenthesis, tokens.RightBracket, tokens.RightBrace:
			depth--
		}
	}
	return nil
}

var (
	reEOF     = regexp.MustCompile(`Unexpected EOF, expected tag (.*?)\.`)
	reUnknown = regexp.MustCompile(`ControlStructure '([^']*)' not found`)
	reNoExpr  = regexp.MustCompile(`expected either a number, string, keyword or identifier\. \(Line: \d+ Col: \d+, near "(.*)"\)`)
)

// syntaxError words gonja's parse errors the way Jinja does where they
// are common; the rest keep gonja's text.
func syntaxError(err error) error {
	var te *TemplateError
	if errors.As(err, &te) {
		return te
	}
	if inner := errors.Unwrap(err); inner != nil {
		err = inner
	}
	msg := err.Error()
	switch {
	case reEOF.MatchString(msg):
		tags := strings.Split(reEOF.FindStringSubmatch(msg)[1], " or ")
		msg = "Unexpected end of template. Jinja was looking for the following tags: '" + strings.Join(tags, "' or '") + "'."
	case reUnknown.MatchString(msg):
		msg = "Encountered unknown tag '" + reUnknown.FindStringSubmatch(msg)[1] + "'."
	case reNoExpr.MatchString(msg):
		got := reNoExpr.FindStringSubmatch(msg)[1]
		switch {
		case strings.HasPrefix(got, "}}"):
			got = "end of print statement"
		case strings.HasPrefix(got, "%}"):
			got = "end of statement block"
		}
		msg = "Expected an expression, got '" + got + "'"
	}
	return &TemplateError{Kind: "TemplateSyntaxError", Msg: msg}
}

// render runs a compiled template against the render's state.
func (r *renderer) render(t *exec.Template, vars map[string]any) (out string, err error) {
	defer func() {
		if p := recover(); p != nil { // gonja panics on some value shapes; HA would raise
			out, err = "", r.asTemplateError(fmt.Errorf("%v", p))
		}
	}()
	data := map[string]any{rendererKey: r}
	for k, v := range vars {
		data[k] = toJ(fromGo(v))
	}
	var b strings.Builder
	if err := t.Execute(io.MultiWriter(r, &b), exec.NewContext(data)); err != nil {
		return "", r.asTemplateError(err)
	}
	return b.String(), nil
}

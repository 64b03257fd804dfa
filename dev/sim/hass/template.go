package hass

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/hamcp/hamcp/dev/sim/home"
	"github.com/nikolalohinski/gonja/v2/nodes"
)

// RenderTemplate renders src against a snapshot. It returns the text, what
// the render listened to, and a *TemplateError on failure.
func RenderTemplate(src string, vars map[string]any, snap *home.Snapshot) (string, Listeners, error) {
	t, err := compile(src)
	if err != nil {
		return "", Listeners{}, err
	}
	r := newRenderer(snap, src)
	out, err := r.render(t, vars)
	if err != nil {
		return "", r.listeners(), err
	}
	return out, r.listeners(), nil
}

// homeRenderer adapts RenderTemplate to home.Renderer so scripts and
// conditions can use templates.
func homeRenderer(tpl string, vars map[string]any, snap *home.Snapshot, typed bool) (any, error) {
	out, _, err := RenderTemplate(tpl, vars, snap)
	if err != nil {
		return nil, &home.HAError{Msg: "Error rendering template: " + err.Error()}
	}
	if !typed {
		return out, nil
	}
	return toGo(ParseResult(out)), nil
}

var isNumeric = regexp.MustCompile(`^[+-]?(?:[1-9]\d*|0)?(?:\.\d*)?$`)

// ParseResult is HA's _parse_result: a Python literal becomes a value
// (numbers only when they look like numbers, so "01" stays a string);
// everything else stays the rendered string.
func ParseResult(s string) any {
	v, ok := pyLiteral(s)
	if !ok {
		return s
	}
	switch v.(type) {
	case string:
		return s
	case int64, float64:
		if !isNumeric.MatchString(s) || s == "" || s == "+" || s == "-" || s == "." {
			return s
		}
	}
	return v
}

// pyLiteral is a small ast.literal_eval: numbers, strings, True/False/None,
// lists, tuples, dicts and unary minus, read with gonja's parser.
func pyLiteral(s string) (any, bool) {
	if strings.Contains(s, "}}") || strings.Contains(s, "{{") || strings.Contains(s, "{%") || strings.Contains(s, "{#") {
		return nil, false
	}
	t, err := parse("{{ " + s + " }}")
	if err != nil || len(t.Root().Nodes) != 1 {
		return nil, false
	}
	out, ok := t.Root().Nodes[0].(*nodes.Output)
	if !ok || out.Condition != nil {
		return nil, false
	}
	return literal(out.Expression)
}

func literal(e nodes.Expression) (any, bool) {
	switch x := e.(type) {
	case *nodes.Integer:
		n, err := strconv.ParseInt(x.Location.Val, 10, 64)
		if err != nil || (len(x.Location.Val) > 1 && x.Location.Val[0] == '0') {
			return nil, false
		}
		return n, true
	case *nodes.Float:
		return x.Val, true
	case *nodes.String:
		return x.Val, true
	case *nodes.Bool:
		return x.Val, x.Location.Val == "True" || x.Location.Val == "False"
	case *nodes.None:
		return nil, x.Location.Val == "None"
	case *nodes.UnaryExpression:
		v, ok := literal(x.Term)
		switch n := v.(type) {
		case int64:
			if x.Negative {
				return -n, ok
			}
			return n, ok
		case float64:
			if x.Negative {
				return -n, ok
			}
			return n, ok
		}
	case *nodes.List:
		return literals(x.Val)
	case *nodes.Tuple:
		return literals(x.Val)
	case *nodes.Dict:
		out := map[string]any{}
		for _, p := range x.Pairs {
			k, ok := literal(p.Key)
			if !ok {
				return nil, false
			}
			v, ok := literal(p.Value)
			if !ok {
				return nil, false
			}
			out[pyStr(k)] = v
		}
		return out, true
	}
	return nil, false
}

func literals(es []nodes.Expression) (any, bool) {
	out := make([]any, 0, len(es))
	for _, e := range es {
		v, ok := literal(e)
		if !ok {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

// templateMessage is the REST error text: "Error rendering template: <Kind>: <msg>".
func templateMessage(err error) string {
	return "Error rendering template: " + strings.TrimSpace(err.Error())
}

// TemplateError is HA's TemplateError: Kind is the underlying exception
// class (TemplateSyntaxError, UndefinedError, TypeError, ValueError, ...).
type TemplateError struct {
	Kind, Msg string
}

func (e *TemplateError) Error() string { return e.Kind + ": " + e.Msg }

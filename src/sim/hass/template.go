package hass

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/hamcp/hamcp/src/sim/home"
)

// RenderTemplate renders src against a snapshot. It returns the text, what
// the render listened to, and a *TemplateError on failure.
func RenderTemplate(src string, vars map[string]any, snap *home.Snapshot) (string, Listeners, error) {
	nodes, err := parseTemplate(src)
	if err != nil {
		return "", Listeners{}, err
	}
	r := newRenderer(snap, vars)
	r.source = src
	if err := r.run(nodes); err != nil {
		return "", r.listeners(), asTemplateError(err)
	}
	return r.out.String(), r.listeners(), nil
}

func asTemplateError(err error) error {
	if _, ok := err.(*TemplateError); ok {
		return err
	}
	return &TemplateError{Kind: "TemplateError", Msg: err.Error()}
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
// lists, tuples, dicts and unary minus.
func pyLiteral(s string) (any, bool) {
	toks, _, _, err := lexTag(s+"}}", 0, "}}")
	if err != nil || len(toks) < 2 || toks[len(toks)-1].pos != len(s) {
		return nil, false
	}
	lp := &litParser{toks: toks}
	v, ok := lp.value(0)
	if !ok || lp.pos != len(toks)-1 {
		return nil, false
	}
	return v, true
}

type litParser struct {
	toks []token
	pos  int
}

func (p *litParser) peek() token { return p.toks[p.pos] }

func (p *litParser) op(s string) bool {
	if t := p.peek(); t.kind == tkOp && t.s == s {
		p.pos++
		return true
	}
	return false
}

func (p *litParser) value(depth int) (any, bool) {
	if depth > 50 {
		return nil, false
	}
	t := p.peek()
	switch t.kind {
	case tkInt:
		p.pos++
		n, err := strconv.ParseInt(t.s, 10, 64)
		if err != nil || (len(t.s) > 1 && t.s[0] == '0') {
			return nil, false
		}
		return n, true
	case tkFloat:
		p.pos++
		f, err := strconv.ParseFloat(t.s, 64)
		return f, err == nil
	case tkStr:
		p.pos++
		s := t.s
		for p.peek().kind == tkStr {
			s += p.peek().s
			p.pos++
		}
		return s, true
	case tkName:
		p.pos++
		switch t.s {
		case "True":
			return true, true
		case "False":
			return false, true
		case "None":
			return nil, true
		}
		return nil, false
	case tkOp:
		switch {
		case p.op("-"), p.op("+"):
			neg := t.s == "-"
			v, ok := p.value(depth + 1)
			switch x := v.(type) {
			case int64:
				if neg {
					return -x, ok
				}
				return x, ok
			case float64:
				if neg {
					return -x, ok
				}
				return x, ok
			}
			return nil, false
		case p.op("["), p.op("("):
			closer := map[string]string{"[": "]", "(": ")"}[t.s]
			out := []any{}
			for !p.op(closer) {
				v, ok := p.value(depth + 1)
				if !ok {
					return nil, false
				}
				out = append(out, v)
				if !p.op(",") {
					if !p.op(closer) {
						return nil, false
					}
					break
				}
			}
			return out, true
		case p.op("{"):
			out := map[string]any{}
			for !p.op("}") {
				k, ok := p.value(depth + 1)
				if !ok || !p.op(":") {
					return nil, false
				}
				v, ok := p.value(depth + 1)
				if !ok {
					return nil, false
				}
				out[fmt.Sprint(pyStr(k))] = v
				if !p.op(",") {
					if !p.op("}") {
						return nil, false
					}
					break
				}
			}
			return out, true
		}
	}
	return nil, false
}

// templateMessage is the REST error text: "Error rendering template: <Kind>: <msg>".
func templateMessage(err error) string {
	return "Error rendering template: " + strings.TrimSpace(err.Error())
}

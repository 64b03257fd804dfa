//lint:file-ignore ST1005 the errors repeat gonja's own set/with messages word for word, as rendered templates show them

package hass

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/parser"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// gonja's set and with keep their expressions in unexported fields, where
// the rewriter cannot reach them. These are the same two tags with the
// expressions in the open: same syntax, same errors, same scoping.

// setTag is {% set target = expr [if cond else alt] %} and the block form
// {% set target %}...{% endset %}.
type setTag struct {
	location                           *tokens.Token
	target                             nodes.Expression // assigned through as gonja does, never rewritten
	expression, condition, alternative nodes.Expression
	body                               *nodes.Wrapper
}

func (s *setTag) Position() *tokens.Token { return s.location }
func (s *setTag) String() string {
	return fmt.Sprintf("SetControlStructure(Line=%d Col=%d)", s.location.Line, s.location.Col)
}

func (s *setTag) Execute(r *exec.Renderer, _ *nodes.ControlStructureBlock) error {
	var value *exec.Value
	switch {
	case s.body != nil:
		var buf bytes.Buffer
		sub := r.Inherit()
		sub.Output = &buf
		if err := sub.ExecuteWrapper(s.body); err != nil {
			return err
		}
		value = exec.AsSafeValue(buf.String()) // Jinja's block set captures Markup
	case s.condition != nil:
		c := r.Eval(s.condition)
		if c.IsError() {
			return c
		}
		if !c.IsNil() && c.IsTrue() {
			value = r.Eval(s.expression)
		} else {
			value = r.Eval(s.alternative)
		}
	default:
		value = r.Eval(s.expression)
	}
	if value == nil {
		return fmt.Errorf("Invalid value in 'set' tag: %s", s.expression)
	}
	if value.IsError() {
		return value
	}
	switch n := s.target.(type) {
	case *nodes.Name:
		r.Environment.Context.Set(n.Name.Val, value.Interface())
	case *nodes.GetAttribute:
		target := r.Eval(n.Node)
		if target.IsError() {
			return fmt.Errorf("Unable to evaluate target %s: %w", n, target)
		}
		if err := target.Set(exec.AsValue(n.Attribute), value.Interface()); err != nil {
			return fmt.Errorf("Unable to set value on \"%s\": %w", n.Attribute, err)
		}
	case *nodes.GetItem:
		target := r.Eval(n.Node)
		if target.IsError() {
			return fmt.Errorf("Unable to evaluate target %s: %w", n, target)
		}
		arg := r.Eval(n.Arg)
		if arg.IsError() {
			return fmt.Errorf("Unable to evaluate argument %s: %w", n.Arg, arg)
		}
		if err := target.Set(arg, value.Interface()); err != nil {
			return fmt.Errorf("Unable to set value on \"%s\": %w", n.Arg, err)
		}
	default:
		return fmt.Errorf("Illegal set target node %s", n)
	}
	return nil
}

func parseSet(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	s := &setTag{location: p.Current()}
	target, err := args.ParseVariableOrLiteral()
	if err != nil {
		return nil, fmt.Errorf("unable to parse identifier: %w", err)
	}
	switch target.(type) {
	case *nodes.Name, *nodes.Call, *nodes.GetItem, *nodes.GetAttribute:
		s.target = target
	default:
		return nil, fmt.Errorf("unexpected set target %s", target)
	}
	if args.Match(tokens.Assign) == nil {
		if !args.End() {
			return nil, args.Error("Expected '=' or end of tag for block-set.", args.Current())
		}
		body, end, err := p.WrapUntil("endset")
		if err != nil {
			return nil, err
		}
		if !end.End() {
			return nil, end.Error("endset takes no arguments", nil)
		}
		s.body = body
		return s, nil
	}
	if s.expression, err = args.ParseExpression(); err != nil {
		return nil, err
	}
	cond, alt, err := args.ParseCondition()
	if err != nil {
		return nil, err
	}
	if cond != nil {
		if alt == nil {
			return nil, args.Error("Malformed 'set' if else condition", args.Current())
		}
		s.condition, s.alternative = cond, alt
	}
	if !args.End() {
		return nil, args.Error("Malformed 'set' tag args.", args.Current())
	}
	return s, nil
}

// withTag is {% with a = x, b = y %}...{% endwith %}. Its values are all
// evaluated in the enclosing scope, in the order written.
type withTag struct {
	location *tokens.Token
	names    []string
	values   []nodes.Expression
	body     *nodes.Wrapper
}

func (w *withTag) Position() *tokens.Token { return w.location }
func (w *withTag) String() string {
	return fmt.Sprintf("WithControlStructure(Line=%d Col=%d)", w.location.Line, w.location.Col)
}

func (w *withTag) Execute(r *exec.Renderer, _ *nodes.ControlStructureBlock) error {
	sub := r.Inherit()
	for i, e := range w.values {
		v := r.Eval(e)
		if v.IsError() {
			return fmt.Errorf("unable to evaluate parameter %s: %w", e, v)
		}
		sub.Environment.Context.Set(w.names[i], v)
	}
	return sub.ExecuteWrapper(w.body)
}

func parseWith(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	w := &withTag{location: p.Current()}
	body, end, err := p.WrapUntil("endwith")
	if err != nil {
		return nil, err
	}
	w.body = body
	if !end.End() {
		return nil, end.Error("Arguments not allowed here.", nil)
	}
	for !args.End() {
		key := args.Match(tokens.Name)
		if key == nil {
			return nil, args.Error("Expected an identifier", args.Current())
		}
		if args.Match(tokens.Assign) == nil {
			return nil, args.Error("Expected '='.", args.Current())
		}
		value, err := args.ParseExpression()
		if err != nil {
			return nil, err
		}
		w.bind(key.Val, value)
		if args.Match(tokens.Comma) == nil {
			break
		}
	}
	if !args.End() {
		return nil, errors.New("") // gonja's with says no more; the caller adds the context
	}
	return w, nil
}

// bind adds a name, or replaces its expression when written twice: the
// last one counts.
func (w *withTag) bind(name string, e nodes.Expression) {
	for i, n := range w.names {
		if n == name {
			w.values[i] = e
			return
		}
	}
	w.names = append(w.names, name)
	w.values = append(w.values, e)
}

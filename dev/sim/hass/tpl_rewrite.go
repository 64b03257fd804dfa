package hass

import (
	"fmt"

	controlStructures "github.com/nikolalohinski/gonja/v2/builtins/control_structures"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// gonja parses and runs the control flow (if, for, set, macro, loop
// variables), but its operators are looser than Python's ('a' + 1 is "a1",
// 1 / 0 is +Inf, -7 // 2 is -3), names are nil when undefined and values
// print Go-style. HA users see Python's semantics and errors, so after
// parsing every expression is rewritten into calls of hidden filters
// ("$bin", "$attr", "$call", ...) that evaluate it the way Jinja does. The
// '$' names cannot be written in a template. The rewriter only touches
// exported AST fields: gonja's own tags that keep theirs unexported (set,
// with) are replaced by ours in tpl_tags.go.

type rewriter struct{ err error }

// assert records HA's compile-time error for an unknown filter or test.
func (w *rewriter) assert(kind, name string) {
	if w.err == nil {
		w.err = &TemplateError{Kind: "TemplateAssertionError", Msg: "No " + kind + " named '" + name + "'."}
	}
}

func (w *rewriter) nodes(ns []nodes.Node) {
	for _, n := range ns {
		switch x := n.(type) {
		case *nodes.Output:
			x.Expression = hidden(w.expr(x.Expression), "$str")
			if x.Condition != nil {
				x.Condition = hidden(w.expr(x.Condition), "$bool")
			}
			if x.Alternative != nil {
				x.Alternative = hidden(w.expr(x.Alternative), "$str")
			}
		case *nodes.ControlStructureBlock:
			w.tag(x.ControlStructure)
		case *nodes.Wrapper:
			w.nodes(x.Nodes)
		}
	}
}

// tag rewrites a tag's expressions and bodies, in the order they are
// written (the first unknown filter is the one reported). Loop and macro
// bodies start with a tick: each pass spends one step of the budget.
func (w *rewriter) tag(cs nodes.ControlStructure) {
	switch x := cs.(type) {
	case *controlStructures.IfControlStructure:
		for i, c := range x.Conditions {
			x.Conditions[i] = hidden(w.expr(c), "$bool")
		}
		for _, b := range x.Wrappers {
			w.body(b, false)
		}
	case *controlStructures.ForControlStructure:
		x.ObjectEvaluator = hidden(w.expr(x.ObjectEvaluator), "$iter")
		if x.IfCondition != nil {
			x.IfCondition = hidden(w.expr(x.IfCondition), "$bool")
		}
		w.body(x.BodyWrapper, true)
		w.body(x.EmptyWrapper, false)
	case *controlStructures.MacroControlStructure:
		for _, p := range x.Kwargs {
			if p.Value != nil {
				p.Value = w.expr(p.Value)
			}
		}
		w.body(x.Wrapper, true)
	case *setTag:
		if x.expression != nil {
			x.expression = w.expr(x.expression)
		}
		if x.condition != nil {
			x.condition = hidden(w.expr(x.condition), "$bool")
			x.alternative = w.expr(x.alternative)
		}
		w.body(x.body, false)
	case *withTag:
		w.exprs(x.values)
		w.body(x.body, false)
	case *controlStructures.RawControlStructure, *controlStructures.BreakControlStructure, *controlStructures.ContinueControlStructure:
		// no expressions
	default: // a tag tplEnv registers but this walk does not know: gonja changed
		if w.err == nil {
			w.err = &TemplateError{Kind: "TemplateError", Msg: fmt.Sprintf("the simulator cannot evaluate tag %T", cs)}
		}
	}
}

func (w *rewriter) body(b *nodes.Wrapper, ticks bool) {
	if b == nil {
		return
	}
	w.nodes(b.Nodes)
	if ticks {
		b.Nodes = append([]nodes.Node{&nodes.ControlStructureBlock{Location: b.Location, Name: "$tick", ControlStructure: tick{b.Location}}}, b.Nodes...)
	}
}

func (w *rewriter) node(n nodes.Node) nodes.Expression {
	if n == nil {
		return nil
	}
	return w.expr(n.(nodes.Expression))
}

func (w *rewriter) exprs(es []nodes.Expression) []nodes.Expression {
	for i := range es {
		es[i] = w.expr(es[i])
	}
	return es
}

func (w *rewriter) kwargs(kw map[string]nodes.Expression) map[string]nodes.Expression {
	for k, e := range kw {
		kw[k] = w.expr(e)
	}
	return kw
}

func (w *rewriter) expr(e nodes.Expression) nodes.Expression {
	switch x := e.(type) {
	case *nodes.Name:
		return hidden(&nodes.None{Location: x.Name}, "$name", strNode(x.Name, x.Name.Val))
	case *nodes.GetAttribute:
		if x.Attribute == "" {
			return hidden(w.node(x.Node), "$item", &nodes.Integer{Location: x.Location, Val: x.Index})
		}
		return hidden(w.node(x.Node), "$attr", strNode(x.Location, x.Attribute))
	case *nodes.GetItem:
		return hidden(w.node(x.Node), "$item", w.node(x.Arg))
	case *nodes.GetSlice:
		bound := func(n nodes.Node) nodes.Expression {
			if n == nil {
				return &nodes.None{Location: x.Location}
			}
			return w.node(n)
		}
		args := []nodes.Expression{bound(x.Start), bound(x.End)}
		if x.Step != nil {
			args = append(args, w.node(x.Step))
		}
		return hidden(w.node(x.Node), "$slice", args...)
	case *nodes.Call:
		h := hidden(w.node(x.Func), "$call", w.exprs(x.Args)...)
		h.Filters[0].Kwargs = w.kwargs(x.Kwargs)
		return h
	case *nodes.FilteredExpression:
		x.Expression = w.expr(x.Expression)
		for _, f := range x.Filters {
			if _, ok := filters[f.Name]; !ok {
				w.assert("filter", f.Name)
			}
			f.Args, f.Kwargs = w.exprs(f.Args), w.kwargs(f.Kwargs)
		}
	case *nodes.TestExpression:
		if _, ok := tests[x.Test.Name]; !ok {
			w.assert("test", x.Test.Name)
		}
		return hidden(w.expr(x.Expression), "$test", append([]nodes.Expression{strNode(x.Test.Token, x.Test.Name)}, w.exprs(x.Test.Args)...)...)
	case *nodes.Negation:
		return hidden(w.expr(x.Term), "$not")
	case *nodes.UnaryExpression:
		if x.Negative {
			return hidden(w.expr(x.Term), "$neg")
		}
		return hidden(w.expr(x.Term), "$pos")
	case *nodes.BinaryExpression:
		x.Left, x.Right = w.expr(x.Left), w.expr(x.Right)
		if op := x.Operator.Token.Val; op != "and" && op != "or" { // gonja's and/or already return the deciding operand
			return hidden(x.Left, "$bin", strNode(x.Operator.Token, op), x.Right)
		}
	case *nodes.List:
		w.exprs(x.Val)
	case *nodes.Tuple:
		w.exprs(x.Val)
	case *nodes.Dict:
		for _, p := range x.Pairs {
			p.Key, p.Value = w.expr(p.Key), w.expr(p.Value)
		}
	}
	return e
}

func strNode(at *tokens.Token, s string) *nodes.String {
	return &nodes.String{Location: at, Val: s}
}

func hidden(in nodes.Expression, name string, args ...nodes.Expression) *nodes.FilteredExpression {
	return &nodes.FilteredExpression{Expression: in, Filters: []*nodes.FilterCall{{Token: in.Position(), Name: name, Args: args, Kwargs: map[string]nodes.Expression{}}}}
}

// tick is a node at the top of every loop and macro body: each pass
// spends one step of the render's budget, so nested loops end.
type tick struct{ at *tokens.Token }

func (t tick) Position() *tokens.Token { return t.at }
func (t tick) String() string          { return "tick" }
func (t tick) Execute(r *exec.Renderer, _ *nodes.ControlStructureBlock) error {
	return rendererOf(r.Environment.Context).tick()
}

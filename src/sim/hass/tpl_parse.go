package hass

import (
	"strings"
)

// AST of a template.

type tnode interface{}

type textNode struct{ s string }
type outputNode struct{ e expr }
type ifNode struct {
	conds  []expr
	bodies [][]tnode
	els    []tnode
}
type forNode struct {
	vars       []string
	iter, cond expr
	body, els  []tnode
}
type setNode struct {
	target, attr string // attr set for "ns.attr"
	e            expr
}

type expr interface{}

type litExpr struct{ v any }
type nameExpr struct{ name string }
type attrExpr struct {
	x    expr
	name string
}
type indexExpr struct{ x, i expr }
type sliceExpr struct{ x, lo, hi expr }
type callExpr struct {
	fn     expr
	args   []expr
	kwargs []kwarg
}
type kwarg struct {
	name string
	e    expr
}
type filterExpr struct {
	x      expr
	name   string
	args   []expr
	kwargs []kwarg
}
type testExpr struct {
	x    expr
	name string
	args []expr
	neg  bool
}
type binExpr struct {
	op   string
	l, r expr
}
type unExpr struct {
	op string
	x  expr
}
type condExpr struct{ yes, cond, no expr }
type listExpr struct{ items []expr }
type dictExpr struct{ keys, vals []expr }

const maxNesting = 100

type parser struct {
	items []item
	pos   int
	// tokens of the current tag
	toks     []token
	tp       int
	depth    int
	inOutput bool
}

// parseTemplate builds the AST; unknown syntax is a TemplateSyntaxError.
func parseTemplate(src string) ([]tnode, error) {
	items, err := lexTemplate(src)
	if err != nil {
		return nil, err
	}
	p := &parser{items: items}
	nodes, end, err := p.block(nil)
	if err != nil {
		return nil, err
	}
	if end != "" {
		return nil, syntaxErr("Encountered unknown tag '%s'.", end)
	}
	return nodes, nil
}

// block parses nodes until one of the stop tags; it returns which one stopped it.
func (p *parser) block(stops []string) ([]tnode, string, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxNesting {
		return nil, "", syntaxErr("template nested too deeply")
	}
	var nodes []tnode
	for p.pos < len(p.items) {
		it := p.items[p.pos]
		p.pos++
		switch it.kind {
		case 't':
			nodes = append(nodes, textNode{it.text})
		case 'o':
			p.toks, p.tp, p.inOutput = it.tokens, 0, true
			e, err := p.expr()
			if err != nil {
				return nil, "", err
			}
			if err := p.expectEnd("end of print statement"); err != nil {
				return nil, "", err
			}
			nodes = append(nodes, outputNode{e})
		case 's':
			p.toks, p.tp, p.inOutput = it.tokens, 0, false
			t := p.next()
			if t.kind != tkName {
				return nil, "", syntaxErr("tag name expected")
			}
			for _, s := range stops {
				if t.s == s {
					return nodes, s, nil
				}
			}
			var n tnode
			var err error
			switch t.s {
			case "if":
				n, err = p.parseIf()
			case "for":
				n, err = p.parseFor()
			case "set":
				n, err = p.parseSet()
			default:
				if len(stops) > 0 {
					return nil, "", syntaxErr("Encountered unknown tag '%s'. Jinja was looking for the following tags: %s. The innermost block that needs to be closed is '%s'.", t.s, quoteOr(stops), innermost(stops))
				}
				return nil, "", syntaxErr("Encountered unknown tag '%s'.", t.s)
			}
			if err != nil {
				return nil, "", err
			}
			nodes = append(nodes, n)
		}
	}
	if len(stops) > 0 {
		return nil, "", syntaxErr("Unexpected end of template. Jinja was looking for the following tags: %s. The innermost block that needs to be closed is '%s'.", quoteOr(stops), innermost(stops))
	}
	return nodes, "", nil
}

func quoteOr(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = "'" + x + "'"
	}
	return strings.Join(q, " or ")
}

func innermost(stops []string) string {
	for _, s := range stops {
		if strings.HasPrefix(s, "end") {
			return strings.TrimPrefix(s, "end")
		}
	}
	return stops[0]
}

func (p *parser) parseIf() (tnode, error) {
	n := ifNode{}
	cond, err := p.expr()
	if err != nil {
		return nil, err
	}
	if err := p.expectEnd("end of statement block"); err != nil {
		return nil, err
	}
	for {
		body, stop, err := p.block([]string{"elif", "else", "endif"})
		if err != nil {
			return nil, err
		}
		n.conds = append(n.conds, cond)
		n.bodies = append(n.bodies, body)
		switch stop {
		case "elif":
			if cond, err = p.expr(); err != nil {
				return nil, err
			}
			if err := p.expectEnd("end of statement block"); err != nil {
				return nil, err
			}
			continue
		case "else":
			if err := p.expectEnd("end of statement block"); err != nil {
				return nil, err
			}
			els, _, err := p.block([]string{"endif"})
			if err != nil {
				return nil, err
			}
			n.els = els
		}
		return n, p.expectEnd("end of statement block")
	}
}

func (p *parser) parseFor() (tnode, error) {
	n := forNode{}
	for {
		t := p.next()
		if t.kind != tkName {
			return nil, syntaxErr("expected token 'name', got '%s'", t)
		}
		n.vars = append(n.vars, t.s)
		if !p.acceptOp(",") {
			break
		}
	}
	if t := p.next(); t.kind != tkName || t.s != "in" {
		return nil, syntaxErr("expected token 'in', got '%s'", t)
	}
	var err error
	if n.iter, err = p.orExpr(); err != nil {
		return nil, err
	}
	if p.acceptName("if") {
		if n.cond, err = p.orExpr(); err != nil {
			return nil, err
		}
	}
	if err := p.expectEnd("end of statement block"); err != nil {
		return nil, err
	}
	body, stop, err := p.block([]string{"else", "endfor"})
	if err != nil {
		return nil, err
	}
	n.body = body
	if stop == "else" {
		if err := p.expectEnd("end of statement block"); err != nil {
			return nil, err
		}
		if n.els, _, err = p.block([]string{"endfor"}); err != nil {
			return nil, err
		}
	}
	return n, p.expectEnd("end of statement block")
}

func (p *parser) parseSet() (tnode, error) {
	t := p.next()
	if t.kind != tkName {
		return nil, syntaxErr("expected token 'name', got '%s'", t)
	}
	n := setNode{target: t.s}
	if p.acceptOp(".") {
		a := p.next()
		if a.kind != tkName {
			return nil, syntaxErr("expected token 'name', got '%s'", a)
		}
		n.attr = a.s
	}
	if !p.acceptOp("=") {
		return nil, syntaxErr("expected token '=', got '%s'", p.peek())
	}
	e, err := p.expr()
	if err != nil {
		return nil, err
	}
	n.e = e
	return n, p.expectEnd("end of statement block")
}

func (p *parser) peek() token {
	if p.tp < len(p.toks) {
		return p.toks[p.tp]
	}
	return token{kind: tkEnd}
}

func (p *parser) next() token {
	t := p.peek()
	if p.tp < len(p.toks) {
		p.tp++
	}
	return t
}

func (p *parser) acceptOp(op string) bool {
	if t := p.peek(); t.kind == tkOp && t.s == op {
		p.tp++
		return true
	}
	return false
}

func (p *parser) acceptName(n string) bool {
	if t := p.peek(); t.kind == tkName && t.s == n {
		p.tp++
		return true
	}
	return false
}

func (p *parser) expectEnd(what string) error {
	t := p.next()
	if t.kind != tkEnd {
		return syntaxErr("expected token '%s', got '%s'", what, t)
	}
	return nil
}

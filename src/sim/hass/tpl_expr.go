package hass

import "strconv"

// Expression grammar, Jinja precedence from loosest to tightest: inline
// if/else, or, and, not, comparisons, + -, ~, * / // %, **, unary, postfix
// (attribute, subscript, call) and filters/tests.

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxNesting {
		return syntaxErr("expression nested too deeply")
	}
	return nil
}

// expr: inline if-else over or-expressions.
func (p *parser) expr() (expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	yes, err := p.orExpr()
	if err != nil {
		return nil, err
	}
	if p.acceptName("if") {
		cond, err := p.orExpr()
		if err != nil {
			return nil, err
		}
		var no expr = litExpr{undefined{hint: "the inline if-expression on line 1 evaluated to false and no else section was defined."}}
		if p.acceptName("else") {
			if no, err = p.expr(); err != nil {
				return nil, err
			}
		}
		return condExpr{yes, cond, no}, nil
	}
	return yes, nil
}

func (p *parser) orExpr() (expr, error) {
	l, err := p.andExpr()
	for err == nil && p.acceptName("or") {
		var r expr
		if r, err = p.andExpr(); err == nil {
			l = binExpr{"or", l, r}
		}
	}
	return l, err
}

func (p *parser) andExpr() (expr, error) {
	l, err := p.notExpr()
	for err == nil && p.acceptName("and") {
		var r expr
		if r, err = p.notExpr(); err == nil {
			l = binExpr{"and", l, r}
		}
	}
	return l, err
}

func (p *parser) notExpr() (expr, error) {
	if p.acceptName("not") {
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		x, err := p.notExpr()
		return unExpr{"not", x}, err
	}
	return p.compare()
}

var compareOps = map[string]bool{"==": true, "!=": true, "<": true, ">": true, "<=": true, ">=": true}

func (p *parser) compare() (expr, error) {
	l, err := p.math1()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		switch {
		case t.kind == tkOp && compareOps[t.s]:
			p.tp++
			r, err := p.math1()
			if err != nil {
				return nil, err
			}
			l = binExpr{t.s, l, r}
		case t.kind == tkName && t.s == "in":
			p.tp++
			r, err := p.math1()
			if err != nil {
				return nil, err
			}
			l = binExpr{"in", l, r}
		case t.kind == tkName && t.s == "not" && p.tp+1 < len(p.toks) && p.toks[p.tp+1].kind == tkName && p.toks[p.tp+1].s == "in":
			p.tp += 2
			r, err := p.math1()
			if err != nil {
				return nil, err
			}
			l = binExpr{"not in", l, r}
		default:
			return l, nil
		}
	}
}

func (p *parser) math1() (expr, error) {
	l, err := p.concat()
	for err == nil {
		t := p.peek()
		if t.kind != tkOp || (t.s != "+" && t.s != "-") {
			break
		}
		p.tp++
		var r expr
		if r, err = p.concat(); err == nil {
			l = binExpr{t.s, l, r}
		}
	}
	return l, err
}

func (p *parser) concat() (expr, error) {
	l, err := p.math2()
	for err == nil && p.acceptOp("~") {
		var r expr
		if r, err = p.math2(); err == nil {
			l = binExpr{"~", l, r}
		}
	}
	return l, err
}

func (p *parser) math2() (expr, error) {
	l, err := p.pow()
	for err == nil {
		t := p.peek()
		if t.kind != tkOp || (t.s != "*" && t.s != "/" && t.s != "//" && t.s != "%") {
			break
		}
		p.tp++
		var r expr
		if r, err = p.pow(); err == nil {
			l = binExpr{t.s, l, r}
		}
	}
	return l, err
}

func (p *parser) pow() (expr, error) {
	l, err := p.unary(true)
	for err == nil && p.acceptOp("**") {
		var r expr
		if r, err = p.unary(true); err == nil {
			l = binExpr{"**", l, r}
		}
	}
	return l, err
}

func (p *parser) unary(withFilter bool) (expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	var x expr
	var err error
	switch {
	case p.acceptOp("-"):
		var in expr
		if in, err = p.unary(false); err == nil {
			x = unExpr{"-", in}
		}
	case p.acceptOp("+"):
		var in expr
		if in, err = p.unary(false); err == nil {
			x = unExpr{"+", in}
		}
	default:
		x, err = p.primary()
	}
	if err != nil {
		return nil, err
	}
	if x, err = p.postfix(x); err != nil {
		return nil, err
	}
	if withFilter {
		return p.filters(x)
	}
	return x, nil
}

func (p *parser) primary() (expr, error) {
	t := p.next()
	switch t.kind {
	case tkName:
		switch t.s {
		case "true", "True":
			return litExpr{true}, nil
		case "false", "False":
			return litExpr{false}, nil
		case "none", "None":
			return litExpr{nil}, nil
		}
		return nameExpr{t.s}, nil
	case tkInt:
		n, err := strconv.ParseInt(t.s, 10, 64)
		if err != nil {
			f, _ := strconv.ParseFloat(t.s, 64)
			return litExpr{f}, nil
		}
		return litExpr{n}, nil
	case tkFloat:
		f, err := strconv.ParseFloat(t.s, 64)
		if err != nil {
			return nil, syntaxErr("invalid number %s", t.s)
		}
		return litExpr{f}, nil
	case tkStr:
		s := t.s
		for p.peek().kind == tkStr { // adjacent literals concatenate
			s += p.next().s
		}
		return litExpr{s}, nil
	case tkOp:
		switch t.s {
		case "(":
			if p.acceptOp(")") {
				return listExpr{}, nil
			}
			e, err := p.expr()
			if err != nil {
				return nil, err
			}
			if p.acceptOp(",") { // tuple: treat as list
				items := []expr{e}
				for !p.acceptOp(")") {
					x, err := p.expr()
					if err != nil {
						return nil, err
					}
					items = append(items, x)
					if !p.acceptOp(",") {
						if !p.acceptOp(")") {
							return nil, syntaxErr("unexpected '%s'", p.peek())
						}
						break
					}
				}
				return listExpr{items}, nil
			}
			if !p.acceptOp(")") {
				return nil, syntaxErr("unexpected '%s', expected ')'", p.peek())
			}
			return e, nil
		case "[":
			var items []expr
			for !p.acceptOp("]") {
				x, err := p.expr()
				if err != nil {
					return nil, err
				}
				items = append(items, x)
				if !p.acceptOp(",") {
					if !p.acceptOp("]") {
						return nil, syntaxErr("unexpected '%s', expected ']'", p.peek())
					}
					break
				}
			}
			return listExpr{items}, nil
		case "{":
			d := dictExpr{}
			for !p.acceptOp("}") {
				k, err := p.expr()
				if err != nil {
					return nil, err
				}
				if !p.acceptOp(":") {
					return nil, syntaxErr("unexpected '%s', expected ':'", p.peek())
				}
				v, err := p.expr()
				if err != nil {
					return nil, err
				}
				d.keys, d.vals = append(d.keys, k), append(d.vals, v)
				if !p.acceptOp(",") {
					if !p.acceptOp("}") {
						return nil, syntaxErr("unexpected '%s', expected '}'", p.peek())
					}
					break
				}
			}
			return d, nil
		}
		return nil, syntaxErr("unexpected '%s'", t.s)
	}
	if t.kind == tkEnd {
		what := "end of statement block"
		if p.inOutput {
			what = "end of print statement"
		}
		return nil, syntaxErr("Expected an expression, got '%s'", what)
	}
	return nil, syntaxErr("unexpected '%s'", t)
}

func (p *parser) postfix(x expr) (expr, error) {
	for {
		switch {
		case p.acceptOp("."):
			t := p.next()
			switch t.kind {
			case tkName:
				x = attrExpr{x, t.s}
			case tkInt:
				n, _ := strconv.ParseInt(t.s, 10, 64)
				x = indexExpr{x, litExpr{n}}
			default:
				return nil, syntaxErr("expected name or number")
			}
		case p.acceptOp("["):
			var lo, hi expr
			var err error
			if !(p.peek().kind == tkOp && p.peek().s == ":") {
				if lo, err = p.expr(); err != nil {
					return nil, err
				}
			}
			if p.acceptOp(":") {
				if !(p.peek().kind == tkOp && p.peek().s == "]") {
					if hi, err = p.expr(); err != nil {
						return nil, err
					}
				}
				x = sliceExpr{x, lo, hi}
			} else {
				x = indexExpr{x, lo}
			}
			if !p.acceptOp("]") {
				return nil, syntaxErr("expected token ']', got '%s'", p.peek())
			}
		case p.acceptOp("("):
			args, kw, err := p.callArgs()
			if err != nil {
				return nil, err
			}
			x = callExpr{x, args, kw}
		default:
			return x, nil
		}
	}
}

// callArgs parses "a, b, k=v)" after the opening parenthesis.
func (p *parser) callArgs() ([]expr, []kwarg, error) {
	var args []expr
	var kw []kwarg
	for !p.acceptOp(")") {
		if t := p.peek(); t.kind == tkName && p.tp+1 < len(p.toks) && p.toks[p.tp+1].kind == tkOp && p.toks[p.tp+1].s == "=" {
			p.tp += 2
			e, err := p.expr()
			if err != nil {
				return nil, nil, err
			}
			kw = append(kw, kwarg{t.s, e})
		} else {
			if len(kw) > 0 {
				return nil, nil, syntaxErr("invalid syntax for function call expression")
			}
			e, err := p.expr()
			if err != nil {
				return nil, nil, err
			}
			args = append(args, e)
		}
		if !p.acceptOp(",") {
			if !p.acceptOp(")") {
				return nil, nil, syntaxErr("unexpected '%s', expected ')'", p.peek())
			}
			break
		}
	}
	return args, kw, nil
}

func (p *parser) filters(x expr) (expr, error) {
	for {
		switch {
		case p.acceptOp("|"):
			t := p.next()
			if t.kind != tkName {
				return nil, syntaxErr("expected token 'name', got '%s'", t)
			}
			name := t.s
			for p.peek().kind == tkOp && p.peek().s == "." && p.tp+1 < len(p.toks) && p.toks[p.tp+1].kind == tkName {
				p.tp++
				name += "." + p.next().s
			}
			f := filterExpr{x: x, name: name}
			if p.acceptOp("(") {
				args, kw, err := p.callArgs()
				if err != nil {
					return nil, err
				}
				f.args, f.kwargs = args, kw
			}
			if _, ok := filters[name]; !ok {
				return nil, &TemplateError{Kind: "TemplateAssertionError", Msg: "No filter named '" + name + "'."}
			}
			x = f
		case p.acceptName("is"):
			neg := p.acceptName("not")
			t := p.next()
			if t.kind != tkName {
				if t.kind == tkOp && (t.s == "==" || t.s == "!=" || t.s == "<" || t.s == ">" || t.s == "<=" || t.s == ">=") {
					t.kind = tkName
				} else {
					return nil, syntaxErr("expected token 'name', got '%s'", t)
				}
			}
			te := testExpr{x: x, name: t.s, neg: neg}
			if _, ok := tests[t.s]; !ok {
				return nil, &TemplateError{Kind: "TemplateAssertionError", Msg: "No test named '" + t.s + "'."}
			}
			if p.acceptOp("(") {
				args, _, err := p.callArgs()
				if err != nil {
					return nil, err
				}
				te.args = args
			} else if nt := p.peek(); nt.kind == tkStr || nt.kind == tkInt || nt.kind == tkFloat || nt.kind == tkName && nt.s != "and" && nt.s != "or" && nt.s != "else" && nt.s != "if" && nt.s != "in" && nt.s != "not" && nt.s != "is" {
				arg, err := p.primary()
				if err != nil {
					return nil, err
				}
				if arg, err = p.postfix(arg); err != nil {
					return nil, err
				}
				te.args = []expr{arg}
			}
			x = te
		default:
			return x, nil
		}
	}
}

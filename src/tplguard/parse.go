package tplguard

import (
	"strconv"
)

// ---- expressions ----

type tplKind uint8

const (
	kUnknown tplKind = iota
	kInt             // an integer (Python int): repeats strings and lists, grows under **
	kFloat           // a float: cannot repeat anything, ** stays a float
	kSeq             // a string or list
	kOther           // booleans, dicts, None: nothing '*' or '**' can blow up
)

// tplInfo is what the guard knows about a value.
type tplInfo struct {
	kind   tplKind
	isC    bool  // a constant, value in c
	c      int64 // constant integer
	cf     float64
	n      int64 // length of a kSeq when known, else -1
	pow    bool  // an integer raised to a non-constant power
	macro  string
	rangeN int64  // items of a range() value: -1 when its arguments are not constant; 0 if not a range
	list   bool   // a literal string, list or tuple (its own text sets its length)
	str    string // the text of a string literal
	isStr  bool
	loop   bool   // Jinja's loop object: its counters are integers
	ident  string // a global's name (range, int, float): what a call of it does is known
}

var unknownInfo = tplInfo{kind: kUnknown, n: -1}

type tplParser struct {
	g     *tplGuard
	toks  []token
	i     int
	depth int
}

func (p *tplParser) peek() token { return p.toks[p.i] }
func (p *tplParser) next() token {
	t := p.toks[p.i]
	if t.kind != tkEnd {
		p.i++
	}
	p.g.step()
	return t
}
func (p *tplParser) isOp(op string) bool {
	t := p.peek()
	return t.kind == tkOp && t.text == op
}
func (p *tplParser) isName(n string) bool {
	t := p.peek()
	return t.kind == tkName && t.text == n
}
func (p *tplParser) expectOp(op string) {
	if !p.isOp(op) {
		t := p.peek()
		p.g.syntax("cannot be read at line %d: expected %q, found %s", t.line, op, describe(t))
	}
	p.next()
}
func (p *tplParser) expectName() string {
	t := p.peek()
	if t.kind != tkName {
		p.g.syntax("cannot be read at line %d: expected a name, found %s", t.line, describe(t))
	}
	p.next()
	return t.text
}

func describe(t token) string {
	switch t.kind {
	case tkEnd:
		return "the end of the tag"
	case tkString:
		return "a string"
	case tkInt, tkFloat:
		return "a number"
	}
	return strconv.Quote(t.text)
}

func (p *tplParser) enter() {
	if p.depth++; p.depth > tplMaxNesting {
		p.g.fail("nests expressions more than %d deep at line %d; use {%% set %%} for the inner parts", tplMaxNesting, p.peek().line)
	}
}
func (p *tplParser) leave() { p.depth-- }

// tuple parses expr (, expr)* as Jinja does at the top of {{ }} and in set/for/with.
func (p *tplParser) tuple(cond bool) tplInfo {
	v := p.expr(cond)
	if !p.isOp(",") {
		return v
	}
	for p.isOp(",") {
		p.next()
		if p.atTupleEnd() {
			break
		}
		p.expr(cond)
	}
	return tplInfo{kind: kSeq, n: -1}
}

func (p *tplParser) atTupleEnd() bool {
	t := p.peek()
	return t.kind == tkEnd || t.kind == tkOp && (t.text == ")" || t.text == "]" || t.text == "}" || t.text == "=") ||
		t.kind == tkName && (t.text == "in" || t.text == "if" || t.text == "recursive")
}

func (p *tplParser) expr(cond bool) tplInfo {
	p.enter()
	defer p.leave()
	v := p.or()
	if cond && p.isName("if") {
		p.next()
		p.or()
		if p.isName("else") {
			p.next()
			w := p.expr(true)
			return join(v, w)
		}
		return v
	}
	return v
}

func (p *tplParser) or() tplInfo {
	v := p.and()
	for p.isName("or") {
		p.next()
		v = join(v, p.and())
	}
	return v
}

func (p *tplParser) and() tplInfo {
	v := p.not()
	for p.isName("and") {
		p.next()
		v = join(v, p.not())
	}
	return v
}

func (p *tplParser) not() tplInfo {
	if p.isName("not") {
		p.next()
		p.enter()
		defer p.leave()
		p.not()
		return tplInfo{kind: kOther, n: -1}
	}
	return p.compare()
}

func (p *tplParser) compare() tplInfo {
	v := p.math1()
	for {
		t := p.peek()
		switch {
		case t.kind == tkOp && (t.text == "==" || t.text == "!=" || t.text == "<" || t.text == ">" || t.text == "<=" || t.text == ">="),
			t.kind == tkName && t.text == "in":
			p.next()
		case t.kind == tkName && t.text == "not" && p.toks[p.i+1].kind == tkName && p.toks[p.i+1].text == "in":
			p.next()
			p.next()
		default:
			return v
		}
		p.math1()
		v = tplInfo{kind: kOther, n: -1}
	}
}

func (p *tplParser) math1() tplInfo {
	v := p.concat()
	for p.isOp("+") || p.isOp("-") {
		op := p.next().text
		w := p.concat()
		v = p.g.arith(op, v, w)
	}
	return v
}

func (p *tplParser) concat() tplInfo {
	v := p.math2()
	for p.isOp("~") {
		p.next()
		w := p.math2()
		v = tplInfo{kind: kSeq, n: addLen(strLen(v), strLen(w))}
	}
	return v
}

func (p *tplParser) math2() tplInfo {
	v := p.pow()
	for p.isOp("*") || p.isOp("/") || p.isOp("//") || p.isOp("%") {
		t := p.next()
		w := p.pow()
		switch t.text {
		case "*":
			v = p.g.mul(v, w, t.line)
		case "%":
			if v.isStr {
				p.g.checkFormat(v.str, t.line)
				v = tplInfo{kind: kSeq, n: -1}
			} else {
				v = p.g.arith("%", v, w)
			}
		default:
			v = p.g.arith(t.text, v, w)
		}
	}
	return v
}

func (p *tplParser) pow() tplInfo {
	v := p.unary(true)
	for p.isOp("**") {
		t := p.next()
		w := p.unary(true)
		v = p.g.power(v, w, t.line)
	}
	return v
}

func (p *tplParser) unary(filters bool) tplInfo {
	if p.isOp("-") || p.isOp("+") {
		op := p.next().text
		p.enter()
		v := p.unary(false)
		p.leave()
		if op == "-" {
			switch {
			case v.isC && v.kind == kInt:
				v.c = -v.c
			case v.isC && v.kind == kFloat:
				v.cf = -v.cf
			case v.kind == kSeq:
				v = unknownInfo
			}
			v.list = false
		}
		v = p.postfix(v)
		if filters {
			v = p.filters(v)
		}
		return v
	}
	v := p.postfix(p.primary())
	if filters {
		v = p.filters(v)
	}
	return v
}

func (p *tplParser) primary() tplInfo {
	t := p.next()
	switch t.kind {
	case tkInt:
		if t.big {
			p.g.fail("has the number %s at line %d, beyond 64 bits; use a smaller number", t.text, t.line)
		}
		return tplInfo{kind: kInt, isC: true, c: t.ival, n: -1}
	case tkFloat:
		return tplInfo{kind: kFloat, isC: true, cf: t.fval, n: -1}
	case tkString:
		s := t.text
		for p.peek().kind == tkString { // adjacent literals concatenate
			s += p.next().text
		}
		return tplInfo{kind: kSeq, n: int64(len(s)), list: true, str: s, isStr: true}
	case tkName:
		switch t.text {
		case "true", "false", "True", "False", "none", "None":
			return tplInfo{kind: kOther, n: -1}
		}
		return p.g.lookup(t.text)
	case tkOp:
		switch t.text {
		case "(":
			p.enter()
			defer p.leave()
			if p.isOp(")") {
				p.next()
				return tplInfo{kind: kSeq, n: 0, list: true}
			}
			v := p.tuple(true)
			p.expectOp(")")
			return v
		case "[":
			p.enter()
			defer p.leave()
			n := int64(0)
			for !p.isOp("]") {
				p.g.value(p.expr(true), t.line)
				n++
				if !p.isOp(",") {
					break
				}
				p.next()
			}
			p.expectOp("]")
			return tplInfo{kind: kSeq, n: n, list: true}
		case "{":
			p.enter()
			defer p.leave()
			for !p.isOp("}") {
				p.g.value(p.expr(true), t.line)
				p.expectOp(":")
				p.g.value(p.expr(true), t.line)
				if !p.isOp(",") {
					break
				}
				p.next()
			}
			p.expectOp("}")
			return tplInfo{kind: kOther, n: -1}
		}
	}
	p.g.syntax("cannot be read at line %d: expected a value, found %s", t.line, describe(t))
	return unknownInfo
}

// postfix reads attribute access, subscripts and calls.
func (p *tplParser) postfix(v tplInfo) tplInfo {
	for {
		switch {
		case p.isOp("."):
			p.next()
			t := p.next()
			if t.kind != tkName && t.kind != tkInt {
				p.g.syntax("cannot be read at line %d: expected an attribute after '.', found %s", t.line, describe(t))
			}
			p.g.value(v, t.line)
			if p.isOp("(") {
				if (t.text == "format" || t.text == "format_map") && v.isStr {
					p.g.checkFormat(v.str, t.line)
				}
				v = p.call(tplInfo{kind: kUnknown, n: -1}, "."+t.text, t.line)
				continue
			}
			switch {
			case v.loop && (t.text == "index" || t.text == "index0" || t.text == "revindex" || t.text == "revindex0" || t.text == "length" || t.text == "depth" || t.text == "depth0"):
				v = tplInfo{kind: kInt, n: -1}
			default:
				v = unknownInfo
			}
		case p.isOp("["):
			t := p.next()
			p.g.value(v, t.line)
			p.enter()
			for !p.isOp("]") {
				if !p.isOp(":") {
					p.g.value(p.expr(true), t.line)
				}
				if p.isOp(":") {
					p.next()
					continue
				}
				if p.isOp(",") {
					p.next()
					continue
				}
				break
			}
			p.leave()
			p.expectOp("]")
			v = unknownInfo
		case p.isOp("("):
			v = p.call(v, v.ident, p.peek().line)
		default:
			return v
		}
	}
}

// args reads a call's arguments; each is checked as a value except those the caller vouches for.
func (p *tplParser) args() (pos []tplInfo, kw map[string]tplInfo) {
	p.expectOp("(")
	p.enter()
	defer p.leave()
	kw = map[string]tplInfo{}
	for !p.isOp(")") {
		if p.isOp("*") || p.isOp("**") {
			p.next()
		}
		if p.peek().kind == tkName && p.toks[p.i+1].kind == tkOp && p.toks[p.i+1].text == "=" {
			k := p.next().text
			p.next()
			kw[k] = p.expr(true)
		} else {
			pos = append(pos, p.expr(true))
		}
		if !p.isOp(",") {
			break
		}
		p.next()
	}
	p.expectOp(")")
	return pos, kw
}

func (p *tplParser) call(callee tplInfo, name string, line int) tplInfo {
	if callee.macro != "" {
		p.g.useMacro(callee.macro)
	}
	pos, kw := p.args()
	for _, a := range pos {
		p.g.value(a, line)
	}
	for _, a := range kw {
		p.g.value(a, line)
	}
	if callee.macro != "" {
		return unknownInfo
	}
	switch name {
	case "range":
		return p.g.rangeCall(pos, line)
	case "int":
		if len(pos) > 0 && pos[0].isC && pos[0].kind == kInt {
			return pos[0]
		}
		return tplInfo{kind: kInt, n: -1}
	case "float":
		return tplInfo{kind: kFloat, n: -1}
	case ".center", ".ljust", ".rjust", ".zfill", ".expandtabs":
		p.g.widths(name[1:], pos, kw, line)
		return tplInfo{kind: kSeq, n: -1}
	case ".replace":
		p.g.replaceArgs(pos, line)
		return tplInfo{kind: kSeq, n: -1}
	case ".format", ".format_map":
		return tplInfo{kind: kSeq, n: -1}
	case ".join", ".upper", ".lower", ".strip", ".title", ".capitalize":
		return tplInfo{kind: kSeq, n: -1}
	}
	return unknownInfo
}

// filters reads | filter chains and is tests.
func (p *tplParser) filters(v tplInfo) tplInfo {
	for {
		switch {
		case p.isOp("|"):
			t := p.next()
			name := p.expectName()
			for p.isOp(".") { // dotted filter names
				p.next()
				name += "." + p.expectName()
			}
			var pos []tplInfo
			var kw map[string]tplInfo
			if p.isOp("(") {
				pos, kw = p.args()
			}
			v = p.g.filter(name, v, pos, kw, t.line)
		case p.isName("is"):
			t := p.next()
			if p.isName("not") {
				p.next()
			}
			name := p.expectName()
			for p.isOp(".") {
				p.next()
				name += "." + p.expectName()
			}
			p.g.value(v, t.line)
			if p.isOp("(") {
				pos, kw := p.args()
				p.g.applyArgs(name, pos, kw, t.line)
			} else if n := p.peek(); (n.kind == tkName && n.text != "else" && n.text != "or" && n.text != "and" && n.text != "if" && n.text != "in" && n.text != "not" && n.text != "is" && n.text != "recursive") ||
				n.kind == tkString || n.kind == tkInt || n.kind == tkFloat || n.kind == tkOp && (n.text == "[" || n.text == "{") {
				p.g.value(p.postfix(p.primary()), t.line)
			}
			v = tplInfo{kind: kOther, n: -1}
		default:
			return v
		}
	}
}

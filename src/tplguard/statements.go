package tplguard

import (
	"strings"
)

// ---- statements ----

type block struct {
	name  string // for, if, macro, call, filter, set, with
	loop  bool   // pushed a loop frame
	macro string // the macro a macro block defines
	prev  string // the macro being read before it
	saved []loopFrame
	line  int
	deps  map[string]map[string]int // in loops: what each name set in this pass carries, and how often
}

func (g *tplGuard) run() (err error) {
	defer func() {
		if r := recover(); r != nil {
			ge, ok := r.(*guardError)
			if !ok {
				panic(r)
			}
			err = &Error{Msg: ge.msg, Syntax: ge.syntax}
		}
	}()
	tags := g.lex()
	g.info, g.aliases = map[string]*macroInfo{}, map[string]bool{}
	// Macros are known by name before any body is read: a macro may call one defined after it.
	for _, t := range tags {
		if t.stmt && len(t.toks) > 1 && t.toks[0].kind == tkName && t.toks[0].text == "macro" && t.toks[1].kind == tkName {
			g.macros[t.toks[1].text] = true
			if g.info[t.toks[1].text] == nil {
				g.info[t.toks[1].text] = &macroInfo{line: t.line}
			}
		}
	}
	g.aliasScan(tags)
	var stack []*block
	for _, t := range tags {
		g.line = t.line
		p := &tplParser{g: g, toks: t.toks}
		if !t.stmt {
			if p.peek().kind != tkEnd {
				g.value(p.tuple(true), t.line)
			}
			p.end()
			continue
		}
		stack = g.statement(p, stack)
	}
	if len(stack) > 0 {
		b := stack[len(stack)-1]
		g.syntax("has {%% %s %%} at line %d without {%% end%s %%}", b.name, b.line, b.name)
	}
	g.checkMacros()
	return nil
}

func (p *tplParser) end() {
	if t := p.peek(); t.kind != tkEnd {
		p.g.syntax("cannot be read at line %d: expected the end of the tag, found %s", t.line, describe(t))
	}
}

func (g *tplGuard) statement(p *tplParser, stack []*block) []*block {
	t := p.peek()
	if t.kind != tkName {
		g.syntax("cannot be read at line %d: a tag must start with a name, found %s", t.line, describe(t))
	}
	name := p.next().text
	top := func() *block {
		if len(stack) == 0 {
			return nil
		}
		return stack[len(stack)-1]
	}
	closeBlock := func(want string) {
		b := top()
		if b == nil || b.name != want {
			g.syntax("has {%% end%s %%} at line %d with no open {%% %s %%}", want, t.line, want)
		}
		stack = stack[:len(stack)-1]
		if b.loop {
			g.popLoop()
		}
		if b.name == "macro" {
			g.cur = b.prev
			g.loops = b.saved
		}
	}
	switch name {
	case "for":
		targets := g.targets(p)
		if !p.isName("in") {
			g.syntax("cannot be read at line %d: expected 'in' in the for loop", t.line)
		}
		p.next()
		it := p.tuple(false)
		g.value(it, t.line)
		if p.isName("if") {
			p.next()
			p.expr(false)
		}
		if p.isName("recursive") {
			g.fail("uses a recursive loop at line %d, which can call itself without bound; loop over the items directly", t.line)
		}
		p.end()
		f := loopFrame{n: -1}
		switch {
		case it.rangeN < 0:
			f.unbounded = true
		case it.rangeN > 0:
			f.n = it.rangeN
		case it.kind == kSeq && it.n >= 0 && !it.list:
			f.n = max(it.n, 1) // a repeated list or string: as many items as it was built with
		}
		if len(g.loops) > 0 && f.n < 0 && !f.unbounded && it.kind == kSeq && it.list {
			f.n = max(it.n, 1)
		}
		g.pushLoop(f, t.line)
		for _, n := range targets {
			if it.rangeN != 0 {
				g.vars[n] = tplInfo{kind: kInt, n: -1}
			} else {
				g.vars[n] = unknownInfo
			}
		}
		stack = append(stack, &block{name: "for", loop: true, line: t.line, deps: map[string]map[string]int{}})
	case "endfor":
		p.end()
		closeBlock("for")
	case "if":
		p.expr(true)
		p.end()
		stack = append(stack, &block{name: "if", line: t.line})
	case "elif":
		p.expr(true)
		p.end()
		if b := top(); b == nil || b.name != "if" {
			g.syntax("has {%% elif %%} at line %d outside an if", t.line)
		}
	case "else":
		p.end()
		if b := top(); b == nil || b.name != "if" && b.name != "for" {
			g.syntax("has {%% else %%} at line %d outside an if or for", t.line)
		}
	case "endif":
		p.end()
		closeBlock("if")
	case "set":
		targets := g.targetNames(p)
		if p.isOp("=") {
			p.next()
			start := p.i
			g.repeated = false
			v := p.tuple(true)
			p.end()
			g.assigned(targets, v, p.toks[start:p.i], g.repeated, stack, t.line)
		} else {
			if p.isOp("|") {
				p.filters(tplInfo{kind: kSeq, n: -1})
			}
			p.end()
			for _, n := range targets {
				g.vars[n] = tplInfo{kind: kSeq, n: -1}
			}
			stack = append(stack, &block{name: "set", line: t.line})
		}
	case "endset":
		p.end()
		closeBlock("set")
	case "macro":
		m := p.expectName()
		if len(g.loops) > 0 || g.cur != "" {
			g.fail("defines the macro %s inside a loop or another macro at line %d; define macros at the top level", m, t.line)
		}
		if b := top(); b != nil {
			g.fail("defines the macro %s inside {%% %s %%} at line %d; define macros at the top level", m, b.name, t.line)
		}
		b := &block{name: "macro", macro: m, prev: g.cur, saved: g.loops, line: t.line}
		g.cur, g.loops = m, nil
		g.params(p)
		p.end()
		stack = append(stack, b)
	case "endmacro":
		p.end()
		closeBlock("macro")
	case "call":
		if p.isOp("(") {
			g.params(p)
		}
		g.value(p.expr(true), t.line)
		p.end()
		stack = append(stack, &block{name: "call", line: t.line})
	case "endcall":
		p.end()
		closeBlock("call")
	case "filter":
		p.expectName()
		if p.isOp("(") {
			pos, kw := p.args()
			g.applyArgs("", pos, kw, t.line)
		}
		p.filters(tplInfo{kind: kSeq, n: -1})
		p.end()
		stack = append(stack, &block{name: "filter", line: t.line})
	case "endfilter":
		p.end()
		closeBlock("filter")
	case "with":
		for p.peek().kind != tkEnd {
			targets := g.targetNames(p)
			p.expectOp("=")
			v := p.expr(true)
			g.value(v, t.line)
			for _, n := range targets {
				g.vars[n] = v
			}
			if p.isOp(",") {
				p.next()
			}
		}
		stack = append(stack, &block{name: "with", line: t.line})
	case "endwith":
		p.end()
		closeBlock("with")
	case "do":
		g.value(p.tuple(true), t.line)
		p.end()
	case "break", "continue", "raw": // a raw block's text was skipped by the lexer
		p.end()
	case "import", "from", "include":
		// Custom templates are the user's own files, not the model's words; their names are read
		// so that nothing is mistaken for a macro of this template.
		for p.peek().kind != tkEnd {
			tk := p.next()
			if tk.kind == tkName && g.macros[tk.text] {
				g.fail("imports over the macro name %s at line %d; use another name", tk.text, t.line)
			}
		}
	default:
		g.syntax("uses {%% %s %%} at line %d, which Home Assistant's templates do not have", name, t.line)
	}
	return stack
}

// targets reads a for loop's names.
func (g *tplGuard) targets(p *tplParser) []string {
	var names []string
	for {
		if p.isOp("(") {
			p.next()
			names = append(names, g.targets(p)...)
			p.expectOp(")")
		} else {
			names = append(names, p.expectName())
		}
		if !p.isOp(",") {
			return names
		}
		p.next()
	}
}

// targetNames reads a set's targets: names, ns.attr, or a tuple of names.
func (g *tplGuard) targetNames(p *tplParser) []string {
	var names []string
	for {
		n := p.expectName()
		for p.isOp(".") {
			p.next()
			n += "." + p.expectName()
		}
		if g.macros[n] && !g.aliases[n] {
			g.fail("assigns to the macro name %s at line %d; use another name", n, p.peek().line)
		}
		names = append(names, n)
		if !p.isOp(",") {
			return names
		}
		p.next()
	}
}

// params reads a macro's or call block's parameters and their defaults.
func (g *tplGuard) params(p *tplParser) {
	p.expectOp("(")
	for !p.isOp(")") {
		n := p.expectName()
		if g.macros[n] {
			g.fail("names a parameter like the macro %s at line %d; use another name", n, p.peek().line)
		}
		g.vars[n] = unknownInfo
		if p.isOp("=") {
			p.next()
			g.value(p.expr(true), p.peek().line)
		}
		if !p.isOp(",") {
			break
		}
		p.next()
	}
	p.expectOp(")")
}

// assigned records a {% set %}: the value's kind for later '*' and '**' checks, and, inside a
// loop, whether a target grows from itself faster than by adding once per pass: ns.s = ns.s ~ ns.s
// or ns.s = ns.s * 2 doubles every pass, exponential in the loop's length.
func (g *tplGuard) assigned(targets []string, v tplInfo, rhs []token, repeated bool, stack []*block, line int) {
	if v.macro != "" {
		if len(targets) != 1 || strings.Contains(targets[0], ".") {
			g.value(v, line)
		}
		if g.info[targets[0]] == nil { // aliases are found before reading (aliasScan); this is a fallback
			g.macros[targets[0]] = true
			g.info[targets[0]] = &macroInfo{line: line, calls: []macroCall{{to: v.macro, line: line}}}
		}
		return
	}
	for _, n := range targets {
		g.vars[n] = v
		if len(targets) > 1 {
			g.vars[n] = unknownInfo
		}
	}
	var loop *block
	for i := len(stack) - 1; i >= 0 && loop == nil; i-- {
		if stack[i].name == "for" {
			loop = stack[i]
		}
	}
	if loop == nil {
		return
	}
	paths := dottedPaths(rhs)
	for _, tgt := range targets {
		count := 0
		carried := map[string]int{}
		for path, c := range paths {
			g.step()
			if path == tgt || strings.HasPrefix(path, tgt+".") || strings.HasPrefix(tgt, path+".") {
				count += c
			}
			count += c * loop.deps[path][tgt]
			carried[path] = min(carried[path]+c, 2)
			for k, n := range loop.deps[path] {
				carried[k] = min(carried[k]+c*n, 2)
			}
		}
		if count > 1 || count == 1 && repeated {
			g.fail("sets %s at line %d from itself in a way that doubles it on every pass of the loop; add to it once per pass instead (e.g. {%% set %s = %s + [x] %%})", tgt, line, tgt, tgt)
		}
		loop.deps[tgt] = carried
	}
}

// dottedPaths counts the names an expression reads, with their attributes (ns.s).
func dottedPaths(toks []token) map[string]int {
	out := map[string]int{}
	for i := 0; i < len(toks); i++ {
		if toks[i].kind != tkName || i > 0 && toks[i-1].kind == tkOp && toks[i-1].text == "." {
			continue
		}
		n := toks[i].text
		for i+2 < len(toks) && toks[i+1].kind == tkOp && toks[i+1].text == "." && toks[i+2].kind == tkName {
			n += "." + toks[i+2].text
			i += 2
		}
		out[n] = min(out[n]+1, 2)
	}
	return out
}

// aliasScan finds {% set f = m | as_function %} (or = m) before any body is read, so that a macro
// calling f before the set is seen still counts as calling m.
func (g *tplGuard) aliasScan(tags []tag) {
	for _, t := range tags {
		if !t.stmt || len(t.toks) < 4 || t.toks[0].kind != tkName || t.toks[0].text != "set" || t.toks[1].kind != tkName || t.toks[2].kind != tkOp || t.toks[2].text != "=" {
			continue
		}
		rhs := t.toks[3:]
		plain := len(rhs) == 2 // m, then the end of the tag
		asFunc := len(rhs) == 4 && rhs[1].kind == tkOp && rhs[1].text == "|" && rhs[2].kind == tkName && rhs[2].text == "as_function"
		if rhs[0].kind == tkName && g.macros[rhs[0].text] && (plain || asFunc) && g.info[t.toks[1].text] == nil {
			g.macros[t.toks[1].text], g.aliases[t.toks[1].text] = true, true
			g.info[t.toks[1].text] = &macroInfo{line: t.line, calls: []macroCall{{to: rhs[0].text, line: t.line}}}
		}
	}
}

// checkMacros refuses recursion (a macro reaching itself through its calls) and macros called
// in loops whose own loops nest the whole too deep.
func (g *tplGuard) checkMacros() {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var visit func(m string, from macroCall)
	visit = func(m string, from macroCall) {
		g.step()
		info := g.info[m]
		if info == nil {
			return
		}
		switch color[m] {
		case grey:
			g.fail("calls the macro %s from itself (directly or through other macros, line %d), which can recurse without bound; compute the result with a loop instead", m, from.line)
		case black:
			return
		}
		color[m] = grey
		for _, c := range info.calls {
			visit(c.to, c)
			if callee := g.info[c.to]; callee != nil {
				g.combine(info, c, callee)
			}
		}
		color[m] = black
	}
	for m := range g.info {
		visit(m, macroCall{line: g.info[m].line})
	}
	for _, c := range g.top.calls {
		if callee := g.info[c.to]; callee != nil {
			g.combine(&g.top, c, callee)
		}
	}
}

// combine folds a resolved callee's loops into its caller at the call's loop depth.
func (g *tplGuard) combine(caller *macroInfo, c macroCall, callee *macroInfo) {
	if callee.depth == 0 {
		return
	}
	if d := c.depth + callee.depth; d > tplMaxLoopDepth {
		g.fail("nests loops %d deep by calling the macro %s inside loops at line %d; nest at most %d", d, c.to, c.line, tplMaxLoopDepth)
	}
	if c.depth > 0 && (callee.unbounded || c.unbounded) {
		g.fail("calls the macro %s inside a loop at line %d where one of the loops is over range() with arguments only known when it renders; use constant range() bounds", c.to, c.line)
	}
	if p := mulCap(max(c.product, 1), max(callee.product, 1)); p > tplMaxIterations {
		g.fail("loops %d times over range() by calling the macro %s inside loops at line %d; keep nested range() loops to %d iterations in all", p, c.to, c.line, tplMaxIterations)
	}
	caller.depth = max(caller.depth, c.depth+callee.depth)
	caller.product = max(caller.product, mulCap(max(c.product, 1), max(callee.product, 1)))
	caller.unbounded = caller.unbounded || callee.unbounded
}

package tplguard

import (
	"math"
	"strconv"
	"strings"
)

// ---- what the guard tracks ----

type loopFrame struct {
	n         int64 // iterations when known (a constant range or a literal), else -1
	unbounded bool  // a range() whose length is only known when it renders
}

// macroInfo is what one macro's body does, filled while it is read.
type macroInfo struct {
	depth     int   // deepest loop nest inside it, its own calls included once resolved
	product   int64 // largest iteration product inside it
	unbounded bool  // holds a range() with non-constant arguments
	calls     []macroCall
	line      int
}

type macroCall struct {
	to        string
	depth     int // loop depth at the call
	product   int64
	unbounded bool
	line      int
}

type tplGuard struct {
	src      string
	steps    int
	vars     map[string]tplInfo
	macros   map[string]bool // names defined by {% macro %} (and aliases made with as_function)
	aliases  map[string]bool // of those, the aliases
	info     map[string]*macroInfo
	cur      string // macro being read, "" at top level
	loops    []loopFrame
	top      macroInfo // the top level, as if a macro
	repeated bool      // the expression just read repeats or raises something non-float
	line     int       // line of the tag being read
}

func (g *tplGuard) step() { g.steps++ }

func (g *tplGuard) scope() *macroInfo {
	if g.cur == "" {
		return &g.top
	}
	return g.info[g.cur]
}

// tplUnknownLoop is what a loop over something of unknown size (states, a list of areas) counts
// for, once a constant range() is in the same nest: a home has thousands of entities.
const tplUnknownLoop = 100

// product is the iterations of the current loop nest, extra more (0: none): the constant
// ranges multiplied, with loops of unknown size as tplUnknownLoop. With no constant range in the
// nest it is 1: loops over the home's own things are bounded by the home.
func (g *tplGuard) product() int64 { return g.productWith(0) }

func (g *tplGuard) productWith(extra int64) int64 {
	p, known := int64(1), extra > 0
	if known {
		p = extra
	}
	for _, f := range g.loops {
		if f.n > 0 {
			p, known = mulCap(p, f.n), true
		} else {
			p = mulCap(p, tplUnknownLoop)
		}
	}
	if !known {
		return 1
	}
	return p
}

func (g *tplGuard) anyUnbounded() bool {
	for _, f := range g.loops {
		if f.unbounded {
			return true
		}
	}
	return false
}

// pushLoop enters a loop over something of n items (-1 unknown).
func (g *tplGuard) pushLoop(f loopFrame, line int) {
	if len(g.loops) > 0 && (f.unbounded || g.anyUnbounded()) {
		g.fail("nests a loop over range() with arguments only known when it renders at line %d; use constant range() bounds (at most %d items in all) or loop over a list of entities instead", line, tplMaxIterations)
	}
	g.loops = append(g.loops, f)
	if len(g.loops) > tplMaxLoopDepth {
		g.fail("nests loops %d deep at line %d; nest at most %d", len(g.loops), line, tplMaxLoopDepth)
	}
	if p := g.product(); p > tplMaxIterations {
		g.fail("loops %d times over range() at line %d; keep nested range() loops to %d iterations in all", p, line, tplMaxIterations)
	}
	s := g.scope()
	s.depth = max(s.depth, len(g.loops))
	s.product = max(s.product, g.product())
	if f.unbounded {
		s.unbounded = true
	}
}

func (g *tplGuard) popLoop() { g.loops = g.loops[:len(g.loops)-1] }

func (g *tplGuard) lookup(name string) tplInfo {
	if v, ok := g.vars[name]; ok {
		return v
	}
	if g.macros[name] {
		return tplInfo{kind: kOther, n: -1, macro: name}
	}
	switch name {
	case "loop": // loop.index and friends are integers; loop() is refused with recursive loops
		return tplInfo{kind: kOther, n: -1, loop: true}
	}
	return tplInfo{kind: kUnknown, n: -1, ident: name}
}

// value checks a value used where it could reach anything: a macro may only be called, turned
// into a function with as_function, or handed to apply; passed around otherwise it could be
// called by a macro with itself, a recursion no call graph shows.
func (g *tplGuard) value(v tplInfo, line int) {
	if v.macro != "" {
		g.fail("passes the macro %s around as a value at line %d; call it directly, e.g. {{ %s(...) }}", v.macro, line, v.macro)
	}
}

// useMacro records a call (or apply/as_function) of macro m at the current loop depth.
func (g *tplGuard) useMacro(m string) {
	s := g.scope()
	s.calls = append(s.calls, macroCall{to: m, depth: len(g.loops), product: g.product(), unbounded: g.anyUnbounded(), line: g.line})
}

func (g *tplGuard) rangeCall(args []tplInfo, line int) tplInfo {
	if len(args) == 0 || len(args) > 3 {
		return tplInfo{kind: kSeq, n: -1, rangeN: -1}
	}
	start, stop, stepv := int64(0), int64(0), int64(1)
	for _, a := range args {
		if !(a.isC && a.kind == kInt) {
			if len(g.loops) > 0 {
				g.fail("calls range() inside a loop at line %d with arguments only known when it renders; use constant bounds (at most %d items)", line, tplMaxIterations)
			}
			return tplInfo{kind: kSeq, n: -1, rangeN: -1}
		}
	}
	switch len(args) {
	case 1:
		stop = args[0].c
	case 2:
		start, stop = args[0].c, args[1].c
	case 3:
		start, stop, stepv = args[0].c, args[1].c, args[2].c
	}
	n := int64(0)
	switch {
	case stepv > 0 && stop > start:
		n = (stop-start-1)/stepv + 1
	case stepv < 0 && start > stop:
		n = (start-stop-1)/(-stepv) + 1
	}
	if n < 0 || n > tplMaxIterations || g.productWith(max(n, 1)) > tplMaxIterations {
		g.fail("calls range() for %d items at line %d (%d iterations with the loops around it); keep range() loops to %d iterations in all", n, line, g.productWith(max(n, 1)), tplMaxIterations)
	}
	return tplInfo{kind: kSeq, n: n, rangeN: max(n, 1)}
}

var floatFilters = map[string]bool{"float": true, "round": true, "log": true, "sqrt": true, "sin": true, "cos": true, "tan": true,
	"asin": true, "acos": true, "atan": true, "atan2": true, "multiply": true, "average": true, "median": true, "statistical_mode": true,
	"as_timestamp": true}
var seqFilters = map[string]bool{"string": true, "join": true, "list": true, "to_json": true, "tojson": true, "e": true, "escape": true,
	"upper": true, "lower": true, "title": true, "capitalize": true, "trim": true, "striptags": true, "urlencode": true, "slugify": true,
	"regex_replace": true, "regex_findall": true, "sort": true, "unique": true, "reverse": true, "select": true, "reject": true,
	"selectattr": true, "rejectattr": true, "map": true, "batch": true, "slice": true, "items": true, "dictsort": true, "pprint": true,
	"base64_encode": true, "base64_decode": true, "truncate": true, "wordwrap": true, "safe": true, "forceescape": true}

func (g *tplGuard) filter(name string, in tplInfo, pos []tplInfo, kw map[string]tplInfo, line int) tplInfo {
	if name == "as_function" && in.macro != "" {
		g.useMacro(in.macro)
		return in
	}
	g.value(in, line)
	g.applyArgs(name, pos, kw, line)
	switch name {
	case "int":
		if in.isC && in.kind == kInt {
			return in
		}
		if in.isStr {
			if v, err := strconv.ParseInt(strings.TrimSpace(in.str), 10, 64); err == nil {
				return tplInfo{kind: kInt, isC: true, c: v, n: -1}
			}
		}
		return tplInfo{kind: kInt, n: -1}
	case "length", "count", "wordcount":
		return tplInfo{kind: kInt, n: -1}
	case "abs":
		in.list = false
		return in
	case "center", "indent":
		g.widths(name, pos, kw, line)
		return tplInfo{kind: kSeq, n: -1}
	case "replace":
		g.replaceArgs(pos, line)
		return tplInfo{kind: kSeq, n: -1}
	case "format":
		if in.isStr {
			g.checkFormat(in.str, line)
		}
		return tplInfo{kind: kSeq, n: -1}
	}
	if floatFilters[name] {
		return tplInfo{kind: kFloat, n: -1}
	}
	if seqFilters[name] {
		out := tplInfo{kind: kSeq, n: -1}
		if in.rangeN != 0 && name != "string" && name != "join" && name != "to_json" && name != "tojson" && name != "pprint" {
			out.rangeN, out.n = in.rangeN, in.n // still as many items to loop over
		}
		return out
	}
	return unknownInfo
}

// applyArgs checks a filter's or test's arguments; apply (and map('apply', ...)) may take a macro
// as its function: it calls the macro with the values it maps, never with another macro.
func (g *tplGuard) applyArgs(name string, pos []tplInfo, kw map[string]tplInfo, line int) {
	for i, a := range pos {
		if a.macro != "" && (name == "apply" && i == 0 || name == "map" && i == 1 || name == "select" && i == 1 || name == "reject" && i == 1) {
			g.useMacro(a.macro)
			continue
		}
		g.value(a, line)
	}
	for _, a := range kw {
		g.value(a, line)
	}
}

// widths checks the padding arguments of center, ljust, rjust, zfill, expandtabs and indent.
func (g *tplGuard) widths(name string, pos []tplInfo, kw map[string]tplInfo, line int) {
	all := append([]tplInfo(nil), pos...)
	for _, a := range kw {
		all = append(all, a)
	}
	for _, a := range all {
		switch {
		case a.isC && a.kind == kInt && a.c <= tplMaxWidth:
		case a.kind == kSeq && a.list && a.n <= tplMaxWidth, a.kind == kOther:
		default:
			g.fail("pads with %s at line %d to a width that is not a constant up to %d; use a constant width", name, line, tplMaxWidth)
		}
	}
}

// replaceArgs refuses replacing the empty string, which inserts between every character.
func (g *tplGuard) replaceArgs(pos []tplInfo, line int) {
	if len(pos) > 0 && pos[0].kind == kSeq && pos[0].list && pos[0].n == 0 {
		g.fail("replaces the empty string at line %d, which inserts text between every character; replace a non-empty string", line)
	}
}

// checkFormat reads a %- or {}-style format string and refuses large or computed widths.
func (g *tplGuard) checkFormat(f string, line int) {
	refuse := func() {
		g.fail("formats with a width or precision that is computed or over %d at line %d; use a constant up to %d", tplMaxWidth, line, tplMaxWidth)
	}
	num := func(i int) (int, int64) {
		v := int64(0)
		for i < len(f) && isDigit(f[i]) {
			v = mulCap(v, 10) + int64(f[i]-'0')
			i++
			g.step()
		}
		return i, v
	}
	for i := 0; i < len(f); i++ {
		g.step()
		switch f[i] {
		case '%':
			j := i + 1
			if j < len(f) && f[j] == '(' {
				if k := strings.IndexByte(f[j:], ')'); k >= 0 {
					j += k + 1
				}
			}
			for j < len(f) && strings.IndexByte("#0- +", f[j]) >= 0 {
				j++
			}
			for _, part := range []bool{true, false} {
				if !part {
					if j >= len(f) || f[j] != '.' {
						break
					}
					j++
				}
				if j < len(f) && f[j] == '*' {
					refuse()
				}
				var v int64
				j, v = num(j)
				if v > tplMaxWidth {
					refuse()
				}
			}
			i = j - 1
			if i < len(f)-1 && f[i+1] == '%' {
				i++
			}
		case '{':
			end := strings.IndexByte(f[i+1:], '}')
			if end < 0 {
				continue
			}
			spec := f[i+1 : i+1+end]
			if strings.Contains(spec, "{") {
				refuse()
			}
			if c := strings.IndexByte(spec, ':'); c >= 0 {
				s := spec[c+1:]
				for k := 0; k < len(s); k++ {
					if isDigit(s[k]) {
						var v int64
						n, v := 0, int64(0)
						for n = k; n < len(s) && isDigit(s[n]); n++ {
							v = mulCap(v, 10) + int64(s[n]-'0')
						}
						if v > tplMaxWidth {
							refuse()
						}
						k = n
					}
				}
			}
			i += end
		}
	}
}

// mul is '*': numbers multiply, strings and lists repeat.
func (g *tplGuard) mul(a, b tplInfo, line int) tplInfo {
	switch {
	case a.kind == kFloat || b.kind == kFloat:
		return g.arith("*", a, b)
	case a.kind == kInt && b.kind == kInt:
		return g.arith("*", a, b)
	}
	g.repeated = true
	n, other := a, b
	if b.kind == kInt {
		n, other = b, a
	}
	if n.kind != kInt {
		g.fail("multiplies at line %d without a number on either side, which repeats a string or list without bound; convert one side first, e.g. x|float * y", line)
	}
	if !n.isC {
		g.fail("repeats a value with '*' at line %d a number of times only known when it renders; convert the other side with |float if it is a number, or repeat a constant number of times", line)
	}
	if other.kind == kSeq && other.n >= 0 {
		if n.c > tplMaxRepeat || mulCap(other.n, max(n.c, 0)) > tplMaxBuilt {
			g.fail("repeats a string or list with '*' at line %d into %d items; keep it under %d", line, mulCap(other.n, max(n.c, 0)), tplMaxBuilt)
		}
		return tplInfo{kind: kSeq, n: other.n * max(n.c, 0)}
	}
	if n.c > tplMaxRepeatAny {
		g.fail("multiplies a value of unknown type by %d at line %d, which would repeat it if it is a string or list; convert it first, e.g. x|float * %d", n.c, line, n.c)
	}
	if other.kind == kSeq {
		return tplInfo{kind: kSeq, n: -1}
	}
	return unknownInfo
}

// power is '**': floats stay floats; on integers it grows with the exponent.
func (g *tplGuard) power(a, b tplInfo, line int) tplInfo {
	if a.kind == kFloat || b.kind == kFloat && b.isC {
		if a.isC && b.isC {
			x, y := a.float(), b.float()
			if a.kind == kInt && b.kind == kFloat && math.Abs(y) > tplMaxExponent && math.Abs(x) > 1 {
				g.fail("raises %v to %v at line %d; keep exponents of numbers above 1 within %d", x, y, line, tplMaxExponent)
			}
			return tplInfo{kind: kFloat, isC: true, cf: math.Pow(x, y), n: -1}
		}
		return tplInfo{kind: kFloat, n: -1}
	}
	if !a.isC {
		g.repeated = true
	}
	if !(b.isC && b.kind == kInt) || b.c > tplMaxExponent {
		g.fail("raises to a power at line %d that is not a constant up to %d; use a constant exponent, or |float the base", line, tplMaxExponent)
	}
	if a.pow {
		g.fail("raises a power to a power at line %d; write a single power with a constant exponent", line)
	}
	if a.isC && a.kind == kInt {
		r, ok := ipow(a.c, b.c)
		if !ok {
			g.fail("computes %d ** %d at line %d, beyond 64 bits; use a smaller number", a.c, b.c, line)
		}
		return tplInfo{kind: kInt, isC: true, c: r, n: -1}
	}
	kind := kUnknown
	if a.kind == kInt {
		kind = kInt
	}
	return tplInfo{kind: kind, n: -1, pow: true}
}

// arith is + - / // % and numeric *; constant integers fold, refusing beyond 64 bits.
func (g *tplGuard) arith(op string, a, b tplInfo) tplInfo {
	if op == "+" && (a.kind == kSeq || b.kind == kSeq) {
		return tplInfo{kind: kSeq, n: addLen(strLen(a), strLen(b))}
	}
	isNum := func(v tplInfo) bool { return v.kind == kInt || v.kind == kFloat }
	if op == "/" && (isNum(a) || isNum(b)) {
		return tplInfo{kind: kFloat, n: -1}
	}
	if a.kind == kInt && b.kind == kInt {
		if a.isC && b.isC {
			if r, ok := ifold(op, a.c, b.c); ok {
				return tplInfo{kind: kInt, isC: true, c: r, n: -1}
			}
			g.fail("computes %d %s %d at line %d, beyond 64 bits; use smaller numbers", a.c, op, b.c, g.line)
		}
		return tplInfo{kind: kInt, n: -1, pow: a.pow || b.pow}
	}
	if isNum(a) && isNum(b) {
		if a.isC && b.isC {
			x, y := a.float(), b.float()
			switch op {
			case "+":
				return tplInfo{kind: kFloat, isC: true, cf: x + y, n: -1}
			case "-":
				return tplInfo{kind: kFloat, isC: true, cf: x - y, n: -1}
			case "*":
				return tplInfo{kind: kFloat, isC: true, cf: x * y, n: -1}
			}
		}
		return tplInfo{kind: kFloat, n: -1}
	}
	if op == "-" && (isNum(a) || isNum(b)) {
		k := a.kind
		if k != kFloat && b.kind == kFloat {
			k = kFloat
		}
		if k != kInt && k != kFloat {
			k = b.kind
		}
		return tplInfo{kind: k, n: -1, pow: a.pow || b.pow}
	}
	if a.pow || b.pow {
		return tplInfo{kind: kUnknown, n: -1, pow: true}
	}
	return unknownInfo
}

func (v tplInfo) float() float64 {
	if v.kind == kInt {
		return float64(v.c)
	}
	return v.cf
}

func ifold(op string, a, b int64) (int64, bool) {
	switch op {
	case "+":
		r := a + b
		return r, (r > a) == (b > 0) || b == 0
	case "-":
		r := a - b
		return r, (r < a) == (b > 0) || b == 0
	case "*":
		if a == 0 || b == 0 {
			return 0, true
		}
		r := a * b
		return r, r/b == a && !(a == -1 && b == math.MinInt64) && !(b == -1 && a == math.MinInt64)
	case "//", "%":
		if b == 0 || a == math.MinInt64 && b == -1 {
			return 0, true // HA raises ZeroDivisionError: cheap
		}
		if op == "//" {
			return a / b, true
		}
		return a % b, true
	}
	return 0, true
}

func ipow(a, b int64) (int64, bool) {
	if b < 0 {
		return 0, true // a float in Python: cheap
	}
	r := int64(1)
	for range b {
		var ok bool
		if r, ok = ifold("*", r, a); !ok {
			return 0, false
		}
	}
	return r, true
}

func mulCap(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

func strLen(v tplInfo) int64 {
	if v.kind == kSeq {
		return v.n
	}
	if v.isC {
		return 20
	}
	return -1
}

func addLen(a, b int64) int64 {
	if a < 0 || b < 0 {
		return -1
	}
	return a + b
}

func join(a, b tplInfo) tplInfo {
	if a.macro != "" || b.macro != "" {
		m := a.macro
		if m == "" {
			m = b.macro
		}
		return tplInfo{kind: kOther, n: -1, macro: m}
	}
	if a.kind == b.kind && a.kind != kSeq {
		return tplInfo{kind: a.kind, n: -1, pow: a.pow || b.pow}
	}
	return tplInfo{kind: kUnknown, n: -1, pow: a.pow || b.pow}
}

package hass

import (
	"sort"
	"strings"

	"github.com/hamcp/hamcp/src/sim/home"
)

const (
	maxOutput = 1 << 20
	maxSteps  = 500_000
)

// Listeners is what a render touched, reported by WS render_template so
// clients know when it would re-render.
type Listeners struct {
	All      bool     `json:"all"`
	Domains  []string `json:"domains"`
	Entities []string `json:"entities"`
	Time     bool     `json:"time"`
}

type renderer struct {
	source   string
	snap     *home.Snapshot
	scopes   []map[string]any
	out      strings.Builder
	steps    int
	all      bool
	domains  map[string]bool
	entities map[string]bool
	time     bool
}

func newRenderer(snap *home.Snapshot, vars map[string]any) *renderer {
	r := &renderer{snap: snap, domains: map[string]bool{}, entities: map[string]bool{}}
	top := map[string]any{}
	for k, v := range vars {
		top[k] = fromGo(v)
	}
	r.scopes = []map[string]any{top}
	return r
}

func (r *renderer) listeners() Listeners {
	l := Listeners{All: r.all, Time: r.time, Domains: []string{}, Entities: []string{}}
	for d := range r.domains {
		l.Domains = append(l.Domains, d)
	}
	for e := range r.entities {
		l.Entities = append(l.Entities, e)
	}
	sort.Strings(l.Domains)
	sort.Strings(l.Entities)
	return l
}

func (r *renderer) tick() error {
	r.steps++
	if r.steps > maxSteps {
		return &TemplateError{Kind: "TemplateError", Msg: "template is too complex to render (step limit reached)"}
	}
	return nil
}

func (r *renderer) write(s string) error {
	if r.out.Len()+len(s) > maxOutput {
		return &TemplateError{Kind: "TemplateError", Msg: "rendered template is too large"}
	}
	r.out.WriteString(s)
	return nil
}

func (r *renderer) lookup(name string) any {
	for i := len(r.scopes) - 1; i >= 0; i-- {
		if v, ok := r.scopes[i][name]; ok {
			return v
		}
	}
	if name == "states" {
		return &statesVal{}
	}
	if f, ok := globals[name]; ok {
		return f
	}
	return undefined{hint: "'" + name + "' is undefined"}
}

func (r *renderer) run(nodes []tnode) error {
	for _, n := range nodes {
		if err := r.tick(); err != nil {
			return err
		}
		switch x := n.(type) {
		case textNode:
			if err := r.write(x.s); err != nil {
				return err
			}
		case outputNode:
			v, err := r.eval(x.e)
			if err != nil {
				return err
			}
			if err := r.write(pyStr(v)); err != nil {
				return err
			}
		case ifNode:
			done := false
			for i, c := range x.conds {
				v, err := r.eval(c)
				if err != nil {
					return err
				}
				if truthy(v) {
					if err := r.run(x.bodies[i]); err != nil {
						return err
					}
					done = true
					break
				}
			}
			if !done && x.els != nil {
				if err := r.run(x.els); err != nil {
					return err
				}
			}
		case forNode:
			if err := r.runFor(x); err != nil {
				return err
			}
		case setNode:
			v, err := r.eval(x.e)
			if err != nil {
				return err
			}
			if x.attr == "" {
				r.scopes[len(r.scopes)-1][x.target] = v
				continue
			}
			ns, ok := r.lookup(x.target).(*nsVal)
			if !ok {
				return &TemplateError{Kind: "TemplateRuntimeError", Msg: "cannot assign attribute on non-namespace object"}
			}
			ns.m[x.attr] = v
		}
	}
	return nil
}

func (r *renderer) runFor(x forNode) error {
	it, err := r.eval(x.iter)
	if err != nil {
		return err
	}
	items, err := r.iterate(it)
	if err != nil {
		return err
	}
	scope := map[string]any{}
	r.scopes = append(r.scopes, scope)
	defer func() { r.scopes = r.scopes[:len(r.scopes)-1] }()
	bind := func(v any) error {
		if len(x.vars) == 1 {
			scope[x.vars[0]] = v
			return nil
		}
		l, ok := v.([]any)
		if !ok || len(l) != len(x.vars) {
			return valueErr("not enough values to unpack (expected %d)", len(x.vars))
		}
		for i, name := range x.vars {
			scope[name] = l[i]
		}
		return nil
	}
	if x.cond != nil {
		var kept []any
		for _, v := range items {
			if err := r.tick(); err != nil {
				return err
			}
			if err := bind(v); err != nil {
				return err
			}
			c, err := r.eval(x.cond)
			if err != nil {
				return err
			}
			if truthy(c) {
				kept = append(kept, v)
			}
		}
		items = kept
	}
	for i, v := range items {
		if err := r.tick(); err != nil {
			return err
		}
		if err := bind(v); err != nil {
			return err
		}
		scope["loop"] = &loopVal{index: i, length: len(items)}
		if err := r.run(x.body); err != nil {
			return err
		}
	}
	if len(items) == 0 && x.els != nil {
		return r.run(x.els)
	}
	return nil
}

// iterate lists what a for loop or a filter walks over.
func (r *renderer) iterate(v any) ([]any, error) {
	switch x := v.(type) {
	case []any:
		return x, nil
	case map[string]any:
		keys := sortedKeys(x)
		out := make([]any, len(keys))
		for i, k := range keys {
			out[i] = k
		}
		return out, nil
	case string:
		out := make([]any, 0, len(x))
		for _, c := range x {
			out = append(out, string(c))
		}
		return out, nil
	case *statesVal:
		r.all = true
		sts := r.snap.States()
		out := make([]any, len(sts))
		for i, s := range sts {
			out[i] = &stateVal{s}
		}
		return out, nil
	case *domainVal:
		r.domains[x.domain] = true
		sts := r.snap.DomainStates(x.domain)
		out := make([]any, len(sts))
		for i, s := range sts {
			out[i] = &stateVal{s}
		}
		return out, nil
	case undefined:
		return nil, nil
	}
	return nil, typeErr("'%s' object is not iterable", typeName(v))
}

func (r *renderer) eval(e expr) (any, error) {
	if err := r.tick(); err != nil {
		return nil, err
	}
	switch x := e.(type) {
	case litExpr:
		return x.v, nil
	case nameExpr:
		return r.lookup(x.name), nil
	case attrExpr:
		v, err := r.eval(x.x)
		if err != nil {
			return nil, err
		}
		return r.getattr(v, x.name)
	case indexExpr:
		v, err := r.eval(x.x)
		if err != nil {
			return nil, err
		}
		i, err := r.eval(x.i)
		if err != nil {
			return nil, err
		}
		return r.getitem(v, i)
	case sliceExpr:
		return r.evalSlice(x)
	case callExpr:
		fn, err := r.eval(x.fn)
		if err != nil {
			return nil, err
		}
		args, kw, err := r.evalArgs(x.args, x.kwargs)
		if err != nil {
			return nil, err
		}
		return r.call(fn, args, kw)
	case filterExpr:
		v, err := r.eval(x.x)
		if err != nil {
			return nil, err
		}
		args, kw, err := r.evalArgs(x.args, x.kwargs)
		if err != nil {
			return nil, err
		}
		return filters[x.name](r, v, args, kw)
	case testExpr:
		v, err := r.eval(x.x)
		if err != nil {
			return nil, err
		}
		args, _, err := r.evalArgs(x.args, nil)
		if err != nil {
			return nil, err
		}
		ok, err := tests[x.name](r, v, args)
		if err != nil {
			return nil, err
		}
		return ok != x.neg, nil
	case unExpr:
		v, err := r.eval(x.x)
		if err != nil {
			return nil, err
		}
		switch x.op {
		case "not":
			return !truthy(v), nil
		case "-":
			return arith("-", int64(0), v)
		}
		if !isNumber(v) {
			return nil, typeErr("bad operand type for unary +: '%s'", typeName(v))
		}
		return v, nil
	case binExpr:
		return r.evalBin(x)
	case condExpr:
		c, err := r.eval(x.cond)
		if err != nil {
			return nil, err
		}
		if truthy(c) {
			return r.eval(x.yes)
		}
		return r.eval(x.no)
	case listExpr:
		out := make([]any, 0, len(x.items))
		for _, it := range x.items {
			v, err := r.eval(it)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case dictExpr:
		out := map[string]any{}
		for i := range x.keys {
			k, err := r.eval(x.keys[i])
			if err != nil {
				return nil, err
			}
			v, err := r.eval(x.vals[i])
			if err != nil {
				return nil, err
			}
			out[pyStr(k)] = v
		}
		return out, nil
	}
	return nil, &TemplateError{Kind: "TemplateError", Msg: "unknown expression"}
}

func (r *renderer) evalArgs(args []expr, kws []kwarg) ([]any, map[string]any, error) {
	out := make([]any, 0, len(args))
	for _, a := range args {
		v, err := r.eval(a)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, v)
	}
	kw := map[string]any{}
	for _, k := range kws {
		v, err := r.eval(k.e)
		if err != nil {
			return nil, nil, err
		}
		kw[k.name] = v
	}
	return out, kw, nil
}

func (r *renderer) evalBin(x binExpr) (any, error) {
	l, err := r.eval(x.l)
	if err != nil {
		return nil, err
	}
	switch x.op {
	case "and":
		if !truthy(l) {
			return l, nil
		}
		return r.eval(x.r)
	case "or":
		if truthy(l) {
			return l, nil
		}
		return r.eval(x.r)
	}
	rv, err := r.eval(x.r)
	if err != nil {
		return nil, err
	}
	switch x.op {
	case "==":
		return pyEqual(l, rv), nil
	case "!=":
		return !pyEqual(l, rv), nil
	case "<", ">", "<=", ">=":
		c, err := pyCompare(x.op, l, rv)
		if err != nil {
			return nil, err
		}
		return map[string]bool{"<": c < 0, ">": c > 0, "<=": c <= 0, ">=": c >= 0}[x.op], nil
	case "in", "not in":
		ok, err := pyContains(rv, l)
		if err != nil {
			return nil, err
		}
		return ok == (x.op == "in"), nil
	case "~":
		s := pyStr(l) + pyStr(rv)
		if len(s) > maxOutput {
			return nil, &TemplateError{Kind: "TemplateError", Msg: "result too large"}
		}
		return s, nil
	}
	return arith(x.op, l, rv)
}

func (r *renderer) evalSlice(x sliceExpr) (any, error) {
	v, err := r.eval(x.x)
	if err != nil {
		return nil, err
	}
	bound := func(e expr, def int, n int) (int, error) {
		if e == nil {
			return def, nil
		}
		b, err := r.eval(e)
		if err != nil {
			return 0, err
		}
		i, ok := b.(int64)
		if !ok {
			if b == nil {
				return def, nil
			}
			return 0, typeErr("slice indices must be integers or None")
		}
		if i < 0 {
			i += int64(n)
		}
		return int(max(0, min(int64(n), i))), nil
	}
	switch s := v.(type) {
	case string:
		rs := []rune(s)
		lo, err := bound(x.lo, 0, len(rs))
		if err != nil {
			return nil, err
		}
		hi, err := bound(x.hi, len(rs), len(rs))
		if err != nil {
			return nil, err
		}
		if lo >= hi {
			return "", nil
		}
		return string(rs[lo:hi]), nil
	case []any:
		lo, err := bound(x.lo, 0, len(s))
		if err != nil {
			return nil, err
		}
		hi, err := bound(x.hi, len(s), len(s))
		if err != nil {
			return nil, err
		}
		if lo >= hi {
			return []any{}, nil
		}
		return append([]any{}, s[lo:hi]...), nil
	case undefined:
		return nil, undefErr(s)
	}
	return nil, typeErr("'%s' object is not subscriptable", typeName(v))
}

func (r *renderer) getitem(v, key any) (any, error) {
	switch x := v.(type) {
	case []any:
		i, ok := key.(int64)
		if !ok {
			return undefined{hint: "list object has no element " + pyRepr(key)}, nil
		}
		if i < 0 {
			i += int64(len(x))
		}
		if i < 0 || i >= int64(len(x)) {
			return undefined{hint: "list object has no element " + pyRepr(key)}, nil
		}
		return x[i], nil
	case string:
		i, ok := key.(int64)
		rs := []rune(x)
		if ok && i < 0 {
			i += int64(len(rs))
		}
		if !ok || i < 0 || i >= int64(len(rs)) {
			return undefined{hint: "str object has no element " + pyRepr(key)}, nil
		}
		return string(rs[i]), nil
	case map[string]any:
		k := pyStr(key)
		if val, ok := x[k]; ok {
			return val, nil
		}
		return undefined{hint: "'dict object' has no attribute " + pyRepr(key)}, nil
	case undefined:
		return nil, undefErr(x)
	}
	if s, ok := key.(string); ok {
		return r.getattr(v, s)
	}
	return undefined{hint: "'" + typeName(v) + " object' has no attribute " + pyRepr(key)}, nil
}

func (r *renderer) call(fn any, args []any, kw map[string]any) (any, error) {
	switch f := fn.(type) {
	case *fnVal:
		return f.fn(r, args, kw)
	case *boundMethod:
		return r.callMethod(f, args, kw)
	case *statesVal:
		return callStates(r, args, kw)
	case undefined:
		return nil, undefErr(f)
	}
	return nil, typeErr("'%s' object is not callable", typeName(fn))
}

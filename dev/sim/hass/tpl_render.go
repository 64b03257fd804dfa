package hass

import (
	"errors"
	"sort"

	"github.com/hamcp/hamcp/dev/sim/home"
	"github.com/nikolalohinski/gonja/v2/exec"
)

const (
	maxOutput      = 1 << 20
	maxSteps       = 200_000
	maxCallDepth   = 100
	maxTemplateLen = 256 << 10
)

// Listeners is what a render touched, reported by WS render_template so
// clients know when it would re-render.
type Listeners struct {
	All      bool     `json:"all"`
	Domains  []string `json:"domains"`
	Entities []string `json:"entities"`
	Time     bool     `json:"time"`
}

// renderer is one render's state: the snapshot it reads, what it listened
// to, its step budget and the first error HA's layer raised.
type renderer struct {
	source   string
	snap     *home.Snapshot
	steps    int
	depth    int
	size     int
	err      error
	all      bool
	domains  map[string]bool
	entities map[string]bool
	time     bool
}

func newRenderer(snap *home.Snapshot, src string) *renderer {
	return &renderer{source: src, snap: snap, domains: map[string]bool{}, entities: map[string]bool{}}
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
		return r.fail(&TemplateError{Kind: "TemplateError", Msg: "template is too complex to render (step limit reached)"})
	}
	return nil
}

// fail remembers the first error HA's layer raised: gonja wraps errors in
// its own text, and the first one is what HA would have reported.
func (r *renderer) fail(err error) error {
	if r.err == nil {
		r.err = err
	}
	return err
}

// failure turns an error value gonja returned into the error to report.
func (r *renderer) failure(v *exec.Value) error {
	if r.err != nil {
		return r.err
	}
	return r.fail(&TemplateError{Kind: "TemplateError", Msg: v.Error()})
}

// Write caps the output, as HA caps a render's result.
func (r *renderer) Write(p []byte) (int, error) {
	r.size += len(p)
	if r.size > maxOutput {
		return 0, r.fail(&TemplateError{Kind: "TemplateError", Msg: "rendered template is too large"})
	}
	return len(p), nil
}

// lookup resolves a name: template variables first, then HA's globals.
func (r *renderer) lookup(ctx *exec.Context, name string) any {
	if v, ok := ctx.Get(name); ok {
		return fromJ(v)
	}
	switch name {
	case "states":
		return &statesVal{}
	case "none", "None":
		return nil
	}
	if f, ok := globals[name]; ok {
		return f
	}
	return undefined{hint: "'" + name + "' is undefined"}
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
		return stateVals(r.snap.States()), nil
	case *domainVal:
		r.domains[x.domain] = true
		return stateVals(r.snap.DomainStates(x.domain)), nil
	case undefined:
		return nil, nil
	}
	return nil, typeErr("'%s' object is not iterable", typeName(v))
}

func stateVals(sts []*home.State) []any {
	out := make([]any, len(sts))
	for i, s := range sts {
		out[i] = &stateVal{s}
	}
	return out
}

func (r *renderer) getitem(v, key any) (any, error) {
	switch x := v.(type) {
	case []any:
		i, ok := key.(int64)
		if ok && i < 0 {
			i += int64(len(x))
		}
		if !ok || i < 0 || i >= int64(len(x)) {
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
		if val, ok := x[pyStr(key)]; ok {
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

// slice is Python's v[lo:hi:step] (nil parts take their defaults).
func slice(v, lo, hi, step any) (any, error) {
	var n int
	switch s := v.(type) {
	case string:
		n = len([]rune(s))
	case []any:
		n = len(s)
	case undefined:
		return nil, undefErr(s)
	default:
		return nil, typeErr("'%s' object is not subscriptable", typeName(v))
	}
	idx, err := sliceIndices(n, lo, hi, step)
	if err != nil {
		return nil, err
	}
	if s, ok := v.(string); ok {
		rs, out := []rune(s), make([]rune, 0, len(idx))
		for _, i := range idx {
			out = append(out, rs[i])
		}
		return string(out), nil
	}
	out := make([]any, 0, len(idx))
	for _, i := range idx {
		out = append(out, v.([]any)[i])
	}
	return out, nil
}

// sliceIndices is Python's slice.indices walked into a list.
func sliceIndices(n int, lo, hi, step any) ([]int, error) {
	st := int64(1)
	if step != nil {
		s, ok := step.(int64)
		if !ok {
			return nil, typeErr("slice indices must be integers or None")
		}
		if s == 0 {
			return nil, valueErr("slice step cannot be zero")
		}
		st = s
	}
	bound := func(b any, def int64) (int64, error) {
		if b == nil {
			return def, nil
		}
		i, ok := b.(int64)
		if !ok {
			return 0, typeErr("slice indices must be integers or None")
		}
		if i < 0 {
			i += int64(n)
		}
		if st < 0 {
			return max(-1, min(int64(n)-1, i)), nil
		}
		return max(0, min(int64(n), i)), nil
	}
	defLo, defHi := int64(0), int64(n)
	if st < 0 {
		defLo, defHi = int64(n)-1, -1
	}
	l, err := bound(lo, defLo)
	if err != nil {
		return nil, err
	}
	h, err := bound(hi, defHi)
	if err != nil {
		return nil, err
	}
	var out []int
	for i := l; (st > 0 && i < h) || (st < 0 && i > h); i += st {
		out = append(out, int(i))
	}
	return out, nil
}

func (r *renderer) call(fn any, args []any, kw map[string]any) (any, error) {
	switch f := fn.(type) {
	case *fnVal:
		return f.fn(r, args, kw)
	case *boundMethod:
		return r.callMethod(f, args, kw)
	case *statesVal:
		return callStates(r, args, kw)
	case foreign:
		return r.callForeign(f, args, kw)
	case undefined:
		return nil, undefErr(f)
	}
	return nil, typeErr("'%s' object is not callable", typeName(fn))
}

// asTemplateError is the error RenderTemplate reports: HA's own when its
// layer raised one, else gonja's text as a plain TemplateError.
func (r *renderer) asTemplateError(err error) error {
	if r.err != nil {
		return r.err
	}
	var te *TemplateError
	if errors.As(err, &te) {
		return te
	}
	return &TemplateError{Kind: "TemplateError", Msg: err.Error()}
}

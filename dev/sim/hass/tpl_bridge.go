package hass

import (
	"reflect"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// gonja keeps values as reflect-wrapped Go values ("gonja-land"); HA's
// functions, filters and operators work on the simulator's Python-like
// model (int64, float64, string, bool, nil, []any, map[string]any and the
// *stateVal/*dtVal/... objects). These two conversions are the border.

// obj carries a model object through gonja untouched. A pointer to a
// struct, so gonja treats it as truthy, as Python does.
type obj struct{ v any }

// undefFn is Jinja's Undefined in gonja-land: a func kind, which gonja's
// truth test reports false, as Jinja does.
type undefFn func() undefined

// nsMap is a namespace() in gonja-land: a map, so `{% set ns.x = ... %}`
// (gonja's own set) writes into the same map the model reads.
type nsMap map[string]any

// foreign is a gonja value the model has no type for (loop, a macro).
type foreign struct{ v *exec.Value }

// toJ hands a model value to gonja.
func toJ(v any) any {
	switch x := v.(type) {
	case nil, bool, string, float64:
		return x
	case int64:
		return int(x)
	case []any:
		return each(x, toJ)
	case map[string]any:
		return eachValue(x, toJ)
	case undefined:
		return undefFn(func() undefined { return x })
	case *nsVal:
		return nsMap(x.m)
	case foreign:
		return x.v
	}
	return &obj{v}
}

// fromJ reads a gonja value into the model. It is idempotent on model
// values, so a namespace may hold either kind.
func fromJ(v any) any {
	switch x := v.(type) {
	case nil, bool, string, float64, int64:
		return x
	case int:
		return int64(x)
	case *exec.Value:
		if x == nil || x.IsNil() {
			return nil
		}
		return fromJ(x.Interface())
	case exec.ValuesList:
		return each(x, func(e *exec.Value) any { return fromJ(e) })
	case []any:
		return each(x, fromJ)
	case *exec.Dict:
		out := make(map[string]any, len(x.Pairs))
		for _, p := range x.Pairs {
			out[pyStr(fromJ(p.Key))] = fromJ(p.Value)
		}
		return out
	case map[string]any:
		return eachValue(x, fromJ)
	case nsMap:
		return &nsVal{m: x}
	case *obj:
		return x.v
	case undefFn:
		return x()
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return int64(rv.Uint())
	case reflect.Float32:
		return rv.Float()
	case reflect.String:
		return rv.String()
	}
	return foreign{exec.ToValue(v)}
}

func each[T any](l []T, f func(T) any) []any {
	out := make([]any, len(l))
	for i, e := range l {
		out[i] = f(e)
	}
	return out
}

func eachValue(m map[string]any, f func(any) any) map[string]any {
	out := make(map[string]any, len(m))
	for k, e := range m {
		out[k] = f(e)
	}
	return out
}

// jArgs reads a filter's or call's arguments into the model.
func jArgs(p *exec.VarArgs) ([]any, map[string]any) {
	args := make([]any, len(p.Args))
	for i, a := range p.Args {
		args[i] = fromJ(a)
	}
	kw := make(map[string]any, len(p.KwArgs))
	for k, a := range p.KwArgs {
		kw[k] = fromJ(a)
	}
	return args, kw
}

// callForeign calls a gonja callable (a macro, loop.cycle) with model arguments.
func (r *renderer) callForeign(f foreign, args []any, kw map[string]any) (any, error) {
	var m func(*exec.VarArgs) *exec.Value
	switch fn := f.v.Interface().(type) {
	case exec.Macro:
		m = fn
	case func(*exec.VarArgs) *exec.Value: // loop.cycle, loop.changed
		m = fn
	default:
		return nil, typeErr("'%s' object is not callable", typeName(f))
	}
	if r.depth >= maxCallDepth {
		return nil, &TemplateError{Kind: "RecursionError", Msg: "maximum recursion depth exceeded"}
	}
	p := exec.NewVarArgs()
	for _, a := range args {
		p.Args = append(p.Args, asJ(a))
	}
	for k, a := range kw {
		p.KwArgs[k] = asJ(a)
	}
	r.depth++
	out := m(p)
	r.depth--
	if out.IsError() {
		return nil, r.failure(out)
	}
	return fromJ(out), nil
}

// getattrForeign reads an attribute of a gonja object (loop.index).
func getattrForeign(f foreign, name string) any {
	if v, ok := f.v.GetAttribute(name); ok {
		return fromJ(v)
	}
	return undefined{hint: "'" + typeName(f) + " object' has no attribute '" + name + "'"}
}

package hass

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"
)

// Helpers behind the filters and tests: selection, regexes, timestamps,
// %-formatting.

func argOrNil(a []any, i int) any {
	if i < len(a) {
		return a[i]
	}
	return nil
}

func truthyOr(v any) bool { return truthy(v) }

func cmpTest(op string, a, b any) (bool, error) {
	switch op {
	case "==":
		return pyEqual(a, b), nil
	case "!=":
		return !pyEqual(a, b), nil
	}
	c, err := pyCompare(op, a, b)
	if err != nil {
		return false, err
	}
	return map[string]bool{"<": c < 0, ">": c > 0, "<=": c <= 0, ">=": c >= 0}[op], nil
}

func strFilter(f func(string) string) filterFn {
	return func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
		if u, ok := v.(undefined); ok {
			_ = u
			return "", nil
		}
		return f(pyStr(v)), nil
	}
}

func defaultFilter(r *renderer, v any, a []any, kw map[string]any) (any, error) {
	def := kwOr(a, kw, 0, "default_value", "")
	_, und := v.(undefined)
	if und || truthy(kwOr(a, kw, 1, "boolean", false)) && !truthy(v) {
		return def, nil
	}
	return v, nil
}

func lengthFilter(r *renderer, v any, a []any, kw map[string]any) (any, error) {
	switch x := v.(type) {
	case string:
		return int64(len([]rune(x))), nil
	case []any:
		return int64(len(x)), nil
	case map[string]any:
		return int64(len(x)), nil
	case undefined:
		return int64(0), nil
	}
	items, err := r.iterate(v)
	if err != nil {
		return nil, typeErr("object of type '%s' has no len()", typeName(v))
	}
	return int64(len(items)), nil
}

// selectFilter builds select/reject/selectattr/rejectattr.
func selectFilter(reject, byAttr bool) filterFn {
	return func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
		items, err := r.iterate(v)
		if err != nil {
			return nil, err
		}
		attr := ""
		rest := a
		if byAttr {
			attr = argStr(a, 0, "")
			rest = a[min(1, len(a)):]
		}
		testName := "truthy"
		if len(rest) > 0 {
			testName = argStr(rest, 0, "")
			rest = rest[1:]
		}
		var t testFn
		if testName != "truthy" {
			if t = tests[testName]; t == nil {
				return nil, &TemplateError{Kind: "TemplateRuntimeError", Msg: "No test named '" + testName + "'."}
			}
		}
		out := []any{}
		for _, it := range items {
			x := it
			if byAttr {
				for _, part := range strings.Split(attr, ".") {
					if x, err = r.getattr(x, part); err != nil {
						if _, isTE := err.(*TemplateError); isTE {
							x, err = undefined{hint: "missing"}, nil
							break
						}
						return nil, err
					}
				}
			}
			ok := truthy(x)
			if t != nil {
				if ok, err = t(r, x, rest); err != nil {
					return nil, err
				}
			}
			if ok != reject {
				out = append(out, it)
			}
		}
		return out, nil
	}
}

func toJSONFilter(r *renderer, v any, a []any, kw map[string]any) (any, error) {
	g := toGo(v)
	var raw []byte
	var err error
	if ind, ok := kw["indent"].(int64); ok && ind > 0 && ind < 16 {
		raw, err = json.MarshalIndent(g, "", strings.Repeat(" ", int(ind)))
	} else {
		raw, err = json.Marshal(g)
	}
	if err != nil {
		return nil, typeErr("Object of type %s is not JSON serializable", typeName(v))
	}
	return string(raw), nil
}

func compileRe(pat string, ignoreCase bool) (*regexp.Regexp, error) {
	if ignoreCase {
		pat = "(?i)" + pat
	}
	if len(pat) > 4096 {
		return nil, &TemplateError{Kind: "re.error", Msg: "pattern too long"}
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return nil, &TemplateError{Kind: "re.error", Msg: err.Error()}
	}
	return re, nil
}

func regexFilter(f func(re *regexp.Regexp, s string) any, anchored bool) filterFn {
	return func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
		re, err := compileRe(argStr(a, 0, ""), truthy(kwOr(a, kw, 1, "ignorecase", false)))
		if err != nil {
			return nil, err
		}
		return f(re, pyStr(v)), nil
	}
}

func findall(re *regexp.Regexp, s string) []any {
	out := []any{}
	for _, m := range re.FindAllStringSubmatch(s, 1000) {
		switch len(m) {
		case 1:
			out = append(out, m[0])
		case 2:
			out = append(out, m[1])
		default:
			g := make([]any, len(m)-1)
			for i, x := range m[1:] {
				g[i] = x
			}
			out = append(out, g)
		}
	}
	return out
}

func (r *renderer) timestampSeconds(v any) (float64, bool) {
	switch x := v.(type) {
	case *dtVal:
		return float64(x.t.UnixMicro()) / 1e6, true
	}
	return parseNum(v)
}

func (r *renderer) timestampFmt(v any, format string, local bool, def any, fn string) (any, error) {
	f, ok := r.timestampSeconds(v)
	if !ok || math.IsNaN(f) || math.Abs(f) > 1e11 {
		if def != nil {
			return def, nil
		}
		return nil, r.noDefault(fn, v)
	}
	t := time.UnixMicro(int64(f * 1e6)).UTC()
	if local {
		t = t.In(r.snap.Location())
	}
	return pyStrftime(t, format), nil
}

func (r *renderer) timestampISO(v any, local bool, def any, fn string) (any, error) {
	f, ok := r.timestampSeconds(v)
	if !ok || math.IsNaN(f) || math.Abs(f) > 1e11 {
		if def != nil {
			return def, nil
		}
		return nil, r.noDefault(fn, v)
	}
	t := time.UnixMicro(int64(f * 1e6)).UTC()
	if local {
		t = t.In(r.snap.Location())
	}
	return dtMethod(&dtVal{t}, "isoformat", nil, nil)
}

// printf is Jinja's format filter (Python %-formatting) for %s %d %i %f %r %%.
func printf(f string, args []any) (any, error) {
	var b strings.Builder
	ai := 0
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			b.WriteByte(f[i])
			continue
		}
		j := i + 1
		for j < len(f) && strings.IndexByte("0123456789.-+ ", f[j]) >= 0 {
			j++
		}
		if j >= len(f) {
			return nil, valueErr("incomplete format")
		}
		spec, verb := f[i+1:j], f[j]
		i = j
		if specTooWide(spec) {
			return nil, valueErr("format width too large")
		}
		if verb == '%' {
			b.WriteByte('%')
			continue
		}
		if ai >= len(args) {
			return nil, typeErr("not enough arguments for format string")
		}
		arg := args[ai]
		ai++
		switch verb {
		case 's':
			b.WriteString(fmt.Sprintf("%"+spec+"s", pyStr(arg)))
		case 'r':
			b.WriteString(fmt.Sprintf("%"+spec+"s", pyRepr(arg)))
		case 'd', 'i':
			if !isNumber(arg) {
				return nil, typeErr("%%d format: a real number is required, not %s", typeName(arg))
			}
			b.WriteString(fmt.Sprintf("%"+spec+"d", asInt(arg)))
		case 'f', 'e', 'g':
			if !isNumber(arg) {
				return nil, typeErr("must be real number, not %s", typeName(arg))
			}
			if !strings.Contains(spec, ".") && verb == 'f' {
				spec += ".6"
			}
			b.WriteString(fmt.Sprintf("%"+spec+string(verb), asFloat(arg)))
		default:
			return nil, valueErr("unsupported format character '%c'", verb)
		}
	}
	return b.String(), nil
}

// specTooWide keeps %-format widths and precisions small enough to be harmless.
func specTooWide(spec string) bool {
	n := 0
	for _, c := range spec {
		if c >= '0' && c <= '9' {
			n = n*10 + int(c-'0')
			if n > 1000 {
				return true
			}
		} else {
			n = 0
		}
	}
	return false
}

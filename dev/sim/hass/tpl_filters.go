package hass

import (
	"encoding/json"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/hamcp/hamcp/dev/sim/home"
)

type filterFn func(r *renderer, v any, args []any, kw map[string]any) (any, error)
type testFn func(r *renderer, v any, args []any) (bool, error)

var (
	filters map[string]filterFn
	tests   map[string]testFn
)

// kwOr returns the keyword argument, else the positional one, else def.
func kwOr(args []any, kw map[string]any, i int, name string, def any) any {
	if v, ok := kw[name]; ok {
		return v
	}
	if i < len(args) {
		return args[i]
	}
	return def
}

func init() {
	filters = map[string]filterFn{
		"float": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			return r.toFloat("float", v, kwOr(a, kw, 0, "default", nil))
		},
		"int": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			return r.toInt(v, kwOr(a, kw, 0, "default", nil))
		},
		"bool": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			b, ok := pyBool(v)
			if !ok {
				if d := kwOr(a, kw, 0, "default", nil); d != nil {
					return d, nil
				}
				return nil, r.noDefault("bool", v)
			}
			return b, nil
		},
		"round": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			f, ok := parseNum(v)
			if !ok {
				if d := kwOr(a, kw, 2, "default", nil); d != nil {
					return d, nil
				}
				return nil, r.noDefault("round", v)
			}
			prec := int(asInt(kwOr(a, kw, 0, "precision", int64(0))))
			if prec < -15 || prec > 15 {
				prec = max(-15, min(15, prec))
			}
			mult := math.Pow(10, float64(prec))
			switch kwOr(a, kw, 1, "method", "common") {
			case "ceil":
				f = math.Ceil(f*mult) / mult
			case "floor":
				f = math.Floor(f*mult) / mult
			case "half":
				f = math.Round(f*2) / 2
			default:
				if prec >= 0 {
					f, _ = strconv.ParseFloat(strconv.FormatFloat(f, 'f', prec, 64), 64)
				} else {
					f = math.RoundToEven(f*mult) / mult
				}
			}
			if prec == 0 {
				return int64(f), nil
			}
			return f, nil
		},
		"abs": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			switch x := v.(type) {
			case int64:
				if x < 0 {
					return -x, nil
				}
				return x, nil
			case float64:
				return math.Abs(x), nil
			}
			return nil, typeErr("bad operand type for abs(): '%s'", typeName(v))
		},
		"lower":      strFilter(strings.ToLower),
		"upper":      strFilter(strings.ToUpper),
		"title":      strFilter(titleCase),
		"capitalize": strFilter(capitalize),
		"trim":       strFilter(strings.TrimSpace),
		"slugify":    strFilter(home.Slugify),
		"e":          func(r *renderer, v any, a []any, kw map[string]any) (any, error) { return pyStr(v), nil },
		"safe":       func(r *renderer, v any, a []any, kw map[string]any) (any, error) { return v, nil },
		"string":     func(r *renderer, v any, a []any, kw map[string]any) (any, error) { return pyStr(v), nil },
		"replace": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			n := -1
			if c, ok := kwOr(a, kw, 2, "count", nil).(int64); ok {
				n = int(c)
			}
			return strings.Replace(pyStr(v), argStr(a, 0, ""), argStr(a, 1, ""), n), nil
		},
		"default": defaultFilter,
		"d":       defaultFilter,
		"length":  lengthFilter,
		"count":   lengthFilter,
		"join": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			items, err := r.iterate(v)
			if err != nil {
				return nil, err
			}
			attr, _ := kwOr(a, kw, 1, "attribute", nil).(string)
			parts := make([]string, len(items))
			for i, it := range items {
				if attr != "" {
					if it, err = r.getattr(it, attr); err != nil {
						return nil, err
					}
				}
				parts[i] = pyStr(it)
			}
			return strings.Join(parts, pyStr(kwOr(a, kw, 0, "d", ""))), nil
		},
		"list": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			items, err := r.iterate(v)
			return append([]any{}, items...), err
		},
		"first": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			items, err := r.iterate(v)
			if err != nil || len(items) == 0 {
				return undefined{hint: "No first item, sequence was empty."}, err
			}
			return items[0], nil
		},
		"last": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			items, err := r.iterate(v)
			if err != nil || len(items) == 0 {
				return undefined{hint: "No last item, sequence was empty."}, err
			}
			return items[len(items)-1], nil
		},
		"min": func(r *renderer, v any, a []any, kw map[string]any) (any, error) { return r.minmax([]any{v}, -1) },
		"max": func(r *renderer, v any, a []any, kw map[string]any) (any, error) { return r.minmax([]any{v}, 1) },
		"sum": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			items, err := r.iterate(v)
			if err != nil {
				return nil, err
			}
			attr, _ := kwOr(a, kw, 0, "attribute", nil).(string)
			var total any = kwOr(a, kw, 1, "start", int64(0))
			for _, it := range items {
				if attr != "" {
					if it, err = r.getattr(it, attr); err != nil {
						return nil, err
					}
				}
				if total, err = arith("+", total, it); err != nil {
					return nil, err
				}
			}
			return total, nil
		},
		"sort": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			items, err := r.iterate(v)
			if err != nil {
				return nil, err
			}
			out := append([]any{}, items...)
			attr, _ := kwOr(a, kw, 2, "attribute", nil).(string)
			key := func(x any) any {
				if attr != "" {
					x, _ = r.getattr(x, attr)
				}
				if s, ok := x.(string); ok && !truthy(kwOr(a, kw, 1, "case_sensitive", false)) {
					return strings.ToLower(s)
				}
				return x
			}
			var sortErr error
			sort.SliceStable(out, func(i, j int) bool {
				c, err := pyCompare("<", key(out[i]), key(out[j]))
				if err != nil {
					sortErr = err
				}
				return c < 0
			})
			if sortErr != nil {
				return nil, sortErr
			}
			if truthy(kwOr(a, kw, 0, "reverse", false)) {
				for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
					out[i], out[j] = out[j], out[i]
				}
			}
			return out, nil
		},
		"unique": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			items, err := r.iterate(v)
			if err != nil {
				return nil, err
			}
			var out []any
			for _, it := range items {
				dup := false
				for _, o := range out {
					if pyEqual(o, it) {
						dup = true
						break
					}
				}
				if !dup {
					out = append(out, it)
				}
			}
			if out == nil {
				out = []any{}
			}
			return out, nil
		},
		"reverse": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			if s, ok := v.(string); ok {
				rs := []rune(s)
				for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
					rs[i], rs[j] = rs[j], rs[i]
				}
				return string(rs), nil
			}
			items, err := r.iterate(v)
			if err != nil {
				return nil, err
			}
			out := make([]any, len(items))
			for i, it := range items {
				out[len(items)-1-i] = it
			}
			return out, nil
		},
		"map": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			items, err := r.iterate(v)
			if err != nil {
				return nil, err
			}
			out := make([]any, 0, len(items))
			attr, hasAttr := kw["attribute"].(string)
			var f filterFn
			if !hasAttr {
				name := argStr(a, 0, "")
				if f = filters[name]; f == nil {
					return nil, &TemplateError{Kind: "TemplateRuntimeError", Msg: "No filter named '" + name + "'."}
				}
			}
			for _, it := range items {
				var x any
				if hasAttr {
					if x, err = r.getattr(it, attr); err != nil {
						return nil, err
					}
					if _, und := x.(undefined); und && kw["default"] != nil {
						x = kw["default"]
					}
				} else if x, err = f(r, it, a[1:], map[string]any{}); err != nil {
					return nil, err
				}
				out = append(out, x)
			}
			return out, nil
		},
		"select":     selectFilter(false, false),
		"reject":     selectFilter(true, false),
		"selectattr": selectFilter(false, true),
		"rejectattr": selectFilter(true, true),
		"tojson":     toJSONFilter,
		"to_json":    toJSONFilter,
		"from_json": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			dec := json.NewDecoder(strings.NewReader(pyStr(v)))
			dec.UseNumber()
			var out any
			if err := dec.Decode(&out); err != nil {
				return nil, &TemplateError{Kind: "JSONDecodeError", Msg: err.Error()}
			}
			return fromGo(out), nil
		},
		"as_timestamp": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			return r.asTimestamp(v, kwOr(a, kw, 0, "default", nil))
		},
		"as_datetime": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			return r.asDatetime(v, kwOr(a, kw, 0, "default", nil))
		},
		"as_local": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			d, ok := v.(*dtVal)
			if !ok {
				return nil, typeErr("as_local expects a datetime")
			}
			return &dtVal{d.t.In(r.snap.Location())}, nil
		},
		"timestamp_custom": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			return r.timestampFmt(v, argStr(a, 0, "%Y-%m-%d %H:%M:%S"), truthyOr(kwOr(a, kw, 1, "local", true)), kwOr(a, kw, 2, "default", nil), "timestamp_custom")
		},
		"timestamp_local": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			return r.timestampISO(v, true, kwOr(a, kw, 0, "default", nil), "timestamp_local")
		},
		"timestamp_utc": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			return r.timestampISO(v, false, kwOr(a, kw, 0, "default", nil), "timestamp_utc")
		},
		"regex_match": regexFilter(func(re *regexp.Regexp, s string) any {
			return re.FindStringIndex(s) != nil && re.FindStringIndex(s)[0] == 0
		}, true),
		"regex_search":  regexFilter(func(re *regexp.Regexp, s string) any { return re.MatchString(s) }, false),
		"regex_findall": regexFilter(func(re *regexp.Regexp, s string) any { return findall(re, s) }, false),
		"regex_replace": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			re, err := compileRe(argStr(a, 0, ""), truthy(kwOr(a, kw, 2, "ignorecase", false)))
			if err != nil {
				return nil, err
			}
			repl := regexp.MustCompile(`\\(\d)`).ReplaceAllString(argStr(a, 1, ""), "$${$1}")
			return re.ReplaceAllString(pyStr(v), repl), nil
		},
		"regex_findall_index": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			re, err := compileRe(argStr(a, 0, ""), truthy(kwOr(a, kw, 2, "ignorecase", false)))
			if err != nil {
				return nil, err
			}
			all := findall(re, pyStr(v))
			i := int(asInt(kwOr(a, kw, 1, "index", int64(0))))
			if i < 0 {
				i += len(all)
			}
			if i < 0 || i >= len(all) {
				return nil, &TemplateError{Kind: "IndexError", Msg: "list index out of range"}
			}
			return all[i], nil
		},
		"contains": func(r *renderer, v any, a []any, kw map[string]any) (any, error) { return pyContains(v, argOr(a, 0)) },
		"multiply": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			f, ok := parseNum(v)
			if !ok {
				if d := kwOr(a, kw, 1, "default", nil); d != nil {
					return d, nil
				}
				return nil, r.noDefault("multiply", v)
			}
			return f * asFloat(argOr(a, 0)), nil
		},
		"iif": func(r *renderer, v any, a []any, kw map[string]any) (any, error) { return iif(append([]any{v}, a...)) },
		"format": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			return printf(pyStr(v), a)
		},
		"dictsort": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			m, ok := v.(map[string]any)
			if !ok {
				return nil, typeErr("dictsort expects a mapping")
			}
			out := []any{}
			for _, k := range sortedKeys(m) {
				out = append(out, []any{k, m[k]})
			}
			return out, nil
		},
		"items": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			return r.callMethod(&boundMethod{v, "items"}, nil, nil)
		},
		"area_name": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			return noneIfEmpty(r.snap.AreaName(pyStr(v))), nil
		},
		"area_id": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			return noneIfEmpty(r.snap.AreaID(pyStr(v))), nil
		},
		"floor_name": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			return noneIfEmpty(r.snap.FloorName(pyStr(v))), nil
		},
		"area_entities": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			return strsToList(r.snap.AreaEntities(pyStr(v))), nil
		},
		"device_id": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			return noneIfEmpty(r.snap.DeviceID(pyStr(v))), nil
		},
		"state_attr": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			return globals["state_attr"].fn(r, append([]any{v}, a...), kw)
		},
		"is_state": func(r *renderer, v any, a []any, kw map[string]any) (any, error) {
			return globals["is_state"].fn(r, append([]any{v}, a...), kw)
		},
	}
	tests = map[string]testFn{
		"defined":   func(r *renderer, v any, a []any) (bool, error) { _, u := v.(undefined); return !u, nil },
		"undefined": func(r *renderer, v any, a []any) (bool, error) { _, u := v.(undefined); return u, nil },
		"none":      func(r *renderer, v any, a []any) (bool, error) { return v == nil, nil },
		"number":    func(r *renderer, v any, a []any) (bool, error) { _, b := v.(bool); return isNumber(v) && !b, nil },
		"integer":   func(r *renderer, v any, a []any) (bool, error) { _, ok := v.(int64); return ok, nil },
		"float":     func(r *renderer, v any, a []any) (bool, error) { _, ok := v.(float64); return ok, nil },
		"string":    func(r *renderer, v any, a []any) (bool, error) { _, ok := v.(string); return ok, nil },
		"mapping":   func(r *renderer, v any, a []any) (bool, error) { _, ok := v.(map[string]any); return ok, nil },
		"list":      func(r *renderer, v any, a []any) (bool, error) { _, ok := v.([]any); return ok, nil },
		"datetime":  func(r *renderer, v any, a []any) (bool, error) { _, ok := v.(*dtVal); return ok, nil },
		"boolean":   func(r *renderer, v any, a []any) (bool, error) { _, ok := v.(bool); return ok, nil },
		"true":      func(r *renderer, v any, a []any) (bool, error) { return v == true, nil },
		"false":     func(r *renderer, v any, a []any) (bool, error) { return v == false, nil },
		"iterable": func(r *renderer, v any, a []any) (bool, error) {
			switch v.(type) {
			case []any, map[string]any, string, *statesVal, *domainVal:
				return true, nil
			}
			return false, nil
		},
		"sequence": func(r *renderer, v any, a []any) (bool, error) {
			switch v.(type) {
			case []any, map[string]any, string:
				return true, nil
			}
			return false, nil
		},
		"odd":  func(r *renderer, v any, a []any) (bool, error) { return asInt(v)%2 != 0, nil },
		"even": func(r *renderer, v any, a []any) (bool, error) { return asInt(v)%2 == 0, nil },
		"divisibleby": func(r *renderer, v any, a []any) (bool, error) {
			d := asInt(argOr(a, 0))
			return d != 0 && asInt(v)%d == 0, nil
		},
		"in":       func(r *renderer, v any, a []any) (bool, error) { return pyContains(argOr(a, 0), v) },
		"contains": func(r *renderer, v any, a []any) (bool, error) { return pyContains(v, argOr(a, 0)) },
		"match": func(r *renderer, v any, a []any) (bool, error) {
			re, err := compileRe(argStr(a, 0, ""), truthy(argOrNil(a, 1)))
			if err != nil {
				return false, err
			}
			loc := re.FindStringIndex(pyStr(v))
			return loc != nil && loc[0] == 0, nil
		},
		"search": func(r *renderer, v any, a []any) (bool, error) {
			re, err := compileRe(argStr(a, 0, ""), truthy(argOrNil(a, 1)))
			if err != nil {
				return false, err
			}
			return re.MatchString(pyStr(v)), nil
		},
	}
	for _, op := range []struct{ names []string }{{[]string{"eq", "equalto", "=="}}, {[]string{"ne", "!="}}, {[]string{"lt", "lessthan", "<"}}, {[]string{"le", "<="}}, {[]string{"gt", "greaterthan", ">"}}, {[]string{"ge", ">="}}} {
		sym := op.names[len(op.names)-1]
		fn := func(r *renderer, v any, a []any) (bool, error) { return cmpTest(sym, v, argOr(a, 0)) }
		for _, n := range op.names {
			tests[n] = fn
		}
	}
}

package hass

import (
	"strconv"
	"strings"
	"time"
)

// Attribute access and methods on template values.

var strMethods = map[string]bool{"lower": true, "upper": true, "strip": true, "lstrip": true, "rstrip": true, "split": true,
	"startswith": true, "endswith": true, "replace": true, "title": true, "capitalize": true, "join": true, "count": true,
	"find": true, "isdigit": true, "format": true}
var listMethods = map[string]bool{"count": true, "index": true}
var dictMethods = map[string]bool{"items": true, "keys": true, "values": true, "get": true}
var dtMethods = map[string]bool{"isoformat": true, "strftime": true, "timestamp": true, "date": true, "weekday": true,
	"isoweekday": true, "replace": true, "astimezone": true}

func (r *renderer) getattr(v any, name string) (any, error) {
	switch x := v.(type) {
	case undefined:
		return nil, undefErr(x)
	case nil:
		return undefined{hint: "'None' has no attribute '" + name + "'"}, nil
	case *stateVal:
		r.entities[x.s.EntityID] = true
		return stateAttr(x, name), nil
	case *domainVal:
		id := x.domain + "." + name
		r.entities[id] = true
		if st, ok := r.snap.State(id); ok {
			return &stateVal{st}, nil
		}
		return nil, nil
	case *statesVal:
		return &domainVal{domain: name}, nil
	case map[string]any:
		if dictMethods[name] {
			return &boundMethod{x, name}, nil
		}
		if val, ok := x[name]; ok {
			return val, nil
		}
		return undefined{hint: "'dict object' has no attribute '" + name + "'"}, nil
	case string:
		if strMethods[name] {
			return &boundMethod{x, name}, nil
		}
	case []any:
		if listMethods[name] {
			return &boundMethod{x, name}, nil
		}
	case *dtVal:
		t := x.t
		switch name {
		case "year":
			return int64(t.Year()), nil
		case "month":
			return int64(t.Month()), nil
		case "day":
			return int64(t.Day()), nil
		case "hour":
			return int64(t.Hour()), nil
		case "minute":
			return int64(t.Minute()), nil
		case "second":
			return int64(t.Second()), nil
		case "microsecond":
			return int64(t.Nanosecond() / 1000), nil
		case "tzinfo":
			return t.Location().String(), nil
		}
		if dtMethods[name] {
			return &boundMethod{x, name}, nil
		}
	case *tdVal:
		switch name {
		case "days":
			return int64(x.d / (24 * time.Hour)), nil
		case "seconds":
			return int64((x.d % (24 * time.Hour)) / time.Second), nil
		case "microseconds":
			return int64((x.d % time.Second) / time.Microsecond), nil
		case "total_seconds":
			return &boundMethod{x, name}, nil
		}
	case *nsVal:
		if val, ok := x.m[name]; ok {
			return fromJ(val), nil // gonja's set writes gonja values into the namespace
		}
		return undefined{hint: "'Namespace' has no attribute '" + name + "'"}, nil
	case foreign:
		return getattrForeign(x, name), nil
	}
	return undefined{hint: "'" + typeName(v) + " object' has no attribute '" + name + "'"}, nil
}

func stateAttr(x *stateVal, name string) any {
	s := x.s
	switch name {
	case "state":
		return s.State
	case "entity_id":
		return s.EntityID
	case "domain":
		return s.Domain()
	case "object_id":
		return s.ObjectID()
	case "name":
		return s.Name()
	case "attributes":
		return fromGo(s.Attributes)
	case "last_changed":
		return &dtVal{s.LastChanged.UTC()}
	case "last_updated":
		return &dtVal{s.LastUpdated.UTC()}
	case "last_reported":
		return &dtVal{s.LastReported.UTC()}
	case "context":
		return fromGo(map[string]any{"id": s.Context.ID, "parent_id": deref(s.Context.ParentID), "user_id": deref(s.Context.UserID)})
	case "state_with_unit":
		if u, ok := s.Attributes["unit_of_measurement"].(string); ok {
			return s.State + " " + u
		}
		return s.State
	}
	return undefined{hint: "'TemplateState object' has no attribute '" + name + "'"}
}

func deref(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

func argStr(args []any, i int, def string) string {
	if i < len(args) {
		if s, ok := args[i].(string); ok {
			return s
		}
		return pyStr(args[i])
	}
	return def
}

func (r *renderer) callMethod(m *boundMethod, args []any, kw map[string]any) (any, error) {
	switch x := m.recv.(type) {
	case string:
		switch m.name {
		case "lower":
			return strings.ToLower(x), nil
		case "upper":
			return strings.ToUpper(x), nil
		case "strip":
			if len(args) > 0 {
				return strings.Trim(x, argStr(args, 0, "")), nil
			}
			return strings.TrimSpace(x), nil
		case "lstrip":
			return strings.TrimLeft(x, argStr(args, 0, " \t\r\n")), nil
		case "rstrip":
			return strings.TrimRight(x, argStr(args, 0, " \t\r\n")), nil
		case "split":
			var parts []string
			if len(args) == 0 || args[0] == nil {
				parts = strings.Fields(x)
			} else {
				sep := argStr(args, 0, "")
				if sep == "" {
					return nil, valueErr("empty separator")
				}
				parts = strings.Split(x, sep)
			}
			out := make([]any, len(parts))
			for i, p := range parts {
				out[i] = p
			}
			return out, nil
		case "startswith":
			return strings.HasPrefix(x, argStr(args, 0, "")), nil
		case "endswith":
			return strings.HasSuffix(x, argStr(args, 0, "")), nil
		case "replace":
			return strings.ReplaceAll(x, argStr(args, 0, ""), argStr(args, 1, "")), nil
		case "title":
			return titleCase(x), nil
		case "capitalize":
			return capitalize(x), nil
		case "join":
			items, err := r.iterate(argOr(args, 0))
			if err != nil {
				return nil, err
			}
			parts := make([]string, len(items))
			for i, it := range items {
				parts[i] = pyStr(it)
			}
			return strings.Join(parts, x), nil
		case "count":
			return int64(strings.Count(x, argStr(args, 0, ""))), nil
		case "find":
			return int64(strings.Index(x, argStr(args, 0, ""))), nil
		case "isdigit":
			if x == "" {
				return false, nil
			}
			for _, c := range x {
				if c < '0' || c > '9' {
					return false, nil
				}
			}
			return true, nil
		case "format":
			return pyFormat(x, args)
		}
	case []any:
		switch m.name {
		case "count":
			n := int64(0)
			for _, e := range x {
				if pyEqual(e, argOr(args, 0)) {
					n++
				}
			}
			return n, nil
		case "index":
			for i, e := range x {
				if pyEqual(e, argOr(args, 0)) {
					return int64(i), nil
				}
			}
			return nil, valueErr("%s is not in list", pyRepr(argOr(args, 0)))
		}
	case map[string]any:
		keys := sortedKeys(x)
		switch m.name {
		case "items":
			out := make([]any, len(keys))
			for i, k := range keys {
				out[i] = []any{k, x[k]}
			}
			return out, nil
		case "keys":
			out := make([]any, len(keys))
			for i, k := range keys {
				out[i] = k
			}
			return out, nil
		case "values":
			out := make([]any, len(keys))
			for i, k := range keys {
				out[i] = x[k]
			}
			return out, nil
		case "get":
			if v, ok := x[argStr(args, 0, "")]; ok {
				return v, nil
			}
			if len(args) > 1 {
				return args[1], nil
			}
			return nil, nil
		}
	case *dtVal:
		return dtMethod(x, m.name, args, kw)
	case *tdVal:
		return x.d.Seconds(), nil
	}
	return nil, typeErr("'%s' object has no method '%s'", typeName(m.recv), m.name)
}

func argOr(args []any, i int) any {
	if i < len(args) {
		return args[i]
	}
	return undefined{hint: "missing argument"}
}

func titleCase(s string) string {
	out := []rune(strings.ToLower(s))
	prevLetter := false
	for i, c := range out {
		isLetter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c > 127
		if isLetter && !prevLetter {
			out[i] = []rune(strings.ToUpper(string(c)))[0]
		}
		prevLetter = isLetter || c >= '0' && c <= '9' || c == '\''
	}
	return string(out)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	rs := []rune(strings.ToLower(s))
	return strings.ToUpper(string(rs[0])) + string(rs[1:])
}

// pyFormat supports "{}" / "{0}" placeholders (str.format without specs).
func pyFormat(f string, args []any) (any, error) {
	var b strings.Builder
	auto := 0
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c == '{' && i+1 < len(f) && f[i+1] == '{' {
			b.WriteByte('{')
			i++
			continue
		}
		if c == '}' && i+1 < len(f) && f[i+1] == '}' {
			b.WriteByte('}')
			i++
			continue
		}
		if c != '{' {
			b.WriteByte(c)
			continue
		}
		end := strings.IndexByte(f[i:], '}')
		if end < 0 {
			return nil, valueErr("Single '{' encountered in format string")
		}
		field := f[i+1 : i+end]
		idx := auto
		if field != "" {
			n, err := strconv.Atoi(field)
			if err != nil {
				return nil, valueErr("unsupported format field %q", field)
			}
			idx = n
		} else {
			auto++
		}
		if idx >= len(args) {
			return nil, &TemplateError{Kind: "IndexError", Msg: "Replacement index " + strconv.Itoa(idx) + " out of range for positional args tuple"}
		}
		b.WriteString(pyStr(args[idx]))
		i += end
	}
	return b.String(), nil
}

package hass

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hamcp/hamcp/dev/sim/home"
)

// Global functions available in templates (HA's template environment).

var globals map[string]*fnVal

type fnImpl = func(r *renderer, args []any, kw map[string]any) (any, error)

func init() {
	g := map[string]fnImpl{
		"is_state": func(r *renderer, a []any, kw map[string]any) (any, error) {
			st := r.state(argStr(a, 0, ""))
			if st == nil {
				return false, nil
			}
			if l, ok := argOr(a, 1).([]any); ok {
				for _, w := range l {
					if pyStr(w) == st.State {
						return true, nil
					}
				}
				return false, nil
			}
			return st.State == argStr(a, 1, ""), nil
		},
		"state_attr": func(r *renderer, a []any, kw map[string]any) (any, error) {
			st := r.state(argStr(a, 0, ""))
			if st == nil {
				return nil, nil
			}
			v, ok := st.Attributes[argStr(a, 1, "")]
			if !ok {
				return nil, nil
			}
			return fromGo(v), nil
		},
		"is_state_attr": func(r *renderer, a []any, kw map[string]any) (any, error) {
			st := r.state(argStr(a, 0, ""))
			if st == nil {
				return false, nil
			}
			v, ok := st.Attributes[argStr(a, 1, "")]
			return ok && pyEqual(fromGo(v), argOr(a, 2)), nil
		},
		"has_value": func(r *renderer, a []any, kw map[string]any) (any, error) {
			st := r.state(argStr(a, 0, ""))
			return st != nil && st.State != "unknown" && st.State != "unavailable", nil
		},
		"now": func(r *renderer, a []any, kw map[string]any) (any, error) {
			r.time = true
			return &dtVal{r.snap.Now().In(r.snap.Location())}, nil
		},
		"utcnow": func(r *renderer, a []any, kw map[string]any) (any, error) {
			r.time = true
			return &dtVal{r.snap.Now().UTC()}, nil
		},
		"today_at": func(r *renderer, a []any, kw map[string]any) (any, error) {
			r.time = true
			s := argStr(a, 0, "00:00")
			n := r.snap.Now().In(r.snap.Location())
			for _, layout := range []string{"15:04:05", "15:04"} {
				if t, err := time.Parse(layout, s); err == nil {
					return &dtVal{time.Date(n.Year(), n.Month(), n.Day(), t.Hour(), t.Minute(), t.Second(), 0, r.snap.Location())}, nil
				}
			}
			return nil, valueErr("could not convert str to datetime: '%s'", s)
		},
		"as_timestamp": func(r *renderer, a []any, kw map[string]any) (any, error) {
			return r.asTimestamp(argOr(a, 0), defaultArg(a, 1, kw))
		},
		"as_datetime": func(r *renderer, a []any, kw map[string]any) (any, error) {
			return r.asDatetime(argOr(a, 0), defaultArg(a, 1, kw))
		},
		"as_local": func(r *renderer, a []any, kw map[string]any) (any, error) {
			d, ok := argOr(a, 0).(*dtVal)
			if !ok {
				return nil, typeErr("as_local expects a datetime")
			}
			return &dtVal{d.t.In(r.snap.Location())}, nil
		},
		"strptime": func(r *renderer, a []any, kw map[string]any) (any, error) {
			t, err := pyStrptime(argStr(a, 0, ""), argStr(a, 1, ""))
			if err != nil {
				if d := defaultArg(a, 2, kw); d != nil {
					return d, nil
				}
				return nil, r.noDefault("strptime", argOr(a, 0))
			}
			return &dtVal{t}, nil
		},
		"timedelta": func(r *renderer, a []any, kw map[string]any) (any, error) {
			var d float64
			units := []struct {
				k string
				u time.Duration
			}{{"days", 24 * time.Hour}, {"seconds", time.Second}, {"microseconds", time.Microsecond}, {"milliseconds", time.Millisecond}, {"minutes", time.Minute}, {"hours", time.Hour}, {"weeks", 7 * 24 * time.Hour}}
			for i, u := range units {
				v, ok := kw[u.k]
				if !ok && i < len(a) {
					v, ok = a[i], true
				}
				if ok {
					if !isNumber(v) {
						return nil, typeErr("unsupported type for timedelta %s component: %s", u.k, typeName(v))
					}
					d += asFloat(v) * float64(u.u)
				}
			}
			if math.Abs(d) > float64(math.MaxInt64) {
				return nil, &TemplateError{Kind: "OverflowError", Msg: "timedelta too large"}
			}
			return &tdVal{time.Duration(d)}, nil
		},
		"float": func(r *renderer, a []any, kw map[string]any) (any, error) {
			return r.toFloat("float", argOr(a, 0), defaultArg(a, 1, kw))
		},
		"int": func(r *renderer, a []any, kw map[string]any) (any, error) {
			return r.toInt(argOr(a, 0), defaultArg(a, 1, kw))
		},
		"bool": func(r *renderer, a []any, kw map[string]any) (any, error) {
			b, ok := pyBool(argOr(a, 0))
			if !ok {
				if d := defaultArg(a, 1, kw); d != nil {
					return d, nil
				}
				return nil, r.noDefault("bool", argOr(a, 0))
			}
			return b, nil
		},
		"min": func(r *renderer, a []any, kw map[string]any) (any, error) { return r.minmax(a, -1) },
		"max": func(r *renderer, a []any, kw map[string]any) (any, error) { return r.minmax(a, 1) },
		"range": func(r *renderer, a []any, kw map[string]any) (any, error) {
			start, stop, step := int64(0), int64(0), int64(1)
			switch len(a) {
			case 1:
				stop = asInt(a[0])
			case 2:
				start, stop = asInt(a[0]), asInt(a[1])
			case 3:
				start, stop, step = asInt(a[0]), asInt(a[1]), asInt(a[2])
			default:
				return nil, typeErr("range expected 1 to 3 arguments, got %d", len(a))
			}
			if step == 0 {
				return nil, valueErr("range() arg 3 must not be zero")
			}
			n := (stop - start + step - sign(step)) / step
			if n > 100000 {
				return nil, &TemplateError{Kind: "OverflowError", Msg: "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000)."}
			}
			out := []any{}
			for i := start; (step > 0 && i < stop) || (step < 0 && i > stop); i += step {
				out = append(out, i)
			}
			return out, nil
		},
		"namespace": func(r *renderer, a []any, kw map[string]any) (any, error) {
			m := map[string]any{}
			for k, v := range kw {
				m[k] = v
			}
			return &nsVal{m}, nil
		},
		"dict": func(r *renderer, a []any, kw map[string]any) (any, error) {
			m := map[string]any{}
			if d, ok := argOr(a, 0).(map[string]any); ok {
				for k, v := range d {
					m[k] = v
				}
			}
			for k, v := range kw {
				m[k] = v
			}
			return m, nil
		},
		"list": func(r *renderer, a []any, kw map[string]any) (any, error) {
			if len(a) == 0 {
				return []any{}, nil
			}
			items, err := r.iterate(a[0])
			return append([]any{}, items...), err
		},
		"iif": func(r *renderer, a []any, kw map[string]any) (any, error) { return iif(a) },
		"expand": func(r *renderer, a []any, kw map[string]any) (any, error) {
			seen := map[string]bool{}
			var out []any
			var walk func(v any)
			walk = func(v any) {
				switch x := v.(type) {
				case string:
					if st := r.state(x); st != nil && !seen[x] {
						seen[x] = true
						out = append(out, &stateVal{st})
					}
				case *stateVal:
					walk(x.s.EntityID)
				case []any:
					for _, e := range x {
						walk(e)
					}
				}
			}
			for _, v := range a {
				walk(v)
			}
			sort.Slice(out, func(i, j int) bool { return out[i].(*stateVal).s.EntityID < out[j].(*stateVal).s.EntityID })
			if out == nil {
				out = []any{}
			}
			return out, nil
		},
		"area_name": func(r *renderer, a []any, kw map[string]any) (any, error) {
			return noneIfEmpty(r.snap.AreaName(argStr(a, 0, ""))), nil
		},
		"area_id": func(r *renderer, a []any, kw map[string]any) (any, error) {
			return noneIfEmpty(r.snap.AreaID(argStr(a, 0, ""))), nil
		},
		"area_entities": func(r *renderer, a []any, kw map[string]any) (any, error) {
			return strsToList(r.snap.AreaEntities(argStr(a, 0, ""))), nil
		},
		"area_devices": func(r *renderer, a []any, kw map[string]any) (any, error) {
			return strsToList(r.snap.AreaDevices(argStr(a, 0, ""))), nil
		},
		"areas": func(r *renderer, a []any, kw map[string]any) (any, error) { return strsToList(r.snap.Areas()), nil },
		"floor_areas": func(r *renderer, a []any, kw map[string]any) (any, error) {
			return strsToList(r.snap.FloorAreas(argStr(a, 0, ""))), nil
		},
		"floor_name": func(r *renderer, a []any, kw map[string]any) (any, error) {
			return noneIfEmpty(r.snap.FloorName(argStr(a, 0, ""))), nil
		},
		"label_entities": func(r *renderer, a []any, kw map[string]any) (any, error) {
			return strsToList(r.snap.LabelEntities(argStr(a, 0, ""))), nil
		},
		"device_id": func(r *renderer, a []any, kw map[string]any) (any, error) {
			return noneIfEmpty(r.snap.DeviceID(argStr(a, 0, ""))), nil
		},
		"device_attr": func(r *renderer, a []any, kw map[string]any) (any, error) {
			return fromGo(r.snap.DeviceAttr(argStr(a, 0, ""), argStr(a, 1, ""))), nil
		},
	}
	globals = map[string]*fnVal{}
	for name, fn := range g {
		globals[name] = &fnVal{name: name, fn: fn}
	}
}

func sign(n int64) int64 {
	if n < 0 {
		return -1
	}
	return 1
}

func noneIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func strsToList(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func defaultArg(a []any, i int, kw map[string]any) any {
	if v, ok := kw["default"]; ok {
		return v
	}
	if i < len(a) {
		return a[i]
	}
	return nil
}

// state reads an entity and records it as a listener.
func (r *renderer) state(id string) *home.State {
	id = strings.ToLower(id)
	r.entities[id] = true
	st, _ := r.snap.State(id)
	return st
}

// callStates is states('x.y'): the state string, "unknown" when missing.
func callStates(r *renderer, a []any, kw map[string]any) (any, error) {
	var st *home.State
	switch x := argOr(a, 0).(type) {
	case string:
		st = r.state(x)
	case *stateVal:
		st = x.s
	default:
		return nil, typeErr("states() expects an entity id")
	}
	if st == nil {
		return "unknown", nil
	}
	val := st.State
	if truthy(kw["rounded"]) {
		if f, err := strconv.ParseFloat(val, 64); err == nil {
			val = pyFloat(f)
		}
	}
	if truthy(kw["with_unit"]) {
		if u, ok := st.Attributes["unit_of_measurement"].(string); ok {
			val += " " + u
		}
	}
	return val, nil
}

// noDefault is HA's raise_no_default.
func (r *renderer) noDefault(fn string, v any) error {
	return valueErr("Template error: %s got invalid input %s when rendering template %s but no default was specified", fn, pyRepr(pyStr(v)), pyQuote(r.src()))
}

func (r *renderer) src() string { return r.source }

func (r *renderer) toFloat(fn string, v, def any) (any, error) {
	if f, ok := parseNum(v); ok {
		return f, nil
	}
	if def != nil {
		return def, nil
	}
	return nil, r.noDefault(fn, v)
}

func parseNum(v any) (float64, bool) {
	switch x := v.(type) {
	case int64, float64, bool:
		return asFloat(x), true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(strings.ReplaceAll(x, "_", "")), 64)
		return f, err == nil
	}
	return 0, false
}

func (r *renderer) toInt(v, def any) (any, error) {
	if s, ok := v.(string); ok {
		if i, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
			return i, nil
		}
	}
	if f, ok := parseNum(v); ok && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return int64(f), nil
	}
	if def != nil {
		return def, nil
	}
	return nil, r.noDefault("int", v)
}

func pyBool(v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case int64, float64:
		return asFloat(x) != 0, true
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "1", "true", "yes", "on", "enable":
			return true, true
		case "0", "false", "no", "off", "disable":
			return false, true
		}
	case nil:
		return false, true
	}
	return false, false
}

func iif(a []any) (any, error) {
	cond := argOr(a, 0)
	pick := func(i int, def any) any {
		if i < len(a) {
			return a[i]
		}
		return def
	}
	if cond == nil {
		return pick(3, false), nil
	}
	if truthy(cond) {
		return pick(1, true), nil
	}
	return pick(2, false), nil
}

func (r *renderer) minmax(a []any, dir int) (any, error) {
	items := a
	if len(a) == 1 {
		var err error
		if items, err = r.iterate(a[0]); err != nil {
			return nil, err
		}
	}
	if len(items) == 0 {
		return nil, valueErr("min() arg is an empty sequence")
	}
	best := items[0]
	for _, it := range items[1:] {
		c, err := pyCompare("<", it, best)
		if err != nil {
			return nil, err
		}
		if c*dir > 0 {
			best = it
		}
	}
	return best, nil
}

func (r *renderer) asTimestamp(v, def any) (any, error) {
	switch x := v.(type) {
	case *dtVal:
		return float64(x.t.UnixMicro()) / 1e6, nil
	case *stateVal:
		return float64(x.s.LastChanged.UnixMicro()) / 1e6, nil
	case int64, float64:
		return asFloat(x), nil
	case string:
		if t, err := home.ParseTime(x, r.snap.Location()); err == nil {
			return float64(t.UnixMicro()) / 1e6, nil
		}
	}
	if def != nil {
		return def, nil
	}
	return nil, r.noDefault("as_timestamp", v)
}

func (r *renderer) asDatetime(v, def any) (any, error) {
	switch x := v.(type) {
	case *dtVal:
		return x, nil
	case int64, float64:
		f := asFloat(x)
		return &dtVal{time.UnixMicro(int64(f * 1e6)).UTC()}, nil
	case string:
		if t, err := home.ParseTime(x, time.UTC); err == nil {
			return &dtVal{t}, nil
		}
		if f, err := strconv.ParseFloat(x, 64); err == nil {
			return &dtVal{time.UnixMicro(int64(f * 1e6)).UTC()}, nil
		}
	}
	if def != nil {
		return def, nil
	}
	return nil, r.noDefault("as_datetime", v)
}

func dtMethod(x *dtVal, name string, args []any, kw map[string]any) (any, error) {
	t := x.t
	switch name {
	case "isoformat":
		s := t.Format("2006-01-02T15:04:05")
		if us := t.Nanosecond() / 1000; us != 0 {
			s += "." + leftPad(strconv.Itoa(us), 6)
		}
		return s + t.Format("-07:00"), nil
	case "strftime":
		return pyStrftime(t, argStr(args, 0, "")), nil
	case "timestamp":
		return float64(t.UnixMicro()) / 1e6, nil
	case "date":
		return &dtVal{time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location())}, nil
	case "weekday":
		return int64((int(t.Weekday()) + 6) % 7), nil
	case "isoweekday":
		return int64((int(t.Weekday())+6)%7 + 1), nil
	case "astimezone":
		return &dtVal{t}, nil
	case "replace":
		get := func(k string, cur int) int {
			if v, ok := kw[k]; ok {
				return int(asInt(v))
			}
			return cur
		}
		nt := time.Date(get("year", t.Year()), time.Month(get("month", int(t.Month()))), get("day", t.Day()),
			get("hour", t.Hour()), get("minute", t.Minute()), get("second", t.Second()), get("microsecond", t.Nanosecond()/1000)*1000, t.Location())
		return &dtVal{nt}, nil
	}
	return nil, typeErr("datetime has no method %s", name)
}

func leftPad(s string, n int) string {
	for len(s) < n {
		s = "0" + s
	}
	return s
}

// pyStrftime implements the common strftime directives.
func pyStrftime(t time.Time, f string) string {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 >= len(f) {
			b.WriteByte(f[i])
			continue
		}
		i++
		switch f[i] {
		case 'Y':
			b.WriteString(strconv.Itoa(t.Year()))
		case 'y':
			b.WriteString(t.Format("06"))
		case 'm':
			b.WriteString(t.Format("01"))
		case 'd':
			b.WriteString(t.Format("02"))
		case 'H':
			b.WriteString(t.Format("15"))
		case 'I':
			b.WriteString(t.Format("03"))
		case 'M':
			b.WriteString(t.Format("04"))
		case 'S':
			b.WriteString(t.Format("05"))
		case 'f':
			b.WriteString(leftPad(strconv.Itoa(t.Nanosecond()/1000), 6))
		case 'p':
			b.WriteString(t.Format("PM"))
		case 'a':
			b.WriteString(t.Format("Mon"))
		case 'A':
			b.WriteString(t.Format("Monday"))
		case 'b':
			b.WriteString(t.Format("Jan"))
		case 'B':
			b.WriteString(t.Format("January"))
		case 'z':
			b.WriteString(t.Format("-0700"))
		case 'Z':
			b.WriteString(t.Format("MST"))
		case 'j':
			b.WriteString(leftPad(strconv.Itoa(t.YearDay()), 3))
		case 'w':
			b.WriteString(strconv.Itoa(int(t.Weekday())))
		case 'e':
			b.WriteString(t.Format("_2"))
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(f[i])
		}
	}
	return b.String()
}

// pyStrptime converts the common directives to a Go layout.
func pyStrptime(s, f string) (time.Time, error) {
	repl := map[byte]string{'Y': "2006", 'y': "06", 'm': "01", 'd': "02", 'H': "15", 'I': "03", 'M': "04", 'S': "05",
		'p': "PM", 'a': "Mon", 'A': "Monday", 'b': "Jan", 'B': "January", 'z': "-0700", 'Z': "MST", 'f': "000000", '%': "%"}
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] == '%' && i+1 < len(f) {
			if r, ok := repl[f[i+1]]; ok {
				b.WriteString(r)
				i++
				continue
			}
			return time.Time{}, valueErr("unsupported directive %%%c", f[i+1])
		}
		b.WriteByte(f[i])
	}
	return time.Parse(b.String(), s)
}

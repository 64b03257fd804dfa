package hass

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hamcp/hamcp/dev/sim/home"
	"github.com/nikolalohinski/gonja/v2/exec"
)

// Template values are Python-like: nil (None), bool, int64, float64, string,
// []any (list), map[string]any (dict) and the types below.

type undefined struct{ hint string }

// stateVal is HA's TemplateState.
type stateVal struct{ s *home.State }

// domainVal is states.<domain>.
type domainVal struct{ domain string }

// statesVal is the global "states" object (callable, iterable, attribute access).
type statesVal struct{}

type dtVal struct{ t time.Time }
type tdVal struct{ d time.Duration }

type fnVal struct {
	name string
	fn   func(r *renderer, args []any, kw map[string]any) (any, error)
}

// boundMethod is a method looked up on a value, e.g. "abc".upper.
type boundMethod struct {
	recv any
	name string
}

type nsVal struct{ m map[string]any }

func typeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int64:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case []any:
		return "list"
	case map[string]any:
		return "dict"
	case undefined:
		return "Undefined"
	case *stateVal:
		return "TemplateState"
	case *domainVal:
		return "DomainStates"
	case *statesVal:
		return "AllStates"
	case *dtVal:
		return "datetime"
	case *tdVal:
		return "timedelta"
	case *fnVal, *boundMethod:
		return "function"
	case *nsVal:
		return "Namespace"
	case foreign:
		switch x.v.Interface().(type) {
		case exec.Macro:
			return "Macro"
		case exec.AttributeGetter:
			return "LoopContext"
		}
		return "function"
	}
	return fmt.Sprintf("%T", v)
}

// fromGo turns decoded JSON / home values into template values.
func fromGo(v any) any {
	switch x := v.(type) {
	case nil, bool, string, int64, float64:
		return x
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case float32:
		return float64(x)
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = fromGo(e)
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = fromGo(e)
		}
		return out
	case *home.State:
		return &stateVal{x}
	case time.Time:
		return &dtVal{x}
	}
	return fmt.Sprint(v)
}

// toGo turns a template value into JSON-encodable data.
func toGo(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toGo(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = toGo(e)
		}
		return out
	case undefined:
		return nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return pyFloat(x)
		}
		return x
	case nil, bool, int64, string:
		return x
	}
	return pyStr(v)
}

func truthy(v any) bool {
	switch x := v.(type) {
	case nil, undefined:
		return false
	case bool:
		return x
	case int64:
		return x != 0
	case float64:
		return x != 0
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	case *tdVal:
		return x.d != 0
	}
	return true
}

// pyFloat is Python's repr(float).
func pyFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	exp := int(math.Floor(math.Log10(math.Abs(f))))
	if exp >= -4 && exp < 16 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.ContainsAny(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	return s
}

// pyStr is Python's str().
func pyStr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case undefined:
		return ""
	case bool:
		if x {
			return "True"
		}
		return "False"
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return pyFloat(x)
	case string:
		return x
	case []any, map[string]any:
		return pyRepr(v)
	case *stateVal:
		return fmt.Sprintf("<template TemplateState(<state %s=%s; %s @ %s>)>", x.s.EntityID, x.s.State, attrsRepr(x.s.Attributes), x.s.LastChanged.Format("2006-01-02T15:04:05.999999-07:00"))
	case *domainVal:
		return fmt.Sprintf("<template DomainStates('%s')>", x.domain)
	case *statesVal:
		return "<template AllStates>"
	case *dtVal:
		return pyDatetime(x.t)
	case *tdVal:
		return pyTimedelta(x.d)
	case *nsVal:
		return "<Namespace " + pyRepr(fromJ(x.m)) + ">"
	case *fnVal:
		return "<function " + x.name + ">"
	case *boundMethod:
		return "<built-in method " + x.name + ">"
	case foreign:
		return "<" + typeName(x) + ">"
	}
	return fmt.Sprint(v)
}

func attrsRepr(a map[string]any) string {
	keys := sortedKeys(a)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + pyStr(fromGo(a[k]))
	}
	return strings.Join(parts, ", ")
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// pyRepr is Python's repr().
func pyRepr(v any) string {
	switch x := v.(type) {
	case string:
		return pyQuote(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := sortedKeys(x)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = pyQuote(k) + ": " + pyRepr(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case *dtVal:
		return "datetime.datetime(" + x.t.Format("2006, 1, 2, 15, 4, 5") + ")"
	case undefined:
		return "Undefined"
	}
	return pyStr(v)
}

// pyQuote quotes like Python's repr(str): single quotes unless the text has
// a single quote and no double quote.
func pyQuote(s string) string {
	q := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, "\"") {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

func pyDatetime(t time.Time) string {
	s := t.Format("2006-01-02 15:04:05")
	if us := t.Nanosecond() / 1000; us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	return s + t.Format("-07:00")
}

func pyTimedelta(d time.Duration) string {
	neg := d < 0
	us := d.Microseconds()
	days := us / 86400e6
	rem := us - days*86400e6
	if neg && rem != 0 {
		days--
		rem += 86400e6
	}
	if neg && rem == 0 {
		rem = 0
	}
	secs := rem / 1e6
	frac := rem % 1e6
	s := fmt.Sprintf("%d:%02d:%02d", secs/3600, secs/60%60, secs%60)
	if frac != 0 {
		s += fmt.Sprintf(".%06d", frac)
	}
	if days != 0 {
		unit := "days"
		if days == 1 || days == -1 {
			unit = "day"
		}
		s = fmt.Sprintf("%d %s, %s", days, unit, s)
	}
	return s
}

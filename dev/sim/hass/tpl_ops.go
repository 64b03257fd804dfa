package hass

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Python semantics of the operators templates use.

func typeErr(format string, args ...any) error {
	return &TemplateError{Kind: "TypeError", Msg: fmt.Sprintf(format, args...)}
}

func valueErr(format string, args ...any) error {
	return &TemplateError{Kind: "ValueError", Msg: fmt.Sprintf(format, args...)}
}

func undefErr(u undefined) error {
	return &TemplateError{Kind: "UndefinedError", Msg: u.hint}
}

func isNumber(v any) bool {
	switch v.(type) {
	case int64, float64, bool:
		return true
	}
	return false
}

func asFloat(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	case bool:
		if x {
			return 1
		}
	}
	return 0
}

func asInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case bool:
		if x {
			return 1
		}
	case float64:
		return int64(x)
	}
	return 0
}

// arith applies a binary arithmetic operator with Python's rules.
func arith(op string, a, b any) (any, error) {
	if u, ok := a.(undefined); ok {
		return nil, undefErr(u)
	}
	if u, ok := b.(undefined); ok {
		return nil, undefErr(u)
	}
	_, aInt := a.(int64)
	_, bInt := b.(int64)
	if _, ok := a.(bool); ok {
		aInt = true
	}
	if _, ok := b.(bool); ok {
		bInt = true
	}
	if isNumber(a) && isNumber(b) {
		ints := aInt && bInt
		x, y := asFloat(a), asFloat(b)
		switch op {
		case "+":
			if ints {
				return asInt(a) + asInt(b), nil
			}
			return x + y, nil
		case "-":
			if ints {
				return asInt(a) - asInt(b), nil
			}
			return x - y, nil
		case "*":
			if ints {
				return asInt(a) * asInt(b), nil
			}
			return x * y, nil
		case "/":
			if y == 0 {
				return nil, &TemplateError{Kind: "ZeroDivisionError", Msg: "division by zero"}
			}
			return x / y, nil
		case "//":
			if y == 0 {
				return nil, &TemplateError{Kind: "ZeroDivisionError", Msg: "integer division or modulo by zero"}
			}
			if ints {
				q := asInt(a) / asInt(b)
				if (asInt(a)%asInt(b) != 0) && ((asInt(a) < 0) != (asInt(b) < 0)) {
					q--
				}
				return q, nil
			}
			return math.Floor(x / y), nil
		case "%":
			if y == 0 {
				return nil, &TemplateError{Kind: "ZeroDivisionError", Msg: "integer division or modulo by zero"}
			}
			if ints {
				m := asInt(a) % asInt(b)
				if m != 0 && (m < 0) != (asInt(b) < 0) {
					m += asInt(b)
				}
				return m, nil
			}
			m := math.Mod(x, y)
			if m != 0 && (m < 0) != (y < 0) {
				m += y
			}
			return m, nil
		case "**":
			if ints && asInt(b) >= 0 {
				r := math.Pow(x, y)
				if math.Abs(r) < 1<<62 {
					return int64(r), nil
				}
				return r, nil
			}
			if x == 0 && y < 0 {
				return nil, &TemplateError{Kind: "ZeroDivisionError", Msg: "0.0 cannot be raised to a negative power"}
			}
			return math.Pow(x, y), nil
		}
	}
	switch op {
	case "+":
		if sa, ok := a.(string); ok {
			if sb, ok := b.(string); ok {
				return sa + sb, nil
			}
			return nil, typeErr("can only concatenate str (not \"%s\") to str", typeName(b))
		}
		if la, ok := a.([]any); ok {
			if lb, ok := b.([]any); ok {
				return append(append([]any{}, la...), lb...), nil
			}
			return nil, typeErr("can only concatenate list (not \"%s\") to list", typeName(b))
		}
		if da, ok := a.(*dtVal); ok {
			if db, ok := b.(*tdVal); ok {
				return &dtVal{da.t.Add(db.d)}, nil
			}
		}
		if ta, ok := a.(*tdVal); ok {
			if tb, ok := b.(*tdVal); ok {
				return &tdVal{ta.d + tb.d}, nil
			}
			if db, ok := b.(*dtVal); ok {
				return &dtVal{db.t.Add(ta.d)}, nil
			}
		}
	case "-":
		if da, ok := a.(*dtVal); ok {
			switch y := b.(type) {
			case *tdVal:
				return &dtVal{da.t.Add(-y.d)}, nil
			case *dtVal:
				return &tdVal{da.t.Sub(y.t)}, nil
			}
		}
		if ta, ok := a.(*tdVal); ok {
			if tb, ok := b.(*tdVal); ok {
				return &tdVal{ta.d - tb.d}, nil
			}
		}
	case "*":
		if s, ok := a.(string); ok && bInt {
			return repeatStr(s, asInt(b))
		}
		if s, ok := b.(string); ok && aInt {
			return repeatStr(s, asInt(a))
		}
		if td, ok := a.(*tdVal); ok && isNumber(b) {
			return &tdVal{time.Duration(float64(td.d) * asFloat(b))}, nil
		}
	case "/":
		if td, ok := a.(*tdVal); ok && isNumber(b) && asFloat(b) != 0 {
			return &tdVal{time.Duration(float64(td.d) / asFloat(b))}, nil
		}
	}
	return nil, typeErr("unsupported operand type(s) for %s: '%s' and '%s'", op, typeName(a), typeName(b))
}

func repeatStr(s string, n int64) (any, error) {
	if n <= 0 {
		return "", nil
	}
	if int64(len(s))*n > maxOutput {
		return nil, &TemplateError{Kind: "TemplateError", Msg: "result too large"}
	}
	return strings.Repeat(s, int(n)), nil
}

// pyEqual is Python ==.
func pyEqual(a, b any) bool {
	if isNumber(a) && isNumber(b) {
		return asFloat(a) == asFloat(b)
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !pyEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !pyEqual(v, w) {
				return false
			}
		}
		return true
	case undefined:
		_, ok := b.(undefined)
		return ok
	case *stateVal:
		y, ok := b.(*stateVal)
		return ok && x.s == y.s
	case *dtVal:
		y, ok := b.(*dtVal)
		return ok && x.t.Equal(y.t)
	case *tdVal:
		y, ok := b.(*tdVal)
		return ok && x.d == y.d
	}
	return a == b
}

// pyCompare is Python's ordering: -1, 0, 1 or a TypeError.
func pyCompare(op string, a, b any) (int, error) {
	if isNumber(a) && isNumber(b) {
		x, y := asFloat(a), asFloat(b)
		switch {
		case x < y:
			return -1, nil
		case x > y:
			return 1, nil
		}
		return 0, nil
	}
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), nil
		}
	case []any:
		if y, ok := b.([]any); ok {
			for i := 0; i < len(x) && i < len(y); i++ {
				if pyEqual(x[i], y[i]) {
					continue
				}
				return pyCompare(op, x[i], y[i])
			}
			return len(x) - len(y), nil
		}
	case *dtVal:
		if y, ok := b.(*dtVal); ok {
			return x.t.Compare(y.t), nil
		}
	case *tdVal:
		if y, ok := b.(*tdVal); ok {
			switch {
			case x.d < y.d:
				return -1, nil
			case x.d > y.d:
				return 1, nil
			}
			return 0, nil
		}
	}
	if u, ok := a.(undefined); ok {
		return 0, undefErr(u)
	}
	if u, ok := b.(undefined); ok {
		return 0, undefErr(u)
	}
	return 0, typeErr("'%s' not supported between instances of '%s' and '%s'", op, typeName(a), typeName(b))
}

// pyContains is Python's "in".
func pyContains(container, item any) (bool, error) {
	switch c := container.(type) {
	case string:
		s, ok := item.(string)
		if !ok {
			return false, typeErr("'in <string>' requires string as left operand, not %s", typeName(item))
		}
		return strings.Contains(c, s), nil
	case []any:
		for _, e := range c {
			if pyEqual(e, item) {
				return true, nil
			}
		}
		return false, nil
	case map[string]any:
		s, ok := item.(string)
		if !ok {
			return false, nil
		}
		_, found := c[s]
		return found, nil
	case undefined:
		return false, undefErr(c)
	}
	return false, typeErr("argument of type '%s' is not iterable", typeName(container))
}

package home

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// kind is a service field's value type; coercion mirrors the voluptuous
// validators HA uses (vol.Coerce(float), cv.boolean, cv.string, vol.In, ...).
type kind int

const (
	kAny kind = iota
	kFloat
	kInt
	kBool
	kString
	kEnum
	kRGB
	kStrList
	kObject
	kDate
	kDateTime
	kList
)

// field declares one service field: validation plus the description HA
// publishes in GET /api/services.
type field struct {
	name     string
	kind     kind
	min, max *float64
	options  []string
	required bool
	group    string // vol.Exclusive group
	desc     string
	example  any
}

func num(v float64) *float64 { return &v }

// Field is an exported field declaration for services registered from outside
// the package (RegisterService).
type Field struct {
	Name        string
	Type        string // "float" | "int" | "bool" | "string" | "object" | "list" | "any"
	Required    bool
	Description string
	Min, Max    *float64
}

func (f Field) internal() field {
	k := map[string]kind{"float": kFloat, "int": kInt, "bool": kBool, "string": kString, "object": kObject, "list": kStrList}[f.Type]
	return field{name: f.Name, kind: k, required: f.Required, desc: f.Description, min: f.Min, max: f.Max}
}

// pyRepr formats a range bound the way Python prints it in vol messages.
func pyRepr(v float64, k kind) string {
	if k == kInt || v != math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func pyList(opts []string) string {
	q := make([]string, len(opts))
	for i, o := range opts {
		q[i] = "'" + o + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	return 0, false
}

// coerce validates one value; the returned message is the voluptuous text
// without the " @ data[...]" suffix.
func (f field) coerce(v any) (any, string) {
	switch f.kind {
	case kAny:
		return v, ""
	case kFloat, kInt:
		x, ok := toFloat(v)
		if f.kind == kInt {
			if s, isStr := v.(string); isStr {
				i, err := strconv.Atoi(strings.TrimSpace(s))
				x, ok = float64(i), err == nil
			}
			x = math.Trunc(x)
		}
		if !ok {
			if f.kind == kInt {
				return nil, "expected int"
			}
			return nil, "expected float"
		}
		if f.min != nil && x < *f.min {
			return nil, "value must be at least " + pyRepr(*f.min, f.kind)
		}
		if f.max != nil && x > *f.max {
			return nil, "value must be at most " + pyRepr(*f.max, f.kind)
		}
		if f.kind == kInt {
			return int(x), ""
		}
		return x, ""
	case kBool:
		return coerceBool(v)
	case kString:
		switch x := v.(type) {
		case string:
			return x, ""
		case float64, int, bool:
			return fmt.Sprint(x), ""
		case nil:
			return nil, "string value is None"
		}
		return nil, "expected str"
	case kEnum:
		s, _ := v.(string)
		for _, o := range f.options {
			if s == o {
				return s, ""
			}
		}
		return nil, "value must be one of " + pyList(f.options)
	case kRGB:
		l, ok := v.([]any)
		if !ok || len(l) != 3 {
			return nil, "expected a list of 3 integers 0..255"
		}
		out := make([]any, 3)
		for i, e := range l {
			x, ok := toFloat(e)
			if !ok || x < 0 || x > 255 {
				return nil, "expected a list of 3 integers 0..255"
			}
			out[i] = int(x)
		}
		return out, ""
	case kStrList:
		switch x := v.(type) {
		case string:
			return []any{x}, ""
		case []any:
			for _, e := range x {
				if _, ok := e.(string); !ok {
					return nil, "expected str"
				}
			}
			return x, ""
		case nil:
			return []any{}, ""
		}
		return nil, "expected a list"
	case kList:
		if l, ok := v.([]any); ok {
			return l, ""
		}
		return []any{v}, ""
	case kObject:
		if m, ok := v.(map[string]any); ok {
			return m, ""
		}
		return nil, "expected a dictionary"
	case kDate:
		s, _ := v.(string)
		if _, err := time.Parse("2006-01-02", s); err != nil {
			return nil, "Invalid date specified"
		}
		return s, ""
	case kDateTime:
		s, _ := v.(string)
		if _, err := parseHATime(s, time.UTC); err != nil {
			return nil, "Invalid datetime specified: " + fmt.Sprint(v)
		}
		return s, ""
	}
	return v, ""
}

func coerceBool(v any) (any, string) {
	switch x := v.(type) {
	case bool:
		return x, ""
	case float64:
		return x != 0, ""
	case int:
		return x != 0, ""
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "1", "true", "yes", "on", "enable":
			return true, ""
		case "0", "false", "no", "off", "disable":
			return false, ""
		}
	}
	return nil, fmt.Sprintf("invalid boolean value %v", v)
}

// targetKeys are the keys HA accepts in service data to select entities.
var targetKeys = []string{"entity_id", "device_id", "area_id", "floor_id", "label_id"}

func isTargetKey(k string) bool {
	for _, t := range targetKeys {
		if t == k {
			return true
		}
	}
	return false
}

// validate checks service data against the declaration, returning coerced
// data (without target keys) and the target selection.
func (d *serviceDef) validate(data map[string]any) (map[string]any, map[string][]string, error) {
	out := map[string]any{}
	tgt := map[string][]string{}
	groups := map[string]bool{}
	for k, v := range data {
		if d.target != "" && isTargetKey(k) {
			ids, err := targetList(k, v)
			if err != nil {
				return nil, nil, err
			}
			tgt[k] = append(tgt[k], ids...)
			continue
		}
		f, ok := d.field(k)
		if !ok {
			if d.extraOK {
				out[k] = v
				continue
			}
			return nil, nil, invalidf("extra keys not allowed @ data['%s']", k)
		}
		if f.group != "" {
			if groups[f.group] {
				return nil, nil, invalidf("two or more values in the same group of exclusion '%s' @ data[<%s>]", f.group, f.group)
			}
			groups[f.group] = true
		}
		cv, msg := f.coerce(v)
		if msg != "" {
			return nil, nil, invalidf("%s for dictionary value @ data['%s']", msg, k)
		}
		out[k] = cv
	}
	for _, f := range d.fields {
		if _, ok := out[f.name]; f.required && !ok {
			return nil, nil, invalidf("required key not provided @ data['%s']", f.name)
		}
	}
	return out, tgt, nil
}

func (d *serviceDef) field(name string) (field, bool) {
	for _, f := range d.fields {
		if f.name == name {
			return f, true
		}
	}
	return field{}, false
}

// targetList accepts a string (comma separated allowed, like cv.comp_entity_ids)
// or a list of strings.
func targetList(key string, v any) ([]string, error) {
	var raw []string
	switch x := v.(type) {
	case string:
		for _, p := range strings.Split(x, ",") {
			if p = strings.TrimSpace(p); p != "" {
				raw = append(raw, p)
			}
		}
	case []any:
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, invalidf("expected str for dictionary value @ data['%s']", key)
			}
			raw = append(raw, s)
		}
	case []string:
		raw = x
	case nil:
		return nil, nil
	default:
		return nil, invalidf("expected str for dictionary value @ data['%s']", key)
	}
	if key == "entity_id" {
		for i, id := range raw {
			id = strings.ToLower(id)
			raw[i] = id
			if id == "all" || id == "none" {
				continue
			}
			if !ValidEntityID(id) && !isHexID(id) {
				return nil, invalidf("Entity %s is neither a valid entity ID nor a valid UUID for dictionary value @ data['entity_id']", id)
			}
		}
	}
	return raw, nil
}

// description is the GET /api/services shape of a declared service.
func (d *serviceDef) description() map[string]any {
	fields := map[string]any{}
	for _, f := range d.fields {
		fd := map[string]any{"name": titleCase(f.name), "description": f.desc, "selector": f.selector()}
		if f.required {
			fd["required"] = true
		}
		if f.example != nil {
			fd["example"] = f.example
		}
		fields[f.name] = fd
	}
	m := map[string]any{"name": d.title, "description": d.desc, "fields": fields}
	if d.target != "" {
		ent := map[string]any{}
		if d.target != "*" {
			ent["domain"] = []string{d.target}
		}
		if d.feature != 0 {
			ent["supported_features"] = []int{d.feature}
		}
		m["target"] = map[string]any{"entity": []any{ent}}
	}
	switch d.response {
	case ResponseOptional:
		m["response"] = map[string]any{"optional": true}
	case ResponseOnly:
		m["response"] = map[string]any{"optional": false}
	}
	return m
}

func (f field) selector() map[string]any {
	switch f.kind {
	case kFloat, kInt:
		n := map[string]any{"mode": "slider"}
		if f.min != nil {
			n["min"] = *f.min
		}
		if f.max != nil {
			n["max"] = *f.max
		}
		if f.min == nil || f.max == nil {
			n["mode"] = "box"
		}
		return map[string]any{"number": n}
	case kBool:
		return map[string]any{"boolean": map[string]any{}}
	case kEnum:
		return map[string]any{"select": map[string]any{"options": f.options}}
	case kRGB:
		return map[string]any{"color_rgb": map[string]any{}}
	case kObject, kList:
		return map[string]any{"object": map[string]any{}}
	case kDate:
		return map[string]any{"date": map[string]any{}}
	case kDateTime:
		return map[string]any{"datetime": map[string]any{}}
	case kStrList:
		return map[string]any{"text": map[string]any{"multiple": true}}
	}
	return map[string]any{"text": map[string]any{}}
}

func titleCase(s string) string {
	s = strings.ReplaceAll(s, "_", " ")
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// isHexID reports a registry uuid.hex id, which HA accepts in place of an entity id.
func isHexID(s string) bool {
	if len(s) != 32 {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}

package rules

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Decoding. A rule arrives as JSON written by a model, by upstream's UI or by an upstream export.
// Decode folds upstream's alternative spellings into the one form the engine runs, and reports
// every field it does not know with its path: a model that wrote "conditions" inside an
// if_then_else learns that the field is "condition" instead of seeing its rule half-ignored.
// Values are read the way upstream's Groovy reads them: a number where a string is expected
// (device ids: "deviceId": 12) is its text, a numeric string where a number is expected is the
// number. Everything else that does not fit is a Problem naming the field and what it takes.

// Problems is a list of problems; as an error it reads one problem per line.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// String is "path: message", or the message alone for the rule as a whole.
func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// Decode reads one rule. The error, when there is one, is Problems (errors.As finds it).
func Decode(raw []byte) (Rule, error) {
	v, err := parseJSON(raw, "")
	if err != nil {
		return Rule{}, err
	}
	var r Rule
	if err := decodeTree(v, "", &r, foldRule); err != nil {
		return Rule{}, err
	}
	normalizeRule(&r)
	return r, nil
}

// DecodeExport reads an export (export_rule's answer, or upstream's). The rule inside is decoded
// like Decode's, with paths starting at "rule". The device manifest only informs (import maps
// devices with deviceMapping): entries that do not read are dropped rather than refused.
func DecodeExport(raw []byte) (Export, error) {
	v, err := parseJSON(raw, "")
	if err != nil {
		return Export{}, err
	}
	d := &decoder{}
	obj, ok := v.(map[string]any)
	if !ok {
		d.add("", "an export must be a JSON object, not %s", kindOf(v))
		return Export{}, d.probs
	}
	var e Export
	for _, k := range sortedKeys(obj) {
		switch k {
		case "exportVersion":
			d.value(reflect.ValueOf(&e.ExportVersion).Elem(), obj[k], k)
		case "exportedAt":
			d.value(reflect.ValueOf(&e.ExportedAt).Elem(), obj[k], k)
		case "serverVersion":
			d.value(reflect.ValueOf(&e.ServerVersion).Elem(), obj[k], k)
		case "rule":
			foldRule(d, obj[k])
			d.value(reflect.ValueOf(&e.Rule).Elem(), obj[k], k)
		case "deviceManifest":
			md := &decoder{}
			var m []ManifestEntry
			md.value(reflect.ValueOf(&m).Elem(), obj[k], k)
			if len(md.probs) == 0 {
				e.DeviceManifest = m
			}
		default:
			d.add(k, "unknown field: an export has exportVersion, exportedAt, serverVersion, rule and deviceManifest")
		}
	}
	if obj["rule"] == nil {
		d.add("rule", "is required: the exported rule (export_rule's answer has it)")
	}
	if len(d.probs) > 0 {
		return Export{}, Problems(capProblems(d.probs))
	}
	normalizeRule(&e.Rule)
	return e, nil
}

// parseJSON reads exactly one JSON value, numbers kept as json.Number.
func parseJSON(raw []byte, path string) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, Problems{{Path: path, Message: "not valid JSON: " + err.Error()}}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, Problems{{Path: path, Message: "more than one JSON value; send one"}}
	}
	return v, nil
}

// decodeTree fills out from a generic JSON tree after fold rewrote it.
func decodeTree(v any, path string, out any, fold func(*decoder, any)) error {
	d := &decoder{}
	if fold != nil {
		fold(d, v)
	}
	d.value(reflect.ValueOf(out).Elem(), v, path)
	if len(d.probs) > 0 {
		return Problems(capProblems(d.probs))
	}
	return nil
}

type decoder struct{ probs Problems }

func (d *decoder) add(path, format string, a ...any) {
	d.probs = append(d.probs, Problem{Path: path, Message: fmt.Sprintf(format, a...)})
}

// join makes "a.b"; index makes "a[2]".
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

var (
	scalarType = reflect.TypeFor[Scalar]()
	timeType   = reflect.TypeFor[time.Time]()
)

// value fills v from the generic JSON value raw (null leaves v as it is: absent).
func (d *decoder) value(v reflect.Value, raw any, path string) {
	if raw == nil {
		return
	}
	t := v.Type()
	switch {
	case t == scalarType:
		s, ok := scalarOf(raw)
		if !ok {
			d.add(path, "must be a string, number or boolean, not %s", kindOf(raw))
			return
		}
		v.Set(reflect.ValueOf(s))
		return
	case t == timeType:
		s, ok := raw.(string)
		tm, err := time.Parse(time.RFC3339Nano, s)
		if !ok || err != nil {
			d.add(path, "must be a time like 2026-01-02T15:04:05Z")
			return
		}
		v.Set(reflect.ValueOf(tm))
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		before := len(d.probs)
		d.value(p.Elem(), raw, path)
		if len(d.probs) == before {
			v.Set(p)
		}
	case reflect.Struct:
		d.object(v, raw, path)
	case reflect.Slice:
		list, ok := raw.([]any)
		if !ok {
			d.add(path, "must be a list, not %s", kindOf(raw))
			return
		}
		out := reflect.MakeSlice(t, len(list), len(list))
		for i, item := range list {
			if item == nil {
				d.add(index(path, i), "must not be null")
				continue
			}
			d.value(out.Index(i), item, index(path, i))
		}
		v.Set(out)
	case reflect.Map: // localVariables: name → string, number or boolean
		obj, ok := raw.(map[string]any)
		if !ok {
			d.add(path, "must be an object of names to values, not %s", kindOf(raw))
			return
		}
		out := reflect.MakeMapWithSize(t, len(obj))
		for _, k := range sortedKeys(obj) {
			switch x := obj[k].(type) {
			case string, bool:
				out.SetMapIndex(reflect.ValueOf(k), reflect.ValueOf(x))
			case json.Number:
				f, err := strconv.ParseFloat(x.String(), 64)
				if err != nil || math.IsInf(f, 0) {
					d.add(join(path, k), "must be a number a float64 holds")
					continue
				}
				out.SetMapIndex(reflect.ValueOf(k), reflect.ValueOf(f))
			default:
				d.add(join(path, k), "must be a string, number or boolean, not %s", kindOf(x))
			}
		}
		v.Set(out)
	case reflect.String:
		switch x := raw.(type) {
		case string:
			v.SetString(x)
		case json.Number: // device ids, mode names written as numbers
			v.SetString(x.String())
		default:
			d.add(path, "must be a string, not %s", kindOf(raw))
		}
	case reflect.Bool:
		switch x := raw.(type) {
		case bool:
			v.SetBool(x)
		case string:
			if b, err := strconv.ParseBool(x); err == nil && (x == "true" || x == "false") {
				v.SetBool(b)
				return
			}
			d.add(path, "must be true or false")
		default:
			d.add(path, "must be true or false, not %s", kindOf(raw))
		}
	case reflect.Int:
		f, ok := numberOf(raw)
		if !ok || f != math.Trunc(f) || math.Abs(f) > 1e12 {
			d.add(path, "must be a whole number")
			return
		}
		v.SetInt(int64(f))
	case reflect.Float64:
		f, ok := numberOf(raw)
		if !ok {
			d.add(path, "must be a number")
			return
		}
		v.SetFloat(f)
	default:
		d.add(path, "cannot be read (a %s field)", t)
	}
}

// object fills the struct v from a JSON object, by the fields' JSON names.
func (d *decoder) object(v reflect.Value, raw any, path string) {
	obj, ok := raw.(map[string]any)
	if !ok {
		what := "must be"
		if path == "" {
			what = "a rule must be"
		}
		d.add(path, "%s an object, not %s", what, kindOf(raw))
		return
	}
	fields := fieldsOf(v.Type())
	for _, k := range sortedKeys(obj) {
		i, ok := fields.byName[k]
		if !ok {
			d.add(join(path, k), "%s", fields.unknown(k, obj))
			continue
		}
		d.value(v.Field(i), obj[k], join(path, k))
	}
}

// structFields maps a struct's JSON field names to field indexes.
type structFields struct {
	t      reflect.Type
	byName map[string]int
	names  []string
}

// unknown says what is wrong with key k in obj: a near miss of a real name (case, a plural), or
// the fields the object's type takes.
func (f structFields) unknown(k string, obj map[string]any) string {
	for _, n := range f.names {
		if strings.EqualFold(n, k) || strings.EqualFold(n, k+"s") || strings.EqualFold(n+"s", k) {
			return fmt.Sprintf("unknown field; did you mean %q?", n)
		}
	}
	typ, _ := obj["type"].(string)
	if allowed, ok := fieldsForType(f.t, typ); ok {
		if len(allowed) == 0 {
			return fmt.Sprintf("unknown field: a %s takes no other fields", typ)
		}
		return fmt.Sprintf("unknown field: a %s takes %s", typ, strings.Join(allowed, ", "))
	}
	return "unknown field: allowed here are " + strings.Join(f.names, ", ")
}

func fieldsOf(t reflect.Type) structFields {
	f := structFields{t: t, byName: map[string]int{}}
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" || !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		f.byName[name] = i
		f.names = append(f.names, name)
	}
	return f
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func scalarOf(raw any) (Scalar, bool) {
	switch x := raw.(type) {
	case string:
		return Scalar{Text: x}, true
	case json.Number:
		return Scalar{Text: x.String(), Numeric: true}, true
	case bool:
		return Scalar{Text: strconv.FormatBool(x), Bool: true}, true
	}
	return Scalar{}, false
}

// numberOf reads a JSON number or a numeric string as a finite float.
func numberOf(raw any) (float64, bool) {
	var s string
	switch x := raw.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = strings.TrimSpace(x)
	default:
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// Folding upstream's spellings, on the generic tree before it is typed.

func foldRule(d *decoder, v any) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	d.foldList(m["triggers"], "triggers", d.foldTrigger)
	d.foldList(m["conditions"], "conditions", d.foldCondition)
	d.foldList(m["actions"], "actions", d.foldAction)
}

func (d *decoder) foldList(v any, path string, fold func(m map[string]any, path string)) {
	list, _ := v.([]any)
	for i, item := range list {
		if m, ok := item.(map[string]any); ok {
			fold(m, index(path, i))
		}
	}
}

// rename moves m[from] to m[to]; both present with different values is a problem.
func (d *decoder) rename(m map[string]any, path, from, to string) {
	v, ok := m[from]
	if !ok {
		return
	}
	delete(m, from)
	if old, ok := m[to]; ok && !reflect.DeepEqual(old, v) {
		d.add(join(path, from), "is another name for %s; give one of them", to)
		return
	}
	m[to] = v
}

// foldOperator turns upstream's symbol forms into the word forms.
func foldOperator(m map[string]any) {
	switch op, _ := m["operator"].(string); strings.TrimSpace(op) {
	case "==", "=":
		m["operator"] = "equals"
	case "!=", "<>":
		m["operator"] = "not_equals"
	}
}

func (d *decoder) foldTrigger(m map[string]any, path string) {
	foldOperator(m)
	if c, ok := m["condition"].(map[string]any); ok {
		d.foldCondition(c, join(path, "condition"))
	}
	typ, _ := m["type"].(string)
	switch typ {
	case "sunrise", "sunset": // {"type":"sunset","offset":-30}
		m["type"] = "time"
		m[typ] = true
	case "sun": // {"type":"sun","event":"sunset"}
		m["type"] = "time"
		ev, _ := m["event"].(string)
		delete(m, "event")
		if ev != "sunrise" && ev != "sunset" {
			d.add(join(path, "event"), "must be sunrise or sunset")
		} else {
			m[ev] = true
		}
	case "device_event":
		d.foldDuration(m, path)
	}
	if ev, ok := m["sunEvent"]; ok { // {"type":"time","sunEvent":"sunrise","offsetMinutes":15}
		delete(m, "sunEvent")
		if s, _ := ev.(string); s == "sunrise" || s == "sunset" {
			m[s] = true
		} else {
			d.add(join(path, "sunEvent"), "must be sunrise or sunset")
		}
	}
	d.rename(m, path, "offsetMinutes", "offset")
	// {"type":"time","time":"sunset-30"}: the time field names the sun event, with an offset.
	if s, ok := m["time"].(string); ok {
		if ts, err := ParseTimeSpec(s); err == nil && ts.Sun != "" {
			delete(m, "time")
			m[ts.Sun] = true
			if ts.Minutes != 0 {
				if _, has := m["offset"]; has {
					d.add(join(path, "time"), "gives an offset and so does offset; give one of them")
				} else {
					m["offset"] = json.Number(strconv.Itoa(ts.Minutes))
				}
			}
		}
	}
}

// foldDuration turns the UI's durationValue + durationUnit into duration seconds. When duration
// is there as well (the UI stores all three) it wins.
func (d *decoder) foldDuration(m map[string]any, path string) {
	val, hasVal := m["durationValue"]
	unit, hasUnit := m["durationUnit"]
	if !hasVal && !hasUnit {
		return
	}
	delete(m, "durationValue")
	delete(m, "durationUnit")
	if _, ok := m["duration"]; ok {
		return
	}
	n, ok := numberOf(val)
	if !ok || n < 0 || n != math.Trunc(n) {
		d.add(join(path, "durationValue"), "must be a whole number of durationUnit")
		return
	}
	var mult float64
	switch u, _ := unit.(string); strings.ToLower(u) {
	case "seconds", "second", "s", "":
		mult = 1
		if !hasUnit {
			d.add(join(path, "durationUnit"), "is required with durationValue: seconds, minutes or hours (or give duration in seconds)")
			return
		}
	case "minutes", "minute", "min", "m":
		mult = 60
	case "hours", "hour", "h":
		mult = 3600
	default:
		d.add(join(path, "durationUnit"), "must be seconds, minutes or hours")
		return
	}
	m["duration"] = json.Number(strconv.FormatFloat(n*mult, 'f', -1, 64))
}

func (d *decoder) foldCondition(m map[string]any, path string) {
	foldOperator(m)
	d.rename(m, path, "startTime", "start")
	d.rename(m, path, "endTime", "end")
}

func (d *decoder) foldAction(m map[string]any, path string) {
	if typ, _ := m["type"].(string); typ == "repeat" {
		d.rename(m, path, "count", "times")
	}
	if c, ok := m["condition"].(map[string]any); ok {
		d.foldCondition(c, join(path, "condition"))
	}
	d.foldList(m["thenActions"], join(path, "thenActions"), d.foldAction)
	d.foldList(m["elseActions"], join(path, "elseActions"), d.foldAction)
	d.foldList(m["actions"], join(path, "actions"), d.foldAction)
}

// normalizeRule fills upstream's defaults and canonical spellings into a typed rule, so that the
// engine, validation and a re-export see one form. Decoding a normalized rule again changes
// nothing.
func normalizeRule(r *Rule) {
	switch strings.ToLower(strings.TrimSpace(r.ConditionLogic)) {
	case "", "all":
		r.ConditionLogic = "all"
	case "any":
		r.ConditionLogic = "any"
	}
	for i := range r.Triggers {
		t := &r.Triggers[i]
		switch t.Type {
		case "button_event":
			if t.Action == "" {
				t.Action = "pushed" // upstream's UI default
			}
		case "periodic":
			t.Unit = canonicalUnit(t.Unit)
		case "time":
			t.Time = canonicalClock(t.Time)
		}
		if t.Condition != nil {
			normalizeCondition(t.Condition)
		}
	}
	for i := range r.Conditions {
		normalizeCondition(&r.Conditions[i])
	}
	WalkActions(r, func(_ string, a *Action) {
		if a.Condition != nil {
			normalizeCondition(a.Condition)
		}
		if a.Type == "http_request" && a.Method != "" {
			a.Method = strings.ToUpper(strings.TrimSpace(a.Method))
		}
	})
}

func normalizeCondition(c *Condition) {
	switch c.Type {
	case "time_range":
		c.Start, c.End = canonicalTimeSpec(c.Start), canonicalTimeSpec(c.End)
	case "days_of_week":
		for i, day := range c.Days {
			if full, ok := dayNames[strings.ToLower(strings.TrimSpace(day))]; ok {
				c.Days[i] = full
			}
		}
	}
}

func canonicalUnit(u string) string {
	switch strings.ToLower(strings.TrimSpace(u)) {
	case "", "minute", "minutes", "min":
		return "minutes"
	case "hour", "hours", "h":
		return "hours"
	case "day", "days", "d":
		return "days"
	}
	return u
}

// dayNames maps lower-case full and three-letter day names to upstream's full names.
var dayNames = func() map[string]string {
	m := map[string]string{}
	for d := time.Sunday; d <= time.Saturday; d++ {
		n := d.String()
		m[strings.ToLower(n)] = n
		m[strings.ToLower(n[:3])] = n
	}
	return m
}()

// canonicalClock pads "7:30" to "07:30"; anything else stays for validation to judge.
func canonicalClock(s string) string {
	if ts, err := ParseTimeSpec(s); err == nil && ts.Sun == "" {
		return ts.String()
	}
	return s
}

func canonicalTimeSpec(s string) string {
	if ts, err := ParseTimeSpec(s); err == nil {
		return ts.String()
	}
	return s
}

// TimeSpec is a time of day as rules write it: a clock time ("07:30") or a sun event with an
// offset in minutes ("sunset-30", "sunrise+15", "sunrise").
type TimeSpec struct {
	Sun     string // "", "sunrise" or "sunset"
	Minutes int    // minutes after midnight; for a sun event, the offset (−180…180)
}

// ParseTimeSpec reads "HH:mm" (24-hour, the hour may have one digit) or "sunrise"/"sunset"
// with an optional "+N"/"-N" minutes offset (spaces allowed around the sign).
func ParseTimeSpec(s string) (TimeSpec, error) {
	s = strings.TrimSpace(s)
	low := strings.ToLower(s)
	for _, sun := range []string{"sunrise", "sunset"} {
		rest, ok := strings.CutPrefix(low, sun)
		if !ok {
			continue
		}
		rest = strings.TrimSpace(rest)
		if rest == "" {
			return TimeSpec{Sun: sun}, nil
		}
		sign := 1
		switch rest[0] {
		case '+':
		case '-':
			sign = -1
		default:
			return TimeSpec{}, fmt.Errorf("%q: after %s comes +N or -N minutes", s, sun)
		}
		digits := strings.TrimSpace(rest[1:])
		n, err := strconv.Atoi(digits)
		if err != nil || digits == "" || strings.Trim(digits, "0123456789") != "" || n > 180 {
			return TimeSpec{}, fmt.Errorf("%q: the offset is whole minutes, at most 180", s)
		}
		return TimeSpec{Sun: sun, Minutes: sign * n}, nil
	}
	h, m, ok := strings.Cut(s, ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil || len(h) < 1 || len(h) > 2 || len(m) != 2 ||
		strings.ContainsAny(s, "+- ") || hh < 0 || hh > 23 || mm < 0 || mm > 59 {
		return TimeSpec{}, fmt.Errorf("%q is not a time: use HH:mm (24-hour, \"07:30\"), or sunrise/sunset with an offset (\"sunset-30\")", s)
	}
	return TimeSpec{Minutes: hh*60 + mm}, nil
}

// String is the canonical form: "07:30", "sunset", "sunset-30", "sunrise+15".
func (ts TimeSpec) String() string {
	switch {
	case ts.Sun == "":
		return fmt.Sprintf("%02d:%02d", ts.Minutes/60, ts.Minutes%60)
	case ts.Minutes > 0:
		return fmt.Sprintf("%s+%d", ts.Sun, ts.Minutes)
	case ts.Minutes < 0:
		return fmt.Sprintf("%s%d", ts.Sun, ts.Minutes)
	}
	return ts.Sun
}

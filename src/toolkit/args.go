package toolkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-playground/validator/v10"
	"github.com/google/jsonschema-go/jsonschema"
)

var (
	validateOnce sync.Once
	validate     *validator.Validate
	// ruleText explains a validate tag to the model; %s is the tag parameter.
	ruleText = map[string]string{
		"required":  "is required",
		"min":       "must be at least %s",
		"max":       "must be at most %s",
		"gte":       "must be at least %s",
		"lte":       "must be at most %s",
		"gt":        "must be greater than %s",
		"lt":        "must be less than %s",
		"len":       "must have length %s",
		"oneof":     "must be one of: %s",
		"url":       "must be a URL",
		"http_url":  "must be an http(s) URL",
		"entity_id": "must be an entity id like domain.object_id (lowercase letters, digits, underscores)",
		"domain":    "must be a domain like light or sensor (lowercase letters, digits, underscores)",
		"iso8601":   "must be an ISO-8601 time like 2026-01-31T18:00:00Z (or a date 2026-01-31)",
		"dive":      "has an invalid item",
	}
)

var (
	entityIDRe = regexp.MustCompile(`^[a-z0-9_]+\.[a-z0-9_]+$`)
	domainRe   = regexp.MustCompile(`^[a-z0-9_]+$`)
)

// Validator returns the shared validator with hamcp's custom rules registered.
func Validator() *validator.Validate {
	validateOnce.Do(func() {
		v := validator.New(validator.WithRequiredStructEnabled())
		v.RegisterTagNameFunc(func(f reflect.StructField) string {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				return ""
			}
			if name == "" {
				return f.Name
			}
			return name
		})
		must := func(err error) {
			if err != nil {
				panic(err)
			}
		}
		must(v.RegisterValidation("entity_id", func(fl validator.FieldLevel) bool {
			return IsEntityID(fl.Field().String())
		}))
		must(v.RegisterValidation("domain", func(fl validator.FieldLevel) bool {
			return domainRe.MatchString(fl.Field().String())
		}))
		must(v.RegisterValidation("iso8601", func(fl validator.FieldLevel) bool {
			_, err := ParseTime(fl.Field().String())
			return err == nil
		}))
		validate = v
	})
	return validate
}

// IsEntityID reports whether s has Home Assistant's entity id shape.
func IsEntityID(s string) bool { return len(s) <= 255 && entityIDRe.MatchString(s) }

// ParseTime accepts the time forms a model is likely to send: RFC 3339 with or without
// fractional seconds, a local-less "2006-01-02T15:04:05" (taken as UTC) and a plain date.
func ParseTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not an ISO-8601 time", s)
}

// decodeArgs turns raw tool arguments into dst, checking them against the tool's schema and
// validate tags. Every failure names the field and says what a good value looks like.
func decodeArgs(args map[string]any, dst any, schema *jsonschema.Schema) error {
	if schema != nil {
		var unknown []string
		for k := range args {
			if _, ok := schema.Properties[k]; !ok {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			field := unknown[0]
			if strings.TrimSpace(field) == "" {
				field = strconv.Quote(field)
			}
			return &Error{Code: "invalid_argument", Field: field, Message: "is not an argument of this tool",
				Hint: "accepted arguments: " + strings.Join(propertyNames(schema), ", ")}
		}
		for _, r := range schema.Required {
			if _, ok := args[r]; !ok {
				return InvalidArg(r, "is required", exampleFor(schema.Properties[r], r))
			}
		}
	}
	if v, changed := listOfOne(args, schema); changed {
		args = v.(map[string]any)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return InvalidArg("arguments", "must be a JSON object", "")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			// te.Field is the Go path, embedded structs included ("Page.limit"): name the
			// argument as the model sent it.
			field := jsonPath(strings.Split(te.Field, "."))
			if field == "" {
				field = "arguments"
			}
			var ps *jsonschema.Schema
			if schema != nil {
				ps = schema.Properties[strings.Split(field, ".")[0]]
			}
			return InvalidArg(field, fmt.Sprintf("must be of type %s, not %s", jsonType(te.Type), te.Value), exampleFor(ps, field))
		}
		return InvalidArg("arguments", "could not be read: "+err.Error(), "")
	}
	if err := Validator().Struct(dst); err != nil {
		var ves validator.ValidationErrors
		if errors.As(err, &ves) && len(ves) > 0 {
			fe := ves[0]
			field := fieldPath(fe.Namespace())
			text, ok := ruleText[fe.Tag()]
			if !ok {
				text = "breaks rule " + fe.Tag()
				if fe.Param() != "" {
					text += "=" + fe.Param()
				}
			} else if strings.Contains(text, "%s") {
				param := fe.Param()
				if fe.Tag() == "oneof" {
					param = strings.Join(strings.Fields(param), ", ")
				}
				text = fmt.Sprintf(text, param)
			}
			if v := fe.Value(); v != nil && !isZero(v) {
				text += fmt.Sprintf(" (got %v)", v)
			}
			var ps *jsonschema.Schema
			if schema != nil {
				ps = schema.Properties[strings.Split(field, ".")[0]]
			}
			return InvalidArg(field, text, exampleFor(ps, field))
		}
		return InvalidArg("arguments", err.Error(), "")
	}
	return nil
}

// listOfOne wraps a lone string sent where the schema asks for a list of strings, at any depth:
// Home Assistant takes entity_id "light.kitchen" for ["light.kitchen"], and models send it so.
// A list of entity ids also takes "light.a, light.b", split on commas as Home Assistant's
// comp_entity_ids does. The schema keeps saying array: a type array ["string","array"] is not
// portable. The caller's arguments are not changed: what changes is copied.
func listOfOne(v any, s *jsonschema.Schema) (any, bool) {
	if s == nil {
		return v, false
	}
	switch x := v.(type) {
	case string:
		if s.Type != "array" || s.Items == nil || s.Items.Type != "string" {
			return v, false
		}
		if s.Items.Pattern != entityIDRe.String() || !strings.Contains(x, ",") {
			return []any{x}, true
		}
		var out []any
		for _, id := range strings.Split(x, ",") {
			out = append(out, strings.TrimSpace(id))
		}
		return out, true
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			if w, changed := listOfOne(e, s.Properties[k]); changed {
				if out == nil {
					out = maps.Clone(x)
				}
				out[k] = w
			}
		}
		if out != nil {
			return out, true
		}
	case []any:
		var out []any
		for i, e := range x {
			if w, changed := listOfOne(e, s.Items); changed {
				if out == nil {
					out = slices.Clone(x)
				}
				out[i] = w
			}
		}
		if out != nil {
			return out, true
		}
	}
	return v, false
}

func isZero(v any) bool {
	rv := reflect.ValueOf(v)
	return !rv.IsValid() || rv.IsZero()
}

// fieldPath turns validator's namespace into the argument's JSON path: it drops the args type
// name and embedded struct names ("getStatesArgs.Page.limit" → "limit"). JSON names are
// snake_case, so capitalised segments are Go type names.
func fieldPath(ns string) string {
	parts := strings.Split(ns, ".")
	if p := jsonPath(parts[1:]); p != "" {
		return p
	}
	return ns
}

// jsonPath joins the JSON segments of a Go field path, dropping embedded struct names.
func jsonPath(parts []string) string {
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		if p == "" || (p[0] >= 'A' && p[0] <= 'Z') {
			continue
		}
		out = append(out, p)
	}
	return strings.Join(out, ".")
}

func jsonType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return t.String()
}

func propertyNames(s *jsonschema.Schema) []string {
	names := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// exampleFor gives a short example for a field from its schema: an enum value, the default, or a type hint.
func exampleFor(s *jsonschema.Schema, field string) string {
	if s == nil {
		return ""
	}
	switch {
	case len(s.Enum) > 0:
		b, _ := json.Marshal(s.Enum[0])
		return fmt.Sprintf(`{"%s": %s}`, field, b)
	case len(s.Examples) > 0:
		b, _ := json.Marshal(s.Examples[0])
		return fmt.Sprintf(`{"%s": %s}`, field, b)
	case s.Default != nil:
		return fmt.Sprintf(`{"%s": %s}`, field, s.Default)
	}
	return ""
}

// enrichSchema copies what the validate, default and example tags say into the JSON Schema,
// so the model sees the same rules the validator enforces.
func enrichSchema(t reflect.Type, s *jsonschema.Schema) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || s == nil {
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			enrichSchema(f.Type, s)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		ps := s.Properties[name]
		if ps == nil {
			continue
		}
		applyTags(f, ps)
		if rules, _, _ := strings.Cut(f.Tag.Get("validate"), ",dive"); slices.Contains(strings.Split(rules, ","), "required") && !slices.Contains(s.Required, name) {
			s.Required = append(s.Required, name)
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch ft.Kind() {
		case reflect.Struct:
			enrichSchema(ft, ps)
		case reflect.Slice:
			if ps.Items != nil {
				enrichSchema(ft.Elem(), ps.Items)
			}
		}
	}
}

func applyTags(f reflect.StructField, ps *jsonschema.Schema) {
	rules := f.Tag.Get("validate")
	t := f.Type
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	// Rules after "dive" are about the items of a slice: they go to the items' schema.
	here, items, dived := strings.Cut(rules, ",dive")
	applyRules(here, t, ps)
	if dived && ps.Items != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		applyRules(strings.TrimPrefix(items, ","), t.Elem(), ps.Items)
	}
	if it, ok := f.Tag.Lookup("items"); ok && ps.Items != nil {
		// What the items of a list of anything are, said in their schema: {"description": …}
		// rather than the boolean schema true, which strict validators refuse.
		ps.Items.Description = it
	}
	kind := t.Kind()
	if d, ok := f.Tag.Lookup("default"); ok {
		ps.Default = literal(d, kind)
	}
	if ex, ok := f.Tag.Lookup("example"); ok {
		var v any
		if err := json.Unmarshal(literal(ex, kind), &v); err == nil {
			ps.Examples = []any{v}
		}
	}
}

// applyRules says in JSON Schema what the validate rules of one value say: enum, bounds, lengths
// and item counts, patterns and formats. A rule JSON Schema cannot state (iso8601 accepts more
// than format date-time) is said in the description instead, so the model sees every rule.
func applyRules(rules string, t reflect.Type, ps *jsonschema.Schema) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	kind := t.Kind()
	numeric := kind >= reflect.Int && kind <= reflect.Float64
	list := kind == reflect.Slice || kind == reflect.Array || kind == reflect.Map
	for _, rule := range strings.Split(rules, ",") {
		tag, param, _ := strings.Cut(rule, "=")
		n, nErr := strconv.ParseFloat(param, 64)
		count := int(n)
		switch tag {
		case "oneof":
			if kind == reflect.String {
				ps.Enum = nil
				for _, v := range strings.Fields(param) {
					ps.Enum = append(ps.Enum, v)
				}
			}
		case "min", "gte", "max", "lte", "gt", "lt", "len":
			if nErr != nil {
				continue
			}
			lower, upper := tag == "min" || tag == "gte" || tag == "len", tag == "max" || tag == "lte" || tag == "len"
			switch {
			case numeric && tag == "gt":
				ps.ExclusiveMinimum = &n
			case numeric && tag == "lt":
				ps.ExclusiveMaximum = &n
			case numeric:
				if lower {
					ps.Minimum = &n
				}
				if upper {
					ps.Maximum = &n
				}
			case kind == reflect.String:
				if lower {
					ps.MinLength = &count
				}
				if upper {
					ps.MaxLength = &count
				}
			case list && kind != reflect.Map:
				if lower {
					ps.MinItems = &count
				}
				if upper {
					ps.MaxItems = &count
				}
			}
		case "entity_id":
			ps.Pattern = entityIDRe.String()
		case "domain":
			ps.Pattern = domainRe.String()
		case "url", "http_url":
			ps.Format = "uri"
			if tag == "http_url" {
				describe(ps, "an http(s) URL", "http")
			}
		case "iso8601":
			describe(ps, "ISO-8601 time or date", "ISO-8601")
		}
	}
}

// describe appends what a rule requires to a description that does not say it yet.
func describe(ps *jsonschema.Schema, rule, mention string) {
	if strings.Contains(ps.Description, mention) {
		return
	}
	if ps.Description == "" {
		ps.Description = rule
		return
	}
	ps.Description += " (" + rule + ")"
}

// literal renders a tag value as JSON for the field's kind.
func literal(v string, kind reflect.Kind) json.RawMessage {
	switch {
	case kind == reflect.String:
		b, _ := json.Marshal(v)
		return b
	case json.Valid([]byte(v)):
		return json.RawMessage(v)
	}
	b, _ := json.Marshal(v)
	return b
}

// schemaFor infers the input schema of an args type and enriches it from its tags.
func schemaFor[In any]() (*jsonschema.Schema, error) {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		return nil, err
	}
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	enrichSchema(reflect.TypeFor[In](), s)
	plainTypes(s)
	noAnyProperties(s)
	return s, nil
}

// noAnyProperties drops additionalProperties where it allows anything (a map of any value): it
// would be the boolean schema true, which strict schema checks refuse, and leaving it out means
// the same. additionalProperties false (a struct's) stays: it is what refuses unknown arguments.
func noAnyProperties(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if s.AdditionalProperties != nil && isTrueSchema(s.AdditionalProperties) {
		s.AdditionalProperties = nil
	}
	for _, p := range s.Properties {
		noAnyProperties(p)
	}
	noAnyProperties(s.Items)
	noAnyProperties(s.AdditionalProperties)
}

// isTrueSchema reports the empty schema, which accepts anything and is written as true.
func isTrueSchema(s *jsonschema.Schema) bool {
	b, err := json.Marshal(s)
	return err == nil && string(b) == "true"
}

// plainTypes turns the ["null", T] that inference gives slices, maps and pointers into plain T.
// An absent argument already means "not given", and Gemini's and OpenAI's strict function
// schemas refuse type arrays (docs/tools.md, "Schemas every client accepts").
func plainTypes(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && slices.Contains(s.Types, "null") {
		t := s.Types[0]
		if t == "null" {
			t = s.Types[1]
		}
		s.Type, s.Types = t, nil
	}
	for _, p := range s.Properties {
		plainTypes(p)
	}
	plainTypes(s.Items)
	plainTypes(s.AdditionalProperties)
}

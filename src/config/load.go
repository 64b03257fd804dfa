package config

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// OptionsFile is where the Supervisor writes the add-on's options.
const OptionsFile = "/data/options.json"

// Option describes one field of Config.
type Option struct {
	Name    string   // options.json key
	Env     []string // environment variable names
	Flag    string   // flag name
	Help    string
	Default string
	Rule    string // validate tag
	Secret  bool
	index   int
}

// Options lists every option in declaration order.
func Options() []Option {
	t := reflect.TypeFor[Config]()
	out := make([]Option, 0, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name := f.Tag.Get("opt")
		if name == "" {
			continue
		}
		o := Option{Name: name, Flag: strings.ReplaceAll(name, "_", "-"), Help: f.Tag.Get("help"),
			Default: f.Tag.Get("default"), Rule: f.Tag.Get("validate"), Secret: f.Tag.Get("secret") == "true", index: i}
		o.Env = []string{"HAMCP_" + strings.ToUpper(name)}
		if extra := f.Tag.Get("env"); extra != "" {
			o.Env = append(o.Env, strings.Split(extra, ",")...)
		}
		out = append(out, o)
	}
	return out
}

// Error is a configuration problem, naming the option and where its value came from.
type Error struct {
	Option string
	Source string // "flag --x", "environment HAMCP_X", "/data/options.json", "default"
	Value  string
	Reason string
}

func (e *Error) Error() string {
	v := e.Value
	if v != "" {
		v = fmt.Sprintf(" %q", v)
	}
	return fmt.Sprintf("option %s (from %s):%s %s", e.Option, e.Source, v, e.Reason)
}

// Sources are where option values come from; tests pass their own.
type Sources struct {
	OptionsFile   string              // "" => OptionsFile when it exists
	NoOptionsFile bool                // ignore options.json (the demo)
	Env           func(string) string // nil => os.Getenv
	Flags         *flag.FlagSet       // parsed flag set from BindFlags, may be nil
}

// BindFlags registers one flag per option on fs. Only flags the user actually sets override
// the other sources.
func BindFlags(fs *flag.FlagSet) {
	for _, o := range Options() {
		help := o.Help
		if o.Default != "" {
			help += " (default " + o.Default + ")"
		}
		help += " [env " + strings.Join(o.Env, ", ") + "]"
		fs.String(o.Flag, "", help)
	}
}

// Load builds the Config: defaults, then options.json, then environment, then flags.
func Load(src Sources) (*Config, error) {
	getenv := src.Env
	if getenv == nil {
		getenv = os.Getenv
	}
	c := &Config{}
	v := reflect.ValueOf(c).Elem()
	opts := Options()
	for _, o := range opts {
		if o.Default != "" {
			if err := set(v.Field(o.index), o.Default); err != nil {
				return nil, &Error{Option: o.Name, Source: "default", Value: o.Default, Reason: err.Error()}
			}
		}
	}
	path := src.OptionsFile
	if path == "" {
		path = OptionsFile
	}
	if src.NoOptionsFile {
		path = ""
	}
	if raw, err := os.ReadFile(path); path != "" && err == nil {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, &Error{Option: "(file)", Source: path, Reason: "is not a JSON object: " + err.Error()}
		}
		for _, o := range opts {
			val, ok := m[o.Name]
			if !ok || string(val) == "null" {
				continue
			}
			if err := setJSON(v.Field(o.index), val); err != nil {
				return nil, &Error{Option: o.Name, Source: path, Value: string(val), Reason: err.Error()}
			}
		}
	} else if path != "" && err != nil && !errors.Is(err, fs.ErrNotExist) && src.OptionsFile != "" {
		return nil, &Error{Option: "(file)", Source: path, Reason: err.Error()}
	}
	for _, o := range opts {
		// The first name is the HAMCP_ one and wins over aliases like HA_URL.
		for i := len(o.Env) - 1; i >= 0; i-- {
			if val := getenv(o.Env[i]); val != "" {
				if err := set(v.Field(o.index), val); err != nil {
					return nil, &Error{Option: o.Name, Source: "environment " + o.Env[i], Value: secretSafe(o, val), Reason: err.Error()}
				}
			}
		}
	}
	if src.Flags != nil {
		var ferr error
		src.Flags.Visit(func(f *flag.Flag) {
			for _, o := range opts {
				if o.Flag == f.Name && ferr == nil {
					if err := set(v.Field(o.index), f.Value.String()); err != nil {
						ferr = &Error{Option: o.Name, Source: "flag --" + o.Flag, Value: secretSafe(o, f.Value.String()), Reason: err.Error()}
					}
				}
			}
		})
		if ferr != nil {
			return nil, ferr
		}
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

func secretSafe(o Option, v string) string {
	if o.Secret {
		return "(hidden)"
	}
	return v
}

func set(f reflect.Value, s string) error {
	switch f.Interface().(type) {
	case time.Duration:
		d, err := time.ParseDuration(s)
		if err != nil {
			if n, nerr := strconv.Atoi(s); nerr == nil {
				d = time.Duration(n) * time.Second
			} else {
				return fmt.Errorf("is not a duration; use a form like 30s, 5m or 8h")
			}
		}
		f.SetInt(int64(d))
		return nil
	}
	switch f.Kind() {
	case reflect.String:
		f.SetString(s)
	case reflect.Int:
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("is not a whole number")
		}
		f.SetInt(int64(n))
	case reflect.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("is not a boolean; use true or false")
		}
		f.SetBool(b)
	case reflect.Slice:
		var items []string
		for _, part := range strings.Split(s, ",") {
			if p := strings.TrimSpace(part); p != "" {
				items = append(items, p)
			}
		}
		f.Set(reflect.ValueOf(items))
	default:
		return fmt.Errorf("unsupported option type %s", f.Type())
	}
	return nil
}

// setJSON accepts the JSON forms the Supervisor writes (strings, numbers, booleans, lists).
func setJSON(f reflect.Value, raw json.RawMessage) error {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return set(f, s)
	}
	if f.Kind() == reflect.Slice {
		var items []string
		if err := json.Unmarshal(raw, &items); err != nil {
			return fmt.Errorf("must be a list of strings")
		}
		f.Set(reflect.ValueOf(items))
		return nil
	}
	return set(f, strings.Trim(string(raw), `"`))
}

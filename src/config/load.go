package config

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// OptionsFile is where the Supervisor writes the add-on's options.
const OptionsFile = "/data/options.json"

// Option describes one field of Config.
type Option struct {
	Name     string   // options.json key
	Env      []string // environment variable names
	Flag     string   // flag name
	Help     string
	Default  string
	Rule     string   // validate tag
	Commands []string // subcommands the flag applies to (cmd tag); empty = all
	Secret   bool
	Kind     string // bool, int, duration, list or text: what the flag takes
	index    int
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
			Default: f.Tag.Get("default"), Rule: f.Tag.Get("validate"), Secret: f.Tag.Get("secret") == "true",
			Kind: kindOf(f.Type), index: i}
		if cmds := f.Tag.Get("cmd"); cmds != "" {
			o.Commands = strings.Split(cmds, ",")
		}
		o.Env = []string{"HAMCP_" + strings.ToUpper(name)}
		if extra := f.Tag.Get("env"); extra != "" {
			o.Env = append(o.Env, strings.Split(extra, ",")...)
		}
		out = append(out, o)
	}
	return out
}

// Lookup returns the option with this options.json name or flag name.
func Lookup(name string) (Option, bool) {
	for _, o := range Options() {
		if o.Name == name || o.Flag == name {
			return o, true
		}
	}
	return Option{}, false
}

func kindOf(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[time.Duration]():
		return "duration"
	case t.Kind() == reflect.Bool:
		return "bool"
	case t.Kind() == reflect.Int:
		return "int"
	case t.Kind() == reflect.Slice:
		return "list"
	}
	return "text"
}

// AppliesTo reports whether the option is a flag of the subcommand.
func (o Option) AppliesTo(cmd string) bool {
	return len(o.Commands) == 0 || slices.Contains(o.Commands, cmd)
}

// Accepted lists the values a oneof rule allows (nil when any value of the type goes).
func (o Option) Accepted() []string {
	for _, r := range strings.Split(o.Rule, ",") {
		if v, ok := strings.CutPrefix(r, "oneof="); ok {
			return strings.Fields(v)
		}
	}
	return nil
}

// Error is a configuration problem, naming the option and where its value came from.
type Error struct {
	Option string
	// Source is where the value came from: "flag --x", "environment variable HAMCP_X",
	// "add-on option x in /data/options.json", "default"; "configuration" when the code that
	// found the problem did not know (Config.Explain fills it in).
	Source string
	Value  string
	Reason string
}

func (e *Error) Error() string {
	v := e.Value
	if v != "" {
		v = fmt.Sprintf(" %q", v)
	}
	src := e.Source
	switch {
	case src == "" || src == "configuration":
		src = "option " + e.Option
	case src == "default":
		src = "option " + e.Option + " (default)"
	}
	return fmt.Sprintf("%s:%s %s", src, v, e.Reason)
}

// Explain names the true source of err when it is an *Error about an option of c that says only
// "configuration": the flag, environment variable or add-on option the value came from. Other
// errors are returned as they are.
func (c *Config) Explain(err error) error {
	var ce *Error
	if c == nil || !errors.As(err, &ce) || (ce.Source != "configuration" && ce.Source != "") {
		return err
	}
	if src := c.sources[ce.Option]; src != "" {
		ce.Source = src
	}
	return err
}

// Sources are where option values come from; tests pass their own.
type Sources struct {
	OptionsFile   string              // "" => OptionsFile when it exists
	NoOptionsFile bool                // ignore options.json (the demo)
	Env           func(string) string // nil => os.Getenv
	Flags         *flag.FlagSet       // parsed flag set from BindCommandFlags, may be nil
	// Defaults overrides tag defaults by option name: a subcommand's own defaults (the demo
	// listens on 127.0.0.1).
	Defaults map[string]string
}

// flagValue is an option's flag. It keeps the text as given; Load converts and checks it, so a
// bad value is reported like any other source's (naming the flag). Bool options are bool
// flags: --read-only alone means true, --read-only=false works too.
type flagValue struct {
	o   Option
	val string
}

func (f *flagValue) String() string     { return f.val }
func (f *flagValue) Set(s string) error { f.val = s; return nil }
func (f *flagValue) IsBoolFlag() bool   { return f.o.Kind == "bool" }

// BindCommandFlags registers the flags of the options that apply to the subcommand cmd. Only
// flags the user actually sets override the other sources; Usage prints them.
func BindCommandFlags(fs *flag.FlagSet, cmd string) {
	for _, o := range Options() {
		if o.AppliesTo(cmd) {
			fs.Var(&flagValue{o: o}, o.Flag, o.Help)
		}
	}
}

// Describe is the help text of an option's flag: what it does, its default, the accepted
// values and the environment variables. def overrides the tag default ("" = the tag's);
// accepted lists values known only at run time (toolset names), else the oneof rule's are used.
func (o Option) Describe(def string, accepted ...string) string {
	var b strings.Builder
	b.WriteString(o.Help)
	if accepted == nil {
		accepted = o.Accepted()
	}
	if accepted != nil {
		b.WriteString("; accepted: " + strings.Join(accepted, ", "))
	}
	if def == "" {
		def = o.Default
	}
	if def != "" {
		b.WriteString(" (default " + def + ")")
	}
	b.WriteString(" [env " + strings.Join(o.Env, ", ") + "]")
	return b.String()
}

// Load builds the Config: defaults, then options.json, then environment, then flags.
func Load(src Sources) (*Config, error) {
	getenv := src.Env
	if getenv == nil {
		getenv = os.Getenv
	}
	c := &Config{sources: map[string]string{}}
	v := reflect.ValueOf(c).Elem()
	opts := Options()
	for _, o := range opts {
		def := o.Default
		if d, ok := src.Defaults[o.Name]; ok {
			def = d
		}
		if def != "" {
			if err := set(v.Field(o.index), def); err != nil {
				return nil, &Error{Option: o.Name, Source: "default", Value: def, Reason: err.Error()}
			}
			c.sources[o.Name] = "default"
		}
	}
	path := src.OptionsFile
	if path == "" {
		path = optionsPath(getenv)
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
			source := "add-on option " + o.Name + " in " + path
			if err := setJSON(v.Field(o.index), val); err != nil {
				return nil, &Error{Option: o.Name, Source: source, Value: secretSafe(o, string(val)), Reason: err.Error()}
			}
			c.sources[o.Name] = source
		}
	} else if path != "" && err != nil && !errors.Is(err, fs.ErrNotExist) && src.OptionsFile != "" {
		return nil, &Error{Option: "(file)", Source: path, Reason: err.Error()}
	}
	for _, o := range opts {
		// The first name is the HAMCP_ one and wins over aliases like HA_URL.
		for i := len(o.Env) - 1; i >= 0; i-- {
			if val := getenv(o.Env[i]); val != "" {
				source := "environment variable " + o.Env[i]
				if err := set(v.Field(o.index), val); err != nil {
					return nil, &Error{Option: o.Name, Source: source, Value: secretSafe(o, val), Reason: err.Error()}
				}
				c.sources[o.Name] = source
			}
		}
	}
	if src.Flags != nil {
		var ferr error
		src.Flags.Visit(func(f *flag.Flag) {
			fv, ok := f.Value.(*flagValue)
			if !ok || ferr != nil {
				return
			}
			source := "flag --" + fv.o.Flag
			if err := set(v.Field(fv.o.index), fv.val); err != nil {
				ferr = &Error{Option: fv.o.Name, Source: source, Value: secretSafe(fv.o, fv.val), Reason: err.Error()}
			}
			c.sources[fv.o.Name] = source
		})
		if ferr != nil {
			return nil, ferr
		}
	}
	if err := c.Validate(); err != nil {
		return nil, c.Explain(err)
	}
	return c, nil
}

// optionsPath is options.json in the data directory: /data in the add-on, where the Supervisor
// writes it. HAMCP_DATA_DIR moves both, which lets tests run the add-on's start path in a
// temporary directory.
func optionsPath(getenv func(string) string) string {
	if d := getenv("HAMCP_DATA_DIR"); d != "" {
		return filepath.Join(d, "options.json")
	}
	return OptionsFile
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
	// The add-on's UI edits a list for multi-line text (one SSH key per entry): a line each.
	if f.Kind() == reflect.String && len(raw) > 0 && raw[0] == '[' {
		var items []string
		if err := json.Unmarshal(raw, &items); err != nil {
			return fmt.Errorf("must be text or a list of strings")
		}
		f.SetString(strings.Join(items, "\n"))
		return nil
	}
	return set(f, strings.Trim(string(raw), `"`))
}

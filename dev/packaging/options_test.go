package packaging

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hamcp/hamcp/src/config"
)

// addonInternal are the options of config.Config the add-on's users do not set, and why. Every
// other option must be in config.yaml's schema and in translations/en.yaml.
var addonInternal = map[string]string{
	"listen":           "fixed at :8099, the container port config.yaml maps; users change the host port instead",
	"ssh_port":         "fixed at 2222, the container port config.yaml maps; users change the host port instead",
	"ingress_listen":   "fixed at :8098, config.yaml's ingress_port, which the Supervisor's ingress proxy connects to",
	"ha_url":           "standalone only: the add-on reaches Home Assistant through the Supervisor proxy",
	"ha_token":         "standalone only: the add-on uses the Supervisor token",
	"supervisor_url":   "set by the add-on's environment (http://supervisor)",
	"supervisor_token": "given by the Supervisor in SUPERVISOR_TOKEN",
	"data_dir":         "the add-on's /data, where the Supervisor writes options.json",
	"fs_base":          "the add-on mounts its folders at / (/homeassistant, /ssl, /share, ...)",
}

// notForAddonUsers says why an option is not one the add-on offers, if it is not: it is in
// addonInternal, or its cmd tag leaves out `hamcp serve`, the command run.sh starts.
func notForAddonUsers(name string, f reflect.StructField) (string, bool) {
	if why, ok := addonInternal[name]; ok {
		return why, true
	}
	if cmds := f.Tag.Get("cmd"); cmds != "" && !slices.Contains(strings.Split(cmds, ","), "serve") {
		return "not an option of hamcp serve (cmd:\"" + cmds + "\")", true
	}
	return "", false
}

// durationSchema is the schema element for a duration option (Go's time.ParseDuration units
// users need).
const durationSchema = `match(^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$)`

var (
	reSchemaRange = regexp.MustCompile(`^(int|float|str|password)\((-?[0-9.]*),(-?[0-9.]*)\)\??$`)
	reSchemaList  = regexp.MustCompile(`^list\(([^)]*)\)\??$`)
	reSchemaMatch = regexp.MustCompile(`^match\((.*)\)\??$`)
)

// fields maps each opt tag of config.Config to its struct field.
func fields() map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	t := reflect.TypeFor[config.Config]()
	for i := range t.NumField() {
		if name := t.Field(i).Tag.Get("opt"); name != "" {
			out[name] = t.Field(i)
		}
	}
	return out
}

// ruleParams reads an option's validate tag (min=0,max=10,oneof=a b) into a map.
func ruleParams(o config.Option) map[string]string {
	out := map[string]string{}
	for _, r := range strings.Split(o.Rule, ",") {
		if k, v, ok := strings.Cut(r, "="); ok {
			out[k] = v
		}
	}
	return out
}

// suggest is the config.yaml and translations/en.yaml text that adds an option to the add-on,
// derived from the field's type, default and rule, so the failure message says exactly what to add.
func suggest(o config.Option, f reflect.StructField) string {
	typ, def := "str", fmt.Sprintf("%q", o.Default)
	rule := ruleParams(o)
	switch {
	case f.Type == reflect.TypeFor[time.Duration]():
		typ, def = durationSchema, o.Default
	case f.Type.Kind() == reflect.Bool:
		typ, def = "bool", "false"
		if o.Default != "" {
			def = o.Default
		}
	case f.Type.Kind() == reflect.Int:
		typ, def = fmt.Sprintf("int(%s,%s)", rule["min"], rule["max"]), o.Default
	case f.Type.Kind() == reflect.Slice:
		typ, def = "[str]", "[]"
	case rule["oneof"] != "":
		typ = "list(" + strings.ReplaceAll(rule["oneof"], " ", "|") + ")"
	case o.Secret:
		typ = "password"
	}
	var b strings.Builder
	b.WriteString("config.yaml:\n  options:\n")
	if o.Default == "" && f.Type.Kind() == reflect.String {
		typ += "?" // optional: an optional option has no entry under options
		b.WriteString("    (none: optional)\n")
	} else {
		fmt.Fprintf(&b, "    %s: %s\n", o.Name, def)
	}
	if typ == "[str]" {
		fmt.Fprintf(&b, "  schema:\n    %s:\n      - str\n", o.Name)
	} else {
		fmt.Fprintf(&b, "  schema:\n    %s: %s\n", o.Name, typ)
	}
	fmt.Fprintf(&b, "translations/en.yaml:\n  configuration:\n    %s:\n      name: <a short label>\n      description: %s\n", o.Name, o.Help)
	b.WriteString("or, if add-on users must not set it, list it in addonInternal (dev/packaging/options_test.go) with the reason")
	return b.String()
}

// TestOptionsMatchConfig ties the add-on's options, schema and translations to config.Config:
// an option the binary ignores fails, and so does one it reads that the add-on cannot set.
func TestOptionsMatchConfig(t *testing.T) {
	t.Parallel()
	m := manifest(t)
	tr := readYAML(t, "translations/en.yaml")
	trConf, _ := tr["configuration"].(map[string]any)
	fs := fields()
	opts := config.Options()
	known := map[string]bool{}
	for _, o := range opts {
		known[o.Name] = true
		f := fs[o.Name]
		_, inSchema := m.Schema[o.Name]
		_, inTr := trConf[o.Name]
		if why, internal := notForAddonUsers(o.Name, f); internal {
			if inSchema || inTr {
				t.Errorf("option %q is internal to the add-on (%s): remove it from config.yaml's schema and translations/en.yaml", o.Name, why)
			}
			continue
		}
		if !inSchema {
			t.Errorf("hamcp reads option %q but the add-on's users cannot set it. Add:\n%s", o.Name, suggest(o, f))
			continue
		}
		checkSchemaType(t, o, f, m.Schema[o.Name], m.Options)
		if e, _ := trConf[o.Name].(map[string]any); e == nil || e["name"] == nil || e["description"] == nil {
			t.Errorf("translations/en.yaml: configuration.%s needs a name and a description; e.g.\n%s", o.Name, suggest(o, f))
		}
	}
	for _, where := range []struct {
		name string
		keys []string
	}{
		{"config.yaml schema", slices.Collect(maps.Keys(m.Schema))},
		{"config.yaml options", slices.Collect(maps.Keys(m.Options))},
		{"translations/en.yaml configuration", slices.Collect(maps.Keys(trConf))},
	} {
		for _, k := range where.keys {
			if !known[k] {
				t.Errorf("%s has %q, which hamcp does not read (no opt:%q field in config.Config): remove it", where.name, k, k)
			}
		}
	}
	for k := range m.Options {
		if _, ok := m.Schema[k]; !ok {
			t.Errorf("config.yaml options has %q but schema does not: the Supervisor refuses options without a schema entry", k)
		}
	}
	for name := range addonInternal {
		if !known[name] {
			t.Errorf("addonInternal lists %q, which config.Config no longer has: remove it", name)
		}
	}
	net, _ := tr["network"].(map[string]any)
	for port := range m.Ports {
		if s, _ := net[port].(string); s == "" {
			t.Errorf("translations/en.yaml: network.%s needs a description", port)
		}
	}
}

// checkSchemaType compares one schema element with the Go field, its rule and its default.
func checkSchemaType(t *testing.T, o config.Option, f reflect.StructField, elem any, options map[string]any) {
	t.Helper()
	_, hasDef := options[o.Name]
	if list, ok := elem.([]any); ok {
		// A list: the Go field is a list, or text whose lines the list gives (SSH keys).
		if len(list) != 1 || (f.Type.Kind() != reflect.Slice && f.Type.Kind() != reflect.String) {
			t.Errorf("schema %s: a one-element list needs a []string or multi-line string option; the field is %s", o.Name, f.Type)
		}
		if !hasDef {
			t.Errorf("config.yaml options: %s needs [] so the UI shows the list", o.Name)
		}
		return
	}
	s, _ := elem.(string)
	optional := strings.HasSuffix(s, "?")
	if optional && hasDef {
		t.Errorf("config.yaml: %s is optional (%s) yet has a value under options, which makes it required: remove that value", o.Name, s)
	}
	if !optional && !hasDef {
		t.Errorf("config.yaml: %s is required (%s) but has no value under options: add its default %q", o.Name, s, o.Default)
	}
	base := strings.TrimSuffix(s, "?")
	rules := ruleParams(o)
	switch {
	case f.Type == reflect.TypeFor[time.Duration]():
		mm := reSchemaMatch.FindStringSubmatch(base)
		if mm == nil {
			t.Errorf("schema %s = %q; a duration needs %s", o.Name, s, durationSchema)
			return
		}
		re, err := regexp.Compile(mm[1])
		if err != nil {
			t.Errorf("schema %s: %v", o.Name, err)
			return
		}
		for _, v := range []string{o.Default, "30s", "1h30m", "10m"} {
			if !re.MatchString(v) {
				t.Errorf("schema %s refuses %q", o.Name, v)
			}
		}
	case f.Type.Kind() == reflect.Bool:
		if base != "bool" {
			t.Errorf("schema %s = %q, want bool", o.Name, s)
		}
	case f.Type.Kind() == reflect.Int:
		mm := reSchemaRange.FindStringSubmatch(base)
		if mm == nil || mm[1] != "int" || mm[2] != rules["min"] || mm[3] != rules["max"] {
			t.Errorf("schema %s = %q, want int(%s,%s) as the binary's rule %q", o.Name, s, rules["min"], rules["max"], o.Rule)
		}
	case f.Type.Kind() == reflect.String && rules["oneof"] != "":
		mm := reSchemaList.FindStringSubmatch(base)
		if mm == nil || mm[1] != strings.ReplaceAll(rules["oneof"], " ", "|") {
			t.Errorf("schema %s = %q, want list(%s) as the binary's rule %q", o.Name, s, strings.ReplaceAll(rules["oneof"], " ", "|"), o.Rule)
		}
	case f.Type.Kind() == reflect.String:
		if !slices.Contains([]string{"str", "url", "password", "email"}, base) && !reSchemaMatch.MatchString(base) && !reSchemaRange.MatchString(base) {
			t.Errorf("schema %s = %q is not a text type", o.Name, s)
		}
		if o.Secret && base != "password" {
			t.Errorf("schema %s: a secret option must be password, so the UI hides it", o.Name)
		}
	default:
		t.Errorf("schema %s: field type %s has no add-on schema type; teach checkSchemaType", o.Name, f.Type)
	}
}

// TestOptionDefaultsAreTheBinarys: the options block is what the Supervisor writes to
// options.json on install; loading it must give exactly hamcp's own defaults.
func TestOptionDefaultsAreTheBinarys(t *testing.T) {
	t.Parallel()
	m := manifest(t)
	noEnv := func(string) string { return "" }
	want, err := config.Load(config.Sources{NoOptionsFile: true, Env: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	got := loadOptions(t, m.Options)
	fs := fields()
	wv, gv := reflect.ValueOf(want).Elem(), reflect.ValueOf(got).Elem()
	for _, o := range config.Options() {
		if _, internal := notForAddonUsers(o.Name, fs[o.Name]); internal {
			continue // data_dir differs: the test's options.json lives in a temporary one
		}
		f := fs[o.Name]
		w, g := wv.FieldByIndex(f.Index), gv.FieldByIndex(f.Index)
		if w.Kind() == reflect.Slice && w.Len() == 0 && g.Len() == 0 {
			continue
		}
		if !reflect.DeepEqual(w.Interface(), g.Interface()) {
			t.Errorf("config.yaml options.%s gives %v, but hamcp's default is %v: use %q", o.Name, g.Interface(), w.Interface(), o.Default)
		}
	}
}

// TestOptionsJSONForms: what the Supervisor writes for each schema type loads as meant.
func TestOptionsJSONForms(t *testing.T) {
	t.Parallel()
	keys := []any{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl laptop",
		"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHnz8L4C1qTq2lTuWCn0eG5vHWlJx3ZC6E8y0N9j1l3F phone"}
	got := loadOptions(t, map[string]any{"ssh_authorized_keys": keys, "toolsets": []any{"states", "files"},
		"rate_limit": 50, "read_only": true, "grant_ttl": "30m", "permission_command": "deny"})
	if want := keys[0].(string) + "\n" + keys[1].(string); got.SSHAuthorizedKeys != want {
		t.Errorf("ssh_authorized_keys = %q, want one key per line", got.SSHAuthorizedKeys)
	}
	if !slices.Equal(got.Toolsets, []string{"states", "files"}) || got.RateLimit != 50 || !got.ReadOnly ||
		got.GrantTTL != 30*time.Minute || got.PermissionCommand != "deny" {
		t.Errorf("options.json values were not all applied: %+v", got)
	}
}

// loadOptions writes opts as options.json in a data directory named by HAMCP_DATA_DIR, as the
// add-on's start path finds it, and loads the Config.
func loadOptions(t *testing.T, opts map[string]any) *config.Config {
	t.Helper()
	dir := t.TempDir()
	raw, err := json.Marshal(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "options.json"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HAMCP_DATA_DIR": dir}
	c, err := config.Load(config.Sources{Env: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatalf("loading options.json %s: %v", raw, err)
	}
	return c
}

// optionDefault is the default of one of hamcp's options.
func optionDefault(t *testing.T, name string) string {
	t.Helper()
	for _, o := range config.Options() {
		if o.Name == name {
			return o.Default
		}
	}
	t.Fatalf("hamcp has no option %q", name)
	return ""
}

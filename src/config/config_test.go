package config

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadPrecedence(t *testing.T) {
	dir := t.TempDir()
	opts := filepath.Join(dir, "options.json")
	if err := os.WriteFile(opts, []byte(`{"log_level":"warning","rate_limit":50,"toolsets":["states","history"],"read_only":true,"permission_command":"deny","grant_ttl":"2h"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HAMCP_RATE_LIMIT": "70", "HA_URL": "http://ha.local:8123", "HAMCP_PERMISSION_FILESYSTEM": "allow"}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	BindCommandFlags(fs, "serve") // every option applies to the add-on's command
	if err := fs.Parse([]string{"--log-level", "debug"}); err != nil {
		t.Fatal(err)
	}
	c, err := Load(Sources{OptionsFile: opts, Env: func(k string) string { return env[k] }, Flags: fs})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"flag beats file", c.LogLevel, "debug"},
		{"env beats file", c.RateLimit, 70},
		{"file used", c.ReadOnly, true},
		{"file list", strings.Join(c.Toolsets, ","), "states,history"},
		{"alias env", c.HAURL, "http://ha.local:8123"},
		{"fixed permission env", c.PermissionFilesystem, "allow"},
		{"file permission", c.PermissionCommand, "deny"},
		{"default", c.PermissionDatabase, "ask"},
		{"duration", c.GrantTTL, 2 * time.Hour},
		{"default listen", c.Listen, ":8099"},
		{"default expose scope", c.ExposeScope, "all"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

func TestLoadErrorsNameTheOption(t *testing.T) {
	tests := []struct {
		env      map[string]string
		wantOpt  string
		wantText string
	}{
		{map[string]string{"HAMCP_LOG_LEVEL": "verbose"}, "log_level", "accepted values: debug, info, warning, error"},
		{map[string]string{"HAMCP_PERMISSION_DATABASE": "sometimes"}, "permission_database", "accepted values: ask, allow, deny"},
		{map[string]string{"HAMCP_RATE_LIMIT": "lots"}, "rate_limit", "whole number"},
		{map[string]string{"HAMCP_RATE_LIMIT": "-5"}, "rate_limit", "at least 0"},
		{map[string]string{"HA_URL": "homeassistant.local"}, "ha_url", "http:// or https://"},
		{map[string]string{"HAMCP_LISTEN": "8099"}, "listen", "host:port"},
		{map[string]string{"HAMCP_ALLOWED_ORIGINS": "*"}, "allowed_origins", "not allowed"},
		{map[string]string{"HAMCP_GRANT_TTL": "soon"}, "grant_ttl", "duration"},
		{map[string]string{"HAMCP_READ_ONLY": "maybe"}, "read_only", "true or false"},
		{map[string]string{"HAMCP_TOOL_MODE": "flat"}, "tool_mode", "accepted values: auto, all, search"},
		{map[string]string{"HAMCP_EXPOSE_SCOPE": "exposed"}, "expose_scope", "accepted values: all, assist"},
		{map[string]string{"HAMCP_TRUSTED_PROXIES": "proxy.local"}, "trusted_proxies", "CIDR"},
	}
	for _, tt := range tests {
		t.Run(tt.wantOpt, func(t *testing.T) {
			_, err := Load(Sources{NoOptionsFile: true, Env: func(k string) string { return tt.env[k] }})
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("want *Error, got %v", err)
			}
			if ce.Option != tt.wantOpt || !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("got %q, want option %s and %q", err, tt.wantOpt, tt.wantText)
			}
		})
	}
}

func TestSecretsNotEchoed(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	BindCommandFlags(fs, "serve")
	_, err := Load(Sources{NoOptionsFile: true, Env: func(k string) string {
		if k == "HA_TOKEN" {
			return "super-secret"
		}
		if k == "HAMCP_LOG_LEVEL" {
			return "nope"
		}
		return ""
	}, Flags: fs})
	if err == nil || strings.Contains(err.Error(), "super-secret") {
		t.Fatalf("error leaks or is missing: %v", err)
	}
}

func TestAddonDerivedURLs(t *testing.T) {
	c, err := Load(Sources{NoOptionsFile: true, Env: func(k string) string {
		if k == "SUPERVISOR_TOKEN" {
			return "sup"
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !c.InAddon() || c.HABaseURL() != "http://supervisor/core" || c.HAAPIToken() != "sup" || c.TokenCheckURL() != "http://homeassistant:8123" {
		t.Errorf("addon derivation wrong: %v %s %s %s", c.InAddon(), c.HABaseURL(), c.HAAPIToken(), c.TokenCheckURL())
	}
}

func FuzzLoadOptionsFile(f *testing.F) {
	f.Add(`{"log_level":"info"}`)
	f.Add(`{"toolsets":["a"],"rate_limit":5}`)
	f.Add(`{"grant_ttl":3600}`)
	f.Fuzz(func(t *testing.T, body string) {
		dir := t.TempDir()
		p := filepath.Join(dir, "o.json")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Load(Sources{OptionsFile: p, Env: func(string) string { return "" }})
		if err == nil && c.Validate() != nil {
			t.Fatal("Load accepted a config that does not validate")
		}
	})
}

// TestFlagsTakeTheirType parses real flag sets: booleans alone or with =false, durations,
// ints and lists, and names the flag in every error.
func TestFlagsTakeTheirType(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		check   func(c *Config) bool
		wantErr string
	}{
		{"bool alone", []string{"--read-only"}, func(c *Config) bool { return c.ReadOnly }, ""},
		{"bool =false", []string{"--read-only=false"}, func(c *Config) bool { return !c.ReadOnly }, ""},
		{"bool =true then more", []string{"--read-only", "--rate-limit", "5"}, func(c *Config) bool { return c.ReadOnly && c.RateLimit == 5 }, ""},
		{"duration", []string{"--grant-ttl", "90m"}, func(c *Config) bool { return c.GrantTTL == 90*time.Minute }, ""},
		{"duration as seconds", []string{"--shutdown-grace=3"}, func(c *Config) bool { return c.ShutdownGrace == 3*time.Second }, ""},
		{"int", []string{"--rate-limit=0"}, func(c *Config) bool { return c.RateLimit == 0 }, ""},
		{"list", []string{"--toolsets", "states, history"}, func(c *Config) bool { return strings.Join(c.Toolsets, "|") == "states|history" }, ""},
		{"bad bool", []string{"--read-only=maybe"}, nil, `flag --read-only: "maybe" is not a boolean`},
		{"bad int", []string{"--rate-limit", "lots"}, nil, `flag --rate-limit: "lots" is not a whole number`},
		{"bad duration", []string{"--grant-ttl", "soon"}, nil, `flag --grant-ttl: "soon" is not a duration`},
		{"rule broken by flag", []string{"--log-level", "loud"}, nil, `flag --log-level: "loud" is not accepted; accepted values: debug, info, warning, error`},
		{"range broken by flag", []string{"--rate-limit=-1"}, nil, `flag --rate-limit: "-1" must be at least 0`},
		{"cross-option rule by flag", []string{"--listen", "8099"}, nil, `flag --listen: "8099" must be host:port`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			BindCommandFlags(fs, "serve")
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			c, err := Load(Sources{NoOptionsFile: true, Env: func(string) string { return "" }, Flags: fs})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !tt.check(c) {
				t.Fatalf("got %+v, %v", c, err)
			}
		})
	}
}

// TestErrorsNameTheirSource: a value found bad by a rule is reported against where it came
// from — flag, environment variable or add-on option — not "configuration".
func TestErrorsNameTheirSource(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := filepath.Join(dir, "options.json")
	if err := os.WriteFile(opts, []byte(`{"rate_limit": -3, "ha_token": ["x"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	badFile := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(badFile, []byte(`{"allowed_origins": ["*"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		file string
		env  map[string]string
		want string
	}{
		{"add-on option", badFile, nil, "add-on option allowed_origins in " + badFile + `: "*" must list exact origins`},
		{"environment wins and is named", opts, map[string]string{"HAMCP_RATE_LIMIT": "-4"}, `environment variable HAMCP_RATE_LIMIT: "-4" must be at least 0`},
		{"alias environment variable", "", map[string]string{"HA_URL": "ha.local"}, `environment variable HA_URL: "ha.local" must be an http://`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Load(Sources{OptionsFile: tt.file, NoOptionsFile: tt.file == "", Env: func(k string) string { return tt.env[k] }})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
	// A later check (the app's) that only knew "configuration" is explained the same way.
	c, err := Load(Sources{NoOptionsFile: true, Env: func(k string) string { return map[string]string{"HAMCP_TOOLSETS": "nope"}[k] }})
	if err != nil {
		t.Fatal(err)
	}
	got := c.Explain(&Error{Option: "toolsets", Source: "configuration", Value: "nope", Reason: "is not a toolset"}).Error()
	if got != `environment variable HAMCP_TOOLSETS: "nope" is not a toolset` {
		t.Errorf("Explain: %s", got)
	}
}

// TestCommandFlags: each subcommand binds only the options that apply to it, and its own
// defaults are the ones used and shown.
func TestCommandFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cmd      string
		has      []string
		hasNot   []string
		defaults map[string]string
		want     func(c *Config) bool
	}{
		{"stdio", []string{"log-level", "read-only", "ha-url", "shutdown-grace"}, []string{"listen", "rate-limit", "allowed-origins", "external-url", "ssh-port"}, nil,
			func(c *Config) bool { return c.Listen == ":8099" }},
		{"demo", []string{"listen", "rate-limit", "read-only"}, []string{"ha-url", "ha-token", "data-dir", "supervisor-token", "fs-base"}, map[string]string{"listen": "127.0.0.1:8099"},
			func(c *Config) bool { return c.Listen == "127.0.0.1:8099" }},
		{"serve", []string{"listen", "ha-url", "data-dir", "rate-limit"}, nil, nil,
			func(c *Config) bool { return c.Listen == ":8099" }},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			t.Parallel()
			fs := flag.NewFlagSet(tt.cmd, flag.ContinueOnError)
			BindCommandFlags(fs, tt.cmd)
			for _, f := range tt.has {
				if fs.Lookup(f) == nil {
					t.Errorf("%s lacks --%s", tt.cmd, f)
				}
			}
			for _, f := range tt.hasNot {
				if fs.Lookup(f) != nil {
					t.Errorf("%s has --%s, which does not apply to it", tt.cmd, f)
				}
			}
			c, err := Load(Sources{NoOptionsFile: true, Env: func(string) string { return "" }, Flags: fs, Defaults: tt.defaults})
			if err != nil || !tt.want(c) {
				t.Errorf("defaults: %+v %v", c, err)
			}
		})
	}
	o, _ := Lookup("permission_command")
	if d := o.Describe(""); !strings.Contains(d, "accepted: ask, allow, deny") || !strings.Contains(d, "(default ask)") || !strings.Contains(d, "HAMCP_PERMISSION_COMMAND") {
		t.Errorf("help of permission_command: %s", d)
	}
}

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
	BindFlags(fs)
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
	BindFlags(fs)
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

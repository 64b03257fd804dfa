package hatools

import (
	"strings"
	"testing"
	"time"
)

func FuzzConfigPath(f *testing.F) {
	for _, s := range []string{"automations.yaml", "/config/x.yaml", "/homeassistant/a/b", "/etc/passwd", "", " /config ", "../x", "/configx"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := configPath("path", p)
		if err != nil {
			return
		}
		if got != "/config" && !strings.HasPrefix(got, "/config/") {
			t.Fatalf("configPath(%q) = %q, outside /config", p, got)
		}
	})
}

func FuzzBackupName(f *testing.F) {
	f.Add("/config/automations.yaml", int64(1767225600123))
	f.Add("/config/packages/lights.yaml", int64(0))
	f.Add("automations.yaml.20260101T000000.000Z.bak", int64(-5))
	f.Fuzz(func(t *testing.T, p string, ms int64) {
		// Any name parses without panicking; a parsed one names a /config file.
		if of, _, ok := parseBackupName(p); ok && !strings.HasPrefix(of, "/config/") {
			t.Fatalf("parseBackupName(%q) names %q", p, of)
		}
		rel := strings.TrimPrefix(p, "/config/")
		if rel == "" || strings.HasPrefix(rel, "/") || strings.HasSuffix(rel, "/") {
			return // not a file path backupName is ever given
		}
		at := time.UnixMilli(ms % 253402300799000).UTC()
		if at.Year() < 1 || at.Year() > 9999 {
			return
		}
		of, when, ok := parseBackupName(backupName("/config/"+rel, at))
		if !ok || of != "/config/"+rel || !when.Equal(at) {
			t.Fatalf("round trip of %q at %v: %q %v %v", rel, at, of, when, ok)
		}
	})
}

func TestBackupNames(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 678e6, time.UTC)
	cases := []struct{ path, name string }{
		{"/config/automations.yaml", "automations.yaml.20260102T030405.678Z.bak"},
		{"/config/packages/lights.yaml", "packages=2Flights.yaml.20260102T030405.678Z.bak"},
		{"/config/a_/b", "a_=2Fb.20260102T030405.678Z.bak"},
		{"/config/a/_b=c", "a=2F_b=3Dc.20260102T030405.678Z.bak"},
	}
	for _, c := range cases {
		if got := backupName(c.path, at); got != c.name {
			t.Errorf("backupName(%s) = %s, want %s", c.path, got, c.name)
		}
		if of, when, ok := parseBackupName(c.name); !ok || of != c.path || !when.Equal(at) {
			t.Errorf("parseBackupName(%s) = %s %v %v", c.name, of, when, ok)
		}
	}
	for _, bad := range []string{"automations.yaml", "x.bak", ".20260102T030405.678Z.bak", "a.2026010xT030405.678Z.bak"} {
		if _, _, ok := parseBackupName(bad); ok {
			t.Errorf("parseBackupName(%q) accepted", bad)
		}
	}
}

package home

import (
	"strings"
	"testing"
)

func TestBlueprintSource(t *testing.T) {
	cases := []struct {
		url, src, suggested string
		ok                  bool
	}{
		{"https://github.com/home-assistant/core/blob/dev/a/b/notify.yaml", "https://raw.githubusercontent.com/home-assistant/core/dev/a/b/notify.yaml", "home-assistant/notify", true},
		{"https://raw.githubusercontent.com/u/r/main/x/y.yaml", "https://raw.githubusercontent.com/u/r/main/x/y.yaml", "u/y", true},
		{"https://example.com/bp/light.yaml", "https://example.com/bp/light.yaml", "example.com/light", true},
		{"https://example.com/bp/light", "", "", false},
		{"ftp://example.com/x.yaml", "", "", false},
		{"not a url", "", "", false},
	}
	for _, c := range cases {
		src, suggested, err := blueprintSource(c.url)
		if (err == nil) != c.ok || src != c.src || suggested != c.suggested {
			t.Errorf("blueprintSource(%q) = %q, %q, %v", c.url, src, suggested, err)
		}
	}
}

func FuzzBlueprintSource(f *testing.F) {
	for _, s := range []string{"https://github.com/a/b/blob/c/d.yaml", "https://raw.githubusercontent.com/a/b/c/d.yaml", "http://h/x.yaml", "https://github.com/", "https://x/.yaml", "::"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		src, suggested, err := blueprintSource(raw)
		if err != nil {
			return
		}
		if !strings.HasPrefix(src, "http") || suggested == "" || strings.HasSuffix(suggested, ".yaml") {
			t.Fatalf("blueprintSource(%q) = %q, %q", raw, src, suggested)
		}
	})
}

func FuzzParseBlueprint(f *testing.F) {
	for _, s := range demoBlueprintSources {
		f.Add(s, "automation")
	}
	f.Add("blueprint: []", "")
	f.Add("a: &a [*a, *a]", "script")
	f.Fuzz(func(t *testing.T, text, domain string) {
		root, err := parseBlueprint([]byte(text), domain)
		if err != nil {
			return
		}
		meta := mapGet(root, "blueprint")
		if mapString(meta, "name") == "" || domain != "" && mapString(meta, "domain") != domain {
			t.Fatalf("accepted %q for %q", text, domain)
		}
	})
}

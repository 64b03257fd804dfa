package packaging

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func docs(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root(t), "DOCS.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestDocsExplainEveryOption: each option the add-on offers has a row in DOCS.md's option table,
// and each privilege config.yaml asks for is explained.
func TestDocsExplainEveryOption(t *testing.T) {
	t.Parallel()
	d := docs(t)
	m := manifest(t)
	for name := range m.Schema {
		if !regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(name) + "` \\|").MatchString(d) {
			t.Errorf("DOCS.md's option table has no row for `%s`", name)
		}
	}
	for _, privilege := range []string{"`homeassistant_api`", "`hassio_role: manager`", "`ingress`", "`homeassistant_config` read-write", "`ssl`, `backup` read-only"} {
		if !strings.Contains(d, privilege) {
			t.Errorf("DOCS.md does not explain %s", privilege)
		}
	}
	for _, step := range []string{"Add-on Store", "Repositories", "## claude.ai", "## Claude Desktop", "## Claude Code", "## n8n"} {
		if !strings.Contains(d, step) {
			t.Errorf("DOCS.md lacks %q", step)
		}
	}
}

var docLink = regexp.MustCompile(`\]\((addon/[^)#]+)\)`)

// TestClientExamples: the examples DOCS.md links to exist, parse, and use the add-on's ports.
func TestClientExamples(t *testing.T) {
	t.Parallel()
	links := docLink.FindAllStringSubmatch(docs(t), -1)
	if len(links) == 0 {
		t.Fatal("DOCS.md links no client example under addon/")
	}
	for _, l := range links {
		raw, err := os.ReadFile(filepath.Join(root(t), l[1]))
		if err != nil {
			t.Errorf("DOCS.md links %s: %v", l[1], err)
			continue
		}
		if strings.HasSuffix(l[1], ".json") && !json.Valid(raw) {
			t.Errorf("%s is not valid JSON", l[1])
		}
	}
	m := manifest(t)
	entries, err := os.ReadDir(filepath.Join(root(t), "addon", "clients"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(root(t), "addon", "clients", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		if strings.HasSuffix(e.Name(), ".json") && !json.Valid(raw) {
			t.Errorf("addon/clients/%s is not valid JSON", e.Name())
		}
		if strings.Contains(text, ":8099/mcp") && m.Ports["8099/tcp"] == nil {
			t.Errorf("addon/clients/%s uses port 8099, which config.yaml does not map", e.Name())
		}
		if strings.Contains(text, `"2222"`) {
			if _, ok := m.Ports["2222/tcp"]; !ok {
				t.Errorf("addon/clients/%s uses SSH port 2222, which config.yaml does not offer", e.Name())
			}
		}
	}
}

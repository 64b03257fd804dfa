package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/src/toolkit"
	"github.com/hamcp/hamcp/src/tools/dbtools"
	"github.com/hamcp/hamcp/src/tools/hatools"
	"github.com/hamcp/hamcp/src/tools/systools"
)

// The tools/list budgets, in bytes of compact JSON as a client receives them: every tool listed is
// paid for in every conversation's context.
const (
	flatBudget = toolkit.DefaultListBudget // every Home Assistant and root tool, listed flat: auto mode offers them so
	defBudget  = 2500                      // any one tool definition
	snapDir    = "testdata/toolsnaps"
	updateEnv  = "UPDATE_TOOLSNAPS" // UPDATE_TOOLSNAPS=1 go test ./src/app -run TestToolSnapshots
)

// allTools is every Home Assistant and root tool, as a flat tools/list shows them.
func allTools() []*toolkit.Tool {
	return registry(hatools.Deps{}, nil, nil, nil, dbtools.Deps{}, systools.Deps{}).Select(toolkit.Filter{})
}

// everyDefinition is every tool a session can be offered: all of allTools, Hubitat's, and search
// mode's own two.
func everyDefinition() []*toolkit.Tool {
	r := declared()
	out := r.Select(toolkit.Filter{})
	search, _ := r.Surface(toolkit.Filter{}, toolkit.ModeSearch, 0)
	for _, t := range search {
		if strings.HasPrefix(t.Name(), "hamcp_") {
			out = append(out, t)
		}
	}
	return out
}

// TestToolSnapshots keeps a golden copy of every tool definition (name, description, input
// schema, annotations) in testdata/toolsnaps, like github-mcp-server's __toolsnaps__: a change to
// what the model sees shows in review as a diff of these files, and fails here until the
// snapshot is updated with UPDATE_TOOLSNAPS=1.
func TestToolSnapshots(t *testing.T) {
	update := os.Getenv(updateEnv) == "1"
	seen := map[string]bool{}
	for _, tool := range everyDefinition() {
		name := tool.Name() + ".json"
		seen[name] = true
		got, err := json.MarshalIndent(tool.Definition(), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		path := filepath.Join(snapDir, name)
		if update {
			if err := os.MkdirAll(snapDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s has no snapshot: run %s=1 go test ./src/app -run TestToolSnapshots and review the new file", tool.Name(), updateEnv)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s's definition changed; review it, then update the snapshot with %s=1 go test ./src/app -run TestToolSnapshots\ngot:\n%s", tool.Name(), updateEnv, got)
		}
	}
	entries, _ := os.ReadDir(snapDir)
	for _, e := range entries {
		if !seen[e.Name()] {
			if update {
				_ = os.Remove(filepath.Join(snapDir, e.Name()))
				continue
			}
			t.Errorf("snapshot %s belongs to no tool: remove it (or run with %s=1)", e.Name(), updateEnv)
		}
	}
}

// TestToolListBudgets fails when tools/list outgrows what clients handle well: Claude Code warns
// past 25k tokens of tool definitions, Cursor at 40–80 tools. docs/performance.md has the figures.
func TestToolListBudgets(t *testing.T) {
	var over []string
	for _, tool := range everyDefinition() {
		b, err := json.Marshal(tool.Definition())
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > defBudget {
			over = append(over, fmt.Sprintf("%s (%d)", tool.Name(), len(b)))
		}
	}
	total := toolkit.ListBytes(allTools())
	slices.Sort(over)
	if len(over) > 0 {
		t.Errorf("tool definitions over %d bytes: %s; tighten their descriptions", defBudget, strings.Join(over, ", "))
	}
	if total > flatBudget {
		t.Errorf("the flat tools/list is %d bytes, over the %d-byte budget; tighten descriptions or move tools behind tool search", total, flatBudget)
	}
	t.Logf("flat tools/list: %d tools, %d bytes", len(allTools()), total)
}

// portableKeywords are the JSON Schema keywords every function-calling client we know of accepts
// (docs/tools.md, "Schemas every client accepts"): no type arrays, $ref, anyOf/oneOf or
// conditionals, which Gemini's schema subset and several clients' converters refuse.
var portableKeywords = map[string]bool{
	"type": true, "title": true, "description": true, "properties": true, "required": true, "items": true,
	"enum": true, "default": true, "examples": true, "additionalProperties": true, "format": true, "pattern": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
	"minLength": true, "maxLength": true, "minItems": true, "maxItems": true,
}

// TestInputSchemasArePortable walks every input schema for keywords outside the portable set.
func TestInputSchemasArePortable(t *testing.T) {
	for _, tool := range everyDefinition() {
		b, err := json.Marshal(tool.Definition().InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var schema map[string]any
		if err := json.Unmarshal(b, &schema); err != nil {
			t.Fatal(err)
		}
		if schema["type"] != "object" {
			t.Errorf("%s: the input schema's type is %v, not object", tool.Name(), schema["type"])
		}
		for _, problem := range unportable("", schema) {
			t.Errorf("%s: %s", tool.Name(), problem)
		}
	}
}

func unportable(at string, s map[string]any) []string {
	var out []string
	for k, v := range s {
		switch {
		case !portableKeywords[k]:
			out = append(out, "keyword "+k+" at "+at+"/")
		case k == "type":
			if _, ok := v.(string); !ok {
				out = append(out, "a type that is not one string at "+at+"/")
			}
		case k == "properties":
			props, _ := v.(map[string]any)
			for name, p := range props {
				if ps, ok := p.(map[string]any); ok {
					out = append(out, unportable(at+"/"+name, ps)...)
				}
			}
		case k == "items" || k == "additionalProperties":
			if ps, ok := v.(map[string]any); ok {
				out = append(out, unportable(at+"/"+k, ps)...)
			}
		}
	}
	return out
}

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/dev/testkit/nodetest"
)

// TestCompletionWithTypeScriptClient: the official TypeScript SDK client's complete() works
// against every prompt and resource template hamcp lists (it throws on values: null), values
// are ranked and capped, and an unknown prompt or template is invalid params (-32602).
func TestCompletionWithTypeScriptClient(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	node, modules := nodetest.Find(t, root)
	cmd := exec.Command(node, "testdata/complete.cjs", bin)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("complete.cjs: %v\n%s\n%s", err, stderr, out)
	}
	var got struct {
		Prompts, Templates int
		Results            []struct {
			Label, Value string
			Values       []string
			Total        int
			HasMore      bool
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Prompts == 0 || got.Templates == 0 {
		t.Fatalf("nothing to complete: %+v", got)
	}
	find := func(label, value string) []string {
		for _, r := range got.Results {
			if r.Label == label && r.Value == value {
				return r.Values
			}
		}
		t.Fatalf("no result for %s %q", label, value)
		return nil
	}
	tests := []struct {
		label, value string
		check        func(v []string) bool
		want         string
	}{
		{"template hass://entities/{entity_id} entity_id", "light.", func(v []string) bool {
			return len(v) > 0 && !slices.ContainsFunc(v, func(s string) bool { return !strings.HasPrefix(s, "light.") })
		}, "only lights"},
		{"prompt troubleshoot_entity entity_id", "li", func(v []string) bool {
			// ids starting with "li" (light.*) come before those with a word starting with it
			// (sensor.living_room_temperature), which come before mere substrings (calendar.holidays)
			rank := func(s string) int {
				switch {
				case strings.HasPrefix(s, "li"):
					return 0
				case strings.Contains(s, ".li") || strings.Contains(s, "_li"):
					return 1
				}
				return 2
			}
			return len(v) > 0 && rank(v[0]) == 0 && slices.IsSortedFunc(v, func(a, b string) int { return rank(a) - rank(b) }) &&
				slices.Contains(v, "sensor.living_room_temperature") && slices.Contains(v, "calendar.holidays")
		}, "light.* first, then word starts, then substrings"},
		{"prompt energy_saving_review area", "li", func(v []string) bool { return slices.Contains(v, "living_room") }, "living_room"},
		{"prompt troubleshoot_entity entity_id", "zzzz-nothing", func(v []string) bool { return v != nil && len(v) == 0 }, "an empty array"},
		{"prompt create_automation goal", "li", func(v []string) bool { return v != nil && len(v) == 0 }, "an empty array for free text"},
	}
	for _, tt := range tests {
		if v := find(tt.label, tt.value); !tt.check(v) {
			t.Errorf("%s %q: got %v, want %s", tt.label, tt.value, v, tt.want)
		}
	}
	for _, r := range got.Results {
		if r.Label == "prompt troubleshoot_entity entity_id" && r.Value == "" && (len(r.Values) != 100 || !r.HasMore || r.Total <= 100) {
			t.Errorf("all entities: %d values, total %d, hasMore %v; want 100 and more", len(r.Values), r.Total, r.HasMore)
		}
	}
}

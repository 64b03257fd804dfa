package home_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hamcp/hamcp/dev/sim/home"
)

// A config dir from before 2026.1 (the default dashboard in .storage/lovelace) and a YAML
// dashboard from configuration.yaml, as Home Assistant 2026.8 loads them.
func TestLovelaceMigratesDefaultAndReadsYAMLDashboards(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".storage/lovelace", `{"version": 1, "minor_version": 1, "key": "lovelace", "data": {"config": {"views": [{"title": "Old"}]}}}`)
	write("configuration.yaml", "default_config:\nhomeassistant:\n  name: !secret name\nlovelace:\n  dashboards:\n    wall-panel:\n      mode: yaml\n      title: Wall\n      filename: dashboards/wall.yaml\n")
	write("dashboards/wall.yaml", "views:\n  - title: Wall\n    cards: []\n")
	h, err := home.New(home.Options{Seed: 1, ConfigDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()

	list, err := h.LovelaceDashboards()
	if err != nil || len(list) != 2 {
		t.Fatalf("dashboards: %v, %v", list, err)
	}
	if list[0]["url_path"] != "wall-panel" || list[0]["mode"] != "yaml" || list[0]["show_in_sidebar"] != true {
		t.Errorf("yaml dashboard: %v", list[0])
	}
	if list[1]["url_path"] != "lovelace" || list[1]["id"] != "lovelace" || list[1]["title"] != "Overview" {
		t.Errorf("migrated default: %v", list[1])
	}
	if _, err := os.Stat(filepath.Join(dir, ".storage", "lovelace")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf(".storage/lovelace stayed: %v", err)
	}
	lv := "lovelace"
	if cfg, err := h.LovelaceConfig(&lv); err != nil || cfg.(map[string]any)["views"].([]any)[0].(map[string]any)["title"] != "Old" {
		t.Errorf("migrated config: %v, %v", cfg, err)
	}
	var le *home.LovelaceError
	if _, err := h.LovelaceConfig(nil); !errors.As(err, &le) || le.Msg != "No config found." {
		t.Errorf("legacy default after the migration: %v", err)
	}
	wall := "wall-panel"
	if cfg, err := h.LovelaceConfig(&wall); err != nil || cfg.(map[string]any)["views"] == nil {
		t.Errorf("yaml dashboard config: %v, %v", cfg, err)
	}
	if err := h.SaveLovelaceConfig(&wall, map[string]any{"views": []any{}}); !errors.As(err, &le) || le.Code != "error" || le.Msg != "Not supported" {
		t.Errorf("saving a yaml dashboard: %v", err)
	}
	// No demo dashboards were written into a config dir that had its own.
	if res, _ := h.LovelaceResources(); len(res) != 0 {
		t.Errorf("resources: %v", res)
	}
}

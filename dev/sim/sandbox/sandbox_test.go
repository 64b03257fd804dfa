package sandbox

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

var testNow = time.Date(2026, 3, 4, 15, 7, 0, 0, time.UTC)

var testEntities = []string{"light.kitchen", "light.porch", "switch.kettle", "binary_sensor.hall_motion",
	"sensor.office_temperature", "sensor.bedroom_temperature", "person.bob", "sun.sun"}

func create(t *testing.T, o Options) Layout {
	t.Helper()
	l, err := Create(filepath.Join(t.TempDir(), "sandbox"), o)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestCreateTree(t *testing.T) {
	l := create(t, Options{Now: testNow, Entities: testEntities})
	if !filepath.IsAbs(l.Root) {
		t.Errorf("root %q is not absolute", l.Root)
	}
	for name, dir := range map[string]string{"config": l.Config, "ssl": l.SSL, "backup": l.Backup, "share": l.Share,
		"media": l.Media, "addons": l.Addons, "addon_configs": l.AddonConfigs} {
		if dir != filepath.Join(l.Root, name) {
			t.Errorf("layout %s = %s", name, dir)
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			t.Errorf("%s missing: %v", name, err)
		}
	}
	want := []string{
		"config/configuration.yaml", "config/secrets.yaml", "config/automations.yaml", "config/scripts.yaml",
		"config/scenes.yaml", "config/customize.yaml", "config/home-assistant.log", "config/.HA_VERSION",
		"config/.storage/core.config_entries", "config/.storage/core.config", "config/.storage/core.entity_registry",
		"config/blueprints/automation/homeassistant/motion_light.yaml", "config/themes/midnight.yaml",
		"ssl/fullchain.pem", "ssl/privkey.pem", "media/snapshots/front_door.png", "share/README.txt",
		"addons/hello_world/config.yaml", "addon_configs/a0d7b954_nodered/flows.json",
	}
	for _, p := range want {
		if fi, err := os.Stat(filepath.Join(l.Root, p)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: missing or empty (%v)", p, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(l.Config, ".HA_VERSION")); string(b) != DefaultHAVersion {
		t.Errorf(".HA_VERSION = %q", b)
	}
	if fi, err := os.Stat(filepath.Join(l.SSL, "privkey.pem")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("privkey.pem mode: %v %v", fi.Mode(), err)
	}
	if l.RecorderPath() != filepath.Join(l.Config, "home-assistant_v2.db") {
		t.Errorf("RecorderPath = %s", l.RecorderPath())
	}
	backups, _ := filepath.Glob(filepath.Join(l.Backup, "*.tar"))
	if len(backups) != 1 || !regexp.MustCompile(`/[0-9a-f]{8}\.tar$`).MatchString(backups[0]) {
		t.Errorf("backups = %v, want one <8-hex-slug>.tar", backups)
	}
}

// knownTags are the YAML tags Home Assistant adds; anything else would not load.
var knownTags = map[string]bool{"!include": true, "!secret": true, "!input": true, "!include_dir_merge_named": true,
	"!include_dir_named": true, "!include_dir_list": true, "!include_dir_merge_list": true, "!env_var": true}

func walkTags(n *yaml.Node, visit func(*yaml.Node)) {
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		visit(n)
	}
	for _, c := range n.Content {
		walkTags(c, visit)
	}
}

func parseYAML(t *testing.T, path string) *yaml.Node {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var n yaml.Node
	if err := yaml.Unmarshal(b, &n); err != nil {
		t.Fatalf("%s does not parse as YAML: %v", path, err)
	}
	return &n
}

func TestYAMLFilesParseAndResolve(t *testing.T) {
	l := create(t, Options{Now: testNow, Entities: testEntities})
	var secrets map[string]any
	b, _ := os.ReadFile(filepath.Join(l.Config, "secrets.yaml"))
	if err := yaml.Unmarshal(b, &secrets); err != nil {
		t.Fatal(err)
	}
	count := 0
	err := filepath.WalkDir(l.Root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || (!strings.HasSuffix(p, ".yaml") && !strings.HasSuffix(p, ".yml")) {
			return err
		}
		count++
		walkTags(parseYAML(t, p), func(n *yaml.Node) {
			if !knownTags[n.Tag] {
				t.Errorf("%s: unknown tag %s", p, n.Tag)
			}
			switch n.Tag {
			case "!secret":
				if _, ok := secrets[n.Value]; !ok {
					t.Errorf("%s: !secret %s not in secrets.yaml", p, n.Value)
				}
			case "!include", "!include_dir_merge_named":
				if _, err := os.Stat(filepath.Join(filepath.Dir(p), n.Value)); err != nil {
					t.Errorf("%s: %s %s does not exist", p, n.Tag, n.Value)
				}
			}
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if count < 9 {
		t.Errorf("only %d YAML files", count)
	}
	var conf map[string]yaml.Node
	b, _ = os.ReadFile(filepath.Join(l.Config, "configuration.yaml"))
	if err := yaml.Unmarshal(b, &conf); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"default_config", "http", "recorder", "logger", "template", "automation", "script", "scene"} {
		if _, ok := conf[k]; !ok {
			t.Errorf("configuration.yaml lacks %s", k)
		}
	}
	if !strings.Contains(string(b), "purge_keep_days:") {
		t.Error("recorder section lacks purge_keep_days")
	}
}

func TestAutomationsScriptsScenesShape(t *testing.T) {
	l := create(t, Options{Now: testNow, Entities: testEntities})
	var autos []map[string]any
	b, _ := os.ReadFile(filepath.Join(l.Config, "automations.yaml"))
	if err := yaml.Unmarshal(b, &autos); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for i, a := range autos {
		id, _ := a["id"].(string)
		if id == "" || ids[id] {
			t.Errorf("automation %d: id %q missing or duplicate", i, id)
		}
		ids[id] = true
		if _, bp := a["use_blueprint"]; bp {
			continue
		}
		for _, k := range []string{"triggers", "conditions", "actions"} {
			if _, ok := a[k]; !ok {
				t.Errorf("automation %s lacks plural key %s", id, k)
			}
		}
		for _, k := range []string{"trigger", "condition", "action"} {
			if _, ok := a[k]; ok {
				t.Errorf("automation %s uses legacy singular key %s", id, k)
			}
		}
	}
	if len(autos) < 3 {
		t.Errorf("%d automations, want a few", len(autos))
	}
	var scripts map[string]map[string]any
	b, _ = os.ReadFile(filepath.Join(l.Config, "scripts.yaml"))
	if err := yaml.Unmarshal(b, &scripts); err != nil {
		t.Fatalf("scripts.yaml must be a dict keyed by object id: %v", err)
	}
	for id, s := range scripts {
		if _, ok := s["sequence"]; !ok {
			t.Errorf("script %s lacks sequence", id)
		}
	}
	var scenes []map[string]any
	b, _ = os.ReadFile(filepath.Join(l.Config, "scenes.yaml"))
	if err := yaml.Unmarshal(b, &scenes); err != nil || len(scenes) == 0 {
		t.Fatalf("scenes.yaml: %v", err)
	}
	for _, f := range []string{"automations.yaml", "scenes.yaml", "customize.yaml"} {
		text, _ := os.ReadFile(filepath.Join(l.Config, f))
		for _, id := range regexp.MustCompile(`\b(light|switch|binary_sensor|sensor|person)\.[a-z0-9_]+`).FindAllString(string(text), -1) {
			if _, object, _ := strings.Cut(id, "."); object == "turn_on" || object == "turn_off" || object == "toggle" {
				continue // an action, not an entity
			}
			if !contains(testEntities, id) {
				t.Errorf("%s mentions %s, which is not among the given entities", f, id)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestStorageJSON(t *testing.T) {
	l := create(t, Options{Now: testNow, Entities: testEntities})
	files, _ := filepath.Glob(filepath.Join(l.Config, ".storage", "*"))
	if len(files) < 3 {
		t.Fatalf(".storage holds %d files", len(files))
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		var doc struct {
			Version, MinorVersion int
			Key                   string
			Data                  map[string]any
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if doc.Key != filepath.Base(f) || doc.Version != 1 || doc.Data == nil {
			t.Errorf("%s: envelope %+v", f, doc)
		}
	}
	b, _ := os.ReadFile(filepath.Join(l.Config, ".storage", "core.entity_registry"))
	for _, id := range testEntities {
		if !strings.Contains(string(b), `"entity_id": "`+id+`"`) {
			t.Errorf("entity registry lacks %s", id)
		}
	}
}

var logLine = regexp.MustCompile(`^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) (INFO|WARNING|ERROR|DEBUG|CRITICAL) \([A-Za-z_0-9]+\) \[[a-z_.0-9]+\] .+$`)

func TestLogFile(t *testing.T) {
	l := create(t, Options{Now: testNow, Entities: testEntities})
	b, _ := os.ReadFile(filepath.Join(l.Config, "home-assistant.log"))
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) < 300 {
		t.Errorf("log has %d lines, want a few hundred", len(lines))
	}
	levels := map[string]int{}
	var prev time.Time
	for i, line := range lines {
		m := logLine.FindStringSubmatch(line)
		if m == nil {
			if strings.HasPrefix(line, "Traceback") || strings.HasPrefix(line, "  ") || strings.Contains(line, "UpdateFailed") {
				continue
			}
			t.Fatalf("line %d is not HA log format: %q", i+1, line)
		}
		ts, err := time.Parse("2006-01-02 15:04:05.000", m[1])
		if err != nil {
			t.Fatal(err)
		}
		if ts.Before(prev) || ts.After(testNow) {
			t.Errorf("line %d: time %s out of order or after now", i+1, ts)
		}
		prev = ts
		levels[m[2]]++
	}
	for _, lv := range []string{"INFO", "WARNING", "ERROR"} {
		if levels[lv] == 0 {
			t.Errorf("no %s lines", lv)
		}
	}
}

func TestBinaryFiles(t *testing.T) {
	l := create(t, Options{Now: testNow, Entities: testEntities})
	f, err := os.Open(filepath.Join(l.Media, "snapshots", "front_door.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if img, err := png.Decode(f); err != nil || img.Bounds().Dx() == 0 {
		t.Errorf("snapshot png: %v", err)
	}

	backups, _ := filepath.Glob(filepath.Join(l.Backup, "*.tar"))
	raw, _ := os.ReadFile(backups[0])
	tr := tar.NewReader(bytes.NewReader(raw))
	seen := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		seen[h.Name], _ = io.ReadAll(tr)
	}
	var meta struct{ Slug, Name, Type string }
	if err := json.Unmarshal(seen["./backup.json"], &meta); err != nil {
		t.Fatalf("backup.json: %v", err)
	}
	if meta.Slug+".tar" != filepath.Base(backups[0]) || !strings.HasPrefix(meta.Name, "Automatic backup") {
		t.Errorf("backup metadata %+v does not match %s", meta, backups[0])
	}
	zr, err := gzip.NewReader(bytes.NewReader(seen["./homeassistant.tar.gz"]))
	if err != nil {
		t.Fatal(err)
	}
	if h, err := tar.NewReader(zr).Next(); err != nil || !strings.HasPrefix(h.Name, "data/") {
		t.Errorf("homeassistant.tar.gz: %v", err)
	}

	for _, name := range []string{"fullchain.pem", "privkey.pem"} {
		b, _ := os.ReadFile(filepath.Join(l.SSL, name))
		if !strings.Contains(string(b), "DEMO PLACEHOLDER") {
			t.Errorf("%s is not labelled as a demo placeholder", name)
		}
		block, _ := pem.Decode(b)
		if block == nil {
			t.Fatalf("%s: no PEM block", name)
		}
		if _, err := x509.ParseCertificate(block.Bytes); err == nil {
			t.Errorf("%s holds a parseable certificate; it must be a placeholder", name)
		}
		if _, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
			t.Errorf("%s holds a parseable key; it must be a placeholder", name)
		}
	}
}

func TestCreateOnExistingRoot(t *testing.T) {
	base := t.TempDir()
	o := Options{Now: testNow, Entities: testEntities}

	t.Run("second call keeps the tree and its edits", func(t *testing.T) {
		root := filepath.Join(base, "again")
		l1, err := Create(root, o)
		if err != nil {
			t.Fatal(err)
		}
		edited := filepath.Join(l1.Config, "automations.yaml")
		if err := os.WriteFile(edited, []byte("[]\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		l2, err := Create(root, Options{Now: testNow.Add(time.Hour)})
		if err != nil {
			t.Fatalf("second Create: %v", err)
		}
		if l1 != l2 {
			t.Errorf("layouts differ: %+v vs %+v", l1, l2)
		}
		if b, _ := os.ReadFile(edited); string(b) != "[]\n" {
			t.Error("second Create overwrote an edited file")
		}
	})
	t.Run("empty directory is filled", func(t *testing.T) {
		root := filepath.Join(base, "empty")
		if err := os.Mkdir(root, 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := Create(root, o); err != nil {
			t.Fatal(err)
		}
	})
	for name, prep := range map[string]func(string) error{
		"foreign content": func(root string) error {
			os.MkdirAll(root, 0o755)
			return os.WriteFile(filepath.Join(root, "notes.txt"), []byte("mine"), 0o644)
		},
		"incomplete sandbox": func(root string) error {
			return os.MkdirAll(filepath.Join(root, "config"), 0o755)
		},
		"root is a file": func(root string) error { return os.WriteFile(root, []byte("x"), 0o644) },
	} {
		t.Run(name+" is refused", func(t *testing.T) {
			root := filepath.Join(base, strings.ReplaceAll(name, " ", "_"))
			if err := prep(root); err != nil {
				t.Fatal(err)
			}
			if _, err := Create(root, o); err == nil || !strings.Contains(err.Error(), "root") {
				t.Errorf("Create = %v, want a refusal naming root", err)
			}
			if b, err := os.ReadFile(filepath.Join(root, "notes.txt")); err == nil && string(b) != "mine" {
				t.Error("foreign file was modified")
			}
		})
	}
	if _, err := Create("", o); err == nil {
		t.Error("empty root accepted")
	}
}

func TestEntitiesValidationAndFallbacks(t *testing.T) {
	for _, bad := range []string{"Light.x", "light", "1.x", "light.", "light._x", "a.b.c", "light.ä"} {
		_, err := Create(filepath.Join(t.TempDir(), "s"), Options{Now: testNow, Entities: []string{"light.ok", bad}})
		if err == nil || !strings.Contains(err.Error(), "entities[1]") {
			t.Errorf("entity %q: err = %v, want one naming entities[1]", bad, err)
		}
	}
	l := create(t, Options{Now: testNow})
	b, _ := os.ReadFile(filepath.Join(l.Config, "automations.yaml"))
	if !strings.Contains(string(b), "light.kitchen") || !strings.Contains(string(b), "binary_sensor.hallway_motion") {
		t.Error("without entities the defaults should be used")
	}
}

func TestRenderDeterministic(t *testing.T) {
	a, err := render(Options{Now: testNow, Entities: testEntities})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := render(Options{Now: testNow, Entities: testEntities})
	if len(a) != len(b) {
		t.Fatal("file count differs")
	}
	for i := range a {
		if a[i].path != b[i].path || !bytes.Equal(a[i].data, b[i].data) {
			t.Errorf("%s differs between renders", a[i].path)
		}
	}
}

// FuzzRender feeds arbitrary entity lists: render either rejects them with an
// error naming the entity, or every YAML file it makes parses and mentions
// only valid ids.
func FuzzRender(f *testing.F) {
	f.Add("light.kitchen,switch.a,binary_sensor.x_motion,sensor.a_temperature")
	f.Add("light.true,sensor.null_temperature,binary_sensor.yes_motion")
	f.Add("person.x,light.on")
	f.Add("")
	f.Add("light.1,sensor.1e5_temperature")
	f.Fuzz(func(t *testing.T, list string) {
		var ids []string
		if list != "" {
			ids = strings.Split(list, ",")
		}
		files, err := render(Options{Now: testNow, Entities: ids})
		if err != nil {
			if !strings.Contains(err.Error(), "entities[") {
				t.Fatalf("error does not name the entity: %v", err)
			}
			return
		}
		for _, f := range files {
			if !strings.HasSuffix(f.path, ".yaml") {
				continue
			}
			var n yaml.Node
			if err := yaml.Unmarshal(f.data, &n); err != nil {
				t.Fatalf("%s does not parse with entities %q: %v", f.path, ids, err)
			}
		}
		for _, name := range []string{"config/automations.yaml"} {
			for _, fl := range files {
				if fl.path != name {
					continue
				}
				var autos []map[string]any
				if err := yaml.Unmarshal(fl.data, &autos); err != nil {
					t.Fatal(err)
				}
				target := autos[0]["actions"].([]any)[0].(map[string]any)["target"].(map[string]any)["entity_id"]
				if s, ok := target.(string); !ok || !validEntityID(s) {
					t.Fatalf("light target decoded as %T %v", target, target)
				}
			}
		}
	})
}

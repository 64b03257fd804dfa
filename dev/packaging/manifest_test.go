package packaging

import (
	"encoding/json"
	"fmt"
	"image/png"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestConfigValidAgainstLinterSchema validates config.yaml with the linter's own JSON Schema, and
// proves the validator bites: each mutation below breaks a rule the linter enforces.
func TestConfigValidAgainstLinterSchema(t *testing.T) {
	t.Parallel()
	_, rs := resolvedSchema(t)
	doc := readYAML(t, "config.yaml")
	if err := rs.Validate(doc); err != nil {
		t.Fatalf("config.yaml fails the add-on linter's schema: %v", err)
	}
	for _, tc := range []struct {
		name   string
		mutate func(m map[string]any)
	}{
		{"unknown key", func(m map[string]any) { m["watchdog_url"] = "x" }},
		{"version not a string", func(m map[string]any) { m["version"] = 1.0 }},
		{"missing slug", func(m map[string]any) { delete(m, "slug") }},
		{"unknown arch", func(m map[string]any) { m["arch"] = []any{"riscv64"} }},
		{"2026 map name", func(m map[string]any) { m["map"] = []any{map[string]any{"type": "all_app_configs"}} }},
		{"string and dict map entries mixed", func(m map[string]any) {
			m["map"] = []any{"share:rw", map[string]any{"type": "media"}}
		}},
		{"schema: false", func(m map[string]any) { m["schema"] = false }},
		{"port out of range", func(m map[string]any) { m["ports"] = map[string]any{"8099/tcp": 70000.0} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad, err := JSONModel(doc)
			if err != nil {
				t.Fatal(err)
			}
			tc.mutate(bad)
			if err := rs.Validate(bad); err == nil {
				t.Errorf("the schema accepted config.yaml with %s", tc.name)
			}
		})
	}
}

// TestConfigHasNoDefaultKeys applies the linter's rule that fails any key set to its default
// (defaults read from the linter's schema), and its procedural checks (lint.py).
func TestConfigHasNoDefaultKeys(t *testing.T) {
	t.Parallel()
	s, _ := resolvedSchema(t)
	doc := readYAML(t, "config.yaml")
	checked := 0
	for _, key := range slices.Sorted(maps.Keys(doc)) {
		prop := s.Properties[key]
		if prop == nil || prop.Default == nil {
			continue
		}
		checked++
		var def any
		if err := json.Unmarshal(prop.Default, &def); err != nil {
			t.Fatalf("default of %s: %v", key, err)
		}
		if reflect.DeepEqual(doc[key], def) {
			t.Errorf("config.yaml: %q is set to its default %s; the linter rejects it: remove the key", key, prop.Default)
		}
	}
	if checked == 0 {
		t.Fatal("no key of config.yaml has a default in the schema: the schema was not read")
	}
	for _, obsolete := range []string{"watchdog", "codenotary", "advanced", "auto_uart"} {
		if _, ok := doc[obsolete]; ok {
			t.Errorf("config.yaml: %q is an error for the linter (use the Dockerfile HEALTHCHECK for watchdog)", obsolete)
		}
	}
	if _, ok := doc["webui"]; ok && doc["ingress"] == true {
		t.Error("config.yaml: webui together with ingress is a linter error")
	}
	if doc["ingress_port"] == 0.0 && doc["host_network"] != true {
		t.Error("config.yaml: ingress_port 0 needs host_network")
	}
}

// TestConfigPrivileges pins what the add-on asks for, and why (DOCS.md explains each).
func TestConfigPrivileges(t *testing.T) {
	t.Parallel()
	m := manifest(t)
	if !slices.Equal(m.Arch, []string{"aarch64", "amd64"}) {
		t.Errorf("arch = %v, want aarch64 and amd64 (the 32-bit arches are deprecated)", m.Arch)
	}
	if m.Init == nil || *m.Init {
		t.Error("init must be false: hamcp runs as PID 1 (no Docker init, whose environ a root command could read)")
	}
	if !m.HomeassistantAPI {
		t.Error("homeassistant_api must be true: every HA tool goes through the Supervisor's Core proxy")
	}
	// Starting, stopping and installing add-ons (/addons/<slug>/<action>, /store/...) needs manager;
	// backups and host information need at least backup and default, which manager includes.
	if !m.HassioAPI || m.HassioRole != "manager" {
		t.Errorf("hassio_api/hassio_role = %v/%q, want true/manager (ha_manage_addons)", m.HassioAPI, m.HassioRole)
	}
	if m.HostNetwork || m.HostPID || m.DockerAPI || m.FullAccess || len(m.Privileged) > 0 || m.KernelModules {
		t.Error("the add-on asks for a host namespace, Docker, full access or a capability no tool needs")
	}
	// The panel has its own listener (ingress_listen), never the published MCP port: only the
	// Supervisor's ingress proxy may reach it.
	if !m.Ingress || m.IngressPort == nil || ":"+strconv.Itoa(*m.IngressPort) != optionDefault(t, "ingress_listen") {
		t.Errorf("ingress must be on, with ingress_port the port of ingress_listen's default %q; ingress_port = %v",
			optionDefault(t, "ingress_listen"), m.IngressPort)
	}
	if m.IngressPort != nil {
		if _, published := m.Ports[strconv.Itoa(*m.IngressPort)+"/tcp"]; published {
			t.Errorf("ingress_port %d must not be published in ports: the panel answers only the Supervisor", *m.IngressPort)
		}
	}
	wantPorts := map[string]*int{"8099/tcp": ptr(8099), "2222/tcp": nil}
	if !reflect.DeepEqual(m.Ports, wantPorts) {
		t.Errorf("ports = %v, want 8099/tcp mapped and 2222/tcp (SSH) closed until the user picks a host port", fmtPorts(m.Ports))
	}
	// Read-write only where a tool writes: the file tools edit HA's configuration, the shared and
	// media folders, local add-ons and add-on configurations. Certificates and backups are only read
	// (backups are made and removed through the Supervisor API).
	want := map[string]bool{"homeassistant_config": true, "ssl": false, "backup": false, "share": true,
		"media": true, "addons": true, "all_addon_configs": true}
	got := map[string]bool{}
	for _, mnt := range m.Map {
		got[mnt.Type] = mnt.Writable()
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("map = %v, want %v (type → read-write)", got, want)
	}
}

// TestSecurityRating computes the rating the manifest yields and checks DOCS.md states it.
func TestSecurityRating(t *testing.T) {
	t.Parallel()
	_, err := os.Stat(filepath.Join(root(t), "apparmor.txt"))
	profile := err == nil
	rating := SecurityRating(manifest(t), profile)
	// 5, +2 ingress, −1 hassio_role manager (no custom AppArmor profile: see DOCS.md).
	if rating != 6 {
		t.Errorf("security rating = %d, want 6; if a privilege changed on purpose, update this test and DOCS.md", rating)
	}
	docs, err := os.ReadFile(filepath.Join(root(t), "DOCS.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("security rating of %d", rating); !strings.Contains(string(docs), want) {
		t.Errorf("DOCS.md does not say %q", want)
	}
	for _, tc := range []struct {
		name string
		m    Manifest
		prof bool
		want int
	}{
		{"plain", Manifest{}, false, 5},
		{"ingress manager", Manifest{Ingress: true, HassioRole: "manager"}, false, 6},
		{"host network, no apparmor", Manifest{HostNetwork: true, Apparmor: false, HassioRole: "manager"}, false, 2},
		{"custom profile and ingress", Manifest{Ingress: true}, true, 8},
		{"auth_api only counts without ingress", Manifest{Ingress: true, AuthAPI: true}, false, 7},
		{"capabilities cost once", Manifest{Privileged: []string{"NET_ADMIN", "SYS_ADMIN", "SYS_NICE"}}, false, 4},
		{"docker api forces 1", Manifest{Ingress: true, DockerAPI: true}, true, 1},
		{"clamped at 1", Manifest{HostPID: true, HostNetwork: true, HassioRole: "admin", Apparmor: false}, false, 1},
	} {
		if got := SecurityRating(tc.m, tc.prof); got != tc.want {
			t.Errorf("%s: rating %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestRepositoryJSON checks what the Supervisor's SCHEMA_REPOSITORY_CONFIG requires of the
// store's repository file, and that no second repository file competes with it.
func TestRepositoryJSON(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(root(t), "repository.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("repository.json: %v", err)
	}
	for _, k := range []string{"name", "url", "maintainer"} {
		if s, _ := r[k].(string); strings.TrimSpace(s) == "" {
			t.Errorf("repository.json: %q must be a non-empty string", k)
		}
	}
	if u, _ := r["url"].(string); !strings.HasPrefix(u, "https://") || u != manifest(t).URL {
		t.Errorf("repository.json url %q must be the https URL config.yaml names (%q)", u, manifest(t).URL)
	}
	for extra := range maps.Keys(r) {
		if !slices.Contains([]string{"name", "url", "maintainer"}, extra) {
			t.Errorf("repository.json: %q is dropped by the Supervisor", extra)
		}
	}
	for _, other := range []string{"repository.yaml", "repository.yml"} {
		if _, err := os.Stat(filepath.Join(root(t), other)); err == nil {
			t.Errorf("%s competes with repository.json", other)
		}
	}
}

var (
	configName = regexp.MustCompile(`^config\.(ya?ml|json)$`)
	buildName  = regexp.MustCompile(`^build\.(ya?ml|json)$`)
)

// TestNoStrayAddonFiles: the Supervisor takes every config.{yaml,yml,json} outside dot-folders for
// an add-on, and globs build.* recursively (dot-folders too) for the deprecated build file.
func TestNoStrayAddonFiles(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("git", "ls-files", "--cached", "--others", "--exclude-standard", "-z")
	cmd.Dir = root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	if !slices.Contains(files, "config.yaml") {
		t.Fatalf("git ls-files does not list config.yaml (%d files): wrong root?", len(files))
	}
	for _, f := range files {
		base := path.Base(f)
		hidden := slices.ContainsFunc(strings.Split(path.Dir(f), "/"), func(p string) bool { return strings.HasPrefix(p, ".") && p != "." })
		if configName.MatchString(base) && f != "config.yaml" && !hidden {
			t.Errorf("%s: the Supervisor would read it as a second add-on; rename it or move it into a dot-folder", f)
		}
		if buildName.MatchString(base) {
			t.Errorf("%s: the Supervisor would read it as the add-on's (deprecated) build file; rename it", f)
		}
	}
}

// TestIconAndLogo: the store shows icon.png (128×128) and logo.png (about 250×100).
func TestIconAndLogo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file          string
		width, height int
	}{{"icon.png", 128, 128}, {"logo.png", 250, 100}} {
		f, err := os.Open(filepath.Join(root(t), tc.file))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if cfg.Width != tc.width || cfg.Height != tc.height {
			t.Errorf("%s is %d×%d, want %d×%d", tc.file, cfg.Width, cfg.Height, tc.width, tc.height)
		}
		src := filepath.Join(root(t), "addon", strings.TrimSuffix(tc.file, ".png")+".svg")
		if _, err := os.Stat(src); err != nil {
			t.Errorf("%s has no source drawing: %v", tc.file, err)
		}
	}
}

// TestRootFilesTheStoreNeeds: a fresh clone holds every file the store reads at the root.
func TestRootFilesTheStoreNeeds(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"repository.json", "config.yaml", "Dockerfile", "run.sh", "DOCS.md", "README.md",
		"CHANGELOG.md", "translations/en.yaml", "icon.png", "logo.png", ".dockerignore"} {
		fi, err := os.Stat(filepath.Join(root(t), f))
		if err != nil || fi.Size() == 0 {
			t.Errorf("%s is missing or empty", f)
		}
	}
	// Scripts the image runs must be LF-only.
	for _, f := range []string{"run.sh", "addon/compile-hamcp.sh"} {
		raw, err := os.ReadFile(filepath.Join(root(t), f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), "\r") {
			t.Errorf("%s has CR line endings", f)
		}
	}
}

func ptr(n int) *int { return &n }

func fmtPorts(p map[string]*int) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(p)) {
		v := "null"
		if p[k] != nil {
			v = strconv.Itoa(*p[k])
		}
		fmt.Fprintf(&b, "%s:%s ", k, v)
	}
	return b.String()
}

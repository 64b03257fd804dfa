package home

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// HACS, the Home Assistant Community Store, is a custom integration that
// speaks only over the WebSocket API. The simulator carries a handful of
// its repositories, some installed, and downloads "install" them by
// writing the files HACS would write under the config directory.

// hacsRepo is one repository HACS tracks. Ids are GitHub repository ids as
// strings, as HACS reports them.
type hacsRepo struct {
	id, fullName, name, category, description, domain, fileName, haMin string
	authors, topics                                                    []string
	releases                                                           []string // newest first
	stars, downloads, openIssues                                       int
	installed, pendingRestart, isNew                                   bool
	installedVersion, lastUpdated                                      string
}

// HACSVersion is the HACS release the simulator plays.
const HACSVersion = "2.0.5"

// HACSCategories are HACS's repository categories.
var HACSCategories = []string{"appdaemon", "integration", "plugin", "python_script", "template", "theme"}

func seedHACS() []*hacsRepo {
	return []*hacsRepo{
		{id: "172733314", fullName: "hacs/integration", name: "HACS", category: "integration", domain: "hacs", haMin: "2024.4.1",
			description: "HACS gives you a powerful UI to handle downloads of all your custom needs.", authors: []string{"@ludeeus"},
			topics: []string{"community", "hacs", "home-assistant"}, releases: []string{HACSVersion, "2.0.4", "2.0.3"}, stars: 6600,
			openIssues: 14, installed: true, installedVersion: HACSVersion, lastUpdated: "2026-07-28T09:12:44Z"},
		{id: "444350375", fullName: "piitaya/lovelace-mushroom", name: "Mushroom", category: "plugin", fileName: "mushroom.js",
			description: "Build a beautiful Home Assistant dashboard easily", authors: []string{"@piitaya"}, topics: []string{"lovelace", "card"},
			releases: []string{"v4.5.0", "v4.4.0", "v4.3.0"}, stars: 4300, downloads: 98211, openIssues: 211, installed: true,
			installedVersion: "v4.4.0", lastUpdated: "2026-08-02T17:40:01Z"},
		{id: "146194325", fullName: "custom-cards/button-card", name: "button-card", category: "plugin", fileName: "button-card.js",
			description: "Lovelace button-card for home assistant", authors: []string{"@RomRider"}, topics: []string{"lovelace"},
			releases: []string{"v4.3.0", "v4.2.0"}, stars: 2100, downloads: 61020, openIssues: 96, lastUpdated: "2026-06-11T08:00:12Z"},
		{id: "190927524", fullName: "thomasloven/lovelace-card-mod", name: "card-mod", category: "plugin", fileName: "card-mod.js",
			description: "Add CSS styles to (almost) any lovelace card", authors: []string{"@thomasloven"}, topics: []string{"lovelace", "css"},
			releases: []string{"v3.5.0", "v3.4.4"}, stars: 1500, downloads: 77003, openIssues: 44, lastUpdated: "2026-05-03T21:19:57Z"},
		{id: "234599209", fullName: "basnijholt/adaptive-lighting", name: "Adaptive Lighting", category: "integration", domain: "adaptive_lighting",
			haMin: "2025.1.0", description: "Adaptive Lighting custom component for Home Assistant", authors: []string{"@basnijholt"},
			topics: []string{"lighting", "circadian"}, releases: []string{"1.26.0", "1.25.0"}, stars: 2300, openIssues: 38, isNew: true,
			lastUpdated: "2026-07-19T14:02:36Z"},
		{id: "605635573", fullName: "frenck/spook", name: "Spook", category: "integration", domain: "spook", haMin: "2026.1.0",
			description: "A scary powerful toolbox for Home Assistant", authors: []string{"@frenck"}, topics: []string{"toolbox"},
			releases: []string{"v4.1.0", "v4.0.2"}, stars: 900, openIssues: 20, lastUpdated: "2026-08-05T10:45:00Z"},
		{id: "251237347", fullName: "AlexxIT/WebRTC", name: "WebRTC Camera", category: "integration", domain: "webrtc",
			description: "Home Assistant custom component for viewing almost any camera stream in real time", authors: []string{"@AlexxIT"},
			topics: []string{"camera", "webrtc"}, releases: []string{"v3.6.1", "v3.6.0"}, stars: 1800, openIssues: 120, installed: true,
			installedVersion: "v3.6.1", lastUpdated: "2026-04-22T06:30:00Z"},
		{id: "453281232", fullName: "catppuccin/home-assistant", name: "Catppuccin", category: "theme", fileName: "catppuccin.yaml",
			description: "Soothing pastel theme for Home Assistant", authors: []string{"@catppuccin"}, topics: []string{"theme"},
			releases: []string{"v2.1.2"}, stars: 300, openIssues: 2, lastUpdated: "2026-03-14T12:00:00Z"},
	}
}

func (r *hacsRepo) available() string { return r.releases[0] }

func (r *hacsRepo) status() string {
	switch {
	case r.pendingRestart:
		return "pending-restart"
	case r.installed && r.installedVersion != r.available():
		return "pending-upgrade"
	case r.installed:
		return "installed"
	case r.isNew:
		return "new"
	}
	return "default"
}

// localPath is where HACS puts the repository under the config dir.
func (r *hacsRepo) localPath() string {
	switch r.category {
	case "integration":
		return "custom_components/" + r.domain
	case "plugin":
		return "www/community/" + r.repoName()
	case "theme":
		return "themes/" + strings.ToLower(r.name)
	}
	return r.category + "/" + r.repoName()
}

func (r *hacsRepo) repoName() string {
	_, name, _ := strings.Cut(r.fullName, "/")
	return name
}

// listJSON is the hacs/repositories/list item, keys in HACS's order.
func (r *hacsRepo) listJSON(configDir string) map[string]any {
	return map[string]any{
		"authors": r.authors, "available_version": r.available(), "installed_version": nilIfEmpty(r.installedVersion),
		"config_flow": r.category == "integration", "can_download": true, "category": r.category, "country": []string{},
		"custom": false, "description": r.description, "domain": nilIfEmpty(r.domain), "downloads": r.downloads,
		"file_name": r.fileName, "full_name": r.fullName, "hide": false, "homeassistant": nilIfEmpty(r.haMin), "id": r.id,
		"installed": r.installed, "last_updated": r.lastUpdated, "local_path": filepath.Join(hacsConfigDir(configDir), r.localPath()),
		"name": r.name, "new": r.isNew, "pending_upgrade": r.installed && r.installedVersion != r.available(),
		"stars": r.stars, "state": nil, "status": r.status(), "topics": r.topics,
	}
}

func hacsConfigDir(dir string) string {
	if dir == "" {
		return "/config"
	}
	return dir
}

// infoJSON is hacs/repository/info: the list item plus release and README detail.
func (r *hacsRepo) infoJSON(configDir string) map[string]any {
	m := r.listJSON(configDir)
	delete(m, "hide")
	ref := r.available()
	if r.installed {
		ref = r.installedVersion
	}
	m["additional_info"] = "# " + r.name + "\n\n" + r.description + ".\n"
	m["beta"] = false
	m["default_branch"] = "main"
	m["hide_default_branch"] = false
	m["issues"] = r.openIssues
	m["new"] = false
	m["releases"] = r.releases
	m["ref"] = ref
	m["selected_tag"] = nil
	m["version_or_commit"] = "version"
	return m
}

// HACSError is a failure HACS reports with its own error code ("error").
type HACSError struct{ Msg string }

func (e *HACSError) Error() string { return e.Msg }

// HACSInfo is hacs/info.
func (h *Home) HACSInfo() map[string]any {
	return map[string]any{"categories": HACSCategories, "country": nil, "debug": false, "dev": false, "disabled_reason": nil,
		"has_pending_tasks": false, "lovelace_mode": "storage", "stage": "running", "version": HACSVersion}
}

// HACSRepositories is hacs/repositories/list: every repository in the
// given categories (all when empty), sorted by name.
func (h *Home) HACSRepositories(categories []string) []map[string]any {
	a := h.admin()
	a.mu.Lock()
	defer a.mu.Unlock()
	out := []map[string]any{}
	for _, r := range a.hacs {
		if len(categories) > 0 && !slices.Contains(categories, r.category) {
			continue
		}
		out = append(out, r.listJSON(h.cfgDir))
	}
	sort.Slice(out, func(i, j int) bool {
		return strings.ToLower(out[i]["name"].(string)) < strings.ToLower(out[j]["name"].(string))
	})
	return out
}

func (a *adminState) repo(id string) *hacsRepo {
	for _, r := range a.hacs {
		if r.id == id {
			return r
		}
	}
	return nil
}

// HACSRepository is hacs/repository/info; false when no repository has the id.
func (h *Home) HACSRepository(id string) (map[string]any, bool) {
	a := h.admin()
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.repo(id)
	if r == nil {
		return nil, false
	}
	r.isNew = false
	return r.infoJSON(h.cfgDir), true
}

// HACSDownload installs or updates a repository (to version, or the latest
// release). An unknown id is a NotFoundError; an unknown version a HACSError.
// New integrations need a restart, which HACS raises as a repair issue.
func (h *Home) HACSDownload(id, version string) error {
	a := h.admin()
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.repo(id)
	if r == nil {
		return &NotFoundError{Msg: fmt.Sprintf("Repository with ID (%s) not found", id)}
	}
	if version == "" {
		version = r.available()
	}
	if !slices.Contains(r.releases, version) && version != "main" {
		return &HACSError{Msg: fmt.Sprintf("<Integration %s> Version %s does not exist for %s", r.fullName, version, r.fullName)}
	}
	if err := h.writeHACSFiles(r, version); err != nil {
		return &HACSError{Msg: fmt.Sprintf("<Integration %s> Download failed: %v", r.fullName, err)}
	}
	r.installed, r.installedVersion, r.isNew = true, version, false
	if r.category == "integration" {
		r.pendingRestart = true
		a.raiseIssue(RepairIssue{Created: ISOTime(h.now()), Domain: "hacs", IssueDomain: strp(r.domain), IssueID: "restart_required_" + r.id + "_" + r.domain,
			IsFixable: true, Severity: "warning", TranslationKey: "restart_required", TranslationPlaceholders: map[string]string{"name": r.name}})
	}
	h.Log("info", "custom_components.hacs", "<%s %s> Download completed", titleCase(r.category), r.fullName)
	return nil
}

// HACSRemove uninstalls a repository's files; HACS answers {} even for one
// that was not installed.
func (h *Home) HACSRemove(id string) error {
	a := h.admin()
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.repo(id)
	if r == nil {
		return &NotFoundError{Msg: fmt.Sprintf("Repository with ID (%s) not found", id)}
	}
	if r.installed && h.cfgDir != "" {
		if err := os.RemoveAll(filepath.Join(h.cfgDir, r.localPath())); err != nil {
			return &HACSError{Msg: fmt.Sprintf("<%s %s> Removal failed: %v", titleCase(r.category), r.fullName, err)}
		}
	}
	if r.installed {
		h.Log("info", "custom_components.hacs", "<%s %s> Removing", titleCase(r.category), r.fullName)
	}
	r.installed, r.installedVersion, r.pendingRestart = false, "", false
	keep := a.issues[:0]
	for _, is := range a.issues {
		if !(is.Domain == "hacs" && strings.HasPrefix(is.IssueID, "restart_required_"+r.id+"_")) {
			keep = append(keep, is)
		}
	}
	a.issues = keep
	return nil
}

// writeHACSFiles writes what a download leaves on disk (nothing in memory mode).
func (h *Home) writeHACSFiles(r *hacsRepo, version string) error {
	if h.cfgDir == "" {
		return nil
	}
	dir := filepath.Join(h.cfgDir, r.localPath())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := map[string]string{}
	switch r.category {
	case "integration":
		files["manifest.json"] = fmt.Sprintf("{\n  \"domain\": %q,\n  \"name\": %q,\n  \"codeowners\": [%q],\n  \"config_flow\": true,\n  \"documentation\": \"https://github.com/%s\",\n  \"iot_class\": \"local_polling\",\n  \"version\": %q\n}\n",
			r.domain, r.name, r.authors[0], r.fullName, strings.TrimPrefix(version, "v"))
		files["__init__.py"] = fmt.Sprintf("\"\"\"The %s integration.\"\"\"\n", r.name)
	case "plugin":
		files[r.fileName] = fmt.Sprintf("// %s %s\nconsole.info(%q);\n", r.name, version, r.name+" "+version)
	case "theme":
		files[r.fileName] = fmt.Sprintf("%s:\n  primary-color: \"#8839ef\"\n", r.name)
	}
	for name, body := range files {
		if err := writeAtomic(filepath.Join(dir, name), []byte(body)); err != nil {
			return err
		}
	}
	return nil
}

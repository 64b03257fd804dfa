package hatools

import (
	"context"
	"net/http"
	"regexp"
	"sort"
	"strings"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/sensitive"
	"github.com/hamcp/hamcp/src/toolkit"
)

// slugRe is an add-on slug ("core_mosquitto", "a0d7b954_vscode", "self"); anything else could
// steer the request path.
var slugRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)

type manageAddonsArgs struct {
	Action string `json:"action" validate:"required,oneof=list info install uninstall start stop restart update" example:"list"`
	Slug   string `json:"slug,omitempty" jsonschema:"from the list, e.g. core_mosquitto"`
	Scope  string `json:"scope,omitempty" jsonschema:"list" validate:"omitempty,oneof=installed store"`
	Search string `json:"search,omitempty" jsonschema:"list"`
	toolkit.Page
}

type addonItem struct {
	Slug            string `json:"slug"`
	Name            string `json:"name"`
	State           string `json:"state,omitempty"`
	Version         string `json:"version,omitempty"`
	VersionLatest   string `json:"version_latest,omitempty"`
	UpdateAvailable bool   `json:"update_available,omitempty"`
	Installed       *bool  `json:"installed,omitempty"`
	Description     string `json:"description,omitempty"`
}

type addonsResult struct {
	Action string                   `json:"action"`
	List   *toolkit.List[addonItem] `json:"list,omitempty"`
	Addon  map[string]any           `json:"addon,omitempty"`
	Done   string                   `json:"done,omitempty"`
	Note   string                   `json:"note,omitempty"`
}

// addonInfoFields are the members of /addons/<slug>/info a model needs; options are left out
// because they often hold passwords.
var addonInfoFields = []string{"slug", "name", "description", "state", "version", "version_latest", "update_available", "installed",
	"repository", "url", "boot", "auto_update", "watchdog", "ingress", "ingress_panel", "webui", "hostname", "ip_address",
	"hassio_role", "homeassistant_api", "host_network", "privileged", "full_access", "stage", "arch"}

// risky are the add-on actions that interrupt or remove something.
var risky = map[string]string{
	"uninstall": "uninstall the add-on %s (its data is removed)",
	"stop":      "stop the add-on %s",
	"restart":   "restart the add-on %s",
	"update":    "update the add-on %s (updates can change its behaviour)",
}

type manageHACSArgs struct {
	Action     string `json:"action" validate:"required,oneof=list info download remove" example:"list"`
	Repository string `json:"repository,omitempty" jsonschema:"id or owner/name"`
	Category   string `json:"category,omitempty" jsonschema:"list; plugin = cards" validate:"omitempty,oneof=integration plugin theme template python_script appdaemon"`
	Installed  *bool  `json:"installed,omitempty" jsonschema:"list"`
	Search     string `json:"search,omitempty" jsonschema:"list"`
	Version    string `json:"version,omitempty" jsonschema:"download (default latest)"`
	toolkit.Page
}

type hacsResult struct {
	Action     string                                      `json:"action"`
	List       *toolkit.List[homeassistant.HACSRepository] `json:"list,omitempty"`
	Repository *homeassistant.HACSRepository               `json:"repository,omitempty"`
	Done       string                                      `json:"done,omitempty"`
	Note       string                                      `json:"note,omitempty"`
}

// addonTools are the add-on and HACS tools, in the order tools/list shows them.
func addonTools(d Deps) []*toolkit.Tool { return []*toolkit.Tool{manageAddons(d), manageHACS(d)} }

// manageAddons is ha_manage_addons.
func manageAddons(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[manageAddonsArgs, addonsResult]{
		Name: "ha_manage_addons", Toolset: SetAddons, Title: "Manage add-ons", Conditional: addonGrant,
		Confirm: &toolkit.Confirm[manageAddonsArgs]{When: "action uninstall (`delete`); stop, restart or update (`change`)",
			Check: func(ctx context.Context, c *toolkit.Call, a manageAddonsArgs) (toolkit.Ask, error) {
				what, ok := risky[a.Action]
				if !ok {
					return toolkit.Ask{}, nil
				}
				class := sensitive.Change
				if a.Action == "uninstall" {
					class = sensitive.Delete
				}
				return plain(class, strings.ToUpper(what[:1])+strings.Replace(what[1:], "%s", a.Slug, 1)+"?"), nil
			}},
		Description: "Supervisor add-ons: list (scope=store: installable), info, install, start; confirmed by the user: stop, restart, update, uninstall. All but list and info need command permission. Needs HA OS or Supervised.",
		Destructive: true,
		Summary:     func(a manageAddonsArgs) string { return a.Action + " " + a.Slug },
		Handler: func(ctx context.Context, c *toolkit.Call, a manageAddonsArgs) (addonsResult, error) {
			return d.manageAddon(ctx, a)
		},
	})
}

// manageAddon runs one add-on action through the Supervisor (or core's passthrough to it).
func (d Deps) manageAddon(ctx context.Context, a manageAddonsArgs) (addonsResult, error) {
	api := supervisorFor(d)
	if a.Action == "list" {
		return listAddons(ctx, api, a)
	}
	if !slugRe.MatchString(a.Slug) {
		return addonsResult{}, toolkit.InvalidArg("slug", "is required for "+a.Action+" and must be an add-on slug from the list", `{"slug": "core_mosquitto"}`)
	}
	if a.Action == "info" {
		info, err := addonInfo(ctx, api, a.Slug)
		if err != nil {
			return addonsResult{}, err
		}
		return addonsResult{Action: a.Action, Addon: info}, nil
	}
	if _, ok := risky[a.Action]; ok {
		if err := refuseSelf(ctx, d, a.Slug, a.Action); err != nil {
			return addonsResult{}, err
		}
	}
	path := "/addons/" + a.Slug + "/" + a.Action
	if a.Action == "install" || a.Action == "update" {
		path = "/store/addons/" + a.Slug + "/" + a.Action
	}
	if err := api.Do(ctx, http.MethodPost, path, nil, nil); err != nil {
		return addonsResult{}, supErr(err, "add-on management", false, `the slugs are in {"action": "list"} (scope=store for installable ones)`)
	}
	out := addonsResult{Action: a.Action, Done: a.Action + " " + a.Slug}
	if a.Action != "uninstall" {
		if info, err := addonInfo(ctx, api, a.Slug); err == nil {
			out.Addon = pick(info, []string{"slug", "name", "state", "version", "version_latest", "update_available"})
		}
	}
	if a.Action == "install" {
		out.Note = "installed but not started: configure it if needed, then start it"
	}
	return out, nil
}

// manageHACS is ha_manage_hacs.
func manageHACS(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[manageHACSArgs, hacsResult]{
		Name: "ha_manage_hacs", Toolset: SetAddons, Title: "Manage HACS repositories", Conditional: hacsGrant,
		Confirm: &toolkit.Confirm[manageHACSArgs]{When: "action remove (`delete`); download (`change`)",
			Check: func(ctx context.Context, c *toolkit.Call, a manageHACSArgs) (toolkit.Ask, error) {
				switch a.Action {
				case "remove":
					return plain(sensitive.Delete, "Remove "+a.Repository+" and its files from HACS?"), nil
				case "download":
					return plain(sensitive.Change, "Install or update "+a.Repository+" from HACS (third-party code from GitHub that runs inside Home Assistant)?"), nil
				}
				return toolkit.Ask{}, nil
			}},
		Description: "HACS custom integrations, cards and themes: list, info; confirmed by the user and needing command permission: download (install or update third-party code), remove. New integrations need ha_restart.",
		Destructive: true,
		OpenWorld:   true,
		Summary:     func(a manageHACSArgs) string { return a.Action + " " + a.Repository },
		Handler: func(ctx context.Context, c *toolkit.Call, a manageHACSArgs) (hacsResult, error) {
			return d.manageRepository(ctx, a)
		},
	})
}

// manageRepository runs one HACS action; every action but list first resolves the repository
// against HACS's list.
func (d Deps) manageRepository(ctx context.Context, a manageHACSArgs) (hacsResult, error) {
	var categories []string
	if a.Category != "" {
		categories = []string{a.Category}
	}
	repos, err := d.HA.HACSRepositories(ctx, categories...)
	if err != nil {
		return hacsResult{}, hacsError(err, false)
	}
	if a.Action == "list" {
		return hacsResult{Action: "list", List: listHACS(repos, a)}, nil
	}
	repo, err := findRepo(repos, a.Repository)
	if err != nil {
		return hacsResult{}, err
	}
	switch a.Action {
	case "info":
		info, err := hacsInfo(ctx, d, repo.ID)
		if err != nil {
			return hacsResult{}, err
		}
		return hacsResult{Action: "info", Repository: info}, nil
	case "remove":
		if !repo.Installed {
			return hacsResult{}, &toolkit.Error{Code: "not_installed", Field: "repository", Message: repo.FullName + " is not installed, so there is nothing to remove"}
		}
		if err := d.HA.HACSRemove(ctx, repo.ID); err != nil {
			return hacsResult{}, hacsError(err, false)
		}
		note := ""
		if repo.Category == "integration" {
			note = "restart Home Assistant (ha_restart) to unload the integration"
		}
		return hacsResult{Action: "remove", Done: "removed " + repo.FullName, Note: note}, nil
	}
	if err := d.HA.HACSDownload(ctx, repo.ID, a.Version); err != nil {
		return hacsResult{}, hacsError(err, false)
	}
	out := hacsResult{Action: "download", Done: "downloaded " + repo.FullName}
	if info, err := hacsInfo(ctx, d, repo.ID); err == nil {
		out.Repository = info
	}
	switch repo.Category {
	case "integration":
		out.Note = "restart Home Assistant (ha_restart) to load it, then add it under Settings → Devices & services"
	case "plugin":
		out.Note = "reload the dashboard in the browser to use the card"
	case "theme":
		out.Note = `reload themes with ha_reload_config {"domain": "themes"}`
	}
	return out, nil
}

func listAddons(ctx context.Context, api supervisorAPI, a manageAddonsArgs) (addonsResult, error) {
	path := "/addons"
	if a.Scope == "store" {
		path = "/store/addons"
	}
	var res struct {
		Addons []struct {
			addonItem
			Installed *bool `json:"installed"`
		} `json:"addons"`
	}
	if err := api.Do(ctx, http.MethodGet, path, nil, &res); err != nil {
		return addonsResult{}, supErr(err, "add-on management", false, "")
	}
	search := strings.ToLower(a.Search)
	var items []addonItem
	for _, r := range res.Addons {
		it := r.addonItem
		if search != "" && !strings.Contains(strings.ToLower(it.Name+" "+it.Slug+" "+it.Description), search) {
			continue
		}
		if a.Scope == "store" {
			it.Installed = r.Installed
		}
		if it.State == "unknown" {
			it.State = ""
		}
		it.Description = ""
		items = append(items, it)
	}
	sort.Slice(items, func(i, j int) bool { return items[i].Slug < items[j].Slug })
	page := toolkit.Paginate(items, a.Page)
	return addonsResult{Action: "list", List: &page}, nil
}

func addonInfo(ctx context.Context, api supervisorAPI, slug string) (map[string]any, error) {
	var raw map[string]any
	if err := api.Do(ctx, http.MethodGet, "/addons/"+slug+"/info", nil, &raw); err != nil {
		return nil, supErr(err, "add-on management", false, `the slugs are in {"action": "list"} (scope=store for installable ones)`)
	}
	info := pick(raw, addonInfoFields)
	if opts, ok := raw["options"].(map[string]any); ok && len(opts) > 0 {
		keys := make([]string, 0, len(opts))
		for k := range opts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		info["option_names"] = keys
	}
	return info, nil
}

// refuseSelf keeps hamcp from stopping, restarting or uninstalling the add-on it runs in,
// which would end the very session asking.
func refuseSelf(ctx context.Context, d Deps, slug, action string) error {
	if d.Supervisor == nil {
		return nil
	}
	self := slug == "self"
	if !self {
		var me struct {
			Slug string `json:"slug"`
		}
		if err := d.Supervisor.Do(ctx, http.MethodGet, "/addons/self/info", nil, &me); err == nil && me.Slug == slug {
			self = true
		}
	}
	if self {
		return &toolkit.Error{Code: "not_allowed", Field: "slug", Message: "hamcp cannot " + action + " its own add-on: the session would end mid-call",
			Hint: "do it from Settings → Add-ons in Home Assistant"}
	}
	return nil
}

func listHACS(repos []homeassistant.HACSRepository, a manageHACSArgs) *toolkit.List[homeassistant.HACSRepository] {
	search := strings.ToLower(a.Search)
	var picked []homeassistant.HACSRepository
	for _, r := range repos {
		if a.Installed != nil && r.Installed != *a.Installed {
			continue
		}
		if search != "" && !strings.Contains(strings.ToLower(r.Name+" "+r.FullName+" "+r.Description), search) {
			continue
		}
		// The list stays small: details (description, releases, paths) are in info.
		picked = append(picked, homeassistant.HACSRepository{ID: r.ID, FullName: r.FullName, Name: r.Name, Category: r.Category, Installed: r.Installed,
			InstalledVersion: r.InstalledVersion, AvailableVersion: r.AvailableVersion, PendingUpgrade: r.PendingUpgrade})
	}
	sort.SliceStable(picked, func(i, j int) bool { return strings.ToLower(picked[i].FullName) < strings.ToLower(picked[j].FullName) })
	page := toolkit.Paginate(picked, a.Page)
	return &page
}

// findRepo resolves a repository id, owner/name or GitHub URL against HACS's list.
func findRepo(repos []homeassistant.HACSRepository, ref string) (homeassistant.HACSRepository, error) {
	ref = strings.TrimSpace(ref)
	ref = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(ref, "https://github.com/"), "http://github.com/"), "/")
	if ref == "" {
		return homeassistant.HACSRepository{}, toolkit.InvalidArg("repository", "is required for this action", `{"repository": "piitaya/lovelace-mushroom"}`)
	}
	for _, r := range repos {
		if r.ID == ref || strings.EqualFold(r.FullName, ref) {
			return r, nil
		}
	}
	return homeassistant.HACSRepository{}, toolkit.NotFound("HACS has no repository "+ref, `find it with {"action": "list", "search": "…"}; custom repositories must be added in HACS first`)
}

func hacsInfo(ctx context.Context, d Deps, id string) (*homeassistant.HACSRepository, error) {
	info, err := d.HA.HACSRepositoryInfo(ctx, id)
	if err != nil {
		return nil, hacsError(err, false)
	}
	if len(info.Description) > 300 {
		info.Description = truncateUTF8(info.Description, 300) + "…"
	}
	if len(info.Releases) > 10 {
		info.Releases = info.Releases[:10]
	}
	return &info, nil
}

// hacsError explains HACS's answers: unknown commands mean HACS is not installed.
func hacsError(err error, changed bool) error {
	return haWSError(err, "HACS", changed, "install HACS (hacs.xyz) to manage community integrations")
}

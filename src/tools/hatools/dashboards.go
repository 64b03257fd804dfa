package hatools

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/hamcp/hamcp/src/confighistory"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/sensitive"
	"github.com/hamcp/hamcp/src/toolkit"
)

// ha_manage_dashboards edits dashboards through the lovelace integration's WebSocket commands, as
// the dashboard editor does: a storage dashboard's config is one JSON document saved whole, so a
// change to one view reads the document, replaces that view and saves it all.

type dashboardArgs struct {
	Action  string         `json:"action" validate:"required,oneof=list get save create delete resources"`
	URLPath string         `json:"url_path,omitempty" jsonschema:"default: lovelace"`
	View    string         `json:"view,omitempty" jsonschema:"index, path, or new (save)"`
	Config  map[string]any `json:"config,omitempty" jsonschema:"{views:[…]}, or the view"`
	Title   string         `json:"title,omitempty" jsonschema:"create"`
	Icon    string         `json:"icon,omitempty" jsonschema:"create"`
	Hidden  bool           `json:"hidden,omitempty" jsonschema:"create: not in the sidebar"`
}

// dashboardInfo is one dashboard in a list.
type dashboardInfo struct {
	URLPath   string `json:"url_path"`
	Title     string `json:"title"`
	Icon      string `json:"icon,omitempty"`
	Mode      string `json:"mode"` // storage (editable here) or yaml (a file: ha_write_config)
	AdminOnly bool   `json:"admin_only,omitempty"`
	Hidden    bool   `json:"hidden,omitempty"`
	Filename  string `json:"filename,omitempty"`
}

// viewInfo sums up one view, so a large dashboard is read view by view.
type viewInfo struct {
	Index int    `json:"index"`
	Path  string `json:"path,omitempty"`
	Title string `json:"title,omitempty"`
	Type  string `json:"type,omitempty"`
	Cards int    `json:"cards"`
	Size  int    `json:"size"` // bytes of its JSON
}

type dashboardResult struct {
	Action     string                            `json:"action"`
	Dashboards []dashboardInfo                   `json:"dashboards,omitempty"`
	URLPath    string                            `json:"url_path,omitempty"`
	Title      string                            `json:"title,omitempty"`
	Mode       string                            `json:"mode,omitempty"`
	Views      []viewInfo                        `json:"views,omitempty"`
	View       *viewInfo                         `json:"view,omitempty"`
	Config     json.RawMessage                   `json:"config,omitempty"`
	Resources  []homeassistant.DashboardResource `json:"resources,omitempty"`
	Saved      bool                              `json:"saved,omitempty"`
	Created    bool                              `json:"created,omitempty"`
	Deleted    bool                              `json:"deleted,omitempty"`
	// Version is the ha_config_history version that holds what this change replaced.
	Version int    `json:"version,omitempty"`
	Note    string `json:"note,omitempty"`
}

// maxInlineConfig is the largest config get returns whole; past it, the model reads views.
const maxInlineConfig = 8 << 10

const dashboardExample = `{"action": "save", "url_path": "dashboard-garden", "config": {"views": [{"title": "Garden", "cards": [{"type": "tile", "entity": "light.garden_path"}]}]}}`

// dashboardTools is ha_manage_dashboards.
func dashboardTools(d Deps) []*toolkit.Tool { return []*toolkit.Tool{manageDashboards(d)} }

func manageDashboards(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[dashboardArgs, dashboardResult]{
		Name: "ha_manage_dashboards", Toolset: SetConfig, Title: "Manage dashboards",
		Confirm: dashboardConfirm(d),
		Description: "Dashboards: list; get (views with index and path; the whole config when small, else give view); " +
			"save the whole config, or one view (view: index, path or new); create (url_path with a hyphen, title, optional config); " +
			"delete; resources (custom cards). The user confirms deletes and cards whose actions unlock, disarm or open; overwriting needs confirm. " +
			"YAML dashboards: ha_write_config. Returns version (ha_config_history).",
		Destructive: true,
		Summary:     func(a dashboardArgs) string { return strings.TrimSpace(a.Action + " " + a.URLPath + " " + a.View) },
		Handler: func(ctx context.Context, c *toolkit.Call, a dashboardArgs) (dashboardResult, error) {
			if err := a.check(); err != nil {
				return dashboardResult{}, err
			}
			switch a.Action {
			case "list":
				return listDashboards(ctx, d)
			case "get":
				return getDashboard(ctx, d, a)
			case "save":
				return saveDashboard(ctx, d, c, a)
			case "create":
				return createDashboard(ctx, d, c, a)
			case "delete":
				return deleteDashboard(ctx, d, c, a)
			}
			res, err := d.HA.DashboardResources(ctx)
			if err != nil {
				return dashboardResult{}, haWSError(err, "dashboard resources", false, "")
			}
			return dashboardResult{Action: a.Action, Resources: res}, nil
		},
	})
}

// check refuses arguments an action cannot use, naming the field.
func (a *dashboardArgs) check() error {
	a.URLPath = strings.TrimSpace(a.URLPath)
	if a.URLPath == "" && a.Action == "create" {
		return toolkit.InvalidArg("url_path", "is required for create: lowercase words joined by a hyphen", `{"action": "create", "url_path": "dashboard-garden", "title": "Garden"}`)
	}
	if a.URLPath == "" {
		a.URLPath = homeassistant.DefaultDashboard
	}
	switch a.Action {
	case "save":
		if a.Config == nil {
			return toolkit.InvalidArg("config", "is required for save", dashboardExample)
		}
		if a.View == "" {
			return checkDashboardConfig(a.Config)
		}
	case "create":
		if a.Title == "" {
			return toolkit.InvalidArg("title", "is required for create", `{"action": "create", "url_path": "dashboard-garden", "title": "Garden"}`)
		}
		if a.Config != nil {
			return checkDashboardConfig(a.Config)
		}
	}
	return nil
}

// checkDashboardConfig accepts what the dashboard editor saves: views, each an object, or a
// strategy that generates them.
func checkDashboardConfig(cfg map[string]any) error {
	views, hasViews := cfg["views"]
	if !hasViews {
		if _, ok := cfg["strategy"].(map[string]any); ok {
			return nil
		}
		return toolkit.InvalidArg("config.views", "is required: a list of views (or a strategy object)", dashboardExample)
	}
	list, ok := views.([]any)
	if !ok {
		return toolkit.InvalidArg("config.views", "must be a list of view objects", dashboardExample)
	}
	for i, v := range list {
		if _, ok := v.(map[string]any); !ok {
			return toolkit.InvalidArg(fmt.Sprintf("config.views[%d]", i), "must be an object (title, path, cards or sections)", `{"title": "Kitchen", "path": "kitchen", "cards": []}`)
		}
	}
	return nil
}

func listDashboards(ctx context.Context, d Deps) (dashboardResult, error) {
	all, err := d.HA.Dashboards(ctx)
	if err != nil {
		return dashboardResult{}, haWSError(err, "dashboards", false, "")
	}
	out := dashboardResult{Action: "list"}
	if !slices.ContainsFunc(all, func(x homeassistant.Dashboard) bool { return x.URLPath == homeassistant.DefaultDashboard }) {
		out.Dashboards = append(out.Dashboards, dashboardInfo{URLPath: homeassistant.DefaultDashboard, Title: "Overview", Mode: "storage"})
	}
	for _, x := range all {
		out.Dashboards = append(out.Dashboards, dashboardInfo{URLPath: x.URLPath, Title: x.Title, Icon: x.Icon, Mode: x.Mode,
			AdminOnly: x.RequireAdmin, Hidden: !x.ShowInSidebar, Filename: x.Filename})
	}
	return out, nil
}

// findDashboard is the dashboard at urlPath. The default one has no entry before Home Assistant
// 2026.1 (or after its entry was deleted): it stands in with a blank ID.
func findDashboard(ctx context.Context, d Deps, urlPath string) (homeassistant.Dashboard, error) {
	all, err := d.HA.Dashboards(ctx)
	if err != nil {
		return homeassistant.Dashboard{}, haWSError(err, "dashboards", false, "")
	}
	if i := slices.IndexFunc(all, func(x homeassistant.Dashboard) bool { return x.URLPath == urlPath }); i >= 0 {
		return all[i], nil
	}
	if urlPath == homeassistant.DefaultDashboard {
		return homeassistant.Dashboard{URLPath: urlPath, Title: "Overview", Mode: "storage"}, nil
	}
	return homeassistant.Dashboard{}, toolkit.NotFound("no dashboard with url_path "+urlPath, "action list shows the dashboards")
}

// dashboardConfig reads a dashboard's config; nil when none is saved.
func dashboardConfig(ctx context.Context, d Deps, urlPath string) (json.RawMessage, error) {
	raw, err := d.HA.DashboardConfig(ctx, urlPath)
	if homeassistant.IsUnknownDashboard(err) {
		return nil, toolkit.NotFound("no dashboard with url_path "+urlPath, "action list shows the dashboards")
	}
	if err != nil {
		return nil, haWSError(err, "dashboards", false, "")
	}
	return raw, nil
}

func getDashboard(ctx context.Context, d Deps, a dashboardArgs) (dashboardResult, error) {
	dash, err := findDashboard(ctx, d, a.URLPath)
	if err != nil {
		return dashboardResult{}, err
	}
	raw, err := dashboardConfig(ctx, d, a.URLPath)
	if err != nil {
		return dashboardResult{}, err
	}
	out := dashboardResult{Action: a.Action, URLPath: dash.URLPath, Title: dash.Title, Mode: dash.Mode}
	if raw == nil {
		out.Mode = "empty"
		out.Note = "nothing saved yet: save a config (views) to fill it"
		if a.URLPath == homeassistant.DefaultDashboard {
			out.Mode = "auto-gen"
			out.Note = "Home Assistant generates this dashboard from your entities; saving a config takes it over"
		}
		return out, nil
	}
	var cfg map[string]any
	if json.Unmarshal(raw, &cfg) != nil {
		out.Config = raw // saved as text (the raw editor allows it): shown as it is
		return out, nil
	}
	views, _ := cfg["views"].([]any)
	if a.View != "" {
		i, err := pickView(views, a.View)
		if err != nil {
			return dashboardResult{}, err
		}
		info := summarizeView(i, views[i])
		out.View = &info
		out.Config, _ = json.Marshal(views[i])
		return out, nil
	}
	for i, v := range views {
		out.Views = append(out.Views, summarizeView(i, v))
	}
	if len(raw) <= maxInlineConfig {
		out.Config = raw
	} else {
		out.Note = fmt.Sprintf("the config is %d bytes: read one view with view=<index or path>", len(raw))
	}
	return out, nil
}

// pickView finds a view by index, else by path, else by title (any case).
func pickView(views []any, sel string) (int, error) {
	sel = strings.TrimSpace(sel)
	if n, err := strconv.Atoi(sel); err == nil {
		if n < 0 || n >= len(views) {
			return 0, toolkit.InvalidArg("view", fmt.Sprintf("index %d is outside the dashboard's %d views", n, len(views)), `"0"`)
		}
		return n, nil
	}
	for _, match := range []func(map[string]any) bool{
		func(v map[string]any) bool { return v["path"] == sel },
		func(v map[string]any) bool { t, _ := v["title"].(string); return strings.EqualFold(t, sel) },
	} {
		for i, v := range views {
			if m, ok := v.(map[string]any); ok && match(m) {
				return i, nil
			}
		}
	}
	return 0, toolkit.NotFound("no view "+strconv.Quote(sel)+" in this dashboard", "action get without view lists the views with their index and path")
}

func summarizeView(i int, v any) viewInfo {
	m, _ := v.(map[string]any)
	b, _ := json.Marshal(v)
	info := viewInfo{Index: i, Path: stringOf(m["path"]), Title: stringOf(m["title"]), Type: stringOf(m["type"]), Size: len(b)}
	cards, _ := m["cards"].([]any)
	info.Cards = len(cards)
	sections, _ := m["sections"].([]any)
	for _, s := range sections {
		sm, _ := s.(map[string]any)
		sc, _ := sm["cards"].([]any)
		info.Cards += len(sc)
	}
	if _, ok := m["card"]; ok { // a panel view's one card
		info.Cards++
	}
	return info
}

// dashboardWritable refuses dashboards defined in configuration.yaml, which Home Assistant cannot save.
func dashboardWritable(dash homeassistant.Dashboard, field string) error {
	if dash.Mode != "yaml" {
		return nil
	}
	return &toolkit.Error{Code: "not_editable", Field: field,
		Message: "the dashboard " + dash.URLPath + " is defined in YAML (" + dash.Filename + "), which Home Assistant's dashboard API cannot change",
		Hint:    "edit " + cmp.Or(dash.Filename, "its file") + " with ha_read_config / ha_write_config"}
}

// editableDashboard finds a dashboard a save or delete may change and reads the config it replaces.
func editableDashboard(ctx context.Context, d Deps, urlPath string) (homeassistant.Dashboard, json.RawMessage, error) {
	dash, err := findDashboard(ctx, d, urlPath)
	if err != nil {
		return dash, nil, err
	}
	if err := dashboardWritable(dash, "url_path"); err != nil {
		return dash, nil, err
	}
	before, err := dashboardConfig(ctx, d, urlPath)
	return dash, before, err
}

func saveDashboard(ctx context.Context, d Deps, c *toolkit.Call, a dashboardArgs) (dashboardResult, error) {
	dash, before, err := editableDashboard(ctx, d, a.URLPath)
	if err != nil {
		return dashboardResult{}, err
	}
	cfg := map[string]any(a.Config)
	if a.View != "" {
		if cfg, err = withView(before, a.View, a.Config); err != nil {
			return dashboardResult{}, err
		}
	}
	k, err := d.keep(ctx, c, KindDashboard, a.URLPath, dash.Title, confighistory.Updated, dashboardVersion(dash, before))
	if err != nil {
		return dashboardResult{}, err
	}
	if err := d.HA.SaveDashboardConfig(ctx, a.URLPath, cfg); err != nil {
		k.undo(ctx)
		return dashboardResult{}, dashboardWriteError(err)
	}
	out := dashboardResult{Action: a.Action, URLPath: a.URLPath, Title: dash.Title, Saved: true, Version: k.version()}
	views, _ := cfg["views"].([]any)
	for i, v := range views {
		out.Views = append(out.Views, summarizeView(i, v))
	}
	return out, nil
}

// withView is the stored config with one view replaced, or appended for "new".
func withView(stored json.RawMessage, sel string, view map[string]any) (map[string]any, error) {
	cfg := map[string]any{}
	if stored != nil {
		if err := json.Unmarshal(stored, &cfg); err != nil {
			return nil, toolkit.InvalidArg("view", "cannot be used: the saved config is not an object with views; save the whole config instead", dashboardExample)
		}
	}
	views, _ := cfg["views"].([]any)
	if _, strategy := cfg["strategy"]; strategy && views == nil {
		return nil, toolkit.InvalidArg("view", "cannot be used: this dashboard is generated by a strategy and has no views; save a whole config with views to take it over", dashboardExample)
	}
	if strings.EqualFold(strings.TrimSpace(sel), "new") {
		cfg["views"] = append(views, view)
		return cfg, nil
	}
	i, err := pickView(views, sel)
	if err != nil {
		return nil, err
	}
	views = slices.Clone(views)
	views[i] = view
	cfg["views"] = views
	return cfg, nil
}

func createDashboard(ctx context.Context, d Deps, c *toolkit.Call, a dashboardArgs) (dashboardResult, error) {
	show := !a.Hidden
	nd := homeassistant.NewDashboard{URLPath: a.URLPath, Title: a.Title, Icon: a.Icon, ShowInSidebar: &show}
	k, err := d.keep(ctx, c, KindDashboard, a.URLPath, a.Title, confighistory.Created, nil)
	if err != nil {
		return dashboardResult{}, err
	}
	dash, err := d.HA.CreateDashboard(ctx, nd)
	if err != nil {
		k.undo(ctx)
		return dashboardResult{}, dashboardWriteError(err)
	}
	out := dashboardResult{Action: a.Action, URLPath: dash.URLPath, Title: dash.Title, Mode: dash.Mode, Created: true, Version: k.version()}
	if a.Config != nil {
		if err := d.HA.SaveDashboardConfig(ctx, dash.URLPath, a.Config); err != nil {
			return dashboardResult{}, haWSError(err, "dashboards", true, "the dashboard was created empty: save the config again with action save")
		}
		out.Saved = true
	}
	return out, nil
}

func deleteDashboard(ctx context.Context, d Deps, c *toolkit.Call, a dashboardArgs) (dashboardResult, error) {
	dash, before, err := editableDashboard(ctx, d, a.URLPath)
	if err != nil {
		return dashboardResult{}, err
	}
	k, err := d.keep(ctx, c, KindDashboard, a.URLPath, dash.Title, confighistory.Deleted, dashboardVersion(dash, before))
	if err != nil {
		return dashboardResult{}, err
	}
	out := dashboardResult{Action: a.Action, URLPath: a.URLPath, Title: dash.Title, Deleted: true}
	if dash.ID == "" {
		// The default dashboard without an entry cannot go: clearing its config makes Home
		// Assistant generate it again.
		err = d.HA.DeleteDashboardConfig(ctx, a.URLPath)
		out.Note = "the default dashboard stays, generated from your entities again"
	} else {
		err = d.HA.DeleteDashboard(ctx, dash.ID)
	}
	if err != nil {
		k.undo(ctx)
		return dashboardResult{}, dashboardWriteError(err)
	}
	out.Version = k.version()
	return out, nil
}

// dashboardWriteError words Home Assistant's refusals for the model: its schema messages name
// what to fix; "Not supported" is a YAML dashboard.
func dashboardWriteError(err error) error {
	var api *homeassistant.APIError
	if errors.As(err, &api) {
		switch {
		case api.Code == "invalid_format":
			msg, _, _ := strings.Cut(api.Message, ". Got ")
			return toolkit.InvalidArg("url_path", "Home Assistant refused it: "+msg+"; nothing was changed", `"dashboard-garden"`)
		case api.Code == "error" && api.Message == "Not supported":
			return &toolkit.Error{Code: "not_editable", Message: "Home Assistant cannot save this dashboard: it is defined in YAML", Hint: "edit its file with ha_write_config"}
		case homeassistant.IsUnknownDashboard(err):
			return toolkit.NotFound("no such dashboard: "+api.Message, "action list shows the dashboards")
		}
	}
	return haWSError(err, "dashboards", false, "")
}

// dashboardVersion is what the history keeps of a dashboard: its entry (title, icon, sidebar,
// admin) and its config (null when none is saved).
func dashboardVersion(dash homeassistant.Dashboard, cfg json.RawMessage) map[string]any {
	v := map[string]any{"config": cfg}
	if cfg == nil {
		v["config"] = nil
	}
	if dash.ID != "" {
		v["dashboard"] = map[string]any{"title": dash.Title, "icon": dash.Icon, "require_admin": dash.RequireAdmin, "show_in_sidebar": dash.ShowInSidebar}
	} else {
		v["dashboard"] = nil
	}
	return v
}

// dashboardConfirm: deleting a dashboard is confirmed; a save that overwrites a saved config is a
// change of its own; and cards whose actions can unlock, disarm or open count what they do, because
// a button labelled "Lights" may run anything and the user taps it trusting the label.
func dashboardConfirm(d Deps) *toolkit.Confirm[dashboardArgs] {
	return &toolkit.Confirm[dashboardArgs]{
		When: "delete (`delete`); save over a saved config (`change`); save or create with cards whose tap, hold or double-tap action does something in the policy table",
		Check: func(ctx context.Context, c *toolkit.Call, a dashboardArgs) (toolkit.Ask, error) {
			url := cmp.Or(strings.TrimSpace(a.URLPath), homeassistant.DefaultDashboard)
			switch a.Action {
			case "delete":
				return plain(sensitive.Delete, "Delete the dashboard "+url+"? (hamcp keeps its configuration: ha_config_history can restore it)"), nil
			case "save", "create":
			default:
				return toolkit.Ask{}, nil
			}
			w := newWalk(d)
			w.cardActions(ctx, a.Config)
			var always []sensitive.Class
			what := "Create the dashboard " + url
			if a.Action == "save" {
				what = "Save the dashboard " + url
				raw, err := d.HA.DashboardConfig(ctx, url)
				if err == nil && raw != nil {
					sum := sha256.Sum256(raw)
					w.fact("dashboard", url, hex.EncodeToString(sum[:]))
					always = append(always, sensitive.Change)
					what = "Overwrite the dashboard " + url
				}
			}
			return w.ask(what, always...)
		},
	}
}

// cardAction is one action a dashboard card runs when tapped: a service call, or a toggle of an
// entity (which the frontend turns into that entity's own on/off service: unlock for a lock).
type cardAction struct {
	Service string
	Target  sensitive.Target
	Data    map[string]any
}

// maxCardDepth bounds nesting (stacks in stacks) so a hostile config cannot exhaust the stack.
const maxCardDepth = 64

// cardActions lists the actions in a dashboard config: every *_action key (tap_action,
// hold_action, double_tap_action, icon_tap_action, …) of a card, row, element or chip whose action
// is perform-action (call-service before 2024.8) or toggle.
func cardActions(v any) []cardAction {
	var out []cardAction
	collectActions(v, "", 0, &out)
	return out
}

func collectActions(v any, entity string, depth int, out *[]cardAction) {
	if depth > maxCardDepth {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		if e, ok := x["entity"].(string); ok {
			entity = e
			defaultRun(e, out)
		}
		for _, k := range slices.Sorted(maps.Keys(x)) { // in order, so the question reads the same each time
			val := x[k]
			if act, ok := val.(map[string]any); ok && strings.HasSuffix(k, "_action") {
				if a, ok := actionOf(act, entity); ok {
					*out = append(*out, a)
				}
			}
			if rows, ok := val.([]any); ok && k == "entities" {
				for _, r := range rows { // a bare entity id is a row with its own toggle, Run or Press
					if e, ok := r.(string); ok {
						defaultRun(e, out)
					}
				}
			}
			collectActions(val, entity, depth+1, out)
		}
	case []any:
		for _, e := range x {
			collectActions(e, entity, depth+1, out)
		}
	}
}

// defaultRuns are the domains whose cards and rows run the entity without an action written: the
// frontend's DOMAINS_TOGGLE (a button card's default tap, a tile's icon, a row's switch) and the Run,
// Activate and Press of scripts, scenes and buttons.
var defaultRuns = []string{"fan", "input_boolean", "light", "switch", "group", "automation", "humidifier", "valve", "script", "scene", "button", "input_button"}

// defaultRun adds the toggle a card or row of entity runs by default, whatever its label says.
func defaultRun(entity string, out *[]cardAction) {
	domain, _, ok := strings.Cut(strings.ToLower(strings.TrimSpace(entity)), ".")
	if !ok || !slices.Contains(defaultRuns, domain) {
		return
	}
	a := cardAction{Service: "homeassistant.toggle"}
	a.Target.Add(map[string]any{"entity_id": entity})
	*out = append(*out, a)
}

func actionOf(act map[string]any, entity string) (cardAction, bool) {
	switch stringOf(act["action"]) {
	case "perform-action", "call-service":
		svc := cmp.Or(stringOf(act["perform_action"]), stringOf(act["service"]))
		if svc == "" {
			return cardAction{}, false
		}
		a := cardAction{Service: svc}
		data, _ := act["data"].(map[string]any)
		if data == nil {
			data, _ = act["service_data"].(map[string]any)
		}
		a.Data = data
		switch t := act["target"].(type) {
		case map[string]any:
			a.Target.Add(t)
		case nil:
		default:
			a.Target.Templated = true
		}
		a.Target.Add(data)
		return a, true
	case "toggle":
		e := cmp.Or(stringOf(act["entity"]), entity)
		if e == "" {
			return cardAction{}, false
		}
		a := cardAction{Service: "homeassistant.toggle"}
		a.Target.Add(map[string]any{"entity_id": e})
		return a, true
	}
	return cardAction{}, false
}

// cardActions adds what the config's card actions can do.
func (w *walk) cardActions(ctx context.Context, cfg any) {
	if cfg == nil {
		return
	}
	if m, ok := cfg.(map[string]any); ok && m == nil {
		return
	}
	for _, a := range cardActions(cfg) {
		w.service(ctx, a.Service, a.Target, a.Data)
	}
}

// dashboardVersions is how ha_config_history restores a dashboard: its entry is created again when
// it is gone, then its config saved (or cleared); a version from before it existed deletes it.
func dashboardVersions() versionKind {
	return versionKind{kind: KindDashboard,
		read: func(ctx context.Context, d Deps, id string) (json.RawMessage, string, error) {
			all, err := d.HA.Dashboards(ctx)
			if err != nil {
				return nil, "", err
			}
			i := slices.IndexFunc(all, func(x homeassistant.Dashboard) bool { return x.URLPath == id })
			dash := homeassistant.Dashboard{URLPath: id, Title: "Overview"}
			switch {
			case i >= 0:
				dash = all[i]
			case id != homeassistant.DefaultDashboard:
				return nil, "", nil
			}
			cfg, err := d.HA.DashboardConfig(ctx, id)
			if err != nil && !homeassistant.IsUnknownDashboard(err) {
				return nil, "", err
			}
			raw, err := json.Marshal(dashboardVersion(dash, cfg))
			return raw, dash.Title, err
		},
		check: func(ctx context.Context, d Deps, w *walk, id string, cfg json.RawMessage) {
			var v struct {
				Config any `json:"config"`
			}
			if json.Unmarshal(cfg, &v) == nil {
				w.cardActions(ctx, v.Config)
			}
		},
		write: restoreDashboard,
	}
}

func restoreDashboard(ctx context.Context, d Deps, id string, cfg json.RawMessage) error {
	all, err := d.HA.Dashboards(ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(all, func(x homeassistant.Dashboard) bool { return x.URLPath == id })
	if cfg == nil {
		if i >= 0 {
			return d.HA.DeleteDashboard(ctx, all[i].ID)
		}
		return nil
	}
	var v struct {
		Dashboard *struct {
			Title         string `json:"title"`
			Icon          string `json:"icon"`
			RequireAdmin  bool   `json:"require_admin"`
			ShowInSidebar bool   `json:"show_in_sidebar"`
		} `json:"dashboard"`
		Config json.RawMessage `json:"config"`
	}
	if err := json.Unmarshal(cfg, &v); err != nil {
		return err
	}
	// Home Assistant serves its built-in default panel at "lovelace" once that entry is gone, so it
	// refuses the url_path; the default dashboard's config then lives at url_path null, where the
	// client's fallback saves it.
	if i < 0 && v.Dashboard != nil && id != homeassistant.DefaultDashboard {
		nd := homeassistant.NewDashboard{URLPath: id, Title: v.Dashboard.Title, Icon: v.Dashboard.Icon,
			RequireAdmin: &v.Dashboard.RequireAdmin, ShowInSidebar: &v.Dashboard.ShowInSidebar, AllowSingleWord: !strings.Contains(id, "-")}
		if _, err := d.HA.CreateDashboard(ctx, nd); err != nil {
			return err
		}
	}
	if isNull(v.Config) {
		err := d.HA.DeleteDashboardConfig(ctx, id)
		if homeassistant.IsNoDashboardConfig(err) {
			return nil
		}
		return err
	}
	return d.HA.SaveDashboardConfig(ctx, id, v.Config)
}

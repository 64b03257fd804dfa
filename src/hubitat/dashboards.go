package hubitat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Easy Dashboards through the routes the hub's dashboard editor uses (upstream,
// mcp-dashboards-lib.groovy):
//
//	GET /dashboard/select               HTML carrying globalDashboardPinToken (_fetchDashboardPinToken)
//	GET /dashboard/all?pinToken=…       every dashboard's config, [] without the token (toolListDashboards)
//	GET /dashboard/create?name=…&…      create, version=2.0 (toolCreateDashboard)
//	GET /dashboard/update?id=…&…        replace the whole config (toolUpdateDashboard)
//	GET /dashboard/delete?id=…          delete; its success flag is unreliable, so the list is read after (toolDeleteDashboard)
//
// Legacy "Hubitat® Dashboard" dashboards (version 1.x) are listed but not changed here: their
// layout sits behind each dashboard's own OAuth token.

// ErrDashboardNotFound is a dashboard id the hub does not list.
var ErrDashboardNotFound = errors.New("dashboard not found")

// DashboardConfig is what an Easy Dashboard's editor sets. The dashboard and HSM PINs are not
// part of it: they are secrets hamcp keeps as they are.
type DashboardConfig struct {
	Name                string   `json:"name"`
	DeviceIDs           []string `json:"deviceIds"`
	ShowModeTile        bool     `json:"showModeTile"`
	ShowClockTile       bool     `json:"showClockTile"`
	ShowCalendarTile    bool     `json:"showCalendarTile"`
	ShowHSMTile         bool     `json:"showHSMTile"`
	ShowEdit            bool     `json:"showEdit"`
	ShowNavigation      bool     `json:"showNavigation"`
	ShowTutorial        bool     `json:"showTutorial"`
	NavigationSelection []string `json:"navigationSelection,omitempty"`
	Theme               string   `json:"theme,omitempty"` // legacy, light, dark, auto
}

// Dashboard is one dashboard as the hub lists it.
type Dashboard struct {
	ID   string `json:"id"`
	Kind string `json:"kind"` // easy or legacy
	DashboardConfig
	// DashboardPinSet and HSMPinSet say whether a PIN is set, never what it is.
	DashboardPinSet bool `json:"dashboardPinSet,omitempty"`
	HSMPinSet       bool `json:"hsmPinSet,omitempty"`

	dashboardPin, hsmPin string
}

var pinTokenRE = regexp.MustCompile(`globalDashboardPinToken\s*=\s*['"]([^'"]+)['"]`)

// ParseDashboards reads /dashboard/all: a list of dashboard configs (ids as installedAppId or id,
// numbers or strings; booleans and the navigation list as JSON or text).
func ParseDashboards(b []byte) ([]Dashboard, error) {
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("hubitat /dashboard/all: expected a JSON list: %w", err)
	}
	out := make([]Dashboard, 0, len(raw))
	for _, m := range raw {
		if d, ok := parseDashboard(m); ok {
			out = append(out, d)
		}
	}
	return out, nil
}

func parseDashboard(m map[string]json.RawMessage) (Dashboard, bool) {
	id := idString(m["installedAppId"])
	if id == "" {
		id = idString(m["id"])
	}
	if !allDigits(id) {
		return Dashboard{}, false
	}
	str := func(k string) string {
		var s string
		if json.Unmarshal(m[k], &s) == nil {
			return s
		}
		return strings.Trim(strings.TrimSpace(string(m[k])), `"`)
	}
	flag := func(k string) bool { return strings.EqualFold(str(k), "true") }
	pinOf := func(k string) string {
		if p := str(k); p != "null" && p != "None" {
			return p
		}
		return ""
	}
	d := Dashboard{ID: id, Kind: "easy", DashboardConfig: DashboardConfig{Name: str("name"), DeviceIDs: idList(m["deviceIds"]),
		ShowModeTile: flag("showModeTile"), ShowClockTile: flag("showClockTile"), ShowCalendarTile: flag("showCalendarTile"),
		ShowHSMTile: flag("showHSMTile"), ShowEdit: flag("showEdit"), ShowNavigation: flag("showNavigation"), ShowTutorial: flag("showTutorial"),
		NavigationSelection: idList(m["navigationSelection"]), Theme: str("theme")},
		dashboardPin: pinOf("dashboardPin"), hsmPin: pinOf("hsmPin")}
	if strings.HasPrefix(str("version"), "1") {
		d.Kind = "legacy"
	}
	d.DashboardPinSet, d.HSMPinSet = d.dashboardPin != "", d.hsmPin != ""
	return d, true
}

// idList reads a list the hub sends as a JSON array, a JSON string holding one, or a CSV.
func idList(raw json.RawMessage) []string {
	var arr []json.RawMessage
	if json.Unmarshal(raw, &arr) != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil
		}
		s = strings.TrimSpace(s)
		if json.Unmarshal([]byte(s), &arr) != nil {
			var out []string
			for _, p := range strings.Split(strings.Trim(s, "[]"), ",") {
				if p = strings.TrimSpace(p); p != "" && p != "null" {
					out = append(out, p)
				}
			}
			return out
		}
	}
	var out []string
	for _, a := range arr {
		if s := idString(a); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Dashboards lists every dashboard: /dashboard/all with the page token scraped from
// /dashboard/select.
func (c *Client) Dashboards(ctx context.Context) ([]Dashboard, error) {
	sel, err := c.Admin(ctx, http.MethodGet, "/dashboard/select", nil)
	if err != nil {
		return nil, err
	}
	m := pinTokenRE.FindStringSubmatch(sel.Text)
	if m == nil {
		return nil, errors.New("hubitat /dashboard/select: no globalDashboardPinToken on the page (firmware may have changed it)")
	}
	r, err := c.Admin(ctx, http.MethodGet, "/dashboard/all?pinToken="+url.QueryEscape(m[1]), nil)
	if err != nil {
		return nil, err
	}
	return ParseDashboards(r.Body)
}

// Dashboard is one dashboard by id.
func (c *Client) Dashboard(ctx context.Context, id string) (Dashboard, error) {
	if !allDigits(id) {
		return Dashboard{}, fmt.Errorf("dashboardId %q must be the number from the dashboard list", clean(id))
	}
	all, err := c.Dashboards(ctx)
	if err != nil {
		return Dashboard{}, err
	}
	i := slices.IndexFunc(all, func(d Dashboard) bool { return d.ID == id })
	if i < 0 {
		return Dashboard{}, fmt.Errorf("hubitat dashboard %s: %w", id, ErrDashboardNotFound)
	}
	return all[i], nil
}

// CheckDashboard says what is wrong with a config before it is sent.
func CheckDashboard(cfg DashboardConfig) error {
	switch {
	case strings.TrimSpace(cfg.Name) == "":
		return errors.New("name is required")
	case len(cfg.DeviceIDs) == 0:
		return errors.New("deviceIds needs at least one device: an Easy Dashboard shows devices")
	}
	for _, id := range cfg.DeviceIDs {
		if !allDigits(id) {
			return fmt.Errorf("deviceIds: %q is not a device id", clean(id))
		}
	}
	for _, n := range cfg.NavigationSelection {
		if !allDigits(n) {
			return fmt.Errorf("navigationSelection: %q is not a dashboard id", clean(n))
		}
	}
	switch cfg.Theme {
	case "", "legacy", "light", "dark", "auto":
		return nil
	}
	return fmt.Errorf("theme %q must be legacy, light, dark or auto", clean(cfg.Theme))
}

// dashboardQuery is the editor's query (upstream _buildDashboardConfigQuery).
func dashboardQuery(cfg DashboardConfig, dashboardPin, hsmPin string) url.Values {
	b := strconv.FormatBool
	theme := cfg.Theme
	if theme == "" {
		theme = "legacy"
	}
	return url.Values{"name": {strings.TrimSpace(cfg.Name)}, "deviceIds": {strings.Join(cfg.DeviceIDs, ",")},
		"showModeTile": {b(cfg.ShowModeTile)}, "showClockTile": {b(cfg.ShowClockTile)}, "showCalendarTile": {b(cfg.ShowCalendarTile)},
		"showHSMTile": {b(cfg.ShowHSMTile)}, "showEdit": {b(cfg.ShowEdit)}, "showNavigation": {b(cfg.ShowNavigation)},
		"showTutorial": {b(cfg.ShowTutorial)}, "navigationSelection": {strings.Join(cfg.NavigationSelection, ",")},
		"dashboardPin": {dashboardPin}, "hsmPin": {hsmPin}, "theme": {theme}}
}

// dashboardWrite reads a create or update reply: {"success":…,"message":…} or the saved
// dashboard (with its installedAppId).
func dashboardWrite(op string, r AdminReply) (string, error) {
	var m map[string]json.RawMessage
	if r.JSON == nil || json.Unmarshal(r.JSON, &m) != nil {
		return "", fmt.Errorf("hubitat dashboard %s: unexpected reply %q", op, clean(r.Text))
	}
	id := idString(m["installedAppId"])
	if id == "" {
		id = idString(m["id"])
	}
	ok := id != ""
	if s, has := m["success"]; has {
		ok = strings.TrimSpace(string(s)) == "true"
	}
	if !ok {
		var msg struct {
			Message string `json:"message"`
			Error   string `json:"error"`
		}
		_ = json.Unmarshal(r.JSON, &msg)
		return "", fmt.Errorf("hubitat refused the dashboard %s: %s", op, clean(msg.Message+msg.Error))
	}
	return id, nil
}

// CreateDashboard creates an Easy Dashboard and returns its id.
func (c *Client) CreateDashboard(ctx context.Context, cfg DashboardConfig) (string, error) {
	if err := CheckDashboard(cfg); err != nil {
		return "", err
	}
	q := dashboardQuery(cfg, "", "")
	q.Set("version", "2.0")
	r, err := c.Admin(ctx, http.MethodGet, "/dashboard/create?"+q.Encode(), nil)
	if err != nil {
		return "", err
	}
	id, err := dashboardWrite("create", r)
	if err == nil && id == "" {
		err = fmt.Errorf("%w: the hub said the dashboard was created but gave no id", ErrNotConfirmed)
	}
	return id, err
}

// UpdateDashboard replaces an Easy Dashboard's config, keeping its PINs, and returns the config
// it had before.
func (c *Client) UpdateDashboard(ctx context.Context, id string, cfg DashboardConfig) (Dashboard, error) {
	if err := CheckDashboard(cfg); err != nil {
		return Dashboard{}, err
	}
	cur, err := c.Dashboard(ctx, id)
	if err != nil {
		return Dashboard{}, err
	}
	if cur.Kind != "easy" {
		return Dashboard{}, fmt.Errorf("dashboard %s is a legacy Hubitat® Dashboard: change it in the hub's web UI (%w)", id, ErrUnsupported)
	}
	q := dashboardQuery(cfg, cur.dashboardPin, cur.hsmPin)
	q.Set("id", id)
	r, err := c.Admin(ctx, http.MethodGet, "/dashboard/update?"+q.Encode(), nil)
	if err != nil {
		return cur, err
	}
	_, err = dashboardWrite("update", r)
	return cur, err
}

// DeleteDashboard deletes a dashboard and reads the list to be sure it is gone.
func (c *Client) DeleteDashboard(ctx context.Context, id string) (Dashboard, error) {
	cur, err := c.Dashboard(ctx, id)
	if err != nil {
		return Dashboard{}, err
	}
	if cur.Kind != "easy" {
		return cur, fmt.Errorf("dashboard %s is a legacy Hubitat® Dashboard: delete it in the hub's web UI (%w)", id, ErrUnsupported)
	}
	if _, err := c.Admin(ctx, http.MethodGet, "/dashboard/delete?id="+id, nil); err != nil {
		return cur, err
	}
	if _, err := c.Dashboard(ctx, id); !errors.Is(err, ErrDashboardNotFound) {
		if err == nil {
			return cur, fmt.Errorf("hubitat still lists dashboard %s after deleting it: nothing was deleted", id)
		}
		return cur, fmt.Errorf("%w: reading the dashboards back failed (%v)", ErrNotConfirmed, err)
	}
	return cur, nil
}

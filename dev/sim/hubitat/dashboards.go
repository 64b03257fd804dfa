package hubitat

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Dashboards as the hub's dashboard editor reads and writes them: /dashboard/select (the page
// that carries globalDashboardPinToken), /dashboard/all (every config, [] without the token),
// /dashboard/create, /dashboard/update and /dashboard/delete, all GETs with the config in the
// query (upstream mcp-dashboards-lib.groovy). Each dashboard is also an installed app, a child of
// the Easy Dashboard Parent or of the legacy Hubitat® Dashboard app.

type dashboard struct {
	version              string
	devices              []int
	flags                map[string]bool
	nav                  []string
	theme                string
	dashboardPin, hsmPin string
}

var dashboardFlags = []string{"showModeTile", "showClockTile", "showCalendarTile", "showHSMTile", "showEdit", "showNavigation", "showTutorial"}

func (h *Hub) dashboardRoutes(gate func(string, http.HandlerFunc)) {
	gate("GET /dashboard/select", h.dashboardSelect)
	gate("GET /dashboard/all", h.dashboardAll)
	gate("GET /dashboard/create", func(w http.ResponseWriter, r *http.Request) { h.dashboardWrite(w, r, true) })
	gate("GET /dashboard/update", func(w http.ResponseWriter, r *http.Request) { h.dashboardWrite(w, r, false) })
	gate("GET /dashboard/delete", h.dashboardDelete)
}

func (h *Hub) dashboardSelect(w http.ResponseWriter, _ *http.Request) {
	h.mu.Lock()
	tok := h.appsLocked().pinToken
	h.mu.Unlock()
	w.Header().Set("Content-Type", "text/html")
	fmt.Fprintf(w, "<html><head><script>\nvar globalDashboardPinToken = '%s';\n</script></head><body><div id=\"app\"></div></body></html>", tok)
}

func (x *installedApp) dashboardJSON() map[string]any {
	d := x.dash
	out := map[string]any{"installedAppId": x.id, "name": x.label, "version": d.version, "deviceIds": d.devices,
		"navigationSelection": d.nav, "theme": d.theme, "dashboardPin": d.dashboardPin, "hsmPin": d.hsmPin}
	if d.hsmPin == "" {
		out["hsmPin"] = "null" // the hub's own spelling of an unset HSM PIN (upstream _dashboardConfigFromApp)
	}
	for _, f := range dashboardFlags {
		out[f] = d.flags[f]
	}
	return out
}

// dashboardAll answers [] without the page's token, as the hub does.
func (h *Hub) dashboardAll(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	apps := h.appsLocked()
	out := []map[string]any{}
	if r.URL.Query().Get("pinToken") == apps.pinToken {
		for _, x := range apps.list {
			if x.dash != nil {
				out = append(out, x.dashboardJSON())
			}
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// dashboardWrite is create and update: the whole config from the query. The failure bodies
// are assumed (upstream reads {"success":false,"message":…}).
func (h *Hub) dashboardWrite(w http.ResponseWriter, r *http.Request, create bool) {
	q := r.URL.Query()
	fail := func(msg string) { writeJSON(w, http.StatusOK, map[string]any{"success": false, "message": msg}) }
	h.mu.Lock()
	defer h.mu.Unlock()
	apps := h.appsLocked()
	name := strings.TrimSpace(q.Get("name"))
	if name == "" {
		fail("Dashboard name is required")
		return
	}
	var devices []int
	for _, s := range strings.Split(q.Get("deviceIds"), ",") {
		id, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || h.byID[id] == nil {
			fail("Select at least one device")
			return
		}
		devices = append(devices, id)
	}
	d := &dashboard{version: "2.0", devices: devices, flags: map[string]bool{}, theme: q.Get("theme"),
		dashboardPin: q.Get("dashboardPin"), hsmPin: q.Get("hsmPin")}
	for _, f := range dashboardFlags {
		d.flags[f] = q.Get(f) == "true"
	}
	if n := q.Get("navigationSelection"); n != "" {
		d.nav = strings.Split(n, ",")
	}
	var x *installedApp
	if create {
		apps.nextID++
		x = &installedApp{id: apps.nextID, typ: "Easy Dashboard", ns: "hubitat", parent: 70}
		apps.list = append(apps.list, x)
	} else if x = apps.find(q.Get("id")); x == nil || x.dash == nil || !strings.HasPrefix(x.dash.version, "2") {
		fail("Dashboard not found")
		return
	}
	x.label, x.dash = name, d
	out := x.dashboardJSON()
	out["success"] = true
	writeJSON(w, http.StatusOK, out)
}

func (h *Hub) dashboardDelete(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	apps := h.appsLocked()
	x := apps.find(r.URL.Query().Get("id"))
	if x == nil || x.dash == nil {
		writeJSON(w, http.StatusOK, map[string]any{"success": false, "message": "Dashboard not found"})
		return
	}
	apps.list = slices.DeleteFunc(apps.list, func(a *installedApp) bool { return a == x })
	writeJSON(w, http.StatusOK, map[string]any{"success": true})
}

// DashboardState is a dashboard's config as the hub keeps it, for tests (ok false: no such dashboard).
func (h *Hub) DashboardState(id int) (name string, devices []int, pins [2]string, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	x := h.appsLocked().find(strconv.Itoa(id))
	if x == nil || x.dash == nil {
		return "", nil, pins, false
	}
	return x.label, slices.Clone(x.dash.devices), [2]string{x.dash.dashboardPin, x.dash.hsmPin}, true
}

package hubitat

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Installed app instances as the hub's own UI reads and drives them: the /hub2/appsList tree, an
// app's configure page (/installedapp/configure/json/<id>), its thin record
// (/installedapp/json/<id>), the enable/disable switch (/installedapp/disable) and page buttons
// (/installedapp/btn). The shapes are the ones upstream (kingpanther13/Hubitat-local-MCP-server)
// parses: appsList in mcp-code-management-lib toolListInstalledApps, configure/json in
// toolGetAppConfig, disable and its read-back in mcp-native-rules-lib toolSetAppDisabled, btn in
// hubitat-mcp-server _rmClickAppButton.

// installedApp is one app instance; rules are children of their engine's parent app.
type installedApp struct {
	id       int
	label    string
	typ      string // the app type's name: "Rule Machine", "Rule-5.1", "Maker API"
	ns       string
	parent   int // 0: top level
	user     bool
	hidden   bool
	disabled bool
	paused   bool
	// actions are what the rule's Run Actions button does: device commands.
	actions []ruleAction
	// passwordSetting is a password input's stored value (an integration's API key).
	passwordSetting string
	dash            *dashboard    // an Easy or legacy dashboard's config (dashboards.go)
	wizard          *hubVarWizard // the Hub Variables app's create/delete wizard (hubvars.go)
	runs            int
	clicks          []string
	// privateBool is a Rule Machine rule's private boolean: true after Start (upstream,
	// rm_native_test_matrix.md §7), changed by setRuleBooleanTrue/False.
	privateBool bool
	// endpointToken is the access token of a rule with a Local End Point trigger; "" without one.
	endpointToken string
	// endpointValue is the last %value% its endpoint was called with.
	endpointValue string
}

// endpointRuleID is the demo's rule with a Local End Point trigger (hubitat_rm_endpoint).
const endpointRuleID = 14

type ruleAction struct {
	device  int
	command string
}

type installedApps struct {
	list      []*installedApp
	pinToken  string // the dashboard pages' globalDashboardPinToken
	nextID    int
	locEvents []eventRecord // location events for /logs/eventsJson (hubvars.go)
}

func demoInstalledApps() *installedApps {
	rule := func(id, parent int, label, typ string, acts ...ruleAction) *installedApp {
		return &installedApp{id: id, parent: parent, label: label, typ: typ, ns: "hubitat", actions: acts}
	}
	porch := rule(13, 1, "Porch Light at Sunset", "Rule-5.0", ruleAction{3, "on"})
	porch.paused = true
	// A rule whose only trigger is a Local End Point, as a user makes one for hamcp.
	endpoint := rule(endpointRuleID, 1, "hamcp Endpoint", "Rule-5.1")
	endpoint.actions, endpoint.endpointToken = []ruleAction{}, uuid()
	apps := &installedApps{list: []*installedApp{
		{id: 1, label: "Rule Machine", typ: "Rule Machine", ns: "hubitat"},
		rule(11, 1, "Night Lights", "Rule-5.1", ruleAction{1, "off"}, ruleAction{2, "off"}),
		rule(12, 1, "Lock Doors at Bedtime", "Rule-5.1", ruleAction{8, "lock"}, ruleAction{9, "lock"}),
		porch,
		endpoint,
		{id: 2, label: "Basic Rules", typ: "Basic Rules", ns: "hubitat"},
		rule(21, 2, "Hallway Motion Light", "Basic Rule-1.0", ruleAction{7, "on"}),
		{id: 3, label: "Room Lighting", typ: "Room Lighting", ns: "hubitat"},
		rule(31, 3, "Kitchen", "Room Lights", ruleAction{2, "on"}),
		{id: 4, label: "Simple Automation Rules", typ: "Simple Automation Rules", ns: "hubitat"},
		rule(41, 4, "Coffee Off at Noon", "Simple Automation Rule", ruleAction{4, "off"}),
		{id: 7, label: "Maker API", typ: "Maker API", ns: "hubitat"},
		{id: 9, label: "Hubitat® Safety Monitor", typ: "HSM", ns: "hubitat"},
		{id: 50, label: "Ecobee Integration", typ: "Ecobee Integration", ns: "hubitat", passwordSetting: "ecobee-api-key-123"},
		{id: 60, label: "Leak Alert", typ: "Leak Alert", ns: "demo", user: true},
		{id: 61, label: "Leak Alert Helper", typ: "Leak Alert", ns: "demo", user: true, parent: 60, hidden: true},
		{id: 70, label: "Easy Dashboards", typ: "Easy Dashboard Parent", ns: "hubitat"},
		{id: 71, label: "Main", typ: "Easy Dashboard", ns: "hubitat", parent: 70, dash: &dashboard{version: "2.0", devices: []int{1, 2, 8},
			flags: map[string]bool{"showModeTile": true, "showHSMTile": true}, theme: "dark", dashboardPin: "2468", hsmPin: "1357"}},
		{id: hubVarsAppID, label: "Hub Variables", typ: "Hub Variables", ns: "hubitat", wizard: &hubVarWizard{}},
		{id: 80, label: "Hubitat® Dashboard", typ: "Hubitat® Dashboard", ns: "hubitat"},
		{id: 81, label: "Old Tablet", typ: "Dashboard", ns: "hubitat", parent: 80, dash: &dashboard{version: "1.0", devices: []int{3}}},
	}, pinToken: uuid(), nextID: 100}
	for _, x := range apps.list {
		x.privateBool = x.isRule() && strings.HasPrefix(x.typ, "Rule-")
	}
	return apps
}

// appsLocked is the hub's app list, seeded with the demo house's apps the first time.
func (h *Hub) appsLocked() *installedApps {
	if h.inst == nil {
		h.inst = demoInstalledApps()
		// The Maker API instance hamcp talks through is one of the hub's apps, under its own id.
		if id, err := strconv.Atoi(h.appID); err == nil {
			h.inst.find("7").id = id
		}
	}
	return h.inst
}

func (a *installedApps) find(raw string) *installedApp {
	id, err := strconv.Atoi(raw)
	if err != nil {
		return nil
	}
	i := slices.IndexFunc(a.list, func(x *installedApp) bool { return x.id == id })
	if i < 0 {
		return nil
	}
	return a.list[i]
}

// listName is the name appsList shows: the label with the run-state decoration Rule Machine adds
// (the hub renders it as HTML; upstream strips the HTML and reads the suffix).
func (x *installedApp) listName() string {
	if x.paused {
		return x.label + ` <span style="color:red">(Paused)</span>`
	}
	return x.label
}

func (x *installedApp) isRule() bool { return x.actions != nil }

func (h *Hub) installedAppRoutes(mux *http.ServeMux) {
	gate := func(pattern string, fn http.HandlerFunc) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if h.authed(w, r) {
				fn(w, r)
			}
		})
	}
	gate("GET /hub2/appsList", h.appsList)
	gate("GET /installedapp/json/{id}", h.appRecord)
	gate("GET /installedapp/configure/json/{id}", h.appConfigure)
	gate("GET /installedapp/configure/json/{id}/{page}", h.appConfigure)
	gate("GET /installedapp/statusJson/{id}", h.appStatus)
	gate("POST /installedapp/disable", h.appDisable)
	gate("POST /installedapp/btn", h.appButton)
	gate("POST /installedapp/update/json", h.appUpdate)
	gate("GET /logs/eventsJson", h.locationEvents)
	h.dashboardRoutes(gate)
}

// appsList is /hub2/appsList: {"apps":[{"data":{…},"children":[…]}]}.
func (h *Hub) appsList(w http.ResponseWriter, _ *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	apps := h.appsLocked()
	var node func(x *installedApp) map[string]any
	node = func(x *installedApp) map[string]any {
		children := []map[string]any{}
		for _, c := range apps.list {
			if c.parent == x.id {
				children = append(children, node(c))
			}
		}
		return map[string]any{"key": "app-" + strconv.Itoa(x.id), "data": map[string]any{"id": x.id, "name": x.listName(), "type": x.typ,
			"disabled": x.disabled, "user": x.user, "hidden": x.hidden}, "children": children}
	}
	top := []map[string]any{}
	for _, x := range apps.list {
		if x.parent == 0 {
			top = append(top, node(x))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"apps": top})
}

// appNotFound is the hub's answer for an app id it does not have (upstream reads 404 and 410 as
// "not found"; the body is the hub's error page).
func appNotFound(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html")
	w.WriteHeader(http.StatusNotFound)
	fmt.Fprint(w, "<html><body><h1>Error 404</h1><p>App not found</p></body></html>")
}

// appRecord is /installedapp/json/<id>: the thin record (no page render).
func (h *Hub) appRecord(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	x := h.appsLocked().find(r.PathValue("id"))
	if x == nil {
		appNotFound(w)
		return
	}
	writeJSON(w, http.StatusOK, h.appObjectLocked(x))
}

func (h *Hub) appObjectLocked(x *installedApp) map[string]any {
	var parent any
	if x.parent != 0 {
		parent = x.parent
	}
	return map[string]any{"id": x.id, "name": x.typ, "label": x.listName(), "trueLabel": x.label, "disabled": x.disabled,
		"parentAppId": parent, "installed": true, "version": 10 + x.runs + len(x.clicks),
		"appType": map[string]any{"name": x.typ, "namespace": x.ns, "author": "Hubitat", "category": "Convenience",
			"system": !x.user, "deprecated": false, "classLocation": "com.hubitat.app." + strings.ReplaceAll(x.typ, " ", "")}}
}

// appConfigure is /installedapp/configure/json/<id>[/<page>]: {app, configPage, settings, childApps}.
func (h *Hub) appConfigure(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	x := h.appsLocked().find(r.PathValue("id"))
	if x == nil {
		appNotFound(w)
		return
	}
	if x.wizard != nil {
		x.wizard.configured = true
	}
	writeJSON(w, http.StatusOK, h.pageLocked(x, r.PathValue("page")))
}

// appStatus is /installedapp/statusJson/<id>, the app's raw state and settings (SKILL.md: {id,
// appState: [{name, value}], appSettings: [...]}; upstream _rmFetchStatusJson). The simulated
// apps keep little state: the Hub Variables wizard's fields are its settings.
func (h *Hub) appStatus(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	x := h.appsLocked().find(r.PathValue("id"))
	if x == nil {
		appNotFound(w)
		return
	}
	state := []map[string]any{{"name": "disabled", "value": x.disabled}}
	settings := []map[string]any{}
	if wz := x.wizard; wz != nil {
		wz.statused = true
		for _, k := range slices.Sorted(maps.Keys(wz.fields)) {
			settings = append(settings, map[string]any{"name": k, "value": wz.fields[k], "multiple": false})
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": x.id, "appState": state, "appSettings": settings, "eventSubscriptions": []any{}, "scheduledJobs": []any{}})
}

// pageLocked renders one of an app's pages ("" is its main page).
func (h *Hub) pageLocked(x *installedApp, page string) map[string]any {
	if page == "" {
		page = "mainPage"
	}
	settings := map[string]any{}
	var sections []map[string]any
	switch {
	case x.wizard != nil && page == "hubVar":
		sections = h.hubVarPageLocked(x.wizard)
	case page != "mainPage":
		// Upstream reads a page that does not render as a configPage without sections.
		return map[string]any{"app": h.appObjectLocked(x), "configPage": map[string]any{"name": page, "error": "Page " + page + " not found"}}
	default:
		sections = h.mainSectionsLocked(x, settings)
	}
	children := []map[string]any{}
	for _, c := range h.appsLocked().list {
		if c.parent == x.id {
			children = append(children, map[string]any{"id": c.id, "label": c.listName(), "name": c.typ})
		}
	}
	return map[string]any{"app": h.appObjectLocked(x),
		"configPage": map[string]any{"name": page, "title": x.label, "install": true, "refreshInterval": 0, "sections": sections},
		"settings":   settings, "childApps": children}
}

func (h *Hub) mainSectionsLocked(x *installedApp, settings map[string]any) []map[string]any {
	switch {
	case x.isRule():
		var lines []string
		for _, a := range x.actions {
			if d := h.byID[a.device]; d != nil {
				lines = append(lines, fmt.Sprintf("%s: %s", a.command, d.label))
			}
		}
		pauseTitle := "Pause"
		if x.paused {
			pauseTitle = "Resume"
		}
		settings["origLabel"] = x.label
		triggers := []map[string]any{}
		if x.endpointToken != "" {
			// Rule Machine shows a Local End Point trigger's URL, token and all, on the rule's page.
			u := h.URL() + "/apps/api/" + strconv.Itoa(x.id) + "/trigger?access_token=" + x.endpointToken
			triggers = append(triggers, map[string]any{"element": "paragraph", "description": "Local End Point<br><a href='" + u + "' target='_blank'>" + u + "</a>"})
		}
		return []map[string]any{
			{"title": "<b>Select Trigger Events</b>", "body": triggers, "input": []map[string]any{}},
			{"title": "<b>Define Actions</b>", "body": []map[string]any{{"element": "paragraph", "description": "<div>" + strings.Join(lines, "<br>") + "</div>"}},
				"input": []map[string]any{}},
			{"title": "", "body": []map[string]any{}, "input": []map[string]any{
				{"name": "updateRule", "type": "button", "title": "Update Rule"},
				{"name": "runAct", "type": "button", "title": "Run Actions"},
				{"name": "pausRule", "type": "button", "title": pauseTitle},
				{"name": "stopRule", "type": "button", "title": "Stop"},
			}},
		}
	case x.typ == "Maker API":
		// Maker API lists its URLs with the access token in them, and the token alone.
		base := h.URL() + "/apps/api/" + strconv.Itoa(x.id)
		return []map[string]any{{"title": "<b>Local URLs</b>", "input": []map[string]any{}, "body": []map[string]any{
			{"element": "paragraph", "description": "Access Token: " + h.token},
			{"element": "paragraph", "description": "Get All Devices:<br><a href='" + base + "/devices?access_token=" + h.token + "'>" + base + "/devices?access_token=" + h.token + "</a>"},
			{"element": "paragraph", "description": "Send Device Command: " + base + "/devices/[Device ID]/[Command]/[Secondary value]?access_token=" + h.token},
		}}}
	case x.passwordSetting != "":
		settings["apiKey"], settings["pollMinutes"], settings["debugLog"] = x.passwordSetting, "5", false
		return []map[string]any{{"title": "Ecobee account", "body": []map[string]any{},
			"input": []map[string]any{
				{"name": "apiKey", "type": "password", "title": "API key", "defaultValue": x.passwordSetting, "required": true},
				{"name": "pollMinutes", "type": "enum", "title": "Poll every", "options": []string{"1", "5", "15"}, "defaultValue": "5"},
				{"name": "debugLog", "type": "bool", "title": "Debug logging", "defaultValue": false},
			}}}
	}
	return []map[string]any{{"title": "", "body": []map[string]any{{"element": "paragraph", "description": x.label + " has no options."}}, "input": []map[string]any{}}}
}

// appDisable is POST /installedapp/disable with the JSON body the hub UI's enableApp sends:
// {"id": <id>, "disable": <bool>}.
func (h *Hub) appDisable(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ID      json.Number `json:"id"`
		Disable *bool       `json:"disable"`
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") || json.NewDecoder(r.Body).Decode(&body) != nil || body.Disable == nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"success": false, "message": "Invalid request"}) // assumed
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	x := h.appsLocked().find(body.ID.String())
	if x == nil {
		writeJSON(w, http.StatusOK, map[string]any{"success": false, "message": "App not found"}) // assumed
		return
	}
	x.disabled = *body.Disable
	writeJSON(w, http.StatusOK, map[string]any{"success": true}) // assumed: upstream reads the flag back instead
}

// appButton is POST /installedapp/btn, the form a page button click sends (id, name,
// settings[<name>]=clicked, <name>.type=button). A disabled app ignores it, as its handlers do
// not run.
func (h *Hub) appButton(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	name := r.PostForm.Get("name")
	if name == "" || r.PostForm.Get("settings["+name+"]") != "clicked" || r.PostForm.Get(name+".type") != "button" {
		http.Error(w, "Bad Request", http.StatusBadRequest) // assumed
		return
	}
	h.mu.Lock()
	x := h.appsLocked().find(r.PostForm.Get("id"))
	if x == nil {
		h.mu.Unlock()
		appNotFound(w)
		return
	}
	x.clicks = append(x.clicks, name)
	if x.wizard != nil {
		h.hubVarButtonLocked(x.wizard, name, r.PostForm.Get("stateAttribute"))
	}
	var recs []eventRecord
	if !x.disabled && x.isRule() {
		switch name {
		case "pausRule":
			x.paused = !x.paused
		case "runAct":
			recs = h.runActionsLocked(x)
		}
	}
	h.mu.Unlock()
	h.publish(recs)
	writeJSON(w, http.StatusOK, map[string]any{"status": "success"}) // assumed: upstream reads only the status code
}

// runActionsLocked runs a rule's actions, the device commands it holds.
func (h *Hub) runActionsLocked(x *installedApp) []eventRecord {
	if x.disabled {
		return nil
	}
	x.runs++
	var recs []eventRecord
	for _, a := range x.actions {
		if d := h.byID[a.device]; d != nil {
			if changes, err := d.run(a.command, nil); err == nil {
				recs = append(recs, h.applyLocked(d, changes, "digital")...)
			}
		}
	}
	return recs
}

// AppState is an installed app's state, for tests.
type AppState struct {
	Disabled, Paused bool
	Runs             int
	Clicks           []string
	PrivateBoolean   bool
	EndpointValue    string // the last %value% a rule's Local End Point was called with
}

// InstalledApp reports an installed app's state, for tests.
func (h *Hub) InstalledApp(id int) (AppState, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	x := h.appsLocked().find(strconv.Itoa(id))
	if x == nil {
		return AppState{}, false
	}
	return AppState{Disabled: x.disabled, Paused: x.paused, Runs: x.runs, Clicks: slices.Clone(x.clicks),
		PrivateBoolean: x.privateBool, EndpointValue: x.endpointValue}, true
}

// RuleEndpointURL is the Local End Point URL the demo's endpoint rule shows for its trigger, what
// a user pastes into hubitat_rm_endpoint.
func (h *Hub) RuleEndpointURL() string {
	h.mu.Lock()
	tok := h.appsLocked().find(strconv.Itoa(endpointRuleID)).endpointToken
	h.mu.Unlock()
	return h.URL() + "/apps/api/" + strconv.Itoa(endpointRuleID) + "/trigger?access_token=" + tok
}

// ruleEndpoint is a Rule Machine rule's Local End Point, /apps/api/<rule>/<segment>?access_token=….
// Rule Machine reads the segment as one of its verbs with rule ids, <verb>=<id>&<id>, or else as
// the %value% that triggers the rule (upstream rm_native_test_matrix.md §8). The statuses and the
// empty body are assumed: nothing documents them, and hamcp reads only the status.
func (h *Hub) ruleEndpoint(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	x := h.appsLocked().find(r.PathValue("app"))
	if x == nil || x.endpointToken == "" {
		h.mu.Unlock()
		makerError(w, http.StatusNotFound, "AppNotFound", "App not found") // assumed, as Maker API's
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.URL.Query().Get("access_token")), []byte(x.endpointToken)) != 1 {
		h.mu.Unlock()
		makerError(w, http.StatusUnauthorized, "AccessDenied", "Invalid or missing access_token") // assumed
		return
	}
	verb, ids, hasIDs := strings.Cut(r.PathValue("rest"), "=")
	var recs []eventRecord
	for _, raw := range strings.Split(ids, "&") {
		t := h.appsLocked().find(raw)
		// RMUtils ignores an id that is not a Rule Machine rule, and so does the endpoint.
		if !hasIDs || t == nil || !t.isRule() || !strings.HasPrefix(t.typ, "Rule-") {
			continue
		}
		switch verb {
		case "setRuleBooleanTrue", "setRuleBooleanFalse":
			t.privateBool = verb == "setRuleBooleanTrue"
		case "pauseRule", "resumeRule":
			t.paused = verb == "pauseRule"
		case "runRuleAct":
			recs = append(recs, h.runActionsLocked(t)...)
		}
	}
	switch verb {
	case "setRuleBooleanTrue", "setRuleBooleanFalse", "pauseRule", "resumeRule", "runRuleAct", "stopRuleAct", "runRule":
	default:
		// Anything else is the value that triggers the endpoint's own rule.
		x.endpointValue = r.PathValue("rest")
		recs = append(recs, h.runActionsLocked(x)...)
	}
	h.mu.Unlock()
	h.publish(recs)
	w.WriteHeader(http.StatusOK)
}

package hubitat

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Hub variables are created and deleted through the Hub Variables system app's classic page
// ("hubVar"), as upstream does (mcp-variables-lib _createOneVariable, toolDeleteHubVariable):
// create clicks moreVar, then writes hbVar, varType and varValue with /installedapp/update/json
// (a DateTime variable: varDate and varTime, then the dateTimeDone button); delete clicks the
// variable's own button (stateAttribute deleteGV), then delConfirm. The wizard's clicks do nothing
// until it is "warmed" by reading the app's configure/json and statusJson (upstream
// _primeHubVarsWizard, verified on firmware 2.5.0.126: "a single bare GET does not"); a settings
// write cools it again, as upstream primes once more before the DateTime Done click. Location
// events, variable changes among them, are kept for /logs/eventsJson, the hub's Logs page
// source (upstream mcp-devices-lib toolGetDeviceHistory).

// hubVarsAppID is the Hub Variables app's id in the demo house.
const hubVarsAppID = 90

// maxLocationEvents is how many location events the hub keeps (assumed).
const maxLocationEvents = 500

// hubVarWizard is the create/delete wizard's state on the Hub Variables app.
type hubVarWizard struct {
	adding        bool
	fields        map[string]string
	pendingDelete string
	// configured and statused: configure/json and statusJson read since the last settings write.
	configured, statused bool
}

func (wz *hubVarWizard) warm() bool { return wz.configured && wz.statused }

// keepLocationEvent records a location event for /logs/eventsJson.
func (h *Hub) keepLocationEvent(name, value, desc string, at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	a := h.appsLocked()
	a.locEvents = append(a.locEvents, eventRecord{name: name, value: value, desc: desc, displayName: "Home", stateChange: true, date: at})
	if len(a.locEvents) > maxLocationEvents {
		a.locEvents = a.locEvents[len(a.locEvents)-maxLocationEvents:]
	}
}

// locationEvents is /logs/eventsJson: the newest first, dates as the hub writes them.
func (h *Hub) locationEvents(w http.ResponseWriter, _ *http.Request) {
	h.mu.Lock()
	evs := slices.Clone(h.appsLocked().locEvents)
	h.mu.Unlock()
	out := make([]map[string]any, 0, len(evs))
	for i := len(evs) - 1; i >= 0; i-- {
		e := evs[i]
		out = append(out, map[string]any{"name": e.name, "value": e.value, "unit": nil, "descriptionText": e.desc, "source": "LOCATION",
			"date": e.date.Format("2006-01-02T15:04:05.000-0700"), "type": nil, "isStateChange": e.stateChange})
	}
	writeJSON(w, http.StatusOK, out)
}

// hubVarTypes maps the wizard's types to the Maker API's.
var hubVarTypes = map[string]string{"Number": "integer", "Decimal": "decimal", "String": "string", "Boolean": "boolean", "DateTime": "datetime"}

// hubDateTime is how the hub writes a DateTime variable's value (ISO with milliseconds and the
// hub's offset, as its date and time inputs store a moment).
const hubDateTime = "2006-01-02T15:04:05.000-0700"

// hubVarPageLocked is the Hub Variables app's hubVar page: the variables, each with its delete
// button, and the create form while the wizard is adding.
func (h *Hub) hubVarPageLocked(wz *hubVarWizard) []map[string]any {
	var rows []map[string]any
	var buttons []map[string]any
	for _, v := range h.vars {
		rows = append(rows, map[string]any{"element": "paragraph", "description": fmt.Sprintf("<b>%s</b> (%s) = %s", v.Name, v.Type, v.Value)})
		buttons = append(buttons, map[string]any{"name": v.Name, "type": "button", "title": "X", "stateAttribute": "deleteGV"})
	}
	inputs := append(buttons, map[string]any{"name": "moreVar", "type": "button", "title": "Create New Variable", "stateAttribute": "moreVar"})
	switch {
	case wz.adding:
		inputs = append(inputs,
			map[string]any{"name": "hbVar", "type": "text", "title": "Variable name", "defaultValue": wz.fields["hbVar"]},
			map[string]any{"name": "varType", "type": "enum", "title": "Variable type", "options": []string{"Number", "Decimal", "String", "Boolean", "DateTime"}, "defaultValue": wz.fields["varType"]})
		if wz.fields["varType"] == "DateTime" {
			inputs = append(inputs,
				map[string]any{"name": "varDate", "type": "date", "title": "Date", "defaultValue": wz.fields["varDate"]},
				map[string]any{"name": "varTime", "type": "time", "title": "Time", "defaultValue": wz.fields["varTime"]},
				map[string]any{"name": "dateTimeDone", "type": "button", "title": "Done"})
		} else {
			inputs = append(inputs, map[string]any{"name": "varValue", "type": "textarea", "title": "Initial value", "defaultValue": wz.fields["varValue"]})
		}
	case wz.pendingDelete != "":
		inputs = append(inputs, map[string]any{"name": "delConfirm", "type": "button", "title": "Delete " + wz.pendingDelete + "?"})
	}
	return []map[string]any{{"title": "Hub Variables", "body": rows, "input": inputs}}
}

// hubVarButtonLocked handles a click on the Hub Variables app.
func (h *Hub) hubVarButtonLocked(wz *hubVarWizard, name, stateAttribute string) {
	if !wz.warm() {
		return // the click is taken and silently does nothing
	}
	switch {
	case name == "dateTimeDone" && wz.adding && wz.fields["varType"] == "DateTime":
		wz.adding = false
		h.addHubVarLocked(strings.TrimSpace(wz.fields["hbVar"]), "DateTime", h.hubDateTimeValue(wz.fields["varDate"], wz.fields["varTime"]))
	case name == "moreVar":
		wz.adding, wz.fields, wz.pendingDelete = true, map[string]string{}, ""
	case stateAttribute == "deleteGV":
		if slices.ContainsFunc(h.vars, func(v variable) bool { return v.Name == name }) {
			wz.pendingDelete = name
		}
	case name == "delConfirm" && wz.pendingDelete != "":
		h.vars = slices.DeleteFunc(h.vars, func(v variable) bool { return v.Name == wz.pendingDelete })
		wz.pendingDelete = ""
	}
}

// hubVarSettingsLocked takes a settings write on the hubVar page; the variable is created when
// the name, type and value are all set and valid, as the wizard's last field commits it.
func (h *Hub) hubVarSettingsLocked(wz *hubVarWizard, settings map[string]string) {
	wz.configured, wz.statused = false, false
	if !wz.adding {
		return
	}
	for k, v := range settings {
		wz.fields[k] = v
	}
	name, typ, value := strings.TrimSpace(wz.fields["hbVar"]), wz.fields["varType"], wz.fields["varValue"]
	if name == "" || typ == "" || typ == "DateTime" || value == "" {
		return // a DateTime variable waits for its Done button
	}
	wz.adding = false
	h.addHubVarLocked(name, typ, value)
}

// addHubVarLocked is the wizard's commit: a bad name, a name in use or a value that does not fit
// the type creates nothing (the hub's page shows an error).
func (h *Hub) addHubVarLocked(name, typ, value string) {
	mtyp, ok := hubVarTypes[typ]
	if !ok || value == "" || strings.ContainsAny(name, `'"\~[:]<>`) || slices.ContainsFunc(h.vars, func(v variable) bool { return v.Name == name }) ||
		checkVarValue(mtyp, value) != nil {
		return
	}
	h.vars = append(h.vars, variable{Name: name, Value: value, Type: mtyp})
}

// hubDateTimeValue is the moment a date input ("2026-05-06") and a time input ("12:00") name in
// the hub's time zone, as the hub writes it; "" when either does not read.
func (h *Hub) hubDateTimeValue(date, clock string) string {
	loc, err := time.LoadLocation(h.o.Location.TimeZone)
	if err != nil {
		loc = time.UTC
	}
	t, err := time.ParseInLocation("2006-01-02 15:04", date+" "+clock, loc)
	if err != nil {
		return ""
	}
	return t.Format(hubDateTime)
}

// appUpdate is POST /installedapp/update/json, a page's settings write: settings[<key>]=value
// with <key>.type and <key>.multiple, formAction, currentPage and version. It answers with the
// page re-rendered, as the classic UI expects.
func (h *Hub) appUpdate(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	settings := map[string]string{}
	for k, v := range r.PostForm {
		if key, ok := strings.CutPrefix(k, "settings["); ok && strings.HasSuffix(key, "]") && len(v) > 0 {
			settings[strings.TrimSuffix(key, "]")] = v[0]
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	x := h.appsLocked().find(r.PostForm.Get("id"))
	if x == nil {
		appNotFound(w)
		return
	}
	x.clicks = append(x.clicks, "update")
	if x.wizard != nil && r.PostForm.Get("currentPage") == "hubVar" {
		h.hubVarSettingsLocked(x.wizard, settings)
	}
	writeJSON(w, http.StatusOK, h.pageLocked(x, r.PostForm.Get("currentPage")))
}

// HubVariableNames lists the hub's variables, for tests.
func (h *Hub) HubVariableNames() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, v := range h.vars {
		out = append(out, v.Name)
	}
	return out
}

package hubitat

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The hub's own device and room admin routes (its web UI calls them; upstream,
// kingpanther13/Hubitat-local-MCP-server, calls the same ones on the hub's loopback):
//
//	GET  /device/fullJson/<id>          the device edit page's model (_fetchDeviceFullJson, toolGetDeviceInUseBy)
//	POST /device/update                 the wholesale device edit form (_postBypassDeviceModel)
//	POST /device/disable                {"id":N,"disable":bool} (toolUpdateDevice; the Vue UI's setDeviceDisabled)
//	POST /device/preference/save        {"deviceId":N,"preferences":[{name,type,value}]} (_toolUpdateDeviceBypass)
//	POST /room/save                     {"roomId":N (0 creates),"name":…,"deviceIds":[…]} (toolCreateRoom, toolRenameRoom)
//	POST /room/delete/<id>, GET too     (toolDeleteRoom tries POST, then GET)
//	GET  /hub2/devicesList              the device page's tree (vue-hub2.min.js populateDevices)
//	GET  /device/drivers                {"drivers":[…]} (vue-hub2.min.js fetchDeviceTypes)
//	GET  /device/createVirtual?deviceTypeId=N   {"deviceId":N} (vue-hub2.min.js addVirtual)
//	GET  /device/forceDelete/<id>/yes   (toolDeleteDevice)

// simRoom is one room; its devices are the devices whose room is its name.
type simRoom struct {
	id   int
	name string
}

// pref is one driver preference as fullJson's settings array carries it.
type pref struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Value any    `json:"value"`
	Title string `json:"title,omitempty"`
}

// devExtra is what the hub keeps about a device beyond what Maker API shows.
type devExtra struct {
	disabled     bool
	offline      bool // the driver reports healthStatus offline
	lastActivity time.Time
	prefs        []pref
	dni          string
	typeID       int
	virtual      bool
}

type virtualDriver struct {
	id   int
	name string
	make func(b *builder) *builder
}

type deviceAdmin struct {
	rooms      []*simRoom
	nextRoom   int
	extra      map[int]*devExtra
	drivers    []virtualDriver
	nextDevice int
}

// staleSeed is how long ago each demo device was last heard from: most within the hour, some
// battery sensors days ago (a dead battery, a sensor out of range), as a real house has them.
var staleSeed = map[int]time.Duration{
	10: 31 * time.Hour, 13: 4 * 24 * time.Hour, 15: 52 * time.Hour, 20: 9 * 24 * time.Hour, 26: 27 * time.Hour,
}

// virtualDrivers are the hub's built-in virtual drivers (upstream's getSupportedVirtualDeviceTypes).
func virtualDrivers() []virtualDriver {
	sensor := func(cap, attr, v string, vals ...string) func(*builder) *builder {
		return func(b *builder) *builder { return b.cap(cap).enum(attr, v, vals...) }
	}
	return []virtualDriver{
		{1, "Virtual Switch", func(b *builder) *builder { return b.sw(false) }},
		{2, "Virtual Dimmer", func(b *builder) *builder { return b.sw(false).dim(100) }},
		{3, "Virtual Contact Sensor", func(b *builder) *builder {
			return sensor("ContactSensor", "contact", "closed", "open", "closed")(b).cmd("open").cmd("close")
		}},
		{4, "Virtual Motion Sensor", func(b *builder) *builder {
			return sensor("MotionSensor", "motion", "inactive", "active", "inactive")(b).cmd("active").cmd("inactive")
		}},
		{5, "Virtual Presence", func(b *builder) *builder {
			return sensor("PresenceSensor", "presence", "present", "present", "not present")(b).cmd("arrived").cmd("departed")
		}},
		{6, "Virtual Lock", func(b *builder) *builder {
			return sensor("Lock", "lock", "locked", "locked", "unlocked")(b).cmd("lock").cmd("unlock")
		}},
		{7, "Virtual Temperature Sensor", func(b *builder) *builder { return b.temp(70).cmd("setTemperature", "NUMBER") }},
		{8, "Virtual Humidity Sensor", func(b *builder) *builder {
			return b.cap("RelativeHumidityMeasurement").number("humidity", 45, "%").cmd("setRelativeHumidity", "NUMBER")
		}},
		{9, "Virtual Button", func(b *builder) *builder {
			return b.cap("PushableButton").number("numberOfButtons", 1, "").number("pushed", 0, "").cmd("push", "NUMBER")
		}},
		{10, "Virtual Garage Door Opener", func(b *builder) *builder {
			return sensor("GarageDoorControl", "door", "closed", "open", "closed", "opening", "closing")(b).cmd("open").cmd("close")
		}},
		{11, "Virtual Water Sensor", func(b *builder) *builder {
			return sensor("WaterSensor", "water", "dry", "wet", "dry")(b).cmd("wet").cmd("dry")
		}},
		{12, "Virtual Fan Controller", func(b *builder) *builder {
			return b.sw(false).cap("FanControl").enum("speed", "off", "low", "medium", "high", "on", "off").cmd("setSpeed", "ENUM")
		}},
	}
}

// adminLocked is the device admin state, seeded from the demo house the first time.
func (h *Hub) adminLocked() *deviceAdmin {
	if h.dadm != nil {
		return h.dadm
	}
	a := &deviceAdmin{extra: map[int]*devExtra{}, drivers: virtualDrivers(), nextDevice: 100}
	for i, r := range roomsOf(h.devices) {
		a.rooms = append(a.rooms, &simRoom{id: i + 1, name: r.Name})
	}
	a.rooms = append(a.rooms, &simRoom{id: len(a.rooms) + 1, name: "Guest Room"}) // a room with no devices yet
	a.nextRoom = len(a.rooms) + 1
	for _, d := range h.devices {
		x := &devExtra{dni: fmt.Sprintf("%02X", d.id), lastActivity: h.boot.Add(-time.Duration(d.id) * 3 * time.Minute),
			prefs: []pref{{Name: "logEnable", Type: "bool", Value: true, Title: "Enable debug logging"},
				{Name: "txtEnable", Type: "bool", Value: true, Title: "Enable descriptionText logging"}}}
		if ago, ok := staleSeed[d.id]; ok {
			x.lastActivity = h.boot.Add(-ago)
		}
		if d.id == 20 {
			x.offline = true
		}
		if d.attr("temperature") != nil {
			x.prefs = append(x.prefs, pref{Name: "tempOffset", Type: "decimal", Value: 0.0, Title: "Temperature offset"})
		}
		a.extra[d.id] = x
	}
	h.dadm = a
	return a
}

func (a *deviceAdmin) room(id int) *simRoom {
	for _, r := range a.rooms {
		if r.id == id {
			return r
		}
	}
	return nil
}

// roomsLocked is /rooms: every room with its devices (only those Maker API may show when
// authorisedOnly), empty rooms too.
func (h *Hub) roomsLocked(authorisedOnly bool) []room {
	a := h.adminLocked()
	out := make([]room, 0, len(a.rooms))
	for _, r := range a.rooms {
		rm := room{ID: r.id, Name: r.name, DeviceIDs: []int{}}
		for _, d := range h.devices {
			if d.room == r.name && (d.authorised || !authorisedOnly) {
				rm.DeviceIDs = append(rm.DeviceIDs, d.id)
			}
		}
		out = append(out, rm)
	}
	return out
}

func (h *Hub) deviceAdminRoutes(mux *http.ServeMux) {
	gate := func(pattern string, fn http.HandlerFunc) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if h.authed(w, r) {
				fn(w, r)
			}
		})
	}
	gate("GET /device/fullJson/{id}", h.deviceFullJSON)
	gate("POST /device/update", h.deviceUpdateForm)
	gate("POST /device/disable", h.deviceDisable)
	gate("POST /device/preference/save", h.devicePrefSave)
	gate("POST /room/save", h.roomSave)
	gate("POST /room/delete/{id}", h.roomDelete)
	gate("GET /room/delete/{id}", h.roomDelete)
	gate("GET /hub2/devicesList", h.devicesList)
	gate("GET /device/drivers", h.deviceDrivers)
	gate("GET /device/createVirtual", h.createVirtual)
	gate("GET /device/forceDelete/{id}/yes", h.forceDelete)
}

// lastActivityLocked is when the hub last heard from d: its newest event, else the seed.
func (h *Hub) lastActivityLocked(d *device) time.Time {
	t := h.adminLocked().extra[d.id].lastActivity
	if hist := h.history[d.id]; len(hist) > 0 && hist[len(hist)-1].date.After(t) {
		t = hist[len(hist)-1].date
	}
	return t
}

// hubDate is the hub's own date format (fullJson's currentStates dates).
func hubDate(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000-0700") }

func radioOf(d *device, x *devExtra) (zigbee, zwave bool) {
	if x.virtual {
		return false, false
	}
	return strings.Contains(d.typ, "Zigbee"), strings.Contains(d.typ, "Z-Wave")
}

func controllerType(d *device, x *devExtra) string {
	switch zb, zw := radioOf(d, x); {
	case zb:
		return "ZGB"
	case zw:
		return "ZWV"
	case x.virtual:
		return "VIR" // assumed: upstream only tells ZWV and ZGB apart
	}
	return "LAN"
}

// appsUsingLocked are the apps that use device id: rules whose actions command it and
// dashboards that show it.
func (h *Hub) appsUsingLocked(id int) []map[string]any {
	out := []map[string]any{}
	for _, x := range h.appsLocked().list {
		uses := x.dash != nil && slices.Contains(x.dash.devices, id)
		for _, act := range x.actions {
			uses = uses || act.device == id
		}
		if uses {
			out = append(out, map[string]any{"id": x.id, "name": x.typ, "label": x.listName(), "trueLabel": x.label, "disabled": x.disabled})
		}
	}
	return out
}

// deviceFullJSON is /device/fullJson/<id>. An unknown id still answers 200 with a null device
// and an empty appsUsing, as upstream notes the real hub does.
func (h *Hub) deviceFullJSON(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	id, _ := strconv.Atoi(r.PathValue("id"))
	d := h.byID[id]
	if d == nil {
		writeJSON(w, http.StatusOK, map[string]any{"device": nil, "commands": []any{}, "appsUsing": []any{}, "appsUsingCount": 0, "dashboards": []any{}})
		return
	}
	x := h.adminLocked().extra[id]
	states := map[string]any{}
	for _, at := range d.attrs {
		if at.value != nil {
			states[at.name] = map[string]any{"name": at.name, "attributeName": at.name, "value": valueString(at.value), "dataType": at.dataType,
				"unit": at.unit, "date": hubDate(h.lastActivityLocked(d))}
		}
	}
	cmds := make([]map[string]any, 0, len(d.cmds))
	for _, c := range d.cmds {
		params := make([]map[string]any, 0, len(c.types))
		for i, t := range c.types {
			params = append(params, map[string]any{"name": fmt.Sprintf("arg%d", i+1), "type": t})
		}
		cmds = append(cmds, map[string]any{"name": c.name, "arguments": c.types, "parameters": params})
	}
	roomID := 0
	for _, rm := range h.adminLocked().rooms {
		if rm.name == d.room {
			roomID = rm.id
		}
	}
	var roomName any
	if d.room != "" {
		roomName = d.room
	}
	apps := h.appsUsingLocked(id)
	writeJSON(w, http.StatusOK, map[string]any{
		"device": map[string]any{"id": d.id, "name": d.name, "label": d.label, "deviceNetworkId": x.dni, "deviceTypeId": x.typeID,
			"deviceTypeName": d.typ, "deviceTypeReadableType": d.typ, "controllerType": controllerType(d, x), "roomId": roomID, "roomName": roomName,
			"disabled": x.disabled, "virtual": x.virtual, "settings": x.prefs, "currentStates": states, "capabilities": d.caps,
			"lastActivity": hubDate(h.lastActivityLocked(d)), "version": 1, "tags": "", "notes": ""},
		"commands": cmds, "dashboards": []any{}, "appsUsing": apps, "appsUsingCount": len(apps), "parentApp": nil,
		"extraBreadcrumb": d.label, "homeKitEnabled": false})
}

// deviceUpdateForm is the wholesale edit form: every field it carries is set, and a field it
// leaves out is blanked (why upstream rebuilds the whole form from fullJson).
func (h *Hub) deviceUpdateForm(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	f := r.PostForm
	h.mu.Lock()
	defer h.mu.Unlock()
	id, _ := strconv.Atoi(f.Get("id"))
	d := h.byID[id]
	if d == nil {
		http.Error(w, "Device not found", http.StatusNotFound) // assumed
		return
	}
	x := h.adminLocked().extra[id]
	d.name, d.label, x.dni = f.Get("name"), f.Get("label"), f.Get("deviceNetworkId")
	if rid, err := strconv.Atoi(f.Get("roomId")); err == nil {
		if rm := h.dadm.room(rid); rm != nil {
			d.room = rm.name
		} else {
			d.room = ""
		}
	} else {
		d.room = ""
	}
	http.Redirect(w, r, "/device/edit/"+strconv.Itoa(id), http.StatusFound)
}

// readJSONOrForm reads a body the UI posts as JSON and upstream as a form.
func readJSONOrForm(r *http.Request, into map[string]any) error {
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		return json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20)).Decode(&into)
	}
	if err := r.ParseForm(); err != nil {
		return err
	}
	for k := range r.PostForm {
		into[k] = r.PostForm.Get(k)
	}
	return nil
}

func anyInt(v any) (int, bool) {
	switch x := v.(type) {
	case float64:
		return int(x), x == float64(int(x))
	case string:
		i, err := strconv.Atoi(x)
		return i, err == nil
	}
	return 0, false
}

func (h *Hub) deviceDisable(w http.ResponseWriter, r *http.Request) {
	body := map[string]any{}
	if err := readJSONOrForm(r, body); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	id, _ := anyInt(body["id"])
	if h.byID[id] == nil {
		http.Error(w, "Device not found", http.StatusNotFound) // assumed
		return
	}
	h.adminLocked().extra[id].disabled = body["disable"] == true || body["disable"] == "true"
	writeJSON(w, http.StatusOK, map[string]any{"success": true}) // assumed: the UI ignores the body
}

// devicePrefSave sets the preferences named in the array; a name the driver does not declare,
// or a flat key outside the array, is silently ignored and still answers success, as upstream
// found live.
func (h *Hub) devicePrefSave(w http.ResponseWriter, r *http.Request) {
	var body struct {
		DeviceID    json.RawMessage `json:"deviceId"`
		Preferences []pref          `json:"preferences"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20)).Decode(&body); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	id, _ := strconv.Atoi(strings.Trim(string(body.DeviceID), `"`))
	x := h.adminLocked().extra[id]
	if x == nil {
		writeJSON(w, http.StatusOK, map[string]any{"success": false, "message": "Device not found"}) // assumed
		return
	}
	for _, p := range body.Preferences {
		for i := range x.prefs {
			if x.prefs[i].Name == p.Name {
				x.prefs[i].Value = p.Value
			}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true})
}

// roomSave creates (roomId 0) or saves a room: its name and its devices; devices it lists leave
// their old room, devices it no longer lists leave it.
func (h *Hub) roomSave(w http.ResponseWriter, r *http.Request) {
	var body struct {
		RoomID    int    `json:"roomId"`
		Name      string `json:"name"`
		DeviceIDs []int  `json:"deviceIds"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20)).Decode(&body); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	a := h.adminLocked()
	name := strings.TrimSpace(body.Name)
	if name == "" {
		writeJSON(w, http.StatusOK, map[string]any{"error": "Room name is required"}) // assumed wording
		return
	}
	for _, rm := range a.rooms {
		if strings.EqualFold(rm.name, name) && rm.id != body.RoomID {
			writeJSON(w, http.StatusOK, map[string]any{"error": "A room with that name already exists"})
			return
		}
	}
	rm := a.room(body.RoomID)
	switch {
	case body.RoomID == 0:
		rm = &simRoom{id: a.nextRoom, name: name}
		a.nextRoom++
		a.rooms = append(a.rooms, rm)
	case rm == nil:
		writeJSON(w, http.StatusOK, map[string]any{"error": "Room not found"})
		return
	}
	old := rm.name
	for _, d := range h.devices {
		switch {
		case slices.Contains(body.DeviceIDs, d.id):
			d.room = name
		case d.room == old:
			d.room = ""
		}
	}
	rm.name = name
	writeJSON(w, http.StatusOK, map[string]any{"id": rm.id, "name": rm.name, "deviceIds": body.DeviceIDs})
}

func (h *Hub) roomDelete(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	a := h.adminLocked()
	id, _ := strconv.Atoi(r.PathValue("id"))
	i := slices.IndexFunc(a.rooms, func(rm *simRoom) bool { return rm.id == id })
	if i < 0 {
		writeJSON(w, http.StatusOK, map[string]any{"error": "Room not found"})
		return
	}
	for _, d := range h.devices {
		if d.room == a.rooms[i].name {
			d.room = ""
		}
	}
	a.rooms = slices.Delete(a.rooms, i, i+1)
	writeJSON(w, http.StatusOK, map[string]any{"success": true})
}

// devicesList is /hub2/devicesList: {"devices":[{"key","data":{…},"children":[]}]}, the fields
// the device page reads (lastActivity, currentStates as key/value pairs with battery and
// healthStatus, disabled, isZigbee/isZwave/isMatter/isLinked).
func (h *Hub) devicesList(w http.ResponseWriter, _ *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	a := h.adminLocked()
	nodes := make([]map[string]any, 0, len(h.devices))
	for _, d := range h.devices {
		x := a.extra[d.id]
		states := []map[string]any{}
		for _, at := range d.attrs {
			if at.value != nil {
				states = append(states, map[string]any{"key": at.name, "value": valueString(at.value)})
			}
		}
		if x.offline {
			states = append(states, map[string]any{"key": "healthStatus", "value": "offline"})
		}
		zb, zw := radioOf(d, x)
		roomID := 0
		for _, rm := range a.rooms {
			if rm.name == d.room {
				roomID = rm.id
			}
		}
		var last any
		if t := h.lastActivityLocked(d); !t.IsZero() {
			last = hubDate(t)
		}
		nodes = append(nodes, map[string]any{"key": "DEV-" + strconv.Itoa(d.id), "children": []any{}, "data": map[string]any{
			"id": d.id, "name": d.name, "label": d.label, "type": d.typ, "deviceTypeId": x.typeID, "dni": x.dni, "roomId": roomID, "roomName": d.room,
			"disabled": x.disabled, "lastActivity": last, "currentStates": states, "isZigbee": zb, "isZwave": zw, "isMatter": false,
			"isLinked": false, "user": false, "defaultCurrentState": "", "tags": "", "showOnHome": true}})
	}
	writeJSON(w, http.StatusOK, map[string]any{"devices": nodes, "suggestBackup": false, "smartStart": []any{}})
}

func (h *Hub) deviceDrivers(w http.ResponseWriter, _ *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := []map[string]any{}
	for _, v := range h.adminLocked().drivers {
		out = append(out, map[string]any{"id": v.id, "name": v.name, "namespace": "hubitat", "type": "sys", "category": "Virtual"})
	}
	for _, sys := range []string{"Generic Zigbee Dimmer", "Generic Z-Wave Switch", "Generic Z-Wave Lock"} {
		out = append(out, map[string]any{"id": 500 + len(out), "name": sys, "namespace": "hubitat", "type": "sys", "category": "Generic"})
	}
	for _, c := range h.drivers {
		out = append(out, map[string]any{"id": c.ID, "name": c.Name, "namespace": c.Namespace, "type": "usr", "category": ""})
	}
	writeJSON(w, http.StatusOK, map[string]any{"drivers": out})
}

// createVirtual makes a device from a built-in virtual driver. Like any new device it is not in
// the Maker API instance's selection until the user adds it there.
func (h *Hub) createVirtual(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	a := h.adminLocked()
	typeID, _ := strconv.Atoi(r.URL.Query().Get("deviceTypeId"))
	i := slices.IndexFunc(a.drivers, func(v virtualDriver) bool { return v.id == typeID })
	if i < 0 {
		writeJSON(w, http.StatusOK, map[string]any{"success": false, "errorMessage": "Driver not found"}) // assumed
		return
	}
	drv := a.drivers[i]
	id := a.nextDevice
	a.nextDevice++
	d := drv.make(newDevice(id, drv.name, drv.name, "")).build()
	d.authorised = false
	h.devices = append(h.devices, d)
	h.byID[id] = d
	a.extra[id] = &devExtra{virtual: true, typeID: drv.id, dni: fmt.Sprintf("%X", time.Now().UnixNano()&0xFFFFFF), lastActivity: time.Now(),
		prefs: []pref{{Name: "logEnable", Type: "bool", Value: false, Title: "Enable debug logging"}}}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "deviceId": id})
}

func (h *Hub) forceDelete(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	id, _ := strconv.Atoi(r.PathValue("id"))
	if h.byID[id] == nil {
		writeJSON(w, http.StatusOK, map[string]any{"success": false, "message": "Device not found"}) // assumed
		return
	}
	delete(h.byID, id)
	h.devices = slices.DeleteFunc(h.devices, func(d *device) bool { return d.id == id })
	delete(h.adminLocked().extra, id)
	writeJSON(w, http.StatusOK, map[string]any{"success": true})
}

// DeviceAdmin is what the hub keeps about device id beyond Maker API, for tests.
func (h *Hub) DeviceAdmin(id int) (disabled bool, prefs map[string]any, room string, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	d, x := h.byID[id], h.adminLocked().extra[id]
	if d == nil || x == nil {
		return false, nil, "", false
	}
	prefs = map[string]any{}
	for _, p := range x.prefs {
		prefs[p.Name] = p.Value
	}
	return x.disabled, prefs, d.room, true
}

// Label is device id's label, for tests.
func (h *Hub) Label(id int) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if d := h.byID[id]; d != nil {
		return d.label
	}
	return ""
}

// RoomNames are the hub's rooms in order, for tests.
func (h *Hub) RoomNames() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.adminLocked().rooms {
		out = append(out, r.name)
	}
	return out
}

// AddDevices adds n plain switches (ids from 1000), authorised in Maker API, with last activity
// spread over the last days: a big house for benchmarks.
func (h *Hub) AddDevices(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	a := h.adminLocked()
	for i := range n {
		id := 1000 + i
		d := newDevice(id, fmt.Sprintf("Switch %d", id), "Generic Zigbee Outlet", "Basement").sw(false).battery(float64(i % 100)).build()
		h.devices = append(h.devices, d)
		h.byID[id] = d
		a.extra[id] = &devExtra{dni: fmt.Sprintf("%04X", id), lastActivity: h.boot.Add(-time.Duration(i) * 17 * time.Minute)}
	}
}

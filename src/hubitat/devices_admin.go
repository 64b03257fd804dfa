package hubitat

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// A device's hub-side settings, read and changed through the routes of the hub's device page,
// the ones upstream (kingpanther13/Hubitat-local-MCP-server, mcp-devices-lib.groovy) calls:
//
//	GET  /device/fullJson/<id>        the edit page's model (_fetchDeviceFullJson); an unknown id answers a null device
//	POST /device/update               the wholesale edit form; a field left out is blanked (_postBypassDeviceModel)
//	POST /device/disable              {"id":N,"disable":bool} (toolUpdateDevice; the UI's setDeviceDisabled posts JSON)
//	POST /device/preference/save      {"deviceId":N,"preferences":[{name,type,value}]}; answers success even when
//	                                  nothing changed, so every change is read back (_toolUpdateDeviceBypass)
//	GET  /hub2/devicesList            the device page's list (vue-hub2.min.js populateDevices)
//	GET  /device/drivers              the driver list (vue-hub2.min.js fetchDeviceTypes)
//	GET  /device/createVirtual?deviceTypeId=N   {"deviceId":N} (vue-hub2.min.js addVirtual)
//	GET  /device/forceDelete/<id>/yes (toolDeleteDevice), checked by reading fullJson back

// Setting is one driver preference.
type Setting struct {
	Name  string `json:"name"`
	Type  string `json:"type,omitempty"`
	Value string `json:"value"`
	Title string `json:"title,omitempty"`
}

// AppUse is one app that uses a device (fullJson's appsUsing).
type AppUse struct {
	ID       string `json:"id"`
	Type     string `json:"type,omitempty"`
	Label    string `json:"label"`
	Disabled bool   `json:"disabled,omitempty"`
}

// DeviceModel is /device/fullJson/<id>.
type DeviceModel struct {
	ID             string    `json:"id"`
	Name           string    `json:"name"`
	Label          string    `json:"label"`
	RoomID         string    `json:"roomId,omitempty"`
	RoomName       string    `json:"roomName,omitempty"`
	Disabled       bool      `json:"disabled"`
	Virtual        bool      `json:"virtual,omitempty"`
	TypeName       string    `json:"typeName,omitempty"`
	ControllerType string    `json:"controllerType,omitempty"`
	Settings       []Setting `json:"settings"`
	Commands       []string  `json:"commands,omitempty"`
	AppsUsing      []AppUse  `json:"appsUsing"`
	AppsUsingCount int       `json:"appsUsingCount"`
	// raw is the device object as sent, for the wholesale edit form.
	raw    map[string]json.RawMessage
	rawTop map[string]json.RawMessage
}

// Setting is the value of one preference, when the driver has it.
func (m DeviceModel) Setting(name string) (Setting, bool) {
	for _, s := range m.Settings {
		if s.Name == name {
			return s, true
		}
	}
	return Setting{}, false
}

// jsonText is a JSON scalar as text: strings unquoted, numbers and booleans as written, null "".
func jsonText(raw json.RawMessage) string {
	t := strings.TrimSpace(string(raw))
	if t == "" || t == "null" {
		return ""
	}
	var s string
	if t[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	if t[0] == '{' || t[0] == '[' {
		return ""
	}
	return t
}

func jsonBool(raw json.RawMessage) bool {
	t := jsonText(raw)
	return t == "true"
}

// ParseDeviceModel reads /device/fullJson/<id>; ok is false for the hub's answer to an unknown id
// (a null device).
func ParseDeviceModel(b []byte) (m DeviceModel, ok bool, err error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return DeviceModel{}, false, fmt.Errorf("hubitat /device/fullJson: malformed reply: %w", err)
	}
	var dev map[string]json.RawMessage
	if json.Unmarshal(top["device"], &dev) != nil || dev == nil {
		return DeviceModel{}, false, nil
	}
	m = DeviceModel{ID: idString(dev["id"]), Name: jsonText(dev["name"]), Label: jsonText(dev["label"]), RoomID: idString(dev["roomId"]),
		RoomName: jsonText(dev["roomName"]), Disabled: jsonBool(dev["disabled"]), Virtual: jsonBool(dev["virtual"]),
		TypeName: jsonText(dev["deviceTypeName"]), ControllerType: jsonText(dev["controllerType"]), Settings: []Setting{}, AppsUsing: []AppUse{},
		raw: dev, rawTop: top}
	if m.RoomID == "0" {
		m.RoomID = ""
	}
	var settings []map[string]json.RawMessage
	_ = json.Unmarshal(dev["settings"], &settings)
	for _, s := range settings {
		if n := jsonText(s["name"]); n != "" {
			m.Settings = append(m.Settings, Setting{Name: n, Type: jsonText(s["type"]), Value: jsonText(s["value"]), Title: jsonText(s["title"])})
		}
	}
	var cmds []map[string]json.RawMessage
	_ = json.Unmarshal(top["commands"], &cmds)
	for _, c := range cmds {
		if n := jsonText(c["name"]); n != "" {
			m.Commands = append(m.Commands, n)
		}
	}
	var apps []map[string]json.RawMessage
	_ = json.Unmarshal(top["appsUsing"], &apps) // upstream refuses a non-list; here it reads as none
	for _, a := range apps {
		label := jsonText(a["trueLabel"])
		if label == "" {
			label = jsonText(a["label"])
		}
		m.AppsUsing = append(m.AppsUsing, AppUse{ID: idString(a["id"]), Type: jsonText(a["name"]), Label: label, Disabled: jsonBool(a["disabled"])})
	}
	m.AppsUsingCount = len(m.AppsUsing)
	if n, ok := parseNumber(top["appsUsingCount"]); ok && n >= 0 && n < 1e6 {
		m.AppsUsingCount = int(n)
	}
	return m, true, nil
}

// DeviceModel is /device/fullJson/<id> of a device hamcp may use.
func (c *Client) DeviceModel(ctx context.Context, id string) (DeviceModel, error) {
	if err := c.checkDevice(id); err != nil {
		return DeviceModel{}, err
	}
	r, err := c.Admin(ctx, http.MethodGet, "/device/fullJson/"+id, nil)
	if err != nil {
		return DeviceModel{}, err
	}
	m, ok, err := ParseDeviceModel(r.Body)
	if err != nil {
		return DeviceModel{}, err
	}
	if !ok {
		return DeviceModel{}, fmt.Errorf("hubitat device %q: %w", id, ErrDeviceNotFound)
	}
	return m, nil
}

// formFields are the fields of the wholesale edit form upstream rebuilds (_postBypassDeviceModel).
var formFields = []string{"name", "label", "zigbeeId", "maxEvents", "maxStates", "spammyThreshold", "deviceNetworkId", "deviceTypeId",
	"deviceTypeReadableType", "roomId", "meshEnabled", "retryEnabled", "meshFullSync", "locationId", "hubId", "groupId", "tags",
	"notes", "id", "version", "controllerType"}

// editForm is the whole edit form for m with overrides: true is "on", null "", lists comma-joined.
func editForm(m DeviceModel, overrides map[string]string) url.Values {
	enc := func(raw json.RawMessage) string {
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) == nil {
			parts := make([]string, len(list))
			for i, x := range list {
				parts[i] = jsonText(x)
			}
			return strings.Join(parts, ",")
		}
		if t := jsonText(raw); t != "true" {
			return t
		}
		return "on"
	}
	f := url.Values{}
	for _, k := range formFields {
		f.Set(k, enc(m.raw[k]))
	}
	f.Set("homeKitEnabled", enc(m.rawTop["homeKitEnabled"]))
	icon := m.raw["defaultIcon"]
	if jsonText(icon) == "" {
		icon = m.raw["icon"]
	}
	f.Set("defaultIcon", enc(icon))
	var dashIDs []string
	var dashes []map[string]json.RawMessage
	_ = json.Unmarshal(m.rawTop["dashboards"], &dashes)
	for _, d := range dashes {
		if jsonBool(d["selected"]) {
			dashIDs = append(dashIDs, idString(d["id"]))
		}
	}
	f.Set("dashboardIds", strings.Join(dashIDs, ","))
	for k, v := range overrides {
		f.Set(k, v)
	}
	return f
}

// UpdateDevice sets name, label or roomId through the wholesale edit form, rebuilt from a fresh
// read so nothing else is blanked, and returns the device as the hub then has it.
func (c *Client) UpdateDevice(ctx context.Context, id string, overrides map[string]string) (DeviceModel, error) {
	m, err := c.DeviceModel(ctx, id)
	if err != nil {
		return DeviceModel{}, err
	}
	if _, err := c.Admin(ctx, http.MethodPost, "/device/update", editForm(m, overrides)); err != nil {
		return DeviceModel{}, err
	}
	after, err := c.DeviceModel(ctx, id)
	if err != nil {
		return DeviceModel{}, err
	}
	for k, v := range overrides {
		got := map[string]string{"name": after.Name, "label": after.Label, "roomId": after.RoomID}[k]
		if k == "roomId" && v == "0" {
			v = ""
		}
		if got != v {
			return after, fmt.Errorf("hubitat device %s: %w: %s reads back %q", id, ErrNotConfirmed, k, clean(got))
		}
	}
	return after, nil
}

// SetDeviceDisabled disables or enables a device and reads the flag back.
func (c *Client) SetDeviceDisabled(ctx context.Context, id string, disable bool) error {
	if err := c.checkDevice(id); err != nil {
		return err
	}
	n, _ := strconv.Atoi(id)
	if _, err := c.AdminJSON(ctx, "/device/disable", map[string]any{"id": n, "disable": disable}); err != nil {
		return err
	}
	m, err := c.DeviceModel(ctx, id)
	if err != nil {
		return err
	}
	if m.Disabled != disable {
		return fmt.Errorf("hubitat device %s: %w: it reads back disabled=%v", id, ErrNotConfirmed, m.Disabled)
	}
	return nil
}

// SavePreferences saves driver preferences and reads each back: the hub answers success for a
// name the driver does not have.
func (c *Client) SavePreferences(ctx context.Context, id string, prefs []Setting) (DeviceModel, error) {
	if err := c.checkDevice(id); err != nil {
		return DeviceModel{}, err
	}
	n, _ := strconv.Atoi(id)
	wire := make([]map[string]string, len(prefs))
	for i, p := range prefs {
		wire[i] = map[string]string{"name": p.Name, "type": p.Type, "value": p.Value}
	}
	if _, err := c.AdminJSON(ctx, "/device/preference/save", map[string]any{"deviceId": n, "preferences": wire}); err != nil {
		return DeviceModel{}, err
	}
	m, err := c.DeviceModel(ctx, id)
	if err != nil {
		return DeviceModel{}, err
	}
	for _, p := range prefs {
		if got, _ := m.Setting(p.Name); !sameSetting(got.Value, p.Value) {
			return m, fmt.Errorf("hubitat device %s: %w: preference %s reads back %q", id, ErrNotConfirmed, p.Name, clean(got.Value))
		}
	}
	return m, nil
}

// sameSetting compares preference values as the hub may echo them ("5" and "5.0").
func sameSetting(a, b string) bool {
	if a == b {
		return true
	}
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	return errA == nil && errB == nil && x == y
}

// ListedDevice is one device of the device page's list: what the hub knows of its health.
type ListedDevice struct {
	ID           string
	Name, Label  string
	Type         string
	RoomID       string
	RoomName     string
	Disabled     bool
	LastActivity time.Time // zero: never heard from
	Battery      *float64
	Health       string // healthStatus: online, offline, or "" when the driver does not report it
	Radio        string // zigbee, zwave, matter, linked (Hub Mesh), virtual or lan
}

// listedNode is one node of /hub2/devicesList, decoded in one pass (the list is the whole house).
type listedNode struct {
	Data struct {
		ID            json.RawMessage `json:"id"`
		Name          json.RawMessage `json:"name"`
		Label         json.RawMessage `json:"label"`
		Type          json.RawMessage `json:"type"`
		RoomID        json.RawMessage `json:"roomId"`
		RoomName      json.RawMessage `json:"roomName"`
		Disabled      json.RawMessage `json:"disabled"`
		LastActivity  json.RawMessage `json:"lastActivity"`
		IsZigbee      json.RawMessage `json:"isZigbee"`
		IsZwave       json.RawMessage `json:"isZwave"`
		IsMatter      json.RawMessage `json:"isMatter"`
		IsLinked      json.RawMessage `json:"isLinked"`
		CurrentStates []struct {
			Key   string          `json:"key"`
			Value json.RawMessage `json:"value"`
		} `json:"currentStates"`
	} `json:"data"`
	Children []listedNode `json:"children"`
}

// ParseDevicesList reads /hub2/devicesList: {"devices":[{"data":{…},"children":[…]}]}, children
// (component devices) flattened after their parent.
func ParseDevicesList(b []byte) ([]ListedDevice, error) {
	var top struct {
		Devices []listedNode `json:"devices"`
	}
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, fmt.Errorf("hubitat /hub2/devicesList: malformed reply: %w", err)
	}
	var out []ListedDevice
	var walk func(nodes []listedNode)
	walk = func(nodes []listedNode) {
		for i := range nodes {
			if d, ok := listedDevice(&nodes[i]); ok {
				out = append(out, d)
			}
			walk(nodes[i].Children)
		}
	}
	walk(top.Devices)
	return out, nil
}

func listedDevice(n *listedNode) (ListedDevice, bool) {
	data := &n.Data
	d := ListedDevice{ID: idString(data.ID), Name: jsonText(data.Name), Label: jsonText(data.Label), Type: jsonText(data.Type),
		RoomID: idString(data.RoomID), RoomName: jsonText(data.RoomName), Disabled: jsonBool(data.Disabled),
		LastActivity: parseDate(data.LastActivity)}
	if d.ID == "" {
		return d, false
	}
	if d.RoomID == "0" {
		d.RoomID = ""
	}
	for _, s := range data.CurrentStates {
		switch s.Key {
		case "battery":
			if f, ok := parseNumber(s.Value); ok {
				d.Battery = &f
			}
		case "healthStatus":
			d.Health = jsonText(s.Value)
		}
	}
	switch {
	case jsonBool(data.IsLinked):
		d.Radio = "linked"
	case jsonBool(data.IsZigbee):
		d.Radio = "zigbee"
	case jsonBool(data.IsZwave):
		d.Radio = "zwave"
	case jsonBool(data.IsMatter):
		d.Radio = "matter"
	case strings.HasPrefix(d.Type, "Virtual"):
		d.Radio = "virtual"
	default:
		d.Radio = "lan"
	}
	return d, true
}

// allListedDevices is the device page's list, every device.
func (c *Client) allListedDevices(ctx context.Context) ([]ListedDevice, error) {
	r, err := c.Admin(ctx, http.MethodGet, "/hub2/devicesList", nil)
	if err != nil {
		return nil, err
	}
	return ParseDevicesList(r.Body)
}

// ListedDevices is the device page's list, only the devices hamcp may use.
func (c *Client) ListedDevices(ctx context.Context) ([]ListedDevice, error) {
	all, err := c.allListedDevices(ctx)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, d := range all {
		if c.allowed(d.ID) {
			out = append(out, d)
		}
	}
	return out, nil
}

// Driver is one device driver the hub has.
type Driver struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	User      bool   `json:"user,omitempty"`
}

// ParseVirtualDrivers reads /device/drivers and keeps the virtual drivers the hub's own "add
// virtual device" offers: names starting "Virtual", not deprecated ("dep") nor hidden.
func ParseVirtualDrivers(b []byte) ([]Driver, error) {
	var top struct {
		Drivers []map[string]json.RawMessage `json:"drivers"`
	}
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, fmt.Errorf("hubitat /device/drivers: malformed reply: %w", err)
	}
	out := []Driver{}
	for _, d := range top.Drivers {
		name, typ := jsonText(d["name"]), jsonText(d["type"])
		if !strings.HasPrefix(name, "Virtual") || typ == "dep" || jsonText(d["category"]) == "Hidden" || idString(d["id"]) == "" {
			continue
		}
		out = append(out, Driver{ID: idString(d["id"]), Name: name, Namespace: jsonText(d["namespace"]), User: typ == "usr"})
	}
	return out, nil
}

// VirtualDrivers lists the virtual drivers a device can be made from.
func (c *Client) VirtualDrivers(ctx context.Context) ([]Driver, error) {
	r, err := c.Admin(ctx, http.MethodGet, "/device/drivers", nil)
	if err != nil {
		return nil, err
	}
	return ParseVirtualDrivers(r.Body)
}

// CreateVirtualDevice makes a device from driver typeID and returns its id.
func (c *Client) CreateVirtualDevice(ctx context.Context, typeID string) (string, error) {
	if !allDigits(typeID) {
		return "", fmt.Errorf("hubitat driver %q: not a driver id", clean(typeID))
	}
	r, err := c.Admin(ctx, http.MethodGet, "/device/createVirtual?deviceTypeId="+typeID, nil)
	if err != nil {
		return "", err
	}
	var m map[string]json.RawMessage
	_ = json.Unmarshal(r.JSON, &m)
	if id := idString(m["deviceId"]); id != "" {
		return id, nil
	}
	msg := jsonText(m["errorMessage"])
	if msg == "" {
		msg = "no device id in the reply"
	}
	return "", &APIError{Path: "/device/createVirtual", Status: r.Status, Message: clean(msg)}
}

// DeleteDevice removes a device for good and checks fullJson no longer has it.
func (c *Client) DeleteDevice(ctx context.Context, id string) error {
	if err := c.checkDevice(id); err != nil {
		return err
	}
	if _, err := c.Admin(ctx, http.MethodGet, "/device/forceDelete/"+id+"/yes", nil); err != nil {
		return err
	}
	r, err := c.Admin(ctx, http.MethodGet, "/device/fullJson/"+id, nil)
	if err != nil {
		return err
	}
	if _, ok, _ := ParseDeviceModel(r.Body); ok {
		return fmt.Errorf("hubitat device %s: %w: the hub still has it", id, ErrNotConfirmed)
	}
	return nil
}

package hubitattools

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/redact"
	"github.com/hamcp/hamcp/src/toolkit"
)

type updateDeviceArgs struct {
	deviceID
	Label       *string           `json:"label,omitempty" jsonschema:"new label" validate:"omitempty,min=1,max=100"`
	Name        *string           `json:"name,omitempty" jsonschema:"new name" validate:"omitempty,min=1,max=100"`
	Room        *string           `json:"room,omitempty" jsonschema:"room name or id; \"\" = none" validate:"omitempty,max=100"`
	Enabled     *bool             `json:"enabled,omitempty" jsonschema:"false disables it"`
	Preferences map[string]string `json:"preferences,omitempty" jsonschema:"by name, e.g. {\"logEnable\": \"false\"}" validate:"omitempty,max=20,dive,keys,max=64,endkeys,max=500"`
}

// confirmed says whether the call needs the user's yes: disabling a device stops it, and
// preferences change how its driver works.
func (a updateDeviceArgs) confirmed() bool {
	return len(a.Preferences) > 0 || (a.Enabled != nil && !*a.Enabled)
}

type deviceChange struct {
	Property string `json:"property"`
	From     string `json:"from"`
	To       string `json:"to"`
}

type fieldError struct {
	Property string `json:"property"`
	Error    string `json:"error"`
}

type updateDeviceResult struct {
	Success  bool           `json:"success"`
	DeviceID string         `json:"deviceId"`
	Device   string         `json:"device"`
	Changes  []deviceChange `json:"changes"`
	Errors   []fieldError   `json:"errors,omitempty"`
	Undo     string         `json:"undo,omitempty"`
}

func updateDevice(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[updateDeviceArgs, updateDeviceResult]{
		Name: "hubitat_update_device", Toolset: SetAdmin, Title: "Rename, disable or set up a Hubitat device",
		Description: "Rename a Hubitat device (label, name), disable or enable it (a sensor, a switch), put it in a room, or " +
			"change its driver preferences. Disabling, preferences: the user confirms each change; preferences also " +
			"need a backup in the hour. Commands: hubitat_send_command. Option hubitat_admin_write + hub_admin.",
		Category:  HubAdmin,
		Available: d.requireAdminWrite,
		Confirm: &toolkit.Confirm[updateDeviceArgs]{When: "disabling a device or changing its preferences (`" + AdminConfirmClass + "`: always asked)",
			Check: func(ctx context.Context, _ *toolkit.Call, a updateDeviceArgs) (toolkit.Ask, error) {
				if !a.confirmed() {
					return toolkit.Ask{}, nil
				}
				m, err := d.Hub.DeviceModel(ctx, a.DeviceID)
				if err != nil {
					return toolkit.Ask{}, d.deviceAdminError(ctx, "Reading device "+a.DeviceID, err, false)
				}
				q := updateQuestion(m, a)
				if len(a.Preferences) == 0 {
					return toolkit.Ask{Classes: []string{AdminConfirmClass}, Question: q}, nil
				}
				return d.destructiveAsk(ctx, "hubitat_update_device", q)
			}},
		Idempotent: true,
		Summary: func(a updateDeviceArgs) string {
			var props []string
			for p, set := range map[string]bool{"label": a.Label != nil, "name": a.Name != nil, "room": a.Room != nil, "enabled": a.Enabled != nil} {
				if set {
					props = append(props, p)
				}
			}
			slices.Sort(props)
			return fmt.Sprintf("deviceId=%s %s preferences=%d", a.DeviceID, strings.Join(props, ","), len(a.Preferences))
		},
		Handler: func(ctx context.Context, _ *toolkit.Call, a updateDeviceArgs) (updateDeviceResult, error) {
			return d.applyDeviceUpdate(ctx, a)
		},
	})
}

// updateQuestion says exactly what changes, from what to what.
func updateQuestion(m hubitat.DeviceModel, a updateDeviceArgs) string {
	var parts []string
	if a.Enabled != nil && !*a.Enabled {
		parts = append(parts, "disable it (it stops reporting and taking commands, and rules that use it stop working with it)")
	}
	for _, name := range slices.Sorted(maps.Keys(a.Preferences)) {
		cur, ok := m.Setting(name)
		from, to := "(the driver has no such preference)", fmt.Sprintf("%q", a.Preferences[name])
		if ok {
			from = fmt.Sprintf("%q", shownSetting(cur, cur.Value))
		}
		if secretSetting(cur) {
			to = "a new value"
		}
		parts = append(parts, fmt.Sprintf("preference %s: %s → %s", name, from, to))
	}
	return fmt.Sprintf("Change Hubitat device %s (%s): %s?", m.ID, labelOf(m), strings.Join(parts, "; "))
}

func labelOf(m hubitat.DeviceModel) string {
	if m.Label != "" {
		return m.Label
	}
	return m.Name
}

func (d Deps) applyDeviceUpdate(ctx context.Context, a updateDeviceArgs) (updateDeviceResult, error) {
	if a.Label == nil && a.Name == nil && a.Room == nil && a.Enabled == nil && len(a.Preferences) == 0 {
		return updateDeviceResult{}, toolkit.InvalidArg("label", "give at least one of label, name, room, enabled or preferences", `{"deviceId": "1", "label": "Reading Lamp"}`)
	}
	if len(a.Preferences) > 0 {
		if _, err := d.backupGate(ctx, "hubitat_update_device"); err != nil {
			return updateDeviceResult{}, err
		}
	}
	before, err := d.Hub.DeviceModel(ctx, a.DeviceID)
	if err != nil {
		return updateDeviceResult{}, d.deviceAdminError(ctx, "Reading device "+a.DeviceID, err, false)
	}
	for name := range a.Preferences {
		if _, ok := before.Setting(name); !ok {
			return updateDeviceResult{}, toolkit.InvalidArg("preferences."+name, "is not a preference of this device; it has: "+settingNames(before), `{"logEnable": "false"}`)
		}
	}
	u := &deviceUpdate{d: d, id: a.DeviceID, out: updateDeviceResult{DeviceID: a.DeviceID, Device: labelOf(before), Changes: []deviceChange{}}}
	u.form(ctx, before, a)
	u.enabled(ctx, before, a.Enabled)
	u.preferences(ctx, before, a.Preferences)
	u.out.Success = len(u.out.Errors) == 0
	u.out.Undo = undoOf(a.DeviceID, u.out.Changes)
	d.Log(ctx, "info", CompHubAdmin, fmt.Sprintf("Updated device %s: %d changes, %d errors", a.DeviceID, len(u.out.Changes), len(u.out.Errors)))
	return u.out, nil
}

func settingNames(m hubitat.DeviceModel) string {
	names := make([]string, len(m.Settings))
	for i, s := range m.Settings {
		names[i] = s.Name
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// deviceUpdate applies one call's changes, each on its own, recording what landed.
type deviceUpdate struct {
	d   Deps
	id  string
	out updateDeviceResult
}

func (u *deviceUpdate) fail(prop string, err error) {
	u.out.Errors = append(u.out.Errors, fieldError{Property: prop, Error: toolkit.AsError(hubError(err, true, "")).Message})
}

// form sends label, name and room in one wholesale edit form.
func (u *deviceUpdate) form(ctx context.Context, before hubitat.DeviceModel, a updateDeviceArgs) {
	over := map[string]string{}
	if a.Label != nil {
		over["label"] = *a.Label
	}
	if a.Name != nil {
		over["name"] = *a.Name
	}
	if a.Room != nil {
		roomID := "0"
		if strings.TrimSpace(*a.Room) != "" {
			rm, err := u.d.findRoom(ctx, *a.Room)
			if err != nil {
				u.out.Errors = append(u.out.Errors, fieldError{Property: "room", Error: toolkit.AsError(err).Message})
				delete(over, "roomId")
				a.Room = nil
			} else {
				roomID = rm.ID
			}
		}
		if a.Room != nil {
			over["roomId"] = roomID
		}
	}
	if len(over) == 0 {
		return
	}
	after, err := u.d.Hub.UpdateDevice(ctx, u.id, over)
	if err != nil {
		u.fail(strings.Join(slices.Sorted(maps.Keys(over)), ","), err)
		return
	}
	add := func(prop, from, to string) {
		if from != to {
			u.out.Changes = append(u.out.Changes, deviceChange{Property: prop, From: from, To: to})
		}
	}
	add("label", before.Label, after.Label)
	add("name", before.Name, after.Name)
	add("room", before.RoomName, after.RoomName)
	u.out.Device = labelOf(after)
}

func (u *deviceUpdate) enabled(ctx context.Context, before hubitat.DeviceModel, enabled *bool) {
	if enabled == nil || before.Disabled == !*enabled {
		return
	}
	if err := u.d.Hub.SetDeviceDisabled(ctx, u.id, !*enabled); err != nil {
		u.fail("enabled", err)
		return
	}
	u.out.Changes = append(u.out.Changes, deviceChange{Property: "enabled", From: fmt.Sprint(!before.Disabled), To: fmt.Sprint(*enabled)})
}

func (u *deviceUpdate) preferences(ctx context.Context, before hubitat.DeviceModel, prefs map[string]string) {
	if len(prefs) == 0 {
		return
	}
	var set []hubitat.Setting
	for _, name := range slices.Sorted(maps.Keys(prefs)) {
		cur, _ := before.Setting(name)
		set = append(set, hubitat.Setting{Name: name, Type: cur.Type, Value: prefs[name]})
	}
	if _, err := u.d.Hub.SavePreferences(ctx, u.id, set); err != nil {
		u.fail("preferences", err)
		return
	}
	for _, s := range set {
		cur, _ := before.Setting(s.Name)
		u.out.Changes = append(u.out.Changes, deviceChange{Property: "preference." + s.Name, From: shownSetting(cur, cur.Value), To: shownSetting(cur, s.Value)})
	}
}

// secretSetting is a driver preference that holds a secret: a password input, or a name a secret is
// stored under (a camera's password, an API key). Its value never reaches the answer, the question
// or the undo: a model could otherwise read one back by "changing" it.
func secretSetting(s hubitat.Setting) bool {
	return strings.EqualFold(s.Type, "password") || redact.Key(s.Name)
}

func shownSetting(s hubitat.Setting, v string) string {
	if secretSetting(s) {
		return redact.Hidden
	}
	return v
}

// undoOf is the call that puts the changed settings back.
func undoOf(id string, changes []deviceChange) string {
	if len(changes) == 0 {
		return ""
	}
	var args []string
	prefs := map[string]string{}
	for _, c := range changes {
		switch {
		case c.Property == "enabled":
			args = append(args, fmt.Sprintf(`"enabled": %s`, c.From))
		case strings.HasPrefix(c.Property, "preference.") && c.From == redact.Hidden:
			// a secret's earlier value is not kept: the user sets it again on the hub
		case strings.HasPrefix(c.Property, "preference."):
			prefs[strings.TrimPrefix(c.Property, "preference.")] = c.From
		default:
			args = append(args, fmt.Sprintf("%q: %q", c.Property, c.From))
		}
	}
	if len(prefs) > 0 {
		var p []string
		for _, k := range slices.Sorted(maps.Keys(prefs)) {
			p = append(p, fmt.Sprintf("%q: %q", k, prefs[k]))
		}
		args = append(args, `"preferences": {`+strings.Join(p, ", ")+"}")
	}
	return fmt.Sprintf(`hubitat_update_device {"deviceId": %q, %s}`, id, strings.Join(args, ", "))
}

package rules

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	simhub "github.com/hamcp/hamcp/dev/sim/hubitat"
	"github.com/hamcp/hamcp/src/hubitat"
)

// The simulated hub's devices, read once per package through the real client over loopback
// (/devices/all): validation and export tests check rules against them. The hub is closed as
// soon as the list is read; the devices are plain data.
var simDevices = sync.OnceValues(func() ([]hubitat.Device, error) {
	h := simhub.New(simhub.Options{})
	defer h.Close()
	url, err := h.Start(context.Background(), "")
	if err != nil {
		return nil, err
	}
	c, err := hubitat.New(hubitat.Options{URL: url, AppID: h.AppID(), Token: h.Token()})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.AllDevices(context.Background())
})

// notifier is a notification device (a phone in the Hubitat app): the simulated hub has none,
// and send_notification needs one.
var notifier = hubitat.Device{ID: "90", Label: "Alex's iPhone", Capabilities: []string{"Notification"},
	Commands: []hubitat.Command{{Name: "deviceNotification", Args: []string{"STRING"}}}, Detailed: true}

// lookupOf is a DeviceLookup over a list; idPrefix renumbers the devices ("1" → "1001"), as
// another hub would.
func lookupOf(ds []hubitat.Device, idPrefix string) DeviceLookup {
	m := map[string]hubitat.Device{}
	for _, d := range ds {
		d.ID = idPrefix + d.ID
		m[d.ID] = d
	}
	return func(id string) (hubitat.Device, bool) { d, ok := m[id]; return d, ok }
}

func simLookup(t testing.TB) DeviceLookup {
	t.Helper()
	ds, err := simDevices()
	if err != nil {
		t.Fatal("simulated hub:", err)
	}
	if len(ds) < 20 {
		t.Fatalf("the simulated hub listed %d devices", len(ds))
	}
	return lookupOf(append(ds, notifier), "")
}

// everyTypeRule uses each of the 6 trigger types, 14 condition types and 29 action types, on
// the simulated hub's devices, and is valid.
const everyTypeRule = `{
  "name": "Every type", "description": "covers the model", "enabled": true, "conditionLogic": "any",
  "triggers": [
    {"type": "device_event", "deviceId": "12", "attribute": "motion", "value": "active", "duration": 30,
     "condition": {"type": "mode", "modes": ["Home", "Night"], "operator": "in"}},
    {"type": "device_event", "deviceIds": ["12", "13"], "attribute": "motion", "value": "inactive", "matchMode": "all"},
    {"type": "device_event", "deviceId": "4", "attribute": "power", "operator": ">", "value": 100},
    {"type": "button_event", "deviceId": "17", "action": "doubleTapped", "buttonNumber": 4},
    {"type": "time", "time": "07:30"},
    {"type": "time", "time": "22:15"},
    {"type": "time", "sunset": true, "offset": -30},
    {"type": "periodic", "interval": 15, "unit": "minutes"},
    {"type": "mode_change", "fromMode": "Away", "toMode": "Home"},
    {"type": "hsm_change", "status": "armedAway"}
  ],
  "conditions": [
    {"type": "device_state", "deviceId": "1", "attribute": "switch", "operator": "equals", "value": "on"},
    {"type": "device_was", "deviceId": "10", "attribute": "contact", "value": "open", "forSeconds": 300},
    {"type": "time_range", "start": "sunset-30", "end": "23:00"},
    {"type": "mode", "mode": "Home"},
    {"type": "variable", "variableName": "guests", "operator": ">=", "value": 2},
    {"type": "days_of_week", "days": ["Saturday", "Sunday"]},
    {"type": "sun_position", "position": "down"},
    {"type": "hsm_status", "status": "disarmed"},
    {"type": "presence", "deviceId": "24", "status": "present"},
    {"type": "lock", "deviceId": "8", "status": "locked"},
    {"type": "thermostat_mode", "deviceId": "16", "mode": "heat"},
    {"type": "thermostat_state", "deviceId": "16", "state": "idle"},
    {"type": "illuminance", "deviceId": "13", "operator": "<", "value": 50},
    {"type": "power", "deviceId": "4", "operator": ">", "value": 5}
  ],
  "actions": [
    {"type": "device_command", "deviceId": "3", "command": "on"},
    {"type": "toggle_device", "deviceId": "1"},
    {"type": "activate_scene", "sceneDeviceId": "27"},
    {"type": "set_level", "deviceId": "2", "level": 40, "duration": 5},
    {"type": "set_color", "deviceId": "5", "hue": 66, "saturation": 100, "level": 80},
    {"type": "set_color_temperature", "deviceId": "7", "temperature": 2700, "level": 50},
    {"type": "lock", "deviceId": "8"},
    {"type": "unlock", "deviceId": "9"},
    {"type": "set_variable", "variableName": "lastMotion", "value": "%time%"},
    {"type": "set_local_variable", "variableName": "count", "value": 1},
    {"type": "set_mode", "mode": "Night"},
    {"type": "set_hsm", "status": "armNight"},
    {"type": "delay", "seconds": 120, "delayId": "off-later"},
    {"type": "if_then_else", "condition": {"type": "device_state", "deviceId": "12", "attribute": "motion", "value": "active"},
     "thenActions": [{"type": "cancel_delayed", "delayId": "off-later"}, {"type": "stop"}],
     "elseActions": [{"type": "repeat", "times": 3, "actions": [{"type": "log", "message": "blink %count%", "level": "debug"}]}]},
    {"type": "capture_state", "deviceIds": ["1", "5"], "stateId": "before"},
    {"type": "restore_state", "stateId": "before"},
    {"type": "send_notification", "deviceId": "90", "message": "%device% is %value%"},
    {"type": "set_thermostat", "deviceId": "16", "thermostatMode": "heat", "heatingSetpoint": 68, "coolingSetpoint": 76, "fanMode": "auto"},
    {"type": "http_request", "url": "https://example.com/hook", "method": "POST", "body": "{\"v\":\"%value%\"}", "contentType": "application/json"},
    {"type": "speak", "deviceId": "23", "message": "Hello", "volume": 30},
    {"type": "comment", "text": "the end of the evening"},
    {"type": "set_valve", "deviceId": "21", "command": "close"},
    {"type": "set_fan_speed", "deviceId": "22", "speed": "medium-low"},
    {"type": "set_shade", "deviceId": "19", "position": 40},
    {"type": "set_shade", "deviceId": "20", "command": "close"},
    {"type": "variable_math", "variableName": "count", "operation": "add", "operand": 1, "scope": "local"}
  ],
  "localVariables": {"count": 0, "greeting": "hi", "armed": false}
}`

func mustDecode(t testing.TB, raw string) Rule {
	t.Helper()
	r, err := Decode([]byte(raw))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return r
}

func TestValidateAcceptsEveryType(t *testing.T) {
	t.Parallel()
	r := mustDecode(t, everyTypeRule)
	if probs := Validate(&r, simLookup(t)); len(probs) != 0 {
		t.Fatalf("problems in a valid rule:\n%v", Problems(probs))
	}
	seen := map[string]bool{}
	for _, tr := range r.Triggers {
		seen["trigger "+tr.Type] = true
	}
	for _, c := range r.Conditions {
		seen["condition "+c.Type] = true
	}
	WalkActions(&r, func(_ string, a *Action) { seen["action "+a.Type] = true })
	for kind, types := range map[string][]string{"trigger": TriggerTypes, "condition": ConditionTypes, "action": ActionTypes} {
		for _, typ := range types {
			if !seen[kind+" "+typ] {
				t.Errorf("everyTypeRule has no %s %s", kind, typ)
			}
		}
	}
	if len(TriggerTypes) != 6 || len(ConditionTypes) != 14 || len(ActionTypes) != 29 {
		t.Errorf("types: %d triggers, %d conditions, %d actions; upstream has 6, 14, 29", len(TriggerTypes), len(ConditionTypes), len(ActionTypes))
	}
}

// edit decodes everyTypeRule, lets f change the generic JSON, and decodes the result.
func edit(t testing.TB, f func(m map[string]any)) Rule {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(everyTypeRule), &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return mustDecode(t, string(b))
}

// at returns the object at a path of list indexes and keys: at(m, "actions", 13, "thenActions", 0).
func at(m map[string]any, path ...any) map[string]any {
	var cur any = m
	for _, p := range path {
		switch k := p.(type) {
		case string:
			cur = cur.(map[string]any)[k]
		case int:
			cur = cur.([]any)[k]
		}
	}
	return cur.(map[string]any)
}

// set replaces a list or a field.
func setList(m map[string]any, key string, items ...string) {
	list := make([]any, len(items))
	for i, s := range items {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			panic(fmt.Sprintf("%s: %v", s, err))
		}
		list[i] = v
	}
	m[key] = list
}

func nest(depth int, leaf string) string {
	s := leaf
	for range depth {
		s = `{"type":"if_then_else","condition":{"type":"mode","mode":"Home"},"thenActions":[` + s + `]}`
	}
	return s
}

func TestValidateProblems(t *testing.T) {
	t.Parallel()
	devices := simLookup(t)
	cases := []struct {
		name string
		edit func(m map[string]any)
		path string // the problem expected (the only one)
		want string // in its message
	}{
		{"no name", func(m map[string]any) { m["name"] = "  " }, "name", "is required"},
		{"bad logic", func(m map[string]any) { m["conditionLogic"] = "most" }, "conditionLogic", "all (every condition"},
		{"no triggers", func(m map[string]any) { delete(m, "triggers") }, "triggers", "at least one trigger: one of button_event, device_event"},
		{"no actions", func(m map[string]any) { m["actions"] = []any{} }, "actions", "at least one action"},
		{"unknown trigger type", func(m map[string]any) { at(m, "triggers", 1)["type"] = "webhook" }, "triggers[1].type", `"webhook" is not a trigger type`},
		{"expression refused", func(m map[string]any) {
			setList(m, "conditions", `{"type":"expression"}`)
		}, "conditions[0].type", "expression conditions are not supported"},
		{"missing device", func(m map[string]any) { at(m, "triggers", 0)["deviceId"] = "999" }, "triggers[0].deviceId", `no device "999"`},
		{"device in a nested list", func(m map[string]any) {
			at(m, "actions", 13, "elseActions", 0)["actions"] = []any{map[string]any{"type": "toggle_device", "deviceId": "77"}}
		}, "actions[13].elseActions[0].actions[0].deviceId", `no device "77"`},
		{"attribute the device lacks", func(m map[string]any) { at(m, "triggers", 0)["attribute"] = "contact" }, "triggers[0].attribute", `Living Room Motion (12) has no attribute "contact"`},
		{"attribute of one of several", func(m map[string]any) { at(m, "triggers", 1)["deviceIds"] = []any{"12", "10"} }, "triggers[1].attribute", `Front Door Contact (10) has no attribute "motion"`},
		{"deviceId and deviceIds", func(m map[string]any) { at(m, "triggers", 1)["deviceId"] = "12" }, "triggers[1].deviceIds", "not both"},
		{"device listed twice", func(m map[string]any) { at(m, "triggers", 1)["deviceIds"] = []any{"12", "12"} }, "triggers[1].deviceIds[1]", "listed twice"},
		{"duration too long", func(m map[string]any) { at(m, "triggers", 0)["duration"] = 7201 }, "triggers[0].duration", "0 to 7200 seconds"},
		{"numeric operator, text value", func(m map[string]any) { at(m, "triggers", 2)["value"] = "high" }, "triggers[2].value", `> compares numbers; "high" is not a number`},
		{"operator without value", func(m map[string]any) { delete(at(m, "triggers", 2), "value") }, "triggers[2].value", "is required"},
		{"bad operator", func(m map[string]any) { at(m, "triggers", 2)["operator"] = "~" }, "triggers[2].operator", `"~" is not an operator; use one of "equals"`},
		{"bad matchMode", func(m map[string]any) { at(m, "triggers", 1)["matchMode"] = "most" }, "triggers[1].matchMode", `use one of "any", "all"`},
		{"button action the device lacks", func(m map[string]any) { at(m, "triggers", 3)["deviceId"] = "18" }, "triggers[3]", ""},
		{"button number beyond the device's", func(m map[string]any) { at(m, "triggers", 3)["buttonNumber"] = 5 }, "triggers[3].buttonNumber", "1 to 4"},
		{"button action unknown", func(m map[string]any) { at(m, "triggers", 3)["action"] = "tapped" }, "triggers[3].action", `"tapped" is not a button action`},
		{"bad clock time", func(m map[string]any) { at(m, "triggers", 4)["time"] = "25:00" }, "triggers[4].time", "use HH:mm"},
		{"time and sunset", func(m map[string]any) { at(m, "triggers", 4)["sunset"] = true }, "triggers[4]", "give one of time, sunrise or sunset"},
		{"empty time trigger", func(m map[string]any) { delete(at(m, "triggers", 4), "time") }, "triggers[4]", "a time trigger needs time"},
		{"offset out of range", func(m map[string]any) { at(m, "triggers", 6)["offset"] = -181 }, "triggers[6].offset", "-180 to 180 minutes"},
		{"offset on a clock time", func(m map[string]any) { at(m, "triggers", 4)["offset"] = 10 }, "triggers[4].offset", "applies to sunrise and sunset only"},
		{"periodic minutes", func(m map[string]any) { at(m, "triggers", 7)["interval"] = 60 }, "triggers[7].interval", "1 to 59 minutes"},
		{"periodic hours", func(m map[string]any) { at(m, "triggers", 7)["interval"] = 24; at(m, "triggers", 7)["unit"] = "hours" }, "triggers[7].interval", "1 to 23 hours"},
		{"periodic days", func(m map[string]any) { at(m, "triggers", 7)["interval"] = 32; at(m, "triggers", 7)["unit"] = "days" }, "triggers[7].interval", "1 to 31 days"},
		{"periodic unit", func(m map[string]any) { at(m, "triggers", 7)["unit"] = "weeks" }, "triggers[7].unit", `"weeks" is not a unit`},
		{"mode change to itself", func(m map[string]any) { at(m, "triggers", 8)["toMode"] = "Away" }, "triggers[8].toMode", "never fires"},
		{"hsm event status", func(m map[string]any) { at(m, "triggers", 9)["status"] = "armAway" }, "triggers[9].status", `"armAway" is not an HSM status`},
		{"trigger gate checked", func(m map[string]any) { at(m, "triggers", 0, "condition")["operator"] = "maybe" }, "triggers[0].condition.operator", `"maybe" is not a mode operator`},
		{"field of another type", func(m map[string]any) { at(m, "triggers", 4)["interval"] = 5 }, "triggers[4].interval", "does not apply to time, which takes time, sunrise, sunset, offset, condition"},
		{"device_state without value", func(m map[string]any) { delete(at(m, "conditions", 0), "value") }, "conditions[0].value", "is required"},
		{"device_was operator", func(m map[string]any) { at(m, "conditions", 1)["operator"] = ">" }, "conditions[1].operator", "equals only"},
		{"device_was forSeconds", func(m map[string]any) { at(m, "conditions", 1)["forSeconds"] = 0 }, "conditions[1].forSeconds", "1 to 7200 seconds"},
		{"time_range bound", func(m map[string]any) { at(m, "conditions", 2)["end"] = "midnight" }, "conditions[2].end", "is not a time"},
		{"time_range sun offset too far", func(m map[string]any) { at(m, "conditions", 2)["start"] = "sunset-200" }, "conditions[2].start", "at most 180"},
		{"time_range missing end", func(m map[string]any) { delete(at(m, "conditions", 2), "end") }, "conditions[2].end", "is required"},
		{"mode and modes", func(m map[string]any) { at(m, "conditions", 3)["modes"] = []any{"Away"} }, "conditions[3].modes", "not both"},
		{"variable without name", func(m map[string]any) { delete(at(m, "conditions", 4), "variableName") }, "conditions[4].variableName", "is required"},
		{"day name", func(m map[string]any) { at(m, "conditions", 5)["days"] = []any{"Funday"} }, "conditions[5].days[0]", `"Funday" is not a day`},
		{"sun position", func(m map[string]any) { at(m, "conditions", 6)["position"] = "set" }, "conditions[6].position", `use one of "up", "down"`},
		{"hsm status condition", func(m map[string]any) { at(m, "conditions", 7)["status"] = "allDisarmed" }, "conditions[7].status", "is not an HSM status"},
		{"presence status", func(m map[string]any) { at(m, "conditions", 8)["status"] = "away" }, "conditions[8].status", `"present", "not present"`},
		{"presence on a lamp", func(m map[string]any) { at(m, "conditions", 8)["deviceId"] = "1" }, "conditions[8].attribute", `has no attribute "presence"`},
		{"lock status", func(m map[string]any) { at(m, "conditions", 9)["status"] = "open" }, "conditions[9].status", "is not a lock status"},
		{"thermostat mode", func(m map[string]any) { at(m, "conditions", 10)["mode"] = "eco" }, "conditions[10].mode", "is not a thermostat mode"},
		{"thermostat state", func(m map[string]any) { at(m, "conditions", 11)["state"] = "off" }, "conditions[11].state", "is not a thermostat state"},
		{"illuminance value", func(m map[string]any) {
			at(m, "conditions", 12)["value"] = "dark"
			at(m, "conditions", 12)["operator"] = "equals"
		}, "conditions[12].value", "must be a number (lux)"},
		{"power on a sensor without it", func(m map[string]any) { at(m, "conditions", 13)["deviceId"] = "12" }, "conditions[13].attribute", `has no attribute "power"`},
		{"command the device lacks", func(m map[string]any) { at(m, "actions", 0)["command"] = "setLevel" }, "actions[0].command", `Porch Light (3) has no command "setLevel" (its commands: on, off, refresh)`},
		{"command name", func(m map[string]any) { at(m, "actions", 0)["command"] = "on; reboot" }, "actions[0].command", "is not a command name"},
		{"no command", func(m map[string]any) { delete(at(m, "actions", 0), "command") }, "actions[0].command", "is required"},
		{"toggle a sensor", func(m map[string]any) { at(m, "actions", 1)["deviceId"] = "10" }, "actions[1].deviceId", "Front Door Contact (10) cannot toggle: it has no on command"},
		{"scene device", func(m map[string]any) { at(m, "actions", 2)["sceneDeviceId"] = "" }, "actions[2].sceneDeviceId", "is required"},
		{"level range", func(m map[string]any) { at(m, "actions", 3)["level"] = 101 }, "actions[3].level", "0 to 100 %"},
		{"level text", func(m map[string]any) { at(m, "actions", 3)["level"] = "bright" }, "actions[3].level", `not "bright"`},
		{"set_level on a switch", func(m map[string]any) { at(m, "actions", 3)["deviceId"] = "3" }, "actions[3].deviceId", "no setLevel command"},
		{"hue missing", func(m map[string]any) { delete(at(m, "actions", 4), "hue") }, "actions[4].hue", "is required"},
		{"color temperature", func(m map[string]any) { at(m, "actions", 5)["temperature"] = 500 }, "actions[5].temperature", "1000 to 10000 kelvin"},
		{"unlock a lamp", func(m map[string]any) { at(m, "actions", 7)["deviceId"] = "1" }, "actions[7].deviceId", "cannot unlock"},
		{"variable name", func(m map[string]any) { at(m, "actions", 8)["variableName"] = "last motion" }, "actions[8].variableName", "a variable name is"},
		{"variable value", func(m map[string]any) { delete(at(m, "actions", 9), "value") }, "actions[9].value", "is required"},
		{"mode name", func(m map[string]any) { at(m, "actions", 10)["mode"] = "" }, "actions[10].mode", "is required"},
		{"hsm command", func(m map[string]any) { at(m, "actions", 11)["status"] = "armedAway" }, "actions[11].status", `use one of "armAway", "armHome", "armNight", "disarm"`},
		{"delay too long", func(m map[string]any) { at(m, "actions", 12)["seconds"] = 86401 }, "actions[12].seconds", "1 to 86400"},
		{"delay zero", func(m map[string]any) { at(m, "actions", 12)["seconds"] = 0 }, "actions[12].seconds", "1 to 86400"},
		{"delay id all", func(m map[string]any) { at(m, "actions", 12)["delayId"] = "all" }, "actions[12].delayId", "reserved"},
		{"if without condition", func(m map[string]any) { delete(at(m, "actions", 13), "condition") }, "actions[13].condition", "is required"},
		{"if without then", func(m map[string]any) { delete(at(m, "actions", 13), "thenActions") }, "actions[13].thenActions", "is required"},
		{"if condition checked", func(m map[string]any) { at(m, "actions", 13, "condition")["deviceId"] = "55" }, "actions[13].condition.deviceId", `no device "55"`},
		{"cancel without id", func(m map[string]any) { delete(at(m, "actions", 13, "thenActions", 0), "delayId") }, "actions[13].thenActions[0].delayId", "is required"},
		{"repeat too often", func(m map[string]any) { at(m, "actions", 13, "elseActions", 0)["times"] = 101 }, "actions[13].elseActions[0].times", "1 to 100 times"},
		{"repeat nothing", func(m map[string]any) { at(m, "actions", 13, "elseActions", 0)["actions"] = []any{} }, "actions[13].elseActions[0].actions", "is required"},
		{"log level", func(m map[string]any) { at(m, "actions", 13, "elseActions", 0, "actions", 0)["level"] = "error" }, "actions[13].elseActions[0].actions[0].level", `use one of "info", "warn", "debug"`},
		{"stop with a field", func(m map[string]any) { at(m, "actions", 13, "thenActions", 1)["message"] = "bye" }, "actions[13].thenActions[1].message", "does not apply to stop, which takes no other fields"},
		{"capture nothing", func(m map[string]any) { delete(at(m, "actions", 14), "deviceIds") }, "actions[14].deviceIds", "is required"},
		{"capture a missing device", func(m map[string]any) { at(m, "actions", 14)["deviceIds"] = []any{"1", "404"} }, "actions[14].deviceIds[1]", `no device "404"`},
		{"notification without a notifier", func(m map[string]any) { at(m, "actions", 16)["deviceId"] = "23" }, "actions[16].deviceId", "no deviceNotification command"},
		{"notification without text", func(m map[string]any) { at(m, "actions", 16)["message"] = " " }, "actions[16].message", "is required"},
		{"thermostat nothing to set", func(m map[string]any) {
			at(m, "actions", 17)["thermostatMode"], at(m, "actions", 17)["fanMode"] = "", ""
			delete(at(m, "actions", 17), "heatingSetpoint")
			delete(at(m, "actions", 17), "coolingSetpoint")
		}, "actions[17]", "needs at least one of"},
		{"thermostat setpoint", func(m map[string]any) { at(m, "actions", 17)["heatingSetpoint"] = 39 }, "actions[17].heatingSetpoint", "40–100 °F, or 4–38 °C"},
		{"heat above cool", func(m map[string]any) { at(m, "actions", 17)["heatingSetpoint"] = 80 }, "actions[17].heatingSetpoint", "above coolingSetpoint"},
		{"thermostat commands the device lacks", func(m map[string]any) { at(m, "actions", 17)["deviceId"] = "1" }, "actions[17]", ""},
		{"thermostat fan mode", func(m map[string]any) { at(m, "actions", 17)["fanMode"] = "high" }, "actions[17].fanMode", "is not a fan mode"},
		{"url scheme", func(m map[string]any) { at(m, "actions", 18)["url"] = "file:///etc/passwd" }, "actions[18].url", `must be http:// or https://, not "file:"`},
		{"url without host", func(m map[string]any) { at(m, "actions", 18)["url"] = "http:///x" }, "actions[18].url", "has no host"},
		{"url with credentials", func(m map[string]any) { at(m, "actions", 18)["url"] = "https://u:p@example.com/" }, "actions[18].url", "must not carry a user or password"},
		{"url with a placeholder", func(m map[string]any) { at(m, "actions", 18)["url"] = "https://example.com/?v=%value%" }, "actions[18].url", "not expanded"},
		{"post without body", func(m map[string]any) { delete(at(m, "actions", 18), "body") }, "actions[18].body", "is required with POST"},
		{"get with body", func(m map[string]any) { at(m, "actions", 18)["method"] = "get" }, "actions[18].body", "is sent with POST only"},
		{"method", func(m map[string]any) { at(m, "actions", 18)["method"] = "DELETE" }, "actions[18].method", "use GET (the default) or POST"},
		{"speak volume", func(m map[string]any) { at(m, "actions", 19)["volume"] = 150 }, "actions[19].volume", "0 to 100 %"},
		{"comment text", func(m map[string]any) { delete(at(m, "actions", 20), "text") }, "actions[20].text", "is required"},
		{"valve command", func(m map[string]any) { at(m, "actions", 21)["command"] = "shut" }, "actions[21].command", `use one of "open", "close"`},
		{"fan speed", func(m map[string]any) { at(m, "actions", 22)["speed"] = "turbo" }, "actions[22].speed", "is not a fan speed"},
		{"shade both", func(m map[string]any) { at(m, "actions", 23)["command"] = "open" }, "actions[23].position", "not both"},
		{"shade neither", func(m map[string]any) { delete(at(m, "actions", 23), "position") }, "actions[23]", "needs command (open or close) or position"},
		{"shade position", func(m map[string]any) { at(m, "actions", 23)["position"] = -1 }, "actions[23].position", "0 to 100 %"},
		{"math operation", func(m map[string]any) { at(m, "actions", 25)["operation"] = "power" }, "actions[25].operation", "is not an operation"},
		{"math operand", func(m map[string]any) { at(m, "actions", 25)["operand"] = "one" }, "actions[25].operand", `must be a number (or a %variable%), not "one"`},
		{"math scope", func(m map[string]any) { at(m, "actions", 25)["scope"] = "hub" }, "actions[25].scope", `use one of "local", "global"`},
		{"local variable value", func(m map[string]any) { m["localVariables"] = map[string]any{"bad name": 1} }, "localVariables.bad name", "a variable name is"},
		{"nesting deeper than 8", func(m map[string]any) {
			setList(m, "actions", nest(8, `{"type":"stop"}`))
		}, "actions[0].thenActions[0].thenActions[0].thenActions[0].thenActions[0].thenActions[0].thenActions[0].thenActions[0].thenActions", "deeper than 8 levels"},
		{"nested repeats multiply", func(m map[string]any) {
			setList(m, "actions", `{"type":"repeat","times":100,"actions":[{"type":"repeat","times":11,"actions":[{"type":"stop"}]}]}`)
		}, "actions[0].actions[0].times", "1100 times; at most 1000"},
		{"too many actions", func(m map[string]any) {
			items := make([]string, MaxActions+1)
			for i := range items {
				items[i] = `{"type":"stop"}`
			}
			setList(m, "actions", items...)
		}, "actions", "501 actions counting nested ones; at most 500"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := edit(t, tc.edit)
			probs := Validate(&r, devices)
			if tc.want == "" { // any number of problems, all at path
				if len(probs) == 0 {
					t.Fatalf("%d problems at %s", len(probs), tc.path)
				}
				for _, p := range probs {
					if !strings.HasPrefix(p.Path, tc.path) {
						t.Errorf("problem elsewhere: %v", p)
					}
				}
				return
			}
			if len(probs) != 1 || probs[0].Path != tc.path || !strings.Contains(probs[0].Message, tc.want) {
				t.Fatalf("want one problem %s: …%s…; got\n%v", tc.path, tc.want, Problems(probs))
			}
		})
	}
}

// Upstream's v0.4.1 validator refused these; hamcp allows them.
func TestValidateAllowsWhatUpstreamRefused(t *testing.T) {
	t.Parallel()
	devices := simLookup(t)
	cases := []struct{ name, rule string }{
		{"several time triggers", `{"name":"x","triggers":[{"type":"time","time":"06:00"},{"type":"time","time":"18:00"},
			{"type":"time","sunrise":true},{"type":"time","sunset":true,"offset":15}],"actions":[{"type":"stop"}]}`},
		{"sun bounds in a time range", `{"name":"x","triggers":[{"type":"periodic","interval":5}],
			"conditions":[{"type":"time_range","start":"sunset-30","end":"sunrise+45"}],"actions":[{"type":"stop"}]}`},
		{"plain sun bounds", `{"name":"x","triggers":[{"type":"periodic","interval":5}],
			"conditions":[{"type":"time_range","startTime":"sunrise","endTime":"sunset"}],"actions":[{"type":"stop"}]}`},
		{"delay inside if and repeat", `{"name":"x","triggers":[{"type":"periodic","interval":5}],"actions":[
			{"type":"repeat","times":2,"actions":[{"type":"delay","seconds":5}]},
			{"type":"if_then_else","condition":{"type":"mode","mode":"Home"},"thenActions":[{"type":"delay","seconds":5}]}]}`},
		{"nesting of 8", `{"name":"x","triggers":[{"type":"periodic","interval":5}],"actions":[` + nest(7, `{"type":"stop"}`) + `]}`},
		{"repeats multiplying to 1000", `{"name":"x","triggers":[{"type":"periodic","interval":5}],"actions":[
			{"type":"repeat","times":10,"actions":[{"type":"repeat","times":100,"actions":[{"type":"stop"}]}]}]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := mustDecode(t, tc.rule)
			if probs := Validate(&r, devices); len(probs) != 0 {
				t.Fatalf("refused:\n%v", Problems(probs))
			}
		})
	}
}

// Without a lookup the rule's shape is still checked; devices are not.
func TestValidateWithoutDevices(t *testing.T) {
	t.Parallel()
	r := edit(t, func(m map[string]any) {
		at(m, "actions", 0)["deviceId"] = "4040"
		at(m, "actions", 3)["level"] = 200
	})
	probs := Validate(&r, nil)
	if len(probs) != 1 || probs[0].Path != "actions[3].level" {
		t.Fatalf("want only actions[3].level; got\n%v", Problems(probs))
	}
	r.Actions[0].DeviceID = ""
	if probs := Validate(&r, nil); len(probs) != 2 || probs[0].Path != "actions[0].deviceId" {
		t.Fatalf("an empty device id is still required; got\n%v", Problems(probs))
	}
}

// A rule that is mostly wrong gets its first problems and a count, not a wall of text.
func TestValidateCapsProblems(t *testing.T) {
	t.Parallel()
	r := edit(t, func(m map[string]any) {
		items := make([]string, 60)
		for i := range items {
			items[i] = `{"type":"toggle_device"}`
		}
		setList(m, "actions", items...)
		m["name"] = ""
	})
	probs := Validate(&r, simLookup(t))
	if len(probs) != maxProblems+1 || probs[0].Path != "name" || probs[maxProblems] != (Problem{Message: "and 11 more problems"}) {
		t.Fatalf("got %d problems, first %v, last %v", len(probs), probs[0], probs[len(probs)-1])
	}
}

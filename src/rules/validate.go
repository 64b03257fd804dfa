package rules

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/hamcp/hamcp/src/hubitat"
)

// Validation. Every rule of upstream's model (reference §3) is checked before a rule is stored:
// required fields per type, ranges, enums, devices that exist and have the command or attribute
// the rule uses. Each Problem names its path and says what is allowed, because the reader is a
// model that fixes its rule from the message alone. Where upstream was too narrow, hamcp allows
// more: several time triggers in a rule, sunrise/sunset bounds with offsets in a time_range.
// Where upstream was unbounded, hamcp bounds: how deep actions nest, how many there are, how
// many times nested repeats multiply (a rule runs unattended on the user's hub).

// Problem is one fault in a rule: where (a path inside the rule, "actions[2].thenActions[0].deviceId")
// and what is allowed there.
type Problem struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// DeviceLookup finds a device the rule refers to (the hub client's cache in the engine).
type DeviceLookup func(id string) (hubitat.Device, bool)

// Limits of a rule.
const (
	MaxNesting     = 8    // levels of action lists (top level is 1)
	MaxTriggers    = 50   //
	MaxConditions  = 50   //
	MaxActions     = 500  // counted at every depth
	MaxRepeatRuns  = 1000 // nested repeats' times multiplied
	MaxDeviceList  = 100  // deviceIds of one trigger or capture
	MaxDuration    = 7200 // device_event duration, device_was forSeconds
	MaxOffset      = 180  // sun offsets, minutes
	maxNameRunes   = 200
	maxTextRunes   = 10000
	maxParameters  = 10
	minColorKelvin = 1000
	maxColorKelvin = 10000
)

// The fields each type takes (besides "type", and a trigger's "condition"). Decode's unknown-field
// messages and Validate's "does not apply" use them.
var (
	triggerFields = map[string]string{
		"device_event": "deviceId deviceIds attribute value operator duration matchMode",
		"button_event": "deviceId action buttonNumber",
		"time":         "time sunrise sunset offset",
		"periodic":     "interval unit",
		"mode_change":  "fromMode toMode",
		"hsm_change":   "status",
	}
	conditionFields = map[string]string{
		"device_state":     "deviceId attribute operator value",
		"device_was":       "deviceId attribute operator value forSeconds",
		"time_range":       "start end",
		"mode":             "mode modes operator",
		"variable":         "variableName operator value",
		"days_of_week":     "days",
		"sun_position":     "position",
		"hsm_status":       "status",
		"presence":         "deviceId status",
		"lock":             "deviceId status",
		"thermostat_mode":  "deviceId mode",
		"thermostat_state": "deviceId state",
		"illuminance":      "deviceId operator value",
		"power":            "deviceId operator value",
	}
	actionFields = map[string]string{
		"device_command":        "deviceId command parameters",
		"toggle_device":         "deviceId",
		"activate_scene":        "sceneDeviceId",
		"set_level":             "deviceId level duration",
		"set_color":             "deviceId hue saturation level",
		"set_color_temperature": "deviceId temperature level",
		"lock":                  "deviceId",
		"unlock":                "deviceId",
		"set_variable":          "variableName value",
		"set_local_variable":    "variableName value",
		"set_mode":              "mode",
		"set_hsm":               "status",
		"delay":                 "seconds delayId",
		"if_then_else":          "condition thenActions elseActions",
		"cancel_delayed":        "delayId",
		"repeat":                "times actions",
		"stop":                  "",
		"log":                   "message level",
		"capture_state":         "deviceIds stateId",
		"restore_state":         "stateId",
		"send_notification":     "deviceId message",
		"set_thermostat":        "deviceId thermostatMode heatingSetpoint coolingSetpoint fanMode",
		"http_request":          "url method body contentType",
		"speak":                 "deviceId message volume",
		"comment":               "text",
		"set_valve":             "deviceId command",
		"set_fan_speed":         "deviceId speed",
		"set_shade":             "deviceId command position",
		"variable_math":         "variableName operation operand scope",
	}
)

// TriggerTypes, ConditionTypes and ActionTypes list the types, sorted.
var (
	TriggerTypes   = sortedKeys(triggerFields)
	ConditionTypes = sortedKeys(conditionFields)
	ActionTypes    = sortedKeys(actionFields)
)

// fieldsForType lists the JSON fields a trigger, condition or action of type typ takes.
func fieldsForType(t reflect.Type, typ string) ([]string, bool) {
	var table map[string]string
	var extra []string
	switch t {
	case reflect.TypeFor[Trigger]():
		table, extra = triggerFields, []string{"condition"}
	case reflect.TypeFor[Condition]():
		table = conditionFields
	case reflect.TypeFor[Action]():
		table = actionFields
	default:
		return nil, false
	}
	f, ok := table[typ]
	if !ok {
		return nil, false
	}
	return append(strings.Fields(f), extra...), true
}

// Enums, as upstream spells them.
var (
	deviceOperators  = []string{"equals", "not_equals", ">", "<", ">=", "<="}
	numericOperators = []string{">", "<", ">=", "<="}
	buttonActions    = []string{"pushed", "held", "doubleTapped", "released"}
	hsmStatuses      = []string{"disarmed", "armedAway", "armedHome", "armedNight", "armingAway", "armingHome", "armingNight"}
	hsmEventStatuses = append(slices.Clone(hsmStatuses), "allDisarmed")
	hsmCommands      = []string{"armAway", "armHome", "armNight", "disarm"}
	thermostatModes  = []string{"auto", "cool", "heat", "off", "emergency heat"}
	thermostatStates = []string{"idle", "heating", "cooling", "fan only", "pending heat", "pending cool"}
	fanModes         = []string{"auto", "on", "circulate"}
	fanSpeeds        = []string{"low", "medium-low", "medium", "medium-high", "high", "on", "off", "auto"}
	mathOperations   = []string{"add", "subtract", "multiply", "divide", "modulo", "set"}
	logLevels        = []string{"info", "warn", "debug"}
	dayList          = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
)

// Validate reports every problem of r, in rule order (nil when there is none). devices nil skips
// the checks against the hub (devices that exist, commands and attributes they have).
func Validate(r *Rule, devices DeviceLookup) []Problem {
	v := &validator{devices: devices}
	v.rule(r)
	return capProblems(v.probs)
}

// maxProblems is how many problems are listed; a rule with more is mostly wrong, and its author
// learns more from fixing the first ones than from reading a thousand.
const maxProblems = 50

func capProblems(ps []Problem) []Problem {
	if len(ps) <= maxProblems {
		return ps
	}
	return append(ps[:maxProblems:maxProblems], Problem{Message: fmt.Sprintf("and %d more problems", len(ps)-maxProblems)})
}

type validator struct {
	devices DeviceLookup
	probs   []Problem
	actions int // counted so far, at every depth
}

func (v *validator) add(path, format string, a ...any) {
	v.probs = append(v.probs, Problem{Path: path, Message: fmt.Sprintf(format, a...)})
}

func (v *validator) rule(r *Rule) {
	switch name := strings.TrimSpace(r.Name); {
	case name == "":
		v.add("name", "is required: a short name for the rule")
	case utf8.RuneCountInString(r.Name) > maxNameRunes:
		v.add("name", "is longer than %d characters", maxNameRunes)
	}
	v.text("description", r.Description)
	if r.ConditionLogic != "" && r.ConditionLogic != "all" && r.ConditionLogic != "any" {
		v.add("conditionLogic", "must be all (every condition true, the default) or any (one is enough)")
	}
	switch {
	case len(r.Triggers) == 0:
		v.add("triggers", "needs at least one trigger: one of %s", strings.Join(TriggerTypes, ", "))
	case len(r.Triggers) > MaxTriggers:
		v.add("triggers", "has %d triggers; at most %d", len(r.Triggers), MaxTriggers)
	}
	for i := range r.Triggers {
		v.trigger(index("triggers", i), &r.Triggers[i])
	}
	if len(r.Conditions) > MaxConditions {
		v.add("conditions", "has %d conditions; at most %d", len(r.Conditions), MaxConditions)
	}
	for i := range r.Conditions {
		v.condition(index("conditions", i), &r.Conditions[i])
	}
	if len(r.Actions) == 0 {
		v.add("actions", "needs at least one action: one of %s", strings.Join(ActionTypes, ", "))
	}
	v.actionList("actions", r.Actions, 1, 1)
	if v.actions > MaxActions {
		v.add("actions", "has %d actions counting nested ones; at most %d", v.actions, MaxActions)
	}
	if len(r.LocalVariables) > maxLocals {
		v.add("localVariables", "has %d variables; at most %d", len(r.LocalVariables), maxLocals)
	}
	for _, name := range sortedKeys(r.LocalVariables) {
		path := join("localVariables", name)
		v.variableName(path, name)
		switch x := r.LocalVariables[name].(type) {
		case string:
			v.text(path, x)
		case bool, float64, int, int64:
		default:
			v.add(path, "must be a string, number or boolean")
		}
	}
}

// text bounds a free-text field.
func (v *validator) text(path, s string) {
	if utf8.RuneCountInString(s) > maxTextRunes {
		v.add(path, "is longer than %d characters", maxTextRunes)
	}
}

var variableNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.\-]{0,63}$`)

// variableName: names appear in %placeholders%, so they are one word.
func (v *validator) variableName(path, name string) {
	if !variableNameRE.MatchString(name) {
		v.add(path, "a variable name is a letter or _ then up to 63 letters, digits, _, . or - (it is used as %%name%%)")
	}
}

// onlyFields reports fields set that the type does not take (upstream ignored them silently,
// which hid a model's mistakes: a level on a toggle_device does nothing).
func (v *validator) onlyFields(path string, x any, typ string) {
	rv := reflect.ValueOf(x).Elem()
	allowed, _ := fieldsForType(rv.Type(), typ)
	fields := fieldsOf(rv.Type())
	for _, name := range fields.names {
		if name == "type" || slices.Contains(allowed, name) {
			continue
		}
		if !rv.Field(fields.byName[name]).IsZero() {
			if len(allowed) == 0 {
				v.add(join(path, name), "does not apply to %s, which takes no other fields", typ)
			} else {
				v.add(join(path, name), "does not apply to %s, which takes %s", typ, strings.Join(allowed, ", "))
			}
		}
	}
}

func (v *validator) oneOf(path, got string, allowed []string, what string) bool {
	if slices.Contains(allowed, got) {
		return true
	}
	if got == "" {
		v.add(path, "is required: %s", quoteList(allowed))
	} else {
		v.add(path, "%q is not %s; use %s", got, what, quoteList(allowed))
	}
	return false
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	if len(q) == 1 {
		return q[0]
	}
	return "one of " + strings.Join(q, ", ")
}

func (v *validator) optionalOneOf(path, got string, allowed []string, what string) {
	if got != "" {
		v.oneOf(path, got, allowed, what)
	}
}

func (v *validator) intRange(path string, n, lo, hi int, unit string) {
	if n < lo || n > hi {
		v.add(path, "must be %d to %d %s (it is %d)", lo, hi, unit, n)
	}
}

func (v *validator) floatRange(path string, f *float64, lo, hi float64, unit string, required bool) {
	switch {
	case f == nil:
		if required {
			v.add(path, "is required: %g to %g %s", lo, hi, unit)
		}
	case math.IsNaN(*f) || *f < lo || *f > hi:
		v.add(path, "must be %g to %g %s (it is %g)", lo, hi, unit, *f)
	}
}

// scalarRange checks a Scalar that must be a number within lo…hi.
func (v *validator) scalarRange(path string, s *Scalar, lo, hi float64, unit string, required bool) {
	if s == nil {
		if required {
			v.add(path, "is required: a number from %g to %g %s", lo, hi, unit)
		}
		return
	}
	f, ok := s.Float()
	if !ok {
		v.add(path, "must be a number from %g to %g %s, not %q", lo, hi, unit, s.Text)
		return
	}
	v.floatRange(path, &f, lo, hi, unit, true)
}

// device checks that id names a device on the hub and returns it (ok false when it does not, or
// when there is no lookup).
func (v *validator) device(path, id string) (hubitat.Device, bool) {
	if strings.TrimSpace(id) == "" {
		v.add(path, "is required: a device id (hubitat_list_devices lists them)")
		return hubitat.Device{}, false
	}
	if v.devices == nil {
		return hubitat.Device{}, false
	}
	d, ok := v.devices(id)
	if !ok {
		v.add(path, "no device %q on the hub that hamcp can use (hubitat_list_devices lists them; an import maps old ids with deviceMapping)", id)
	}
	return d, ok
}

// commands checks that d has one of cmds, when the hub told its commands (a /devices list entry
// does not; the hub client refuses such commands the same way).
func (v *validator) commands(path string, d hubitat.Device, what string, cmds ...string) {
	if (!d.Detailed && len(d.Commands) == 0) || slices.ContainsFunc(cmds, d.HasCommand) {
		return
	}
	v.add(path, "%s (%s) cannot %s: it has no %s command (its commands: %s)", d.DisplayName(), d.ID, what,
		strings.Join(cmds, " or "), commandNames(d))
}

func commandNames(d hubitat.Device) string {
	if len(d.Commands) == 0 {
		return "none"
	}
	names := make([]string, len(d.Commands))
	for i, c := range d.Commands {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// attribute checks that d reports attr, when the hub told its attributes.
func (v *validator) attribute(path string, d hubitat.Device, attr string) {
	if !d.Detailed && len(d.Attributes) == 0 {
		return
	}
	if _, ok := d.Attribute(attr); ok {
		return
	}
	names := make([]string, len(d.Attributes))
	for i, a := range d.Attributes {
		names[i] = a.Name
	}
	v.add(path, "%s (%s) has no attribute %q (its attributes: %s)", d.DisplayName(), d.ID, attr, strings.Join(names, ", "))
}

// deviceList checks a deviceIds list and returns the devices found.
func (v *validator) deviceList(path string, ids []string) []hubitat.Device {
	if len(ids) > MaxDeviceList {
		v.add(path, "lists %d devices; at most %d", len(ids), MaxDeviceList)
		return nil
	}
	var out []hubitat.Device
	seen := map[string]bool{}
	for i, id := range ids {
		if seen[id] {
			v.add(index(path, i), "device %q is listed twice", id)
			continue
		}
		seen[id] = true
		if d, ok := v.device(index(path, i), id); ok {
			out = append(out, d)
		}
	}
	return out
}

// operatorValue checks an operator (default equals) and the value it compares with.
func (v *validator) operatorValue(path, op string, val *Scalar, valueRequired bool) {
	if op != "" {
		v.oneOf(join(path, "operator"), op, deviceOperators, "an operator")
	}
	switch {
	case val == nil && (valueRequired || op != ""):
		v.add(join(path, "value"), "is required: the value to compare with")
	case val != nil && slices.Contains(numericOperators, op):
		if _, ok := val.Float(); !ok && !strings.Contains(val.Text, "%") {
			v.add(join(path, "value"), "%s compares numbers; %q is not a number", op, val.Text)
		}
	}
}

func (v *validator) trigger(path string, t *Trigger) {
	if _, ok := triggerFields[t.Type]; !ok {
		v.unknownType(join(path, "type"), t.Type, "trigger", TriggerTypes)
		return
	}
	v.onlyFields(path, t, t.Type)
	switch t.Type {
	case "device_event":
		var ds []hubitat.Device
		switch {
		case t.DeviceID != "" && len(t.DeviceIDs) > 0:
			v.add(join(path, "deviceIds"), "give deviceId (one device) or deviceIds (several), not both")
		case len(t.DeviceIDs) > 0:
			ds = v.deviceList(join(path, "deviceIds"), t.DeviceIDs)
		default:
			if d, ok := v.device(join(path, "deviceId"), t.DeviceID); ok {
				ds = append(ds, d)
			}
		}
		if t.Attribute == "" {
			v.add(join(path, "attribute"), "is required: the attribute whose events fire the rule (switch, motion, contact, …)")
		} else {
			for _, d := range ds {
				v.attribute(join(path, "attribute"), d, t.Attribute)
			}
		}
		v.operatorValue(path, t.Operator, t.Value, false)
		v.intRange(join(path, "duration"), t.Duration, 0, MaxDuration, "seconds")
		v.optionalOneOf(join(path, "matchMode"), t.MatchMode, []string{"any", "all"}, "a match mode")
	case "button_event":
		d, ok := v.device(join(path, "deviceId"), t.DeviceID)
		if v.oneOf(join(path, "action"), t.Action, buttonActions, "a button action") && ok {
			v.attribute(join(path, "action"), d, t.Action)
		}
		if t.ButtonNumber != nil {
			max := 100
			if a, found := d.Attribute("numberOfButtons"); found && ok {
				if n, isNum := a.Value.Float(); isNum && n >= 1 && n <= 100 {
					max = int(n)
				}
			}
			v.intRange(join(path, "buttonNumber"), *t.ButtonNumber, 1, max, "(the device's buttons)")
		}
	case "time":
		set := 0
		for _, b := range []bool{t.Time != "", t.Sunrise, t.Sunset} {
			if b {
				set++
			}
		}
		switch {
		case set == 0:
			v.add(path, "a time trigger needs time (\"HH:mm\", 24-hour), or sunrise: true or sunset: true with an optional offset in minutes")
		case set > 1:
			v.add(path, "give one of time, sunrise or sunset; several times in one rule are several time triggers")
		case t.Time != "":
			if ts, err := ParseTimeSpec(t.Time); err != nil || ts.Sun != "" {
				v.add(join(path, "time"), "%q is not a time: use HH:mm, 24-hour (\"07:30\"); for the sun use sunrise: true or sunset: true with offset", t.Time)
			}
			if t.Offset != 0 {
				v.add(join(path, "offset"), "applies to sunrise and sunset only")
			}
		}
		v.intRange(join(path, "offset"), t.Offset, -MaxOffset, MaxOffset, "minutes")
	case "periodic":
		limit := map[string]int{"minutes": 59, "hours": 23, "days": 31}
		unit := t.Unit
		if unit == "" {
			unit = "minutes"
		}
		if hi, ok := limit[unit]; !ok {
			v.add(join(path, "unit"), "%q is not a unit; use \"minutes\" (1–59), \"hours\" (1–23) or \"days\" (1–31)", t.Unit)
		} else {
			v.intRange(join(path, "interval"), t.Interval, 1, hi, unit)
		}
	case "mode_change":
		if t.FromMode != "" && t.FromMode == t.ToMode {
			v.add(join(path, "toMode"), "is the same as fromMode, so the trigger never fires; leave one out or change it")
		}
	case "hsm_change":
		v.optionalOneOf(join(path, "status"), t.Status, hsmEventStatuses, "an HSM status")
	}
	if t.Condition != nil {
		v.condition(join(path, "condition"), t.Condition)
	}
}

func (v *validator) unknownType(path, typ, what string, allowed []string) {
	switch typ {
	case "":
		v.add(path, "is required: the %s type, one of %s", what, strings.Join(allowed, ", "))
	case "expression":
		v.add(path, "expression conditions are not supported (no code runs in rules); combine conditions with conditionLogic, or use if_then_else")
	default:
		v.add(path, "%q is not a %s type; use one of %s", typ, what, strings.Join(allowed, ", "))
	}
}

func (v *validator) condition(path string, c *Condition) {
	if _, ok := conditionFields[c.Type]; !ok {
		v.unknownType(join(path, "type"), c.Type, "condition", ConditionTypes)
		return
	}
	v.onlyFields(path, c, c.Type)
	// deviceAttr checks the device and the attribute the condition reads.
	deviceAttr := func(attr string) {
		if d, ok := v.device(join(path, "deviceId"), c.DeviceID); ok && attr != "" {
			v.attribute(join(path, "attribute"), d, attr)
		}
	}
	switch c.Type {
	case "device_state":
		if c.Attribute == "" {
			v.add(join(path, "attribute"), "is required: the attribute to read (switch, level, temperature, …)")
		}
		deviceAttr(c.Attribute)
		v.operatorValue(path, c.Operator, c.Value, true)
	case "device_was":
		if c.Attribute == "" {
			v.add(join(path, "attribute"), "is required: the attribute to read")
		}
		deviceAttr(c.Attribute)
		if c.Operator != "" && c.Operator != "equals" {
			v.add(join(path, "operator"), "device_was compares with equals only; leave operator out")
		}
		if c.Value == nil {
			v.add(join(path, "value"), "is required: the value the attribute has had")
		}
		v.intRange(join(path, "forSeconds"), c.ForSeconds, 1, MaxDuration, "seconds")
	case "time_range":
		for _, b := range []struct{ name, val string }{{"start", c.Start}, {"end", c.End}} {
			if b.val == "" {
				v.add(join(path, b.name), "is required: \"HH:mm\" (24-hour), or sunrise/sunset with an optional offset (\"sunset-30\")")
			} else if _, err := ParseTimeSpec(b.val); err != nil {
				v.add(join(path, b.name), "%v", err)
			}
		}
	case "mode":
		switch {
		case c.Mode == "" && len(c.Modes) == 0:
			v.add(join(path, "modes"), "is required: the mode names (or mode, one name)")
		case c.Mode != "" && len(c.Modes) > 0:
			v.add(join(path, "modes"), "give mode (one name) or modes (a list), not both")
		}
		for i, m := range c.Modes {
			if strings.TrimSpace(m) == "" {
				v.add(index(join(path, "modes"), i), "is empty; give a mode name")
			}
		}
		v.optionalOneOf(join(path, "operator"), c.Operator, []string{"in", "not_in"}, "a mode operator")
	case "variable":
		if c.VariableName == "" {
			v.add(join(path, "variableName"), "is required: the variable to read")
		}
		v.operatorValue(path, c.Operator, c.Value, true)
	case "days_of_week":
		if len(c.Days) == 0 {
			v.add(join(path, "days"), "is required: a list of day names, Sunday to Saturday")
		}
		for i, day := range c.Days {
			v.oneOf(index(join(path, "days"), i), day, dayList, "a day")
		}
	case "sun_position":
		v.oneOf(join(path, "position"), c.Position, []string{"up", "down"}, "a sun position")
	case "hsm_status":
		v.oneOf(join(path, "status"), c.Status, hsmStatuses, "an HSM status")
	case "presence":
		deviceAttr("presence")
		v.oneOf(join(path, "status"), c.Status, []string{"present", "not present"}, "a presence status")
	case "lock":
		deviceAttr("lock")
		v.oneOf(join(path, "status"), c.Status, []string{"locked", "unlocked"}, "a lock status")
	case "thermostat_mode":
		deviceAttr("thermostatMode")
		v.oneOf(join(path, "mode"), c.Mode, thermostatModes, "a thermostat mode")
	case "thermostat_state":
		deviceAttr("thermostatOperatingState")
		v.oneOf(join(path, "state"), c.State, thermostatStates, "a thermostat state")
	case "illuminance", "power":
		deviceAttr(c.Type)
		v.operatorValue(path, c.Operator, c.Value, true)
		if c.Value != nil {
			if _, ok := c.Value.Float(); !ok {
				v.add(join(path, "value"), "must be a number (%s)", map[string]string{"illuminance": "lux", "power": "watts"}[c.Type])
			}
		}
	}
}

// actionList checks a list of actions at nesting depth (1 is the rule's own list); runs is how
// many times the enclosing repeats run each of them.
func (v *validator) actionList(path string, list []Action, depth, runs int) {
	if depth > MaxNesting && len(list) > 0 {
		v.add(path, "nests deeper than %d levels of if_then_else and repeat; flatten the rule", MaxNesting)
		return
	}
	for i := range list {
		v.actions++
		v.action(index(path, i), &list[i], depth, runs)
	}
}

func (v *validator) action(path string, a *Action, depth, runs int) {
	if _, ok := actionFields[a.Type]; !ok {
		v.unknownType(join(path, "type"), a.Type, "action", ActionTypes)
		return
	}
	v.onlyFields(path, a, a.Type)
	dev := func(what string, cmds ...string) {
		if d, ok := v.device(join(path, "deviceId"), a.DeviceID); ok {
			v.commands(join(path, "deviceId"), d, what, cmds...)
		}
	}
	switch a.Type {
	case "device_command":
		d, ok := v.device(join(path, "deviceId"), a.DeviceID)
		switch {
		case a.Command == "":
			v.add(join(path, "command"), "is required: a command the device has (hubitat_get_device lists them)")
		case !commandRE.MatchString(a.Command):
			v.add(join(path, "command"), "%q is not a command name (letters and digits, like on, setLevel)", a.Command)
		case ok && (d.Detailed || len(d.Commands) > 0) && !d.HasCommand(a.Command):
			v.add(join(path, "command"), "%s (%s) has no command %q (its commands: %s)", d.DisplayName(), d.ID, a.Command, commandNames(d))
		}
		if len(a.Parameters) > maxParameters {
			v.add(join(path, "parameters"), "has %d parameters; at most %d", len(a.Parameters), maxParameters)
		}
		for i, p := range a.Parameters {
			v.text(index(join(path, "parameters"), i), p)
		}
	case "toggle_device":
		dev("toggle", "on")
	case "activate_scene":
		if d, ok := v.device(join(path, "sceneDeviceId"), a.SceneDeviceID); ok {
			v.commands(join(path, "sceneDeviceId"), d, "be activated", "on")
		}
	case "set_level":
		dev("set a level", "setLevel")
		v.scalarRange(join(path, "level"), a.Level, 0, 100, "%", true)
		v.floatRange(join(path, "duration"), a.Duration, 0, MaxDuration, "seconds (fade time)", false)
	case "set_color":
		dev("set a color", "setColor")
		v.floatRange(join(path, "hue"), a.Hue, 0, 100, "(Hubitat's hue scale)", true)
		v.floatRange(join(path, "saturation"), a.Saturation, 0, 100, "%", true)
		v.scalarRange(join(path, "level"), a.Level, 0, 100, "%", false)
	case "set_color_temperature":
		dev("set a color temperature", "setColorTemperature")
		v.floatRange(join(path, "temperature"), a.Temperature, minColorKelvin, maxColorKelvin, "kelvin", true)
		v.scalarRange(join(path, "level"), a.Level, 0, 100, "%", false)
	case "lock":
		dev("lock", "lock")
	case "unlock":
		dev("unlock", "unlock")
	case "set_variable", "set_local_variable":
		if a.VariableName == "" {
			v.add(join(path, "variableName"), "is required: the variable to set")
		} else {
			v.variableName(join(path, "variableName"), a.VariableName)
		}
		if a.Value == nil {
			v.add(join(path, "value"), "is required: the value to set (a string, number or boolean; %%placeholders%% work)")
		} else {
			v.text(join(path, "value"), a.Value.Text)
		}
	case "set_mode":
		if strings.TrimSpace(a.Mode) == "" {
			v.add(join(path, "mode"), "is required: a mode name of the hub (hubitat_get_modes lists them)")
		}
	case "set_hsm":
		v.oneOf(join(path, "status"), a.Status, hsmCommands, "an HSM command")
	case "delay":
		v.intRange(join(path, "seconds"), a.Seconds, MinDelaySeconds, MaxDelaySeconds, "seconds (1 s to 24 h)")
		if a.DelayID == "all" {
			v.add(join(path, "delayId"), "\"all\" is reserved for cancel_delayed; choose another id")
		}
	case "cancel_delayed":
		if a.DelayID == "" {
			v.add(join(path, "delayId"), "is required: the delayId of a delay action, or \"all\"")
		}
	case "if_then_else":
		if a.Condition == nil {
			v.add(join(path, "condition"), "is required: one condition object (type device_state, mode, time_range, …)")
		} else {
			v.condition(join(path, "condition"), a.Condition)
		}
		if len(a.ThenActions) == 0 {
			v.add(join(path, "thenActions"), "is required: the actions to run when the condition is true")
		}
		v.actionList(join(path, "thenActions"), a.ThenActions, depth+1, runs)
		v.actionList(join(path, "elseActions"), a.ElseActions, depth+1, runs)
	case "repeat":
		v.intRange(join(path, "times"), a.Times, 1, MaxRepeat, "times")
		if len(a.Actions) == 0 {
			v.add(join(path, "actions"), "is required: the actions to repeat")
		}
		n := runs * max(a.Times, 1)
		if n > MaxRepeatRuns {
			v.add(join(path, "times"), "nested repeats would run these actions %d times; at most %d", n, MaxRepeatRuns)
			n = 1 // reported once, not again for every nested repeat
		}
		v.actionList(join(path, "actions"), a.Actions, depth+1, n)
	case "stop":
	case "log":
		if a.Message == "" {
			v.add(join(path, "message"), "is required: the text to log (%%placeholders%% work)")
		}
		v.text(join(path, "message"), a.Message)
		if a.Level != nil {
			v.oneOf(join(path, "level"), a.Level.Text, logLevels, "a log level")
		}
	case "capture_state":
		if len(a.DeviceIDs) == 0 {
			v.add(join(path, "deviceIds"), "is required: the devices whose switch, level and color to capture")
		}
		v.deviceList(join(path, "deviceIds"), a.DeviceIDs)
		v.text(join(path, "stateId"), a.StateID)
	case "restore_state":
		v.text(join(path, "stateId"), a.StateID)
	case "send_notification":
		dev("send a notification", "deviceNotification")
		v.message(path, a.Message)
	case "speak":
		dev("speak", "speak")
		v.message(path, a.Message)
		v.floatRange(join(path, "volume"), a.Volume, 0, 100, "%", false)
	case "set_thermostat":
		d, ok := v.device(join(path, "deviceId"), a.DeviceID)
		for _, f := range []struct {
			field, cmd string
			set        bool
		}{{"thermostatMode", "setThermostatMode", a.ThermostatMode != ""}, {"heatingSetpoint", "setHeatingSetpoint", a.HeatingSetpoint != nil},
			{"coolingSetpoint", "setCoolingSetpoint", a.CoolingSetpoint != nil}, {"fanMode", "setThermostatFanMode", a.FanMode != ""}} {
			if ok && f.set {
				v.commands(join(path, f.field), d, "take "+f.field, f.cmd)
			}
		}
		if a.ThermostatMode == "" && a.HeatingSetpoint == nil && a.CoolingSetpoint == nil && a.FanMode == "" {
			v.add(path, "set_thermostat needs at least one of thermostatMode, heatingSetpoint, coolingSetpoint, fanMode")
		}
		v.optionalOneOf(join(path, "thermostatMode"), a.ThermostatMode, thermostatModes, "a thermostat mode")
		v.optionalOneOf(join(path, "fanMode"), a.FanMode, fanModes, "a fan mode")
		v.setpoint(join(path, "heatingSetpoint"), a.HeatingSetpoint)
		v.setpoint(join(path, "coolingSetpoint"), a.CoolingSetpoint)
		if a.HeatingSetpoint != nil && a.CoolingSetpoint != nil && *a.HeatingSetpoint > *a.CoolingSetpoint {
			v.add(join(path, "heatingSetpoint"), "is above coolingSetpoint; heat to at most the cooling setpoint")
		}
	case "http_request":
		v.httpRequest(path, a)
	case "comment":
		if a.Text == "" {
			v.add(join(path, "text"), "is required: the comment")
		}
		v.text(join(path, "text"), a.Text)
	case "set_valve":
		if v.oneOf(join(path, "command"), a.Command, []string{"open", "close"}, "a valve command") {
			dev(a.Command, a.Command)
		} else {
			v.device(join(path, "deviceId"), a.DeviceID)
		}
	case "set_fan_speed":
		dev("set a fan speed", "setSpeed")
		v.oneOf(join(path, "speed"), a.Speed, fanSpeeds, "a fan speed")
	case "set_shade":
		switch {
		case a.Command != "" && a.Position != nil:
			v.add(join(path, "position"), "give command (open or close) or position (0–100), not both")
			v.device(join(path, "deviceId"), a.DeviceID)
		case a.Position != nil:
			dev("move to a position", "setPosition")
			v.floatRange(join(path, "position"), a.Position, 0, 100, "%", true)
		case a.Command != "":
			if v.oneOf(join(path, "command"), a.Command, []string{"open", "close"}, "a shade command") {
				dev(a.Command, a.Command)
			}
		default:
			v.add(path, "set_shade needs command (open or close) or position (0–100)")
			v.device(join(path, "deviceId"), a.DeviceID)
		}
	case "variable_math":
		if a.VariableName == "" {
			v.add(join(path, "variableName"), "is required: the variable to change")
		} else {
			v.variableName(join(path, "variableName"), a.VariableName)
		}
		v.oneOf(join(path, "operation"), a.Operation, mathOperations, "an operation")
		switch {
		case a.Operand == nil:
			v.add(join(path, "operand"), "is required: a number (or a %%variable%%)")
		case !isPlaceholder(a.Operand.Text):
			if _, ok := a.Operand.Float(); !ok {
				v.add(join(path, "operand"), "must be a number (or a %%variable%%), not %q", a.Operand.Text)
			}
		}
		v.optionalOneOf(join(path, "scope"), a.Scope, []string{"local", "global"}, "a scope")
	}
}

var commandRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,63}$`)

// isPlaceholder: the whole text is one %placeholder% (placeholders.go's syntax).
func isPlaceholder(s string) bool {
	s = strings.TrimSpace(s)
	return s != "" && placeholder.FindString(s) == s
}

func (v *validator) message(path, msg string) {
	if strings.TrimSpace(msg) == "" {
		v.add(join(path, "message"), "is required: the text (%%placeholders%% work)")
	}
	v.text(join(path, "message"), msg)
}

// setpoint: 40–100 °F, or 4–38 °C on a hub set to Celsius (the rule does not know which).
func (v *validator) setpoint(path string, f *float64) {
	if f == nil {
		return
	}
	if x := *f; !(x >= 4 && x <= 38) && !(x >= 40 && x <= 100) {
		v.add(path, "must be 40–100 °F, or 4–38 °C on a hub set to Celsius (it is %g)", x)
	}
}

// httpRequest: http or https, written out (the URL is not expanded: where a request goes is
// what the user approved when the rule was made).
func (v *validator) httpRequest(path string, a *Action) {
	p := join(path, "url")
	if a.URL == "" {
		v.add(p, "is required: an http:// or https:// URL")
	} else {
		u, err := url.Parse(a.URL)
		switch {
		case placeholder.MatchString(a.URL):
			v.add(p, "%%placeholders%% are not expanded in the URL (where a request goes is fixed when the rule is made); send values in a POST body")
		case err != nil:
			v.add(p, "is not a URL (%%placeholders%% are not expanded in it): %v", errors.Unwrap(err))
		case u.Scheme != "http" && u.Scheme != "https":
			v.add(p, "must be http:// or https://, not %q", u.Scheme+":")
		case u.Hostname() == "":
			v.add(p, "has no host")
		case u.User != nil:
			v.add(p, "must not carry a user or password (anyone who reads the rule would see it); put credentials in the receiving service")
		}
		v.text(p, a.URL)
	}
	switch a.Method {
	case "", "GET":
		if a.Body != "" {
			v.add(join(path, "body"), "is sent with POST only; set method to POST or leave body out")
		}
	case "POST":
		if a.Body == "" {
			v.add(join(path, "body"), "is required with POST")
		}
	default:
		v.add(join(path, "method"), "%q is not a method; use GET (the default) or POST", a.Method)
	}
	v.text(join(path, "body"), a.Body)
}

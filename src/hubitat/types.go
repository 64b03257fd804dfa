package hubitat

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hamcp/hamcp/src/redact"
)

// Value is an attribute or event value as the hub sent it: a string, a number, a boolean, null
// or (JSON_OBJECT, VECTOR3 attributes) a JSON value. The hub sends numbers as strings in some
// replies and as numbers in others, so readers ask for the form they want.
type Value struct{ raw json.RawMessage }

// shown is the value as hamcp keeps it, under the attribute or event name it came with: every
// secret in it (a lockCodes map's codes, a user code) hidden. Values are redacted as they are
// parsed, so no cache, tool, rule log or event the model reads can hold a code.
func shown(name string, v Value) Value {
	if v.IsNull() {
		return v
	}
	return Value{raw: redact.Attribute(name, v.raw)}
}

// IsNull reports a missing or null value.
func (v Value) IsNull() bool {
	t := bytes.TrimSpace(v.raw)
	return len(t) == 0 || string(t) == "null"
}

// String renders the value as text: strings unquoted, numbers and booleans as written, JSON
// values compact, null as "".
func (v Value) String() string {
	t := bytes.TrimSpace(v.raw)
	if v.IsNull() {
		return ""
	}
	if t[0] == '"' {
		var s string
		if json.Unmarshal(t, &s) == nil {
			return s
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, t) == nil {
		return buf.String()
	}
	return string(t)
}

// Float parses a number sent as a number or as a numeric string ("21.5", " 40 ", "1e3").
func (v Value) Float() (float64, bool) { return parseNumber(v.raw) }

// MarshalJSON writes the value as the hub sent it (null when missing).
func (v Value) MarshalJSON() ([]byte, error) {
	if v.IsNull() {
		return []byte("null"), nil
	}
	if !json.Valid(v.raw) {
		return json.Marshal(string(v.raw))
	}
	return bytes.TrimSpace(v.raw), nil
}

// UnmarshalJSON keeps the raw value.
func (v *Value) UnmarshalJSON(b []byte) error {
	v.raw = append(json.RawMessage(nil), b...)
	return nil
}

// parseNumber reads a JSON number, a string holding one, or nothing (null, "", other text).
func parseNumber(raw json.RawMessage) (float64, bool) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return 0, false
	}
	s := string(t)
	if t[0] == '"' {
		if json.Unmarshal(t, &s) != nil {
			return 0, false
		}
		s = strings.TrimSpace(s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != f || f > 1e300 || f < -1e300 { // NaN and infinities are not readings
		return 0, false
	}
	return f, true
}

// idString reads an id the hub sends as a number, a string or null.
func idString(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return ""
	}
	if t[0] == '"' {
		var s string
		if json.Unmarshal(t, &s) == nil {
			return strings.TrimSpace(s)
		}
		return ""
	}
	if f, ok := parseNumber(t); ok && f >= 0 && f == float64(int64(f)) {
		return strconv.FormatInt(int64(f), 10)
	}
	return ""
}

// Attribute is one device attribute.
type Attribute struct {
	Name     string   `json:"name"`
	Value    Value    `json:"value"`
	DataType string   `json:"dataType,omitempty"` // STRING, ENUM, NUMBER, … (only /devices/<id> says)
	Values   []string `json:"values,omitempty"`   // an ENUM's choices
}

// Command is one device command with its argument types when the hub lists them.
type Command struct {
	Name string   `json:"command"`
	Args []string `json:"args,omitempty"`
}

// Device is one Maker API device.
type Device struct {
	ID           string      `json:"id"`
	Name         string      `json:"name"`
	Label        string      `json:"label"`
	Type         string      `json:"type,omitempty"`
	Room         string      `json:"room,omitempty"`
	Model        string      `json:"model,omitempty"`
	Manufacturer string      `json:"manufacturer,omitempty"`
	Capabilities []string    `json:"capabilities,omitempty"`
	Attributes   []Attribute `json:"attributes,omitempty"`
	Commands     []Command   `json:"commands,omitempty"`
	// Detailed is false for /devices list entries (no attributes, capabilities or commands).
	Detailed bool `json:"-"`
}

// DisplayName is the label, or the name when there is no label.
func (d Device) DisplayName() string {
	if d.Label != "" {
		return d.Label
	}
	return d.Name
}

// Attribute finds one attribute by name.
func (d Device) Attribute(name string) (Attribute, bool) {
	for _, a := range d.Attributes {
		if a.Name == name {
			return a, true
		}
	}
	return Attribute{}, false
}

// HasCommand reports whether the device lists the command.
func (d Device) HasCommand(name string) bool {
	return slices.ContainsFunc(d.Commands, func(c Command) bool { return c.Name == name })
}

func (d Device) clone() Device {
	d.Capabilities = slices.Clone(d.Capabilities)
	d.Attributes = slices.Clone(d.Attributes)
	d.Commands = slices.Clone(d.Commands)
	return d
}

// wireDevice accepts the three shapes: /devices entries, /devices/all (attributes as a map,
// commands as objects) and /devices/<id> (attributes as an array, commands as objects or strings).
type wireDevice struct {
	ID           json.RawMessage `json:"id"`
	Name         string          `json:"name"`
	Label        string          `json:"label"`
	Type         string          `json:"type"`
	Room         string          `json:"room"`
	Model        string          `json:"model"`
	Manufacturer string          `json:"manufacturer"`
	Capabilities json.RawMessage `json:"capabilities"`
	Attributes   json.RawMessage `json:"attributes"`
	Commands     json.RawMessage `json:"commands"`
}

func (w wireDevice) device() Device {
	d := Device{ID: idString(w.ID), Name: w.Name, Label: w.Label, Type: w.Type, Room: w.Room, Model: w.Model,
		Manufacturer: w.Manufacturer}
	d.Detailed = len(w.Attributes) > 0 || len(w.Capabilities) > 0 || len(w.Commands) > 0
	d.Capabilities = parseCapabilities(w.Capabilities)
	d.Attributes = parseAttributes(w.Attributes)
	d.Commands = parseCommands(w.Commands)
	return d
}

// parseCapabilities reads ["Switch", …]; some firmware mixes in {"attributes":[…]} objects,
// which are not capability names and are skipped.
func parseCapabilities(raw json.RawMessage) []string {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	var out []string
	for _, it := range items {
		var s string
		if json.Unmarshal(it, &s) == nil && s != "" {
			out = append(out, s)
		}
	}
	return out
}

// parseAttributes reads the map form {"switch":"on"} (sorted by name, the map has no order) and
// the array form [{"name","currentValue","dataType","values"}].
func parseAttributes(raw json.RawMessage) []Attribute {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return nil
	}
	switch t[0] {
	case '{':
		var m map[string]Value
		if json.Unmarshal(t, &m) != nil {
			return nil
		}
		out := make([]Attribute, 0, len(m))
		for k, v := range m {
			out = append(out, Attribute{Name: k, Value: shown(k, v)})
		}
		slices.SortFunc(out, func(a, b Attribute) int { return strings.Compare(a.Name, b.Name) })
		return out
	case '[':
		var arr []struct {
			Name         string          `json:"name"`
			CurrentValue Value           `json:"currentValue"`
			Value        Value           `json:"value"`
			DataType     string          `json:"dataType"`
			Values       json.RawMessage `json:"values"`
		}
		if json.Unmarshal(t, &arr) != nil {
			return nil
		}
		out := make([]Attribute, 0, len(arr))
		for _, a := range arr {
			if a.Name == "" {
				continue
			}
			v := a.CurrentValue
			if v.IsNull() && !a.Value.IsNull() {
				v = a.Value
			}
			out = append(out, Attribute{Name: a.Name, Value: shown(a.Name, v), DataType: a.DataType, Values: stringList(a.Values)})
		}
		return out
	}
	return nil
}

// parseCommands reads [{"command":"on"}], ["on"] and [{"command":"setLevel","type":["NUMBER"]}].
func parseCommands(raw json.RawMessage) []Command {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	out := make([]Command, 0, len(items))
	for _, it := range items {
		var s string
		if json.Unmarshal(it, &s) == nil {
			if s != "" {
				out = append(out, Command{Name: s})
			}
			continue
		}
		var obj struct {
			Command string          `json:"command"`
			Name    string          `json:"name"`
			Type    json.RawMessage `json:"type"`
			Args    json.RawMessage `json:"args"`
		}
		if json.Unmarshal(it, &obj) != nil {
			continue
		}
		c := Command{Name: obj.Command, Args: stringList(obj.Type)}
		if c.Name == "" {
			c.Name = obj.Name
		}
		if len(c.Args) == 0 {
			c.Args = stringList(obj.Args)
		}
		if c.Name != "" {
			out = append(out, c)
		}
	}
	return out
}

// stringList reads a list of strings, a single string, or nothing; non-strings are rendered.
func stringList(raw json.RawMessage) []string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return nil
	}
	var one string
	if json.Unmarshal(t, &one) == nil {
		return []string{one}
	}
	var vals []Value
	if json.Unmarshal(t, &vals) != nil {
		return nil
	}
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		out = append(out, v.String())
	}
	return out
}

// ParseDevices reads a /devices or /devices/all reply.
func ParseDevices(body []byte) ([]Device, error) {
	var wire []wireDevice
	if err := json.Unmarshal(body, &wire); err != nil {
		return nil, err
	}
	out := make([]Device, 0, len(wire))
	for _, w := range wire {
		if d := w.device(); d.ID != "" {
			out = append(out, d)
		}
	}
	return out, nil
}

// ParseDevice reads a /devices/<id> reply.
func ParseDevice(body []byte) (Device, error) {
	var w wireDevice
	if err := json.Unmarshal(body, &w); err != nil {
		return Device{}, err
	}
	return w.device(), nil
}

// Event is one hub event: from the eventsocket, a postURL push or /devices/<id>/events.
type Event struct {
	Source          string    `json:"source,omitempty"` // DEVICE, LOCATION, HUB, …
	Name            string    `json:"name"`
	Value           Value     `json:"value"`
	Unit            string    `json:"unit,omitempty"`
	DeviceID        string    `json:"deviceId,omitempty"` // "" for location events
	DisplayName     string    `json:"displayName,omitempty"`
	DescriptionText string    `json:"descriptionText,omitempty"`
	Type            string    `json:"type,omitempty"` // physical, digital
	IsStateChange   *bool     `json:"isStateChange,omitempty"`
	Date            time.Time `json:"date,omitzero"`
}

// Location reports a location (hub-wide) event such as mode, hsmStatus or systemStart.
func (e Event) Location() bool { return e.DeviceID == "" }

type wireEvent struct {
	Source          string          `json:"source"`
	Name            string          `json:"name"`
	Value           Value           `json:"value"`
	Unit            json.RawMessage `json:"unit"`
	DeviceID        json.RawMessage `json:"deviceId"`
	DeviceIDSnake   json.RawMessage `json:"device_id"`
	DisplayName     string          `json:"displayName"`
	Label           string          `json:"label"`
	DescriptionText string          `json:"descriptionText"`
	Description     string          `json:"description"`
	Type            string          `json:"type"`
	IsStateChange   json.RawMessage `json:"isStateChange"`
	Date            json.RawMessage `json:"date"`
}

func (w wireEvent) event() Event {
	e := Event{Source: w.Source, Name: w.Name, Value: shown(w.Name, w.Value), DisplayName: w.DisplayName, DescriptionText: w.DescriptionText, Type: w.Type}
	e.Unit = Value{raw: w.Unit}.String()
	e.DeviceID = idString(w.DeviceID)
	if e.DeviceID == "" {
		e.DeviceID = idString(w.DeviceIDSnake)
	}
	if e.DeviceID == "0" && !strings.EqualFold(e.Source, "DEVICE") {
		e.DeviceID = "" // the eventsocket sends deviceId 0 with location events
	}
	if e.DisplayName == "" {
		e.DisplayName = w.Label
	}
	if e.DescriptionText == "" {
		e.DescriptionText = w.Description
	}
	e.DescriptionText = redact.Text(e.DescriptionText)
	if redact.Key(e.Name) && !w.Value.IsNull() && strings.Contains(e.DescriptionText, w.Value.String()) {
		// A driver that writes the secret into its description ("lockCodes are {…}") says no more
		// than the event's name does.
		e.DescriptionText = e.Name + " changed"
	}
	switch s := strings.TrimSpace(string(w.IsStateChange)); s {
	case "true", `"true"`:
		e.IsStateChange = ptr(true)
	case "false", `"false"`:
		e.IsStateChange = ptr(false)
	}
	e.Date = parseDate(w.Date)
	return e
}

// parseDate reads ISO dates ("2026-01-31T10:00:00+0000", RFC 3339) and epoch milliseconds. A date
// outside years 1–9999 once in UTC counts as none: JSON (and the tools' answers) cannot carry it.
func parseDate(raw json.RawMessage) time.Time {
	d := parseDateAny(raw)
	if y := d.Year(); y < 1 || y > 9999 {
		return time.Time{}
	}
	return d
}

func parseDateAny(raw json.RawMessage) time.Time {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return time.Time{}
	}
	if t[0] != '"' {
		if f, ok := parseNumber(t); ok && f > 0 && f < 1e15 {
			return time.UnixMilli(int64(f)).UTC()
		}
		return time.Time{}
	}
	var s string
	if json.Unmarshal(t, &s) != nil {
		return time.Time{}
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.000-0700", "2006-01-02T15:04:05-0700", "2006-01-02 15:04:05.000", "2006-01-02 15:04:05"} {
		if d, err := time.Parse(layout, s); err == nil {
			return d.UTC()
		}
	}
	return time.Time{}
}

// ParseEvent reads one eventsocket frame or one postURL body (which wraps the event in "content").
func ParseEvent(body []byte) (Event, error) {
	var env struct {
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return Event{}, err
	}
	if t := bytes.TrimSpace(env.Content); len(t) > 0 && t[0] == '{' {
		body = t
	}
	var w wireEvent
	if err := json.Unmarshal(body, &w); err != nil {
		return Event{}, err
	}
	return w.event(), nil
}

// ParseEvents reads a /devices/<id>/events reply.
func ParseEvents(body []byte) ([]Event, error) {
	var wire []wireEvent
	if err := json.Unmarshal(body, &wire); err != nil {
		return nil, err
	}
	out := make([]Event, 0, len(wire))
	for _, w := range wire {
		out = append(out, w.event())
	}
	return out, nil
}

// Mode is one location mode.
type Mode struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Active bool   `json:"active"`
}

// Variable is one hub variable Maker API exposes.
type Variable struct {
	Name  string `json:"name"`
	Value Value  `json:"value"`
	Type  string `json:"type,omitempty"` // string, integer, decimal, boolean, datetime
}

// Room is one room and the ids of its devices.
type Room struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	DeviceIDs []string `json:"deviceIds"`
}

func ptr[T any](v T) *T { return &v }

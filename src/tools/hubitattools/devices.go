package hubitattools

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/redact"
	"github.com/hamcp/hamcp/src/sensitive"
	"github.com/hamcp/hamcp/src/toolkit"
)

// SetDevices is the toolset of the Hubitat device tools.
const SetDevices = "hubitat_devices"

func deviceTools(d Deps) []*toolkit.Tool {
	return []*toolkit.Tool{listDevices(d), getDevice(d), getAttribute(d), sendCommand(d), getDeviceEvents(d)}
}

// deviceID is the argument every device tool takes; upstream calls it deviceId.
type deviceID struct {
	DeviceID string `json:"deviceId" jsonschema:"the Hubitat device id, e.g. \"12\", from hubitat_list_devices" validate:"required,max=18"`
}

// compactStates are the attributes upstream's compact listing shows.
var compactStates = []string{"switch", "level", "motion", "contact", "temperature", "humidity", "battery"}

// deviceRow is one device in hubitat_list_devices: compact, or with every detail.
type deviceRow struct {
	ID            string                   `json:"id"`
	Name          string                   `json:"name"`
	Label         string                   `json:"label"`
	Room          string                   `json:"room,omitempty"`
	CurrentStates map[string]hubitat.Value `json:"currentStates,omitempty"`
	Type          string                   `json:"type,omitempty"`
	Capabilities  []string                 `json:"capabilities,omitempty"`
	Attributes    map[string]hubitat.Value `json:"attributes,omitempty"`
	Commands      []string                 `json:"commands,omitempty"`
}

func rowOf(dev hubitat.Device, detailed bool) deviceRow {
	r := deviceRow{ID: dev.ID, Name: dev.Name, Label: dev.Label, Room: dev.Room}
	if !detailed {
		for _, name := range compactStates {
			if a, ok := dev.Attribute(name); ok {
				if r.CurrentStates == nil {
					r.CurrentStates = map[string]hubitat.Value{}
				}
				r.CurrentStates[name] = a.Value
			}
		}
		return r
	}
	r.Type, r.Capabilities = dev.Type, dev.Capabilities
	r.Attributes = make(map[string]hubitat.Value, len(dev.Attributes))
	for _, a := range dev.Attributes {
		r.Attributes[a.Name] = a.Value
	}
	for _, c := range dev.Commands {
		r.Commands = append(r.Commands, c.Name)
	}
	return r
}

type listDevicesArgs struct {
	Detailed bool `json:"detailed,omitempty" jsonschema:"every capability, attribute and command of each device (default false: id, name, label, room and the main states). Large: page it"`
	toolkit.Page
}

func listDevices(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[listDevicesArgs, toolkit.List[deviceRow]]{
		Name: "hubitat_list_devices", Toolset: SetDevices, Title: "List Hubitat devices",
		Description: "List the Hubitat devices hamcp may use, sorted by id, with their main states (switch, level, motion, contact, " +
			"temperature, humidity, battery). detailed=true adds every capability, attribute and command: avoid it for large " +
			"homes (100+ devices) unless paged with limit/offset. Read from hamcp's live device cache, so it is cheap; call it " +
			"once rather than in parallel. Only these device ids work with the other hubitat_ tools: never guess an id or " +
			"substitute a similarly named device.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a listDevicesArgs) (toolkit.List[deviceRow], error) {
			devs, err := d.Hub.AllDevices(ctx)
			if err != nil {
				return toolkit.List[deviceRow]{}, hubError(err, false, "")
			}
			rows := make([]deviceRow, len(devs))
			for i, dev := range devs {
				rows[i] = rowOf(dev, a.Detailed)
			}
			return toolkit.Paginate(rows, a.Page), nil
		},
	})
}

// deviceDetail is hubitat_get_device's answer.
type deviceDetail struct {
	ID           string              `json:"id"`
	Name         string              `json:"name"`
	Label        string              `json:"label"`
	Room         string              `json:"room,omitempty"`
	Type         string              `json:"type,omitempty"`
	Model        string              `json:"model,omitempty"`
	Manufacturer string              `json:"manufacturer,omitempty"`
	Capabilities []string            `json:"capabilities"`
	Attributes   []hubitat.Attribute `json:"attributes"`
	Commands     []hubitat.Command   `json:"commands"`
}

func getDevice(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[deviceID, deviceDetail]{
		Name: "hubitat_get_device", Toolset: SetDevices, Title: "Get a Hubitat device",
		Description: "Everything about one Hubitat device: capabilities, every attribute with its data type and value (and an " +
			"enum's choices), and every command (with argument types where the hub gives them). Use it before hubitat_send_command to learn the " +
			"commands a device takes; for one value hubitat_get_attribute is smaller. Asks the hub itself.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a deviceID) (deviceDetail, error) {
			dev, err := d.Hub.FetchDevice(ctx, a.DeviceID)
			if err != nil {
				return deviceDetail{}, hubError(err, false, "")
			}
			out := deviceDetail{ID: dev.ID, Name: dev.Name, Label: dev.Label, Room: dev.Room, Type: dev.Type, Model: dev.Model,
				Manufacturer: dev.Manufacturer, Capabilities: dev.Capabilities, Attributes: dev.Attributes, Commands: dev.Commands}
			if out.Room == "" {
				if cached, ok := d.Hub.Cache().Get(dev.ID); ok {
					out.Room = cached.Room // /devices/<id> leaves the room out on some firmware
				}
			}
			out.Capabilities, out.Attributes, out.Commands = orEmpty(out.Capabilities), orEmpty(out.Attributes), orEmpty(out.Commands)
			return out, nil
		},
	})
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

type getAttributeArgs struct {
	deviceID
	Attribute string `json:"attribute" jsonschema:"the attribute name as the device reports it, e.g. \"switch\", \"temperature\"" validate:"required,max=100"`
}

type attributeValue struct {
	DeviceID  string        `json:"deviceId"`
	Label     string        `json:"label"`
	Attribute string        `json:"attribute"`
	Value     hubitat.Value `json:"value"`
}

// device reads one device (from the live cache when it can) as the model addressed it.
func (d Deps) device(ctx context.Context, id string) (hubitat.Device, error) {
	dev, err := d.Hub.Device(ctx, id)
	if err != nil {
		return hubitat.Device{}, hubError(err, false, "")
	}
	return dev, nil
}

func getAttribute(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[getAttributeArgs, attributeValue]{
		Name: "hubitat_get_attribute", Toolset: SetDevices, Title: "Get a Hubitat attribute",
		Description: "The current value of one attribute of one Hubitat device (e.g. switch, level, temperature, lock), from " +
			"hamcp's live device cache. An attribute the device does not have is an error listing the ones it has: pick " +
			"from those, do not guess another name. For several values of one device use hubitat_get_device.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a getAttributeArgs) (attributeValue, error) {
			dev, err := d.device(ctx, a.DeviceID)
			if err != nil {
				return attributeValue{}, err
			}
			attr, ok := dev.Attribute(a.Attribute)
			if !ok {
				return attributeValue{}, toolkit.InvalidArg("attribute", fmt.Sprintf("device %s (%s) has no attribute %q; it has: %s",
					dev.ID, dev.DisplayName(), a.Attribute, strings.Join(attributeNames(dev), ", ")), "")
			}
			return attributeValue{DeviceID: dev.ID, Label: dev.DisplayName(), Attribute: attr.Name, Value: attr.Value}, nil
		},
	})
}

func attributeNames(dev hubitat.Device) []string {
	names := make([]string, 0, len(dev.Attributes))
	for _, a := range dev.Attributes {
		names = append(names, a.Name)
	}
	return names
}

func commandNames(dev hubitat.Device) []string {
	names := make([]string, 0, len(dev.Commands))
	for _, c := range dev.Commands {
		names = append(names, c.Name)
	}
	return names
}

type sendCommandArgs struct {
	deviceID
	Command    string   `json:"command" jsonschema:"a command the device lists, e.g. \"on\", \"setLevel\" (case-sensitive)" validate:"required,max=64"`
	Parameters []string `json:"parameters,omitempty" jsonschema:"the command's arguments as strings, in order, e.g. [\"50\"] for setLevel; numbers are sent as numbers" validate:"omitempty,max=10,dive,max=1000"`
}

type commandResult struct {
	Success    bool   `json:"success"`
	DeviceID   string `json:"deviceId"`
	Device     string `json:"device"`
	Command    string `json:"command"`
	Parameters []any  `json:"parameters,omitempty"`
}

// upstreamParam converts a parameter as the upstream server does before calling the device: a
// string that reads as an integer becomes one, else one that reads as a decimal becomes a
// double, else it stays a string.
func upstreamParam(s string) any {
	t := strings.TrimSpace(s)
	if i, err := strconv.ParseInt(t, 10, 64); err == nil {
		return i
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) && !strings.ContainsAny(t, "xXpP_") {
		return f
	}
	return s
}

func paramString(v any) string {
	switch v := v.(type) {
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return v.(string)
}

// commandRule maps a Hubitat command on a device with some capability to the Home Assistant
// service it amounts to, so that one policy table (package sensitive) decides what the user
// confirms: unlocking a lock is lock.unlock whichever hub it is on.
type commandRule struct {
	capability, command string
	domain, service     string
	deviceClass         string
}

var commandRules = []commandRule{
	{"Lock", "unlock", "lock", "unlock", ""},
	{"GarageDoorControl", "open", "cover", "open_cover", "garage"},
	// A door opener is a gate as far as who can walk in is concerned.
	{"DoorControl", "open", "cover", "open_cover", "gate"},
	{"Valve", "open", "valve", "open_valve", ""},
	{"Alarm", "siren", "siren", "turn_on", ""},
	{"Alarm", "strobe", "siren", "turn_on", ""},
	{"Alarm", "both", "siren", "turn_on", ""},
}

// lockCodeCommands add or change who can unlock a lock: as sensitive as unlocking it.
var lockCodeCommands = []string{"setCode", "deleteCode", "setCodeLength", "unlockWithTimeout"}

// commandAsk is what running command on dev needs the user to confirm.
func commandAsk(dev hubitat.Device, command string) toolkit.Ask {
	return askFor(commandHits(dev, command), fmt.Sprintf("Run %q on Hubitat device %s (%s)?", command, dev.ID, dev.DisplayName()))
}

// commandHits are the policy table's entries running command on dev falls under (also what a
// rule that runs it counts, rules.go).
func commandHits(dev hubitat.Device, command string) []sensitive.Hit {
	var hits []sensitive.Hit
	has := func(cap string) bool { return slices.Contains(dev.Capabilities, cap) }
	for _, r := range commandRules {
		if r.command == command && has(r.capability) {
			ent := sensitive.Entity{ID: r.domain + ".hubitat_" + dev.ID, Name: dev.DisplayName(), DeviceClass: r.deviceClass}
			hits = append(hits, sensitive.Service(r.domain, r.service, []sensitive.Entity{ent}, true)...)
		}
	}
	if has("Lock") && slices.Contains(lockCodeCommands, command) {
		hits = append(hits, sensitive.Hit{Class: sensitive.Lock, What: "change the codes of " + dev.DisplayName()})
	}
	return hits
}

// askFor asks question when the policy table found something (hits), once per class.
func askFor(hits []sensitive.Hit, question string) toolkit.Ask {
	var classes []string
	for _, h := range hits {
		if !slices.Contains(classes, string(h.Class)) {
			classes = append(classes, string(h.Class))
		}
	}
	if len(classes) == 0 {
		return toolkit.Ask{}
	}
	return toolkit.Ask{Classes: classes, Question: question}
}

func sendCommand(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[sendCommandArgs, commandResult]{
		Name: "hubitat_send_command", Toolset: SetDevices, Title: "Send a Hubitat command",
		Description: "Run a command on one Hubitat device, e.g. on, off, setLevel [\"50\"], setColorTemperature [\"2700\"], lock. " +
			"The device must list the command (hubitat_get_device shows them with their argument types); anything else is " +
			"refused with the list, so never substitute a similar command or device. Unlocking a lock, opening a garage door " +
			"or changing lock codes needs the user's own confirmation. To change the mode or the alarm (HSM) use " +
			"hubitat_set_mode or hubitat_set_hsm instead.",
		Confirm: &toolkit.Confirm[sendCommandArgs]{
			When: "unlocking a lock, changing its codes, opening a garage door or gate, opening a valve, sounding a siren",
			Check: func(ctx context.Context, c *toolkit.Call, a sendCommandArgs) (toolkit.Ask, error) {
				dev, err := d.device(ctx, a.DeviceID)
				if err != nil {
					return toolkit.Ask{}, err
				}
				return commandAsk(dev, a.Command), nil
			},
		},
		Summary: func(a sendCommandArgs) string {
			return "deviceId=" + a.DeviceID + " command=" + a.Command + fmt.Sprintf(" parameters=%d", len(a.Parameters))
		},
		Handler: func(ctx context.Context, c *toolkit.Call, a sendCommandArgs) (commandResult, error) {
			dev, err := d.device(ctx, a.DeviceID)
			if err != nil {
				return commandResult{}, err
			}
			if dev.Detailed && !dev.HasCommand(a.Command) {
				names := commandNames(dev)
				if len(names) == 0 {
					names = []string{"none (it only reports)"}
				}
				return commandResult{}, toolkit.InvalidArg("command", fmt.Sprintf("device %s (%s) does not support %q; it supports: %s",
					dev.ID, dev.DisplayName(), a.Command, strings.Join(names, ", ")), "")
			}
			params := make([]any, len(a.Parameters))
			wire := make([]string, len(a.Parameters))
			for i, p := range a.Parameters {
				if strings.Contains(p, ",") {
					return commandResult{}, toolkit.InvalidArg(fmt.Sprintf("parameters[%d]", i),
						"must not contain a comma (Maker API would split it into two arguments)", `["50"]`)
				}
				params[i] = upstreamParam(p)
				wire[i] = paramString(params[i])
			}
			if err := d.Hub.SendCommand(ctx, dev.ID, a.Command, wire...); err != nil {
				return commandResult{}, hubError(err, true, "check the device's state with hubitat_get_attribute before trying again")
			}
			for i := range params {
				if redact.Arg(a.Command, i) {
					params[i] = redact.Hidden // the model sent it, but the answer is also what a transcript keeps
				}
			}
			return commandResult{Success: true, DeviceID: dev.ID, Device: dev.DisplayName(), Command: a.Command, Parameters: params}, nil
		},
	})
}

type deviceEventsArgs struct {
	deviceID
	Limit int `json:"limit,omitempty" jsonschema:"how many of the newest events (default 10, max 200)" validate:"omitempty,min=1,max=200"`
}

type deviceEvent struct {
	Name          string        `json:"name"`
	Value         hubitat.Value `json:"value"`
	Unit          string        `json:"unit,omitempty"`
	Description   string        `json:"description,omitempty"`
	Date          string        `json:"date,omitempty"`
	IsStateChange *bool         `json:"isStateChange,omitempty"`
}

type deviceEvents struct {
	DeviceID string        `json:"deviceId"`
	Count    int           `json:"count"`
	Events   []deviceEvent `json:"events"`
}

func getDeviceEvents(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[deviceEventsArgs, deviceEvents]{
		Name: "hubitat_get_device_events", Toolset: SetDevices, Title: "Recent Hubitat device events",
		Description: "The most recent events of one Hubitat device, newest first (default 10): attribute, value, unit, " +
			"description, time and whether the value changed. For what a device is now use hubitat_get_attribute.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a deviceEventsArgs) (deviceEvents, error) {
			limit := a.Limit
			if limit == 0 {
				limit = 10
			}
			evs, err := d.Hub.DeviceEvents(ctx, a.DeviceID, limit)
			if err != nil {
				return deviceEvents{}, hubError(err, false, "")
			}
			out := deviceEvents{DeviceID: a.DeviceID, Count: len(evs), Events: make([]deviceEvent, len(evs))}
			for i, e := range evs {
				out.Events[i] = deviceEvent{Name: e.Name, Value: e.Value, Unit: e.Unit, Description: e.DescriptionText, IsStateChange: e.IsStateChange}
				if !e.Date.IsZero() {
					out.Events[i].Date = e.Date.UTC().Format("2006-01-02T15:04:05Z07:00")
				}
			}
			return out, nil
		},
	})
}

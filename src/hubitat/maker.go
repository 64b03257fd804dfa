package hubitat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/hamcp/hamcp/src/redact"
)

// maker GETs a Maker API route. The token travels as the access_token query parameter, the only
// form the Maker API documentation gives; it never appears in an error or a log line.
func (c *Client) maker(ctx context.Context, path string) ([]byte, error) {
	route := "/apps/api/" + c.appID + path
	r, err := c.do(ctx, http.MethodGet, route, url.Values{"access_token": {c.token}}, nil, "", c.callTimeout)
	if err != nil {
		return nil, err
	}
	if r.status != http.StatusOK {
		return nil, c.apiError(path, r)
	}
	return r.body, nil
}

// checkDevice refuses ids that are malformed, outside hubitat_devices, or (with a live cache)
// unknown, all with the same ErrDeviceNotFound.
func (c *Client) checkDevice(id string) error {
	if !allDigits(id) || (c.allow != nil && !c.allow[id]) {
		return fmt.Errorf("hubitat device %q: %w", clean(id), ErrDeviceNotFound)
	}
	return nil
}

func (c *Client) allowed(id string) bool { return c.allow == nil || c.allow[id] }

func (c *Client) deviceGet(ctx context.Context, id, sub string) ([]byte, error) {
	if err := c.checkDevice(id); err != nil {
		return nil, err
	}
	b, err := c.maker(ctx, "/devices/"+id+sub)
	if IsStatus(err, http.StatusNotFound) {
		return nil, fmt.Errorf("hubitat device %q: %w", id, ErrDeviceNotFound)
	}
	return b, err
}

// IsStatus reports whether err is the hub answering with HTTP status code.
func IsStatus(err error, code int) bool {
	var api *APIError
	return errors.As(err, &api) && api.Status == code
}

// ListDevices is /devices: id, name, label (and type and room on newer firmware) of every
// authorised device. While the cache is live it answers instead, with the details too.
func (c *Client) ListDevices(ctx context.Context) ([]Device, error) {
	if c.cache.Live() {
		return c.cache.All(), nil
	}
	b, err := c.maker(ctx, "/devices")
	if err != nil {
		return nil, err
	}
	ds, err := ParseDevices(b)
	if err != nil {
		return nil, fmt.Errorf("hubitat /devices: malformed reply: %w", err)
	}
	return c.filter(ds), nil
}

// AllDevices returns every authorised device with its attributes and commands: from the cache
// while it is live, else from /devices/all.
func (c *Client) AllDevices(ctx context.Context) ([]Device, error) {
	if c.cache.Live() {
		return c.cache.All(), nil
	}
	return c.fetchAll(ctx)
}

func (c *Client) fetchAll(ctx context.Context) ([]Device, error) {
	b, err := c.maker(ctx, "/devices/all")
	if err != nil {
		return nil, err
	}
	ds, err := ParseDevices(b)
	if err != nil {
		return nil, fmt.Errorf("hubitat /devices/all: malformed reply: %w", err)
	}
	return c.filter(ds), nil
}

func (c *Client) filter(ds []Device) []Device {
	return slices.DeleteFunc(ds, func(d Device) bool { return !c.allowed(d.ID) })
}

// Device returns one device: from the cache while it is live, else from /devices/<id> (which
// also gives data types and enum values).
func (c *Client) Device(ctx context.Context, id string) (Device, error) {
	if err := c.checkDevice(id); err != nil {
		return Device{}, err
	}
	if c.cache.Live() {
		if d, ok := c.cache.Get(id); ok {
			return d, nil
		}
		return Device{}, fmt.Errorf("hubitat device %q: %w", id, ErrDeviceNotFound)
	}
	return c.FetchDevice(ctx, id)
}

// FetchDevice always asks the hub (/devices/<id>).
func (c *Client) FetchDevice(ctx context.Context, id string) (Device, error) {
	b, err := c.deviceGet(ctx, id, "")
	if err != nil {
		return Device{}, err
	}
	d, err := ParseDevice(b)
	if err != nil || d.ID == "" {
		return Device{}, fmt.Errorf("hubitat /devices/%s: malformed reply: %v", id, err)
	}
	return d, nil
}

// DeviceAttribute returns one attribute; an unknown one is an error listing the valid names.
func (c *Client) DeviceAttribute(ctx context.Context, id, name string) (Attribute, error) {
	d, err := c.Device(ctx, id)
	if err != nil {
		return Attribute{}, err
	}
	if a, ok := d.Attribute(name); ok {
		return a, nil
	}
	names := make([]string, 0, len(d.Attributes))
	for _, a := range d.Attributes {
		names = append(names, a.Name)
	}
	return Attribute{}, fmt.Errorf("device %q (%s) has no attribute %q; it has: %s", id, d.DisplayName(), clean(name), strings.Join(names, ", "))
}

// DeviceEvents is /devices/<id>/events, newest first as the hub sends them, at most limit
// (0 means all the hub gives).
func (c *Client) DeviceEvents(ctx context.Context, id string, limit int) ([]Event, error) {
	b, err := c.deviceGet(ctx, id, "/events")
	if err != nil {
		return nil, err
	}
	evs, err := ParseEvents(b)
	if err != nil {
		return nil, fmt.Errorf("hubitat /devices/%s/events: malformed reply: %w", id, err)
	}
	for i := range evs {
		if evs[i].DeviceID == "" {
			evs[i].DeviceID = id
		}
	}
	if limit > 0 && len(evs) > limit {
		evs = evs[:limit]
	}
	return evs, nil
}

// SendCommand runs a device command. Maker API takes several arguments comma-separated in one
// path segment, so an argument cannot itself hold a comma. With a live cache, a command the
// device does not list is refused here with the list of those it has.
func (c *Client) SendCommand(ctx context.Context, id, command string, args ...string) error {
	if err := c.checkDevice(id); err != nil {
		return err
	}
	if command == "" || !commandName(command) {
		return fmt.Errorf("command %q is not a command name (letters and digits, e.g. \"setLevel\")", clean(command))
	}
	for i, a := range args {
		if strings.Contains(a, ",") {
			return fmt.Errorf("parameters[%d] contains a comma, which Maker API would split into two arguments", i)
		}
	}
	if c.cache.Live() {
		d, ok := c.cache.Get(id)
		if !ok {
			return fmt.Errorf("hubitat device %q: %w", id, ErrDeviceNotFound)
		}
		if d.Detailed && !d.HasCommand(command) {
			names := make([]string, 0, len(d.Commands))
			for _, cmd := range d.Commands {
				names = append(names, cmd.Name)
			}
			if len(names) == 0 {
				names = []string{"(no commands: it is a sensor)"}
			}
			return fmt.Errorf("device %q (%s) does not support command %q; it supports: %s", id, d.DisplayName(), command, strings.Join(names, ", "))
		}
	}
	sub := "/" + command
	if len(args) > 0 {
		esc := make([]string, len(args))
		for i, a := range args {
			esc[i] = url.PathEscape(a)
		}
		sub += "/" + strings.Join(esc, ",")
	}
	_, err := c.deviceGet(ctx, id, sub)
	return hideArgs(err, id, command, args)
}

// hideArgs keeps a command's secret arguments (a lock code given to setCode) out of its error:
// the route it names, and whatever quotes the URL (a connection error).
func hideArgs(err error, id, command string, args []string) error {
	if err == nil {
		return nil
	}
	shown := redact.Args(command, args)
	var secrets []string
	for i, a := range args {
		if shown[i] != a {
			secrets = append(secrets, a, url.PathEscape(a), url.QueryEscape(a))
		}
	}
	if len(secrets) == 0 {
		return err
	}
	esc := make([]string, len(args))
	for i, a := range args {
		esc[i] = url.PathEscape(a)
	}
	route := "/devices/" + id + "/" + command + "/" + strings.Join(shown, ",")
	var api *APIError
	if errors.As(err, &api) {
		api.Path = route
	}
	// The whole argument segment first: it also hides a code too short to replace on its own.
	return &scrubbed{err: err, secrets: append([]string{strings.Join(esc, ","), strings.Join(args, ",")}, secrets...)}
}

func commandName(s string) bool {
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_') {
			return false
		}
	}
	return len(s) <= 64
}

// Modes is /modes: every mode with its id; Active marks the current one.
func (c *Client) Modes(ctx context.Context) ([]Mode, error) {
	b, err := c.maker(ctx, "/modes")
	if err != nil {
		return nil, err
	}
	return ParseModes(b)
}

// ParseModes reads a /modes reply; ids come as numbers or strings.
func ParseModes(b []byte) ([]Mode, error) {
	var wire []struct {
		ID     json.RawMessage `json:"id"`
		Name   string          `json:"name"`
		Active json.RawMessage `json:"active"`
	}
	if err := json.Unmarshal(b, &wire); err != nil {
		return nil, fmt.Errorf("hubitat /modes: malformed reply: %w", err)
	}
	out := make([]Mode, 0, len(wire))
	for _, w := range wire {
		a := strings.Trim(strings.TrimSpace(string(w.Active)), `"`)
		out = append(out, Mode{ID: idString(w.ID), Name: w.Name, Active: a == "true"})
	}
	return out, nil
}

// SetMode sets the mode by name (case-insensitive, as upstream) or id; Maker API takes only the
// id, so the name is mapped first. It returns the mode before and the mode set.
func (c *Client) SetMode(ctx context.Context, nameOrID string) (previous, now Mode, err error) {
	modes, err := c.Modes(ctx)
	if err != nil {
		return Mode{}, Mode{}, err
	}
	want := strings.TrimSpace(nameOrID)
	for _, m := range modes {
		if m.Active {
			previous = m
		}
		if strings.EqualFold(m.Name, want) || (now.ID == "" && m.ID == want && want != "") {
			now = m
		}
	}
	if now.ID == "" {
		names := make([]string, 0, len(modes))
		for _, m := range modes {
			names = append(names, m.Name)
		}
		return previous, Mode{}, fmt.Errorf("mode %q not found; the hub has: %s", clean(want), strings.Join(names, ", "))
	}
	if _, err := c.maker(ctx, "/modes/"+url.PathEscape(now.ID)); err != nil {
		return previous, Mode{}, err
	}
	now.Active = true
	return previous, now, nil
}

// HSMValues are the values /hsm/<value> accepts.
var HSMValues = []string{"armAway", "armHome", "armNight", "disarm", "disarmAll", "cancelAlerts"}

// HSM is /hsm: the Hubitat Safety Monitor status (armedAway, disarmed, armingHome, …).
func (c *Client) HSM(ctx context.Context) (string, error) {
	b, err := c.maker(ctx, "/hsm")
	if err != nil {
		return "", err
	}
	var v struct {
		HSM Value `json:"hsm"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return "", fmt.Errorf("hubitat /hsm: malformed reply: %w", err)
	}
	return v.HSM.String(), nil
}

// SetHSM sends /hsm/<value>.
func (c *Client) SetHSM(ctx context.Context, value string) error {
	if !slices.Contains(HSMValues, value) {
		return fmt.Errorf("mode %q is not an HSM command: use one of %s", clean(value), strings.Join(HSMValues, ", "))
	}
	_, err := c.maker(ctx, "/hsm/"+value)
	return err
}

// Variables is /hubvariables: the hub variables authorised in Maker API.
func (c *Client) Variables(ctx context.Context) ([]Variable, error) {
	b, err := c.maker(ctx, "/hubvariables")
	if err != nil {
		return nil, err
	}
	var vs []Variable
	if err := json.Unmarshal(b, &vs); err != nil {
		return nil, fmt.Errorf("hubitat /hubvariables: malformed reply: %w", err)
	}
	return vs, nil
}

// Variable is /hubvariables/<name>.
func (c *Client) Variable(ctx context.Context, name string) (Variable, error) {
	if err := varName(name); err != nil {
		return Variable{}, err
	}
	b, err := c.maker(ctx, "/hubvariables/"+url.PathEscape(name))
	if err != nil {
		if IsStatus(err, http.StatusNotFound) {
			return Variable{}, fmt.Errorf("hub variable %q not found (or not authorised in Maker API)", clean(name))
		}
		return Variable{}, err
	}
	var v Variable
	if err := json.Unmarshal(b, &v); err != nil {
		return Variable{}, fmt.Errorf("hubitat /hubvariables/%s: malformed reply: %w", clean(name), err)
	}
	if v.Name == "" {
		v.Name = name
	}
	return v, nil
}

// SetVariable is /hubvariables/<name>/<value>.
func (c *Client) SetVariable(ctx context.Context, name, value string) error {
	if err := varName(name); err != nil {
		return err
	}
	_, err := c.maker(ctx, "/hubvariables/"+url.PathEscape(name)+"/"+url.PathEscape(value))
	if IsStatus(err, http.StatusNotFound) {
		return fmt.Errorf("hub variable %q not found (or not authorised in Maker API)", clean(name))
	}
	return err
}

func varName(name string) error {
	if strings.TrimSpace(name) == "" || strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("name %q is not a hub variable name", clean(name))
	}
	return nil
}

// Rooms is /rooms (firmware 2.4.4 and later).
func (c *Client) Rooms(ctx context.Context) ([]Room, error) {
	b, err := c.maker(ctx, "/rooms")
	if err != nil {
		return nil, err
	}
	return ParseRooms(b)
}

// ParseRooms reads a /rooms reply; ids come as numbers or strings.
func ParseRooms(b []byte) ([]Room, error) {
	var wire []struct {
		ID        json.RawMessage   `json:"id"`
		Name      string            `json:"name"`
		DeviceIDs []json.RawMessage `json:"deviceIds"`
	}
	if err := json.Unmarshal(b, &wire); err != nil {
		return nil, fmt.Errorf("hubitat /rooms: malformed reply: %w", err)
	}
	out := make([]Room, 0, len(wire))
	for _, w := range wire {
		r := Room{ID: idString(w.ID), Name: w.Name, DeviceIDs: []string{}}
		for _, d := range w.DeviceIDs {
			if id := idString(d); id != "" {
				r.DeviceIDs = append(r.DeviceIDs, id)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// RegisterPostURL asks Maker API to POST every event to target (/postURL/<encoded target>);
// "" clears it.
func (c *Client) RegisterPostURL(ctx context.Context, target string) error {
	path := "/postURL"
	if target != "" {
		path += "/" + url.PathEscape(target)
	}
	_, err := c.maker(ctx, path)
	return err
}

package rules

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/integrations/hubitat/hubstore"
)

// liveEnv is the Env rules run against: the hub through hamcp's client, the store for rule
// variables and captured states, the engine's clock and site for time and sun.
type liveEnv struct{ e *Engine }

func (e *Engine) env() Env { return liveEnv{e} }

var errNoHub = errors.New("rules: no Hubitat hub is configured")

func (v liveEnv) hub() (*hubitat.Client, error) {
	if v.e.o.Hub == nil {
		return nil, errNoHub
	}
	return v.e.o.Hub, nil
}

func (v liveEnv) Now() time.Time { return v.e.clock.Now().In(v.Location()) }

func (v liveEnv) Location() *time.Location {
	v.e.mu.Lock()
	defer v.e.mu.Unlock()
	return v.e.site.loc
}

func (v liveEnv) Sun(day time.Time) (time.Time, time.Time, error) {
	v.e.mu.Lock()
	s := v.e.site
	v.e.mu.Unlock()
	return s.sun(day)
}

func (v liveEnv) Device(ctx context.Context, id string) (hubitat.Device, error) {
	h, err := v.hub()
	if err != nil {
		return hubitat.Device{}, err
	}
	return h.Device(ctx, id)
}

func (v liveEnv) DeviceEvents(ctx context.Context, id string, limit int) ([]hubitat.Event, error) {
	h, err := v.hub()
	if err != nil {
		return nil, err
	}
	return h.DeviceEvents(ctx, id, limit)
}

// Every write below is charged to the run first (limits.go): over its rule's budget it is not
// sent, and the events it causes are traced back to the run.

func (v liveEnv) SendCommand(ctx context.Context, id, command string, args ...string) error {
	h, err := v.hub()
	if err != nil {
		return err
	}
	if err := v.e.charge(ctx, "device "+id); err != nil {
		return err
	}
	return h.SendCommand(ctx, id, command, args...)
}

func (v liveEnv) Mode(ctx context.Context) (string, error) {
	h, err := v.hub()
	if err != nil {
		return "", err
	}
	if m := h.Cache().Mode(); m != "" && h.Cache().Live() {
		return m, nil
	}
	modes, err := h.Modes(ctx)
	if err != nil {
		return "", err
	}
	for _, m := range modes {
		if m.Active {
			return m.Name, nil
		}
	}
	return "", errors.New("the hub reports no active mode")
}

func (v liveEnv) SetMode(ctx context.Context, name string) error {
	h, err := v.hub()
	if err != nil {
		return err
	}
	if err := v.e.charge(ctx, "mode"); err != nil {
		return err
	}
	_, _, err = h.SetMode(ctx, name)
	return err
}

func (v liveEnv) HSM(ctx context.Context) (string, error) {
	h, err := v.hub()
	if err != nil {
		return "", err
	}
	if s := h.Cache().HSM(); s != "" && h.Cache().Live() {
		return s, nil
	}
	return h.HSM(ctx)
}

func (v liveEnv) SetHSM(ctx context.Context, value string) error {
	h, err := v.hub()
	if err != nil {
		return err
	}
	if err := v.e.charge(ctx, "hsm"); err != nil {
		return err
	}
	return h.SetHSM(ctx, value)
}

// Variable looks a name up in the rule's locals, then the hub's variables, then the store.
func (v liveEnv) Variable(ctx context.Context, r *Rule, name string) (string, bool, error) {
	if r != nil {
		if val, ok := r.LocalVariables[name]; ok {
			return fmt.Sprint(val), true, nil
		}
	}
	if h := v.e.o.Hub; h != nil {
		vars, err := h.Variables(ctx)
		if err != nil {
			return "", false, err
		}
		for _, hv := range vars {
			if hv.Name == name {
				return hv.Value.String(), true, nil
			}
		}
	}
	rv, ok, err := v.e.o.Store.RuleVariable(ctx, name)
	return rv.Value, ok, err
}

func (v liveEnv) SetRuleVariable(ctx context.Context, name, value string) error {
	return v.e.o.Store.SetRuleVariable(ctx, name, value, v.e.clock.Now())
}

func (v liveEnv) SetHubVariable(ctx context.Context, name, value string) error {
	h, err := v.hub()
	if err != nil {
		return err
	}
	if err := v.e.charge(ctx, ""); err != nil {
		return err
	}
	return h.SetVariable(ctx, name, value)
}

// SetLocalVariable changes the running rule's copy and the stored rule (not its UpdatedAt: the
// user did not edit it), and the engine's copy so the next run sees it.
func (v liveEnv) SetLocalVariable(ctx context.Context, r *Rule, name, value string) error {
	if r.LocalVariables == nil {
		r.LocalVariables = map[string]any{}
	}
	r.LocalVariables[name] = value
	return v.e.setLocal(ctx, r.ID, name, value)
}

// capturedAttributes are what capture_state keeps and restore_state puts back.
var capturedAttributes = []string{"switch", "colorTemperature", "hue", "saturation", "level", "position", "speed"}

// CaptureState snapshots the devices' restorable attributes from the hub (max 20 captures: the
// oldest is evicted, as upstream does).
func (v liveEnv) CaptureState(ctx context.Context, stateID string, deviceIDs []string) error {
	h, err := v.hub()
	if err != nil {
		return err
	}
	cs := hubstore.CapturedState{ID: stateID, Devices: map[string]map[string]string{}, CapturedAt: v.e.clock.Now()}
	for _, id := range deviceIDs {
		d, err := h.Device(ctx, id)
		if err != nil {
			return fmt.Errorf("capture %q: device %s: %w", stateID, id, err)
		}
		attrs := map[string]string{}
		for _, name := range capturedAttributes {
			if a, ok := d.Attribute(name); ok && !a.Value.IsNull() {
				attrs[name] = a.Value.String()
			}
		}
		cs.Devices[id] = attrs
	}
	evicted, err := v.e.o.Store.SaveCapturedState(ctx, cs, hubstore.DefaultMaxCapturedStates)
	if err == nil && len(evicted) > 0 {
		v.e.logf(ctx, "info", "", "Captured states evicted (limit %d): %s", hubstore.DefaultMaxCapturedStates, strings.Join(evicted, ", "))
	}
	return err
}

// RestoreState sends each captured device the commands that bring its attributes back.
func (v liveEnv) RestoreState(ctx context.Context, stateID string) error {
	if _, err := v.hub(); err != nil {
		return err
	}
	cs, ok, err := v.e.o.Store.CapturedState(ctx, stateID)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("no captured state %q (capture_state makes one)", stateID)
	}
	ids := make([]string, 0, len(cs.Devices))
	for id := range cs.Devices {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		for _, c := range restoreCommands(cs.Devices[id]) {
			if err := v.SendCommand(ctx, id, c[0], c[1:]...); err != nil {
				return fmt.Errorf("restore %q: device %s: %w", stateID, id, err)
			}
		}
	}
	return nil
}

// restoreCommands turns captured attributes into hub commands. A light that was off is only
// turned off: setLevel and the colour commands switch a light on, so restoring its level would
// flash it (upstream restores them only for a light that was on). Shade position and fan speed
// do not depend on the switch.
func restoreCommands(a map[string]string) [][]string {
	var out [][]string
	switch a["switch"] {
	case "on":
		out = append(out, []string{"on"})
		if ct := a["colorTemperature"]; ct != "" {
			out = append(out, []string{"setColorTemperature", ct})
		} else if hue, sat := a["hue"], a["saturation"]; hue != "" && sat != "" {
			out = append(out, []string{"setHue", hue}, []string{"setSaturation", sat})
		}
		if lvl := a["level"]; lvl != "" {
			out = append(out, []string{"setLevel", lvl})
		}
	case "off":
		out = append(out, []string{"off"})
	}
	if p := a["position"]; p != "" {
		out = append(out, []string{"setPosition", p})
	}
	if s := a["speed"]; s != "" {
		out = append(out, []string{"setSpeed", s})
	}
	return out
}

func (v liveEnv) CancelDelayed(ctx context.Context, r *Rule, delayID string) error {
	if delayID == "" {
		delayID = "all"
	}
	return v.e.cancelDelays(ctx, r.ID, delayID)
}

func (v liveEnv) Notify(ctx context.Context, deviceID, message string) error {
	return v.SendCommand(ctx, deviceID, "deviceNotification", message)
}

// maxHTTPBody bounds what is read of an http_request's answer (only the status is used).
const maxHTTPBody = 64 << 10

func (v liveEnv) HTTPRequest(ctx context.Context, method, url, contentType, body string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, httpTimeout)
	defer cancel()
	if method == "" {
		method = http.MethodGet
	}
	if err := v.e.charge(ctx, ""); err != nil {
		return 0, err
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, strings.ToUpper(method), url, rd)
	if err != nil {
		return 0, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := v.e.o.HTTP.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxHTTPBody))
	return resp.StatusCode, nil
}

func (v liveEnv) Log(ctx context.Context, r *Rule, level, message string) {
	id := ""
	if r != nil {
		id = r.ID
	}
	v.e.logf(ctx, level, id, "%s", message)
}

func storeEntry(at time.Time, level, ruleID, msg string) hubstore.DebugEntry {
	if hubstore.DebugLevelRank(level) < 0 {
		level = "info"
	}
	return hubstore.DebugEntry{Time: at, Level: level, Component: "rule", RuleID: ruleID, Message: msg}
}

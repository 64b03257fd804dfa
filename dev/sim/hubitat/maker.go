package hubitat

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Handler serves everything the hub serves.
func (h *Hub) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /apps/api/{app}/{rest...}", h.serveMaker)
	mux.HandleFunc("GET /eventsocket", h.serveSocket)
	h.adminRoutes(mux)
	h.installedAppRoutes(mux)
	h.hubAdminRoutes(mux)
	h.deviceAdminRoutes(mux)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route := r.Method + " " + r.URL.Path
		if p := "/apps/api/" + h.appID; strings.HasPrefix(r.URL.Path, p+"/") {
			route = r.Method + " " + strings.TrimPrefix(r.URL.Path, p)
		}
		h.mu.Lock()
		h.requests[route]++
		h.mu.Unlock()
		mux.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// makerError is the error body; the statuses are assumed (the documentation gives none).
func makerError(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, map[string]any{"error": true, "type": typ, "message": msg})
}

func (h *Hub) tokenOK(r *http.Request) bool {
	tok := r.URL.Query().Get("access_token")
	if tok == "" {
		if a := r.Header.Get("Authorization"); strings.HasPrefix(a, "Bearer ") {
			tok = strings.TrimPrefix(a, "Bearer ")
		}
	}
	return subtle.ConstantTimeCompare([]byte(tok), []byte(h.token)) == 1
}

// serveMaker is /apps/api/<appId>/…?access_token=…, every route a GET.
func (h *Hub) serveMaker(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("app") != h.appID {
		// Another app's OAuth endpoints: a Rule Machine rule's Local End Point, or nothing.
		h.ruleEndpoint(w, r)
		return
	}
	if !h.tokenOK(r) {
		makerError(w, http.StatusUnauthorized, "AccessDenied", "Invalid or missing access_token") // assumed
		return
	}
	// Split the escaped path: command arguments are comma-separated inside one segment.
	esc := strings.TrimPrefix(r.URL.EscapedPath(), "/apps/api/"+h.appID+"/")
	seg := strings.Split(esc, "/")
	un := func(i int) string {
		s, err := url.PathUnescape(seg[i])
		if err != nil {
			return seg[i]
		}
		return s
	}
	switch {
	case len(seg) == 1 && seg[0] == "devices":
		h.listDevices(w)
	case len(seg) == 2 && seg[0] == "devices" && seg[1] == "all":
		h.allDevices(w)
	case len(seg) >= 2 && seg[0] == "devices":
		h.deviceRoute(w, seg[1], seg[2:])
	case len(seg) == 1 && seg[0] == "modes":
		h.listModes(w)
	case len(seg) == 2 && seg[0] == "modes":
		h.setMode(w, un(1))
	case len(seg) == 1 && seg[0] == "hsm":
		h.mu.Lock()
		st := h.hsm
		h.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]string{"hsm": st})
	case len(seg) == 2 && seg[0] == "hsm":
		h.setHSM(w, un(1))
	case seg[0] == "hubvariables" && len(seg) <= 3:
		h.hubVariables(w, seg, un)
	case len(seg) == 1 && seg[0] == "rooms":
		h.mu.Lock()
		rooms := h.roomsLocked(true)
		h.mu.Unlock()
		writeJSON(w, http.StatusOK, rooms)
	case seg[0] == "postURL" && len(seg) <= 2:
		target := ""
		if len(seg) == 2 {
			target = un(1)
			if u, err := url.Parse(target); err != nil || (u.Scheme != "http" && u.Scheme != "https") {
				makerError(w, http.StatusBadRequest, "InvalidURL", "postURL must be an http(s) URL")
				return
			}
		}
		h.mu.Lock()
		h.postURL = target
		h.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"postURL": target})
	default:
		makerError(w, http.StatusNotFound, "NotFound", "Not found")
	}
}

type wireCmd struct {
	Command string `json:"command"`
}

func (h *Hub) listDevices(w http.ResponseWriter) {
	h.mu.Lock()
	var out []map[string]any
	for _, d := range h.devices {
		if d.authorised {
			out = append(out, map[string]any{"id": strconv.Itoa(d.id), "name": d.name, "label": d.label, "type": d.typ, "room": d.room})
		}
	}
	h.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// allDevices is /devices/all: attributes as a name→value MAP (numbers as strings, as the hub
// sends them there), commands as objects.
func (h *Hub) allDevices(w http.ResponseWriter) {
	h.mu.Lock()
	out := []map[string]any{}
	for _, d := range h.devices {
		if !d.authorised {
			continue
		}
		attrs := map[string]any{}
		for _, a := range d.attrs {
			if a.value == nil {
				attrs[a.name] = nil
			} else {
				attrs[a.name] = valueString(a.value)
			}
		}
		cmds := make([]wireCmd, 0, len(d.cmds))
		for _, c := range d.cmds {
			cmds = append(cmds, wireCmd{c.name})
		}
		out = append(out, map[string]any{"id": strconv.Itoa(d.id), "name": d.name, "label": d.label, "type": d.typ,
			"room": d.room, "date": h.boot.UTC().Format("2006-01-02T15:04:05-0700"), "model": d.model, "manufacturer": d.maker,
			"capabilities": d.caps, "attributes": attrs, "commands": cmds})
	}
	h.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// deviceJSONLocked is /devices/<id>: attributes as an ARRAY with currentValue (numbers as
// numbers) and dataType; capabilities mix names with an attribute object, as firmware does.
func (h *Hub) deviceJSONLocked(d *device) map[string]any {
	attrs := make([]map[string]any, 0, len(d.attrs))
	var capAttrs []map[string]any
	for _, a := range d.attrs {
		m := map[string]any{"name": a.name, "currentValue": a.value, "dataType": a.dataType}
		if len(a.values) > 0 {
			m["values"] = a.values
		}
		attrs = append(attrs, m)
		capAttrs = append(capAttrs, map[string]any{"name": a.name, "dataType": nil})
	}
	caps := make([]any, 0, len(d.caps)+1)
	for _, c := range d.caps {
		caps = append(caps, c)
	}
	caps = append(caps, map[string]any{"attributes": capAttrs})
	var cmds any
	if h.o.BareCommands {
		names := make([]string, 0, len(d.cmds))
		for _, c := range d.cmds {
			names = append(names, c.name)
		}
		cmds = names
	} else {
		objs := make([]wireCmd, 0, len(d.cmds))
		for _, c := range d.cmds {
			objs = append(objs, wireCmd{c.name})
		}
		cmds = objs
	}
	return map[string]any{"id": strconv.Itoa(d.id), "name": d.name, "label": d.label, "type": d.typ, "room": d.room,
		"attributes": attrs, "capabilities": caps, "commands": cmds}
}

func (h *Hub) deviceRoute(w http.ResponseWriter, rawID string, rest []string) {
	id, err := strconv.Atoi(rawID)
	h.mu.Lock()
	d, ok := h.byID[id]
	if err != nil || !ok || !d.authorised {
		h.mu.Unlock()
		makerError(w, http.StatusNotFound, "DeviceNotFound", "Device not found") // assumed
		return
	}
	switch {
	case len(rest) == 0:
		body := h.deviceJSONLocked(d)
		h.mu.Unlock()
		writeJSON(w, http.StatusOK, body)
	case len(rest) == 1 && rest[0] == "events":
		hist := h.history[id]
		out := make([]map[string]any, 0, len(hist))
		for i := len(hist) - 1; i >= 0; i-- {
			e := hist[i]
			out = append(out, map[string]any{"device_id": strconv.Itoa(id), "label": d.label, "name": e.name, "value": e.value,
				"date": e.date.Format("2006-01-02T15:04:05.000-0700"), "unit": optional(e.unit), "isStateChange": e.stateChange,
				"source": "DEVICE", "description": e.desc})
		}
		h.mu.Unlock()
		writeJSON(w, http.StatusOK, out)
	case len(rest) == 1 && rest[0] == "commands":
		out := make([]map[string]any, 0, len(d.cmds))
		for _, c := range d.cmds {
			types := c.types
			if len(types) == 0 {
				types = []string{"n/a"}
			}
			out = append(out, map[string]any{"command": c.name, "type": types})
		}
		h.mu.Unlock()
		writeJSON(w, http.StatusOK, out)
	case len(rest) == 1 && rest[0] == "capabilities":
		body := map[string]any{"capabilities": d.caps}
		h.mu.Unlock()
		writeJSON(w, http.StatusOK, body)
	case len(rest) == 2 && rest[0] == "attribute":
		name, _ := url.PathUnescape(rest[1])
		a := d.attr(name)
		if a == nil {
			h.mu.Unlock()
			makerError(w, http.StatusNotFound, "AttributeNotFound", "Attribute "+name+" not found") // assumed
			return
		}
		body := map[string]any{"id": strconv.Itoa(id), "attribute": a.name, "value": a.value}
		h.mu.Unlock()
		writeJSON(w, http.StatusOK, body)
	case len(rest) <= 2:
		cmd, _ := url.PathUnescape(rest[0])
		var args []string
		if len(rest) == 2 {
			for _, a := range strings.Split(rest[1], ",") {
				s, err := url.PathUnescape(a)
				if err != nil {
					s = a
				}
				args = append(args, s)
			}
		}
		changes, err := d.run(cmd, args)
		if err != nil {
			h.mu.Unlock()
			ce, _ := err.(*cmdError)
			status := http.StatusBadRequest
			if ce != nil {
				status = ce.status
			}
			makerError(w, status, "CommandError", err.Error()) // assumed
			return
		}
		recs := h.applyLocked(d, changes, "digital")
		body := h.deviceJSONLocked(d)
		h.mu.Unlock()
		h.publish(recs)
		writeJSON(w, http.StatusOK, body)
	default:
		h.mu.Unlock()
		makerError(w, http.StatusNotFound, "NotFound", "Not found")
	}
}

func (h *Hub) modesLocked() []map[string]any {
	out := make([]map[string]any, 0, len(h.modes))
	for _, m := range h.modes {
		out = append(out, map[string]any{"id": m.ID, "name": m.Name, "active": m.ID == h.modeID})
	}
	return out
}

func (h *Hub) listModes(w http.ResponseWriter) {
	h.mu.Lock()
	out := h.modesLocked()
	h.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// setMode is /modes/<id>: the id, never the name.
func (h *Hub) setMode(w http.ResponseWriter, raw string) {
	id, err := strconv.Atoi(raw)
	h.mu.Lock()
	name := h.modeNameLocked(id)
	if err != nil || name == "" {
		h.mu.Unlock()
		makerError(w, http.StatusNotFound, "ModeNotFound", "Mode "+raw+" not found") // assumed
		return
	}
	changed := h.modeID != id
	h.modeID = id
	out := h.modesLocked()
	h.mu.Unlock()
	if changed {
		h.emitLocation("mode", name, "Mode is "+name)
	}
	writeJSON(w, http.StatusOK, out)
}

// setHSM is /hsm/<value>. Arming passes through "arming…" for ArmingDelay.
func (h *Hub) setHSM(w http.ResponseWriter, value string) {
	armed := map[string]string{"armAway": "Away", "armHome": "Home", "armNight": "Night"}
	h.mu.Lock()
	if h.hsmTimer != nil {
		h.hsmTimer.Stop()
		h.hsmTimer = nil
	}
	var now string
	switch {
	case armed[value] != "":
		if h.o.ArmingDelay > 0 {
			now = "arming" + armed[value]
			final := "armed" + armed[value]
			h.hsmTimer = time.AfterFunc(h.o.ArmingDelay, func() {
				h.mu.Lock()
				if h.hsm != now {
					h.mu.Unlock()
					return
				}
				h.hsm = final
				h.mu.Unlock()
				h.emitLocation("hsmStatus", final, "HSM is "+final)
			})
		} else {
			now = "armed" + armed[value]
		}
	case value == "disarm" || value == "disarmAll":
		now = "disarmed"
	case value == "cancelAlerts":
		now = h.hsm
		h.mu.Unlock()
		h.emitLocation("hsmAlert", "cancel", "HSM alerts cancelled")
		writeJSON(w, http.StatusOK, map[string]string{"hsm": now})
		return
	default:
		h.mu.Unlock()
		makerError(w, http.StatusBadRequest, "InvalidHSM", "Invalid HSM value "+value) // assumed
		return
	}
	changed := h.hsm != now
	h.hsm = now
	h.mu.Unlock()
	if changed {
		h.emitLocation("hsmStatus", now, "HSM is "+now)
	}
	writeJSON(w, http.StatusOK, map[string]string{"hsm": now})
}

func (h *Hub) hubVariables(w http.ResponseWriter, seg []string, un func(int) string) {
	h.mu.Lock()
	if len(seg) == 1 {
		out := slices.Clone(h.vars)
		h.mu.Unlock()
		writeJSON(w, http.StatusOK, out)
		return
	}
	name := un(1)
	i := slices.IndexFunc(h.vars, func(v variable) bool { return v.Name == name })
	if i < 0 {
		h.mu.Unlock()
		makerError(w, http.StatusNotFound, "VariableNotFound", "Variable "+name+" not found") // assumed
		return
	}
	if len(seg) == 3 {
		value := un(2)
		if err := checkVarValue(h.vars[i].Type, value); err != nil {
			h.mu.Unlock()
			makerError(w, http.StatusBadRequest, "InvalidValue", err.Error())
			return
		}
		changed := h.vars[i].Value != value
		h.vars[i].Value = value
		v := h.vars[i]
		h.mu.Unlock()
		if changed {
			h.emitLocation("variable:"+name, value, name+" is "+value)
		}
		writeJSON(w, http.StatusOK, v)
		return
	}
	v := h.vars[i]
	h.mu.Unlock()
	writeJSON(w, http.StatusOK, v)
}

func checkVarValue(typ, v string) error {
	switch typ {
	case "integer":
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return fmt.Errorf("%q is not an integer", v)
		}
	case "decimal":
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return fmt.Errorf("%q is not a decimal", v)
		}
	case "boolean":
		if v != "true" && v != "false" {
			return fmt.Errorf("%q is not true or false", v)
		}
	}
	return nil
}

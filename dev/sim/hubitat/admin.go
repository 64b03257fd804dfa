package hubitat

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

const sessionCookie = "HUBSESSION"

func (h *Hub) adminRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><body><form method="post" action="/login"><input name="username"><input name="password" type="password"><button name="submit" value="Login">Login</button></form></body></html>`)
	})
	mux.HandleFunc("POST /login", h.login)
	gate := func(method, path string, fn http.HandlerFunc) {
		mux.HandleFunc(method+" "+path, func(w http.ResponseWriter, r *http.Request) {
			if h.authed(w, r) {
				fn(w, r)
			}
		})
	}
	text := func(w http.ResponseWriter, s string) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, s)
	}
	number := func(v float64, unit string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			s := strconv.FormatFloat(v, 'f', -1, 64)
			if h.o.TextReplies {
				s += " " + unit + "\n"
			}
			text(w, s)
		}
	}
	gate("GET", "/hub/advanced/freeOSMemory", number(482716, "KB"))
	gate("GET", "/hub/advanced/internalTempCelsius", number(43.2, "C"))
	gate("GET", "/hub/advanced/databaseSize", number(38912, "KB"))
	gate("GET", "/hub2/userAppTypes", func(w http.ResponseWriter, r *http.Request) { h.codeList(w, &h.apps) })
	gate("GET", "/hub2/userDeviceTypes", func(w http.ResponseWriter, r *http.Request) { h.codeList(w, &h.drivers) })
	gate("GET", "/hub2/zwaveInfo", func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		repairing := h.repairing
		h.mu.Unlock()
		if h.o.TextReplies {
			text(w, fmt.Sprintf("Z-Wave region: US\nSDK: 7.18.3\nHome ID: 0xC8F1A2B3\nNodes: 6\nRepair running: %v\n", repairing))
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"enabled": true, "region": "US", "zwaveSDKVersion": "7.18.3", "homeId": "0xC8F1A2B3",
			"repairRunning": repairing, "nodes": []map[string]any{
				{"nodeId": 2, "name": "Kitchen Lights", "deviceId": 2, "security": "S2 Authenticated", "rssi": -62},
				{"nodeId": 3, "name": "Porch Light", "deviceId": 3, "security": "S2 Authenticated", "rssi": -71},
				{"nodeId": 8, "name": "Front Door Lock", "deviceId": 8, "security": "S0", "rssi": -68},
				{"nodeId": 9, "name": "Back Door Lock", "deviceId": 9, "security": "S2 Access Control", "rssi": -74},
				{"nodeId": 16, "name": "Hallway Thermostat", "deviceId": 16, "security": "None", "rssi": -59},
				{"nodeId": 29, "name": "Garage Door Relay", "deviceId": 29, "security": "S2 Authenticated", "rssi": -80},
			}})
	})
	gate("GET", "/hub2/zigbeeInfo", func(w http.ResponseWriter, r *http.Request) {
		if h.o.TextReplies {
			text(w, "Zigbee channel: 20\nPAN ID: 1A2B\nDevices: 18\n")
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"enabled": true, "channel": 20, "panId": "0x1A2B", "extendedPanId": "3C5F9A11D2E4B708",
			"powerLevel": 8, "zigbeeId": "00124B0023A1B2C3", "deviceCount": 18})
	})
	gate("GET", "/hub2/hubData", func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		boot, fw, offered := h.boot, h.adminStateLocked().firmware, h.adminStateLocked().offered
		h.mu.Unlock()
		loc := h.o.Location
		// hubId, version, model, name, safeMode and alerts are the shape upstream captured from a
		// real hub (Hub2DataDiagnosticsSpec); the location fields are the simulator's own.
		writeJSON(w, http.StatusOK, map[string]any{"hubId": "811e21ba", "name": "Hubitat Elevation", "model": "C-8 Pro", "version": fw,
			"safeMode": false, "alerts": map[string]any{"platformUpdateAvailable": offered != "", "platformUpdateVersion": offered, "hubLowMemory": false, "hubHighLoad": false,
				"hubLoadSevere": false, "zwaveOffline": false, "zigbeeOffline": false, "hubLargeDatabase": false, "localBackupFailed": false,
				"cloudBackupFailed": false, "weakZigbee": false, "databaseSize": 38, "headerMessages": []string{}},
			"ipAddress": strings.Split(strings.TrimPrefix(h.URL(), "http://"), ":")[0], "uptime": int(time.Since(boot).Seconds()),
			"location": loc.Name, "latitude": loc.Latitude, "longitude": loc.Longitude, "timeZone": loc.TimeZone,
			"temperatureScale": loc.TemperatureScale, "zipCode": loc.ZipCode, "zigbeeChannel": 20, "zwaveVersion": "7.18.3"})
	})
	for _, kind := range []string{"app", "driver"} {
		list := &h.apps
		if kind == "driver" {
			list = &h.drivers
		}
		gate("GET", "/"+kind+"/ajax/code", func(w http.ResponseWriter, r *http.Request) { h.codeSource(w, r, kind, list) })
		gate("POST", "/"+kind+"/saveOrUpdateJson", func(w http.ResponseWriter, r *http.Request) { h.codeSaveJSON(w, r, kind, list) })
	}
	gate("GET", "/app/edit/deleteJsonSafe/{id}", func(w http.ResponseWriter, r *http.Request) { h.codeDelete(w, r, "app", &h.apps) })
	gate("GET", "/driver/editor/deleteJson/{id}", func(w http.ResponseWriter, r *http.Request) { h.codeDelete(w, r, "driver", &h.drivers) })
	gate("GET", "/hub/backupDB", h.backup)
	gate("POST", "/hub/reboot", func(w http.ResponseWriter, r *http.Request) {
		text(w, "OK")
		go func() {
			time.Sleep(10 * time.Millisecond) // let the reply leave first
			h.Reboot()
		}()
	})
	gate("POST", "/hub/shutdown", func(w http.ResponseWriter, r *http.Request) {
		text(w, "OK")
		go func() {
			time.Sleep(10 * time.Millisecond)
			_ = h.setDown(true)
		}()
	})
	// C-7 and later start a repair with GET /hub/zwaveRepair2; C-5 and earlier with GET
	// /hub/zwaveRepair (upstream's toolManageZwave tries them in that order).
	repair := func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.repairing = true
		h.mu.Unlock()
		text(w, "OK")
	}
	gate("GET", "/hub/zwaveRepair2", repair)
	gate("GET", "/hub/zwaveRepair", repair)
}

// login is Hub Security's form post: a session cookie and a redirect home, or a redirect back
// to the login page.
func (h *Hub) login(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	userOK := subtle.ConstantTimeCompare([]byte(r.PostForm.Get("username")), []byte(h.o.Username)) == 1
	passOK := subtle.ConstantTimeCompare([]byte(r.PostForm.Get("password")), []byte(h.o.Password)) == 1
	if h.o.Username == "" || !userOK || !passOK {
		http.Redirect(w, r, "/login?loginFailed=true", http.StatusFound)
		return
	}
	sid := uuid()
	h.mu.Lock()
	h.sessions[sid] = time.Now().Add(h.o.SessionTTL)
	h.logins++
	h.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: sid, Path: "/", HttpOnly: true})
	http.SetCookie(w, &http.Cookie{Name: "HUBLANG", Value: "en", Path: "/"})
	http.Redirect(w, r, "/", http.StatusFound)
}

// authed lets a request through when Hub Security is off or it carries a live session.
func (h *Hub) authed(w http.ResponseWriter, r *http.Request) bool {
	if h.o.Username == "" {
		return true
	}
	if c, err := r.Cookie(sessionCookie); err == nil {
		h.mu.Lock()
		exp, ok := h.sessions[c.Value]
		h.mu.Unlock()
		if ok && time.Now().Before(exp) {
			return true
		}
	}
	if h.o.LoginStatus != 0 {
		http.Error(w, "Unauthorized", h.o.LoginStatus)
		return false
	}
	http.Redirect(w, r, "/login", http.StatusFound)
	return false
}

func (h *Hub) codeList(w http.ResponseWriter, list *[]code) {
	h.mu.Lock()
	out := make([]map[string]any, 0, len(*list))
	for _, c := range *list {
		out = append(out, map[string]any{"id": c.ID, "name": c.Name, "namespace": c.Namespace, "version": c.Version})
	}
	h.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func findCode(list []code, raw string) int {
	id, err := strconv.Atoi(raw)
	if err != nil {
		return -1
	}
	return slices.IndexFunc(list, func(c code) bool { return c.ID == id })
}

func (h *Hub) codeSource(w http.ResponseWriter, r *http.Request, kind string, list *[]code) {
	h.mu.Lock()
	defer h.mu.Unlock()
	i := findCode(*list, r.URL.Query().Get("id"))
	if i < 0 {
		writeJSON(w, http.StatusOK, map[string]any{"status": "error", "errorMessage": kind + " not found"})
		return
	}
	c := (*list)[i]
	writeJSON(w, http.StatusOK, map[string]any{"id": c.ID, "source": c.Source, "version": c.Version, "status": "success"})
}

// compile is the simulator's Groovy check: a definition and balanced braces.
func compile(kind, source string) (string, error) {
	if !strings.Contains(source, "definition(") {
		//lint:ignore ST1005 the hub's own compiler message, verbatim.
		return "", fmt.Errorf("No definition found for this %s", kind)
	}
	if strings.Count(source, "{") != strings.Count(source, "}") {
		return "", fmt.Errorf("unexpected token: } @ line %d", strings.Count(source, "\n")+1)
	}
	name := kind
	if _, after, ok := strings.Cut(source, `name: "`); ok {
		name, _, _ = strings.Cut(after, `"`)
	}
	return name, nil
}

// codeSaveJSON is /app|driver/saveOrUpdateJson, firmware 2.5's code save: a JSON body
// {id, source, version}; id null creates, a number updates that code if version is current.
// The answer is {success, id, message[, version]}, a compile error in message.
func (h *Hub) codeSaveJSON(w http.ResponseWriter, r *http.Request, kind string, list *[]code) {
	var in struct {
		ID      *int   `json:"id"`
		Source  string `json:"source"`
		Version *int   `json:"version"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 8<<20)).Decode(&in); err != nil {
		writeJSON(w, http.StatusOK, map[string]any{"success": false, "message": "Invalid JSON body"})
		return
	}
	name, err := compile(kind, in.Source)
	if err != nil {
		writeJSON(w, http.StatusOK, map[string]any{"success": false, "message": err.Error()})
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if in.ID == nil {
		h.nextCode++
		*list = append(*list, code{ID: h.nextCode, Name: name, Namespace: "user", Version: 1, Source: in.Source})
		writeJSON(w, http.StatusOK, map[string]any{"success": true, "id": h.nextCode, "message": ""})
		return
	}
	i := findCode(*list, strconv.Itoa(*in.ID))
	if i < 0 {
		writeJSON(w, http.StatusOK, map[string]any{"success": false, "message": kind + " not found"})
		return
	}
	if in.Version == nil || *in.Version != (*list)[i].Version {
		writeJSON(w, http.StatusOK, map[string]any{"success": false, "message": "The code was changed since you opened it (version mismatch)"})
		return
	}
	(*list)[i].Source = in.Source
	(*list)[i].Version++
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "id": (*list)[i].ID, "message": "", "version": (*list)[i].Version})
}

func (h *Hub) codeDelete(w http.ResponseWriter, r *http.Request, kind string, list *[]code) {
	h.mu.Lock()
	defer h.mu.Unlock()
	i := findCode(*list, r.PathValue("id"))
	if i < 0 {
		writeJSON(w, http.StatusOK, map[string]any{"status": false, "errorMessage": kind + " not found"})
		return
	}
	*list = slices.Delete(*list, i, i+1)
	writeJSON(w, http.StatusOK, map[string]any{"status": true})
}

// backup is /hub/backupDB?fileName=latest: a binary file (a header, then the hub's state).
func (h *Hub) backup(w http.ResponseWriter, r *http.Request) {
	if name := r.URL.Query().Get("fileName"); name != "latest" { // a backup the hub keeps (hubadmin.go)
		h.serveLocalBackup(w, name)
		return
	}
	h.mu.Lock()
	h.backups++
	state := map[string]any{"modes": h.modes, "mode": h.modeID, "hsm": h.hsm, "variables": h.vars, "devices": len(h.devices)}
	h.recordBackupLocked(h.snapshotLocked("latest"))
	h.mu.Unlock()
	body, _ := json.Marshal(state)
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="hub_backup.lzf"`)
	_, _ = w.Write(append([]byte{'Z', 'V', 0x01, 0x00, 0xff, 0xfe}, body...))
}

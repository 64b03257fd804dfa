package hass_test

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sup(t *testing.T, method, path, body string) reply {
	t.Helper()
	return do(t, home.SupervisorURL(), method, path, home.SupervisorToken(), body)
}

func envelope(t *testing.T, r reply) (string, map[string]any, string) {
	t.Helper()
	m, ok := r.json(t).(map[string]any)
	if !ok {
		t.Fatalf("not an envelope: %s", r.body)
	}
	data, _ := m["data"].(map[string]any)
	msg, _ := m["message"].(string)
	return m["result"].(string), data, msg
}

func TestSupervisorAuth(t *testing.T) {
	for _, c := range []struct {
		token, body string
		status      int
	}{{"", "401: Unauthorized", 401}, {"wrong", "403: Forbidden", 403}} {
		for _, p := range []string{"/addons", "/core/info", "/core/api/states", "/supervisor/ping"} {
			r := do(t, home.SupervisorURL(), "GET", p, c.token, "")
			if r.status != c.status || string(r.body) != c.body {
				t.Errorf("%s with %q: %d %s", p, c.token, r.status, r.body)
			}
		}
	}
	if r := sup(t, "GET", "/nothing/here", ""); r.status != 404 {
		t.Errorf("unknown route: %d", r.status)
	}
}

func TestSupervisorEndpoints(t *testing.T) {
	cases := []struct {
		method, path, body string
		status             int
		result             string
		check              func(t *testing.T, data map[string]any, msg string)
	}{
		{"GET", "/supervisor/ping", "", 200, "ok", nil},
		{"GET", "/supervisor/info", "", 200, "ok", func(t *testing.T, d map[string]any, _ string) {
			if d["version"] == nil || d["addons"] == nil {
				t.Errorf("supervisor info: %v", d)
			}
		}},
		{"GET", "/core/info", "", 200, "ok", func(t *testing.T, d map[string]any, _ string) {
			// port and ssl are core's listener: add-ons build core's direct URL from them.
			if d["version"] != "2026.8.1" || fmt.Sprint(d["port"]) != strings.TrimPrefix(home.URL(), "http://127.0.0.1:") || d["ssl"] != false || d["machine"] == nil {
				t.Errorf("core info: %v", d)
			}
		}},
		{"GET", "/host/info", "", 200, "ok", func(t *testing.T, d map[string]any, _ string) {
			if d["hostname"] != "homeassistant" || d["disk_free"] == nil || d["features"] == nil {
				t.Errorf("host info: %v", d)
			}
		}},
		{"GET", "/os/info", "", 200, "ok", func(t *testing.T, d map[string]any, _ string) {
			if d["boot_slots"] == nil || d["version"] == nil {
				t.Errorf("os info: %v", d)
			}
		}},
		{"GET", "/resolution/info", "", 200, "ok", func(t *testing.T, d map[string]any, _ string) {
			for _, k := range []string{"unsupported", "unhealthy", "issues", "suggestions", "checks"} {
				if d[k] == nil {
					t.Errorf("resolution info lacks %s", k)
				}
			}
		}},
		{"POST", "/core/check", "", 200, "ok", nil},
		{"GET", "/addons", "", 200, "ok", func(t *testing.T, d map[string]any, _ string) {
			list := d["addons"].([]any)
			for _, a := range list {
				m := a.(map[string]any)
				if m["installed"] != true {
					t.Errorf("/addons lists only installed add-ons: %v", m["slug"])
				}
				for _, k := range []string{"name", "slug", "description", "version", "version_latest", "update_available", "state", "repository", "icon"} {
					if _, ok := m[k]; !ok {
						t.Errorf("addon lacks %s", k)
					}
				}
			}
		}},
		{"GET", "/addons/self/info", "", 200, "ok", func(t *testing.T, d map[string]any, _ string) {
			if d["slug"] != "local_hamcp" || d["ingress"] != true || d["options"] == nil {
				t.Errorf("self info: %v", d)
			}
		}},
		{"GET", "/addons/nope/info", "", 404, "error", func(t *testing.T, _ map[string]any, msg string) {
			if msg != "Addon nope does not exist" {
				t.Errorf("message: %q", msg)
			}
		}},
		{"POST", "/addons/core_samba/start", "", 400, "error", func(t *testing.T, _ map[string]any, msg string) {
			if msg != "Addon is not installed" {
				t.Errorf("message: %q", msg)
			}
		}},
		{"POST", "/addons/core_configurator/start", "", 200, "ok", nil},
		{"GET", "/addons/core_configurator/info", "", 200, "ok", func(t *testing.T, d map[string]any, _ string) {
			if d["state"] != "started" {
				t.Errorf("state after start: %v", d["state"])
			}
		}},
		{"POST", "/addons/core_configurator/stop", "", 200, "ok", nil},
		{"GET", "/addons/core_configurator/info", "", 200, "ok", func(t *testing.T, d map[string]any, _ string) {
			if d["state"] != "stopped" {
				t.Errorf("state after stop: %v", d["state"])
			}
		}},
		{"POST", "/store/addons/core_samba/install", "", 200, "ok", nil},
		{"POST", "/store/addons/core_samba/install", "", 400, "error", nil},
		{"POST", "/store/addons/core_samba/update", "", 400, "error", func(t *testing.T, _ map[string]any, msg string) {
			if !strings.Contains(msg, "No update available") {
				t.Errorf("message: %q", msg)
			}
		}},
		{"POST", "/store/addons/core_mosquitto/update", `{"background":false}`, 200, "ok", nil},
		{"GET", "/addons/core_mosquitto/info", "", 200, "ok", func(t *testing.T, d map[string]any, _ string) {
			if d["version"] != "6.5.0" || d["update_available"] != false {
				t.Errorf("after update: %v %v", d["version"], d["update_available"])
			}
		}},
		{"POST", "/addons/core_samba/uninstall", "", 200, "ok", nil},
		{"GET", "/addons/core_samba/logs", "", 400, "error", nil},
		{"POST", "/backups/new/partial", `{}`, 400, "error", func(t *testing.T, _ map[string]any, msg string) {
			if !strings.Contains(msg, "at least one of") {
				t.Errorf("message: %q", msg)
			}
		}},
		{"POST", "/backups/new/full", `{"bogus":1}`, 400, "error", nil},
		{"DELETE", "/backups/deadbeef", "", 404, "error", func(t *testing.T, _ map[string]any, msg string) {
			if msg != "Backup does not exist" {
				t.Errorf("message: %q", msg)
			}
		}},
	}
	for i, c := range cases {
		r := sup(t, c.method, c.path, c.body)
		if r.status != c.status {
			t.Errorf("step %d %s %s: status %d, want %d: %s", i, c.method, c.path, r.status, c.status, r.body)
			continue
		}
		res, data, msg := envelope(t, r)
		if res != c.result {
			t.Errorf("step %d %s %s: result %s (%s)", i, c.method, c.path, res, r.body)
		}
		if c.check != nil {
			c.check(t, data, msg)
		}
	}
}

func TestSupervisorLogs(t *testing.T) {
	r := sup(t, "GET", "/addons/core_mosquitto/logs?lines=2", "")
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") {
		t.Fatalf("addon logs: %d %s", r.status, r.header)
	}
	if n := strings.Count(string(r.body), "\n"); n != 2 {
		t.Errorf("lines=2 gave %d lines: %q", n, r.body)
	}
	home.Model().Log("warning", "test", "marker line for core logs")
	r = sup(t, "GET", "/core/logs", "")
	if r.status != 200 || !strings.Contains(string(r.body), "marker line for core logs") {
		t.Errorf("core logs: %d %.200s", r.status, r.body)
	}
}

func TestSupervisorBackups(t *testing.T) {
	r := sup(t, "POST", "/backups/new/full", `{"name":"Before upgrade","homeassistant_exclude_database":true}`)
	res, data, _ := envelope(t, r)
	if res != "ok" || data["slug"] == nil {
		t.Fatalf("new full: %s", r.body)
	}
	slug := data["slug"].(string)
	path := filepath.Join(home.Sandbox().Backup, slug+".tar")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("backup file not written: %v", err)
	}
	members := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(raw))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		members[h.Name] = b
	}
	if _, ok := members["./backup.json"]; !ok || len(members["./homeassistant.tar.gz"]) == 0 {
		t.Errorf("backup members: %v", keys(members))
	}
	if !bytes.Contains(members["./backup.json"], []byte(`"name": "Before upgrade"`)) {
		t.Errorf("backup.json: %s", members["./backup.json"])
	}
	_, list, _ := envelope(t, sup(t, "GET", "/backups", ""))
	found := false
	for _, b := range list["backups"].([]any) {
		m := b.(map[string]any)
		if m["slug"] == slug {
			found = m["type"] == "full" && m["content"].(map[string]any)["homeassistant"] == true
		}
	}
	if !found {
		t.Errorf("backup not listed: %v", list)
	}
	part := sup(t, "POST", "/backups/new/partial", `{"folders":["share","ssl"],"addons":["core_mosquitto"]}`)
	if res, d, _ := envelope(t, part); res != "ok" || d["slug"] == nil {
		t.Errorf("partial: %s", part.body)
	}
	if r := sup(t, "GET", "/backups/"+slug+"/download", ""); r.status != 200 || len(r.body) != len(raw) {
		t.Errorf("download: %d %d bytes", r.status, len(r.body))
	}
	if r := sup(t, "DELETE", "/backups/"+slug, ""); r.status != 200 {
		t.Errorf("delete: %d %s", r.status, r.body)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Error("backup file still on disk")
	}
	if r := sup(t, "DELETE", "/backups/"+slug, ""); r.status != 404 {
		t.Errorf("second delete: %d", r.status)
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestSupervisorCoreProxy(t *testing.T) {
	r := sup(t, "GET", "/core/api/states/lock.front_door", "")
	if r.status != 200 || !strings.Contains(string(r.body), `"entity_id":"lock.front_door"`) {
		t.Fatalf("proxy GET: %d %s", r.status, r.body)
	}
	r = sup(t, "POST", "/core/api/services/input_boolean/turn_on", `{"entity_id":"input_boolean.guest_mode"}`)
	if r.status != 200 || !strings.Contains(string(r.body), `"state":"on"`) {
		t.Errorf("proxy POST: %d %s", r.status, r.body)
	}
	if r := sup(t, "GET", "/core/api/states/light.nope", ""); r.status != 404 || string(r.body) != `{"message":"Entity not found."}` {
		t.Errorf("proxy passes HA errors through: %d %s", r.status, r.body)
	}
	// the WebSocket proxy: the add-on logs in with SUPERVISOR_TOKEN
	w := dialRaw(t, wsURL(home.SupervisorURL())+"/core/websocket")
	if m := w.next(); m["type"] != "auth_required" {
		t.Fatalf("proxy ws: %v", m)
	}
	w.send(map[string]any{"type": "auth", "access_token": home.SupervisorToken()})
	if m := w.next(); m["type"] != "auth_ok" {
		t.Fatalf("proxy ws auth: %v", m)
	}
	me := w.ok(map[string]any{"id": 1, "type": "auth/current_user"}).(map[string]any)
	if me["name"] != "Supervisor" || me["is_admin"] != true {
		t.Errorf("proxied user: %v", me)
	}
	bad := dialRaw(t, wsURL(home.SupervisorURL())+"/core/websocket")
	bad.next()
	bad.send(map[string]any{"type": "auth", "access_token": home.Token()})
	if m := bad.next(); m["type"] != "auth_invalid" {
		t.Errorf("proxy accepts a non-supervisor token: %v", m)
	}
}

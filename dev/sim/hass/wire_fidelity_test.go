package hass_test

import (
	"strings"
	"testing"
)

// Shapes pinned to the real handlers named in docs/home-assistant-fidelity.md.

// HACS's hacs_repository_info schema (custom_components/hacs/websocket/repository.py) has
// repository_id only; the WebSocket base schema refuses any other key.
func TestHACSRepositoryInfoSchemaIsHACS(t *testing.T) {
	w := dialAuthed(t, home.Token())
	m, _ := w.cmd(map[string]any{"id": 1, "type": "hacs/repository/info", "repository_id": "999", "language": "en"})
	if errCode(m) != "invalid_format" || !strings.Contains(errMsg(m), "extra keys not allowed") || !strings.Contains(errMsg(m), "language") {
		t.Fatalf("an extra key must be refused like HACS does: %v", m)
	}
}

// The Supervisor's proxy routes (supervisor/api/__init__.py _register_proxy): GET, POST and DELETE
// under /core/api/, GET and POST under the legacy /homeassistant/api/, and the WebSocket under
// both /core/websocket and /core/api/websocket.
func TestSupervisorProxyRoutesAreTheSupervisors(t *testing.T) {
	tests := []struct {
		method, path string
		status       int
	}{
		{"GET", "/core/api/states/lock.front_door", 200},
		{"GET", "/homeassistant/api/states/lock.front_door", 200},
		{"DELETE", "/core/api/states/light.nope", 404}, // reaches core, which answers 404
		{"PUT", "/core/api/states/lock.front_door", 405},
		{"PATCH", "/core/api/states/lock.front_door", 405},
		{"DELETE", "/homeassistant/api/states/lock.front_door", 405},
		{"GET", "/core/api", 404},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			if r := sup(t, tc.method, tc.path, ""); r.status != tc.status {
				t.Fatalf("%s %s: %d %s, want %d", tc.method, tc.path, r.status, r.body, tc.status)
			}
		})
	}
	for _, path := range []string{"/core/api/websocket", "/homeassistant/api/websocket"} {
		w := dialRaw(t, wsURL(home.SupervisorURL())+path)
		if m := w.next(); m["type"] != "auth_required" {
			t.Fatalf("%s: %v", path, m)
		}
	}
}

package hass_test

import (
	"io"
	"net/http"
	"testing"
)

// BenchmarkGetStates measures GET /api/states over loopback.
func BenchmarkGetStates(b *testing.B) {
	req, _ := http.NewRequest("GET", home.URL()+"/api/states", nil)
	req.Header.Set("Authorization", "Bearer "+home.Token())
	for b.Loop() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// BenchmarkWSCallService measures a call_service round trip on one socket.
func BenchmarkWSCallService(b *testing.B) {
	w := dialAuthed(b, home.Token())
	id := 0
	for b.Loop() {
		id++
		m, _ := w.cmd(map[string]any{"id": id, "type": "call_service", "domain": "light", "service": "toggle", "target": map[string]any{"entity_id": "light.garage"}})
		if m["success"] != true {
			b.Fatal(m)
		}
	}
}

package demo_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/dev/sim"
	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/src/config"
)

// The demo runs a Hubitat hub beside Home Assistant and hamcp reaches it with either live-event
// source: the eventsocket, or Maker API pushes into hamcp's own HTTP server.
func TestDemoHubitat(t *testing.T) {
	t.Parallel()
	for _, events := range []string{"auto", "posturl"} {
		t.Run(events, func(t *testing.T) {
			t.Parallel()
			e := startDemoWith(t, sim.Options{HistoryDays: -1}, func(c *config.Config) { c.HubitatEvents, c.ToolMode = events, "all" })
			hub := e.d.Hubitat
			if e.d.Info.HubitatURL != hub.URL() {
				t.Errorf("info file hubitat_url %q, hub at %q", e.d.Info.HubitatURL, hub.URL())
			}
			via := map[string]string{"auto": "eventsocket", "posturl": "posturl"}[events]
			health := func() map[string]any {
				resp, err := http.Get(e.url + "/mcp/health")
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				var h struct {
					Backends map[string]struct {
						OK     bool           `json:"ok"`
						Detail map[string]any `json:"detail"`
					} `json:"backends"`
				}
				if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
					t.Fatal(err)
				}
				d := h.Backends["hubitat"].Detail
				if d == nil {
					t.Fatalf("/mcp/health has no hubitat backend: %+v", h)
				}
				d["ok"] = h.Backends["hubitat"].OK
				return d
			}
			testkit.Eventually(t, "the hub link via "+via, func() bool { d := health(); return d["ok"] == true && d["via"] == via })
			// Unauthenticated: neither the token nor the hub's address.
			if d := health(); strings.Contains(jsonString(d), hub.Token()) || strings.Contains(jsonString(d), strings.TrimPrefix(hub.URL(), "http://")) {
				t.Errorf("/mcp/health shows the Maker API token or the hub's address: %v", d)
			}

			cs := e.client(t, nil)
			res := callJSON(t, cs, "hubitat_send_command", map[string]any{"deviceId": "3", "command": "on"}, nil)
			if res.IsError {
				t.Fatalf("send_command: %s", text(res))
			}
			// The change comes back as an event (socket or push) into the cache the read tools use.
			testkit.Eventually(t, "the porch light to read on", func() bool {
				var a struct {
					Value any `json:"value"`
				}
				callJSON(t, cs, "hubitat_get_attribute", map[string]any{"deviceId": "3", "attribute": "switch"}, &a)
				return a.Value == "on"
			})

			if events != "posturl" {
				return
			}
			target := hub.PostURL()
			if !strings.HasPrefix(target, e.url+"/hubitat/events/") {
				t.Fatalf("the hub posts to %q", target)
			}
			// The push route takes no bearer token: its secret segment is the credential.
			for _, c := range []struct {
				method, url string
				want        int
			}{
				{http.MethodPost, e.url + "/hubitat/events/not-the-secret", http.StatusNotFound},
				{http.MethodGet, target, http.StatusMethodNotAllowed},
				{http.MethodPost, target, http.StatusBadRequest}, // not a Maker API event
			} {
				req, _ := http.NewRequest(c.method, c.url, strings.NewReader("{not json"))
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != c.want {
					t.Errorf("%s %s: %d, want %d", c.method, strings.Replace(c.url, target, "<target>", 1), resp.StatusCode, c.want)
				}
			}
		})
	}
}

func jsonString(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestToolsListBytesHubitat measures what the Hubitat toolsets add to tools/list in each tool
// mode; the figures go to docs/performance.md (run with -v).
func TestToolsListBytesHubitat(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"all", "search", "auto"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			e := startDemoWith(t, sim.Options{HistoryDays: -1}, func(c *config.Config) { c.ToolMode = mode })
			tools, err := e.client(t, nil).ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			total, _ := json.Marshal(tools)
			n, hubBytes := 0, 0
			for _, tool := range tools.Tools {
				if strings.HasPrefix(tool.Name, "hubitat_") {
					b, _ := json.Marshal(tool)
					n, hubBytes = n+1, hubBytes+len(b)+1
				}
			}
			if mode == "all" && n < 14 {
				t.Errorf("tools/list has %d Hubitat tools", n)
			}
			t.Logf("mode %-6s: %3d tools, %6d bytes; Hubitat %2d tools, %6d bytes; without them %6d bytes",
				mode, len(tools.Tools), len(total), n, hubBytes, len(total)-hubBytes)
		})
	}
}

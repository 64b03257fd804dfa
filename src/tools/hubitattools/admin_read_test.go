package hubitattools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	simhub "github.com/hamcp/hamcp/dev/sim/hubitat"
	"github.com/hamcp/hamcp/dev/testkit/tooltest"
	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/integrations/hubitat/hubstore"
)

var readTools = []struct {
	name string
	args map[string]any
}{
	{"hubitat_get_hub_details", nil},
	{"hubitat_list_hub_apps", nil},
	{"hubitat_list_hub_drivers", nil},
	{"hubitat_get_zwave_details", nil},
	{"hubitat_get_zigbee_details", nil},
	{"hubitat_get_hub_health", nil},
	{"hubitat_get_app_source", map[string]any{"appId": "101"}},
	{"hubitat_get_driver_source", map[string]any{"driverId": "201"}},
}

// TestAdminReadOptionOff: with hubitat_admin_read off (the default) every admin read tool refuses,
// names the option and says the user must turn it on, and the hub is not asked.
func TestAdminReadOptionOff(t *testing.T) {
	t.Parallel()
	h, c := newHub(t, simhub.Options{}, hubitat.Options{}) // its own hub, so that its request counts are this test's
	s := served(withClient(c)).Session(t)                  // the defaults: admin read off
	before := h.Requests("GET /hub/advanced/freeOSMemory") + h.Requests("GET /hub2/userAppTypes") + h.Requests("GET /app/ajax/code")
	for _, r := range readTools {
		t.Run(r.name, func(t *testing.T) {
			tooltest.ErrCase{Tool: r.name, Args: r.args, Code: "tool_not_enabled", Contains: "hubitat_admin_read"}.Check(t, s)
			e := s.Fail(t, r.name, r.args)
			if !strings.Contains(e.Hint, "only the user") || !strings.Contains(e.Hint, "add-on") {
				t.Errorf("hint does not send the model to the user: %+v", e)
			}
		})
	}
	if after := h.Requests("GET /hub/advanced/freeOSMemory") + h.Requests("GET /hub2/userAppTypes") + h.Requests("GET /app/ajax/code"); after != before {
		t.Errorf("the hub was asked %d times with the option off", after-before)
	}
}

// TestAdminReadTools reads every admin page of the shared hub (behind Hub Security) through the tools.
func TestAdminReadTools(t *testing.T) {
	t.Parallel()
	s := served(withStore(privateStore(t)), withAdmin(true, false)).Session(t)
	type check func(t *testing.T, out map[string]any)
	num := func(v any) float64 {
		m, _ := v.(map[string]any)
		f, _ := m["value"].(float64)
		return f
	}
	cases := []struct {
		tool  string
		args  map[string]any
		check check
	}{
		{"hubitat_get_hub_details", nil, func(t *testing.T, o map[string]any) {
			if o["model"] != "C-8 Pro" || o["firmwareVersion"] != "2.4.1.177" || num(o["freeMemoryKB"]) != 482716 ||
				num(o["internalTempCelsius"]) != 43.2 || num(o["databaseSizeKB"]) != 38912 || o["hamcpVersion"] != testVersion ||
				o["hubAdminReadEnabled"] != true || o["hubAdminWriteEnabled"] != false {
				t.Errorf("details %v", o)
			}
		}},
		{"hubitat_list_hub_apps", nil, func(t *testing.T, o map[string]any) {
			items, _ := o["items"].([]any)
			if len(items) < 2 || !strings.Contains(strings.ToLower(tooltestJSON(items)), "motion lighting helper") {
				t.Errorf("apps %v", o)
			}
		}},
		{"hubitat_list_hub_drivers", nil, func(t *testing.T, o map[string]any) {
			if !strings.Contains(tooltestJSON(o["items"]), `"Weather Station"`) {
				t.Errorf("drivers %v", o)
			}
		}},
		{"hubitat_get_zwave_details", nil, func(t *testing.T, o map[string]any) {
			data, _ := o["data"].(map[string]any)
			if o["source"] != "hub_api" || o["zwaveVersion"] != "7.18.3" || len(data["nodes"].([]any)) != 6 {
				t.Errorf("zwave %v", o)
			}
		}},
		{"hubitat_get_zigbee_details", nil, func(t *testing.T, o map[string]any) {
			data, _ := o["data"].(map[string]any)
			if o["source"] != "hub_api" || o["zigbeeChannel"] != float64(20) || data["panId"] != "0x1A2B" {
				t.Errorf("zigbee %v", o)
			}
		}},
		{"hubitat_get_hub_health", nil, func(t *testing.T, o map[string]any) {
			if o["status"] != "ok" || num(o["freeMemoryKB"]) != 482716 || o["memoryWarning"] != nil || o["temperatureNote"] != nil ||
				o["uptimeFormatted"] == "" || o["hamcpDeviceCount"].(float64) < 25 {
				t.Errorf("health %v", o)
			}
		}},
		{"hubitat_get_app_source", map[string]any{"appId": "101"}, func(t *testing.T, o map[string]any) {
			src, _ := o["source"].(string)
			if o["appId"] != "101" || o["version"] != float64(4) || !strings.Contains(src, `definition(name: "Motion Lighting Helper"`) ||
				o["totalChars"] != float64(len([]rune(src))) || o["nextOffset"] != nil {
				t.Errorf("app source %v", o)
			}
		}},
		{"hubitat_get_driver_source", map[string]any{"driverId": "201"}, func(t *testing.T, o map[string]any) {
			if o["driverId"] != "201" || o["version"] != float64(7) || !strings.Contains(o["source"].(string), "Weather Station") {
				t.Errorf("driver source %v", o)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			var out map[string]any
			s.OK(t, c.tool, c.args, &out)
			c.check(t, out)
		})
	}
	t.Run("source in pages", func(t *testing.T) {
		var whole struct {
			Source string `json:"source"`
		}
		s.OK(t, "hubitat_get_app_source", map[string]any{"appId": "102"}, &whole)
		var got strings.Builder
		offset := 0
		for pages := 0; ; pages++ {
			var p struct {
				Source     string `json:"source"`
				NextOffset *int   `json:"nextOffset"`
			}
			s.OK(t, "hubitat_get_app_source", map[string]any{"appId": "102", "offset": offset, "length": 40}, &p)
			got.WriteString(p.Source)
			if p.NextOffset == nil {
				break
			}
			if pages > 100 || *p.NextOffset <= offset {
				t.Fatalf("paging does not advance: %d -> %d", offset, *p.NextOffset)
			}
			offset = *p.NextOffset
		}
		if got.String() != whole.Source {
			t.Errorf("pages joined differ from the whole source")
		}
	})
	for _, e := range []tooltest.ErrCase{
		{Name: "unknown app", Tool: "hubitat_get_app_source", Args: map[string]any{"appId": "999"}, Code: "not_found", Field: "appId", Contains: "hubitat_list_hub_apps"},
		{Name: "unknown driver", Tool: "hubitat_get_driver_source", Args: map[string]any{"driverId": "999"}, Code: "not_found", Field: "driverId", Contains: "not found"},
		{Name: "app id not a number", Tool: "hubitat_get_app_source", Args: map[string]any{"appId": "../hub/reboot"}, Code: "invalid_argument", Field: "appId"},
		{Name: "app id missing", Tool: "hubitat_get_app_source", Args: map[string]any{}, Code: "invalid_argument", Field: "appId", Contains: "required"},
		{Name: "length too big", Tool: "hubitat_get_driver_source", Args: map[string]any{"driverId": "201", "length": 90001}, Code: "invalid_argument", Field: "length"},
	} {
		t.Run(e.Name, func(t *testing.T) { e.Check(t, s) })
	}
}

// TestAdminReadOldFirmwareAndBadLogin: firmware that answers in text still parses; a hub that
// refuses hamcp's Hub Security login fails the call with the option to fix, never the password.
func TestAdminReadOldFirmwareAndBadLogin(t *testing.T) {
	t.Parallel()
	t.Run("text replies", func(t *testing.T) {
		t.Parallel()
		_, c := newHub(t, simhub.Options{TextReplies: true}, hubitat.Options{})
		s := served(withClient(c), withStore(privateStore(t)), withAdmin(true, false)).Session(t)
		var h struct {
			Free struct {
				Value float64 `json:"value"`
			} `json:"freeMemoryKB"`
			Temp struct {
				Value float64 `json:"value"`
			} `json:"internalTempCelsius"`
		}
		s.OK(t, "hubitat_get_hub_health", nil, &h)
		if h.Free.Value != 482716 || h.Temp.Value != 43.2 {
			t.Errorf("text numbers: %+v", h)
		}
		var zw map[string]any
		s.OK(t, "hubitat_get_zwave_details", nil, &zw)
		if zw["source"] != "hub_api_raw" || !strings.Contains(zw["rawResponse"].(string), "SDK: 7.18.3") {
			t.Errorf("text zwave: %v", zw)
		}
	})
	for _, status := range []int{0, 401, 403} {
		t.Run("wrong password, login answers "+map[int]string{0: "redirect", 401: "401", 403: "403"}[status], func(t *testing.T) {
			t.Parallel()
			const wrong = "not-the-hub-password"
			_, c := newHub(t, simhub.Options{Username: "owner", Password: "right-password", LoginStatus: status},
				hubitat.Options{Username: "owner", Password: wrong})
			st := privateStore(t)
			if _, err := st.SetDebugLogLevel(context.Background(), "debug"); err != nil {
				t.Fatal(err)
			}
			s := served(withClient(c), withStore(st), withAdmin(true, true)).Session(t)
			for _, r := range readTools {
				tool := r.name
				e := s.Fail(t, tool, r.args)
				if e.Code != "backend_unauthorized" || !strings.Contains(e.Message+e.Hint, "hubitat_password") && !strings.Contains(e.Message+e.Hint, "Hub Security") {
					t.Errorf("%s: %+v", tool, e)
				}
				if strings.Contains(e.Message+e.Hint, wrong) {
					t.Errorf("%s: the password is in the error", tool)
				}
			}
			logs, _ := st.DebugLogs(context.Background(), hubstore.DebugQuery{})
			if len(logs) == 0 {
				t.Fatal("the failures were not logged")
			}
			for _, l := range logs {
				if strings.Contains(l.Message+l.Details, wrong) || strings.Contains(l.Message, c.BaseURL()+"?") {
					t.Errorf("secret in the debug log: %+v", l)
				}
			}
		})
	}
}

func tooltestJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

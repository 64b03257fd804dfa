package hass_test

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// every REST route the simulator serves, for the 401 sweep
var routes = []struct{ method, path string }{
	{"GET", "/api/"}, {"GET", "/api/config"}, {"GET", "/api/core/state"}, {"GET", "/api/components"}, {"GET", "/api/events"},
	{"POST", "/api/events/test_event"}, {"GET", "/api/services"}, {"POST", "/api/services/light/turn_on"}, {"GET", "/api/states"},
	{"GET", "/api/states/light.hallway"}, {"POST", "/api/states/sensor.x"}, {"DELETE", "/api/states/sensor.x"},
	{"GET", "/api/history/period"}, {"GET", "/api/history/period/2026-01-01T00:00:00Z"}, {"GET", "/api/logbook"},
	{"GET", "/api/logbook/2026-01-01T00:00:00Z"}, {"GET", "/api/calendars"}, {"GET", "/api/calendars/calendar.family"},
	{"POST", "/api/template"}, {"GET", "/api/error_log"}, {"POST", "/api/config/core/check_config"},
	{"GET", "/api/config/automation/config/1"}, {"POST", "/api/config/script/config/x"}, {"DELETE", "/api/config/scene/config/1"},
	{"GET", "/api/camera_proxy/camera.garden"}, {"POST", "/api/intent/handle"},
}

func TestEveryRouteRequiresAToken(t *testing.T) {
	for _, r := range routes {
		for _, tok := range []string{"", "wrong-token"} {
			got := do(t, home.URL(), r.method, r.path, tok, "")
			if got.status != 401 || string(got.body) != "401: Unauthorized" {
				t.Errorf("%s %s with token %q: %d %q", r.method, r.path, tok, got.status, got.body)
			}
		}
	}
}

func TestAdminOnlyViewsRefuseUsers(t *testing.T) {
	for _, r := range []struct{ method, path, body string }{
		{"POST", "/api/events/x", ""}, {"POST", "/api/states/sensor.user_made", `{"state":"1"}`}, {"DELETE", "/api/states/sensor.x", ""},
		{"POST", "/api/template", `{"template":"x"}`}, {"GET", "/api/error_log", ""}, {"POST", "/api/config/core/check_config", ""},
		{"GET", "/api/config/automation/config/1714000000001", ""},
	} {
		got := do(t, home.URL(), r.method, r.path, home.UserToken(), r.body)
		if got.status != 401 {
			t.Errorf("non-admin %s %s: %d %s", r.method, r.path, got.status, got.body)
		}
	}
	if got := do(t, home.URL(), "GET", "/api/states", home.UserToken(), ""); got.status != 200 {
		t.Errorf("non-admin may read states: %d", got.status)
	}
}

func TestRoutingErrors(t *testing.T) {
	cases := []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/api", 404, "404: Not Found"},
		{"GET", "/api/nothing", 404, "404: Not Found"},
		{"DELETE", "/api/", 405, "405: Method Not Allowed"},
		{"PUT", "/api/states/light.hallway", 405, "405: Method Not Allowed"},
	}
	for _, c := range cases {
		got := api(t, c.method, c.path, "")
		if got.status != c.status || string(got.body) != c.body {
			t.Errorf("%s %s: %d %q", c.method, c.path, got.status, got.body)
		}
	}
	if got := api(t, "PUT", "/api/states/light.hallway", ""); !strings.Contains(got.header.Get("Allow"), "GET") {
		t.Errorf("405 without Allow: %v", got.header)
	}
}

func TestRESTShapes(t *testing.T) {
	type check func(t *testing.T, r reply)
	status := func(want int) check {
		return func(t *testing.T, r reply) {
			t.Helper()
			if r.status != want {
				t.Errorf("status %d, want %d: %s", r.status, want, r.body)
			}
		}
	}
	body := func(want string) check {
		return func(t *testing.T, r reply) {
			t.Helper()
			if string(r.body) != want {
				t.Errorf("body %q, want %q", r.body, want)
			}
		}
	}
	has := func(want string) check {
		return func(t *testing.T, r reply) {
			t.Helper()
			if !strings.Contains(string(r.body), want) {
				t.Errorf("body lacks %q: %.300s", want, r.body)
			}
		}
	}
	header := func(k, want string) check {
		return func(t *testing.T, r reply) {
			t.Helper()
			if got := r.header.Get(k); !strings.HasPrefix(got, want) {
				t.Errorf("header %s = %q, want %q", k, got, want)
			}
		}
	}
	cases := []struct {
		name, method, path, body string
		checks                   []check
	}{
		{"status", "GET", "/api/", "", []check{status(200), body(`{"message":"API running."}`), header("Content-Type", "application/json")}},
		{"config", "GET", "/api/config", "", []check{status(200), has(`"time_zone":"Europe/Amsterdam"`), has(`"unit_system":{`), has(`"version":"2026.8.1"`)}},
		{"core state", "GET", "/api/core/state", "", []check{body(`{"state":"RUNNING","recorder_state":{"migration_in_progress":false,"migration_is_live":false}}`)}},
		{"components", "GET", "/api/components", "", []check{has(`"light"`), has(`"recorder"`)}},
		{"events", "GET", "/api/events", "", []check{has(`{"event":"*","listener_count":`)}},
		{"fire event", "POST", "/api/events/my_event", `{"a":1}`, []check{status(200), body(`{"message":"Event my_event fired."}`)}},
		{"fire event empty", "POST", "/api/events/my_event", "", []check{status(200)}},
		{"fire event bad json", "POST", "/api/events/my_event", `{`, []check{status(400), body(`{"message":"Event data should be valid JSON."}`)}},
		{"fire event not object", "POST", "/api/events/my_event", `[1]`, []check{status(400), body(`{"message":"Event data should be a JSON object"}`)}},
		{"services", "GET", "/api/services", "", []check{has(`{"domain":"light","services":{`), has(`"turn_on":{`)}},
		{"call service", "POST", "/api/services/light/turn_on", `{"entity_id":"light.office_desk","brightness":99}`, []check{status(200), has(`"entity_id":"light.office_desk"`), has(`"brightness":99`)}},
		{"call no-op", "POST", "/api/services/light/turn_on", `{"entity_id":"light.office_desk","brightness":99}`, []check{status(200), body(`[]`)}},
		{"call bad json", "POST", "/api/services/light/turn_on", `{x`, []check{status(400), body(`{"message":"Data should be valid JSON."}`)}},
		{"call unknown", "POST", "/api/services/light/explode", `{}`, []check{status(400), body("400: Bad Request")}},
		{"call invalid", "POST", "/api/services/light/turn_on", `{"entity_id":"light.office_desk","brightness":"very"}`, []check{status(400), body("400: Bad Request")}},
		{"call validation error", "POST", "/api/services/climate/set_hvac_mode", `{"entity_id":"climate.office","hvac_mode":"cool"}`, []check{status(500)}},
		{"response not supported", "POST", "/api/services/light/turn_on?return_response", `{}`, []check{status(400), body(`{"message":"Service does not support responses. Remove return_response from request."}`)}},
		{"response required", "POST", "/api/services/calendar/get_events", `{"entity_id":"calendar.family","duration":{"days":3}}`, []check{status(400), has(`Add ?return_response to query parameters.`)}},
		{"with response", "POST", "/api/services/calendar/get_events?return_response", `{"entity_id":"calendar.family","duration":{"days":3}}`, []check{status(200), has(`{"changed_states":[],"service_response":{"calendar.family":{"events":[`)}},
		{"states", "GET", "/api/states", "", []check{status(200), has(`"entity_id":"sun.sun"`)}},
		{"state", "GET", "/api/states/lock.front_door", "", []check{has(`"last_reported":`), has(`"context":{"id":`)}},
		{"state missing", "GET", "/api/states/light.nope", "", []check{status(404), body(`{"message":"Entity not found."}`)}},
		{"create state", "POST", "/api/states/sensor.rest_made", `{"state":"42","attributes":{"unit_of_measurement":"W","n":2}}`, []check{status(201), header("Location", "/api/states/sensor.rest_made"), has(`"n":2`)}},
		{"update state", "POST", "/api/states/sensor.rest_made", `{"state":"43"}`, []check{status(200), has(`"state":"43"`)}},
		{"state no state", "POST", "/api/states/sensor.rest_made", `{"attributes":{}}`, []check{status(400), body(`{"message":"No state attribute specified."}`)}},
		{"state not object", "POST", "/api/states/sensor.rest_made", `"x"`, []check{status(400), body(`{"message":"State data should be a JSON object"}`)}},
		{"state bad id", "POST", "/api/states/Sensor%20Bad", `{"state":"1"}`, []check{status(400), body(`{"message":"Invalid entity ID specified."}`)}},
		{"state too long", "POST", "/api/states/sensor.rest_made", `{"state":"` + strings.Repeat("x", 256) + `"}`, []check{status(400), body(`{"message":"Invalid state specified."}`)}},
		{"delete state", "DELETE", "/api/states/sensor.rest_made", "", []check{status(200), body(`{"message":"Entity removed."}`)}},
		{"delete again", "DELETE", "/api/states/sensor.rest_made", "", []check{status(404), body(`{"message":"Entity not found."}`)}},
		{"template", "POST", "/api/template", `{"template":"{{ states('lock.front_door') }} {{ 2 * x }}","variables":{"x":21}}`, []check{status(200), header("Content-Type", "text/plain"), body("locked 42")}},
		{"template error", "POST", "/api/template", `{"template":"{{ 1 + }}"}`, []check{status(400), has(`{"message":"Error rendering template: TemplateSyntaxError: `)}},
		{"template not object", "POST", "/api/template", `[1]`, []check{status(400), body(`{"message":"Template data should be a JSON object"}`)}},
		{"error log", "GET", "/api/error_log", "", []check{status(200), header("Content-Type", "text/plain")}},
		{"check config", "POST", "/api/config/core/check_config", "", []check{status(200), body(`{"result":"valid","errors":null,"warnings":null}`)}},
		{"calendars", "GET", "/api/calendars", "", []check{body(`[{"entity_id":"calendar.family","name":"Family"},{"entity_id":"calendar.holidays","name":"Holidays"},{"entity_id":"calendar.work","name":"Work"}]`)}},
		{"calendar unknown", "GET", "/api/calendars/calendar.nope?start=2026-01-01T00:00:00Z&end=2026-02-01T00:00:00Z", "", []check{status(400), body("")}},
		{"calendar no window", "GET", "/api/calendars/calendar.family", "", []check{status(400), body("")}},
		{"calendar reversed", "GET", "/api/calendars/calendar.family?start=2026-02-01T00:00:00Z&end=2026-01-01T00:00:00Z", "", []check{status(400)}},
		{"intent", "POST", "/api/intent/handle", `{"name":"HassTurnOn","data":{"name":"Garden Path"}}`, []check{status(200), has(`"speech":{"plain":{"extra_data":null,"speech":"Turned on Garden Path"}}`), has(`"response_type":"action_done"`)}},
		{"intent no name", "POST", "/api/intent/handle", `{"data":{}}`, []check{status(400), body(`{"message":"Message format incorrect: required key not provided @ data['name']"}`)}},
		{"history no filter", "GET", "/api/history/period", "", []check{status(400), body(`{"message":"filter_entity_id is missing"}`)}},
		{"history bad start", "GET", "/api/history/period/yesterday?filter_entity_id=light.hallway", "", []check{status(400), body(`{"message":"Invalid datetime"}`)}},
		{"history bad end", "GET", "/api/history/period?filter_entity_id=light.hallway&end_time=soon", "", []check{status(400), body(`{"message":"Invalid end_time"}`)}},
		{"history bad id", "GET", "/api/history/period?filter_entity_id=nope", "", []check{status(400), body(`{"message":"Invalid filter_entity_id"}`)}},
		{"history future", "GET", "/api/history/period/2999-01-01T00:00:00Z?filter_entity_id=light.hallway", "", []check{status(200), body(`[]`)}},
		{"logbook bad start", "GET", "/api/logbook/whenever", "", []check{status(400), body(`{"message":"Invalid datetime"}`)}},
		{"logbook combine", "GET", "/api/logbook?entity=light.hallway&context_id=abc", "", []check{status(400), body(`{"message":"Can't combine entity with context_id"}`)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := api(t, c.method, c.path, c.body)
			for _, chk := range c.checks {
				chk(t, r)
			}
		})
	}
}

func TestCalendarWindow(t *testing.T) {
	start := time.Now().UTC().Format(time.RFC3339)
	end := time.Now().UTC().AddDate(0, 0, 7).Format(time.RFC3339)
	r := api(t, "GET", "/api/calendars/calendar.family?start="+url.QueryEscape(start)+"&end="+url.QueryEscape(end), "")
	evs, ok := r.json(t).([]any)
	if r.status != 200 || !ok || len(evs) < 4 {
		t.Fatalf("family week: %d %s", r.status, r.body)
	}
	var allDay, timed bool
	for _, e := range evs {
		m := e.(map[string]any)
		s := m["start"].(map[string]any)
		if _, ok := s["date"]; ok {
			allDay = true
		}
		if _, ok := s["dateTime"]; ok {
			timed = true
		}
		for _, k := range []string{"summary", "description", "location", "uid", "recurrence_id", "rrule"} {
			if _, ok := m[k]; !ok {
				t.Errorf("event lacks %s: %v", k, m)
			}
		}
	}
	if !allDay || !timed {
		t.Errorf("want both all-day and timed events: %s", r.body)
	}
}

func TestHistoryAndLogbookFromRecorder(t *testing.T) {
	r := api(t, "POST", "/api/services/cover/set_cover_position", `{"entity_id":"cover.bedroom_blinds","position":33}`)
	if r.status != 200 {
		t.Fatalf("service: %d %s", r.status, r.body)
	}
	start := url.PathEscape(time.Now().Add(-2 * time.Hour).UTC().Format(time.RFC3339))
	r = api(t, "GET", "/api/history/period/"+start+"?filter_entity_id=cover.bedroom_blinds,sensor.kitchen_temperature", "")
	lists, ok := r.json(t).([]any)
	if r.status != 200 || !ok || len(lists) != 2 {
		t.Fatalf("history: %d %.300s", r.status, r.body)
	}
	blinds := lists[0].([]any)
	last := blinds[len(blinds)-1].(map[string]any)
	if last["state"] != "open" || last["attributes"].(map[string]any)["current_position"] != 33.0 {
		t.Errorf("history does not end with the live change: %v", last)
	}
	first := blinds[0].(map[string]any)
	if first["entity_id"] != "cover.bedroom_blinds" || !strings.HasSuffix(first["last_changed"].(string), "+00:00") {
		t.Errorf("first row: %v", first)
	}
	r = api(t, "GET", "/api/history/period/"+start+"?filter_entity_id=sensor.kitchen_temperature&minimal_response&no_attributes", "")
	rows := r.json(t).([]any)[0].([]any)
	if len(rows) > 2 {
		if mid := rows[1].(map[string]any); len(mid) != 2 || mid["state"] == nil || mid["last_changed"] == nil {
			t.Errorf("minimal middle row: %v", mid)
		}
	}
	r = api(t, "GET", "/api/logbook/"+start+"?entity=cover.bedroom_blinds", "")
	entries, _ := r.json(t).([]any)
	found := false
	for _, e := range entries {
		m := e.(map[string]any)
		if m["entity_id"] == "cover.bedroom_blinds" && m["state"] == "open" && m["name"] == "Bedroom Blinds" {
			found = strings.HasSuffix(m["when"].(string), "+00:00")
		}
	}
	if !found {
		t.Errorf("logbook lacks the change: %.400s", r.body)
	}
}

func TestConfigEditorREST(t *testing.T) {
	base := "/api/config/automation/config/1800000000001"
	cases := []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"GET", base, "", 404, `{"message":"Resource not found"}`},
		{"POST", base, `{"alias":"Test automation"`, 400, `{"message":"Invalid JSON specified"}`},
		{"POST", base, `{"alias":"Test automation","actions":[]}`, 400, `{"message":"Message malformed: required key not provided @ data['triggers']"}`},
		{"POST", base, `{"mode":"single","alias":"Test automation","triggers":[{"trigger":"state","entity_id":"binary_sensor.front_door","to":"on"}],"actions":[{"action":"light.turn_on","target":{"entity_id":"light.hallway"}}]}`, 200, `{"result":"ok"}`},
		{"GET", base, "", 200, `{"id":"1800000000001","alias":"Test automation","triggers":[{"trigger":"state","entity_id":"binary_sensor.front_door","to":"on"}],"actions":[{"action":"light.turn_on","target":{"entity_id":"light.hallway"}}],"mode":"single"}`},
		{"DELETE", base, "", 200, `{"result":"ok"}`},
		{"DELETE", base, "", 400, `{"message":"Resource not found"}`},
		{"POST", "/api/config/script/config/Not A Slug", `{"sequence":[]}`, 400, `{"message":"Key malformed: invalid slug Not A Slug (try not_a_slug)"}`},
	}
	for i, c := range cases {
		r := api(t, c.method, strings.ReplaceAll(c.path, " ", "%20"), c.body)
		if r.status != c.status || string(r.body) != c.want {
			t.Errorf("step %d %s %s: %d %s, want %d %s", i, c.method, c.path, r.status, r.body, c.status, c.want)
		}
		if i == 3 {
			raw, err := os.ReadFile(filepath.Join(home.Sandbox().Config, "automations.yaml"))
			if err != nil || !strings.Contains(string(raw), "id: \"1800000000001\"\n  alias: Test automation") {
				t.Errorf("automations.yaml not rewritten with the item: %v\n%s", err, raw)
			}
			if r := api(t, "GET", "/api/states/automation.test_automation", ""); r.status != 200 {
				t.Errorf("automation entity not created: %d", r.status)
			}
		}
	}
}

func TestCameraProxy(t *testing.T) {
	r := api(t, "GET", "/api/camera_proxy/camera.front_door", "")
	if r.status != 200 || r.header.Get("Content-Type") != "image/jpeg" || len(r.body) < 200 || r.body[0] != 0xFF || r.body[1] != 0xD8 {
		t.Fatalf("camera image: %d %s %d bytes", r.status, r.header.Get("Content-Type"), len(r.body))
	}
	st := api(t, "GET", "/api/states/camera.front_door", "").json(t).(map[string]any)
	pic := st["attributes"].(map[string]any)["entity_picture"].(string)
	if r := do(t, home.URL(), "GET", pic, "", ""); r.status != 200 {
		t.Errorf("entity_picture with access token: %d", r.status)
	}
	if r := do(t, home.URL(), "GET", "/api/camera_proxy/camera.front_door?token=wrong", "", ""); r.status != 401 {
		t.Errorf("wrong camera token: %d", r.status)
	}
	if r := api(t, "GET", "/api/camera_proxy/camera.none", ""); r.status != 404 {
		t.Errorf("unknown camera: %d", r.status)
	}
}

func TestBlueprintAutomationRuns(t *testing.T) {
	r := api(t, "GET", "/api/config/automation/config/1735689600005", "")
	if r.status != 200 {
		t.Fatalf("sandbox blueprint automation missing: %d %s", r.status, r.body)
	}
	cfg := r.json(t).(map[string]any)
	light := cfg["use_blueprint"].(map[string]any)["input"].(map[string]any)["light_target"].(map[string]any)["entity_id"].(string)
	api(t, "POST", "/api/services/light/turn_off", `{"entity_id":"`+light+`"}`)
	r = api(t, "POST", "/api/services/automation/trigger", `{"entity_id":"automation.motion_activated_light_blueprint"}`)
	if r.status != 200 {
		t.Fatalf("trigger: %d %s", r.status, r.body)
	}
	st := api(t, "GET", "/api/states/"+light, "").json(t).(map[string]any)
	if st["state"] != "on" {
		t.Errorf("blueprint action did not turn %s on: %v", light, st["state"])
	}
	auto := api(t, "GET", "/api/states/automation.motion_activated_light_blueprint", "").json(t).(map[string]any)
	if a := auto["attributes"].(map[string]any); a["mode"] != "restart" || a["current"] != 1.0 {
		t.Errorf("blueprint mode/current (still waiting out its delay): %v", a)
	}
}

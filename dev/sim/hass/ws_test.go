package hass_test

import (
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func TestWSHandshake(t *testing.T) {
	cases := []struct {
		name   string
		auth   string
		reply  string
		msgHas string
	}{
		{"valid", `{"type":"auth","access_token":"` + home.Token() + `"}`, "auth_ok", ""},
		{"user token", `{"type":"auth","access_token":"` + home.UserToken() + `"}`, "auth_ok", ""},
		{"wrong token", `{"type":"auth","access_token":"nope"}`, "auth_invalid", "Invalid access token or password"},
		{"no token", `{"type":"auth"}`, "auth_invalid", "Invalid access token or password"},
		{"wrong type", `{"type":"login","access_token":"x"}`, "auth_invalid", "Auth message incorrectly formatted: value must be one of ['auth']"},
		{"extra key", `{"type":"auth","access_token":"x","id":1}`, "auth_invalid", "Auth message incorrectly formatted: extra keys not allowed @ data['id']"},
		{"not an object", `[1]`, "auth_invalid", "Auth message incorrectly formatted"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := dialRaw(t, wsURL(home.URL())+"/api/websocket")
			first := w.next()
			if first["type"] != "auth_required" || first["ha_version"] != "2026.8.1" {
				t.Fatalf("auth_required: %v", first)
			}
			w.sendRaw(c.auth)
			m := w.next()
			if m["type"] != c.reply {
				t.Fatalf("reply %v, want %s", m, c.reply)
			}
			if c.msgHas != "" && !strings.Contains(m["message"].(string), c.msgHas) {
				t.Errorf("message %q lacks %q", m["message"], c.msgHas)
			}
			if c.reply == "auth_invalid" {
				if _, err := w.read(2 * time.Second); err == nil {
					t.Error("connection stays open after auth_invalid")
				}
			}
		})
	}
}

func TestWSAuthTimeout(t *testing.T) {
	w := dialRaw(t, wsURL(home.URL())+"/api/websocket")
	if m := w.next(); m["type"] != "auth_required" {
		t.Fatal(m)
	}
	start := time.Now()
	_, err := w.read(5 * time.Second)
	if err == nil {
		t.Fatal("expected the server to drop an unauthenticated client")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("dropped after %v; the configured timeout is 300ms", d)
	}
}

func TestWSMessageRules(t *testing.T) {
	w := dialAuthed(t, home.Token())
	cases := []struct {
		name, raw string
		wantID    any
		code      string
	}{
		{"ping", `{"id":1,"type":"ping"}`, 1.0, ""},
		{"missing id", `{"type":"ping"}`, nil, "invalid_format"},
		{"string id", `{"id":"2","type":"ping"}`, "2", "invalid_format"},
		{"float id", `{"id":2.5,"type":"ping"}`, 2.5, "invalid_format"},
		{"missing type", `{"id":3}`, 3.0, "invalid_format"},
		{"not an object", `5`, 0.0, "invalid_format"},
		{"id reuse", `{"id":1,"type":"ping"}`, 1.0, "id_reuse"},
		{"unknown command", `{"id":4,"type":"make_coffee"}`, 4.0, "unknown_command"},
		{"unknown moves last id", `{"id":4,"type":"ping"}`, 4.0, "id_reuse"},
		{"schema failure", `{"id":5,"type":"call_service","domain":"light"}`, 5.0, "invalid_format"},
		{"extra key", `{"id":6,"type":"get_states","foo":1}`, 6.0, "invalid_format"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w.sendRaw(c.raw)
			m := w.next()
			if m["id"] != c.wantID {
				t.Errorf("id %v, want %v (%v)", m["id"], c.wantID, m)
			}
			if c.code == "" {
				if m["type"] != "pong" {
					t.Errorf("want pong: %v", m)
				}
				return
			}
			if m["success"] != false || errCode(m) != c.code {
				t.Errorf("want %s: %v", c.code, m)
			}
		})
	}
	w.sendRaw(`{"id":7,"type":"call_service","domain":"light"}`)
	if m := w.next(); !strings.Contains(errMsg(m), "required key not provided @ data['service']. Got None") {
		t.Errorf("humanized schema error: %v", m)
	}
}

func TestWSArrayFramesAndCoalescing(t *testing.T) {
	w := dialAuthed(t, home.Token())
	w.sendRaw(`[{"id":1,"type":"ping"},{"id":2,"type":"ping"},{"id":2,"type":"ping"}]`)
	a, b, c := w.next(), w.next(), w.next()
	if a["id"] != 1.0 || b["id"] != 2.0 || errCode(c) != "id_reuse" {
		t.Errorf("array frame handling: %v %v %v", a, b, c)
	}
	if r := w.ok(map[string]any{"id": 10, "type": "supported_features", "features": map[string]any{"coalesce_messages": 1}}); r != nil {
		t.Errorf("supported_features result: %v", r)
	}
	before := w.arrays
	w.sendRaw(`[{"id":11,"type":"ping"},{"id":12,"type":"ping"},{"id":13,"type":"ping"}]`)
	for i := 0; i < 3; i++ {
		if m := w.next(); m["type"] != "pong" {
			t.Fatalf("want pong: %v", m)
		}
	}
	if w.arrays == before {
		t.Error("with coalesce_messages the server never sent an array frame")
	}
}

func TestWSSubscribeCallUnsubscribe(t *testing.T) {
	w := dialAuthed(t, home.Token())
	w.ok(map[string]any{"id": 1, "type": "subscribe_events", "event_type": "state_changed"})
	res, events := w.cmd(map[string]any{"id": 2, "type": "call_service", "domain": "switch", "service": "toggle", "target": map[string]any{"entity_id": "switch.office_monitor"}})
	if res["success"] != true {
		t.Fatalf("call_service: %v", res)
	}
	ctxID := res["result"].(map[string]any)["context"].(map[string]any)["id"]
	if _, ok := res["result"].(map[string]any)["response"]; ok {
		t.Error("response key present without return_response")
	}
	var ev map[string]any
	for _, e := range events {
		if e["id"] == 1.0 {
			ev = e["event"].(map[string]any)
		}
	}
	if ev == nil {
		ev = w.waitEvent(1, func(ev map[string]any) bool { return true })
	}
	data := ev["data"].(map[string]any)
	if ev["event_type"] != "state_changed" || data["entity_id"] != "switch.office_monitor" || ev["context"].(map[string]any)["id"] != ctxID {
		t.Errorf("state_changed event: %v", ev)
	}
	if ev["origin"] != "LOCAL" || !strings.HasSuffix(ev["time_fired"].(string), "+00:00") {
		t.Errorf("event envelope: %v", ev)
	}
	w.ok(map[string]any{"id": 3, "type": "unsubscribe_events", "subscription": 1})
	_, events = w.cmd(map[string]any{"id": 4, "type": "call_service", "domain": "switch", "service": "toggle", "target": map[string]any{"entity_id": "switch.office_monitor"}})
	if len(events) != 0 {
		t.Errorf("events after unsubscribe: %v", events)
	}
	if m, _ := w.cmd(map[string]any{"id": 5, "type": "unsubscribe_events", "subscription": 1}); errCode(m) != "not_found" || errMsg(m) != "Subscription not found." {
		t.Errorf("second unsubscribe: %v", m)
	}
	if _, err := w.read(200 * time.Millisecond); err == nil {
		t.Error("unexpected message after unsubscribe")
	}
}

func TestWSCallServiceErrors(t *testing.T) {
	w := dialAuthed(t, home.Token())
	cases := []struct {
		msg        map[string]any
		code, text string
	}{
		{map[string]any{"domain": "light", "service": "explode"}, "not_found", "Action light.explode not found."},
		{map[string]any{"domain": "light", "service": "turn_on", "service_data": map[string]any{"entity_id": "light.hallway", "brightness": 999}}, "invalid_format", "value must be at most 255 for dictionary value @ data['brightness']"},
		{map[string]any{"domain": "climate", "service": "set_hvac_mode", "target": map[string]any{"entity_id": "climate.office"}, "service_data": map[string]any{"hvac_mode": "cool"}}, "service_validation_error", "Validation error: HVAC mode cool is not valid"},
		{map[string]any{"domain": "light", "service": "turn_on", "return_response": true}, "service_validation_error", "Validation error: An action which does not return responses"},
	}
	for i, c := range cases {
		c.msg["id"] = i + 1
		c.msg["type"] = "call_service"
		m, _ := w.cmd(c.msg)
		if errCode(m) != c.code || !strings.Contains(errMsg(m), c.text) {
			t.Errorf("%v: %v", c.msg, m)
		}
		if c.code == "not_found" {
			if e := m["error"].(map[string]any); e["translation_key"] != "service_not_found" {
				t.Errorf("translation fields missing: %v", e)
			}
		}
	}
	r := w.ok(map[string]any{"id": 10, "type": "call_service", "domain": "weather", "service": "get_forecasts", "service_data": map[string]any{"type": "hourly"},
		"target": map[string]any{"entity_id": "weather.forecast_home"}, "return_response": true}).(map[string]any)
	if f := r["response"].(map[string]any)["weather.forecast_home"].(map[string]any)["forecast"].([]any); len(f) != 24 {
		t.Errorf("hourly forecast: %d", len(f))
	}
}

func TestWSSubscribeEntities(t *testing.T) {
	w := dialAuthed(t, home.Token())
	w.ok(map[string]any{"id": 1, "type": "subscribe_entities", "entity_ids": []string{"input_boolean.vacation_mode", "media_player.kitchen_speaker"}})
	first := w.waitEvent(1, func(ev map[string]any) bool { return ev["a"] != nil })
	added := first["a"].(map[string]any)
	if len(added) != 2 {
		t.Fatalf("initial states: %v", added)
	}
	vac := added["input_boolean.vacation_mode"].(map[string]any)
	if vac["s"] == nil || vac["a"] == nil || vac["c"] == nil || vac["lc"] == nil {
		t.Errorf("compressed state: %v", vac)
	}
	w.ok(map[string]any{"id": 2, "type": "call_service", "domain": "input_boolean", "service": "toggle", "target": map[string]any{"entity_id": "input_boolean.vacation_mode"}})
	ch := w.waitEvent(1, func(ev map[string]any) bool { return ev["c"] != nil })
	diff := ch["c"].(map[string]any)["input_boolean.vacation_mode"].(map[string]any)["+"].(map[string]any)
	if diff["s"] == nil || diff["lc"] == nil || diff["c"] == nil {
		t.Errorf("diff: %v", diff)
	}
	w.ok(map[string]any{"id": 3, "type": "call_service", "domain": "media_player", "service": "volume_set", "target": map[string]any{"entity_id": "media_player.kitchen_speaker"}, "service_data": map[string]any{"volume_level": 0.42}})
	ch = w.waitEvent(1, func(ev map[string]any) bool { return ev["c"] != nil })
	plus := ch["c"].(map[string]any)["media_player.kitchen_speaker"].(map[string]any)["+"].(map[string]any)
	if plus["a"].(map[string]any)["volume_level"] != 0.42 || plus["lu"] == nil || plus["s"] != nil {
		t.Errorf("attribute-only diff: %v", plus)
	}
}

func TestWSRenderTemplate(t *testing.T) {
	w := dialAuthed(t, home.Token())
	w.ok(map[string]any{"id": 1, "type": "call_service", "domain": "input_text", "service": "set_value", "target": map[string]any{"entity_id": "input_text.welcome_message"}, "service_data": map[string]any{"value": "one"}})
	w.ok(map[string]any{"id": 2, "type": "render_template", "template": "{{ states('input_text.welcome_message') }}"})
	first := w.waitEvent(2, func(ev map[string]any) bool { return true })
	if first["result"] != "one" {
		t.Fatalf("first render: %v", first)
	}
	l := first["listeners"].(map[string]any)
	if l["all"] != false || l["time"] != false || len(l["entities"].([]any)) != 1 {
		t.Errorf("listeners: %v", l)
	}
	w.ok(map[string]any{"id": 3, "type": "call_service", "domain": "input_text", "service": "set_value", "target": map[string]any{"entity_id": "input_text.welcome_message"}, "service_data": map[string]any{"value": "two"}})
	if ev := w.waitEvent(2, func(ev map[string]any) bool { return ev["result"] == "two" }); ev == nil {
		t.Fatal("no re-render")
	}
	w.ok(map[string]any{"id": 4, "type": "render_template", "template": "{{ 20 + 22 }}"})
	if ev := w.waitEvent(4, func(ev map[string]any) bool { return true }); ev["result"] != 42.0 {
		t.Errorf("typed result: %v (%T)", ev["result"], ev["result"])
	}
	m, _ := w.cmd(map[string]any{"id": 5, "type": "render_template", "template": "{% if %}"})
	if errCode(m) != "template_error" || !strings.HasPrefix(errMsg(m), "TemplateSyntaxError: ") {
		t.Errorf("template error: %v", m)
	}
	w.ok(map[string]any{"id": 6, "type": "unsubscribe_events", "subscription": 2})
}

func TestWSRegistries(t *testing.T) {
	w := dialAuthed(t, home.Token())
	cases := []struct {
		typ  string
		keys []string
	}{
		{"config/floor_registry/list", []string{"aliases", "created_at", "floor_id", "icon", "level", "modified_at", "name"}},
		{"config/area_registry/list", []string{"aliases", "area_id", "floor_id", "humidity_entity_id", "icon", "labels", "name", "picture", "temperature_entity_id", "created_at", "modified_at"}},
		{"config/label_registry/list", []string{"color", "created_at", "description", "icon", "label_id", "modified_at", "name"}},
		{"config/device_registry/list", []string{"area_id", "config_entries", "config_entry_id", "connections", "identifiers", "manufacturer", "model", "model_id", "name", "name_by_user", "sw_version", "via_device_id", "labels"}},
		{"config/entity_registry/list", []string{"area_id", "device_id", "entity_id", "id", "labels", "platform", "unique_id", "original_name", "entity_category", "hidden_by"}},
	}
	for i, c := range cases {
		list, ok := w.ok(map[string]any{"id": i + 1, "type": c.typ}).([]any)
		if !ok || len(list) == 0 {
			t.Fatalf("%s: %v", c.typ, list)
		}
		item := list[0].(map[string]any)
		for _, k := range c.keys {
			if _, ok := item[k]; !ok {
				t.Errorf("%s item lacks %q: %v", c.typ, k, item)
			}
		}
	}
	e := w.ok(map[string]any{"id": 20, "type": "config/entity_registry/get", "entity_id": "light.kitchen_ceiling"}).(map[string]any)
	if e["capabilities"] == nil || e["device_id"] == nil {
		t.Errorf("entity_registry/get: %v", e)
	}
	if m, _ := w.cmd(map[string]any{"id": 21, "type": "config/entity_registry/get", "entity_id": "light.nope"}); errCode(m) != "not_found" {
		t.Errorf("unknown entity: %v", m)
	}
	a := w.ok(map[string]any{"id": 22, "type": "config/area_registry/create", "name": "Sauna", "floor_id": "ground_floor"}).(map[string]any)
	if a["area_id"] != "sauna" {
		t.Fatalf("create area: %v", a)
	}
	if m, _ := w.cmd(map[string]any{"id": 23, "type": "config/area_registry/create", "name": "Sauna"}); errCode(m) != "invalid_info" {
		t.Errorf("duplicate area: %v", m)
	}
	u := w.ok(map[string]any{"id": 24, "type": "config/area_registry/update", "area_id": "sauna", "icon": "mdi:hot-tub"}).(map[string]any)
	if u["icon"] != "mdi:hot-tub" {
		t.Errorf("update area: %v", u)
	}
	if r := w.ok(map[string]any{"id": 25, "type": "config/area_registry/delete", "area_id": "sauna"}); r != "success" {
		t.Errorf("delete area: %v", r)
	}
	if m, _ := w.cmd(map[string]any{"id": 26, "type": "config/area_registry/delete", "area_id": "sauna"}); errCode(m) != "invalid_info" {
		t.Errorf("delete unknown area: %v", m)
	}
	rel := w.ok(map[string]any{"id": 27, "type": "search/related", "item_type": "area", "item_id": "garage"}).(map[string]any)
	if rel["entity"] == nil || rel["device"] == nil || rel["floor"] == nil {
		t.Errorf("search/related: %v", rel)
	}
	// A name the user gave never shows as "en" (HA sends only the original name there).
	w.ok(map[string]any{"id": 28, "type": "config/entity_registry/update", "entity_id": "sensor.office_pm25", "name": "Dusty air"})
	defer w.ok(map[string]any{"id": 30, "type": "config/entity_registry/update", "entity_id": "sensor.office_pm25", "name": nil})
	disp := w.ok(map[string]any{"id": 29, "type": "config/entity_registry/list_for_display"}).(map[string]any)
	if disp["entities"] == nil || disp["entity_categories"] == nil {
		t.Errorf("list_for_display: %v", disp)
	}
	for _, it := range disp["entities"].([]any) {
		if e := it.(map[string]any); e["ei"] == "sensor.office_pm25" && e["en"] != nil {
			t.Errorf("list_for_display en = %v, want no user-set name", e["en"])
		}
	}
}

func TestWSRecorderCommands(t *testing.T) {
	w := dialAuthed(t, home.Token())
	start := time.Now().Add(-6 * time.Hour).UTC().Format(time.RFC3339)
	h := w.ok(map[string]any{"id": 1, "type": "history/history_during_period", "start_time": start, "entity_ids": []string{"sensor.house_power", "light.nope"}, "minimal_response": true}).(map[string]any)
	rows, ok := h["sensor.house_power"].([]any)
	if !ok || len(rows) < 2 {
		t.Fatalf("history: %v", h)
	}
	if _, ok := h["light.nope"]; ok {
		t.Error("entities without rows must be absent")
	}
	r0 := rows[0].(map[string]any)
	if r0["s"] == nil || r0["a"] == nil || r0["lu"] == nil {
		t.Errorf("first compressed row: %v", r0)
	}
	if r1 := rows[1].(map[string]any); r1["a"] != nil {
		t.Errorf("minimal row carries attributes: %v", r1)
	}
	errCases := []struct {
		msg  map[string]any
		code string
	}{
		{map[string]any{"type": "history/history_during_period", "start_time": "nope", "entity_ids": []string{"light.hallway"}}, "invalid_start_time"},
		{map[string]any{"type": "history/history_during_period", "start_time": start, "end_time": "nope", "entity_ids": []string{"light.hallway"}}, "invalid_end_time"},
		{map[string]any{"type": "history/history_during_period", "start_time": start, "entity_ids": []string{"bad"}}, "invalid_entity_ids"},
		{map[string]any{"type": "logbook/get_events", "start_time": "nope"}, "invalid_start_time"},
		{map[string]any{"type": "recorder/statistics_during_period", "start_time": start, "period": "fortnight"}, "invalid_format"},
	}
	for i, c := range errCases {
		c.msg["id"] = 10 + i
		if m, _ := w.cmd(c.msg); errCode(m) != c.code {
			t.Errorf("%v: %v", c.msg, m)
		}
	}
	if f := w.ok(map[string]any{"id": 20, "type": "history/history_during_period", "start_time": "2999-01-01T00:00:00Z", "entity_ids": []string{"light.hallway"}}).(map[string]any); len(f) != 0 {
		t.Errorf("future start: %v", f)
	}
	lb := w.ok(map[string]any{"id": 21, "type": "logbook/get_events", "start_time": start}).([]any)
	if len(lb) == 0 {
		t.Fatal("empty logbook")
	}
	for _, e := range lb {
		m := e.(map[string]any)
		if _, ok := m["when"].(float64); !ok {
			t.Fatalf("WS logbook when must be epoch seconds: %v", m)
		}
		if m["entity_id"] != nil && m["state"] != nil && m["name"] != nil {
			t.Fatalf("WS state rows carry no name: %v", m)
		}
	}
	ids := w.ok(map[string]any{"id": 22, "type": "recorder/list_statistic_ids", "statistic_type": "sum"}).([]any)
	if len(ids) == 0 {
		t.Fatal("no sum statistics")
	}
	first := ids[0].(map[string]any)
	for _, k := range []string{"statistic_id", "source", "has_sum", "has_mean", "mean_type", "unit_class", "statistics_unit_of_measurement"} {
		if _, ok := first[k]; !ok {
			t.Errorf("list_statistic_ids item lacks %s: %v", k, first)
		}
	}
	sid := first["statistic_id"].(string)
	st := w.ok(map[string]any{"id": 23, "type": "recorder/statistics_during_period", "start_time": time.Now().Add(-20 * time.Hour).UTC().Format(time.RFC3339),
		"statistic_ids": []string{sid, "sensor.kitchen_temperature"}, "period": "hour", "types": []string{"sum", "change", "mean"}}).(map[string]any)
	sums, ok := st[sid].([]any)
	if !ok || len(sums) == 0 {
		t.Fatalf("statistics for %s: %v", sid, st)
	}
	row := sums[0].(map[string]any)
	if s, e := row["start"].(float64), row["end"].(float64); e-s != 3600000 {
		t.Errorf("hour row must span 3600000 ms: %v", row)
	}
	if row["change"] == nil || row["sum"] == nil {
		t.Errorf("sum row: %v", row)
	}
	if temps, ok := st["sensor.kitchen_temperature"].([]any); !ok || temps[0].(map[string]any)["mean"] == nil {
		t.Errorf("mean statistics: %v", st["sensor.kitchen_temperature"])
	}
}

func TestWSCalendarCRUD(t *testing.T) {
	w := dialAuthed(t, home.Token())
	day, next := time.Now().AddDate(0, 0, 20).Format("2006-01-02"), time.Now().AddDate(0, 0, 21).Format("2006-01-02")
	w.ok(map[string]any{"id": 1, "type": "calendar/event/create", "entity_id": "calendar.family", "event": map[string]any{"summary": "Piano recital", "dtstart": day + "T18:00:00", "dtend": day + "T19:30:00"}})
	evs := w.ok(map[string]any{"id": 2, "type": "call_service", "domain": "calendar", "service": "get_events", "target": map[string]any{"entity_id": "calendar.family"},
		"service_data": map[string]any{"start_date_time": day + "T00:00:00", "end_date_time": day + "T23:59:00"}, "return_response": true}).(map[string]any)
	list := evs["response"].(map[string]any)["calendar.family"].(map[string]any)["events"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["summary"] != "Piano recital" {
		t.Fatalf("created event not listed: %v", list)
	}
	r := api(t, "GET", "/api/calendars/calendar.family?start="+day+"T00:00:00Z&end="+day+"T23:59:00Z", "")
	uid := r.json(t).([]any)[0].(map[string]any)["uid"].(string)
	w.ok(map[string]any{"id": 3, "type": "calendar/event/update", "entity_id": "calendar.family", "uid": uid, "event": map[string]any{"summary": "Piano recital (moved)", "dtstart": day + "T19:00:00", "dtend": day + "T20:30:00"}})
	w.ok(map[string]any{"id": 4, "type": "calendar/event/delete", "entity_id": "calendar.family", "uid": uid})
	cases := []struct {
		msg  map[string]any
		code string
	}{
		{map[string]any{"type": "calendar/event/create", "entity_id": "calendar.holidays", "event": map[string]any{"summary": "x", "dtstart": day, "dtend": next}}, "not_supported"},
		{map[string]any{"type": "calendar/event/create", "entity_id": "calendar.nope", "event": map[string]any{"summary": "x", "dtstart": day, "dtend": next}}, "not_found"},
		// the schema runs first: a zero-length all-day event is refused before the calendar is looked up
		{map[string]any{"type": "calendar/event/create", "entity_id": "calendar.nope", "event": map[string]any{"summary": "x", "dtstart": day, "dtend": day}}, "invalid_format"},
		{map[string]any{"type": "calendar/event/delete", "entity_id": "calendar.family", "uid": "no-such-uid"}, "failed"},
		{map[string]any{"type": "calendar/event/create", "entity_id": "calendar.family", "event": map[string]any{"summary": "x", "dtstart": day + "T10:00:00", "dtend": day + "T09:00:00"}}, "invalid_format"},
	}
	for i, c := range cases {
		c.msg["id"] = 10 + i
		if m, _ := w.cmd(c.msg); errCode(m) != c.code {
			t.Errorf("%v: %v", c.msg, m)
		}
	}
}

func TestWSNotificationsUserAndPermissions(t *testing.T) {
	w := dialAuthed(t, home.Token())
	w.ok(map[string]any{"id": 1, "type": "persistent_notification/subscribe"})
	if ev := w.waitEvent(1, func(ev map[string]any) bool { return true }); ev["type"] != "current" {
		t.Fatalf("first notification event: %v", ev)
	}
	w.ok(map[string]any{"id": 2, "type": "call_service", "domain": "persistent_notification", "service": "create", "service_data": map[string]any{"message": "Water leak!", "notification_id": "leak"}})
	ev := w.waitEvent(1, func(ev map[string]any) bool { return ev["type"] == "added" })
	if n := ev["notifications"].(map[string]any)["leak"].(map[string]any); n["message"] != "Water leak!" || n["created_at"] == nil {
		t.Errorf("added notification: %v", n)
	}
	me := w.ok(map[string]any{"id": 3, "type": "auth/current_user"}).(map[string]any)
	if me["is_admin"] != true || me["is_owner"] != true || me["name"] != "Alex" {
		t.Errorf("admin user: %v", me)
	}
	u := dialAuthed(t, home.UserToken())
	me = u.ok(map[string]any{"id": 1, "type": "auth/current_user"}).(map[string]any)
	if me["is_admin"] != false {
		t.Errorf("non-admin user: %v", me)
	}
	for i, msg := range []map[string]any{
		{"type": "fire_event", "event_type": "x"},
		{"type": "subscribe_events"},
		{"type": "subscribe_events", "event_type": "call_service_secret"},
		{"type": "supervisor/api", "endpoint": "/addons", "method": "get"},
		{"type": "config/area_registry/delete", "area_id": "kitchen"},
	} {
		msg["id"] = 10 + i
		if m, _ := u.cmd(msg); errCode(m) != "unauthorized" || errMsg(m) != "Unauthorized" {
			t.Errorf("non-admin %v: %v", msg["type"], m)
		}
	}
	u.ok(map[string]any{"id": 20, "type": "subscribe_events", "event_type": "state_changed"})
	ctx := w.ok(map[string]any{"id": 4, "type": "fire_event", "event_type": "doorbell", "event_data": map[string]any{"ring": 1}}).(map[string]any)
	if ctx["context"].(map[string]any)["id"] == nil {
		t.Errorf("fire_event result: %v", ctx)
	}
}

func TestWSMiscCommands(t *testing.T) {
	w := dialAuthed(t, home.Token())
	states := w.ok(map[string]any{"id": 1, "type": "get_states"}).([]any)
	if len(states) < 60 {
		t.Errorf("get_states: %d", len(states))
	}
	cfg := w.ok(map[string]any{"id": 2, "type": "get_config"}).(map[string]any)
	if cfg["location_name"] == nil || cfg["state"] != "RUNNING" {
		t.Errorf("get_config: %v", cfg)
	}
	svcs := w.ok(map[string]any{"id": 3, "type": "get_services"}).(map[string]any)
	if svcs["light"].(map[string]any)["turn_on"] == nil {
		t.Error("get_services lacks light.turn_on")
	}
	v := w.ok(map[string]any{"id": 4, "type": "validate_config", "triggers": []any{map[string]any{"trigger": "state", "entity_id": "light.hallway"}},
		"actions": []any{map[string]any{"wibble": 1}}}).(map[string]any)
	if v["triggers"].(map[string]any)["valid"] != true || v["actions"].(map[string]any)["valid"] != false {
		t.Errorf("validate_config: %v", v)
	}
	addons := w.ok(map[string]any{"id": 5, "type": "supervisor/api", "endpoint": "/addons", "method": "get"}).(map[string]any)
	if len(addons["addons"].([]any)) < 3 {
		t.Errorf("supervisor/api /addons: %v", addons)
	}
	if m, _ := w.cmd(map[string]any{"id": 6, "type": "supervisor/api", "endpoint": "/addons/nope/info", "method": "get"}); errCode(m) != "unknown_error" || !strings.Contains(errMsg(m), "does not exist") {
		t.Errorf("supervisor/api error: %v", m)
	}
	if p := w.ok(map[string]any{"id": 7, "type": "get_panels"}).(map[string]any); p["lovelace"] == nil {
		t.Errorf("panels: %v", p)
	}
	// HA's validate_config takes only the plural keys; the singular ones are extra keys there.
	for i, k := range []string{"trigger", "condition", "action"} {
		m, _ := w.cmd(map[string]any{"id": 8 + i, "type": "validate_config", k: []any{}})
		if errCode(m) != "invalid_format" || !strings.Contains(errMsg(m), "extra keys not allowed @ data['"+k+"']") {
			t.Errorf("validate_config with singular %q: %v", k, m)
		}
	}
}

func TestWSRestartDropsClients(t *testing.T) {
	w := dialAuthed(t, home.Token())
	other := dialAuthed(t, home.Token())
	w.send(map[string]any{"id": 1, "type": "call_service", "domain": "homeassistant", "service": "restart"})
	_, err := other.read(3 * time.Second)
	if err == nil || websocket.CloseStatus(err) == -1 && !strings.Contains(err.Error(), "EOF") {
		t.Errorf("clients survive a restart: %v", err)
	}
	again := dialAuthed(t, home.Token())
	again.send(map[string]any{"id": 1, "type": "ping"})
	if m := again.next(); m["type"] != "pong" {
		t.Errorf("after restart: %v", m)
	}
}

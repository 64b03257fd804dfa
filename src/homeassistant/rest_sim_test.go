package homeassistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/sim"
)

// wantAPIError checks err is an *APIError with the given status and a message containing part.
func wantAPIError(t *testing.T, err error, status int, part string) {
	t.Helper()
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("want *APIError %d, got %T %v", status, err, err)
	}
	if apiErr.Status != status || !strings.Contains(apiErr.Message, part) {
		t.Fatalf("got APIError %d %q, want %d containing %q", apiErr.Status, apiErr.Message, status, part)
	}
}

func TestRESTReads(t *testing.T) {
	h := simHome(t)
	c := restClient(t, h.URL(), h.Token())
	ctx := context.Background()

	if err := c.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	cfg, err := c.Config(ctx)
	if err != nil || cfg.Version == "" || cfg.TimeZone == "" || len(cfg.Raw) == 0 || len(cfg.Components) == 0 {
		t.Fatalf("Config: %+v, %v", cfg, err)
	}
	states, err := c.States(ctx)
	if err != nil || len(states) < 50 {
		t.Fatalf("States: %d states, %v", len(states), err)
	}
	for _, s := range states {
		if s.EntityID == "" || s.LastUpdated.IsZero() || s.Context.ID == "" {
			t.Fatalf("incomplete state %+v", s)
		}
	}
	light := firstEntity(t, states, "light")
	one, err := c.State(ctx, light.EntityID)
	if err != nil || one.EntityID != light.EntityID || one.FriendlyName() == "" || one.Domain() != "light" {
		t.Fatalf("State(%s): %+v, %v", light.EntityID, one, err)
	}
	_, err = c.State(ctx, "light.does_not_exist")
	wantAPIError(t, err, http.StatusNotFound, "Entity not found")

	events, err := c.Events(ctx)
	if err != nil || len(events) == 0 || containsFunc(events, func(e EventListener) bool { return e.Event == "" || e.ListenerCount < 1 }) {
		t.Fatalf("Events: %v, %v", events, err)
	}
	services, err := c.Services(ctx)
	if err != nil {
		t.Fatalf("Services: %v", err)
	}
	var lightOn ServiceDescription
	for _, d := range services {
		if d.Domain == "light" {
			lightOn = d.Services["turn_on"]
		}
	}
	if len(lightOn.Fields) == 0 {
		t.Fatalf("light.turn_on has no fields in %d domains", len(services))
	}
	// The outcome depends on the home's YAML; the client must decode either verdict faithfully.
	check, err := c.CheckConfig(ctx)
	if err != nil || !(check.Valid() || check.Result == "invalid" && check.Errors != "") {
		t.Fatalf("CheckConfig: %+v, %v", check, err)
	}
	if _, err := c.ErrorLog(ctx); err != nil {
		t.Fatalf("ErrorLog: %v", err)
	}
	camera := firstEntity(t, states, "camera")
	img, ctype, err := c.CameraProxy(ctx, camera.EntityID)
	if err != nil || len(img) == 0 || !strings.HasPrefix(ctype, "image/") {
		t.Fatalf("CameraProxy: %d bytes %q, %v", len(img), ctype, err)
	}
	_, _, err = c.CameraProxy(ctx, "camera.does_not_exist")
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status < 400 {
		t.Fatalf("CameraProxy unknown: %v", err)
	}
}

func TestRESTTemplate(t *testing.T) {
	h := simHome(t)
	c := restClient(t, h.URL(), h.Token())
	ctx := context.Background()
	sun, err := c.State(ctx, "sun.sun")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, template string
		vars           map[string]any
		want           string
		status         int
		errPart        string
	}{
		{"state", "{{ states('sun.sun') }}", nil, sun.State, 0, ""},
		{"variables", "{{ x + 1 }}", map[string]any{"x": 41}, "42", 0, ""},
		{"syntax error", "{{ states('sun.sun' }}", nil, "", 400, "Error rendering template"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.RenderTemplate(ctx, tt.template, tt.vars)
			if tt.status != 0 {
				wantAPIError(t, err, tt.status, tt.errPart)
				return
			}
			if err != nil || strings.TrimSpace(got) != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	if _, err := c.RenderTemplate(ctx, " ", nil); err == nil || !strings.Contains(err.Error(), "template is empty") {
		t.Fatalf("empty template: %v", err)
	}
}

func TestRESTCallService(t *testing.T) {
	h := simHome(t)
	c := restClient(t, h.URL(), h.Token())
	ctx := context.Background()
	states, err := c.States(ctx)
	if err != nil {
		t.Fatal(err)
	}
	light := firstEntity(t, states, "light")
	cal := firstEntity(t, states, "calendar")

	changed, resp, err := c.CallService(ctx, "light", "turn_on", map[string]any{"entity_id": light.EntityID, "brightness": 128}, false)
	if err != nil || resp != nil {
		t.Fatalf("light.turn_on: %v, %s", err, resp)
	}
	if !containsFunc(changed, func(s State) bool { return s.EntityID == light.EntityID && s.State == "on" }) {
		t.Fatalf("changed states do not show %s on: %+v", light.EntityID, changed)
	}
	changed, resp, err = c.CallService(ctx, "calendar", "get_events", map[string]any{
		"entity_id": cal.EntityID, "start_date_time": time.Now().Format(time.RFC3339), "duration": map[string]any{"days": 30},
	}, true)
	if err != nil || !json.Valid(resp) || !strings.Contains(string(resp), cal.EntityID) {
		t.Fatalf("calendar.get_events: %s, %v", resp, err)
	}
	_ = changed

	errs := []struct {
		name            string
		domain, service string
		data            map[string]any
		returnResponse  bool
		status          int
		part            string
	}{
		{"response not supported", "light", "turn_on", map[string]any{"entity_id": light.EntityID}, true, 400, "does not support responses"},
		{"response required", "calendar", "get_events", map[string]any{"entity_id": cal.EntityID}, false, 400, "requires responses"},
		{"unknown service", "light", "explode", nil, false, 400, ""},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := c.CallService(ctx, tt.domain, tt.service, tt.data, tt.returnResponse)
			wantAPIError(t, err, tt.status, tt.part)
		})
	}
	for _, bad := range [][2]string{{"Light", "turn_on"}, {"light", "turn on"}, {"", "x"}, {"light/../x", "y"}} {
		if _, _, err := c.CallService(ctx, bad[0], bad[1], nil, false); err == nil || errors.As(err, new(*APIError)) {
			t.Errorf("CallService(%q, %q) should fail before reaching HA: %v", bad[0], bad[1], err)
		}
	}
}

func TestRESTPostStateAndEvents(t *testing.T) {
	h := simHome(t)
	c := restClient(t, h.URL(), h.Token())
	ctx := context.Background()
	id := fmt.Sprintf("sensor.hamcp_test_%d", time.Now().UnixNano())
	st, created, err := c.PostState(ctx, id, StateUpdate{State: "12", Attributes: map[string]any{"unit_of_measurement": "W"}})
	if err != nil || !created || st.EntityID != id || st.State != "12" {
		t.Fatalf("PostState new: %+v created=%v %v", st, created, err)
	}
	st, created, err = c.PostState(ctx, id, StateUpdate{State: "13"})
	if err != nil || created || st.State != "13" {
		t.Fatalf("PostState existing: %+v created=%v %v", st, created, err)
	}
	_, _, err = c.PostState(ctx, id, StateUpdate{State: strings.Repeat("x", 300)})
	wantAPIError(t, err, 400, "Invalid state specified")

	if err := c.FireEvent(ctx, "hamcp_test_event", map[string]any{"a": 1}); err != nil {
		t.Fatalf("FireEvent: %v", err)
	}
	if err := c.FireEvent(ctx, "hamcp_test_event", nil); err != nil {
		t.Fatalf("FireEvent without data: %v", err)
	}
	if err := c.FireEvent(ctx, "a/b", nil); err == nil {
		t.Fatal("FireEvent with a slash must be refused")
	}
}

func TestRESTHistoryAndLogbook(t *testing.T) {
	h := simHome(t)
	c := restClient(t, h.URL(), h.Token())
	ctx := context.Background()
	states, err := c.States(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sensor := firstEntity(t, states, "sensor")
	light := firstEntity(t, states, "light")
	// Recorded changes for the logbook and for a multi-row history.
	for _, svc := range []string{"turn_on", "turn_off", "turn_on"} {
		if _, _, err := c.CallService(ctx, "light", svc, map[string]any{"entity_id": light.EntityID}, false); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	lightRows, err := c.History(ctx, HistoryQuery{EntityIDs: []string{light.EntityID}, Start: now.Add(-time.Hour), End: now.Add(time.Minute), SignificantChangesOnly: true})
	if err != nil || len(lightRows) != 1 || len(lightRows[0]) < 3 {
		t.Fatalf("light history after three toggles: %v, %v", lightRows, err)
	}
	tests := []struct {
		name string
		q    HistoryQuery
	}{
		{"full", HistoryQuery{EntityIDs: []string{sensor.EntityID}, Start: now.Add(-20 * time.Hour), End: now}},
		{"minimal", HistoryQuery{EntityIDs: []string{sensor.EntityID}, Start: now.Add(-20 * time.Hour), MinimalResponse: true, NoAttributes: true}},
		{"significant, no initial", HistoryQuery{EntityIDs: []string{sensor.EntityID}, Start: now.Add(-20 * time.Hour), SignificantChangesOnly: true, SkipInitialState: true}},
		{"default window", HistoryQuery{EntityIDs: []string{sensor.EntityID}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lists, err := c.History(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if len(lists) != 1 || len(lists[0]) == 0 {
				t.Fatalf("want one non-empty list, got %d lists", len(lists))
			}
			for i, row := range lists[0] {
				if row.EntityID != sensor.EntityID || row.LastChanged.IsZero() {
					t.Fatalf("row %d incomplete: %+v", i, row)
				}
				if i > 0 && row.LastChanged.Before(lists[0][i-1].LastChanged) {
					t.Fatalf("rows out of order at %d", i)
				}
			}
		})
	}
	future, err := c.History(ctx, HistoryQuery{EntityIDs: []string{sensor.EntityID}, Start: now.Add(48 * time.Hour)})
	if err != nil || len(future) != 0 {
		t.Fatalf("future history: %v, %v", future, err)
	}
	for _, bad := range []HistoryQuery{{}, {EntityIDs: []string{"not an id"}}, {EntityIDs: []string{sensor.EntityID}, Start: now, End: now.Add(-time.Hour)}} {
		if _, err := c.History(ctx, bad); err == nil {
			t.Errorf("History(%+v) should be refused", bad)
		}
	}

	entries, err := c.Logbook(ctx, LogbookQuery{Start: now.Add(-time.Hour), End: now.Add(time.Minute), EntityIDs: []string{light.EntityID}})
	if err != nil || len(entries) < 2 { // turn_on of a light that was already on changes no state
		t.Fatalf("Logbook for %s: %+v, %v", light.EntityID, entries, err)
	}
	for _, e := range entries {
		if e.When == "" || e.EntityID != light.EntityID || e.State == "" {
			t.Fatalf("incomplete logbook entry %+v", e)
		}
	}
	if _, err := c.Logbook(ctx, LogbookQuery{Start: now.Add(-20 * time.Hour), Period: 1}); err != nil {
		t.Fatalf("Logbook with a period: %v", err)
	}
	if _, err := c.Logbook(ctx, LogbookQuery{EntityIDs: []string{sensor.EntityID}, ContextID: "x"}); err == nil {
		t.Fatal("entity + context_id must be refused")
	}
}

func TestRESTCalendars(t *testing.T) {
	h := simHome(t)
	c := restClient(t, h.URL(), h.Token())
	ctx := context.Background()
	cals, err := c.Calendars(ctx)
	if err != nil || len(cals) == 0 {
		t.Fatalf("Calendars: %v, %v", cals, err)
	}
	now := time.Now()
	var total int
	for _, cal := range cals {
		evs, err := c.CalendarEvents(ctx, cal.EntityID, now.Add(-24*time.Hour), now.Add(14*24*time.Hour))
		if err != nil {
			t.Fatalf("CalendarEvents(%s): %v", cal.EntityID, err)
		}
		for _, e := range evs {
			if e.Summary == "" || (e.Start.DateTime == "" && e.Start.Date == "") {
				t.Fatalf("incomplete event %+v", e)
			}
		}
		total += len(evs)
	}
	if total == 0 {
		t.Fatal("no calendar events in the next two weeks")
	}
	_, err = c.CalendarEvents(ctx, "calendar.does_not_exist", now, now.Add(time.Hour))
	wantAPIError(t, err, 400, "")
}

func TestRESTConfigItems(t *testing.T) {
	h := simHome(t)
	c := restClient(t, h.URL(), h.Token())
	ctx := context.Background()
	id := fmt.Sprintf("%d", time.Now().UnixMilli())
	auto := map[string]any{
		"id": id, "alias": "hamcp test automation", "description": "",
		"triggers":   []any{map[string]any{"trigger": "state", "entity_id": "sun.sun", "to": "below_horizon"}},
		"conditions": []any{},
		"actions":    []any{map[string]any{"action": "light.turn_on", "target": map[string]any{"entity_id": "light.does_not_matter"}}},
		"mode":       "single",
	}
	if err := c.SaveConfigItem(ctx, KindAutomation, id, auto); err != nil {
		t.Fatalf("SaveConfigItem: %v", err)
	}
	raw, err := c.GetConfigItem(ctx, KindAutomation, id)
	var got map[string]any
	if err != nil || json.Unmarshal(raw, &got) != nil || got["alias"] != "hamcp test automation" || got["id"] != id {
		t.Fatalf("GetConfigItem: %s, %v", raw, err)
	}
	if err := c.DeleteConfigItem(ctx, KindAutomation, id); err != nil {
		t.Fatalf("DeleteConfigItem: %v", err)
	}
	_, err = c.GetConfigItem(ctx, KindAutomation, id)
	wantAPIError(t, err, 404, "Resource not found")
	err = c.DeleteConfigItem(ctx, KindAutomation, id)
	wantAPIError(t, err, 400, "Resource not found") // HA's quirk: 400, not 404

	script := map[string]any{"alias": "hamcp test script", "sequence": []any{map[string]any{"delay": "00:00:01"}}}
	if err := c.SaveConfigItem(ctx, KindScript, "hamcp_test_script", script); err != nil {
		t.Fatalf("save script: %v", err)
	}
	if raw, err := c.GetConfigItem(ctx, KindScript, "hamcp_test_script"); err != nil || !strings.Contains(string(raw), "hamcp test script") {
		t.Fatalf("get script: %s, %v", raw, err)
	}
	if err := c.DeleteConfigItem(ctx, KindScript, "hamcp_test_script"); err != nil {
		t.Fatalf("delete script: %v", err)
	}
	err = c.SaveConfigItem(ctx, KindAutomation, "bad1", map[string]any{"id": "bad1", "triggers": "not a list"})
	wantAPIError(t, err, 400, "")

	local := []struct {
		kind ConfigKind
		key  string
		item any
	}{
		{"group", "x", map[string]any{}},
		{KindScript, "Not A Slug", map[string]any{}},
		{KindAutomation, "a/b", map[string]any{}},
		{KindAutomation, "ok", []int{1}},
	}
	for _, tt := range local {
		if err := c.SaveConfigItem(ctx, tt.kind, tt.key, tt.item); err == nil || errors.As(err, new(*APIError)) {
			t.Errorf("SaveConfigItem(%s, %q) should fail locally: %v", tt.kind, tt.key, err)
		}
	}
}

func TestRESTAuth(t *testing.T) {
	h := simHome(t)
	ctx := context.Background()
	admin := restClient(t, h.URL(), h.Token())

	tests := []struct {
		name  string
		token string
		want  error
	}{
		{"admin token", h.Token(), nil},
		{"user token", h.UserToken(), nil},
		{"wrong token", "not-a-token", ErrUnauthorized},
		{"empty token", "", ErrUnauthorized},
		{"header injection", "a\r\nX-Evil: 1", ErrUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := admin.ValidateToken(ctx, tt.token)
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("ValidateToken: %v, want %v", err, tt.want)
			}
		})
	}
	bad := restClient(t, h.URL(), "not-a-token")
	err := bad.Ping(ctx)
	wantAPIError(t, err, 401, "Unauthorized")
	if !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("401 must match ErrUnauthorized: %v", err)
	}
	// Admin-only views refuse a non-admin user with 401, as HA does.
	user := restClient(t, h.URL(), h.UserToken())
	err = user.FireEvent(ctx, "hamcp_test_event", nil)
	wantAPIError(t, err, 401, "")
	if _, err := user.States(ctx); err != nil {
		t.Fatalf("non-admin may read states: %v", err)
	}
}

func containsFunc[T any](list []T, pred func(T) bool) bool {
	for _, v := range list {
		if pred(v) {
			return true
		}
	}
	return false
}

func TestRESTHandleIntent(t *testing.T) {
	h := simHome(t)
	c := restClient(t, h.URL(), h.Token())
	ctx := context.Background()
	states, err := c.States(ctx)
	if err != nil {
		t.Fatal(err)
	}
	light := firstEntity(t, states, "light")
	tests := []struct {
		name, intent string
		slots        map[string]any
		responseType string
	}{
		{"turn off by name", "HassTurnOff", map[string]any{"name": light.FriendlyName()}, "action_done"},
		{"unknown intent", "HassNoSuchIntent", nil, "error"},
		{"no target", "HassTurnOn", map[string]any{"name": "Nothing Called This"}, "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := c.HandleIntent(ctx, tt.intent, tt.slots)
			var resp struct {
				ResponseType string `json:"response_type"`
				Speech       struct {
					Plain struct{ Speech string }
				}
			}
			if err != nil || json.Unmarshal(raw, &resp) != nil || resp.ResponseType != tt.responseType || resp.Speech.Plain.Speech == "" {
				t.Fatalf("HandleIntent: %s, %v", raw, err)
			}
		})
	}
	if s, err := c.State(ctx, light.EntityID); err != nil || s.State != "off" {
		t.Fatalf("intent did not turn the light off: %+v, %v", s, err)
	}
	if _, err := c.HandleIntent(ctx, " ", nil); err == nil {
		t.Fatal("empty intent name must be refused")
	}
}

// TestRESTLog: Log reads home-assistant.log through /api/error_log, and on an HA OS /
// Supervised install (no log file, /api/error_log 404) the Supervisor's journal through core's
// hassio view, the last lines only.
func TestRESTLog(t *testing.T) {
	t.Parallel()
	supervised, err := sim.Start(context.Background(), sim.Options{HistoryDays: -1, Seed: 2, Supervised: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { supervised.Close() })
	for _, c := range []struct {
		name       string
		h          *sim.Home
		wantSource string
		maxLines   int
	}{
		{"container install", simHome(t), "error_log", 0},
		{"HA OS", supervised, "supervisor", 40},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl, err := New(Config{BaseURL: c.h.URL(), Token: c.h.Token()})
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			text, source, err := cl.Log(context.Background(), 40)
			if err != nil || source != c.wantSource || !strings.Contains(text, "met.no") && c.maxLines == 0 {
				t.Fatalf("Log: source %q, %d bytes, %v", source, len(text), err)
			}
			if n := strings.Count(text, "\n"); c.maxLines > 0 && (n == 0 || n > c.maxLines) {
				t.Fatalf("%d lines, want 1..%d", n, c.maxLines)
			}
			if _, err := cl.ErrorLog(context.Background()); c.wantSource == "supervisor" && !IsStatus(err, 404) {
				t.Fatalf("/api/error_log on HA OS: %v, want 404", err)
			}
		})
	}
}

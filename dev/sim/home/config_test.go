package home_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/hamcp/hamcp/dev/sim/home"
)

func TestDemoConfigFilesWritten(t *testing.T) {
	dir := t.TempDir()
	h, _ := newHome(t, dir)
	for _, f := range []string{"automations.yaml", "scripts.yaml", "scenes.yaml"} {
		raw, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || len(raw) == 0 {
			t.Fatalf("%s not written: %v", f, err)
		}
	}
	if _, ok := h.State("automation.hallway_light_on_motion"); !ok {
		t.Error("automation entity missing")
	}
	if st := mustState(t, h, "automation.good_morning"); st.State != "off" {
		t.Errorf("initial_state: false automation is %s", st.State)
	}
	if st := mustState(t, h, "scene.movie_night"); st.State != "unknown" || len(st.Attributes["entity_id"].([]any)) != 4 {
		t.Errorf("scene: %+v", st)
	}
}

func TestConfigCRUDRoundTrip(t *testing.T) {
	dir := t.TempDir()
	h, _ := newHome(t, dir)
	cases := []struct {
		kind, key, body, file, wantInFile, entity string
	}{
		{"automation", "1700000000001", `{"alias":"Porch at dusk","description":"","triggers":[{"trigger":"sun","event":"sunset"}],"conditions":[],"actions":[{"action":"light.turn_on","target":{"entity_id":"light.garden_path"}}],"mode":"single"}`,
			"automations.yaml", "id: \"1700000000001\"", "automation.porch_at_dusk"},
		{"script", "wake_up", `{"alias":"Wake up","sequence":[{"action":"light.turn_on","target":{"entity_id":"light.bedroom_nightstand"},"data":{"brightness_pct":20}}],"mode":"single"}`,
			"scripts.yaml", "wake_up:", "script.wake_up"},
		{"scene", "1700000000101", `{"name":"Reading","entities":{"light.office_desk":{"state":"on","brightness":200}}}`,
			"scenes.yaml", "name: Reading", "scene.reading"},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			if _, ok := h.ConfigItem(c.kind, c.key); ok {
				t.Fatal("item exists before creation")
			}
			if err := h.PutConfigItem(c.kind, c.key, []byte(c.body), ""); err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(filepath.Join(dir, c.file))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(raw), c.wantInFile) {
				t.Errorf("%s lacks %q:\n%s", c.file, c.wantInFile, raw)
			}
			var doc yaml.Node
			if err := yaml.Unmarshal(raw, &doc); err != nil {
				t.Fatalf("%s is not valid YAML: %v", c.file, err)
			}
			got, ok := h.ConfigItem(c.kind, c.key)
			if !ok {
				t.Fatal("item not readable back")
			}
			if c.kind != "script" && !strings.HasPrefix(string(got), `{"id":"`+c.key+`"`) {
				t.Errorf("id must come first: %s", got)
			}
			if c.kind == "script" && strings.Contains(string(got), `"id"`) {
				t.Errorf("script items carry no id: %s", got)
			}
			if _, ok := h.State(c.entity); !ok {
				t.Errorf("%s not created by the reload", c.entity)
			}
			if err := h.DeleteConfigItem(c.kind, c.key, ""); err != nil {
				t.Fatal(err)
			}
			if _, ok := h.State(c.entity); ok {
				t.Errorf("%s still there after delete", c.entity)
			}
			var nf *home.NotFoundError
			if err := h.DeleteConfigItem(c.kind, c.key, ""); !errors.As(err, &nf) {
				t.Errorf("second delete: %v", err)
			}
		})
	}
}

func TestConfigValidation(t *testing.T) {
	h, _ := newHome(t, t.TempDir())
	cases := []struct{ kind, key, body, want string }{
		{"automation", "1", `{"alias":"x"`, "Invalid JSON specified"},
		{"automation", "1", `{"alias":"x","actions":[]}`, "Message malformed: required key not provided @ data['triggers']"},
		{"automation", "1", `{"triggers":[{"trigger":"state","entity_id":"light.x"}]}`, "Message malformed: required key not provided @ data['actions']"},
		{"automation", "1", `{"triggers":[{"trigger":"bogus"}],"actions":[]}`, "Message malformed: Invalid trigger 'bogus' specified"},
		{"automation", "1", `{"triggers":[],"actions":[{"frobnicate":1}]}`, "Message malformed: Unable to determine action @ data['actions'][0]"},
		{"automation", "1", `{"triggers":[],"actions":[],"mode":"sometimes"}`, "Message malformed: value must be one of"},
		{"script", "Bad Key", `{"sequence":[]}`, "Key malformed: invalid slug Bad Key (try bad_key)"},
		{"script", "ok", `{"alias":"no sequence"}`, "Message malformed: required key not provided @ data['sequence']"},
		{"scene", "1", `{"name":"x","entities":[]}`, "Message malformed: expected dict for dictionary value @ data['states'][0]['entities']"},
		{"scene", "1", `["not","an","object"]`, "Message malformed: expected a dictionary"},
	}
	for _, c := range cases {
		err := h.PutConfigItem(c.kind, c.key, []byte(c.body), "")
		var ce *home.ConfigError
		if !errors.As(err, &ce) || !strings.Contains(ce.Msg, c.want) {
			t.Errorf("%s %s: got %v, want %q", c.kind, c.body, err, c.want)
		}
	}
}

func TestReloadPicksUpFileEdits(t *testing.T) {
	dir := t.TempDir()
	h, _ := newHome(t, dir)
	extra := "\nsay_hi:\n  alias: Say hi\n  sequence:\n  - action: persistent_notification.create\n    data:\n      message: hi from a file edit\n"
	f, err := os.OpenFile(filepath.Join(dir, "scripts.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(extra)
	f.Close()
	if _, ok := h.State("script.say_hi"); ok {
		t.Fatal("edit visible before reload")
	}
	call(t, h, "script", "reload", nil)
	call(t, h, "script", "say_hi", nil)
	if n := h.Notifications(); len(n) != 1 || n[0].Message != "hi from a file edit" {
		t.Errorf("script from edited file did not run: %+v", n)
	}
	// a broken file makes reload fail and keeps the entities
	if err := os.WriteFile(filepath.Join(dir, "scripts.yaml"), []byte("say_hi: [unclosed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := h.CallService(home.ServiceCall{Domain: "script", Service: "reload"}); err == nil {
		t.Error("reload of broken YAML succeeded")
	}
	if _, ok := h.State("script.say_hi"); !ok {
		t.Error("entities dropped by a failed reload")
	}
	if r := h.CheckConfig(); r.Result != "invalid" || r.Errors == nil || !strings.Contains(*r.Errors, "scripts.yaml") {
		t.Errorf("check_config with broken scripts.yaml: %+v", r)
	}
}

func TestAutomationTriggerRunsActions(t *testing.T) {
	h, _ := newHome(t, t.TempDir())
	var triggered bool
	cancel := h.Subscribe("automation_triggered", func(e home.Event) { triggered = e.Data["entity_id"] == "automation.lock_up_at_night" })
	defer cancel()
	call(t, h, "lock", "unlock", map[string]any{"entity_id": "lock.front_door"})
	call(t, h, "automation", "trigger", map[string]any{"entity_id": "automation.lock_up_at_night"})
	if mustState(t, h, "lock.front_door").State != "locked" || mustState(t, h, "cover.bedroom_blinds").State != "closed" {
		t.Error("automation actions did not run")
	}
	if !triggered || mustState(t, h, "automation.lock_up_at_night").Attributes["last_triggered"] == nil {
		t.Error("automation_triggered not fired or last_triggered not set")
	}
	// with conditions honoured, the hallway automation (needs the sun below the horizon at noon) does nothing
	call(t, h, "light", "turn_off", map[string]any{"entity_id": "light.hallway"})
	call(t, h, "automation", "trigger", map[string]any{"entity_id": "automation.hallway_light_on_motion", "skip_condition": false})
	if mustState(t, h, "light.hallway").State != "off" {
		t.Error("condition ignored")
	}
	call(t, h, "automation", "turn_off", map[string]any{"entity_id": "automation.hallway_light_on_motion"})
	if mustState(t, h, "automation.hallway_light_on_motion").State != "off" {
		t.Error("automation.turn_off")
	}
}

func TestScriptDelayRunsLater(t *testing.T) {
	h, _ := newHome(t, t.TempDir())
	body := `{"alias":"Pulse","sequence":[{"action":"switch.turn_on","target":{"entity_id":"switch.christmas_lights"}},{"delay":{"milliseconds":30}},{"action":"switch.turn_off","target":{"entity_id":"switch.christmas_lights"}}]}`
	if err := h.PutConfigItem("script", "pulse", []byte(body), ""); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	cancel := h.Subscribe("state_changed", func(e home.Event) {
		if e.Data["entity_id"] == "script.pulse" {
			if ns, _ := e.Data["new_state"].(*home.State); ns != nil && ns.State == "off" {
				close(done)
			}
		}
	})
	defer cancel()
	call(t, h, "script", "turn_on", map[string]any{"entity_id": "script.pulse"})
	if mustState(t, h, "switch.christmas_lights").State != "on" || mustState(t, h, "script.pulse").State != "on" {
		t.Fatal("first step should have run and the script should still be running")
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the script never finished its delay")
	}
	if mustState(t, h, "switch.christmas_lights").State != "off" {
		t.Error("step after the delay did not run")
	}
}

func TestScriptResponseAndFields(t *testing.T) {
	h, _ := newHome(t, t.TempDir())
	body := `{"alias":"Answer","fields":{"who":{"description":"name"}},"sequence":[{"variables":{"greeting":"{{ 'Hello ' ~ who }}"}},{"stop":"done","response_variable":"out"}],"mode":"single"}`
	if err := h.PutConfigItem("script", "answer", []byte(body), ""); err != nil {
		t.Fatal(err)
	}
	// response_variable names the variable holding the response
	body = `{"alias":"Answer","sequence":[{"variables":{"out":{"greeting":"{{ 'Hello ' ~ who }}"}}},{"stop":"done","response_variable":"out"}]}`
	if err := h.PutConfigItem("script", "answer", []byte(body), ""); err != nil {
		t.Fatal(err)
	}
	res, err := h.CallService(home.ServiceCall{Domain: "script", Service: "answer", Data: map[string]any{"who": "Sam"}, ReturnResponse: true})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := res.Response.(map[string]any); m["greeting"] != "Hello Sam" {
		t.Errorf("response: %#v", res.Response)
	}
}

func TestCalendarCRUD(t *testing.T) {
	h, clk := newHome(t, "")
	now := clk.now()
	day := now.AddDate(0, 0, 10)
	evs := func() []home.CalendarEvent {
		e, err := h.CalendarEvents("calendar.family", day.Add(-time.Hour), day.Add(48*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	before := len(evs())
	in := home.EventInput{Summary: "Vet", DTStart: day.Format("2006-01-02") + "T14:00:00", DTEnd: day.Format("2006-01-02") + "T15:00:00", Location: "Clinic"}
	if err := h.CreateCalendarEvent("calendar.family", in); err != nil {
		t.Fatal(err)
	}
	got := evs()
	if len(got) != before+1 {
		t.Fatalf("event not listed: %+v", got)
	}
	var vet home.CalendarEvent
	for _, e := range got {
		if e.Summary == "Vet" {
			vet = e
		}
	}
	if vet.UID == "" || vet.Start.In(h.Location()).Hour() != 14 {
		t.Errorf("stored event: %+v", vet)
	}
	j := vet.APIJSON(h.Location())
	if !strings.HasSuffix(j["start"].(map[string]any)["dateTime"].(string), ":00+02:00") {
		t.Errorf("local ISO expected: %v", j["start"])
	}
	in.Summary = "Vet (moved)"
	if err := h.UpdateCalendarEvent("calendar.family", vet.UID, "", "", in); err != nil {
		t.Fatal(err)
	}
	if err := h.DeleteCalendarEvent("calendar.family", vet.UID, "", ""); err != nil {
		t.Fatal(err)
	}
	if len(evs()) != before {
		t.Error("delete did not remove")
	}
	var ns *home.NotSupportedError
	if err := h.CreateCalendarEvent("calendar.holidays", in); !errors.As(err, &ns) || ns.Msg != "Calendar does not support event creation" {
		t.Errorf("holidays create: %v", err)
	}
	var nf *home.NotFoundError
	if err := h.CreateCalendarEvent("calendar.nope", in); !errors.As(err, &nf) {
		t.Errorf("unknown calendar: %v", err)
	}
	bad := home.EventInput{Summary: "x", DTStart: "2026-05-01", DTEnd: "2026-05-01T10:00:00"}
	if err := h.CreateCalendarEvent("calendar.family", bad); err == nil || !strings.Contains(err.Error(), "same type") {
		t.Errorf("mixed date/datetime accepted: %v", err)
	}
}

func TestCalendarRecurrence(t *testing.T) {
	h, clk := newHome(t, "")
	start := clk.now().In(h.Location())
	in := home.EventInput{Summary: "Gym", DTStart: start.Format("2006-01-02") + "T07:00:00", DTEnd: start.Format("2006-01-02") + "T08:00:00", RRule: "FREQ=DAILY;COUNT=5"}
	if err := h.CreateCalendarEvent("calendar.work", in); err != nil {
		t.Fatal(err)
	}
	count := func() (n int, uid, rid string) {
		evs, _ := h.CalendarEvents("calendar.work", start.AddDate(0, 0, -1), start.AddDate(0, 0, 30))
		for _, e := range evs {
			if e.Summary == "Gym" {
				n++
				uid, rid = e.UID, e.RecurrenceID
			}
		}
		return
	}
	n, uid, rid := count()
	if n != 5 || rid == "" {
		t.Fatalf("want 5 instances with recurrence ids, got %d (%s)", n, rid)
	}
	if err := h.DeleteCalendarEvent("calendar.work", uid, rid, ""); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := count(); n != 4 {
		t.Errorf("after deleting one instance: %d", n)
	}
	if err := h.CreateCalendarEvent("calendar.work", home.EventInput{Summary: "x", DTStart: "2026-05-01", DTEnd: "2026-05-02", RRule: "FREQ=SECONDLY"}); err == nil {
		t.Error("unsupported FREQ accepted")
	}
}

func TestRegistriesAndSearch(t *testing.T) {
	h, _ := newHome(t, t.TempDir())
	a, err := h.CreateArea(map[string]any{"name": "Attic", "floor_id": "first_floor", "aliases": []any{"loft"}})
	if err != nil || a.AreaID != "attic" || *a.FloorID != "first_floor" {
		t.Fatalf("create area: %+v %v", a, err)
	}
	var info *home.InfoError
	if _, err := h.CreateArea(map[string]any{"name": "attic"}); !errors.As(err, &info) {
		t.Errorf("duplicate name: %v", err)
	}
	if _, err := h.UpdateArea("attic", map[string]any{"icon": "mdi:home-roof", "floor_id": nil}); err != nil {
		t.Fatal(err)
	}
	if err := h.DeleteArea("attic"); err != nil {
		t.Fatal(err)
	}
	var nf *home.NotFoundError
	if err := h.DeleteArea("attic"); !errors.As(err, &nf) {
		t.Errorf("second delete: %v", err)
	}
	u, err := h.UpdateEntityEntry("light.hallway", map[string]any{"name": "Corridor", "labels": []any{"night", "security"}})
	if err != nil || *u.Entry.Name != "Corridor" {
		t.Fatalf("update entity: %v", err)
	}
	if mustState(t, h, "light.hallway").Attributes["friendly_name"] != "Corridor" {
		t.Error("rename not reflected in the state")
	}
	rel, err := h.SearchRelated("entity", "light.hallway")
	if err != nil {
		t.Fatal(err)
	}
	if len(rel["area"]) != 1 || rel["area"][0] != "hallway" || len(rel["device"]) != 1 || !containsStr(rel["automation"], "automation.hallway_light_on_motion") {
		t.Errorf("related to light.hallway: %v", rel)
	}
	rel, _ = h.SearchRelated("area", "kitchen")
	if !containsStr(rel["entity"], "light.kitchen_ceiling") || rel["floor"][0] != "ground_floor" {
		t.Errorf("related to kitchen: %v", rel)
	}
	rel, _ = h.SearchRelated("automation", "automation.lock_up_at_night")
	if !containsStr(rel["label"], "night") || !containsStr(rel["entity"], "cover.bedroom_blinds") {
		t.Errorf("related to automation: %v", rel)
	}
	if _, err := h.SearchRelated("spaceship", "x"); err == nil {
		t.Error("unknown item type accepted")
	}
	snap := h.Snapshot()
	if snap.AreaName("light.kitchen_ceiling") != "Kitchen" || len(snap.AreaEntities("Kitchen")) < 5 || len(snap.FloorAreas("outside")) != 2 {
		t.Error("snapshot registry helpers")
	}
}

func containsStr(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func TestNotificationSubscription(t *testing.T) {
	h, _ := newHome(t, "")
	var updates []home.NotificationUpdate
	cancel := h.SubscribeNotifications(func(u home.NotificationUpdate) { updates = append(updates, u) })
	call(t, h, "persistent_notification", "create", map[string]any{"message": "m", "notification_id": "x"})
	call(t, h, "persistent_notification", "create", map[string]any{"message": "m2", "notification_id": "x"})
	call(t, h, "persistent_notification", "dismiss", map[string]any{"notification_id": "x"})
	cancel()
	call(t, h, "persistent_notification", "create", map[string]any{"message": "after"})
	var kinds []string
	for _, u := range updates {
		kinds = append(kinds, u.Type)
	}
	if strings.Join(kinds, ",") != "current,added,updated,removed" {
		t.Errorf("updates: %v", kinds)
	}
}

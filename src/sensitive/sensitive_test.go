package sensitive

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

var (
	frontDoor = Entity{ID: "lock.front_door", Name: "Front Door"}
	alarm     = Entity{ID: "alarm_control_panel.home"}
	garage    = Entity{ID: "cover.garage_door", DeviceClass: "garage"}
	gate      = Entity{ID: "cover.drive", DeviceClass: "gate"}
	blinds    = Entity{ID: "cover.blinds", DeviceClass: "blind"}
	light     = Entity{ID: "light.hall"}
	siren     = Entity{ID: "siren.hall"}
)

func TestService(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		ents     []Entity
		complete bool
		want     []Class
	}{
		{"lock.unlock", []Entity{frontDoor}, true, []Class{Lock}},
		{"lock.unlock", nil, true, []Class{Lock}}, // whatever it targets, it is an unlock
		{"LOCK.OPEN", nil, true, []Class{Lock}},
		{"lock.lock", []Entity{frontDoor}, true, nil},
		{"alarm_control_panel.alarm_disarm", nil, true, []Class{Alarm}},
		{"alarm_control_panel.alarm_arm_away", []Entity{alarm}, true, nil},
		{"cover.open_cover", []Entity{garage}, true, []Class{Garage}},
		{"cover.open_cover", []Entity{gate, blinds}, true, []Class{Garage}},
		{"cover.open_cover", []Entity{blinds}, true, nil},
		{"cover.open_cover", []Entity{blinds}, false, []Class{Garage}}, // unresolved: assume the worst
		{"cover.close_cover", []Entity{garage}, true, nil},
		{"cover.set_cover_position", []Entity{garage}, true, []Class{Garage}},
		{"homeassistant.turn_on", []Entity{garage, light}, true, []Class{Garage}},
		{"homeassistant.turn_off", []Entity{garage}, true, nil},
		{"homeassistant.toggle", []Entity{garage}, true, []Class{Garage}},
		{"homeassistant.turn_off", []Entity{frontDoor}, true, []Class{Lock}},
		{"homeassistant.turn_on", []Entity{alarm}, true, []Class{Alarm}},
		{"homeassistant.turn_on", []Entity{siren}, true, []Class{Change}},
		{"homeassistant.turn_on", []Entity{light}, true, nil},
		{"homeassistant.turn_on", nil, false, []Class{Lock, Alarm, Garage}},
		{"homeassistant.restart", nil, true, []Class{Restart}},
		{"hassio.host_shutdown", nil, true, []Class{Restart}},
		{"recorder.purge", nil, true, []Class{Delete}},
		{"{{ 'lock' }}.unlock", nil, true, []Class{Lock, Alarm, Garage, Restart, Delete}},
		{"light.turn_on", []Entity{light}, true, nil},
	} {
		domain, service, _ := strings.Cut(c.name, ".")
		if got := ClassesOf(Service(domain, service, c.ents, c.complete)); !slices.Equal(got, c.want) {
			t.Errorf("Service(%s, %v, complete=%v) = %v, want %v", c.name, c.ents, c.complete, got, c.want)
		}
	}
}

func TestSceneState(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		e     Entity
		state any
		want  []Class
	}{
		{frontDoor, "unlocked", []Class{Lock}},
		{frontDoor, map[string]any{"state": "open"}, []Class{Lock}},
		{frontDoor, "locked", nil},
		{frontDoor, "", []Class{Lock}}, // unknown state: assume the worst
		{alarm, "disarmed", []Class{Alarm}},
		{alarm, "armed_night", nil},
		{garage, "open", []Class{Garage}},
		{garage, map[string]any{"state": "closed", "current_position": 40.0}, []Class{Garage}},
		{garage, "closed", nil},
		{blinds, "open", nil},
		{light, "on", nil},
		{frontDoor, "{{ states('x') }}", []Class{Lock, Alarm, Garage, Restart, Delete}},
	} {
		if got := ClassesOf(SceneState(c.e, c.state)); !slices.Equal(got, c.want) {
			t.Errorf("SceneState(%s, %v) = %v, want %v", c.e.ID, c.state, got, c.want)
		}
	}
}

func TestCalls(t *testing.T) {
	t.Parallel()
	var cfg any
	if err := json.Unmarshal([]byte(`{"alias":"x",
		"triggers":[{"trigger":"device","device_id":"d1","domain":"lock","type":"unlocked"},{"trigger":"event","event_type":"lock.unlock"}],
		"conditions":[{"condition":"device","device_id":"d1","domain":"alarm_control_panel","type":"is_disarmed"}],
		"actions":[
		  {"action":"light.turn_on","target":{"area_id":"hall"}},
		  {"choose":[{"conditions":[],"sequence":[{"service":"lock.unlock","entity_id":"lock.a, lock.b"}]}]},
		  {"repeat":{"count":2,"sequence":[{"service_template":"{{ svc }}"}]}},
		  {"device_id":"d2","domain":"cover","type":"open","entity_id":"0123abcd"},
		  {"device_id":"d3","domain":"light","type":"turn_on"},
		  {"scene":"scene.open_house"},
		  {"action":"cover.open_cover","target":"{{ covers }}"},
		  {"action":"alarm_control_panel.alarm_disarm","data":{"label_id":["security"]}},
		  {"action":"notify.mobile_app","data":{"actions":[{"action":"lock.unlock","title":"a button, not an action"}]}}]}`), &cfg); err != nil {
		t.Fatal(err)
	}
	got := map[string]Target{}
	for _, c := range Calls(cfg) {
		got[c.Service] = c.Target
	}
	want := map[string]Target{
		"light.turn_on":                    {AreaIDs: []string{"hall"}},
		"lock.unlock":                      {EntityIDs: []string{"lock.a", "lock.b"}},
		"{{ svc }}":                        {},
		"cover.open_cover":                 {Templated: true},
		"scene.turn_on":                    {EntityIDs: []string{"scene.open_house"}},
		"alarm_control_panel.alarm_disarm": {LabelIDs: []string{"security"}},
		"notify.mobile_app":                {},
	}
	if len(got) != len(want) {
		t.Errorf("Calls found %v, want the services of %v", got, want)
	}
	for svc, w := range want {
		g, ok := got[svc]
		if !ok {
			t.Errorf("Calls missed %s", svc)
			continue
		}
		if g.Templated != w.Templated || !slices.Equal(g.EntityIDs, w.EntityIDs) || !slices.Equal(g.AreaIDs, w.AreaIDs) || !slices.Equal(g.LabelIDs, w.LabelIDs) {
			t.Errorf("Calls(%s) target = %+v, want %+v", svc, g, w)
		}
	}
	// The device action's target is a registry id, which only Home Assistant maps: left to resolve.
	var dev *Call
	for _, c := range Calls(cfg) {
		if c.Service == "cover.open_cover" && len(c.Target.DeviceIDs) > 0 {
			dev = &c
		}
	}
	if dev == nil || dev.Target.DeviceIDs[0] != "d2" {
		t.Errorf("the cover device action was not read as cover.open_cover on device d2: %v", Calls(cfg))
	}
}

func TestParseClass(t *testing.T) {
	t.Parallel()
	if c, err := ParseClass(" Garage "); err != nil || c != Garage {
		t.Errorf("ParseClass(Garage) = %q, %v", c, err)
	}
	if _, err := ParseClass("doors"); err == nil || !strings.Contains(err.Error(), "lock, alarm, garage, restart, delete, change") {
		t.Errorf("ParseClass(doors) error %v does not list the classes", err)
	}
}

// FuzzCalls: any JSON document is walked without panicking, every call found names a service (or a
// template), and a document that mentions an unlock anywhere under an action key is not missed.
func FuzzCalls(f *testing.F) {
	f.Add(`{"actions":[{"action":"lock.unlock","target":{"entity_id":"lock.a"}}]}`)
	f.Add(`[{"sequence":[{"service":"{{ x }}","data":"{{ d }}"}]}]`)
	f.Add(`{"device_id":"d","domain":"lock","type":"unlock","entity_id":["x",1]}`)
	f.Add(`{"scene":"scene.x","target":{"floor_id":"up, down"}}`)
	f.Fuzz(func(t *testing.T, doc string) {
		var v any
		if json.Unmarshal([]byte(doc), &v) != nil {
			return
		}
		for _, c := range Calls(v) {
			if !strings.Contains(c.Service, ".") && !IsTemplate(c.Service) {
				t.Fatalf("%q reported as a service call", c.Service)
			}
			domain, service, _ := strings.Cut(c.Service, ".")
			_ = Service(domain, service, []Entity{{ID: "cover.x", DeviceClass: "garage"}}, !c.Target.Templated)
		}
	})
}

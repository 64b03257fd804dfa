package rules

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// refsRule refers to devices in every place a rule can: upstream's manifest missed deviceIds,
// sceneDeviceId and the condition of an if_then_else.
const refsRule = `{"name":"Refs","enabled":true,
  "triggers":[
    {"type":"device_event","deviceId":"12","attribute":"motion","condition":{"type":"presence","deviceId":"24","status":"present"}},
    {"type":"device_event","deviceIds":["10","11"],"attribute":"contact","value":"open"}],
  "conditions":[{"type":"lock","deviceId":"8","status":"locked"},{"type":"mode","mode":"Home"}],
  "actions":[
    {"type":"activate_scene","sceneDeviceId":"27"},
    {"type":"capture_state","deviceIds":["1","5"],"stateId":"s"},
    {"type":"if_then_else","condition":{"type":"device_state","deviceId":"13","attribute":"illuminance","operator":"<","value":30},
     "thenActions":[{"type":"repeat","times":2,"actions":[{"type":"toggle_device","deviceId":"1"}]}],
     "elseActions":[{"type":"set_level","deviceId":"2","level":10}]}],
  "id":"r-1","executionCount":7,"errorCount":2,"lastError":"boom","createdAt":"2026-01-02T03:04:05Z","lastTriggered":"2026-01-03T03:04:05Z"}`

func TestDeviceRefsFindsEveryReference(t *testing.T) {
	t.Parallel()
	r := mustDecode(t, refsRule)
	want := []DeviceRef{
		{"triggers[0].deviceId", "12"}, {"triggers[0].condition.deviceId", "24"},
		{"triggers[1].deviceIds[0]", "10"}, {"triggers[1].deviceIds[1]", "11"},
		{"conditions[0].deviceId", "8"},
		{"actions[0].sceneDeviceId", "27"},
		{"actions[1].deviceIds[0]", "1"}, {"actions[1].deviceIds[1]", "5"},
		{"actions[2].condition.deviceId", "13"},
		{"actions[2].thenActions[0].actions[0].deviceId", "1"},
		{"actions[2].elseActions[0].deviceId", "2"},
	}
	if got := DeviceRefs(&r); !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
}

func TestExportRule(t *testing.T) {
	t.Parallel()
	r := mustDecode(t, refsRule)
	now := time.Date(2026, 11, 24, 23, 0, 0, 0, time.FixedZone("CET", 3600))
	e := ExportRule(r, simLookup(t), "1.2.3", now)
	if e.ExportVersion != "1.0" || e.ExportedAt != "2026-11-24T22:00:00Z" || e.ServerVersion != "1.2.3" {
		t.Errorf("header: %+v", e)
	}
	if e.Rule.ID != "" || e.Rule.ExecutionCount != 0 || e.Rule.ErrorCount != 0 || e.Rule.LastError != "" ||
		!e.Rule.CreatedAt.IsZero() || e.Rule.LastTriggered != nil {
		t.Errorf("runtime fields exported: %+v", e.Rule)
	}
	if r.ID != "r-1" || r.ExecutionCount != 7 {
		t.Errorf("exporting changed the rule: %+v", r)
	}
	ids := make([]string, len(e.DeviceManifest))
	for i, m := range e.DeviceManifest {
		ids[i] = m.DeviceID
	}
	if want := []string{"12", "24", "10", "11", "8", "27", "1", "5", "13", "2"}; !slices.Equal(ids, want) {
		t.Fatalf("manifest ids %v, want %v", ids, want)
	}
	lamp := e.DeviceManifest[6]
	if lamp.Label != "Living Room Lamp" || !slices.Contains(lamp.Capabilities, "Switch") ||
		!slices.Equal(lamp.UsedIn, []string{"actions[1].deviceIds[0]", "actions[2].thenActions[0].actions[0].deviceId"}) {
		t.Errorf("lamp entry: %+v", lamp)
	}
	if b, _ := json.Marshal(e); strings.Contains(string(b), "boom") || strings.Contains(string(b), `"id"`) {
		t.Errorf("export JSON carries runtime fields: %s", b)
	}
	// Without a lookup (the hub down) the manifest still lists every device, unlabelled.
	if e := ExportRule(r, nil, "1.2.3", now); len(e.DeviceManifest) != 10 || e.DeviceManifest[0].Label != "" {
		t.Errorf("manifest without devices: %+v", e.DeviceManifest)
	}
}

// Export on one hub, import on another whose device ids differ: every reference is mapped, the
// rule is valid there and keeps its meaning.
func TestExportImportToAnotherHub(t *testing.T) {
	t.Parallel()
	ds, err := simDevices()
	if err != nil {
		t.Fatal(err)
	}
	home, away := simLookup(t), lookupOf(ds, "10") // the other hub: device 12 is 1012 there
	r := mustDecode(t, refsRule)
	if probs := Validate(&r, home); len(probs) != 0 {
		t.Fatalf("the rule is not valid at home:\n%v", Problems(probs))
	}
	b, err := json.Marshal(ExportRule(r, home, "1.2.3", time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	e, err := DecodeExport(b)
	if err != nil {
		t.Fatalf("DecodeExport of export_rule's own answer: %v", err)
	}
	mapping := map[string]string{}
	for _, m := range e.DeviceManifest {
		mapping[m.DeviceID] = "10" + m.DeviceID
	}
	got, probs := ImportRule(e, "Imported", mapping)
	if len(probs) != 0 {
		t.Fatalf("import problems: %v", probs)
	}
	if probs := Validate(&got, away); len(probs) != 0 {
		t.Fatalf("the imported rule is not valid on the other hub:\n%v", Problems(probs))
	}
	want := r.Copy()
	clearRuntime(&want)
	want.Name = "Imported"
	eachDeviceID(&want, func(_ string, id *string) {
		if *id != "" {
			*id = "10" + *id
		}
	})
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("imported rule\n%+v\nwant\n%+v", got, want)
	}
	for _, ref := range DeviceRefs(&got) {
		if !strings.HasPrefix(ref.DeviceID, "10") {
			t.Errorf("%s not mapped: %s", ref.Path, ref.DeviceID)
		}
	}
	// Unmapped, the same rule names devices the other hub does not have.
	same, _ := ImportRule(e, "", nil)
	if probs := Validate(&same, away); len(probs) != len(DeviceRefs(&same)) {
		t.Errorf("want one problem per reference on the other hub, got\n%v", Problems(probs))
	}
	if same.Name != "Refs" || !same.Enabled {
		t.Errorf("an import keeps name and enabled: %+v", same)
	}
}

func TestImportProblems(t *testing.T) {
	t.Parallel()
	e := ExportRule(mustDecode(t, refsRule), nil, "1", time.Now())
	cases := []struct {
		name    string
		version string
		mapping map[string]string
		want    []string
	}{
		{"fine", "1.0", map[string]string{"12": "99"}, nil},
		{"a later minor version", "1.3", nil, nil},
		{"another major version", "2.0", nil, []string{`exportVersion: "2.0" is not an export version hamcp reads; it reads 1.0`}},
		{"no version", "", nil, []string{`exportVersion: "" is not an export version`}},
		{"unused and empty", "1.0", map[string]string{"99": "100", "12": " ", "8": "80"}, []string{
			`deviceMapping["12"]: maps to an empty id`,
			`deviceMapping["99"]: the exported rule does not use device "99"; it uses 1, 10, 11, 12, 13, 2, 24, 27, 5, 8`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := e
			e.ExportVersion = tc.version
			_, probs := ImportRule(e, "", tc.mapping)
			if len(probs) != len(tc.want) {
				t.Fatalf("want %d problems, got %v", len(tc.want), probs)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(probs[i].String(), w) {
					t.Errorf("want %s, got %s", w, probs[i])
				}
			}
		})
	}
}

func TestDecodeExport(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, raw string
		err       string // "" for none
		check     func(t *testing.T, e Export)
	}{
		{"upstream's shape", `{"exportVersion":"1.0","exportedAt":"2026-01-01T00:00:00Z","serverVersion":"0.4.1",
			"rule":{"name":"Sunset","description":"","enabled":true,"conditionLogic":"all","triggers":[{"type":"sunset","offsetMinutes":-15}],
			"conditions":[],"actions":[{"type":"repeat","count":2,"actions":[{"type":"stop"}]}],"localVariables":{}},
			"deviceManifest":[{"deviceId":"3","usedIn":["actions"],"label":"Porch","capabilities":["Switch"]}]}`, "",
			func(t *testing.T, e Export) {
				if tr := e.Rule.Triggers[0]; tr.Type != "time" || !tr.Sunset || tr.Offset != -15 || e.Rule.Actions[0].Times != 2 {
					t.Errorf("rule not folded: %+v", e.Rule)
				}
				if len(e.DeviceManifest) != 1 || e.DeviceManifest[0].Label != "Porch" {
					t.Errorf("manifest: %+v", e.DeviceManifest)
				}
			}},
		{"a manifest that does not read is dropped", `{"exportVersion":"1.0","rule":{"name":"x"},"deviceManifest":[{"deviceId":"3","usedIn":[{"where":1}]}]}`, "",
			func(t *testing.T, e Export) {
				if e.DeviceManifest != nil || e.Rule.Name != "x" {
					t.Errorf("%+v", e)
				}
			}},
		{"no rule", `{"exportVersion":"1.0"}`, "rule: is required", nil},
		{"rule problems with their path", `{"exportVersion":"1.0","rule":{"name":"x","actions":[{"type":"stop","why":1}]}}`,
			"rule.actions[0].why: unknown field: a stop takes no other fields", nil},
		{"unknown field", `{"exportVersion":"1.0","rule":{},"signature":"x"}`, "signature: unknown field: an export has", nil},
		{"not an object", `"x"`, "an export must be a JSON object, not a string", nil},
		{"not JSON", `{`, "not valid JSON", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, err := DecodeExport([]byte(tc.raw))
			switch {
			case tc.err == "" && err != nil:
				t.Fatal(err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("want …%s…, got %v", tc.err, err)
			}
			if tc.check != nil {
				tc.check(t, e)
			}
		})
	}
}

func TestClone(t *testing.T) {
	t.Parallel()
	r := mustDecode(t, refsRule)
	cases := []struct{ name, want string }{{"", "Copy of Refs"}, {"Evening refs", "Evening refs"}}
	for _, tc := range cases {
		c := Clone(r, tc.name)
		if c.Name != tc.want || c.Enabled || c.ID != "" || c.ExecutionCount != 0 || c.LastTriggered != nil {
			t.Errorf("clone %q: %+v", tc.name, c)
		}
	}
	// The copy is deep: editing it at any depth leaves the original alone.
	c := Clone(r, "")
	eachDeviceID(&c, func(_ string, id *string) { *id = "x" })
	c.Actions[2].Condition.Value.Text = "99"
	c.Triggers[0].Condition.Status = "not present"
	before := mustDecode(t, refsRule)
	if !reflect.DeepEqual(r, before) {
		t.Fatalf("editing the clone changed the original:\n%+v", r)
	}
}

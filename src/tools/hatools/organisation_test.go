package hatools_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/dev/testkit"
)

type dtArea struct {
	AreaID   string `json:"area_id"`
	Name     string `json:"name"`
	Floor    string `json:"floor"`
	Entities int    `json:"entities"`
	Devices  int    `json:"devices"`
}

func testOrganisation(t *testing.T, e *dataEnv) {
	cs := e.session(t, nil)
	var areas struct {
		Total int      `json:"total"`
		Items []dtArea `json:"items"`
	}
	dtOK(t, cs, "ha_list_areas", nil, &areas)
	if areas.Total != 10 {
		t.Fatalf("areas: %+v", areas)
	}
	var kitchen dtArea
	for _, a := range areas.Items {
		if a.AreaID == "kitchen" {
			kitchen = a
		}
	}
	if kitchen.Floor != "Ground floor" || kitchen.Entities == 0 || kitchen.Devices == 0 {
		t.Errorf("kitchen: %+v", kitchen)
	}
	dtOK(t, cs, "ha_list_areas", map[string]any{"floor": "First floor"}, &areas)
	if areas.Total != 3 {
		t.Errorf("first floor areas: %+v", areas.Items)
	}
	dtOK(t, cs, "ha_list_areas", map[string]any{"search": "bed", "limit": 1}, &areas)
	if areas.Total != 1 || areas.Items[0].AreaID != "bedroom" {
		t.Errorf("search bed: %+v", areas)
	}

	var labels struct {
		Items []struct {
			LabelID  string `json:"label_id"`
			Entities int    `json:"entities"`
			Devices  int    `json:"devices"`
			Areas    int    `json:"areas"`
		} `json:"items"`
	}
	dtOK(t, cs, "ha_list_labels", nil, &labels)
	found := false
	for _, l := range labels.Items {
		if l.LabelID == "outdoor" {
			found = l.Entities > 0 && l.Devices > 0 && l.Areas == 1
		}
	}
	if !found {
		t.Errorf("labels: %+v", labels)
	}

	var devices struct {
		Total int `json:"total"`
		Items []struct {
			Name         string   `json:"name"`
			Manufacturer string   `json:"manufacturer"`
			Area         string   `json:"area"`
			Entities     int      `json:"entities"`
			EntityIDs    []string `json:"entity_ids"`
		} `json:"items"`
	}
	dtOK(t, cs, "ha_list_devices", map[string]any{"area": "Garage", "detail": "full"}, &devices)
	names := []string{}
	for _, d := range devices.Items {
		names = append(names, d.Name)
		if d.Area != "Garage" {
			t.Errorf("area filter let through %+v", d)
		}
		if d.Name == "Garage Door" && !slices.Contains(d.EntityIDs, "cover.garage_door") {
			t.Errorf("garage door entities: %v", d.EntityIDs)
		}
	}
	if !slices.Contains(names, "Garage Door") {
		t.Errorf("garage devices: %v", names)
	}
	devices.Items = nil // a fresh decode: json.Unmarshal merges into reused elements
	dtOK(t, cs, "ha_list_devices", map[string]any{"manufacturer": "shelly"}, &devices)
	if devices.Total < 5 || devices.Items[0].Manufacturer != "Shelly" || devices.Items[0].EntityIDs != nil {
		t.Errorf("shelly devices: %+v", devices)
	}

	// The area and label filters of ha_get_states share the registry cache.
	var states struct {
		Items []struct {
			EntityID string `json:"entity_id"`
		} `json:"items"`
	}
	dtOK(t, cs, "ha_get_states", map[string]any{"area": "Kitchen", "domain": "light"}, &states)
	var ids []string
	for _, s := range states.Items {
		ids = append(ids, s.EntityID)
	}
	if !slices.Equal(ids, []string{"light.kitchen_ceiling", "light.kitchen_island"}) {
		t.Errorf("kitchen lights: %v", ids)
	}
	dtOK(t, cs, "ha_get_states", map[string]any{"label": "security", "domain": "lock"}, &states)
	if len(states.Items) != 2 {
		t.Errorf("security locks: %+v", states.Items)
	}

	// Renaming an area through Home Assistant's registry API reaches the cache by event.
	ctx := context.Background()
	if err := e.ha.Call(ctx, "config/area_registry/update", map[string]any{"area_id": "office", "name": "Study"}, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.ha.Call(ctx, "config/area_registry/update", map[string]any{"area_id": "office", "name": "Office"}, nil)
	})
	testkit.Eventually(t, "the renamed area", func() bool {
		dtOK(t, cs, "ha_list_areas", map[string]any{"search": "study"}, &areas)
		return areas.Total == 1 && areas.Items[0].AreaID == "office"
	})

	// hass://areas and area completion.
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "hass://areas"})
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		AreaID   string   `json:"area_id"`
		Entities []string `json:"entities"`
	}
	if err := json.Unmarshal([]byte(rr.Contents[0].Text), &rows); err != nil {
		t.Fatal(err)
	}
	ok := false
	for _, r := range rows {
		if r.AreaID == "kitchen" {
			ok = slices.Contains(r.Entities, "light.kitchen_ceiling")
		}
	}
	if !ok {
		t.Errorf("hass://areas: %s", rr.Contents[0].Text)
	}
	comp, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "energy_saving_review"},
		Argument: mcp.CompleteParamsArgument{Name: "area", Value: "ki"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(comp.Completion.Values, []string{"kids_room", "kitchen"}) {
		t.Errorf("area completion: %v", comp.Completion.Values)
	}

	dtErrCases(t, cs, []dtErrCase{
		{"unknown area", "ha_list_devices", map[string]any{"area": "attic"}, "invalid_argument", "area", "garage"},
		{"bad detail", "ha_list_devices", map[string]any{"detail": "everything"}, "invalid_argument", "detail", ""},
		{"limit too big", "ha_list_areas", map[string]any{"limit": 5000}, "invalid_argument", "limit", ""},
		{"unknown label", "ha_get_states", map[string]any{"label": "sparkly"}, "invalid_argument", "label", "security"},
		{"unknown states area", "ha_get_states", map[string]any{"area": "attic"}, "invalid_argument", "area", ""},
	})
}

package hatools_test

import (
	"testing"
)

func testPeople(t *testing.T, e *dataEnv) {
	cs := e.session(t, nil)
	var people struct {
		Items []struct {
			EntityID  string   `json:"entity_id"`
			State     string   `json:"state"`
			Zone      string   `json:"zone"`
			Source    string   `json:"source"`
			Latitude  *float64 `json:"latitude"`
			Longitude *float64 `json:"longitude"`
		} `json:"items"`
	}
	dtOK(t, cs, "ha_get_person_location", nil, &people)
	if len(people.Items) != 2 {
		t.Fatalf("persons: %+v", people.Items)
	}
	for _, p := range people.Items {
		if p.Latitude != nil {
			t.Errorf("GPS without include_gps: %+v", p)
		}
		want := map[string]string{"person.alex": "zone.home", "person.sam": "zone.work"}[p.EntityID]
		if p.Zone != want || p.Source == "" {
			t.Errorf("%s: %+v", p.EntityID, p)
		}
	}
	dtOK(t, cs, "ha_get_person_location", map[string]any{"person_id": "sam", "include_gps": true}, &people)
	if len(people.Items) != 1 || people.Items[0].Latitude == nil || people.Items[0].Longitude == nil {
		t.Errorf("sam with GPS: %+v", people.Items)
	}
	dtErrCases(t, cs, []dtErrCase{
		{"unknown person", "ha_get_person_location", map[string]any{"person_id": "bob"}, "invalid_argument", "person_id", "person.alex"},
		{"bad gps flag", "ha_get_person_location", map[string]any{"include_gps": "yes"}, "invalid_argument", "include_gps", ""},
	})
}

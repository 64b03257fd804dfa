package hatools_test

import (
	"strings"
	"testing"
)

func testLogbook(t *testing.T, e *dataEnv) {
	cs := e.session(t, nil)
	var lb struct {
		Total int `json:"total"`
		Items []struct {
			When     string `json:"when"`
			EntityID string `json:"entity_id"`
			State    string `json:"state"`
			Message  string `json:"message"`
		} `json:"items"`
	}
	dtOK(t, cs, "ha_get_logbook", map[string]any{"limit": 50}, &lb)
	if lb.Total < 50 || len(lb.Items) != 50 {
		t.Fatalf("a day of logbook: total %d, %d items", lb.Total, len(lb.Items))
	}
	if lb.Items[0].When < lb.Items[49].When {
		t.Errorf("not newest first: %s … %s", lb.Items[0].When, lb.Items[49].When)
	}
	dtOK(t, cs, "ha_get_logbook", map[string]any{"entity_ids": []string{"binary_sensor.hallway_motion"}, "oldest_first": true, "limit": 20}, &lb)
	if lb.Total == 0 {
		t.Fatal("no hallway motion entries in a day of history")
	}
	for i, it := range lb.Items {
		if it.EntityID != "binary_sensor.hallway_motion" || i > 0 && it.When < lb.Items[i-1].When {
			t.Errorf("entity filter or order: %+v", it)
		}
	}
	dtOK(t, cs, "ha_get_logbook", map[string]any{"hours": 2, "search": "hallway motion", "limit": 1000}, &lb)
	for _, it := range lb.Items {
		if !strings.Contains(it.EntityID, "hallway_motion") {
			t.Errorf("search let through %+v", it)
		}
	}
	dtErrCases(t, cs, []dtErrCase{
		{"bad entity id", "ha_get_logbook", map[string]any{"entity_ids": []string{"Hallway Motion"}}, "invalid_argument", "entity_ids", ""},
		{"start after end", "ha_get_logbook", map[string]any{"start": "2030-01-02T00:00:00Z", "end": "2030-01-01T00:00:00Z"}, "invalid_argument", "start", ""},
		{"hours too long", "ha_get_logbook", map[string]any{"hours": 721}, "invalid_argument", "hours", ""},
	})
}

package hubitattools_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/testkit/tooltest"
	"github.com/hamcp/hamcp/src/integrations/hubitat/hubstore"
	"github.com/hamcp/hamcp/src/tools/hubitattools"
)

type capturedOut struct {
	CapturedStates []struct {
		StateID     string `json:"stateId"`
		DeviceCount int    `json:"deviceCount"`
		Timestamp   int64  `json:"timestamp"`
		CapturedAt  string `json:"capturedAt"`
	} `json:"capturedStates"`
	Count    int    `json:"count"`
	MaxLimit int    `json:"maxLimit"`
	Warning  string `json:"warning"`
}

// capture saves n captures the way the rule engine's capture_state action does, a minute apart.
func capture(t *testing.T, st *hubstore.Store, from, n int) {
	t.Helper()
	base := time.Date(2026, 1, 31, 18, 0, 0, 0, time.UTC)
	for i := from; i < from+n; i++ {
		devices := map[string]map[string]string{}
		for d := 0; d <= i%3; d++ {
			devices[fmt.Sprint(d+1)] = map[string]string{"switch": "on", "level": "40"}
		}
		if _, err := st.SaveCapturedState(context.Background(), hubstore.CapturedState{ID: fmt.Sprintf("scene-%02d", i), Devices: devices,
			CapturedAt: base.Add(time.Duration(i) * time.Minute)}, hubitattools.MaxCapturedStates); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCapturedStateTools(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		n       int
		warning string
	}{
		{"empty", 0, ""},
		{"far from the limit", 15, ""},
		{"within 4 of the limit", 16, "Approaching limit: 16/20 slots used. Consider cleaning up unused captures."},
		{"at the limit", 20, "At maximum capacity (20). New captures will delete the oldest entry."},
		{"a new id at the limit evicts the oldest", 23, "At maximum capacity (20). New captures will delete the oldest entry."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			st := privateStore(t)
			capture(t, st, 0, c.n)
			s := served(withStore(st)).Session(t)
			var out capturedOut
			s.OK(t, "hubitat_list_captured_states", nil, &out)
			want := min(c.n, 20)
			if out.Count != want || len(out.CapturedStates) != want || out.MaxLimit != 20 || out.Warning != c.warning {
				t.Fatalf("got count %d, max %d, warning %q", out.Count, out.MaxLimit, out.Warning)
			}
			if want == 0 {
				return
			}
			newest := out.CapturedStates[0]
			if newest.StateID != fmt.Sprintf("scene-%02d", c.n-1) || newest.DeviceCount != (c.n-1)%3+1 || newest.CapturedAt == "" ||
				newest.Timestamp != time.Date(2026, 1, 31, 18, c.n-1, 0, 0, time.UTC).UnixMilli() {
				t.Errorf("newest first: %+v", newest)
			}
			if oldest := out.CapturedStates[want-1].StateID; oldest != fmt.Sprintf("scene-%02d", c.n-want) {
				t.Errorf("oldest kept %s", oldest)
			}
		})
	}
	t.Run("delete and clear", func(t *testing.T) {
		t.Parallel()
		st := privateStore(t)
		capture(t, st, 0, 5)
		s := served(withStore(st)).Session(t)
		var del struct {
			Success   bool
			Message   string
			Remaining int
		}
		s.OK(t, "hubitat_delete_captured_state", map[string]any{"stateId": "scene-02"}, &del)
		if !del.Success || del.Remaining != 4 || del.Message != "Captured state 'scene-02' deleted" {
			t.Fatalf("delete %+v", del)
		}
		for _, e := range []tooltest.ErrCase{
			{Tool: "hubitat_delete_captured_state", Args: map[string]any{"stateId": "scene-02"}, Code: "not_found", Field: "stateId", Contains: "hubitat_list_captured_states"},
			{Tool: "hubitat_delete_captured_state", Args: map[string]any{}, Code: "invalid_argument", Field: "stateId", Contains: "required"},
			{Tool: "hubitat_delete_captured_state", Args: map[string]any{"stateId": 7}, Code: "invalid_argument", Field: "stateId"},
		} {
			e.Check(t, s)
		}
		var cl struct {
			Cleared int
			Message string
		}
		s.OK(t, "hubitat_clear_captured_states", nil, &cl)
		if cl.Cleared != 4 || cl.Message != "Cleared 4 captured state(s)" {
			t.Fatalf("clear %+v", cl)
		}
		var out capturedOut
		s.OK(t, "hubitat_list_captured_states", nil, &out)
		if out.Count != 0 || out.CapturedStates == nil {
			t.Fatalf("after clear %+v", out)
		}
	})
}

package homeassistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

// probeRuns numbers TestWSTraces' runs: the simulated Home Assistant is shared by the package's
// tests, so a run under -count=N must not read the traces of the runs before it.
var probeRuns atomic.Int64

func TestWSTraces(t *testing.T) {
	t.Parallel()
	c := connectedSimClient(t, false)
	ctx := context.Background()
	probe := fmt.Sprintf("trace_client_probe_%d", probeRuns.Add(1))
	script := map[string]any{"alias": "Trace client probe", "sequence": []any{
		map[string]any{"variables": map[string]any{"n": 2}},
		map[string]any{"repeat": map[string]any{"count": 2, "sequence": []any{map[string]any{"event": "hamcp_probe"}}}},
		map[string]any{"action": "light.make_coffee"},
	}}
	if err := c.SaveConfigItem(ctx, KindScript, probe, script); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallServiceWS(ctx, "script", probe, nil, ServiceTarget{}, false); err == nil {
		t.Fatal("the run should fail at light.make_coffee")
	}
	runs, err := c.Traces(ctx, "script", probe)
	if err != nil || len(runs) != 1 {
		t.Fatalf("Traces: %v %+v", err, runs)
	}
	r := runs[0]
	if r.State != "stopped" || r.ScriptExecution != "error" || r.Error == "" || r.LastStep != "sequence/2" || r.Timestamp.Finish == "" {
		t.Fatalf("summary %+v", r)
	}
	tr, err := c.Trace(ctx, "script", probe, r.RunID)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, p := range tr.Steps {
		paths = append(paths, p.Path)
	}
	want := []string{"sequence/0", "sequence/1", "sequence/1/repeat/sequence/0", "sequence/2"}
	if len(paths) != len(want) {
		t.Fatalf("paths %v, want %v", paths, want)
	}
	for i := range want {
		if paths[i] != want[i] {
			t.Fatalf("paths %v, want %v (the dict's order)", paths, want)
		}
	}
	if got := string(tr.Steps[0].Steps[0].ChangedVariables["n"]); got != "2" {
		t.Errorf("changed n = %s", got)
	}
	if len(tr.Steps[2].Steps) != 2 || tr.Steps[3].Steps[0].Error == "" || tr.Context.ID == "" || !json.Valid(tr.Config) {
		t.Errorf("trace %+v", tr)
	}

	for _, tc := range []struct {
		name              string
		domain, item, run string
		code              string // "-" = refused before sending
	}{
		{"unknown run", "script", probe, "0123", "not_found"},
		{"bad domain", "scene", "x", "1", "-"},
		{"no run", "script", "x", "", "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Trace(ctx, tc.domain, tc.item, tc.run)
			var api *APIError
			if tc.code == "-" {
				if err == nil || errors.As(err, &api) {
					t.Fatalf("err = %v, want a client-side refusal", err)
				}
				return
			}
			if !errors.As(err, &api) || api.Code != tc.code {
				t.Fatalf("err = %v, want %s", err, tc.code)
			}
		})
	}
	// a non-admin token may not read traces
	u := connectedSimClient(t, true)
	var api *APIError
	if _, err := u.Traces(ctx, "automation", ""); !errors.As(err, &api) || api.Code != "unauthorized" {
		t.Fatalf("non-admin: %v", err)
	}
}

func FuzzTracePaths(f *testing.F) {
	f.Add([]byte(`{"trigger":[{"path":"trigger","timestamp":"t"}],"action/0":[{"path":"action/0","result":{"params":{}}}]}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"a":[],"b":null}`))
	f.Add([]byte(`[1]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var p TracePaths
		if err := json.Unmarshal(b, &p); err != nil {
			return
		}
		for _, e := range p {
			for _, s := range e.Steps {
				_ = s.Path
			}
		}
	})
}

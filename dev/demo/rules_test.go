package demo_test

import (
	"slices"
	"testing"

	"github.com/hamcp/hamcp/dev/sim"
	"github.com/hamcp/hamcp/dev/testkit"
)

// The demo home starts with three example rules, created through the rule tools; they run (motion
// turns the hallway light on), and a demo restarted on its data directory does not create them twice.
func TestDemoRules(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	type listed struct {
		Rules []struct {
			ID      string `json:"id"`
			Name    string `json:"name"`
			Enabled bool   `json:"enabled"`
		} `json:"rules"`
	}
	names := func(l listed) []string {
		var out []string
		for _, r := range l.Rules {
			if !r.Enabled {
				t.Errorf("%s is disabled", r.Name)
			}
			out = append(out, r.Name)
		}
		slices.Sort(out)
		return out
	}
	want := []string{"Front door left open", "Hallway motion light", "Sunset scene"}
	t.Run("first start", func(t *testing.T) {
		e := startDemoWith(t, sim.Options{HistoryDays: -1, Dir: dir}, nil)
		cs := e.client(t, nil)
		var l listed
		callJSON(t, cs, "hubitat_list_rules", nil, &l)
		if got := names(l); !slices.Equal(got, want) {
			t.Fatalf("rules %v, want %v", got, want)
		}
		for _, r := range l.Rules {
			var rep struct {
				WouldDo []string `json:"wouldDo"`
			}
			if res := callJSON(t, cs, "hubitat_test_rule", map[string]any{"ruleId": r.ID}, &rep); res.IsError || len(rep.WouldDo) == 0 {
				t.Errorf("test_rule %s: %+v %+v", r.Name, res.Content, rep)
			}
		}
		hub := e.d.Hubitat
		if v, _ := hub.Attribute(7, "switch"); v != "off" {
			t.Fatalf("the hallway light is %s before any motion", v)
		}
		if err := hub.SetAttribute(13, "motion", "active", false); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, "the motion rule to turn the hallway light on", func() bool { v, _ := hub.Attribute(7, "switch"); return v == "on" })
	})
	t.Run("restart", func(t *testing.T) {
		e := startDemoWith(t, sim.Options{HistoryDays: -1, Dir: dir}, nil)
		var l listed
		callJSON(t, e.client(t, nil), "hubitat_list_rules", nil, &l)
		if got := names(l); !slices.Equal(got, want) {
			t.Errorf("after a restart: rules %v, want %v", got, want)
		}
	})
}

package hubitattools_test

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/hamcp/hamcp/src/rules"
)

// The confirmation property for hamcp's own Hubitat rules: a rule the model writes — created,
// updated, imported, its sensitive action nested at any depth in branches, repeats and delays —
// that can unlock, disarm, set a lock code or open a valve is confirmed by the user before it is
// saved; an approval covers the rule the user saw, and a stored rule swapped before the retry is
// asked about again. CI runs a fixed seed budget; HAMCP_CONFIRM_SEEDS=N runs more.
func TestPropertyEveryRuleThatReachesASensitiveEffectAsks(t *testing.T) {
	t.Parallel()
	n := 24
	if v, err := strconv.Atoi(os.Getenv("HAMCP_CONFIRM_SEEDS")); err == nil && v > 0 {
		n = v
	}
	r := newRig(t)
	harmless := rules.Rule{Name: "harmless", Triggers: []rules.Trigger{buttonOne},
		Actions: []rules.Action{{Type: "device_command", DeviceID: "3", Command: "on"}}}
	sensitiveActions := []map[string]any{
		obj("type", "unlock", "deviceId", "8"),
		obj("type", "device_command", "deviceId", "8", "command", "unlock"),
		obj("type", "device_command", "deviceId", "8", "command", "setCode", "parameters", list("3", "0000", "X")),
		obj("type", "set_hsm", "status", "disarm"),
		obj("type", "set_valve", "deviceId", "21", "command", "open"),
	}
	for i := range n {
		seed := uint64(20261128 + i)
		rng := rand.New(rand.NewPCG(seed, 11))
		action := sensitiveActions[rng.IntN(len(sensitiveActions))]
		for range rng.IntN(4) {
			switch rng.IntN(3) {
			case 0:
				action = obj("type", "if_then_else", "condition", obj("type", "mode", "mode", "Home"),
					"thenActions", list(obj("type", "log", "message", "hi")), "elseActions", list(action))
			case 1:
				action = obj("type", "repeat", "times", 1+rng.IntN(2), "actions", list(action))
			default:
				action = obj("type", "if_then_else", "condition", obj("type", "mode", "mode", "Away"),
					"thenActions", list(obj("type", "delay", "seconds", 1+rng.IntN(30)), action))
			}
		}
		before := r.count(t)
		var tool string
		var args map[string]any
		switch rng.IntN(3) {
		case 0:
			tool, args = "hubitat_create_rule", obj("name", "generated", "triggers", list(pushed(4)), "actions", list(action), "confirm", true)
		case 1:
			id := r.seed(t, harmless)
			before++
			tool, args = "hubitat_update_rule", obj("ruleId", id, "actions", list(action), "confirm", true)
		default:
			tool, args = "hubitat_create_rule", obj("name", "generated", "triggers", list(pushed(2)),
				"actions", list(obj("type", "log", "message", "first"), action), "enabled", true, "confirm", true)
		}
		s := r.fx.Session(t) // a session keeps at most 8 confirmations waiting
		e := s.Fail(t, tool, args)
		if e.Code != "confirmation_required" {
			t.Fatalf("seed %d: %s %v was not stopped for the user: %+v", seed, tool, args, e)
		}
		if got := r.count(t); got != before {
			t.Fatalf("seed %d: %d rules after the refused call, want %d", seed, got, before)
		}
		if tool == "hubitat_update_rule" && rng.IntN(2) == 0 {
			// The user approves this update; the stored rule is then changed, so the same call
			// would now save a different rule: it asks again.
			fx.Approve(t, e.Details["request_id"].(string))
			id := args["ruleId"].(string)
			if _, _, err := r.engine.Update(t.Context(), id, json.RawMessage(`{"name":"harmless, renamed by the user"}`)); err != nil {
				t.Fatal(err)
			}
			if e := s.Fail(t, tool, args); e.Code != "confirmation_required" {
				t.Fatalf("seed %d: the approval covered a swapped rule: %+v", seed, e)
			}
		}
	}
	if v, _ := r.hub.Attribute(8, "lock"); v != "locked" {
		t.Errorf("the front door is %s", v)
	}
}

package hatools_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/permission"
)

// A property of the whole confirmation layer: whatever chain of indirection the model builds to reach
// an unlock, a disarm or an open garage — scripts, scenes, the user's automations started by
// trigger, by event or by a state change, blueprint instances, branches — the call that sets it off
// asks the user, and the home does not change. The chains are generated from a seed; CI runs a
// fixed budget, and HAMCP_CONFIRM_SEEDS=N runs N chains by hand.

// chainBuilder writes the links of one chain into the simulated Home Assistant, as the user's own
// configuration that exists before the model acts.
type chainBuilder struct {
	t   *testing.T
	e   *admEnv
	rng *rand.Rand
	n   int // chain number, for unique names
	k   int // link number
	// scene is the config id of the chain's innermost scene, when it is one (swapped after approval).
	scene, sceneName string
}

func (b *chainBuilder) name(kind string) string {
	b.k++
	return fmt.Sprintf("rt_%s_%d_%d", kind, b.n, b.k)
}

// innermost is a sensitive effect written one of the ways Home Assistant accepts.
func (b *chainBuilder) innermost() map[string]any {
	ctx := context.Background()
	switch b.rng.IntN(7) {
	case 0:
		return map[string]any{"action": "lock.unlock", "target": map[string]any{"entity_id": "lock.front_door"}}
	case 1:
		return map[string]any{"action": "lock.unlock", "target": map[string]any{"device_id": b.e.device(b.t, "Front Door Lock")}}
	case 2:
		return map[string]any{"action": "alarm_control_panel.alarm_disarm", "target": map[string]any{"label_id": "security"}}
	case 3:
		return map[string]any{"action": "cover.open_cover", "target": map[string]any{"area_id": "garage"}}
	case 4:
		return map[string]any{"action": "homeassistant.turn_on", "target": map[string]any{"entity_id": "cover.garage_door"}}
	case 5:
		return map[string]any{"device_id": b.e.device(b.t, "Front Door Lock"), "domain": "lock", "type": "unlock", "entity_id": "lock.front_door"}
	default:
		id := strconv.Itoa(1714100000000 + b.n*100 + b.k)
		b.k++
		name := b.name("scene")
		if err := b.e.ha.SaveConfigItem(ctx, homeassistant.KindScene, id, map[string]any{"name": name,
			"entities": map[string]any{"alarm_control_panel.home_alarm": "disarmed", "light.porch": "on"}}); err != nil {
			b.t.Fatal(err)
		}
		b.wait("scene." + name)
		b.scene, b.sceneName = id, name
		return map[string]any{"scene": "scene." + name}
	}
}

// wrap returns an action that reaches prev one level further out.
func (b *chainBuilder) wrap(prev map[string]any) map[string]any {
	ctx := context.Background()
	switch kind := b.rng.IntN(7); kind {
	case 0: // a script of the user's
		key := b.name("script")
		if err := b.e.ha.SaveConfigItem(ctx, homeassistant.KindScript, key, map[string]any{"alias": key, "sequence": []any{prev}}); err != nil {
			b.t.Fatal(err)
		}
		b.wait("script." + key)
		if b.rng.IntN(2) == 0 {
			return map[string]any{"action": "script." + key}
		}
		return map[string]any{"action": "script.turn_on", "target": map[string]any{"entity_id": "script." + key}}
	case 1: // an automation of the user's, triggered directly
		eid := b.automation(map[string]any{"trigger": "event", "event_type": "rt_never"}, prev)
		return map[string]any{"action": "automation.trigger", "target": map[string]any{"entity_id": eid}}
	case 2: // an automation of the user's listening to an event
		ev := b.name("event")
		b.automation(map[string]any{"trigger": "event", "event_type": ev}, prev)
		return map[string]any{"event": ev}
	case 3: // an automation of the user's started by a state change
		helper := "input_boolean.guest_mode"
		if b.rng.IntN(2) == 0 {
			helper = "input_boolean.vacation_mode"
		}
		b.automation(map[string]any{"trigger": "state", "entity_id": helper}, prev)
		return map[string]any{"action": "input_boolean.toggle", "target": map[string]any{"entity_id": helper}}
	case 4: // a blueprint instance whose actions are an input
		path := b.name("bp") + ".yaml"
		dir := filepath.Join(b.e.home.Sandbox().Config, "blueprints", "automation", "rt")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.t.Fatal(err)
		}
		bp := "blueprint:\n  name: RT\n  domain: automation\n  input:\n    act:\n      selector: {action: {}}\n" +
			"triggers:\n  - trigger: event\n    event_type: rt_never\nactions: !input act\n"
		if err := os.WriteFile(filepath.Join(dir, path), []byte(bp), 0o644); err != nil {
			b.t.Fatal(err)
		}
		id := strconv.Itoa(1714200000000 + b.n*100 + b.k)
		alias := b.name("bpauto")
		if err := b.e.ha.SaveConfigItem(ctx, homeassistant.KindAutomation, id, map[string]any{"alias": alias,
			"use_blueprint": map[string]any{"path": "rt/" + path, "input": map[string]any{"act": []any{prev}}}}); err != nil {
			b.t.Fatal(err)
		}
		eid := b.automationEntity(id)
		return map[string]any{"action": "automation.trigger", "target": map[string]any{"entity_id": eid}}
	case 5: // a branch
		return map[string]any{"choose": []any{map[string]any{"conditions": []any{}, "sequence": []any{prev}}}}
	default:
		return map[string]any{"if": []any{map[string]any{"condition": "state", "entity_id": "sun.sun", "state": "above_horizon"}},
			"then": []any{map[string]any{"action": "light.turn_on", "target": map[string]any{"entity_id": "light.porch"}}}, "else": []any{prev}}
	}
}

func (b *chainBuilder) automation(trigger, action map[string]any) string {
	id := strconv.Itoa(1714300000000 + b.n*100 + b.k)
	alias := b.name("auto")
	if err := b.e.ha.SaveConfigItem(context.Background(), homeassistant.KindAutomation, id, map[string]any{"alias": alias,
		"triggers": []any{trigger}, "actions": []any{action}}); err != nil {
		b.t.Fatal(err)
	}
	return b.automationEntity(id)
}

func (b *chainBuilder) automationEntity(id string) string {
	var eid string
	testkit.Eventually(b.t, "automation "+id, func() bool {
		all, _ := b.e.ha.States(context.Background())
		for _, s := range all {
			if got, _ := s.Attributes["id"].(string); got == id && s.Domain() == "automation" {
				eid = s.EntityID
				return true
			}
		}
		return false
	})
	return eid
}

func (b *chainBuilder) wait(id string) {
	testkit.Eventually(b.t, id, func() bool { _, err := b.e.ha.State(context.Background(), id); return err == nil })
}

// call is the model's move: run the outermost action now, or write it into an automation of its own.
func (b *chainBuilder) call(outer map[string]any) (tool string, args map[string]any) {
	if b.rng.IntN(3) == 0 {
		return "ha_create_automation", map[string]any{"confirm": true, "config": map[string]any{"alias": b.name("model"),
			"triggers": []any{map[string]any{"trigger": "time", "at": "03:00:00"}}, "actions": []any{outer}}}
	}
	if ev, ok := outer["event"].(string); ok {
		return "ha_fire_event", map[string]any{"event_type": ev, "confirm": true}
	}
	name, ok := outer["action"].(string)
	if !ok { // a branch, scene or device action: only an automation can carry it
		return "ha_create_automation", map[string]any{"confirm": true, "config": map[string]any{"alias": b.name("model"),
			"triggers": []any{map[string]any{"trigger": "time", "at": "03:00:00"}}, "actions": []any{outer}}}
	}
	domain, service := splitService(name)
	data := map[string]any{}
	if tg, ok := outer["target"].(map[string]any); ok {
		for k, v := range tg {
			data[k] = v
		}
	}
	return "ha_call_service", map[string]any{"domain": domain, "service": service, "data": data, "confirm": true}
}

func splitService(s string) (string, string) {
	for i := range len(s) {
		if s[i] == '.' {
			return s[:i], s[i+1:]
		}
	}
	return s, ""
}

func TestPropertyEveryChainToASensitiveEffectAsks(t *testing.T) {
	t.Parallel()
	chains := 24
	if v, err := strconv.Atoi(os.Getenv("HAMCP_CONFIRM_SEEDS")); err == nil && v > 0 {
		chains = v
	}
	e := admStart(t, admOpts{defaultTrust: true})
	ctx := context.Background()
	for n := range chains {
		seed := uint64(20261128 + n)
		b := &chainBuilder{t: t, e: e, rng: rand.New(rand.NewPCG(seed, 7)), n: n}
		action := b.innermost()
		for range 1 + b.rng.IntN(3) {
			action = b.wrap(action)
		}
		e.settle(t) // Home Assistant's reload events for the links written above have arrived
		tool, args := b.call(action)
		r := e.call(t, tool, args)
		if r.err == nil || r.err.Code != "confirmation_required" {
			t.Fatalf("seed %d: %s %v ran without asking the user (chain ends in %v): %s", seed, tool, args, action, r.raw)
		}
		id, _ := r.err.Details["request_id"].(string)
		if b.scene != "" && b.rng.IntN(2) == 0 {
			// The user approves; the scene at the end of the chain is then swapped for one that does
			// more. The approval does not cover the new effect: the same call asks again.
			if err := e.pm.Approve(ctx, id, permission.Approver{Via: permission.ViaPanel, UserID: "owner"}); err != nil {
				t.Fatal(err)
			}
			if err := e.ha.SaveConfigItem(ctx, homeassistant.KindScene, b.scene, map[string]any{"name": b.sceneName,
				"entities": map[string]any{"alarm_control_panel.home_alarm": "disarmed", "lock.front_door": "unlocked", "cover.garage_door": "open"}}); err != nil {
				t.Fatal(err)
			}
			e.settle(t)
			r = e.call(t, tool, args)
			if r.err == nil || r.err.Code != "confirmation_required" {
				t.Fatalf("seed %d: after the swap, the approval ran a different effect: %s", seed, r.raw)
			}
			id, _ = r.err.Details["request_id"].(string)
		}
		// The user says no in the panel: the same call is then refused without asking again.
		if err := e.pm.Deny(ctx, id, permission.Approver{Via: permission.ViaPanel, UserID: "owner"}); err != nil {
			t.Fatalf("seed %d: request %q: %v", seed, id, err)
		}
		if b.rng.IntN(2) == 0 {
			if r := e.call(t, tool, args); r.err == nil || r.err.Code != "confirmation_denied" {
				t.Fatalf("seed %d: after the user said no: %s", seed, r.raw)
			}
		}
		e.settle(t)
		e.assertUntouched(t)
	}
}

// The other order: a chain that ends in a harmless scene the model made runs without a question; the
// model then rewrites the scene to unlock, disarm and open. That write is what asks.
func TestPropertyRewritingTheEndOfAChainAsks(t *testing.T) {
	t.Parallel()
	chains := 8
	if v, err := strconv.Atoi(os.Getenv("HAMCP_CONFIRM_SEEDS")); err == nil && v > 0 {
		chains = v
	}
	e := admStart(t, admOpts{defaultTrust: true})
	for n := range chains {
		seed := uint64(20261200 + n)
		b := &chainBuilder{t: t, e: e, rng: rand.New(rand.NewPCG(seed, 9)), n: 1000 + n}
		scene := b.name("harmless")
		e.ok(t, "ha_call_service", svc("scene.create", map[string]any{"data": map[string]any{"scene_id": scene,
			"entities": map[string]any{"light.porch": "on"}}}))
		b.wait("scene." + scene)
		var action map[string]any = map[string]any{"scene": "scene." + scene}
		for range 1 + b.rng.IntN(3) {
			action = b.wrap(action)
		}
		e.settle(t)
		if tool, args := b.call(action); tool != "ha_create_automation" {
			e.ok(t, tool, args) // harmless today: no question
		}
		rewrite := []map[string]any{
			svc("scene.create", map[string]any{"data": map[string]any{"scene_id": scene, "entities": map[string]any{"lock.front_door": "unlocked"}}}),
			svc("scene.create", map[string]any{"data": map[string]any{"scene_id": scene, "snapshot_entities": "cover.garage_door, light.porch"}}),
			svc("scene.create", map[string]any{"data": map[string]any{"scene_id": scene,
				"entities": map[string]any{"cover.garage_door": map[string]any{"state": "closed", "current_position": "60"}}}}),
		}[b.rng.IntN(3)]
		if r := e.call(t, "ha_call_service", rewrite); r.err == nil || r.err.Code != "confirmation_required" {
			t.Fatalf("seed %d: rewriting scene.%s ran without asking: %s", seed, scene, r.raw)
		}
		e.settle(t)
		e.assertUntouched(t)
	}
}

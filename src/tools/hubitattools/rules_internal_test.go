package hubitattools

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/integrations/hubitat/hubstore"
	"github.com/hamcp/hamcp/src/rules"
	"github.com/hamcp/hamcp/src/store"
	"github.com/hamcp/hamcp/src/toolkit"
)

// guardRig is a rule engine without a hub (rules that name no device), on a store of its own.
func guardRig(t *testing.T) (Deps, *rules.Engine) {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "rules.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	hs, err := hubstore.Open(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	e := rules.New(rules.Options{Store: hs})
	t.Cleanup(func() { e.Close() })
	return Deps{Store: hs, Rules: e}, e
}

var hourly = []rules.Trigger{{Type: "periodic", Interval: 1, Unit: "hours"}}

// A call checked against one rule saves that rule, not one changed between the check (what the
// user was asked, what the permission was decided on) and the save: an attacker racing an update
// against an enable gets the rule that was checked enabled, never its own.
func TestGuardSavesWhatItChecked(t *testing.T) {
	t.Parallel()
	d, e := guardRig(t)
	ctx := context.Background()
	r, probs, err := e.Create(ctx, rules.Rule{Name: "quiet", Triggers: hourly, Actions: []rules.Action{{Type: "log", Message: "tick"}}})
	if err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	g := enableGuard(d)
	c := &toolkit.Call{Tool: "hubitat_enable_rule"}
	ask, err := g.confirm().Check(ctx, c, ruleID{r.ID})
	if err != nil || len(ask.Classes) > 0 {
		t.Fatalf("a rule that logs: %+v %v", ask, err)
	}
	// Between the check and the save, the rule becomes one that disarms the alarm and posts.
	patch, _ := json.Marshal(map[string]any{"actions": []any{
		map[string]any{"type": "set_hsm", "status": "disarm"},
		map[string]any{"type": "http_request", "url": "http://127.0.0.1:9/x"},
	}})
	if _, probs, err := e.Update(ctx, r.ID, patch); err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	if _, err := g.handler(ctx, c, ruleID{r.ID}); err != nil {
		t.Fatal(err)
	}
	got, err := e.Get(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Enabled || len(got.Actions) != 1 || got.Actions[0].Type != "log" {
		t.Errorf("enabled %v with actions %+v, want the checked rule that logs", got.Enabled, got.Actions)
	}
}

// The permission is decided (toolkit.Condition) a moment before the confirmation check reads the
// rule: when only the check's rule has an http_request, nobody granted it, and nothing is saved.
func TestGuardRefusesAnUngrantedRequest(t *testing.T) {
	t.Parallel()
	d, e := guardRig(t)
	ctx := context.Background()
	r, probs, err := e.Create(ctx, rules.Rule{Name: "posts", Triggers: hourly,
		Actions: []rules.Action{{Type: "http_request", URL: "http://127.0.0.1:9/x", Method: "GET"}}})
	if err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	g := enableGuard(d)
	for _, cat := range []toolkit.Category{"", toolkit.Command} {
		c := &toolkit.Call{Tool: "hubitat_enable_rule", Category: cat}
		if _, err := g.confirm().Check(ctx, c, ruleID{r.ID}); err != nil {
			t.Fatal(err)
		}
		_, err := g.handler(ctx, c, ruleID{r.ID})
		got, _ := e.Get(ctx, r.ID)
		if cat == "" && (toolkit.AsError(err).Code != "conflict" || got.Enabled) {
			t.Errorf("not granted: %v, enabled %v", err, got.Enabled)
		}
		if cat == toolkit.Command && (err != nil || !got.Enabled) {
			t.Errorf("granted: %v, enabled %v", err, got.Enabled)
		}
	}
	// A handler never runs on a rule nobody checked.
	if _, err := g.handler(ctx, &toolkit.Call{}, ruleID{r.ID}); toolkit.AsError(err).Code != "internal_error" {
		t.Errorf("unchecked: %v", err)
	}
}

// fuzzDevices is a hub with one device of each kind the guard knows: a lock (8), a garage door
// (5), a gate (6), a valve (21) and a plain switch (1).
func fuzzDevices(id string) (hubitat.Device, bool) {
	caps := map[string][]string{"8": {"Lock", "LockCodes"}, "5": {"GarageDoorControl"}, "6": {"DoorControl"},
		"21": {"Valve"}, "1": {"Switch"}}[id]
	if caps == nil {
		return hubitat.Device{}, false
	}
	return hubitat.Device{ID: id, Label: "device " + id, Capabilities: caps}, true
}

// FuzzGuardRoundTrip: the guard checks one rule and the engine stores it through JSON (a whole
// rule over the stored one, replaceRule) and decodes it again. Whatever the model sends, the rule
// that comes back must need exactly what the checked one needed: the same confirmation classes
// and the same permission. A field the round trip loses or gains would let a rule be saved
// different from what the user was asked about.
func FuzzGuardRoundTrip(f *testing.F) {
	for _, seed := range []string{
		`{"name":"a","triggers":[{"type":"periodic","interval":5}],"actions":[{"type":"unlock","deviceId":"8"}]}`,
		`{"name":"a","enabled":false,"actions":[{"type":"if_then_else","condition":{"type":"mode","mode":"Home"},"thenActions":[],"elseActions":[{"type":"repeat","times":2,"actions":[{"type":"set_hsm","status":"disarm"}]}]}]}`,
		`{"name":"a","actions":[{"type":"device_command","deviceId":"5","command":"open"},{"type":"set_mode","mode":"Away"}]}`,
		`{"name":"a","actions":[{"type":"set_valve","deviceId":"21","command":"open"},{"type":"http_request","url":"http://x/","method":"POST","body":"%mode%"}]}`,
		`{"name":"a","actions":[{"type":"set_shade","deviceId":"6","position":40},{"type":"device_command","deviceId":"8","command":"%c%"}]}`,
		`{"name":"a","actions":[{"type":"device_command","deviceId":"8","command":"setCode","parameters":["1","0000","x"]}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		r1, err := rules.Decode(raw)
		if err != nil {
			return
		}
		m, err := editableFields(r1)
		if err != nil {
			t.Fatal(err)
		}
		again, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := rules.Decode(again)
		if err != nil {
			t.Fatalf("a decoded rule does not decode again: %v\n%s", err, again)
		}
		a1, a2 := ruleAsk(&r1, fuzzDevices, "Save"), ruleAsk(&r2, fuzzDevices, "Save")
		if !slices.Equal(a1.Classes, a2.Classes) || a1.Question != a2.Question {
			t.Errorf("asks %+v, after the round trip %+v", a1, a2)
		}
		if hasHTTP(&r1) != hasHTTP(&r2) {
			t.Errorf("http_request %v, after the round trip %v", hasHTTP(&r1), hasHTTP(&r2))
		}
		// And the guard follows every action: each unlock, disarm or mode change anywhere asks.
		rules.WalkActions(&r1, func(path string, a *rules.Action) {
			if (a.Type == "unlock" && a.DeviceID == "8" || a.Type == "set_hsm" && a.Status == "disarm" || a.Type == "set_mode") && len(a1.Classes) == 0 {
				t.Errorf("%s (%s) asks nothing", path, a.Type)
			}
		})
	})
}

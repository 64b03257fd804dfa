package rules

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestDryRunNeverWrites runs every action type through DryRunEnv: the underlying Env sees reads
// only, and the journal says what would have happened, in order.
func TestDryRunNeverWrites(t *testing.T) {
	t.Parallel()
	w := newWorld()
	env, j := DryRunEnv(w)
	r := &Rule{ID: "r1", Actions: everyAction()}
	rc := Context{RuleID: "r1", Trigger: "manual", At: w.Now()}
	out := Run(context.Background(), env, r, r.Actions, rc, 0)
	if out.Err != nil || !out.Stopped || out.Delay != nil {
		t.Fatalf("Outcome = %+v (a dry run notes a delay and goes on)", out)
	}
	if got := w.Writes(); len(got) != 0 {
		t.Fatalf("the dry run reached the world: %q", got)
	}
	if r.LocalVariables != nil {
		t.Fatalf("the dry run changed the rule's local variables: %v", r.LocalVariables)
	}
	want := []string{
		`would log (debug) "comment: all of them"`,
		"would send on() to Kitchen Light (1)",
		"would send off() to Kitchen Light (1)", // toggle reads the (unchanged) switch: on
		"would send on() to Dryer Plug (3)",
		"would send setLevel(20) to Kitchen Light (1)",
		"would send setHue(10) to Kitchen Light (1)",
		"would send setSaturation(90) to Kitchen Light (1)",
		"would send setColorTemperature(3000) to Kitchen Light (1)",
		"would send lock() to Front Door Lock (5)",
		"would send unlock() to Front Door Lock (5)",
		`would set rule variable "v" to "1"`,
		`would set local variable "l" to "2"`,
		`would set the mode to "Away"`,
		"would set HSM to armAway",
		`would wait 30s (delay "d"), then go on`,
		`would log (info) "away"`, // the if sees the mode the dry run set
		"would cancel all of the rule's pending delays",
		`would set local variable "n" to "1"`,
		`would set local variable "n" to "2"`, // the second iteration reads the first one's value
		`would capture the state of Kitchen Light (1) as "default"`,
		`would restore the captured state "default"`,
		`would send the notification "hello" to Ann's Phone (4)`,
		"would send setHeatingSetpoint(66) to Hall Thermostat (6)",
		"would send GET https://example.test/",
		`would send speak("hi") to Kitchen Speaker (9)`,
		"would send open() to Dryer Plug (3)",
		`would send setSpeed("low") to Dryer Plug (3)`,
		"would send close() to Dryer Plug (3)",
	}
	if got := j.Lines(); !slices.Equal(got, want) {
		t.Fatalf("journal:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestDryRunEnvWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		name string
		do   func(e Env) error
		line string
	}{
		{"command with arguments", func(e Env) error { return e.SendCommand(ctx, "1", "setLevel", "50", "2") }, "would send setLevel(50, 2) to Kitchen Light (1)"},
		{"command to an unreadable device", func(e Env) error { return e.SendCommand(ctx, "42", "on") }, "would send on() to device 42"},
		{"mode", func(e Env) error { return e.SetMode(ctx, "Away") }, `would set the mode to "Away"`},
		{"hsm", func(e Env) error { return e.SetHSM(ctx, "disarm") }, "would set HSM to disarm"},
		{"rule variable", func(e Env) error { return e.SetRuleVariable(ctx, "a", "b") }, `would set rule variable "a" to "b"`},
		{"hub variable", func(e Env) error { return e.SetHubVariable(ctx, "a", "b") }, `would set hub variable "a" to "b"`},
		{"local variable", func(e Env) error { return e.SetLocalVariable(ctx, &Rule{}, "a", "b") }, `would set local variable "a" to "b"`},
		{"capture", func(e Env) error { return e.CaptureState(ctx, "s", []string{"1", "5"}) },
			`would capture the state of Kitchen Light (1), Front Door Lock (5) as "s"`},
		{"restore", func(e Env) error { return e.RestoreState(ctx, "s") }, `would restore the captured state "s"`},
		{"cancel one", func(e Env) error { return e.CancelDelayed(ctx, &Rule{}, "x") }, `would cancel the pending delay "x"`},
		{"notify", func(e Env) error { return e.Notify(ctx, "4", "hi") }, `would send the notification "hi" to Ann's Phone (4)`},
		{"http with a body", func(e Env) error {
			status, err := e.HTTPRequest(ctx, "POST", "https://example.test/", "application/json", `{"a":1}`)
			if status != 0 {
				t.Errorf("a dry-run request answered %d", status)
			}
			return err
		}, "would send POST https://example.test/ (7 bytes of application/json)"},
		{"http with a password", func(e Env) error {
			_, err := e.HTTPRequest(ctx, "GET", "https://me:hunter2@example.test/x", "", "")
			return err
		}, "would send GET https://me:xxxxx@example.test/x"},
		{"log", func(e Env) error { e.Log(ctx, &Rule{}, "warn", "careful"); return nil }, `would log (warn) "careful"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld()
			env, j := DryRunEnv(w)
			if err := tc.do(env); err != nil {
				t.Fatal(err)
			}
			if got := j.Lines(); len(got) != 1 || got[0] != tc.line {
				t.Fatalf("journal = %q, want %q", got, tc.line)
			}
			if len(w.Writes()) != 0 {
				t.Fatalf("reached the world: %q", w.Writes())
			}
		})
	}
}

// TestDryRunReadsItsOwnWrites: later reads in a dry run see its writes, scope by scope.
func TestDryRunReadsItsOwnWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld()
	env, _ := DryRunEnv(w)
	r := &Rule{ID: "r"}
	_ = env.SetMode(ctx, "Away")
	_ = env.SetHSM(ctx, "armAway")
	_ = env.SetLocalVariable(ctx, r, "x", "local")
	_ = env.SetHubVariable(ctx, "h", "hub")
	if m, _ := env.Mode(ctx); m != "Away" {
		t.Errorf("mode = %q", m)
	}
	if h, _ := env.HSM(ctx); h != "armedAway" {
		t.Errorf("HSM = %q, want the status arming leads to", h)
	}
	if v, ok, _ := env.Variable(ctx, r, "x"); !ok || v != "local" {
		t.Errorf("local x = %q, %v", v, ok)
	}
	if v, ok, _ := env.Variable(ctx, noLocals, "x"); ok {
		t.Errorf("a hub-only read saw the local x = %q", v)
	}
	if v, ok, _ := env.Variable(ctx, noLocals, "h"); !ok || v != "hub" {
		t.Errorf("hub h = %q, %v", v, ok)
	}
	if v, ok, _ := env.Variable(ctx, r, "houseState"); !ok || v != "occupied" {
		t.Errorf("unwritten variables come from the Env: %q, %v", v, ok)
	}
	if m, _ := w.Mode(ctx); m != "Night" || len(w.Writes()) != 0 {
		t.Errorf("the world changed: mode %q, writes %q", m, w.Writes())
	}
}

package rules

// Additions to the contract of rules.md (RB), for the engine:
//   - Env gained SetLocalVariable and CancelDelayed (model.go): a dry run must not touch the
//     rule's local variables, and the engine owns the pending delays.
//   - Pending gained Within: a delay inside an if_then_else or a repeat suspends the run like a
//     top-level one. The engine stores the whole Pending (it is JSON) and resumes with
//     Continue(ctx, env, r, rc, p), which finishes the enclosing blocks and then the top-level
//     list from Index+1. For a top-level delay (Within empty) Continue is Run(…, p.Index+1).

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Outcome is how a run of an action list ended.
type Outcome struct {
	Stopped bool     // a stop action ended the run (at any depth)
	Delay   *Pending // a delay suspended the run: the engine persists it and calls Continue when due
	Err     error    // the action that failed (an *ActionError naming its path); later actions did not run
	Ran     int      // actions completed, at every depth (an if or a repeat counts once, plus its children)
}

// Pending is a run suspended by a delay action.
//
// Delays are honoured at every depth (upstream skips them inside if/repeat). A run never holds a
// goroutine or the rule's run queue while it waits, and a restart does not lose or repeat
// anything: the position of the delay is data. Index is the top-level action that holds it (the
// delay itself when Within is empty); Within walks down from there, one Frame per nested block,
// the last Frame's Index being the delay. Continue resumes right after the delay, finishes the
// rest of each enclosing block (the remaining iterations of a repeat included, the if's
// condition not evaluated again) and goes on at top-level Index+1. Nothing before the delay runs
// twice, and nothing after it is skipped.
type Pending struct {
	Index   int     `json:"index"`
	Seconds int     `json:"seconds"`
	DelayID string  `json:"delayId"`
	Within  []Frame `json:"within,omitempty"`
}

// Frame is one step down into a nested block: which list of the enclosing action (then, else or
// the repeat's actions, in which iteration) and the index inside it. Type is the enclosing
// action's type, checked when resuming so that a rule edited meanwhile is not resumed in the
// wrong place.
type Frame struct {
	Type      string `json:"type"`
	Branch    string `json:"branch"` // thenActions, elseActions, actions
	Iteration int    `json:"iteration,omitempty"`
	Index     int    `json:"index"`
}

// ActionError is a failed action and where it is in the rule.
type ActionError struct {
	Path string // "actions[2].thenActions[0]"
	Type string
	Err  error
}

func (e *ActionError) Error() string { return fmt.Sprintf("%s (%s): %v", e.Path, e.Type, e.Err) }
func (e *ActionError) Unwrap() error { return e.Err }

// Limits of actions (upstream v0.4.3's clamps); validation refuses what is outside them, and a
// run clamps again for rules stored before a limit changed.
const (
	MaxRepeat       = 100
	MinDelaySeconds = 1
	MaxDelaySeconds = 24 * 60 * 60
	maxRunDepth     = 32 // validation allows MaxNesting; this only stops a runaway
)

// Run runs actions from index from: in order, each through env, until the list ends, a stop, a
// delay (Outcome.Delay) or a failure (Outcome.Err, later actions not run). The list is
// r.Actions for a rule's run; its paths in errors are "actions[i]…".
func Run(ctx context.Context, env Env, r *Rule, actions []Action, rc Context, from int) Outcome {
	x := &runner{ctx: ctx, env: env, r: r, rc: rc}
	if d, ok := env.(rehearsal); ok {
		x.journal = d.journal()
	}
	res := x.list(actions, "actions", max(from, 0), 0)
	return Outcome{Stopped: res.stopped, Delay: res.delay, Err: res.err, Ran: x.ran}
}

// Continue resumes the run that p suspended (see Pending) in the rule's actions.
func Continue(ctx context.Context, env Env, r *Rule, rc Context, p Pending) Outcome {
	x := &runner{ctx: ctx, env: env, r: r, rc: rc}
	if d, ok := env.(rehearsal); ok {
		x.journal = d.journal()
	}
	res := x.resume(r.Actions, "actions", p, 0)
	return Outcome{Stopped: res.stopped, Delay: res.delay, Err: res.err, Ran: x.ran}
}

type runner struct {
	ctx     context.Context
	env     Env
	r       *Rule
	rc      Context
	ran     int
	journal *Journal // a dry run: delays are noted and not waited for
}

// result is how one list ended; delay is relative to that list.
type result struct {
	stopped bool
	delay   *Pending
	err     error
}

func (res result) done() bool { return res.stopped || res.delay != nil || res.err != nil }

func (x *runner) list(acts []Action, path string, from, depth int) result {
	for i := from; i < len(acts); i++ {
		res := x.one(acts[i], fmt.Sprintf("%s[%d]", path, i), i, depth)
		if res.done() {
			return res
		}
	}
	return result{}
}

// resume goes on after the delay at p inside acts.
func (x *runner) resume(acts []Action, path string, p Pending, depth int) result {
	if len(p.Within) == 0 {
		return x.list(acts, path, p.Index+1, depth)
	}
	if p.Index < 0 || p.Index >= len(acts) || acts[p.Index].Type != p.Within[0].Type {
		return result{err: &ActionError{Path: fmt.Sprintf("%s[%d]", path, p.Index), Type: p.Within[0].Type,
			Err: errors.New("the rule changed while a delay was pending; the rest of the run is dropped")}}
	}
	a, f := acts[p.Index], p.Within[0]
	here := fmt.Sprintf("%s[%d]", path, p.Index)
	inner := Pending{Index: f.Index, Seconds: p.Seconds, DelayID: p.DelayID, Within: p.Within[1:]}
	var res result
	iter := f.Iteration
	switch {
	case a.Type == "if_then_else" && f.Branch == "thenActions":
		res = x.resume(a.ThenActions, here+".thenActions", inner, depth+1)
	case a.Type == "if_then_else" && f.Branch == "elseActions":
		res = x.resume(a.ElseActions, here+".elseActions", inner, depth+1)
	case a.Type == "repeat" && f.Branch == "actions":
		res = x.resume(a.Actions, here+".actions", inner, depth+1)
		for it := f.Iteration + 1; !res.done() && it < repeatTimes(a); it++ {
			res, iter = x.list(a.Actions, here+".actions", 0, depth+1), it
		}
	default:
		return result{err: &ActionError{Path: here, Type: a.Type, Err: fmt.Errorf("cannot resume inside %q", f.Branch)}}
	}
	if res.done() {
		return within(res, p.Index, a.Type, f.Branch, iter)
	}
	x.ran++ // the enclosing block is complete now
	return x.list(acts, path, p.Index+1, depth)
}

// within frames a nested list's delay as one inside the action at index.
func within(res result, index int, typ, branch string, iteration int) result {
	if res.delay == nil {
		return res
	}
	d := *res.delay
	res.delay = &Pending{Index: index, Seconds: d.Seconds, DelayID: d.DelayID,
		Within: append([]Frame{{Type: typ, Branch: branch, Iteration: iteration, Index: d.Index}}, d.Within...)}
	return res
}

func repeatTimes(a Action) int { return min(a.Times, MaxRepeat) }

// one runs one action; index is its place in its list (for the delay's position).
func (x *runner) one(a Action, path string, index, depth int) result {
	if err := x.ctx.Err(); err != nil {
		return result{err: &ActionError{Path: path, Type: a.Type, Err: err}}
	}
	if depth > maxRunDepth {
		return result{err: &ActionError{Path: path, Type: a.Type, Err: errors.New("actions nested too deep")}}
	}
	fail := func(err error) result { return result{err: &ActionError{Path: path, Type: a.Type, Err: err}} }
	switch a.Type {
	case "stop":
		x.ran++
		return result{stopped: true}
	case "delay":
		secs := min(max(a.Seconds, MinDelaySeconds), MaxDelaySeconds)
		id := a.DelayID
		if id == "" {
			id = fmt.Sprintf("delay-%d", x.env.Now().UnixMilli())
		}
		x.ran++
		if x.journal != nil {
			x.journal.add("would wait %s (delay %q), then go on", time.Duration(secs)*time.Second, id)
			return result{}
		}
		return result{delay: &Pending{Index: index, Seconds: secs, DelayID: id}}
	case "if_then_else":
		if a.Condition == nil {
			return fail(errors.New("condition is required"))
		}
		// An if whose condition cannot be read takes neither branch and fails the run: the else
		// branch means "known false", and acting on an unknown state is what fail-closed forbids.
		ok, err := Evaluate(x.ctx, x.env, x.r, *a.Condition, x.rc)
		if err != nil {
			return fail(fmt.Errorf("condition: %w", err))
		}
		branch, list := "thenActions", a.ThenActions
		if !ok {
			branch, list = "elseActions", a.ElseActions
		}
		res := x.list(list, path+"."+branch, 0, depth+1)
		if res.done() {
			return within(res, index, a.Type, branch, 0)
		}
		x.ran++
		return result{}
	case "repeat":
		if a.Times < 1 {
			return fail(fmt.Errorf("times must be 1–%d", MaxRepeat))
		}
		if a.Times > MaxRepeat {
			x.env.Log(x.ctx, x.r, "warn", fmt.Sprintf("%s: repeat %d times is capped at %d", path, a.Times, MaxRepeat))
		}
		for it := range repeatTimes(a) {
			res := x.list(a.Actions, path+".actions", 0, depth+1)
			if res.done() {
				return within(res, index, a.Type, "actions", it)
			}
		}
		x.ran++
		return result{}
	}
	if err := x.act(a); err != nil {
		return fail(err)
	}
	x.ran++
	return result{}
}

// act runs one action without nested actions.
func (x *runner) act(a Action) error {
	ctx, env := x.ctx, x.env
	expand := func(s string) string { return Expand(ctx, env, x.r, x.rc, s) }
	send := func(id, cmd string, args ...string) error {
		if id == "" {
			return errors.New("deviceId is required")
		}
		return env.SendCommand(ctx, id, cmd, args...)
	}
	switch a.Type {
	case "device_command":
		if a.Command == "" {
			return errors.New("command is required")
		}
		if a.DeviceID == "" {
			return errors.New("deviceId is required")
		}
		d, err := env.Device(ctx, a.DeviceID)
		if err != nil {
			return fmt.Errorf("reading device %s: %w", a.DeviceID, err)
		}
		if d.Detailed && !d.HasCommand(a.Command) { // a list entry (not Detailed) does not say
			return fmt.Errorf("%s has no command %q", deviceName(d, a.DeviceID), a.Command)
		}
		args := make([]string, len(a.Parameters))
		for i, p := range a.Parameters {
			args[i] = expand(p)
		}
		return send(a.DeviceID, a.Command, args...)
	case "toggle_device":
		if a.DeviceID == "" {
			return errors.New("deviceId is required")
		}
		d, err := env.Device(ctx, a.DeviceID)
		if err != nil {
			return fmt.Errorf("reading device %s: %w", a.DeviceID, err)
		}
		sw, ok := d.Attribute("switch")
		if !ok {
			return fmt.Errorf("%s has no switch to toggle", deviceName(d, a.DeviceID))
		}
		if sw.Value.String() == "on" {
			return send(a.DeviceID, "off")
		}
		return send(a.DeviceID, "on")
	case "activate_scene":
		return send(a.SceneDeviceID, "on")
	case "set_level":
		lvl, ok := a.Level.Float()
		if !ok {
			return errors.New("level must be a number 0–100")
		}
		args := []string{num(lvl)}
		if a.Duration != nil {
			args = append(args, num(*a.Duration))
		}
		return send(a.DeviceID, "setLevel", args...)
	case "set_color":
		if a.Hue == nil || a.Saturation == nil {
			return errors.New("hue and saturation are required")
		}
		// setColor takes a COLOR_MAP, and Maker API splits a command's arguments at commas with no
		// escape, so the map cannot travel in one argument: hue, saturation, then level, as
		// restore_state does.
		if err := send(a.DeviceID, "setHue", num(*a.Hue)); err != nil {
			return err
		}
		if err := send(a.DeviceID, "setSaturation", num(*a.Saturation)); err != nil {
			return err
		}
		if lvl, ok := a.Level.Float(); ok {
			return send(a.DeviceID, "setLevel", num(lvl))
		}
		return nil
	case "set_color_temperature":
		if a.Temperature == nil {
			return errors.New("temperature is required")
		}
		args := []string{num(*a.Temperature)}
		if lvl, ok := a.Level.Float(); ok {
			args = append(args, num(lvl))
		}
		return send(a.DeviceID, "setColorTemperature", args...)
	case "lock", "unlock":
		return send(a.DeviceID, a.Type)
	case "set_variable", "set_local_variable":
		if a.VariableName == "" {
			return errors.New("variableName is required")
		}
		if a.Value == nil {
			return errors.New("value is required")
		}
		v := expand(a.Value.Text)
		if a.Type == "set_local_variable" {
			return env.SetLocalVariable(ctx, x.r, a.VariableName, v)
		}
		return env.SetRuleVariable(ctx, a.VariableName, v)
	case "set_mode":
		if a.Mode == "" {
			return errors.New("mode is required")
		}
		return env.SetMode(ctx, a.Mode)
	case "set_hsm":
		if a.Status == "" {
			return errors.New("status is required (armAway, armHome, armNight, disarm)")
		}
		return env.SetHSM(ctx, a.Status)
	case "cancel_delayed":
		if a.DelayID == "" {
			return errors.New(`delayId is required ("all" or a delay's id)`)
		}
		return env.CancelDelayed(ctx, x.r, a.DelayID)
	case "log":
		level := strings.ToLower(a.Level.String())
		if level != "warn" && level != "debug" {
			level = "info"
		}
		env.Log(ctx, x.r, level, expand(a.Message))
		return nil
	case "comment":
		env.Log(ctx, x.r, "debug", "comment: "+a.Text)
		return nil
	case "capture_state":
		ids := a.DeviceIDs
		if len(ids) == 0 && a.DeviceID != "" {
			ids = []string{a.DeviceID}
		}
		if len(ids) == 0 {
			return errors.New("deviceIds is required")
		}
		return env.CaptureState(ctx, stateID(a), ids)
	case "restore_state":
		return env.RestoreState(ctx, stateID(a))
	case "send_notification":
		if a.DeviceID == "" {
			return errors.New("deviceId is required")
		}
		return env.Notify(ctx, a.DeviceID, spoken(expand(a.Message)))
	case "speak":
		args := []string{spoken(expand(a.Message))}
		if a.Volume != nil {
			args = append(args, num(*a.Volume))
		}
		return send(a.DeviceID, "speak", args...)
	case "set_thermostat":
		return x.thermostat(a)
	case "http_request":
		return x.httpRequest(a)
	case "set_valve":
		if a.Command != "open" && a.Command != "close" {
			return fmt.Errorf("command %q: use open or close", a.Command)
		}
		return send(a.DeviceID, a.Command)
	case "set_fan_speed":
		if a.Speed == "" {
			return errors.New("speed is required")
		}
		return send(a.DeviceID, "setSpeed", a.Speed)
	case "set_shade":
		if a.Position != nil {
			return send(a.DeviceID, "setPosition", num(*a.Position))
		}
		if a.Command != "open" && a.Command != "close" {
			return fmt.Errorf("command %q: use open or close, or give a position 0–100", a.Command)
		}
		return send(a.DeviceID, a.Command)
	case "variable_math":
		return x.variableMath(a)
	case "":
		return errors.New("the action has no type")
	default:
		return fmt.Errorf("unknown action type %q", a.Type)
	}
}

func stateID(a Action) string {
	if a.StateID == "" {
		return "default"
	}
	return a.StateID
}

// thermostat sends the mode, then the setpoints, then the fan mode.
func (x *runner) thermostat(a Action) error {
	if a.DeviceID == "" {
		return errors.New("deviceId is required")
	}
	type step struct{ cmd, arg string }
	var steps []step
	if a.ThermostatMode != "" {
		steps = append(steps, step{"setThermostatMode", a.ThermostatMode})
	}
	if a.HeatingSetpoint != nil {
		steps = append(steps, step{"setHeatingSetpoint", num(*a.HeatingSetpoint)})
	}
	if a.CoolingSetpoint != nil {
		steps = append(steps, step{"setCoolingSetpoint", num(*a.CoolingSetpoint)})
	}
	if a.FanMode != "" {
		steps = append(steps, step{"setThermostatFanMode", a.FanMode})
	}
	if len(steps) == 0 {
		return errors.New("give at least one of thermostatMode, heatingSetpoint, coolingSetpoint, fanMode")
	}
	for _, s := range steps {
		if err := x.env.SendCommand(x.ctx, a.DeviceID, s.cmd, s.arg); err != nil {
			return fmt.Errorf("%s: %w", s.cmd, err)
		}
	}
	return nil
}

// httpRequest sends the request; an answer of 400 or more fails the action.
func (x *runner) httpRequest(a Action) error {
	u, err := url.Parse(a.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("url %q: only http and https URLs with a host", a.URL)
	}
	method := strings.ToUpper(a.Method)
	if method == "" {
		method = "GET"
	}
	if method != "GET" && method != "POST" {
		return fmt.Errorf("method %q: use GET or POST", a.Method)
	}
	body := ""
	if method == "POST" {
		body = Expand(x.ctx, x.env, x.r, x.rc, a.Body)
	}
	status, err := x.env.HTTPRequest(x.ctx, method, a.URL, a.ContentType, body)
	if err != nil {
		return err
	}
	if status >= 400 {
		return fmt.Errorf("%s %s answered HTTP %d", method, u.Redacted(), status)
	}
	return nil
}

// variableMath applies operation to a number variable. Scope local (the default) reads and
// writes the rule's local variable only; global the hub's variable (read without the rule's
// locals, so a local of the same name does not shadow it). A variable not set yet counts as 0. Dividing
// (or modulo) by zero leaves the value as it was and logs a warning, as upstream does.
func (x *runner) variableMath(a Action) error {
	if a.VariableName == "" {
		return errors.New("variableName is required")
	}
	if a.Operand == nil {
		return errors.New("operand is required")
	}
	operand, ok := number(Expand(x.ctx, x.env, x.r, x.rc, a.Operand.Text))
	if !ok {
		return fmt.Errorf("operand %q is not a number", a.Operand.Text)
	}
	var global bool
	switch strings.ToLower(a.Scope) {
	case "", "local":
	case "global", "hub":
		global = true
	default:
		return fmt.Errorf("scope %q: use local or global", a.Scope)
	}
	cur := 0.0
	if a.Operation != "set" {
		var text string
		var found bool
		if global {
			var err error
			if text, found, err = x.env.Variable(x.ctx, noLocals, a.VariableName); err != nil {
				return fmt.Errorf("reading variable %q: %w", a.VariableName, err)
			}
		} else {
			text, found = x.local(a.VariableName)
		}
		if found && strings.TrimSpace(text) != "" {
			if cur, ok = number(text); !ok {
				return fmt.Errorf("variable %q holds %q, which is not a number", a.VariableName, text)
			}
		}
	}
	var next float64
	switch a.Operation {
	case "add":
		next = cur + operand
	case "subtract":
		next = cur - operand
	case "multiply":
		next = cur * operand
	case "divide", "modulo":
		if operand == 0 {
			x.env.Log(x.ctx, x.r, "warn", fmt.Sprintf("variable_math: %s of %q by zero; the value stays %s", a.Operation, a.VariableName, num(cur)))
			return nil
		}
		if a.Operation == "divide" {
			next = cur / operand
		} else {
			next = math.Mod(cur, operand)
		}
	case "set":
		next = operand
	default:
		return fmt.Errorf("operation %q: use add, subtract, multiply, divide, modulo or set", a.Operation)
	}
	if math.IsNaN(next) || math.IsInf(next, 0) {
		return fmt.Errorf("variable %q: %s gives no finite number", a.VariableName, a.Operation)
	}
	if global {
		return x.env.SetHubVariable(x.ctx, a.VariableName, num(next))
	}
	return x.env.SetLocalVariable(x.ctx, x.r, a.VariableName, num(next))
}

// local reads one of the rule's local variables only (not a hub or rule-engine variable of the
// same name): a dry run's own writes first, then the rule's.
func (x *runner) local(name string) (string, bool) {
	if d, ok := x.env.(*dryEnv); ok {
		if v, ok := d.written("local:" + name); ok {
			return v, true
		}
	}
	v, ok := x.r.LocalVariables[name]
	if !ok {
		return "", false
	}
	return fmt.Sprint(v), true
}

// noLocals is the rule variable_math passes to Env.Variable to read a hub (global) variable: it
// has no local variables to shadow the hub's. Never modified.
var noLocals = &Rule{}

// num writes a number the way the hub reads it: 50, 2.5, -3.
func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// spoken makes a message one Maker API argument: the hub splits a command's arguments at commas
// and has no escape, so "Good morning, Sam" would arrive as two arguments and fail. A comma
// (written in the rule or brought by a placeholder) is sent as a space; a spoken or notified
// message reads the same without it.
func spoken(message string) string {
	return commaFree.Replace(message)
}

var commaFree = strings.NewReplacer(", ", " ", ",", " ")

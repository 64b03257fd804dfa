package hubitattools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hamcp/hamcp/src/rules"
	"github.com/hamcp/hamcp/src/sensitive"
	"github.com/hamcp/hamcp/src/toolkit"
)

// The guard of every tool that writes a rule. The model writes rules that run later without it,
// so saving one is held to what running its actions directly would need (confirmation
// follows indirection): an action at any depth that unlocks a lock, disarms the Safety Monitor,
// opens a garage door or gate (or a valve, or sounds a siren) needs the same confirmation as the
// command itself, and an http_request action, which reaches the network from hamcp's position,
// needs the command permission, as a Home Assistant automation calling rest_command does.
//
// The check runs before the handler, on the rule the call would save; the handler then saves
// exactly that rule (whole, over the stored one for an update), never one re-read later, so a
// concurrent change cannot slip past what the user was asked.
type ruleGuard[In any] struct {
	d      Deps
	verb   string // Create, Change, Enable, Import, Copy: the question's first word
	prefix string // where the rule's paths are in the arguments
	// build makes the rule the call would save (an error stops the call; errRestore says it
	// restores from the trash instead).
	build  func(ctx context.Context, e *rules.Engine, in In) (rules.Rule, error)
	commit func(ctx context.Context, e *rules.Engine, in In, r rules.Rule) (ruleSaved, []rules.Problem, error)
	// restore, for import_rule, brings a rule back from the trash (disabled: nothing to guard).
	restore func(ctx context.Context, e *rules.Engine, in In) (ruleSaved, error)
	// exempt, when set, says a call changes nothing the guard looks at (a rename): the rule it
	// saves is the stored one, which was guarded when it was written. exemptWhen says which, for
	// DOCS.md.
	exempt     func(in In) bool
	exemptWhen string
	// enables says the tool can turn a stored rule back on: when hamcp stopped that rule as a
	// runaway, the user is asked, with the reason, whatever the rule does.
	enables bool

	checked *checkedRules
}

var errRestore = errors.New("restore from the trash")

// checkedRules hands the rule a call's Check built to the same call's handler.
type checkedRules struct {
	mu sync.Mutex
	m  map[*toolkit.Call]checkedRule
}

type checkedRule struct {
	rule  rules.Rule
	probs []rules.Problem
	err   error
	at    time.Time
}

func (cr *checkedRules) put(c *toolkit.Call, v checkedRule) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	// A call refused after its check (declined, no grant) never reaches its handler: drop its
	// entry once it is surely over.
	for k, old := range cr.m {
		if v.at.Sub(old.at) > 10*time.Minute {
			delete(cr.m, k)
		}
	}
	cr.m[c] = v
}

func (cr *checkedRules) take(c *toolkit.Call) (checkedRule, bool) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	v, ok := cr.m[c]
	delete(cr.m, c)
	return v, ok
}

func (g *ruleGuard[In]) init() {
	if g.checked == nil {
		g.checked = &checkedRules{m: map[*toolkit.Call]checkedRule{}}
	}
}

// candidate builds and validates the rule a call would save.
func (g *ruleGuard[In]) candidate(ctx context.Context, in In) checkedRule {
	e, err := g.d.engine()
	if err != nil {
		return checkedRule{err: err}
	}
	r, err := g.build(ctx, e, in)
	if err != nil {
		return checkedRule{err: err}
	}
	return checkedRule{rule: r, probs: rules.Validate(&r, e.Devices())}
}

func (g *ruleGuard[In]) confirm() *toolkit.Confirm[In] {
	g.init()
	when := "the rule's actions, at any depth, unlock a lock or change its codes, disarm the Safety Monitor, open a garage " +
		"door, gate or valve, sound a siren, or set the mode" + g.exemptWhen
	if g.enables {
		when += "; and enabling a rule hamcp stopped as a runaway (too many runs or commands, or a loop of rules)"
	}
	return &toolkit.Confirm[In]{
		When: when,
		Check: func(ctx context.Context, c *toolkit.Call, in In) (toolkit.Ask, error) {
			v := g.candidate(ctx, in)
			v.at = time.Now()
			g.checked.put(c, v)
			if v.err != nil || len(v.probs) > 0 || g.exempt != nil && g.exempt(in) {
				return toolkit.Ask{}, nil // the handler refuses it, saying why; or nothing to ask
			}
			e, _ := g.d.engine()
			ask := ruleAsk(&v.rule, e.Devices(), g.verb)
			if g.enables && v.rule.Enabled && v.rule.ID != "" {
				if cur, err := e.Get(ctx, v.rule.ID); err == nil && !cur.Enabled && cur.DisabledReason != "" {
					ask = stoppedAsk(ask, cur)
				}
			}
			if len(ask.Classes) > 0 {
				// The yes covers the rule the user was shown: a stored rule swapped between the
				// question and the retry makes a different rule, which is asked about again.
				r := v.rule // what it does, not its counters and timestamps
				b, _ := json.Marshal([]any{r.ID, r.Name, r.Enabled, r.ConditionLogic, r.Triggers, r.Conditions, r.Actions, r.LocalVariables})
				sum := sha256.Sum256(b)
				ask.Digest = hex.EncodeToString(sum[:16])
			}
			return ask, nil
		},
	}
}

func (g *ruleGuard[In]) grant() *toolkit.Condition[In] {
	return &toolkit.Condition[In]{
		Category: toolkit.Command, When: "the rule has an http_request action (at any depth)" + g.exemptWhen,
		Applies: func(in In) bool {
			// Applies has no context of its own; the rule it reads is hamcp's store and the
			// hub's device cache, both local.
			if g.exempt != nil && g.exempt(in) {
				return false
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			v := g.candidate(ctx, in)
			return v.err == nil && hasHTTP(&v.rule)
		},
	}
}

func (g *ruleGuard[In]) handler(ctx context.Context, c *toolkit.Call, in In) (ruleSaved, error) {
	v, ok := g.checked.take(c)
	if !ok {
		return ruleSaved{}, &toolkit.Error{Code: "internal_error", Message: "the rule was not checked before saving; nothing was saved"}
	}
	e, err := g.d.engine()
	if err != nil {
		return ruleSaved{}, err
	}
	switch {
	case errors.Is(v.err, errRestore) && g.restore != nil:
		return g.restore(ctx, e, in)
	case v.err != nil:
		return ruleSaved{}, v.err
	case len(v.probs) > 0:
		return ruleSaved{}, problemsError(g.prefix, v.probs)
	}
	// The permission was decided on a rule read a moment before the check's: if only this one
	// has an http_request, the rule changed in between and nobody granted it.
	if hasHTTP(&v.rule) && c.Category != toolkit.Command && (g.exempt == nil || !g.exempt(in)) {
		return ruleSaved{}, &toolkit.Error{Code: "conflict", Message: "the rule changed while this call was checked; nothing was saved",
			Hint: "call again"}
	}
	out, probs, err := g.commit(ctx, e, in, v.rule)
	if len(probs) > 0 {
		return ruleSaved{}, problemsError(g.prefix, probs)
	}
	if err != nil {
		return ruleSaved{}, ruleError(err, v.rule.ID)
	}
	return out, nil
}

// stoppedAsk adds to ask that enabling r starts again a rule hamcp stopped, and why: a model
// must not undo the stop behind the user's back, and the user decides knowing the reason.
func stoppedAsk(ask toolkit.Ask, r rules.Rule) toolkit.Ask {
	when := ""
	if r.DisabledAt != nil {
		when = " on " + r.DisabledAt.UTC().Format("2006-01-02 15:04 UTC")
	}
	// The reason comes first and the name, which the model chose, last and clipped.
	name := r.Name
	if len([]rune(name)) > 60 {
		name = string([]rune(name)[:60]) + "…"
	}
	q := fmt.Sprintf("Enable again a Hubitat rule that hamcp stopped%s? It was %s. (The rule is named %q.)", when,
		strings.TrimPrefix(r.DisabledReason, "stopped by hamcp: "), name)
	if !slices.Contains(ask.Classes, string(sensitive.Change)) {
		ask.Classes = append(ask.Classes, string(sensitive.Change))
	}
	if ask.Question != "" {
		q += " " + ask.Question
	}
	ask.Question = q
	return ask
}

func hasHTTP(r *rules.Rule) bool {
	found := false
	rules.WalkActions(r, func(_ string, a *rules.Action) { found = found || a.Type == "http_request" })
	return found
}

// ruleAsk is what saving r needs the user to confirm: for each action, the classes running it
// directly would need (commandAsk's table for device commands, hubitat_set_hsm's for the alarm),
// and setting the mode, which the hub's Safety Monitor and automations may follow (arming or
// disarming by mode is a common HSM setting).
func ruleAsk(r *rules.Rule, devices rules.DeviceLookup, verb string) toolkit.Ask {
	var hits []sensitive.Hit
	device := func(id string, command string) {
		dev, ok := devices(id)
		if !ok {
			return // validation refused it already
		}
		cmds := []string{command}
		if strings.Contains(command, "%") { // a placeholder: whatever it becomes, assume the worst
			cmds = sensitiveCommands()
		}
		for _, cmd := range cmds {
			hits = append(hits, commandHits(dev, cmd)...)
		}
	}
	rules.WalkActions(r, func(_ string, a *rules.Action) {
		switch a.Type {
		case "device_command":
			device(a.DeviceID, a.Command)
		case "unlock":
			device(a.DeviceID, "unlock")
		case "set_valve", "set_shade":
			if a.Command != "close" {
				device(a.DeviceID, "open")
			}
		case "set_hsm":
			svc, ok := hsmServices[a.Status]
			if !ok {
				svc = "alarm_disarm" // not a value it takes (validation says so); assume the worst
			}
			ent := sensitive.Entity{ID: "alarm_control_panel.hubitat_hsm", Name: "Hubitat Safety Monitor"}
			hits = append(hits, sensitive.Service("alarm_control_panel", svc, []sensitive.Entity{ent}, true)...)
		case "set_mode":
			hits = append(hits, modeHit(a.Mode))
		}
	})
	if len(hits) == 0 {
		return toolkit.Ask{}
	}
	var whats []string
	for _, h := range hits {
		if !slices.Contains(whats, h.What) {
			whats = append(whats, h.What)
		}
	}
	when := "whenever it runs, without asking again"
	if !r.Enabled {
		when = "whenever it runs once it is enabled"
	}
	// What the rule does comes first and the name, which the model chose, last and clipped: a
	// name cannot talk the user out of reading what they approve.
	name := r.Name
	if len([]rune(name)) > 60 {
		name = string([]rune(name)[:60]) + "…"
	}
	q := fmt.Sprintf("%s a Hubitat rule that will %s, %s? (The rule is named %q.)", verb, strings.Join(whats, "; "), when, name)
	return askFor(hits, q)
}

// sensitiveCommands are the commands commandAsk asks about, on any device.
func sensitiveCommands() []string {
	var out []string
	for _, r := range commandRules {
		if !slices.Contains(out, r.command) {
			out = append(out, r.command)
		}
	}
	return append(out, lockCodeCommands...)
}

package hubitat

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Native rules are child apps of the hub's rule engines. Upstream drives Rule Machine through
// hubitat.helper.RMUtils (getRuleList, sendAction runRuleAct/pauseRule/resumeRule/
// setRuleBooleanTrue), a class only code running on the hub can call; off the hub hamcp drives
// the same rules through their pages, as the hub's UI does: the app tree for the list and the
// "(Paused)" state, and the page buttons for the rest (upstream's own fallback when RMUtils is
// load-limited: pausRule through /installedapp/btn). A private boolean has no button: it goes
// through a rule's Local End Point the user gave (SetRuleBoolean).

// ruleEngines maps the type of an engine's parent app to the engine's name. The parent type
// names are the ones upstream's _appTypeRegistry finds in /hub2/appsList; "Simple Automation
// Rules" is assumed (upstream does not drive it).
var ruleEngines = map[string]string{
	"Rule Machine":            "Rule Machine",
	"Basic Rules":             "Basic Rules",
	"Simple Automation Rules": "Simple Automation Rules",
	"Room Lighting":           "Room Lighting",
	"Visual Rules Builder":    "Visual Rules Builder",
}

// RuleEngine is the native rule engine app a belongs to, or "" when it is not a rule.
func RuleEngine(a InstalledApp) string {
	if e := ruleEngines[a.ParentType]; e != "" {
		return e
	}
	if strings.HasPrefix(a.Type, "Rule-") {
		return "Rule Machine"
	}
	return ""
}

// ErrUnsupported is an action the rule's engine does not offer.
var ErrUnsupported = errors.New("not offered by this rule's engine")

// ErrNotARule is an app id that is not a native rule.
var ErrNotARule = errors.New("not a native rule")

// NativeRule finds one native rule in the app tree.
func (c *Client) NativeRule(ctx context.Context, id int64) (InstalledApp, error) {
	apps, err := c.InstalledApps(ctx)
	if err != nil {
		return InstalledApp{}, err
	}
	i := slices.IndexFunc(apps, func(a InstalledApp) bool { return a.ID == id })
	switch {
	case i < 0:
		return InstalledApp{}, fmt.Errorf("hubitat app %d: %w", id, ErrAppNotFound)
	case RuleEngine(apps[i]) == "":
		return apps[i], fmt.Errorf("hubitat app %d (%s, a %s): %w", id, clean(apps[i].Name), clean(apps[i].Type), ErrNotARule)
	}
	return apps[i], nil
}

// RunActionsTitle is the title of the button that runs a rule's actions on its main page.
const RunActionsTitle = "Run Actions"

// RunRuleActions clicks the rule's Run Actions button (RMUtils' runRuleAct: the actions run,
// the conditions and triggers are skipped). The button is found by its title on the rule's
// page, so a rule type whose page has none says so instead of clicking a guess.
func (c *Client) RunRuleActions(ctx context.Context, id int64) error {
	page, err := c.AppPage(ctx, id, "")
	if err != nil {
		return err
	}
	name := findButton(page, RunActionsTitle)
	if name == "" {
		return fmt.Errorf("hubitat rule %d (%s) has no %q button on its page (%w)", id, clean(page.Label), RunActionsTitle, ErrUnsupported)
	}
	return c.ClickAppButton(ctx, id, name)
}

func findButton(page AppConfig, title string) string {
	for _, s := range page.Sections {
		for _, in := range s.Inputs {
			if in.Type == "button" && strings.EqualFold(strings.TrimSpace(in.Title), title) {
				return in.Name
			}
		}
	}
	return ""
}

// PauseButton is Rule Machine's pause toggle: titled Pause on a running rule, Resume on a
// paused one (upstream, _rmSendActionErrorNote).
const PauseButton = "pausRule"

// SetRulePaused pauses or resumes a Rule Machine rule. pausRule is a toggle, so the state is
// read first and the button clicked only when it differs; the state is read again after.
// changed says whether the button was clicked.
func (c *Client) SetRulePaused(ctx context.Context, id int64, pause bool) (changed bool, err error) {
	r, err := c.NativeRule(ctx, id)
	if err != nil {
		return false, err
	}
	if RuleEngine(r) != "Rule Machine" {
		return false, fmt.Errorf("hubitat rule %d (%s) is a %s rule, and only Rule Machine rules pause (%w); disable the app instead", id, clean(r.Name), RuleEngine(r), ErrUnsupported)
	}
	if r.Paused == pause {
		return false, nil
	}
	if err := c.ClickAppButton(ctx, id, PauseButton); err != nil {
		return false, err
	}
	after, err := c.NativeRule(ctx, id)
	if err != nil {
		return true, fmt.Errorf("%w: the pause button was clicked but reading rule %d back failed (%v)", ErrNotConfirmed, id, err)
	}
	if after.Paused != pause {
		return true, fmt.Errorf("%w: the pause button was clicked but rule %d still reads paused=%v (a disabled rule ignores it; a rule whose name ends in \"(Paused)\" reads as paused)", ErrNotConfirmed, id, after.Paused)
	}
	return true, nil
}

// ErrNoRuleEndpoint is a private-boolean change without hubitat_rm_endpoint.
var ErrNoRuleEndpoint = errors.New("hubitat_rm_endpoint is not set")

// ErrRuleEndpointRefused is hubitat_rm_endpoint answered with 401 or 404: the rule or its token
// is gone (the rule deleted, its token renewed). Nothing was done.
var ErrRuleEndpointRefused = errors.New("the hub refused hubitat_rm_endpoint: the rule or its access token no longer exists; copy the Local End Point URL again from the rule's trigger")

// HasRuleEndpoint says whether hubitat_rm_endpoint is set, so private booleans can be set.
func (c *Client) HasRuleEndpoint() bool { return c.ruleApp != "" }

// SetRuleBoolean sets a Rule Machine rule's private boolean. RMUtils, upstream's way, runs only on
// the hub; off the hub Rule Machine takes the same verb through any rule's Local End Point:
// /apps/api/<endpoint rule>/setRuleBooleanTrue=<id> (or False) with that rule's token, in place of
// the endpoint's own last segment (upstream docs/rm_native_test_matrix.md §8). The hub reports
// nothing back about the boolean, so a 2xx is all there is to check. id must be a Rule Machine
// rule (NativeRule first): for another id the verb is accepted and does nothing.
func (c *Client) SetRuleBoolean(ctx context.Context, id int64, value bool) error {
	if c.ruleApp == "" {
		return ErrNoRuleEndpoint
	}
	verb := "setRuleBooleanFalse"
	if value {
		verb = "setRuleBooleanTrue"
	}
	path := "/apps/api/" + c.ruleApp + "/" + verb + "=" + strconv.FormatInt(id, 10)
	r, err := c.do(ctx, http.MethodGet, path, url.Values{"access_token": {c.ruleToken}}, nil, "", c.callTimeout)
	if err != nil {
		return err
	}
	switch {
	case r.status == http.StatusUnauthorized || r.status == http.StatusNotFound:
		return fmt.Errorf("%w (HTTP %d)", ErrRuleEndpointRefused, r.status)
	case r.status < 200 || r.status > 299:
		return c.apiError("/apps/api/"+c.ruleApp+"/"+verb, r)
	}
	return nil
}

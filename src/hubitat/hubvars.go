package hubitat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Hub variables are created and deleted off the hub the way upstream does it on the hub
// (mcp-variables-lib _createOneVariable, toolDeleteHubVariable): by driving the Hub Variables
// system app's "hubVar" page.
//
//	GET  /installedapp/configure/json/<id> and /installedapp/statusJson/<id>
//	                                warm the wizard first: its clicks do nothing without both
//	                                (_primeHubVarsWizard, firmware 2.5.0.126)
//	POST /installedapp/btn          moreVar (stateAttribute moreVar) opens the create form;
//	                                <name> (stateAttribute deleteGV) then delConfirm deletes
//	POST /installedapp/update/json  settings[hbVar], settings[varType], settings[varValue]; a
//	                                DateTime: varDate (yyyy-MM-dd) and varTime (HH:mm), then
//	                                warm again and click dateTimeDone
//	GET  /logs/eventsJson           the hub's location events, "variable:<name>" among them
//
// Whether it worked is read back from the Maker API's variable list, which hamcp reads anyway.

// HubVarTypes are the types the create form offers.
var HubVarTypes = []string{"Number", "Decimal", "String", "Boolean", "DateTime"}

// hubVarMoment reads a DateTime variable's initial value: the hub's local date and time, to the
// minute (its pickers have no seconds), as "2026-05-06T12:00" or "2026-05-06 12:00", seconds
// allowed and dropped.
func hubVarMoment(value string) (date, clock string, err error) {
	v := strings.Replace(strings.TrimSpace(value), " ", "T", 1)
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05"} {
		if t, perr := time.Parse(layout, v); perr == nil {
			return t.Format("2006-01-02"), t.Format("15:04"), nil
		}
	}
	return "", "", fmt.Errorf("value %q is not a date and time: give the hub's local time as 2026-05-06T12:00", clean(value))
}

// ErrVariableExists and ErrVariableNotFound are a create of a name in use and a delete of one
// that is not.
var (
	ErrVariableExists   = errors.New("hub variable already exists")
	ErrVariableNotFound = errors.New("hub variable not found")
)

// CheckHubVariable says what is wrong with a new variable before anything is sent.
func CheckHubVariable(name, typ, value string) error {
	switch {
	case strings.TrimSpace(name) == "" || len(name) > 100:
		return errors.New("name: 1 to 100 characters")
	case strings.ContainsAny(name, `'"\~[:]<>`):
		return fmt.Errorf("name %q: Hubitat refuses ' \" \\ ~ [ : ] < > in a variable name", clean(name))
	case !slices.Contains(HubVarTypes, typ):
		return fmt.Errorf("type %q must be one of %s", clean(typ), strings.Join(HubVarTypes, ", "))
	case value == "":
		return errors.New("value: an initial value is required (the hub does not keep a variable created without one)")
	}
	switch typ {
	case "Number":
		if _, err := strconv.ParseInt(value, 10, 64); err != nil {
			return fmt.Errorf("value %q is not a whole number", clean(value))
		}
	case "Decimal":
		if _, err := strconv.ParseFloat(value, 64); err != nil {
			return fmt.Errorf("value %q is not a number", clean(value))
		}
	case "Boolean":
		if value != "true" && value != "false" {
			return fmt.Errorf("value %q must be true or false", clean(value))
		}
	case "DateTime":
		if _, _, err := hubVarMoment(value); err != nil {
			return err
		}
	}
	return nil
}

// HubVariablesApp is the Hub Variables system app's id, found in the app tree.
func (c *Client) HubVariablesApp(ctx context.Context) (int64, error) {
	apps, err := c.InstalledApps(ctx)
	if err != nil {
		return 0, err
	}
	for _, a := range apps {
		if a.Type == "Hub Variables" {
			return a.ID, nil
		}
	}
	return 0, errors.New("hubitat: the Hub Variables app is not in the app list (Settings → Hub Variables on the hub)")
}

// clickPageButton clicks a button on a sub-page with the page context the hub UI sends
// (upstream _rmClickAppButton with a pageName).
func (c *Client) clickPageButton(ctx context.Context, id int64, page, button, stateAttribute, version string) error {
	sid := strconv.FormatInt(id, 10)
	form := url.Values{"id": {sid}, "name": {button}, "settings[" + button + "]": {"clicked"}, button + ".type": {"button"},
		"formAction": {"update"}, "currentPage": {page}, "pageBreadcrumbs": {`["mainPage"]`}}
	if stateAttribute != "" {
		form.Set("stateAttribute", stateAttribute)
	}
	if version != "" {
		form.Set("version", version)
	}
	_, err := c.Admin(ctx, http.MethodPost, "/installedapp/btn", form)
	return appErr(id, err)
}

// writePageSetting posts one setting on a sub-page (upstream _rmBuildSettingsBody +
// _rmPostSettings).
func (c *Client) writePageSetting(ctx context.Context, id int64, page, key, typ, value, version string) error {
	form := url.Values{"id": {strconv.FormatInt(id, 10)}, "settings[" + key + "]": {value}, key + ".type": {typ}, key + ".multiple": {"false"},
		"formAction": {"update"}, "currentPage": {page}, "pageBreadcrumbs": {`["mainPage"]`}}
	if version != "" {
		form.Set("version", version)
	}
	_, err := c.Admin(ctx, http.MethodPost, "/installedapp/update/json", form)
	return appErr(id, err)
}

// appVersion is the app's edit version, which the hub uses to spot concurrent edits.
func (c *Client) appVersion(ctx context.Context, id int64) string {
	r, err := c.Admin(ctx, http.MethodGet, "/installedapp/json/"+strconv.FormatInt(id, 10), nil)
	if err != nil {
		return ""
	}
	var w struct {
		Version json.RawMessage `json:"version"`
	}
	if json.Unmarshal(r.Body, &w) != nil {
		return ""
	}
	return idString(w.Version)
}

// CreateHubVariable creates a hub variable through the Hub Variables app's create form.
func (c *Client) CreateHubVariable(ctx context.Context, name, typ, value string) (Variable, error) {
	if err := CheckHubVariable(name, typ, value); err != nil {
		return Variable{}, err
	}
	if _, found, err := c.findVariable(ctx, name); err != nil {
		return Variable{}, err
	} else if found {
		return Variable{}, fmt.Errorf("%q: %w (set its value with hubitat_set_variable)", name, ErrVariableExists)
	}
	app, err := c.HubVariablesApp(ctx)
	if err != nil {
		return Variable{}, err
	}
	c.warmWizard(ctx, app)
	if err := c.clickPageButton(ctx, app, "hubVar", "moreVar", "moreVar", c.appVersion(ctx, app)); err != nil {
		return Variable{}, err
	}
	fields := []formField{{"hbVar", "text", name}, {"varType", "enum", typ}}
	if typ != "DateTime" {
		fields = append(fields, formField{"varValue", "textarea", value})
	}
	if err := c.writeHubVarFields(ctx, app, fields); err != nil {
		return Variable{}, err
	}
	if typ == "DateTime" {
		// The type's write re-renders the form with the date and time pickers, and only Done
		// commits them.
		date, clock, _ := hubVarMoment(value)
		if err := c.writeHubVarFields(ctx, app, []formField{{"varDate", "date", date}, {"varTime", "time", clock}}); err != nil {
			return Variable{}, err
		}
		c.warmWizard(ctx, app)
		if err := c.clickPageButton(ctx, app, "hubVar", "dateTimeDone", "", c.appVersion(ctx, app)); err != nil {
			return Variable{}, fmt.Errorf("%w: the Done click failed (%v)", ErrNotConfirmed, err)
		}
	}
	return c.awaitVariable(ctx, name, true)
}

// formField is one setting a form write sends: its key, input type and value.
type formField struct{ key, typ, value string }

// writeHubVarFields writes fields on the create form, each only when the form shows it: a form
// without one means the firmware changed it, and nothing more is written.
func (c *Client) writeHubVarFields(ctx context.Context, app int64, fields []formField) error {
	page, err := c.AppPage(ctx, app, "hubVar")
	if err != nil {
		return err
	}
	for _, f := range fields {
		if findInput(page, f.key) == "" {
			return fmt.Errorf("hubitat Hub Variables page has no %s field after Create New Variable (firmware may have changed the form): nothing was created", f.key)
		}
		if err := c.writePageSetting(ctx, app, "hubVar", f.key, f.typ, f.value, c.appVersion(ctx, app)); err != nil {
			return fmt.Errorf("%w: writing %s failed (%v)", ErrNotConfirmed, f.key, err)
		}
	}
	return nil
}

// warmWizard reads the Hub Variables app's page and raw state, without which the hub takes its
// wizard's clicks and does nothing (upstream _primeHubVarsWizard). A failed read is not fatal:
// the click's result is read back anyway.
func (c *Client) warmWizard(ctx context.Context, app int64) {
	sid := strconv.FormatInt(app, 10)
	_, _ = c.Admin(ctx, http.MethodGet, "/installedapp/configure/json/"+sid, nil)
	_, _ = c.Admin(ctx, http.MethodGet, "/installedapp/statusJson/"+sid, nil)
}

func findInput(page AppConfig, name string) string {
	for _, s := range page.Sections {
		for _, in := range s.Inputs {
			if in.Name == name {
				return in.Type
			}
		}
	}
	return ""
}

// DeleteHubVariable deletes a hub variable (and its connector device, if it has one) and
// returns what it was.
func (c *Client) DeleteHubVariable(ctx context.Context, name string) (Variable, error) {
	prev, found, err := c.findVariable(ctx, name)
	if err != nil {
		return Variable{}, err
	}
	if !found {
		return Variable{}, fmt.Errorf("%q: %w (hubitat_list_variables lists them)", name, ErrVariableNotFound)
	}
	app, err := c.HubVariablesApp(ctx)
	if err != nil {
		return prev, err
	}
	c.warmWizard(ctx, app)
	if err := c.clickPageButton(ctx, app, "hubVar", name, "deleteGV", c.appVersion(ctx, app)); err != nil {
		return prev, err
	}
	if err := c.clickPageButton(ctx, app, "hubVar", "delConfirm", "", c.appVersion(ctx, app)); err != nil {
		return prev, fmt.Errorf("%w: confirming the delete failed (%v)", ErrNotConfirmed, err)
	}
	_, err = c.awaitVariable(ctx, name, false)
	return prev, err
}

// awaitVariable reads the variable list until name is there (or gone): the hub commits the
// wizard's last step in the background (upstream polls 8 × 300 ms).
func (c *Client) awaitVariable(ctx context.Context, name string, present bool) (Variable, error) {
	var last error
	for i := range 8 {
		if i > 0 {
			select {
			case <-ctx.Done():
				return Variable{}, ctx.Err()
			case <-time.After(300 * time.Millisecond):
			}
		}
		v, found, err := c.findVariable(ctx, name)
		switch {
		case err != nil:
			last = err
		case found == present:
			return v, nil
		}
	}
	if last != nil {
		return Variable{}, fmt.Errorf("%w: reading the variables back failed (%v)", ErrNotConfirmed, last)
	}
	if present {
		return Variable{}, fmt.Errorf("the Maker API does not list %q after the create (the hub refused it, or Maker API does not expose new variables): %w", name, ErrNotConfirmed)
	}
	return Variable{}, fmt.Errorf("the hub still has %q after the delete: %w", name, ErrNotConfirmed)
}

// findVariable looks a variable up in the Maker API's list.
func (c *Client) findVariable(ctx context.Context, name string) (Variable, bool, error) {
	vs, err := c.Variables(ctx)
	if err != nil {
		return Variable{}, false, err
	}
	i := slices.IndexFunc(vs, func(v Variable) bool { return v.Name == name })
	if i < 0 {
		return Variable{}, false, nil
	}
	return vs[i], true, nil
}

// LocationEvent is one of the hub's location events.
type LocationEvent struct {
	Name        string `json:"name"`
	Value       string `json:"value"`
	Description string `json:"description,omitempty"`
	Date        string `json:"date"`
}

// ParseLocationEvents reads /logs/eventsJson (newest first).
func ParseLocationEvents(b []byte) ([]LocationEvent, error) {
	var raw []struct {
		Name  string          `json:"name"`
		Value json.RawMessage `json:"value"`
		Desc  string          `json:"descriptionText"`
		Date  string          `json:"date"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("hubitat /logs/eventsJson: expected a JSON list: %w", err)
	}
	out := make([]LocationEvent, 0, len(raw))
	for _, r := range raw {
		v := strings.Trim(strings.TrimSpace(string(r.Value)), `"`)
		var s string
		if json.Unmarshal(r.Value, &s) == nil {
			v = s
		}
		out = append(out, LocationEvent{Name: r.Name, Value: v, Description: r.Desc, Date: r.Date})
	}
	return out, nil
}

// VariableHistory is a hub variable's changes the hub still keeps in its location events
// ("variable:<name>"), newest first.
func (c *Client) VariableHistory(ctx context.Context, name string) ([]LocationEvent, error) {
	r, err := c.Admin(ctx, http.MethodGet, "/logs/eventsJson", nil)
	if err != nil {
		return nil, err
	}
	all, err := ParseLocationEvents(r.Body)
	if err != nil {
		return nil, err
	}
	var out []LocationEvent
	for _, e := range all {
		if e.Name == "variable:"+name {
			out = append(out, e)
		}
	}
	return out, nil
}

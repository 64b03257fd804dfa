package hubitat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/hamcp/hamcp/src/redact"
)

// Installed app instances, read and driven through the routes the hub's own UI uses (upstream,
// kingpanther13/Hubitat-local-MCP-server, calls the same ones on the hub's loopback):
//
//	GET  /hub2/appsList                         the app tree (toolListInstalledApps)
//	GET  /installedapp/configure/json/<id>[/p]  an app's page (toolGetAppConfig)
//	GET  /installedapp/json/<id>                an app's thin record (toolGetAppConfig summary, toolSetAppDisabled read-back)
//	POST /installedapp/disable                  {"id":N,"disable":bool} as JSON (toolSetAppDisabled)
//	POST /installedapp/btn                      a page button click (_rmClickAppButton)

// ErrNotConfirmed is a change the hub took but a read-back did not show: it may have been applied.
var ErrNotConfirmed = errors.New("the change was sent but not confirmed")

// ErrSelf is a change that would cut hamcp off from the hub.
var ErrSelf = errors.New("refused")

// MakerAppID is the id of the Maker API instance hamcp uses (itself an installed app).
func (c *Client) MakerAppID() string { return c.appID }

// ErrAppNotFound is an app id the hub does not have.
var ErrAppNotFound = errors.New("installed app not found")

// InstalledApp is one app instance from /hub2/appsList, flattened with its parent's id.
type InstalledApp struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"` // the label, HTML and run-state decorations removed
	Type     string `json:"type"` // the app type: "Rule-5.1", "Room Lights", "Maker API"
	Disabled bool   `json:"disabled"`
	Paused   bool   `json:"paused,omitempty"` // Rule Machine's "(Paused)" decoration
	Stopped  bool   `json:"stopped,omitempty"`
	User     bool   `json:"user"` // user code rather than built in
	Hidden   bool   `json:"hidden,omitempty"`
	ParentID int64  `json:"parentId,omitempty"`
	Children int    `json:"childCount,omitempty"`
	// ParentType is the type of the app this one is a child of ("Rule Machine" for a rule).
	ParentType string `json:"parentType,omitempty"`
}

var tagRE = regexp.MustCompile(`<[^>]*>`)

// StripHTML is the text of a label or title the hub renders with HTML (colour spans, <b>).
func StripHTML(s string) string {
	return strings.Join(strings.Fields(html.UnescapeString(tagRE.ReplaceAllString(s, " "))), " ")
}

// ParseAppsList flattens a /hub2/appsList reply ({"apps":[{"data":{…},"children":[…]}]}) in
// tree order, each app with its parent's id and type. Ids come as numbers or strings.
func ParseAppsList(b []byte) ([]InstalledApp, error) {
	var top struct {
		Apps []appNode `json:"apps"`
	}
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, fmt.Errorf("hubitat /hub2/appsList: malformed reply: %w", err)
	}
	if top.Apps == nil {
		return nil, errors.New(`hubitat /hub2/appsList: no "apps" list in the reply (firmware may have changed it)`)
	}
	var out []InstalledApp
	var walk func(n appNode, parent *InstalledApp, depth int)
	walk = func(n appNode, parent *InstalledApp, depth int) {
		if depth > 32 {
			return
		}
		id, ok := parseNumber(n.Data.ID)
		if !ok || id != float64(int64(id)) || id <= 0 {
			return
		}
		a := InstalledApp{ID: int64(id), Type: n.Data.Type, Disabled: n.Data.Disabled, User: n.Data.User, Hidden: n.Data.Hidden,
			Children: len(n.Children)}
		a.Name, a.Paused, a.Stopped = undecorate(StripHTML(n.Data.Name))
		if parent != nil {
			a.ParentID, a.ParentType = parent.ID, parent.Type
		}
		out = append(out, a)
		for _, c := range n.Children {
			walk(c, &a, depth+1)
		}
	}
	for _, n := range top.Apps {
		walk(n, nil, 0)
	}
	return out, nil
}

type appNode struct {
	Data struct {
		ID       json.RawMessage `json:"id"`
		Name     string          `json:"name"`
		Type     string          `json:"type"`
		Disabled bool            `json:"disabled"`
		User     bool            `json:"user"`
		Hidden   bool            `json:"hidden"`
	} `json:"data"`
	Children []appNode `json:"children"`
}

// undecorate removes the run-state suffixes Rule Machine adds to a rule's name in the app list.
// A rule literally named "… (Paused)" reads as paused: upstream tells the two apart with
// RMUtils' undecorated label, which only code on the hub can read.
func undecorate(name string) (string, bool, bool) {
	paused, stopped := false, false
	for {
		switch {
		case strings.HasSuffix(name, "(Paused)"):
			paused, name = true, strings.TrimSpace(strings.TrimSuffix(name, "(Paused)"))
		case strings.HasSuffix(name, "(Stopped)"):
			stopped, name = true, strings.TrimSpace(strings.TrimSuffix(name, "(Stopped)"))
		case strings.HasSuffix(name, "(Required Expression false)"):
			name = strings.TrimSpace(strings.TrimSuffix(name, "(Required Expression false)"))
		default:
			return name, paused, stopped
		}
	}
}

// InstalledApps is the hub's app tree, flattened.
func (c *Client) InstalledApps(ctx context.Context) ([]InstalledApp, error) {
	r, err := c.Admin(ctx, http.MethodGet, "/hub2/appsList", nil)
	if err != nil {
		return nil, err
	}
	return ParseAppsList(r.Body)
}

// AppInput is one input on an app's page; Value is what the user set (passwords redacted).
type AppInput struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Value       any    `json:"value,omitempty"`
	Options     any    `json:"options,omitempty"`
	Multiple    bool   `json:"multiple,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// AppSection is one section of an app's page.
type AppSection struct {
	Title      string     `json:"title,omitempty"`
	Inputs     []AppInput `json:"inputs,omitempty"`
	Paragraphs []string   `json:"paragraphs,omitempty"`
}

// AppConfig is an app's page as /installedapp/configure/json renders it.
type AppConfig struct {
	ID        int64        `json:"id"`
	Label     string       `json:"label"`
	Type      string       `json:"type"`
	Namespace string       `json:"namespace,omitempty"`
	Disabled  bool         `json:"disabled"`
	ParentID  int64        `json:"parentId,omitempty"`
	Page      string       `json:"page"`
	PageTitle string       `json:"pageTitle,omitempty"`
	Sections  []AppSection `json:"sections"`
	Children  []AppChild   `json:"childApps,omitempty"`
	// SettingsCount is how many stored settings the app has; the raw settings are not returned
	// (they can hold secrets on pages other than this one).
	SettingsCount int `json:"settingsCount"`
}

// AppChild is a child app listed on its parent's page.
type AppChild struct {
	ID    int64  `json:"id"`
	Label string `json:"label"`
	Type  string `json:"type,omitempty"`
}

// Redacted stands for a password input's value, which the hub's UI masks too.
const Redacted = "***redacted***"

// ParseAppConfig reads a /installedapp/configure/json reply. A reply without an app object or
// a page of sections is an error (the page does not exist or firmware changed the route).
func ParseAppConfig(b []byte) (AppConfig, error) {
	var w struct {
		App *struct {
			ID          json.RawMessage `json:"id"`
			Label       string          `json:"label"`
			TrueLabel   string          `json:"trueLabel"`
			Disabled    bool            `json:"disabled"`
			ParentAppID json.RawMessage `json:"parentAppId"`
			AppType     struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"appType"`
		} `json:"app"`
		ConfigPage *struct {
			Name     string `json:"name"`
			Title    string `json:"title"`
			Error    string `json:"error"`
			Sections []struct {
				Title string `json:"title"`
				Input []struct {
					Name         string          `json:"name"`
					Type         string          `json:"type"`
					Title        string          `json:"title"`
					Description  string          `json:"description"`
					DefaultValue json.RawMessage `json:"defaultValue"`
					Value        json.RawMessage `json:"value"`
					Options      json.RawMessage `json:"options"`
					Multiple     bool            `json:"multiple"`
					Required     bool            `json:"required"`
				} `json:"input"`
				Body []struct {
					Title       string `json:"title"`
					Description string `json:"description"`
				} `json:"body"`
			} `json:"sections"`
		} `json:"configPage"`
		Settings  map[string]json.RawMessage `json:"settings"`
		ChildApps []struct {
			ID    json.RawMessage `json:"id"`
			Label string          `json:"label"`
			Name  string          `json:"name"`
		} `json:"childApps"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return AppConfig{}, fmt.Errorf("hubitat app page: malformed reply: %w", err)
	}
	if w.App == nil || w.ConfigPage == nil {
		return AppConfig{}, errors.New("hubitat app page: the reply has no app or page (firmware may have changed the route)")
	}
	if w.ConfigPage.Sections == nil {
		msg := "the page has no sections (it may be an action-only page, or not exist)"
		if w.ConfigPage.Error != "" {
			msg = StripHTML(w.ConfigPage.Error)
		}
		return AppConfig{}, fmt.Errorf("hubitat app page %q: %s", w.ConfigPage.Name, clean(msg))
	}
	label := w.App.TrueLabel
	if label == "" {
		label = w.App.Label
	}
	cfg := AppConfig{Label: StripHTML(label), Type: w.App.AppType.Name, Namespace: w.App.AppType.Namespace, Disabled: w.App.Disabled,
		Page: w.ConfigPage.Name, PageTitle: StripHTML(w.ConfigPage.Title), SettingsCount: len(w.Settings), Sections: []AppSection{}}
	cfg.ID = intID(w.App.ID)
	cfg.ParentID = intID(w.App.ParentAppID)
	for _, s := range w.ConfigPage.Sections {
		sec := AppSection{Title: StripHTML(s.Title)}
		for _, in := range s.Input {
			ai := AppInput{Name: in.Name, Type: in.Type, Title: redact.Text(StripHTML(in.Title)), Multiple: in.Multiple, Required: in.Required}
			if d := StripHTML(in.Description); d != "Click to set" {
				ai.Description = redact.Text(d)
			}
			ai.Value = inputValue(in.Type, in.DefaultValue, in.Value)
			switch v := ai.Value.(type) {
			case nil:
			case string:
				if in.Type == "password" || redact.Key(in.Name) {
					ai.Value = Redacted
				} else {
					ai.Value = redact.Text(v) // a URL with its token, a "key: …" line
				}
			default:
				if in.Type == "password" || redact.Key(in.Name) {
					ai.Value = Redacted
				}
			}
			if len(in.Options) > 0 && string(in.Options) != "null" {
				var opts any
				if json.Unmarshal(in.Options, &opts) == nil {
					ai.Options = opts
				}
			}
			sec.Inputs = append(sec.Inputs, ai)
		}
		for _, p := range s.Body {
			text := p.Description
			if text == "" {
				text = p.Title
			}
			// Pages print URLs with their access tokens and "Access Token: …" lines.
			if t := StripHTML(text); t != "" && t != "Click to set" {
				sec.Paragraphs = append(sec.Paragraphs, redact.Text(t))
			}
		}
		cfg.Sections = append(cfg.Sections, sec)
	}
	for _, ch := range w.ChildApps {
		label := ch.Label
		if label == "" {
			label = ch.Name
		}
		name, _, _ := undecorate(StripHTML(label))
		cfg.Children = append(cfg.Children, AppChild{ID: intID(ch.ID), Label: name, Type: ch.Name})
	}
	return cfg, nil
}

// inputValue is an input's current value: defaultValue holds it for most inputs (despite the
// name), value on some; a bare true on a device picker only says "something is selected".
func inputValue(typ string, def, val json.RawMessage) any {
	for _, raw := range []json.RawMessage{def, val} {
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		var v any
		if json.Unmarshal(raw, &v) != nil {
			continue
		}
		if v == true && typ != "bool" {
			continue
		}
		return v
	}
	return nil
}

func intID(raw json.RawMessage) int64 {
	if f, ok := parseNumber(raw); ok && f == float64(int64(f)) {
		return int64(f)
	}
	return 0
}

func appID(id int64) (string, error) {
	if id <= 0 {
		return "", fmt.Errorf("app id %d must be a positive number from hubitat_manage_apps list", id)
	}
	return strconv.FormatInt(id, 10), nil
}

// AppPage is an app's page; page "" is its main page. A 404 or 410 is ErrAppNotFound.
func (c *Client) AppPage(ctx context.Context, id int64, page string) (AppConfig, error) {
	sid, err := appID(id)
	if err != nil {
		return AppConfig{}, err
	}
	path := "/installedapp/configure/json/" + sid
	if page != "" {
		if !pageNameRE.MatchString(page) {
			return AppConfig{}, fmt.Errorf("page %q must be letters, digits and underscores, e.g. mainPage", clean(page))
		}
		path += "/" + page
	}
	r, err := c.Admin(ctx, http.MethodGet, path, nil)
	if err != nil {
		return AppConfig{}, appErr(id, err)
	}
	// Maker API's page shows hamcp's own token, a Local End Point rule's page the endpoint's:
	// those hamcp knows are hidden wherever the page shows them, before it is read at all. (Not
	// the password: a short one could be a word of the JSON itself, and no page prints it.)
	body := r.Body
	for _, secret := range []string{c.token, c.ruleToken} {
		if len(secret) >= 8 { // Maker API's are UUIDs; a shorter one could match JSON's own words
			body = bytes.ReplaceAll(body, []byte(secret), []byte(redact.Hidden))
		}
	}
	return ParseAppConfig(body)
}

var pageNameRE = regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`)

func appErr(id int64, err error) error {
	var api *APIError
	if errors.As(err, &api) && (api.Status == http.StatusNotFound || api.Status == http.StatusGone) {
		return fmt.Errorf("hubitat app %d: %w", id, ErrAppNotFound)
	}
	return err
}

// AppDisabled reads an app's disabled flag from its thin record, /installedapp/json/<id>.
func (c *Client) AppDisabled(ctx context.Context, id int64) (bool, error) {
	sid, err := appID(id)
	if err != nil {
		return false, err
	}
	r, err := c.Admin(ctx, http.MethodGet, "/installedapp/json/"+sid, nil)
	if err != nil {
		return false, appErr(id, err)
	}
	return ParseAppDisabled(r.Body)
}

// ParseAppDisabled reads the disabled flag of an /installedapp/json record; a record without it
// is an error, never "enabled".
func ParseAppDisabled(b []byte) (bool, error) {
	var w map[string]json.RawMessage
	if err := json.Unmarshal(b, &w); err != nil {
		return false, fmt.Errorf("hubitat app record: malformed reply: %w", err)
	}
	raw, ok := w["disabled"]
	if !ok {
		return false, errors.New(`hubitat app record: no "disabled" field in the reply`)
	}
	switch strings.Trim(strings.TrimSpace(string(raw)), `"`) {
	case "true":
		return true, nil
	case "false", "null":
		return false, nil
	}
	return false, fmt.Errorf("hubitat app record: disabled is %s", clean(string(raw)))
}

// SetAppDisabled posts the hub UI's enable/disable switch, then reads the flag back: the POST's
// reply does not say whether the hub committed it.
func (c *Client) SetAppDisabled(ctx context.Context, id int64, disable bool) error {
	sid, err := appID(id)
	if err != nil {
		return err
	}
	if disable && sid == c.appID {
		return fmt.Errorf("app %d is the Maker API instance hamcp reaches the hub through: disabling it would cut hamcp off (do it in the hub's web UI): %w", id, ErrSelf)
	}
	if _, err := c.AdminJSON(ctx, "/installedapp/disable", map[string]any{"id": id, "disable": disable}); err != nil {
		return appErr(id, err)
	}
	got, err := c.AppDisabled(ctx, id)
	if err != nil {
		return fmt.Errorf("%w: reading app %d back failed (%v)", ErrNotConfirmed, id, err)
	}
	if got != disable {
		return fmt.Errorf("%w: app %d still reads disabled=%v", ErrNotConfirmed, id, got)
	}
	return nil
}

// ClickAppButton clicks a button on an app's main page, with the form the hub UI sends
// (upstream _rmClickAppButton's minimal form, for main-page buttons).
func (c *Client) ClickAppButton(ctx context.Context, id int64, button string) error {
	sid, err := appID(id)
	if err != nil {
		return err
	}
	if !pageNameRE.MatchString(button) {
		return fmt.Errorf("button %q must be letters, digits and underscores", clean(button))
	}
	form := url.Values{"id": {sid}, "name": {button}, "settings[" + button + "]": {"clicked"}, button + ".type": {"button"}}
	_, err = c.Admin(ctx, http.MethodPost, "/installedapp/btn", form)
	return appErr(id, err)
}

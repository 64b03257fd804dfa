package homeassistant

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// Config entries and their flows (homeassistant/components/config/config_entries.py and
// helpers/data_entry_flow.py): WS config_entries/get and config_entries/disable, and the REST views
// for reloading and deleting an entry and for config and options flows.

// EntryDetail is one config entry as config_entries/get lists it (ConfigEntry.as_json_fragment),
// the members a model needs to manage it.
type EntryDetail struct {
	ConfigEntry
	SupportsOptions     bool     `json:"supports_options"`
	SupportsUnload      bool     `json:"supports_unload"`
	SupportsReconfigure bool     `json:"supports_reconfigure"`
	CreatedAt           *float64 `json:"created_at"`
	ModifiedAt          *float64 `json:"modified_at"`
}

// ConfigEntryDetails lists config entries (WS config_entries/get, administrators only): those of
// one integration when domain is not "", of the integration types given (hub, device, service,
// helper, …) when types are.
func (c *Client) ConfigEntryDetails(ctx context.Context, domain string, types ...string) ([]EntryDetail, error) {
	payload := map[string]any{}
	if domain != "" {
		payload["domain"] = domain
	}
	if len(types) > 0 {
		payload["type_filter"] = types
	}
	var out []EntryDetail
	err := c.Call(ctx, "config_entries/get", payload, &out)
	return out, err
}

// entryPath is the REST path of one entry; ids are one path segment.
func entryPath(id string) string {
	return "/api/config/config_entries/entry/" + url.PathEscape(id)
}

type restartAnswer struct {
	RequireRestart bool `json:"require_restart"`
}

// ReloadConfigEntry unloads and sets up an entry again (POST …/entry/<id>/reload, administrators
// only). An unknown entry is an APIError 404 "Invalid entry specified"; one that cannot be
// reloaded, 403 "Entry cannot be reloaded". requireRestart: Home Assistant must restart to finish.
func (c *Client) ReloadConfigEntry(ctx context.Context, id string) (requireRestart bool, err error) {
	var out restartAnswer
	err = c.doJSON(ctx, request{method: http.MethodPost, path: entryPath(id) + "/reload"}, &out)
	return out.RequireRestart, err
}

// SetConfigEntryDisabled disables an entry (disabled_by "user") or enables it again (WS
// config_entries/disable); an unknown entry is an APIError with Code "not_found".
func (c *Client) SetConfigEntryDisabled(ctx context.Context, id string, disabled bool) (requireRestart bool, err error) {
	var by any
	if disabled {
		by = "user"
	}
	var out restartAnswer
	err = c.Call(ctx, "config_entries/disable", map[string]any{"entry_id": id, "disabled_by": by}, &out)
	return out.RequireRestart, err
}

// DeleteConfigEntry removes an entry with its devices and entities (DELETE …/entry/<id>); an
// unknown entry is an APIError 404 "Invalid entry specified".
func (c *Client) DeleteConfigEntry(ctx context.Context, id string) (requireRestart bool, err error) {
	var out restartAnswer
	err = c.doJSON(ctx, request{method: http.MethodDelete, path: entryPath(id)}, &out)
	return out.RequireRestart, err
}

// FlowResult is one answer of a data entry flow: a form to fill (type "form", with step_id,
// data_schema, errors), a menu (menu_options), the end (create_entry with the entry as result for
// config flows, abort with reason), or a step the user takes elsewhere (external, progress).
type FlowResult struct {
	Type                    string           `json:"type"`
	FlowID                  string           `json:"flow_id"`
	Handler                 string           `json:"handler"`
	StepID                  string           `json:"step_id,omitempty"`
	DataSchema              []map[string]any `json:"data_schema,omitempty"` // voluptuous_serialize's fields
	Errors                  map[string]any   `json:"errors,omitempty"`
	DescriptionPlaceholders map[string]any   `json:"description_placeholders,omitempty"`
	MenuOptions             json.RawMessage  `json:"menu_options,omitempty"` // a list of step ids, or step id → label
	Reason                  string           `json:"reason,omitempty"`
	Title                   string           `json:"title,omitempty"`
	Result                  json.RawMessage  `json:"result,omitempty"` // create_entry of a config flow: the entry
	URL                     string           `json:"url,omitempty"`
	ProgressAction          string           `json:"progress_action,omitempty"`
}

// FlowInputError is Home Assistant refusing a step's input against the form's schema (400
// {"errors": {field: message, "base": [messages]}}): nothing was submitted, the flow stays where
// it was.
type FlowInputError struct {
	Errors map[string]any
}

func (e *FlowInputError) Error() string {
	b, _ := json.Marshal(e.Errors)
	return "home assistant refused the input: " + string(b)
}

// flowBase is the REST root of config flows, or of options flows (whose handler is an entry id).
func flowBase(options bool) string {
	if options {
		return "/api/config/config_entries/options/flow"
	}
	return "/api/config/config_entries/flow"
}

// StartFlow starts a config flow for an integration (POST …/flow {handler}), or with options an
// options flow for an entry (handler is its entry id). An integration without a config flow is an
// APIError 404 "Invalid handler specified".
func (c *Client) StartFlow(ctx context.Context, handler string, options bool) (FlowResult, error) {
	var out FlowResult
	err := c.doJSON(ctx, request{method: http.MethodPost, path: flowBase(options), body: map[string]any{"handler": handler, "show_advanced_options": false}}, &out)
	return out, err
}

// FlowStep submits input to a flow's current step (POST …/flow/<id>); nil input reads the current
// step again (GET). An unknown flow is an APIError 404 "Invalid flow specified"; input the form's
// schema refuses is a *FlowInputError.
func (c *Client) FlowStep(ctx context.Context, flowID string, options bool, input map[string]any) (FlowResult, error) {
	path := flowBase(options) + "/" + url.PathEscape(flowID)
	req := request{method: http.MethodGet, path: path}
	if input != nil {
		req = request{method: http.MethodPost, path: path, body: input}
	}
	var out FlowResult
	err := c.doJSON(ctx, req, &out)
	return out, flowInputError(err)
}

// AbortFlow ends a flow in progress (DELETE …/flow/<id>).
func (c *Client) AbortFlow(ctx context.Context, flowID string, options bool) error {
	return c.doJSON(ctx, request{method: http.MethodDelete, path: flowBase(options) + "/" + url.PathEscape(flowID)}, nil)
}

// flowInputError recognises the data entry flow's schema errors in a 400 answer.
func flowInputError(err error) error {
	var api *APIError
	if !errors.As(err, &api) || api.Status != http.StatusBadRequest || !strings.HasPrefix(api.Message, `{"errors"`) {
		return err
	}
	var body struct {
		Errors map[string]any `json:"errors"`
	}
	if json.Unmarshal([]byte(api.Message), &body) != nil || body.Errors == nil {
		return err
	}
	return &FlowInputError{Errors: body.Errors}
}

// ConfigEntryEntities lists the entities an entry provides, from the entity registry (WS
// config/entity_registry/list, components/config/entity_registry.py websocket_list_entities,
// whose rows carry config_entry_id): the registry's word, which no state or event can change.
func (c *Client) ConfigEntryEntities(ctx context.Context, entryID string) ([]string, error) {
	rows, err := callAs[[]struct {
		EntityID      string  `json:"entity_id"`
		ConfigEntryID *string `json:"config_entry_id"`
	}](ctx, c, "config/entity_registry/list", nil)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range rows {
		if r.ConfigEntryID != nil && *r.ConfigEntryID == entryID {
			out = append(out, r.EntityID)
		}
	}
	return out, nil
}

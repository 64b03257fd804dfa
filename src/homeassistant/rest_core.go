package homeassistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Ping checks that the REST API answers and accepts the token (GET /api/).
func (c *Client) Ping(ctx context.Context) error {
	return c.doJSON(ctx, request{method: http.MethodGet, path: "/api/"}, nil)
}

// ValidateToken checks someone else's token against HA (GET /api/ with that token). It returns
// nil when HA accepts it, an error matching ErrUnauthorized when HA rejects it, and one matching
// ErrUnavailable when HA cannot be asked — callers must not treat the latter as a rejection.
func (c *Client) ValidateToken(ctx context.Context, token string) error {
	if strings.TrimSpace(token) == "" || !validHeaderValue(token) {
		return &APIError{Status: http.StatusUnauthorized, Message: "token is empty or malformed"}
	}
	return c.doJSON(ctx, request{method: http.MethodGet, path: "/api/", token: token}, nil)
}

// Config returns HA's core configuration (GET /api/config).
func (c *Client) Config(ctx context.Context) (CoreConfig, error) {
	var raw json.RawMessage
	if err := c.getJSON(ctx, "/api/config", nil, &raw); err != nil {
		return CoreConfig{}, err
	}
	var cfg CoreConfig
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return CoreConfig{}, fmt.Errorf("homeassistant: decoding /api/config: %w", err)
	}
	cfg.Raw = raw
	return cfg, nil
}

// States returns every entity state (GET /api/states). Prefer Mirror() once it is ready.
func (c *Client) States(ctx context.Context) ([]State, error) {
	var out []State
	err := c.getJSON(ctx, "/api/states", nil, &out)
	return out, err
}

// State returns one entity (GET /api/states/<entity_id>); unknown ids give an APIError 404.
func (c *Client) State(ctx context.Context, entityID string) (State, error) {
	if err := checkEntityID(entityID); err != nil {
		return State{}, err
	}
	var out State
	err := c.getJSON(ctx, "/api/states/"+url.PathEscape(entityID), nil, &out)
	return out, err
}

// PostState creates or overwrites an entity's state in the state machine (POST
// /api/states/<entity_id>). It does not talk to the device. created is true for a new entity.
func (c *Client) PostState(ctx context.Context, entityID string, upd StateUpdate) (st State, created bool, err error) {
	if err := checkEntityID(entityID); err != nil {
		return State{}, false, err
	}
	err = c.roundTrip(ctx, request{method: http.MethodPost, path: "/api/states/" + url.PathEscape(entityID), body: upd},
		func(resp *http.Response) error {
			created = resp.StatusCode == http.StatusCreated
			return decodeJSON(resp.Body, &st)
		})
	return st, created, err
}

// CallService calls domain.service and waits for it to finish (POST /api/services/<d>/<s>).
// changed lists the states the call changed; response is the service's answer when
// returnResponse is set (HA refuses the flag for services that return nothing, and requires it
// for services that only return data).
func (c *Client) CallService(ctx context.Context, domain, service string, data map[string]any, returnResponse bool) (changed []State, response json.RawMessage, err error) {
	if err := checkSlug("domain", domain); err != nil {
		return nil, nil, err
	}
	if err := checkSlug("service", service); err != nil {
		return nil, nil, err
	}
	req := request{method: http.MethodPost, path: "/api/services/" + domain + "/" + service}
	if data != nil {
		req.body = data
	} else {
		req.body = []byte("{}")
	}
	if !returnResponse {
		err = c.doJSON(ctx, req, &changed)
		return changed, nil, err
	}
	req.query = url.Values{"return_response": {""}}
	var out struct {
		ChangedStates   []State         `json:"changed_states"`
		ServiceResponse json.RawMessage `json:"service_response"`
	}
	err = c.doJSON(ctx, req, &out)
	return out.ChangedStates, out.ServiceResponse, err
}

// FireEvent fires an event on HA's bus (POST /api/events/<event_type>); data may be nil.
func (c *Client) FireEvent(ctx context.Context, eventType string, data map[string]any) error {
	if eventType == "" || strings.ContainsAny(eventType, "/?#") || !validHeaderValue(eventType) {
		return fmt.Errorf("homeassistant: event_type %q is not valid: use a name like \"my_custom_event\"", eventType)
	}
	req := request{method: http.MethodPost, path: "/api/events/" + url.PathEscape(eventType)}
	if data != nil {
		req.body = data
	}
	return c.doJSON(ctx, req, nil)
}

// Events lists event types that have listeners (GET /api/events).
func (c *Client) Events(ctx context.Context) ([]EventListener, error) {
	var out []EventListener
	err := c.getJSON(ctx, "/api/events", nil, &out)
	return out, err
}

// Services lists every service by domain (GET /api/services).
func (c *Client) Services(ctx context.Context) ([]ServiceDomain, error) {
	var out []ServiceDomain
	err := c.getJSON(ctx, "/api/services", nil, &out)
	return out, err
}

// RenderTemplate renders a Jinja template (POST /api/template) and returns the text HA produced.
func (c *Client) RenderTemplate(ctx context.Context, template string, variables map[string]any) (string, error) {
	if strings.TrimSpace(template) == "" {
		return "", errors.New(`homeassistant: template is empty: pass a Jinja template, e.g. "{{ states('sun.sun') }}"`)
	}
	body := map[string]any{"template": template}
	if variables != nil {
		body["variables"] = variables
	}
	var text []byte
	err := c.roundTrip(ctx, request{method: http.MethodPost, path: "/api/template", body: body},
		func(resp *http.Response) error {
			var err error
			text, _, err = readText(resp, maxTextBody)
			return err
		})
	return string(text), err
}

// HandleIntent runs a conversation intent (POST /api/intent/handle; needs `intent:` in
// configuration.yaml) and returns HA's intent response.
func (c *Client) HandleIntent(ctx context.Context, name string, data map[string]any) (json.RawMessage, error) {
	if strings.TrimSpace(name) == "" {
		return nil, errors.New(`homeassistant: intent name is empty, e.g. "HassTurnOn"`)
	}
	body := map[string]any{"name": name}
	if data != nil {
		body["data"] = data
	}
	var out json.RawMessage
	err := c.doJSON(ctx, request{method: http.MethodPost, path: "/api/intent/handle", body: body}, &out)
	return out, err
}

// checkEntityID enforces HA's "<domain>.<object_id>" shape before it goes into a URL.
func checkEntityID(id string) error {
	domain, object, ok := strings.Cut(id, ".")
	if !ok || !isSlug(domain) || !isSlug(object) {
		return fmt.Errorf(`homeassistant: entity_id %q is not valid: use "<domain>.<object_id>" in lower case, e.g. "light.kitchen"`, id)
	}
	return nil
}

func checkSlug(field, v string) error {
	if !isSlug(v) {
		return fmt.Errorf("homeassistant: %s %q is not valid: use lower-case letters, digits and underscores, e.g. \"turn_on\"", field, v)
	}
	return nil
}

// isSlug matches HA's slug rule for domains, services and object ids.
func isSlug(s string) bool {
	if s == "" || len(s) > 255 {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !(b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '_') {
			return false
		}
	}
	return true
}

package homeassistant

import (
	"context"
	"encoding/json"
)

// callAs is Call for commands whose whole result decodes into one Go value.
func callAs[T any](ctx context.Context, c *Client, msgType string, payload any) (T, error) {
	var out T
	err := c.Call(ctx, msgType, payload, &out)
	return out, err
}

// ServiceTarget is what a service call acts on; empty members are left out.
type ServiceTarget struct {
	EntityID []string `json:"entity_id,omitempty"`
	DeviceID []string `json:"device_id,omitempty"`
	AreaID   []string `json:"area_id,omitempty"`
	LabelID  []string `json:"label_id,omitempty"`
}

// ConfigValidation is validate_config's verdict on one part of an automation or script.
type ConfigValidation struct {
	Valid bool   `json:"valid"`
	Error string `json:"error,omitempty"` // why, when not valid
}

// CallServiceWS calls domain.service over the WebSocket (call_service). Unlike CallService
// (REST, which answers a bare 400 or 500), HA's refusals come back as an APIError with its
// reason and Code (service_validation_error, invalid_format, not_found); it reports no changed
// states. response is the service's data when returnResponse is set.
func (c *Client) CallServiceWS(ctx context.Context, domain, service string, data map[string]any, target ServiceTarget, returnResponse bool) (response json.RawMessage, err error) {
	if err := checkSlug("domain", domain); err != nil {
		return nil, err
	}
	if err := checkSlug("service", service); err != nil {
		return nil, err
	}
	msg := struct {
		Domain         string         `json:"domain"`
		Service        string         `json:"service"`
		Data           map[string]any `json:"service_data,omitempty"`
		Target         ServiceTarget  `json:"target"`
		ReturnResponse bool           `json:"return_response,omitempty"`
	}{domain, service, data, target, returnResponse}
	var out struct {
		Response json.RawMessage `json:"response"`
	}
	err = c.Call(ctx, "call_service", msg, &out)
	return out.Response, err
}

// ValidateConfig has HA check parts of an automation or script without saving anything
// (WebSocket validate_config). parts holds any of "triggers", "conditions" and "actions" (HA
// accepts only the plural keys here); the answer has a verdict for each part given.
func (c *Client) ValidateConfig(ctx context.Context, parts map[string]any) (map[string]ConfigValidation, error) {
	return callAs[map[string]ConfigValidation](ctx, c, "validate_config", parts)
}

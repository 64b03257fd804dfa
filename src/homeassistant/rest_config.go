package homeassistant

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// maxCameraImage bounds a camera snapshot; a still frame is far smaller.
const maxCameraImage = 32 << 20

// CheckConfig asks HA to validate configuration.yaml (POST /api/config/core/check_config).
func (c *Client) CheckConfig(ctx context.Context) (CheckConfigResult, error) {
	var out CheckConfigResult
	err := c.doJSON(ctx, request{method: http.MethodPost, path: "/api/config/core/check_config"}, &out)
	return out, err
}

// ErrorLog returns home-assistant.log as text (GET /api/error_log).
func (c *Client) ErrorLog(ctx context.Context) (string, error) {
	var text []byte
	err := c.roundTrip(ctx, request{method: http.MethodGet, path: "/api/error_log"}, func(resp *http.Response) error {
		var err error
		text, _, err = readText(resp, maxTextBody)
		return err
	})
	return string(text), err
}

// CameraProxy returns the current image of a camera entity and its content type (GET
// /api/camera_proxy/<entity_id>).
func (c *Client) CameraProxy(ctx context.Context, entityID string) (image []byte, contentType string, err error) {
	if err := checkEntityID(entityID); err != nil {
		return nil, "", err
	}
	err = c.roundTrip(ctx, request{method: http.MethodGet, path: "/api/camera_proxy/" + url.PathEscape(entityID)},
		func(resp *http.Response) error {
			var err error
			image, contentType, err = readText(resp, maxCameraImage)
			return err
		})
	return image, contentType, err
}

// GetConfigItem reads one automation, script or scene as stored by the UI editor (GET
// /api/config/<kind>/config/<key>). Automations and scenes are keyed by their "id" field,
// scripts by object id. A missing key is an APIError 404.
func (c *Client) GetConfigItem(ctx context.Context, kind ConfigKind, key string) (json.RawMessage, error) {
	path, err := configItemPath(kind, key)
	if err != nil {
		return nil, err
	}
	var out json.RawMessage
	err = c.getJSON(ctx, path, nil, &out)
	return out, err
}

// SaveConfigItem creates or replaces an item and lets HA reload the domain (POST). item must
// encode to a JSON object; HA answers 400 "Message malformed: …" when it fails validation.
func (c *Client) SaveConfigItem(ctx context.Context, kind ConfigKind, key string, item any) error {
	path, err := configItemPath(kind, key)
	if err != nil {
		return err
	}
	body, err := json.Marshal(item)
	if err != nil {
		return fmt.Errorf("homeassistant: encoding %s %q: %w", kind, key, err)
	}
	if trimmed := strings.TrimSpace(string(body)); !strings.HasPrefix(trimmed, "{") {
		return fmt.Errorf("homeassistant: %s %q must be a JSON object (the full item, e.g. {\"alias\": \"…\"})", kind, key)
	}
	return c.doJSON(ctx, request{method: http.MethodPost, path: path, body: body}, nil)
}

// DeleteConfigItem removes an item; HA answers 400 "Resource not found" for an unknown key.
func (c *Client) DeleteConfigItem(ctx context.Context, kind ConfigKind, key string) error {
	path, err := configItemPath(kind, key)
	if err != nil {
		return err
	}
	return c.doJSON(ctx, request{method: http.MethodDelete, path: path}, nil)
}

func configItemPath(kind ConfigKind, key string) (string, error) {
	switch kind {
	case KindAutomation, KindScene:
		if key == "" || strings.ContainsAny(key, "/?#\\") || !validHeaderValue(key) || len(key) > 255 {
			return "", fmt.Errorf(`homeassistant: %s id %q is not valid: use the item's "id", e.g. "1718000000000"`, kind, key)
		}
	case KindScript:
		if !isSlug(key) {
			return "", fmt.Errorf(`homeassistant: script key %q is not valid: use the object id (lower case, digits, underscores), e.g. "morning_routine"`, key)
		}
	default:
		return "", fmt.Errorf(`homeassistant: config kind %q is not valid: use "automation", "script" or "scene"`, kind)
	}
	return "/api/config/" + string(kind) + "/config/" + url.PathEscape(key), nil
}

package homeassistant

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
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

// CoreLogs returns the last lines (0: the Supervisor's default) of Home Assistant's log from
// the Supervisor's journal through core's hassio view (GET /api/hassio/core/logs, admins
// only), as plain text without colours. It is where the log lives on HA OS and Supervised
// installs, whose /api/error_log is 404; an APIError 404 here means there is no Supervisor.
// (WebSocket supervisor/api cannot carry it: core decodes every Supervisor answer as JSON.)
func (c *Client) CoreLogs(ctx context.Context, lines int) (string, error) {
	q := url.Values{"no_colors": {""}}
	if lines > 0 {
		q.Set("lines", strconv.Itoa(lines))
	}
	var text []byte
	err := c.roundTrip(ctx, request{method: http.MethodGet, path: "/api/hassio/core/logs", query: q, accept: "text/plain"}, func(resp *http.Response) error {
		var err error
		text, _, err = readText(resp, maxTextBody)
		return err
	})
	return string(text), err
}

// Log is Home Assistant's log and where it came from: "error_log" (home-assistant.log
// through /api/error_log) or, when that route is 404 as on every HA OS and Supervised
// install, "supervisor" (CoreLogs, the last lines). Both 404: HA serves no log at all.
func (c *Client) Log(ctx context.Context, lines int) (text, source string, err error) {
	text, err = c.ErrorLog(ctx)
	if !IsStatus(err, http.StatusNotFound) {
		return text, "error_log", err
	}
	text, err = c.CoreLogs(ctx, lines)
	if IsStatus(err, http.StatusNotFound) {
		return "", "", fmt.Errorf("homeassistant: no log: /api/error_log is 404 (file logging is off) and so is /api/hassio/core/logs (no Supervisor): %w", err)
	}
	return text, "supervisor", err
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

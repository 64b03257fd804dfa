package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// Addon is one row of GET /addons (installed add-ons; "apps" in newer HA wording).
type Addon struct {
	Name            string  `json:"name"`
	Slug            string  `json:"slug"`
	Description     string  `json:"description"`
	Advanced        bool    `json:"advanced"`
	Stage           string  `json:"stage"`
	Repository      string  `json:"repository"`
	Version         string  `json:"version"`
	VersionLatest   string  `json:"version_latest"`
	UpdateAvailable bool    `json:"update_available"`
	Installed       bool    `json:"installed"`
	Detached        bool    `json:"detached"`
	Available       bool    `json:"available"`
	Build           bool    `json:"build"`
	URL             *string `json:"url"`
	Icon            bool    `json:"icon"`
	Logo            bool    `json:"logo"`
	State           string  `json:"state"` // started | stopped | startup | error | unknown
	SystemManaged   bool    `json:"system_managed"`
}

// AddonInfo is GET /addons/<slug>/info; the Supervisor returns far more than is typed here, so
// the whole object is kept in Raw.
type AddonInfo struct {
	Name            string          `json:"name"`
	Slug            string          `json:"slug"`
	Description     string          `json:"description"`
	State           string          `json:"state"`
	Version         string          `json:"version"`
	VersionLatest   string          `json:"version_latest"`
	UpdateAvailable bool            `json:"update_available"`
	Repository      string          `json:"repository"`
	Boot            string          `json:"boot"` // auto | manual
	AutoUpdate      bool            `json:"auto_update"`
	Watchdog        bool            `json:"watchdog"`
	Protected       bool            `json:"protected"`
	Options         map[string]any  `json:"options"`
	Schema          json.RawMessage `json:"schema"`
	Arch            []string        `json:"arch"`
	Hostname        string          `json:"hostname"`
	IPAddress       string          `json:"ip_address"`
	Ingress         bool            `json:"ingress"`
	IngressURL      *string         `json:"ingress_url"`
	IngressPanel    *bool           `json:"ingress_panel"`
	WebUI           *string         `json:"webui"`
	Network         json.RawMessage `json:"network"`
	Raw             json.RawMessage `json:"-"`
}

// Addons lists installed add-ons.
func (c *Client) Addons(ctx context.Context) ([]Addon, error) {
	var out struct {
		Addons []Addon `json:"addons"`
	}
	err := c.Do(ctx, http.MethodGet, "/addons", nil, &out)
	return out.Addons, err
}

// AddonInfo describes one add-on; slug "self" is the calling add-on.
func (c *Client) AddonInfo(ctx context.Context, slug string) (AddonInfo, error) {
	if err := checkSlug(slug); err != nil {
		return AddonInfo{}, err
	}
	return getInfo[AddonInfo](ctx, c, "/addons/"+slug+"/info", func(v *AddonInfo, raw json.RawMessage) { v.Raw = raw })
}

// AddonAction starts, stops, restarts, uninstalls, installs or updates an add-on. Install and
// update go through the store endpoints (the /addons/<slug>/install|update forms are deprecated).
// These calls block until the Supervisor has finished.
func (c *Client) AddonAction(ctx context.Context, slug, action string) error {
	if err := checkSlug(slug); err != nil {
		return err
	}
	var path string
	switch action {
	case "start", "stop", "restart", "uninstall":
		path = "/addons/" + slug + "/" + action
	case "install", "update":
		path = "/store/addons/" + slug + "/" + action
	default:
		return fmt.Errorf(`supervisor: add-on action %q is not valid: use start, stop, restart, install, update or uninstall`, action)
	}
	return c.Do(ctx, http.MethodPost, path, nil, nil)
}

// checkSlug keeps add-on slugs (e.g. "core_ssh", "a0d7b954_vscode", "self") from steering the
// request path elsewhere.
func checkSlug(slug string) error {
	ok := slug != "" && len(slug) <= 128
	for i := 0; ok && i < len(slug); i++ {
		b := slug[i]
		ok = b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == '-' || b == '.'
	}
	if !ok || slug == "." || slug == ".." {
		return fmt.Errorf(`supervisor: add-on slug %q is not valid: use the slug shown in the add-on list, e.g. "core_ssh"`, slug)
	}
	return nil
}

// getInfo decodes an info object into its typed form and keeps the untyped original.
func getInfo[T any](ctx context.Context, c *Client, path string, keep func(*T, json.RawMessage)) (T, error) {
	var raw json.RawMessage
	var out T
	if err := c.Do(ctx, http.MethodGet, path, nil, &raw); err != nil {
		return out, err
	}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			return out, fmt.Errorf("supervisor: GET %s: decoding data: %w", path, err)
		}
	}
	keep(&out, raw)
	return out, nil
}

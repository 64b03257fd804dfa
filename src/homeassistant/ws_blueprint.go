package homeassistant

import (
	"context"
	"errors"
)

// Blueprint is one blueprint as HA describes it: its metadata (name, domain, description,
// author, source_url, input…), or in blueprint/list the error that kept HA from loading it.
type Blueprint struct {
	Metadata map[string]any `json:"metadata"`
	Error    string         `json:"error,omitempty"`
}

// BlueprintImport is blueprint/import's answer: the downloaded blueprint, not saved yet.
type BlueprintImport struct {
	SuggestedFilename string    `json:"suggested_filename"`
	RawData           string    `json:"raw_data"` // the YAML to pass to SaveBlueprint
	Blueprint         Blueprint `json:"blueprint"`
	ValidationErrors  []string  `json:"validation_errors"`
	Exists            bool      `json:"exists"`
}

// BlueprintSave is what blueprint/save stores: YAML under blueprints/<Domain>/<Path>.yaml.
type BlueprintSave struct {
	Domain        string `json:"domain"`
	Path          string `json:"path"` // without .yaml
	YAML          string `json:"yaml"`
	SourceURL     string `json:"source_url,omitempty"`
	AllowOverride bool   `json:"allow_override,omitempty"`
}

// Blueprints lists the blueprints of a domain ("automation" or "script") by path (WebSocket
// blueprint/list).
func (c *Client) Blueprints(ctx context.Context, domain string) (map[string]Blueprint, error) {
	if err := checkSlug("domain", domain); err != nil {
		return nil, err
	}
	return callAs[map[string]Blueprint](ctx, c, "blueprint/list", map[string]any{"domain": domain})
}

// ImportBlueprint has HA download a blueprint from a URL (GitHub, gist, community forum or a
// .yaml file; WebSocket blueprint/import). Nothing is saved until SaveBlueprint.
func (c *Client) ImportBlueprint(ctx context.Context, url string) (BlueprintImport, error) {
	if url == "" {
		return BlueprintImport{}, errors.New("homeassistant: blueprint url is empty")
	}
	return callAs[BlueprintImport](ctx, c, "blueprint/import", map[string]any{"url": url})
}

// SaveBlueprint stores a blueprint (WebSocket blueprint/save). overridesExisting is true when
// it replaced a file; without AllowOverride an existing file is an APIError with Code
// "already_exists".
func (c *Client) SaveBlueprint(ctx context.Context, bp BlueprintSave) (overridesExisting bool, err error) {
	var out struct {
		OverridesExisting bool `json:"overrides_existing"`
	}
	err = c.Call(ctx, "blueprint/save", bp, &out)
	return out.OverridesExisting, err
}

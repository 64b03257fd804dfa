package homeassistant

import (
	"context"
	"encoding/json"
	"errors"
)

// Helpers made in the UI are storage collections (helpers/collection.py
// StorageCollectionWebsocket): <domain>/list answers the items, <domain>/create and
// <domain>/update answer the stored item, <domain>/delete answers null. An item is
// {"id": ..., "name": ..., <the domain's fields>}; update replaces the whole item. An unknown id is
// an APIError with Code "not_found" ("Unable to find <domain>_id <id>"); a refused config one with
// Code "invalid_format" in voluptuous's words.

// HelperDomains are the helper integrations with a storage collection.
var HelperDomains = []string{"input_boolean", "input_button", "input_number", "input_select", "input_text",
	"input_datetime", "counter", "timer", "schedule"}

// HelperItem is one stored helper configuration, id included.
type HelperItem map[string]any

// ID is the item's collection id (the unique id of its entity).
func (h HelperItem) ID() string { s, _ := h["id"].(string); return s }

// Name is the item's name.
func (h HelperItem) Name() string { s, _ := h["name"].(string); return s }

// Helpers lists a domain's stored helpers (WebSocket <domain>/list).
func (c *Client) Helpers(ctx context.Context, domain string) ([]HelperItem, error) {
	if err := checkHelperDomain(domain); err != nil {
		return nil, err
	}
	return callAs[[]HelperItem](ctx, c, domain+"/list", nil)
}

// CreateHelper stores a new helper and returns it with its id (WebSocket <domain>/create).
func (c *Client) CreateHelper(ctx context.Context, domain string, cfg map[string]any) (HelperItem, error) {
	if err := checkHelperDomain(domain); err != nil {
		return nil, err
	}
	return callAs[HelperItem](ctx, c, domain+"/create", withoutID(cfg, ""))
}

// UpdateHelper replaces a helper's configuration (WebSocket <domain>/update with <domain>_id).
func (c *Client) UpdateHelper(ctx context.Context, domain, id string, cfg map[string]any) (HelperItem, error) {
	if err := checkHelperDomain(domain); err != nil {
		return nil, err
	}
	msg := withoutID(cfg, domain+"_id")
	msg[domain+"_id"] = id
	return callAs[HelperItem](ctx, c, domain+"/update", msg)
}

// DeleteHelper removes a helper and its entity (WebSocket <domain>/delete).
func (c *Client) DeleteHelper(ctx context.Context, domain, id string) error {
	if err := checkHelperDomain(domain); err != nil {
		return err
	}
	var out json.RawMessage
	return c.Call(ctx, domain+"/delete", map[string]any{domain + "_id": id}, &out)
}

// withoutID copies cfg without the keys the command sets itself ("id" is the collection's).
func withoutID(cfg map[string]any, key string) map[string]any {
	out := make(map[string]any, len(cfg)+1)
	for k, v := range cfg {
		if k != "id" && k != key {
			out[k] = v
		}
	}
	return out
}

func checkHelperDomain(domain string) error {
	for _, d := range HelperDomains {
		if d == domain {
			return nil
		}
	}
	return errors.New("homeassistant: " + domain + " is not a helper domain with a storage collection")
}

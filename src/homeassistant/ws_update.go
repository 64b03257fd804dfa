package homeassistant

import "context"

// UpdateEntityFeature bits (components/update/const.py): what an update entity can do.
const (
	UpdateInstall         = 1
	UpdateSpecificVersion = 2
	UpdateProgress        = 4
	UpdateBackup          = 8
	UpdateReleaseNotes    = 16
)

// UpdateReleaseNotes reads an update entity's full release notes (WS update/release_notes):
// Markdown, or "" when the software publishes none. An unknown entity is an *APIError with Code
// "not_found", one without release notes Code "not_supported".
func (c *Client) UpdateReleaseNotes(ctx context.Context, entityID string) (string, error) {
	var out *string
	if err := c.Call(ctx, "update/release_notes", map[string]any{"entity_id": entityID}, &out); err != nil {
		return "", err
	}
	if out == nil {
		return "", nil
	}
	return *out, nil
}

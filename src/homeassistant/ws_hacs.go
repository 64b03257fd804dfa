package homeassistant

import "context"

// HACSRepository is one repository as HACS's WebSocket API describes it: hacs/repositories/list
// sends the summary members, hacs/repository/info adds the details (description, releases,
// local path).
type HACSRepository struct {
	ID               string   `json:"id"`
	FullName         string   `json:"full_name"` // owner/name on GitHub
	Name             string   `json:"name"`
	Category         string   `json:"category"` // integration | plugin | theme | template | python_script | appdaemon
	Installed        bool     `json:"installed"`
	InstalledVersion *string  `json:"installed_version,omitempty"`
	AvailableVersion *string  `json:"available_version,omitempty"`
	PendingUpgrade   bool     `json:"pending_upgrade,omitempty"`
	Status           string   `json:"status,omitempty"`
	Description      string   `json:"description,omitempty"`
	Domain           *string  `json:"domain,omitempty"`
	Stars            int      `json:"stars,omitempty"`
	Releases         []string `json:"releases,omitempty"`
	LocalPath        string   `json:"local_path,omitempty"`
	Homeassistant    *string  `json:"homeassistant,omitempty"` // the minimum HA version it needs
}

// HACSRepositories lists the repositories HACS knows (WS hacs/repositories/list), only those of
// the given categories when any are given. Without HACS the error is an *APIError with Code
// "unknown_command".
func (c *Client) HACSRepositories(ctx context.Context, categories ...string) ([]HACSRepository, error) {
	payload := map[string]any{}
	if len(categories) > 0 {
		payload["categories"] = categories
	}
	var out []HACSRepository
	err := c.Call(ctx, "hacs/repositories/list", payload, &out)
	return out, err
}

// HACSRepositoryInfo describes one repository by its id (WS hacs/repository/info); an unknown id
// is an *APIError with Code "repository_not_found".
func (c *Client) HACSRepositoryInfo(ctx context.Context, id string) (HACSRepository, error) {
	var out HACSRepository
	err := c.Call(ctx, "hacs/repository/info", map[string]any{"repository_id": id}, &out)
	return out, err
}

// HACSDownload installs or updates a repository (WS hacs/repository/download) to version, or
// to its latest release when version is "". HACS refuses an unknown version with Code "error".
func (c *Client) HACSDownload(ctx context.Context, id, version string) error {
	msg := map[string]any{"repository": id}
	if version != "" {
		msg["version"] = version
	}
	return c.Call(ctx, "hacs/repository/download", msg, nil)
}

// HACSRemove uninstalls a repository and deletes its files (WS hacs/repository/remove).
func (c *Client) HACSRemove(ctx context.Context, id string) error {
	return c.Call(ctx, "hacs/repository/remove", map[string]any{"repository": id}, nil)
}

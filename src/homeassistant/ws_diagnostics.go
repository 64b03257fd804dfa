package homeassistant

import "context"

// ConfigEntry is one set-up integration as WS config_entries/get lists it (the members a health
// check needs; HA sends more).
type ConfigEntry struct {
	EntryID    string  `json:"entry_id"`
	Domain     string  `json:"domain"`
	Title      string  `json:"title"`
	State      string  `json:"state"` // loaded | setup_error | setup_retry | not_loaded | failed_unload | migration_error | setup_in_progress
	DisabledBy *string `json:"disabled_by,omitempty"`
	Reason     *string `json:"reason,omitempty"` // why setup failed
	Source     string  `json:"source,omitempty"` // user | discovery | import | ...
}

// ConfigEntries lists the config entries (WS config_entries/get, administrators only), only
// those of one integration when domain is not "".
func (c *Client) ConfigEntries(ctx context.Context, domain string) ([]ConfigEntry, error) {
	payload := map[string]any{}
	if domain != "" {
		payload["domain"] = domain
	}
	var out []ConfigEntry
	err := c.Call(ctx, "config_entries/get", payload, &out)
	return out, err
}

// RepairIssue is one issue of HA's repairs dashboard (WS repairs/list_issues).
type RepairIssue struct {
	Domain            string  `json:"domain"`
	IssueID           string  `json:"issue_id"`
	Severity          string  `json:"severity"` // critical | error | warning
	TranslationKey    string  `json:"translation_key"`
	Ignored           bool    `json:"ignored"`
	BreaksInHAVersion *string `json:"breaks_in_ha_version"`
	IsFixable         bool    `json:"is_fixable"`
}

// RepairIssues lists the repair issues, ignored ones included (WS repairs/list_issues).
func (c *Client) RepairIssues(ctx context.Context) ([]RepairIssue, error) {
	var out struct {
		Issues []RepairIssue `json:"issues"`
	}
	err := c.Call(ctx, "repairs/list_issues", nil, &out)
	return out.Issues, err
}

// RecorderInfo is the recorder's status (WS recorder/info).
type RecorderInfo struct {
	Backlog             *int `json:"backlog"` // null while the recorder is not running
	MaxBacklog          int  `json:"max_backlog"`
	MigrationInProgress bool `json:"migration_in_progress"`
	MigrationIsLive     bool `json:"migration_is_live"`
	Recording           bool `json:"recording"`
	ThreadRunning       bool `json:"thread_running"`
}

// RecorderInfo reports whether the recorder is recording (WS recorder/info); without the
// recorder the error is an *APIError with Code "unknown_command".
func (c *Client) RecorderInfo(ctx context.Context) (RecorderInfo, error) {
	var out RecorderInfo
	err := c.Call(ctx, "recorder/info", nil, &out)
	return out, err
}

package homeassistant

import (
	"context"
	"strings"
)

// Core's backup integration (components/backup/websocket.py): the way to make and restore
// backups when hamcp has no Supervisor of its own. Backups live with agents: backup.local on a
// Container or Core install, hassio.local where a Supervisor keeps them, cloud agents beside.

// CoreBackup is one backup of backup/info and backup/details.
type CoreBackup struct {
	BackupID              string                     `json:"backup_id"`
	Name                  string                     `json:"name"`
	Date                  string                     `json:"date"`
	HomeAssistantIncluded bool                       `json:"homeassistant_included"`
	HomeAssistantVersion  *string                    `json:"homeassistant_version"`
	DatabaseIncluded      bool                       `json:"database_included"`
	Folders               []string                   `json:"folders"`
	Addons                []CoreBackupAddon          `json:"addons"`
	Agents                map[string]CoreBackupAgent `json:"agents"`
	FailedAgentIDs        []string                   `json:"failed_agent_ids"`
}

// CoreBackupAddon is an add-on inside a backup.
type CoreBackupAddon struct {
	Slug    string `json:"slug"`
	Name    string `json:"name"`
	Version string `json:"version"`
}

// CoreBackupAgent is what one agent holds of a backup.
type CoreBackupAgent struct {
	Protected bool  `json:"protected"`
	Size      int64 `json:"size"` // bytes
}

// CoreBackupEvent is the manager's last action (last_action_event): what it did and how it ended.
type CoreBackupEvent struct {
	ManagerState string  `json:"manager_state"` // create_backup | restore_backup | receive_backup
	State        string  `json:"state"`         // in_progress | completed | failed | core_restart
	Stage        *string `json:"stage"`
	Reason       *string `json:"reason"`
}

// CoreBackupInfo is backup/info.
type CoreBackupInfo struct {
	Backups         []CoreBackup      `json:"backups"`
	AgentErrors     map[string]string `json:"agent_errors"`
	State           string            `json:"state"` // idle | create_backup | restore_backup | receive_backup | blocked
	LastActionEvent *CoreBackupEvent  `json:"last_action_event"`
}

// LocalAgent is the agent of the backup that keeps it on this machine, preferring hassio.local
// and backup.local, else the first one ("" for none).
func (b CoreBackup) LocalAgent() string {
	first := ""
	for id := range b.Agents {
		if id == "hassio.local" || id == "backup.local" {
			return id
		}
		if first == "" || id < first {
			first = id
		}
	}
	return first
}

// Protected reports whether any copy of the backup is encrypted.
func (b CoreBackup) Protected() bool {
	for _, a := range b.Agents {
		if a.Protected {
			return true
		}
	}
	return false
}

// Size is the largest copy's size in bytes.
func (b CoreBackup) Size() int64 {
	var n int64
	for _, a := range b.Agents {
		n = max(n, a.Size)
	}
	return n
}

// BackupInfo lists every backup the agents hold and the manager's state (WS backup/info).
// Without the backup integration the error is an *APIError with Code "unknown_command".
func (c *Client) BackupInfo(ctx context.Context) (CoreBackupInfo, error) {
	var out CoreBackupInfo
	err := c.Call(ctx, "backup/info", nil, &out)
	return out, err
}

// BackupDetails describes one backup (WS backup/details); nil when no agent has it.
func (c *Client) BackupDetails(ctx context.Context, id string) (*CoreBackup, error) {
	var out struct {
		Backup *CoreBackup `json:"backup"`
	}
	err := c.Call(ctx, "backup/details", map[string]any{"backup_id": id}, &out)
	return out.Backup, err
}

// BackupAgents lists the agent ids backups can be written to (WS backup/agents/info).
func (c *Client) BackupAgents(ctx context.Context) ([]string, error) {
	var out struct {
		Agents []struct {
			AgentID string `json:"agent_id"`
		} `json:"agents"`
	}
	if err := c.Call(ctx, "backup/agents/info", nil, &out); err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(out.Agents))
	for _, a := range out.Agents {
		ids = append(ids, a.AgentID)
	}
	return ids, nil
}

// LocalBackupAgent picks the agent that stores backups on this machine.
func LocalBackupAgent(agents []string) string {
	for _, want := range []string{"hassio.local", "backup.local"} {
		for _, a := range agents {
			if a == want {
				return a
			}
		}
	}
	for _, a := range agents {
		if strings.HasSuffix(a, ".local") {
			return a
		}
	}
	return ""
}

// BackupRequest is what backup/generate makes: always Home Assistant's configuration; the
// database unless ExcludeDatabase.
type BackupRequest struct {
	AgentIDs        []string
	Name            string
	Password        string
	ExcludeDatabase bool
}

// GenerateBackup starts a backup and returns its job id at once (WS backup/generate); backup/info's
// state is create_backup until it is written. On a Container or Core install the job id is also
// the new backup's id.
func (c *Client) GenerateBackup(ctx context.Context, r BackupRequest) (jobID string, err error) {
	msg := map[string]any{"agent_ids": r.AgentIDs, "include_homeassistant": true, "include_database": !r.ExcludeDatabase}
	if r.Name != "" {
		msg["name"] = r.Name
	}
	if r.Password != "" {
		msg["password"] = r.Password
	}
	var out struct {
		BackupJobID string `json:"backup_job_id"`
	}
	err = c.Call(ctx, "backup/generate", msg, &out)
	return out.BackupJobID, err
}

// RestoreBackup restores Home Assistant's configuration (and its database unless
// KeepDatabase) from a backup held by agentID (WS backup/restore). Home Assistant restarts to
// do it, so the call usually ends with the connection instead of an answer.
func (c *Client) RestoreBackup(ctx context.Context, id, agentID, password string, keepDatabase bool) error {
	msg := map[string]any{"backup_id": id, "agent_id": agentID, "restore_homeassistant": true, "restore_database": !keepDatabase}
	if password != "" {
		msg["password"] = password
	}
	return c.Call(ctx, "backup/restore", msg, nil)
}

// DeleteBackup deletes a backup from every agent (WS backup/delete) and returns the agents that
// failed. Home Assistant answers the same for an id no agent has.
func (c *Client) DeleteBackup(ctx context.Context, id string) (agentErrors map[string]string, err error) {
	var out struct {
		AgentErrors map[string]string `json:"agent_errors"`
	}
	err = c.Call(ctx, "backup/delete", map[string]any{"backup_id": id}, &out)
	return out.AgentErrors, err
}

package supervisor

import (
	"context"
	"net/http"
)

// Backup is one row of GET /backups.
type Backup struct {
	Slug       string        `json:"slug"`
	Name       string        `json:"name"`
	Date       string        `json:"date"` // ISO-8601
	Type       string        `json:"type"` // full | partial
	Size       float64       `json:"size"` // MB
	Protected  bool          `json:"protected"`
	Compressed bool          `json:"compressed"`
	Location   *string       `json:"location"` // nil: the default backup folder
	Content    BackupContent `json:"content"`
}

// BackupContent says what a backup holds.
type BackupContent struct {
	HomeAssistant bool     `json:"homeassistant"`
	Addons        []string `json:"addons"`
	Folders       []string `json:"folders"`
}

// Backups lists every backup the Supervisor knows.
func (c *Client) Backups(ctx context.Context) ([]Backup, error) {
	var out struct {
		Backups []Backup `json:"backups"`
	}
	err := c.Do(ctx, http.MethodGet, "/backups", nil, &out)
	return out.Backups, err
}

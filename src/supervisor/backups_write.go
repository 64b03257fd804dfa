package supervisor

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"
)

// BackupRequest is what POST /backups/new/full or /backups/new/partial takes. Partial picks the
// endpoint; HomeAssistant, Addons and Folders only count for a partial backup.
type BackupRequest struct {
	Name            string
	Password        string
	ExcludeDatabase bool
	Partial         bool
	HomeAssistant   bool
	Addons          []string
	Folders         []string
}

// RestoreRequest is what POST /backups/<slug>/restore/full or /restore/partial takes.
type RestoreRequest struct {
	Password      string
	Partial       bool
	HomeAssistant bool
	Addons        []string
	Folders       []string
}

// BackupDetail is GET /backups/<slug>/info: the list row plus what it was made with.
type BackupDetail struct {
	Slug              string        `json:"slug"`
	Name              string        `json:"name"`
	Date              string        `json:"date"`
	Type              string        `json:"type"`
	Size              float64       `json:"size"`
	Protected         bool          `json:"protected"`
	Compressed        bool          `json:"compressed"`
	HomeAssistant     *string       `json:"homeassistant"` // the core version inside, nil when core is not in it
	ExcludeDatabase   bool          `json:"homeassistant_exclude_database"`
	Folders           []string      `json:"folders"`
	Addons            []BackupAddon `json:"addons"`
	SupervisorVersion string        `json:"supervisor_version"`
	Location          *string       `json:"location"`
	Content           BackupContent `json:"content"`
}

// BackupAddon is one add-on inside a backup.
type BackupAddon struct {
	Slug    string `json:"slug"`
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Job is GET /jobs/<uuid>: a background job of the Supervisor (backups, restores, updates).
type Job struct {
	UUID      string     `json:"uuid"`
	Name      string     `json:"name"`
	Reference *string    `json:"reference"` // a backup job's reference is the backup's slug
	Progress  float64    `json:"progress"`
	Stage     *string    `json:"stage"`
	Done      bool       `json:"done"`
	Errors    []JobError `json:"errors"`
	Created   string     `json:"created"`
}

// JobError is one failure a job reports.
type JobError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// idRe is a backup slug or a job uuid: hex and word characters, never a path.
var idRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ErrBadID is a slug or job id that cannot be a path segment of the Supervisor's API.
var ErrBadID = errors.New("supervisor: not a backup slug or job id")

func checkID(id string) error {
	if !idRe.MatchString(id) {
		return ErrBadID
	}
	return nil
}

// NewBackup starts a backup in the background (the Supervisor answers once it is under way, with
// its job id; slug is set only when it already finished). Backups of a large /config or of
// add-on data take minutes: follow the job with Job.
func (c *Client) NewBackup(ctx context.Context, r BackupRequest) (jobID, slug string, err error) {
	body := map[string]any{"background": true}
	if r.Name != "" {
		body["name"] = r.Name
	}
	if r.Password != "" {
		body["password"] = r.Password
	}
	if r.ExcludeDatabase {
		body["homeassistant_exclude_database"] = true
	}
	path := "/backups/new/full"
	if r.Partial {
		path = "/backups/new/partial"
		partsOf(body, r.HomeAssistant, r.Addons, r.Folders)
	}
	var out struct {
		JobID string `json:"job_id"`
		Slug  string `json:"slug"`
	}
	err = c.Do(ctx, http.MethodPost, path, body, &out)
	return out.JobID, out.Slug, err
}

// RestoreBackup starts restoring a backup in the background and returns the job id. A full
// restore, or one that includes Home Assistant, restarts core: its API goes away meanwhile.
func (c *Client) RestoreBackup(ctx context.Context, slug string, r RestoreRequest) (jobID string, err error) {
	if err := checkID(slug); err != nil {
		return "", err
	}
	body := map[string]any{"background": true}
	if r.Password != "" {
		body["password"] = r.Password
	}
	path := "/backups/" + slug + "/restore/full"
	if r.Partial {
		path = "/backups/" + slug + "/restore/partial"
		partsOf(body, r.HomeAssistant, r.Addons, r.Folders)
	}
	var out struct {
		JobID string `json:"job_id"`
	}
	err = c.Do(ctx, http.MethodPost, path, body, &out)
	return out.JobID, err
}

// DeleteBackup removes a backup from every location that holds it.
func (c *Client) DeleteBackup(ctx context.Context, slug string) error {
	if err := checkID(slug); err != nil {
		return err
	}
	return c.Do(ctx, http.MethodDelete, "/backups/"+slug, nil, nil)
}

// BackupInfo describes one backup; an unknown slug is an *APIError with Status 404.
func (c *Client) BackupInfo(ctx context.Context, slug string) (BackupDetail, error) {
	var out BackupDetail
	if err := checkID(slug); err != nil {
		return out, err
	}
	err := c.Do(ctx, http.MethodGet, "/backups/"+slug+"/info", nil, &out)
	return out, err
}

// Job reads a background job; an unknown id is an *APIError with Status 404.
func (c *Client) Job(ctx context.Context, id string) (Job, error) {
	var out Job
	if err := checkID(id); err != nil {
		return out, err
	}
	err := c.Do(ctx, http.MethodGet, "/jobs/"+url.PathEscape(id), nil, &out)
	return out, err
}

// partsOf adds what a partial backup or restore covers, as the Supervisor's schemas name it.
func partsOf(body map[string]any, homeAssistant bool, addons, folders []string) {
	if homeAssistant {
		body["homeassistant"] = true
	}
	if len(addons) > 0 {
		body["addons"] = addons
	}
	if len(folders) > 0 {
		body["folders"] = folders
	}
}

package hubitat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// The hub's own database backups, as its Backup and Restore page drives them (upstream:
// mcp-item-backups-lib _listHubBackups, _restoreHubBackup, toolDeleteHubBackup; the download
// link is the page's downloadLocalBackup in resources/hub2-source/vue-hub2.min.js):
//
//	GET /hub2/localBackups                      [{name, createTime, createTimeOrig, size}]
//	GET /hub/backupDB?fileName=<name>           the .lzf file
//	GET /hub2/restoreLocalBackup?fileName=<name> {success[, message]}; the hub then reboots
//	GET /hub2/deleteLocalBackup?fileName=<name>  {success[, message]}

// LocalBackup is one backup file the hub keeps.
type LocalBackup struct {
	Name      string    `json:"name"`
	Created   string    `json:"createTime,omitempty"` // as the hub shows it
	CreatedAt time.Time `json:"-"`                    // from createTimeOrig; zero when it did not parse
	Size      int64     `json:"size"`
}

// ErrBackupNotFound is a backup name the hub does not list.
var ErrBackupNotFound = errors.New("the hub has no local backup of that name")

// LocalBackups lists the hub's backups, newest first.
func (c *Client) LocalBackups(ctx context.Context) ([]LocalBackup, error) {
	r, err := c.Admin(ctx, http.MethodGet, "/hub2/localBackups", nil)
	if err != nil {
		return nil, err
	}
	return ParseLocalBackups(r.Body)
}

// ParseLocalBackups reads /hub2/localBackups; createTimeOrig is "2026-04-23T07:01:24+0000" (or
// without the offset, read as UTC).
func ParseLocalBackups(b []byte) ([]LocalBackup, error) {
	var w []struct {
		Name           string          `json:"name"`
		CreateTime     string          `json:"createTime"`
		CreateTimeOrig string          `json:"createTimeOrig"`
		Size           json.RawMessage `json:"size"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("hubitat /hub2/localBackups: expected a JSON list: %w", err)
	}
	out := make([]LocalBackup, 0, len(w))
	for _, x := range w {
		if x.Name == "" {
			continue
		}
		lb := LocalBackup{Name: x.Name, Created: x.CreateTime, Size: int64(num(x.Size))}
		lb.CreatedAt, _ = ParseHubTime(x.CreateTimeOrig)
		out = append(out, lb)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.After(out[j].CreatedAt) })
	return out, nil
}

// validBackupName refuses names that are no backup file name; the hub's own are like
// "2026-04-23~2.4.1.177.lzf".
func validBackupName(name string) error {
	if name == "" || len(name) > 200 || strings.ContainsAny(name, "/\\\x00\r\n") || strings.Contains(name, "..") || name == "latest" {
		return fmt.Errorf("backup name %q is not one of the hub's backup file names", clean(name))
	}
	return nil
}

// findBackup is the listed backup of that name, so no call is made for a name the hub lacks.
func (c *Client) findBackup(ctx context.Context, name string) (LocalBackup, error) {
	if err := validBackupName(name); err != nil {
		return LocalBackup{}, err
	}
	all, err := c.LocalBackups(ctx)
	if err != nil {
		return LocalBackup{}, err
	}
	for _, b := range all {
		if b.Name == name {
			return b, nil
		}
	}
	return LocalBackup{}, fmt.Errorf("%w: %q", ErrBackupNotFound, clean(name))
}

// LocalBackup returns one listed backup.
func (c *Client) LocalBackup(ctx context.Context, name string) (LocalBackup, error) {
	return c.findBackup(ctx, name)
}

// DownloadBackup fetches one of the hub's backup files.
func (c *Client) DownloadBackup(ctx context.Context, name string) ([]byte, error) {
	if _, err := c.findBackup(ctx, name); err != nil {
		return nil, err
	}
	r, err := c.admin(ctx, http.MethodGet, "/hub/backupDB?"+url.Values{"fileName": {name}}.Encode(), nil, c.backupWait)
	if err != nil {
		return nil, err
	}
	if len(r.Body) == 0 || r.JSON != nil || strings.HasPrefix(strings.TrimSpace(r.Text), "<") {
		return nil, fmt.Errorf("hubitat backup %q: the hub sent no backup file (%d bytes)", clean(name), len(r.Body))
	}
	return r.Body, nil
}

// RestoreBackup replaces the hub's whole database with a backup; the hub reboots at once.
func (c *Client) RestoreBackup(ctx context.Context, name string) error {
	if _, err := c.findBackup(ctx, name); err != nil {
		return err
	}
	return c.backupCall(ctx, "/hub2/restoreLocalBackup", name, "restore", 120*time.Second)
}

// DeleteBackup deletes one of the hub's backup files.
func (c *Client) DeleteBackup(ctx context.Context, name string) error {
	if _, err := c.findBackup(ctx, name); err != nil {
		return err
	}
	return c.backupCall(ctx, "/hub2/deleteLocalBackup", name, "delete", c.callTimeout)
}

func (c *Client) backupCall(ctx context.Context, path, name, verb string, timeout time.Duration) error {
	r, err := c.admin(ctx, http.MethodGet, path+"?"+url.Values{"fileName": {name}}.Encode(), nil, timeout)
	if err != nil {
		return err
	}
	return successReply(r, "hubitat refused to "+verb+" backup "+clean(name))
}

// successReply reads the hub2 {success[, message|error]} answer.
func successReply(r AdminReply, what string) error {
	var w struct {
		Success bool   `json:"success"`
		Message string `json:"message"`
		Error   string `json:"error"`
	}
	if r.JSON == nil || json.Unmarshal(r.JSON, &w) != nil {
		return fmt.Errorf("%s: unexpected reply %q", what, clean(r.Text))
	}
	if !w.Success {
		msg := w.Message
		if msg == "" {
			msg = w.Error
		}
		if msg == "" {
			msg = "the hub reported failure"
		}
		return fmt.Errorf("%s: %s", what, clean(msg))
	}
	return nil
}

// PlatformUpdate is /hub/cloud/checkForUpdate's answer (upstream: mcp-system-lib
// toolUpdateFirmware, _parseFirmwareCheck): {version, upgrade, status, releaseNotesUrl, beta,
// ...}. accountEmails is the owner's account, never passed on.
type PlatformUpdate struct {
	Status          string `json:"status"` // UPDATE_AVAILABLE, NO_UPDATE_AVAILABLE, …
	Version         string `json:"version,omitempty"`
	Upgrade         bool   `json:"upgrade"`
	Beta            bool   `json:"beta,omitempty"`
	ReleaseNotesURL string `json:"releaseNotesUrl,omitempty"`
}

// Available says whether the cloud offers a newer platform.
func (p PlatformUpdate) Available() bool {
	return p.Upgrade || strings.EqualFold(p.Status, "UPDATE_AVAILABLE")
}

// CheckPlatformUpdate asks the hub to ask Hubitat's cloud for a platform update.
func (c *Client) CheckPlatformUpdate(ctx context.Context) (PlatformUpdate, error) {
	r, err := c.admin(ctx, http.MethodGet, "/hub/cloud/checkForUpdate", nil, 60*time.Second)
	if err != nil {
		return PlatformUpdate{}, err
	}
	return ParsePlatformUpdate(r.Body)
}

// ParsePlatformUpdate reads a checkForUpdate reply.
func ParsePlatformUpdate(b []byte) (PlatformUpdate, error) {
	var w struct {
		Status          string          `json:"status"`
		Version         json.RawMessage `json:"version"`
		Upgrade         json.RawMessage `json:"upgrade"`
		Beta            json.RawMessage `json:"beta"`
		ReleaseNotesURL string          `json:"releaseNotesUrl"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return PlatformUpdate{}, fmt.Errorf("hubitat /hub/cloud/checkForUpdate: malformed reply: %w", err)
	}
	return PlatformUpdate{Status: w.Status, Version: textOf(w.Version), Upgrade: textOf(w.Upgrade) == "true",
		Beta: textOf(w.Beta) == "true", ReleaseNotesURL: w.ReleaseNotesURL}, nil
}

// ApplyPlatformUpdate starts the download and install of the pending platform update; the hub
// reboots by itself when it is installed. Any non-error reply is the hub's acknowledgement.
func (c *Client) ApplyPlatformUpdate(ctx context.Context) (string, error) {
	r, err := c.admin(ctx, http.MethodGet, "/hub/cloud/updatePlatform", nil, 60*time.Second)
	if err != nil {
		return "", err
	}
	return clean(r.Text), nil
}

// PlatformUpdateStatus is /hub/cloud/checkUpdateStatus: {status: IDLE | DOWNLOADING | …}.
func (c *Client) PlatformUpdateStatus(ctx context.Context) (string, error) {
	r, err := c.Admin(ctx, http.MethodGet, "/hub/cloud/checkUpdateStatus", nil)
	if err != nil {
		return "", err
	}
	var w struct {
		Status string `json:"status"`
	}
	if r.JSON != nil && json.Unmarshal(r.JSON, &w) == nil && w.Status != "" {
		return clean(w.Status), nil
	}
	return clean(r.Text), nil
}

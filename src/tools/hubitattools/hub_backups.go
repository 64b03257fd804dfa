package hubitattools

import (
	"context"
	"errors"
	"fmt"

	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/integrations/hubitat/hubstore"
	"github.com/hamcp/hamcp/src/toolkit"
)

type manageBackupsArgs struct {
	Action string `json:"action" validate:"required,oneof=list download restore delete" example:"list"`
	Name   string `json:"name,omitempty" jsonschema:"download, restore, delete: the backup's name from list" validate:"omitempty,max=200"`
}

func (a manageBackupsArgs) writes() bool { return a.Action == "restore" || a.Action == "delete" }

type hubBackupRow struct {
	Name      string `json:"name"`
	CreatedAt string `json:"createdAt,omitempty"`
	Created   string `json:"createTime,omitempty"`
	SizeBytes int64  `json:"sizeBytes"`
}

type manageBackupsResult struct {
	Action     string                      `json:"action"`
	Backups    *toolkit.List[hubBackupRow] `json:"backups,omitempty"`
	Backup     *hubBackupRow               `json:"backup,omitempty"`
	File       *hubstore.KeptFile          `json:"file,omitempty"`
	LastHamcp  string                      `json:"lastBackupThroughHamcp,omitempty"`
	Message    string                      `json:"message,omitempty"`
	Warning    string                      `json:"warning,omitempty"`
	LastBackup string                      `json:"lastBackup,omitempty"`
}

// restoreReplaces is what a restore throws away, said to the model and to the user.
const restoreReplaces = "It REPLACES the hub's whole database — every device and its settings, every app and rule, " +
	"dashboards, hub variables, modes, rooms and hub settings — with the backup's; every change since that backup is lost, " +
	"and devices paired since then are left without their records. The hub reboots at once and is unreachable for several minutes."

func manageBackups(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[manageBackupsArgs, manageBackupsResult]{
		Name: "hubitat_manage_backups", Toolset: SetAdmin, Title: "Hubitat hub backups",
		Description: "The backups the Hubitat hub keeps of its database: list (newest first), download one into hamcp's data " +
			"folder, restore, delete. Restore is the most dangerous call hamcp has: " + restoreReplaces + " Restore and delete " +
			"need hubitat_create_hub_backup within the hour (so the present is kept) and the user's yes. " +
			"Options: hubitat_admin_read; hubitat_admin_write + hub_admin.",
		Available:   d.availableAdmin,
		Destructive: true,
		Conditional: adminGrant(d, "action restore or delete", manageBackupsArgs.writes),
		Confirm: &toolkit.Confirm[manageBackupsArgs]{When: "action restore or delete (`" + AdminConfirmClass + "`: always asked)",
			Check: func(ctx context.Context, _ *toolkit.Call, a manageBackupsArgs) (toolkit.Ask, error) {
				if !a.writes() {
					return toolkit.Ask{}, nil
				}
				return d.backupAsk(ctx, a)
			}},
		Summary: func(a manageBackupsArgs) string { return a.Action + " " + a.Name },
		Handler: func(ctx context.Context, _ *toolkit.Call, a manageBackupsArgs) (manageBackupsResult, error) {
			switch a.Action {
			case "list":
				return d.listHubBackups(ctx, a)
			case "download":
				return d.downloadHubBackup(ctx, a)
			}
			return d.changeHubBackup(ctx, a)
		},
	})
}

func needBackupName(a manageBackupsArgs) error {
	if a.Name == "" {
		return toolkit.InvalidArg("name", "is required for action "+a.Action+": a backup's name from action list",
			`{"action": "`+a.Action+`", "name": "2026-11-27~2.4.1.177.lzf"}`)
	}
	return nil
}

func backupRow(b hubitat.LocalBackup) hubBackupRow {
	return hubBackupRow{Name: b.Name, CreatedAt: stamp(b.CreatedAt), Created: b.Created, SizeBytes: b.Size}
}

func (d Deps) backupError(ctx context.Context, what string, err error, changed bool) error {
	if errors.Is(err, hubitat.ErrBackupNotFound) {
		return toolkit.NotFound("No hub backup of that name", "hubitat_manage_backups action list gives the names; never guess one")
	}
	return d.adminFailed(ctx, what, err, changed, "")
}

func (d Deps) listHubBackups(ctx context.Context, _ manageBackupsArgs) (manageBackupsResult, error) {
	if err := d.requireAdminRead(); err != nil {
		return manageBackupsResult{}, err
	}
	bs, err := d.Hub.LocalBackups(ctx)
	if err != nil {
		return manageBackupsResult{}, d.backupError(ctx, "Listing the hub's backups", err, false)
	}
	rows := make([]hubBackupRow, 0, len(bs))
	for _, b := range bs {
		rows = append(rows, backupRow(b))
	}
	l := toolkit.Paginate(rows, toolkit.Page{Limit: toolkit.MaxLimit})
	out := manageBackupsResult{Action: "list", Backups: &l}
	if b, ok, err := d.Store.LastHubBackup(ctx); err == nil && ok {
		out.LastHamcp = stamp(b.TakenAt)
	}
	return out, nil
}

func (d Deps) downloadHubBackup(ctx context.Context, a manageBackupsArgs) (manageBackupsResult, error) {
	if err := d.requireAdminRead(); err != nil {
		return manageBackupsResult{}, err
	}
	if err := needBackupName(a); err != nil {
		return manageBackupsResult{}, err
	}
	data, err := d.Hub.DownloadBackup(ctx, a.Name)
	if err != nil {
		return manageBackupsResult{}, d.backupError(ctx, "Downloading hub backup "+a.Name, err, false)
	}
	k, err := d.Store.KeepHubFile(ctx, hubstore.HubDownloads, a.Name, d.now(), data)
	if err != nil {
		return manageBackupsResult{}, storeError(err)
	}
	d.Log(ctx, "info", CompHubAdmin, fmt.Sprintf("Hub backup %s downloaded to %s (%d bytes)", a.Name, k.Path, k.Size))
	return manageBackupsResult{Action: "download", File: &k,
		Message: fmt.Sprintf("Saved in hamcp's data folder (kept with the add-on's own backups; the newest %d copies of a name are kept). "+
			"It does not count as a backup through hubitat_create_hub_backup.", hubstore.KeptCopies)}, nil
}

// backupAsk resolves the backup before the user is asked, so the question names the file and its
// date, and the approval is bound to that file.
func (d Deps) backupAsk(ctx context.Context, a manageBackupsArgs) (toolkit.Ask, error) {
	if err := d.requireAdminWrite(); err != nil {
		return toolkit.Ask{}, err
	}
	if err := needBackupName(a); err != nil {
		return toolkit.Ask{}, err
	}
	safety, err := d.backupGate(ctx, "hubitat_manage_backups")
	if err != nil {
		return toolkit.Ask{}, err
	}
	b, err := d.Hub.LocalBackup(ctx, a.Name)
	if err != nil {
		return toolkit.Ask{}, d.backupError(ctx, "Reading the hub's backups", err, false)
	}
	made := b.Created
	if made == "" {
		made = stamp(b.CreatedAt)
	}
	q := fmt.Sprintf("Delete the Hubitat hub's backup %q (made %s, %d bytes) for good?", b.Name, made, b.Size)
	if a.Action == "restore" {
		q = fmt.Sprintf("RESTORE the Hubitat hub from its backup %q made %s? %s hamcp kept a backup of the hub as it is now (%s).",
			b.Name, made, restoreReplaces, stamp(safety.TakenAt))
	}
	return toolkit.Ask{Classes: []string{AdminConfirmClass}, Question: q,
		Digest: fmt.Sprintf("backup:%s:%s:%s:%d", a.Action, b.Name, stamp(b.CreatedAt), b.Size)}, nil
}

func (d Deps) changeHubBackup(ctx context.Context, a manageBackupsArgs) (manageBackupsResult, error) {
	if err := d.requireAdminWrite(); err != nil {
		return manageBackupsResult{}, err
	}
	if err := needBackupName(a); err != nil {
		return manageBackupsResult{}, err
	}
	safety, err := d.backupGate(ctx, "hubitat_manage_backups")
	if err != nil {
		return manageBackupsResult{}, err
	}
	out := manageBackupsResult{Action: a.Action, LastBackup: stamp(safety.TakenAt)}
	if a.Action == "delete" {
		d.Log(ctx, "warn", CompHubAdmin, "Deleting hub backup "+a.Name)
		if err := d.Hub.DeleteBackup(ctx, a.Name); err != nil {
			return manageBackupsResult{}, d.backupError(ctx, "Deleting hub backup "+a.Name, err, false)
		}
		out.Message = "Hub backup " + a.Name + " deleted."
		return out, nil
	}
	d.Log(ctx, "warn", CompHubAdmin, "Restoring the hub from its backup "+a.Name)
	if err := d.Hub.RestoreBackup(ctx, a.Name); err != nil {
		return manageBackupsResult{}, d.backupError(ctx, "Restoring hub backup "+a.Name, err, false)
	}
	out.Message = "Restore of " + a.Name + " accepted: the hub is replacing its database and rebooting."
	out.Warning = "The hub is unreachable for several minutes and Hubitat tools fail fast meanwhile; afterwards check it with " +
		"hubitat_get_hub_health. The backup of the hub as it was is in hamcp's data folder (" + out.LastBackup + ")."
	return out, nil
}

// ---- platform update ----

type updatePlatformArgs struct {
	Action string `json:"action" validate:"required,oneof=check apply status" example:"check"`
}

type updatePlatformResult struct {
	Action          string `json:"action"`
	CurrentVersion  string `json:"currentVersion,omitempty"`
	Available       bool   `json:"available"`
	Version         string `json:"version,omitempty"`
	Beta            bool   `json:"beta,omitempty"`
	ReleaseNotesURL string `json:"releaseNotesUrl,omitempty"`
	Status          string `json:"status,omitempty"`
	Message         string `json:"message,omitempty"`
	Warning         string `json:"warning,omitempty"`
	LastBackup      string `json:"lastBackup,omitempty"`
}

func (a updatePlatformArgs) writes() bool { return a.Action == "apply" }

func updatePlatform(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[updatePlatformArgs, updatePlatformResult]{
		Name: "hubitat_update_platform", Toolset: SetAdmin, Title: "Update the Hubitat platform",
		Description: "The Hubitat hub's platform (firmware) update: check asks Hubitat's cloud for a newer version, apply " +
			"downloads and installs it (the hub reboots by itself; 5–10 minutes without automations), status shows the " +
			"install's progress. Apply needs a backup through hubitat_create_hub_backup within the hour and the user's yes. " +
			"Not for hamcp itself (hubitat_check_for_update). Options: hubitat_admin_read; hubitat_admin_write + hub_admin.",
		Available:   d.availableAdmin,
		Conditional: adminGrant(d, "action apply", updatePlatformArgs.writes),
		OpenWorld:   true,
		Confirm: &toolkit.Confirm[updatePlatformArgs]{When: "action apply (`" + AdminConfirmClass + "`: always asked)",
			Check: func(ctx context.Context, _ *toolkit.Call, a updatePlatformArgs) (toolkit.Ask, error) {
				if !a.writes() {
					return toolkit.Ask{}, nil
				}
				return d.platformAsk(ctx)
			}},
		Handler: func(ctx context.Context, _ *toolkit.Call, a updatePlatformArgs) (updatePlatformResult, error) {
			switch a.Action {
			case "check":
				return d.checkPlatform(ctx)
			case "status":
				if err := d.requireAdminRead(); err != nil {
					return updatePlatformResult{}, err
				}
				st, err := d.Hub.PlatformUpdateStatus(ctx)
				if err != nil {
					return updatePlatformResult{}, d.adminFailed(ctx, "Reading the update's status", err, false, "")
				}
				return updatePlatformResult{Action: "status", Status: st}, nil
			}
			return d.applyPlatform(ctx)
		},
	})
}

func (d Deps) currentFirmware(ctx context.Context) string {
	if al, err := d.Hub.HubAlerts(ctx); err == nil {
		return al.FirmwareVersion
	}
	return ""
}

func (d Deps) checkPlatform(ctx context.Context) (updatePlatformResult, error) {
	if err := d.requireAdminRead(); err != nil {
		return updatePlatformResult{}, err
	}
	p, err := d.Hub.CheckPlatformUpdate(ctx)
	if err != nil {
		return updatePlatformResult{}, d.adminFailed(ctx, "Checking for a platform update", err, false, "the hub may not reach Hubitat's cloud")
	}
	out := updatePlatformResult{Action: "check", CurrentVersion: d.currentFirmware(ctx), Available: p.Available(), Status: p.Status}
	if out.Available {
		out.Version, out.Beta, out.ReleaseNotesURL = p.Version, p.Beta, p.ReleaseNotesURL
	}
	return out, nil
}

// pendingUpdate is the update the cloud offers, or a refusal when there is none.
func (d Deps) pendingUpdate(ctx context.Context) (hubitat.PlatformUpdate, error) {
	p, err := d.Hub.CheckPlatformUpdate(ctx)
	if err != nil {
		return p, d.adminFailed(ctx, "Checking for a platform update", err, false, "the hub may not reach Hubitat's cloud")
	}
	if !p.Available() {
		return p, &toolkit.Error{Code: "nothing_to_do", Message: "the hub's platform is up to date (" + p.Status + "): nothing was done"}
	}
	return p, nil
}

func (d Deps) platformAsk(ctx context.Context) (toolkit.Ask, error) {
	if err := d.requireAdminWrite(); err != nil {
		return toolkit.Ask{}, err
	}
	safety, err := d.backupGate(ctx, "hubitat_update_platform")
	if err != nil {
		return toolkit.Ask{}, err
	}
	p, err := d.pendingUpdate(ctx)
	if err != nil {
		return toolkit.Ask{}, err
	}
	beta := ""
	if p.Beta {
		beta = " It is a BETA release."
	}
	q := fmt.Sprintf("Update the Hubitat hub's platform from %s to %s now?%s The hub downloads and installs it, then reboots by itself: "+
		"5–10 minutes in which its automations, rules and devices stop. hamcp cannot roll it back. hamcp kept a backup of the hub (%s).",
		orUnknown(d.currentFirmware(ctx)), p.Version, beta, stamp(safety.TakenAt))
	return toolkit.Ask{Classes: []string{AdminConfirmClass}, Question: q, Digest: "platform:" + p.Version}, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "its current version"
	}
	return s
}

func (d Deps) applyPlatform(ctx context.Context) (updatePlatformResult, error) {
	if err := d.requireAdminWrite(); err != nil {
		return updatePlatformResult{}, err
	}
	safety, err := d.backupGate(ctx, "hubitat_update_platform")
	if err != nil {
		return updatePlatformResult{}, err
	}
	p, err := d.pendingUpdate(ctx)
	if err != nil {
		return updatePlatformResult{}, err
	}
	current := d.currentFirmware(ctx)
	d.Log(ctx, "warn", CompHubAdmin, "Hub platform update to "+p.Version+" initiated by hamcp")
	if _, err := d.Hub.ApplyPlatformUpdate(ctx); err != nil {
		return updatePlatformResult{}, d.adminFailed(ctx, "Platform update", err, false, "apply it from the hub's web UI (Settings → Check for Updates)")
	}
	return updatePlatformResult{Action: "apply", CurrentVersion: current, Available: true, Version: p.Version, Beta: p.Beta,
		ReleaseNotesURL: p.ReleaseNotesURL, LastBackup: stamp(safety.TakenAt),
		Message: "Platform update to " + p.Version + " started: the hub downloads and installs it, then reboots by itself (5–10 minutes).",
		Warning: "Automations and devices stop meanwhile; Hubitat tools fail fast until it is back. Follow it with action status, then " +
			"confirm the version with action check."}, nil
}

// hubCareTools are the hub's logs, diagnostics, backups, files and platform update.
func hubCareTools(d Deps) []*toolkit.Tool {
	return []*toolkit.Tool{getHubLogs(d), getDiagnostics(d), manageBackups(d), manageFiles(d), updatePlatform(d)}
}

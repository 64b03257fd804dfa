package hubitattools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/store"
	"github.com/hamcp/hamcp/src/toolkit"
)

// BackupWindow is how recent a hub backup taken through hamcp must be before an admin write tool
// runs (upstream v0.4.1: one hour).
const BackupWindow = time.Hour

// clockSkew tolerates a backup time slightly ahead of the clock (the clock was set back); a time
// further ahead is not trusted as a recent backup.
const clockSkew = 5 * time.Minute

// The admin write gates, in upstream's order: the hubitat_admin_write option, confirm=true (the
// model's word that it asked the user: required, never sufficient), and a hub backup through
// hamcp within BackupWindow (not for hubitat_create_hub_backup itself). Before any of them the
// toolkit asks for the hub_admin category, which only the user grants.
const writeChecklist = " MANDATORY, in order: hubitat_create_hub_backup succeeded within the hour; you told the user " +
	"exactly what will happen; they said yes; only then confirm=true. Never unless the user asked; if the backup failed, " +
	"stop. Needs option hubitat_admin_write and the user's hub_admin grant."

// confirmArg is the confirm argument every admin write tool requires, as upstream.
type confirmArg struct {
	Confirm bool `json:"confirm" jsonschema:"true only after you told the user exactly what will happen and they said yes; required, and not enough on its own"`
}

func (a confirmArg) confirmed() bool { return a.Confirm }

type confirmable interface{ confirmed() bool }

func adminWriteTools(d Deps) []*toolkit.Tool {
	return []*toolkit.Tool{createHubBackup(d), rebootHub(d), shutdownHub(d), zwaveRepair(d),
		installCode(d, hubitat.AppCode), installCode(d, hubitat.DriverCode),
		updateCode(d, hubitat.AppCode), updateCode(d, hubitat.DriverCode),
		deleteCode(d, hubitat.AppCode), deleteCode(d, hubitat.DriverCode)}
}

// requireAdminWrite is the first of upstream's requireHubAdminWrite checks: the option. It runs
// before the hub_admin grant is asked for, so the user is never asked to approve a call the
// option refuses anyway.
func (d Deps) requireAdminWrite() error {
	if !d.AdminWrite {
		return optionOff("hubitat_admin_write", "hub admin write")
	}
	return nil
}

// writeGate applies upstream's other gates (confirm, then a recent backup) after the option and
// the toolkit's hub_admin grant, and returns the backup that satisfied the last one.
func (d Deps) writeGate(ctx context.Context, tool string, confirm, needBackup bool) (store.HubBackup, error) {
	refuse := func(e *toolkit.Error) (store.HubBackup, error) {
		d.Log(ctx, "warn", CompHubAdmin, tool+" refused: "+e.Message)
		return store.HubBackup{}, e
	}
	if !confirm {
		return refuse(&toolkit.Error{Code: "confirmation_required", Field: "confirm", Message: "confirm must be true: nothing was done",
			Hint: "tell the user exactly what will happen, get their explicit yes, then repeat the call with \"confirm\": true"})
	}
	if !needBackup {
		return store.HubBackup{}, nil
	}
	b, ok, err := d.Store.LastHubBackup(ctx)
	if err != nil {
		return store.HubBackup{}, storeError(err)
	}
	now := d.now()
	switch age := now.Sub(b.TakenAt); {
	case !ok:
		return refuse(&toolkit.Error{Code: "backup_required", Message: "no hub backup was taken through hamcp: nothing was done",
			Hint: "call hubitat_create_hub_backup with confirm=true first (it must succeed), then repeat this call within the hour"})
	case age > BackupWindow || age < -clockSkew:
		return refuse(&toolkit.Error{Code: "backup_required",
			Message: fmt.Sprintf("the last hub backup through hamcp was taken %s (%s ago), more than an hour ago: nothing was done", stamp(b.TakenAt), age.Round(time.Minute)),
			Hint:    "call hubitat_create_hub_backup with confirm=true first (it must succeed), then repeat this call within the hour"})
	}
	return b, nil
}

// writeSpec is one admin write tool; run gets the backup that passed the gate.
type writeSpec[In confirmable, Out any] struct {
	name, title, description string
	destructive, idempotent  bool
	noBackup                 bool // hubitat_create_hub_backup: it is the backup
	summary                  func(In) string
	run                      func(ctx context.Context, in In, backup store.HubBackup) (Out, error)
}

func adminWrite[In confirmable, Out any](d Deps, s writeSpec[In, Out]) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[In, Out]{
		Name: s.name, Toolset: SetAdmin, Title: s.title, Description: s.description, Category: toolkit.HubAdmin,
		Available:   d.requireAdminWrite,
		Destructive: s.destructive, Idempotent: s.idempotent, Summary: s.summary,
		Handler: func(ctx context.Context, c *toolkit.Call, in In) (Out, error) {
			b, err := d.writeGate(ctx, s.name, in.confirmed(), !s.noBackup)
			if err != nil {
				var zero Out
				return zero, err
			}
			return s.run(ctx, in, b)
		},
	})
}

type backupResult struct {
	Success         bool   `json:"success"`
	Message         string `json:"message"`
	BackupTimestamp string `json:"backupTimestamp"`
	BackupEpochMS   int64  `json:"backupTimestampEpoch"`
	ValidUntil      string `json:"validUntil"`
	File            string `json:"file"`
	SizeBytes       int64  `json:"sizeBytes"`
	SHA256          string `json:"sha256"`
	Note            string `json:"note"`
}

func createHubBackup(d Deps) *toolkit.Tool {
	return adminWrite(d, writeSpec[confirmArg, backupResult]{
		name: "hubitat_create_hub_backup", title: "Back up the Hubitat hub",
		description: "Take a full backup of the Hubitat hub's database and keep the file in hamcp's data folder (the newest " +
			fmt.Sprint(store.HubBackupsKept) + " are kept; the hub keeps its own too). REQUIRED, and must succeed, before any " +
			"other Hubitat admin write tool: they refuse unless this succeeded within the last hour. Tell the user first; set " +
			"confirm=true once they agree. If it fails, do NOT go on with the write. Takes up to 5 minutes on a big hub. " +
			"Needs the add-on option hubitat_admin_write and the user's hub_admin grant.",
		noBackup: true,
		run: func(ctx context.Context, _ confirmArg, _ store.HubBackup) (backupResult, error) {
			d.Log(ctx, "info", CompHubAdmin, "Creating hub backup...")
			data, err := d.Hub.Backup(ctx)
			if err != nil {
				// Whatever the cause, the model must hear that it may not go on.
				e := toolkit.AsError(d.adminFailed(ctx, "Hub backup", err, false, ""))
				e.Hint = strings.TrimSuffix("do NOT proceed with any Hubitat admin write; the user can make a backup in the hub's web UI "+
					"(Settings → Backup and Restore). "+e.Hint, " ")
				return backupResult{}, e
			}
			b, err := d.Store.SaveHubBackup(ctx, d.now(), data)
			if err != nil {
				d.Log(ctx, "error", CompHubAdmin, "Hub backup could not be saved: "+err.Error())
				return backupResult{}, storeError(err)
			}
			d.Log(ctx, "info", CompHubAdmin, "Hub backup created successfully at "+stamp(b.TakenAt))
			return backupResult{Success: true, Message: "Hub backup created successfully", BackupTimestamp: stamp(b.TakenAt),
				BackupEpochMS: b.TakenAt.UnixMilli(), ValidUntil: stamp(b.TakenAt.Add(BackupWindow)), File: b.Path,
				SizeBytes: b.Size, SHA256: b.SHA256,
				Note: "The file is in the hamcp add-on's data folder, which Home Assistant's backups of the add-on include; " +
					"restore it in the hub's web UI (Settings → Backup and Restore) after copying it out of a Home Assistant backup."}, nil
		},
	})
}

type maintenanceResult struct {
	Success    bool   `json:"success"`
	Message    string `json:"message"`
	Warning    string `json:"warning"`
	Duration   string `json:"duration,omitempty"`
	Note       string `json:"note,omitempty"`
	LastBackup string `json:"lastBackup"`
}

// maintenance is reboot_hub, shutdown_hub and zwave_repair: one POST, any reply is success.
func maintenance(d Deps, name, title, description, level, logMsg string, destructive bool, call func(*hubitat.Client, context.Context) error,
	failHint string, done maintenanceResult) *toolkit.Tool {
	return adminWrite(d, writeSpec[confirmArg, maintenanceResult]{
		name: name, title: title, description: description + writeChecklist, destructive: destructive,
		run: func(ctx context.Context, _ confirmArg, b store.HubBackup) (maintenanceResult, error) {
			d.Log(ctx, level, CompHubAdmin, logMsg)
			if err := call(d.Hub, ctx); err != nil {
				return maintenanceResult{}, d.adminFailed(ctx, title, err, false, failHint)
			}
			out := done
			out.Success, out.LastBackup = true, stamp(b.TakenAt)
			return out, nil
		},
	})
}

func rebootHub(d Deps) *toolkit.Tool {
	return maintenance(d, "hubitat_reboot_hub", "Reboot the Hubitat hub",
		"DESTRUCTIVE: reboot the Hubitat hub. It is unreachable for 1–3 minutes; every automation, rule and device message "+
			"stops meanwhile and the radios restart. Hubitat tools fail fast until it is back.",
		"warn", "Hub reboot initiated by hamcp", true, (*hubitat.Client).Reboot,
		"reboot the hub from its web UI (Settings → Reboot Hub) instead",
		maintenanceResult{Message: "Hub reboot initiated. The hub will be unreachable for 1-3 minutes.",
			Warning: "All automations and device communications stop during the reboot. The hub restarts by itself."})
}

func shutdownHub(d Deps) *toolkit.Tool {
	return maintenance(d, "hubitat_shutdown_hub", "Shut down the Hubitat hub",
		"EXTREME: power the Hubitat hub OFF. It does NOT come back by itself: someone must unplug and replug it. Everything "+
			"the hub runs stops until then. Not a reboot (hubitat_reboot_hub); tell the user it will not restart.",
		"warn", "Hub SHUTDOWN initiated by hamcp: the hub will NOT restart by itself", true, (*hubitat.Client).Shutdown,
		"shut the hub down from its web UI instead",
		maintenanceResult{Message: "Hub shutdown initiated. The hub will power off and will NOT restart automatically.",
			Warning: "To restart it, unplug and replug the hub's power. All smart home functions on the hub stop until then."})
}

func zwaveRepair(d Deps) *toolkit.Tool {
	return maintenance(d, "hubitat_zwave_repair", "Repair the Z-Wave network",
		"Start a Z-Wave network repair on the Hubitat hub, in the background: 5–30 minutes or more, during which Z-Wave "+
			"devices may not respond. Do not start another until it finishes (hubitat_get_zwave_details shows it).",
		"info", "Z-Wave repair initiated by hamcp", false, (*hubitat.Client).ZWaveRepair,
		"start it from the hub's web UI (Settings → Z-Wave Details → Repair)",
		maintenanceResult{Message: "Z-Wave network repair started. This process runs in the background.",
			Duration: "Typically 5-30 minutes depending on the Z-Wave network's size",
			Warning:  "Z-Wave devices may be temporarily unresponsive during the repair. Do not start another repair until this one completes.",
			Note:     "hubitat_get_zwave_details shows whether the repair is still running."})
}

type installArgs struct {
	confirmArg
	Source string `json:"source" jsonschema:"the complete Groovy source, starting with its definition(...)" validate:"required,max=1048576"`
}

type codeWrite struct {
	Success    bool   `json:"success"`
	Message    string `json:"message"`
	AppID      string `json:"appId,omitempty"`
	DriverID   string `json:"driverId,omitempty"`
	Version    int64  `json:"version,omitempty"`
	Note       string `json:"note,omitempty"`
	LastBackup string `json:"lastBackup"`
}

func (w *codeWrite) setID(kind hubitat.CodeKind, id string) {
	if kind == hubitat.AppCode {
		w.AppID = id
	} else {
		w.DriverID = id
	}
}

func installCode(d Deps, kind hubitat.CodeKind) *toolkit.Tool {
	note := "Installed as code only: add the app in the hub's web UI (Apps → Add User App) to use it."
	if kind == hubitat.DriverCode {
		note = "Installed as code only: choose it as a device's Type in the hub's web UI to use it."
	}
	return adminWrite(d, writeSpec[installArgs, codeWrite]{
		name: "hubitat_install_" + string(kind), title: "Install Hubitat " + string(kind) + " code",
		description: "Install new " + string(kind) + " code (Groovy) on the Hubitat hub; answers the new " + string(kind) +
			"Id. The hub compiles it first and refuses code that does not compile. Code runs with the hub's full rights: install " +
			"only code the user gave or approved line by line. To change existing code use hubitat_update_" + string(kind) + "_code." +
			writeChecklist,
		summary: func(a installArgs) string { return fmt.Sprintf(`{"source": "%d bytes"}`, len(a.Source)) },
		run: func(ctx context.Context, a installArgs, b store.HubBackup) (codeWrite, error) {
			d.Log(ctx, "info", CompHubAdmin, "Installing new "+string(kind)+"...")
			id, err := d.Hub.InstallCode(ctx, kind, a.Source)
			if err != nil {
				return codeWrite{}, d.adminFailed(ctx, string(kind)+" installation", err, false, "check that the Groovy source compiles")
			}
			d.Log(ctx, "info", CompHubAdmin, fmt.Sprintf("%s installed successfully (ID: %s)", kind, id))
			out := codeWrite{Success: true, Message: string(kind) + " installed successfully", Note: note, LastBackup: stamp(b.TakenAt)}
			out.setID(kind, id)
			return out, nil
		},
	})
}

type updateAppArgs struct {
	confirmArg
	AppID  string `json:"appId" jsonschema:"the app code's id from hubitat_list_hub_apps" validate:"required,numeric,max=12"`
	Source string `json:"source" jsonschema:"the complete new Groovy source (not a diff)" validate:"required,max=1048576"`
}

type updateDriverArgs struct {
	confirmArg
	DriverID string `json:"driverId" jsonschema:"the driver code's id from hubitat_list_hub_drivers" validate:"required,numeric,max=12"`
	Source   string `json:"source" jsonschema:"the complete new Groovy source (not a diff)" validate:"required,max=1048576"`
}

func updateCode(d Deps, kind hubitat.CodeKind) *toolkit.Tool {
	run := func(ctx context.Context, id, source string, b store.HubBackup) (codeWrite, error) {
		d.Log(ctx, "info", CompHubAdmin, fmt.Sprintf("Updating %s ID: %s", kind, id))
		src, err := d.Hub.UpdateCode(ctx, kind, id, source)
		if err != nil {
			return codeWrite{}, d.adminFailed(ctx, fmt.Sprintf("%s %s update", kind, id), err, false,
				"the old code is still in place; fix the compile error the hub reported, or read the current code again with hubitat_get_"+string(kind)+"_source if it changed meanwhile")
		}
		d.Log(ctx, "info", CompHubAdmin, fmt.Sprintf("%s ID %s updated successfully", kind, id))
		out := codeWrite{Success: true, Message: string(kind) + " code updated successfully", Version: src.Version, LastBackup: stamp(b.TakenAt)}
		out.setID(kind, id)
		return out, nil
	}
	description := "Replace the code of one " + string(kind) + " on the Hubitat hub with a complete new Groovy source. The hub " +
		"compiles it and keeps the old code if it does not compile (the error is returned). Every app instance or device " +
		"using it runs the new code at once. Read it first with hubitat_get_" + string(kind) + "_source." + writeChecklist
	title := "Update Hubitat " + string(kind) + " code"
	name := "hubitat_update_" + string(kind) + "_code"
	if kind == hubitat.AppCode {
		return adminWrite(d, writeSpec[updateAppArgs, codeWrite]{name: name, title: title, description: description, destructive: true,
			summary: func(a updateAppArgs) string {
				return fmt.Sprintf(`{"appId": %q, "source": "%d bytes"}`, a.AppID, len(a.Source))
			},
			run: func(ctx context.Context, a updateAppArgs, b store.HubBackup) (codeWrite, error) {
				return run(ctx, a.AppID, a.Source, b)
			},
		})
	}
	return adminWrite(d, writeSpec[updateDriverArgs, codeWrite]{name: name, title: title, description: description, destructive: true,
		summary: func(a updateDriverArgs) string {
			return fmt.Sprintf(`{"driverId": %q, "source": "%d bytes"}`, a.DriverID, len(a.Source))
		},
		run: func(ctx context.Context, a updateDriverArgs, b store.HubBackup) (codeWrite, error) {
			return run(ctx, a.DriverID, a.Source, b)
		},
	})
}

type deleteAppArgs struct {
	confirmArg
	AppID string `json:"appId" jsonschema:"the app code's id from hubitat_list_hub_apps" validate:"required,numeric,max=12"`
}

type deleteDriverArgs struct {
	confirmArg
	DriverID string `json:"driverId" jsonschema:"the driver code's id from hubitat_list_hub_drivers" validate:"required,numeric,max=12"`
}

func deleteCode(d Deps, kind hubitat.CodeKind) *toolkit.Tool {
	run := func(ctx context.Context, id string, b store.HubBackup) (codeWrite, error) {
		d.Log(ctx, "warn", CompHubAdmin, fmt.Sprintf("Deleting %s ID: %s", kind, id))
		if err := d.Hub.DeleteCode(ctx, kind, id); err != nil {
			return codeWrite{}, d.adminFailed(ctx, fmt.Sprintf("%s %s deletion", kind, id), err, false,
				"check the id with hubitat_list_hub_"+string(kind)+"s; the hub refuses while it is in use")
		}
		d.Log(ctx, "info", CompHubAdmin, fmt.Sprintf("%s ID %s deleted successfully", kind, id))
		out := codeWrite{Success: true, Message: string(kind) + " deleted successfully", LastBackup: stamp(b.TakenAt)}
		out.setID(kind, id)
		return out, nil
	}
	inUse := "App instances using it must be removed in the hub's web UI first."
	if kind == hubitat.DriverCode {
		inUse = "Devices using it must be moved to another driver first."
	}
	description := "Delete one " + string(kind) + "'s code from the Hubitat hub for good (only the hub backup brings it back). " +
		inUse + " Read it with hubitat_get_" + string(kind) + "_source first if the user may want it later." + writeChecklist
	title := "Delete Hubitat " + string(kind) + " code"
	name := "hubitat_delete_" + string(kind)
	if kind == hubitat.AppCode {
		return adminWrite(d, writeSpec[deleteAppArgs, codeWrite]{name: name, title: title, description: description, destructive: true,
			run: func(ctx context.Context, a deleteAppArgs, b store.HubBackup) (codeWrite, error) {
				return run(ctx, a.AppID, b)
			},
		})
	}
	return adminWrite(d, writeSpec[deleteDriverArgs, codeWrite]{name: name, title: title, description: description, destructive: true,
		run: func(ctx context.Context, a deleteDriverArgs, b store.HubBackup) (codeWrite, error) {
			return run(ctx, a.DriverID, b)
		},
	})
}

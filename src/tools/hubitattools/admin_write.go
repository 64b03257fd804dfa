package hubitattools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/integrations/hubitat/hubstore"
	"github.com/hamcp/hamcp/src/toolkit"
)

// BackupWindow is how recent a hub backup taken through hamcp must be before an admin write tool
// runs (upstream v0.4.1: one hour).
const BackupWindow = time.Hour

// clockSkew tolerates a backup time slightly ahead of the clock (the clock was set back); a time
// further ahead is not trusted as a recent backup.
const clockSkew = 5 * time.Minute

// The admin write gates, in order: the hubitat_admin_write option (Spec.Available), the user's
// hub_admin grant (the toolkit), a hub backup through hamcp within BackupWindow (not for
// hubitat_create_hub_backup itself), then the user's yes to this one call (Spec.Confirm: asked in
// the client or on the approval page; the model's word never stands in for it). The backup is
// checked before the user is asked, so nobody is asked to approve a call that would be refused.
const writeChecklist = " Only when the user asked for it. First hubitat_create_hub_backup must have succeeded within the " +
	"hour (if it failed, stop); tell the user exactly what will happen: hamcp then asks them to confirm this call. Needs option " +
	"hubitat_admin_write and the user's hub_admin grant."

// AdminConfirmClass is the confirmation class of every admin write. It is none of the classes the
// confirm_trusted option accepts, so the user is asked every time, whatever that option says.
const AdminConfirmClass = "hub_admin"

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

// backupGate is upstream's recent-backup requirement: it returns the backup through hamcp that was
// taken within BackupWindow, or refuses.
func (d Deps) backupGate(ctx context.Context, tool string) (hubstore.HubBackup, error) {
	refuse := func(e *toolkit.Error) (hubstore.HubBackup, error) {
		d.Log(ctx, "warn", CompHubAdmin, tool+" refused: "+e.Message)
		return hubstore.HubBackup{}, e
	}
	b, ok, err := d.Store.LastHubBackup(ctx)
	if err != nil {
		return hubstore.HubBackup{}, storeError(err)
	}
	const next = "call hubitat_create_hub_backup first (the user confirms it, and it must succeed), then repeat this call within the hour"
	switch age := d.now().Sub(b.TakenAt); {
	case !ok:
		return refuse(&toolkit.Error{Code: "backup_required", Message: "no hub backup was taken through hamcp: nothing was done", Hint: next})
	case age > BackupWindow || age < -clockSkew:
		return refuse(&toolkit.Error{Code: "backup_required",
			Message: fmt.Sprintf("the last hub backup through hamcp was taken %s (%s ago), more than an hour ago: nothing was done", stamp(b.TakenAt), age.Round(time.Minute)),
			Hint:    next})
	}
	return b, nil
}

// writeSpec is one admin write tool; question says what the user is asked to confirm, and run
// gets the backup that passed the gate.
type writeSpec[In, Out any] struct {
	name, title, description string
	destructive, idempotent  bool
	noBackup                 bool // hubitat_create_hub_backup: it is the backup
	question                 func(In) string
	summary                  func(In) string
	run                      func(ctx context.Context, in In, backup hubstore.HubBackup) (Out, error)
}

func adminWrite[In, Out any](d Deps, s writeSpec[In, Out]) *toolkit.Tool {
	// gate is the backup requirement, asked before the user is and again when they have answered
	// (the backup may have aged past the hour while they thought about it).
	gate := func(ctx context.Context) (hubstore.HubBackup, error) {
		if s.noBackup {
			return hubstore.HubBackup{}, nil
		}
		return d.backupGate(ctx, s.name)
	}
	return toolkit.Define(toolkit.Spec[In, Out]{
		Name: s.name, Toolset: SetAdmin, Title: s.title, Description: s.description, Category: HubAdmin,
		Available:   d.requireAdminWrite,
		Destructive: s.destructive, Idempotent: s.idempotent, Summary: s.summary,
		Confirm: &toolkit.Confirm[In]{When: "always (`" + AdminConfirmClass + "`: the user is asked, whatever confirm_trusted says)",
			Check: func(ctx context.Context, _ *toolkit.Call, in In) (toolkit.Ask, error) {
				if _, err := gate(ctx); err != nil {
					return toolkit.Ask{}, err
				}
				return toolkit.Ask{Classes: []string{AdminConfirmClass}, Question: s.question(in)}, nil
			}},
		Handler: func(ctx context.Context, c *toolkit.Call, in In) (Out, error) {
			b, err := gate(ctx)
			if err != nil {
				var zero Out
				return zero, err
			}
			return s.run(ctx, in, b)
		},
	})
}

func always[In any](q string) func(In) string { return func(In) string { return q } }

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
	return adminWrite(d, writeSpec[noArgs, backupResult]{
		name: "hubitat_create_hub_backup", title: "Back up the Hubitat hub",
		description: "Take a full backup of the Hubitat hub's database and keep the file in hamcp's data folder (the newest " +
			fmt.Sprint(hubstore.HubBackupsKept) + " are kept; the hub keeps its own too). REQUIRED, and must succeed, before any " +
			"other Hubitat admin write tool: they refuse unless this succeeded within the last hour. Tell the user first; hamcp " +
			"asks them to confirm. If it fails, do NOT go on with the write. Takes up to 5 minutes on a big hub. " +
			"Needs the add-on option hubitat_admin_write and the user's hub_admin grant.",
		noBackup: true,
		question: always[noArgs]("Back up the Hubitat hub's database now? It takes up to 5 minutes on a big hub; the file is kept in hamcp's data folder."),
		run: func(ctx context.Context, _ noArgs, _ hubstore.HubBackup) (backupResult, error) {
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
func maintenance(d Deps, name, title, description, question, level, logMsg string, destructive bool, call func(*hubitat.Client, context.Context) error,
	failHint string, done maintenanceResult) *toolkit.Tool {
	return adminWrite(d, writeSpec[noArgs, maintenanceResult]{
		name: name, title: title, description: description + writeChecklist, destructive: destructive, question: always[noArgs](question),
		run: func(ctx context.Context, _ noArgs, b hubstore.HubBackup) (maintenanceResult, error) {
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
		"Reboot the Hubitat hub? It is unreachable for 1–3 minutes; its automations, rules and devices stop meanwhile.",
		"warn", "Hub reboot initiated by hamcp", true, (*hubitat.Client).Reboot,
		"reboot the hub from its web UI (Settings → Reboot Hub) instead",
		maintenanceResult{Message: "Hub reboot initiated. The hub will be unreachable for 1-3 minutes.",
			Warning: "All automations and device communications stop during the reboot. The hub restarts by itself."})
}

func shutdownHub(d Deps) *toolkit.Tool {
	return maintenance(d, "hubitat_shutdown_hub", "Shut down the Hubitat hub",
		"EXTREME: power the Hubitat hub OFF. It does NOT come back by itself: someone must unplug and replug it. Everything "+
			"the hub runs stops until then. Not a reboot (hubitat_reboot_hub); tell the user it will not restart.",
		"Shut the Hubitat hub down? It powers OFF and does not come back by itself: someone must unplug and replug it.",
		"warn", "Hub SHUTDOWN initiated by hamcp: the hub will NOT restart by itself", true, (*hubitat.Client).Shutdown,
		"shut the hub down from its web UI instead",
		maintenanceResult{Message: "Hub shutdown initiated. The hub will power off and will NOT restart automatically.",
			Warning: "To restart it, unplug and replug the hub's power. All smart home functions on the hub stop until then."})
}

func zwaveRepair(d Deps) *toolkit.Tool {
	return maintenance(d, "hubitat_zwave_repair", "Repair the Z-Wave network",
		"Start a Z-Wave network repair on the Hubitat hub, in the background: 5–30 minutes or more, during which Z-Wave "+
			"devices may not respond. Do not start another until it finishes (hubitat_get_zwave_details shows it).",
		"Start a Z-Wave network repair on the Hubitat hub? Z-Wave devices may not respond for 5–30 minutes or more.",
		"info", "Z-Wave repair initiated by hamcp", false, (*hubitat.Client).ZWaveRepair,
		"start it from the hub's web UI (Settings → Z-Wave Details → Repair)",
		maintenanceResult{Message: "Z-Wave network repair started. This process runs in the background.",
			Duration: "Typically 5-30 minutes depending on the Z-Wave network's size",
			Warning:  "Z-Wave devices may be temporarily unresponsive during the repair. Do not start another repair until this one completes.",
			Note:     "hubitat_get_zwave_details shows whether the repair is still running."})
}

type installArgs struct {
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
		question: func(a installArgs) string {
			return fmt.Sprintf("Install new %s code (%d bytes of Groovy) on the Hubitat hub? It runs with the hub's full rights once used.", kind, len(a.Source))
		},
		summary: func(a installArgs) string { return fmt.Sprintf(`{"source": "%d bytes"}`, len(a.Source)) },
		run: func(ctx context.Context, a installArgs, b hubstore.HubBackup) (codeWrite, error) {
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
	AppID  string `json:"appId" jsonschema:"the app code's id from hubitat_list_hub_apps" validate:"required,numeric,max=12"`
	Source string `json:"source" jsonschema:"the complete new Groovy source (not a diff)" validate:"required,max=1048576"`
}

type updateDriverArgs struct {
	DriverID string `json:"driverId" jsonschema:"the driver code's id from hubitat_list_hub_drivers" validate:"required,numeric,max=12"`
	Source   string `json:"source" jsonschema:"the complete new Groovy source (not a diff)" validate:"required,max=1048576"`
}

func updateCode(d Deps, kind hubitat.CodeKind) *toolkit.Tool {
	run := func(ctx context.Context, id, source string, b hubstore.HubBackup) (codeWrite, error) {
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
			question: func(a updateAppArgs) string { return replaceQuestion(kind, a.AppID, a.Source) },
			summary: func(a updateAppArgs) string {
				return fmt.Sprintf(`{"appId": %q, "source": "%d bytes"}`, a.AppID, len(a.Source))
			},
			run: func(ctx context.Context, a updateAppArgs, b hubstore.HubBackup) (codeWrite, error) {
				return run(ctx, a.AppID, a.Source, b)
			},
		})
	}
	return adminWrite(d, writeSpec[updateDriverArgs, codeWrite]{name: name, title: title, description: description, destructive: true,
		question: func(a updateDriverArgs) string { return replaceQuestion(kind, a.DriverID, a.Source) },
		summary: func(a updateDriverArgs) string {
			return fmt.Sprintf(`{"driverId": %q, "source": "%d bytes"}`, a.DriverID, len(a.Source))
		},
		run: func(ctx context.Context, a updateDriverArgs, b hubstore.HubBackup) (codeWrite, error) {
			return run(ctx, a.DriverID, a.Source, b)
		},
	})
}

type deleteAppArgs struct {
	AppID string `json:"appId" jsonschema:"the app code's id from hubitat_list_hub_apps" validate:"required,numeric,max=12"`
}

type deleteDriverArgs struct {
	DriverID string `json:"driverId" jsonschema:"the driver code's id from hubitat_list_hub_drivers" validate:"required,numeric,max=12"`
}

func deleteCode(d Deps, kind hubitat.CodeKind) *toolkit.Tool {
	run := func(ctx context.Context, id string, b hubstore.HubBackup) (codeWrite, error) {
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
			question: func(a deleteAppArgs) string { return deleteQuestion(kind, a.AppID) },
			run: func(ctx context.Context, a deleteAppArgs, b hubstore.HubBackup) (codeWrite, error) {
				return run(ctx, a.AppID, b)
			},
		})
	}
	return adminWrite(d, writeSpec[deleteDriverArgs, codeWrite]{name: name, title: title, description: description, destructive: true,
		question: func(a deleteDriverArgs) string { return deleteQuestion(kind, a.DriverID) },
		run: func(ctx context.Context, a deleteDriverArgs, b hubstore.HubBackup) (codeWrite, error) {
			return run(ctx, a.DriverID, b)
		},
	})
}

func replaceQuestion(kind hubitat.CodeKind, id, source string) string {
	return fmt.Sprintf("Replace the code of Hubitat %s %s with %d bytes of new Groovy? Everything using it runs the new code at once.", kind, id, len(source))
}

func deleteQuestion(kind hubitat.CodeKind, id string) string {
	return fmt.Sprintf("Delete the code of Hubitat %s %s for good? Only a hub backup brings it back.", kind, id)
}

package hatools

import (
	"context"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/sensitive"
	"github.com/hamcp/hamcp/src/toolkit"
)

// ha_manage_updates: the update entities (components/update) — Home Assistant Core, OS and
// Supervisor, add-ons, HACS repositories, device firmware — listed with their versions and
// release notes, installed through update.install and skipped through update.skip.

type manageUpdatesArgs struct {
	Action   string `json:"action" validate:"required,oneof=list release_notes install skip clear_skipped"`
	EntityID string `json:"entity_id,omitempty" jsonschema:"an update.* entity from list" validate:"omitempty,entity_id"`
	Version  string `json:"version,omitempty" jsonschema:"install: this version, not the latest" validate:"omitempty,max=100"`
	Backup   bool   `json:"backup,omitempty" jsonschema:"install: back up first, where supported"`
	All      bool   `json:"all,omitempty" jsonschema:"list: also up-to-date and skipped"`
	toolkit.Page
}

type updateItem struct {
	EntityID   string   `json:"entity_id"`
	Title      string   `json:"title,omitempty"`
	Installed  string   `json:"installed_version,omitempty"`
	Latest     string   `json:"latest_version,omitempty"`
	Skipped    string   `json:"skipped_version,omitempty"`
	Pending    bool     `json:"pending"`
	InProgress any      `json:"in_progress,omitempty"` // true, or a percentage
	AutoUpdate bool     `json:"auto_update,omitempty"`
	Summary    string   `json:"release_summary,omitempty"`
	URL        string   `json:"release_url,omitempty"`
	Supports   []string `json:"supports,omitempty"`
}

type manageUpdatesResult struct {
	Action       string                    `json:"action"`
	List         *toolkit.List[updateItem] `json:"list,omitempty"`
	Update       *updateItem               `json:"update,omitempty"`
	ReleaseNotes string                    `json:"release_notes,omitempty"`
	Truncated    bool                      `json:"truncated,omitempty"`
	Done         string                    `json:"done,omitempty"`
	Note         string                    `json:"note,omitempty"`
}

// updateWait is how long install waits for Home Assistant to finish before answering that it is
// still installing (an add-on or firmware update takes minutes); a variable for tests.
var updateWait = 30 * time.Second

// maxReleaseNotes bounds the release notes returned in one answer.
const maxReleaseNotes = 12_000

// systemUpdates are the Supervisor's update entities whose install restarts Home Assistant or
// the host, by their registry unique ids (hassio/entity.py: home_assistant_<part>_version_latest).
var systemUpdates = map[string]string{
	"home_assistant_core_version_latest":       "restarts Home Assistant",
	"home_assistant_os_version_latest":         "reboots the host",
	"home_assistant_supervisor_version_latest": "restarts the Supervisor and its add-ons",
}

// update.install installs code: the command permission, as in ha_call_service (package privileged).
var updateGrant = &toolkit.Condition[manageUpdatesArgs]{
	Category: toolkit.Command, When: "action install (it installs new code, as update.install does)",
	Applies: func(a manageUpdatesArgs) bool { return a.Action == "install" },
}

// updateTools are the update tools, in the order tools/list shows them.
func updateTools(d Deps) []*toolkit.Tool { return []*toolkit.Tool{manageUpdates(d)} }

// manageUpdates is ha_manage_updates.
func manageUpdates(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[manageUpdatesArgs, manageUpdatesResult]{
		Name: "ha_manage_updates", Toolset: SetAddons, Title: "Manage updates", Conditional: updateGrant,
		Confirm: updateConfirm(d),
		Description: "Pending updates of Home Assistant, OS, add-ons, HACS and firmware: list (versions, summary), release_notes, " +
			"skip or clear_skipped a version, install (confirmed by the user; backup=true backs up first where supported).",
		Destructive: true,
		OpenWorld:   true,
		Summary: func(a manageUpdatesArgs) string {
			return strings.TrimSpace(a.Action + " " + a.EntityID + " " + a.Version)
		},
		Handler: func(ctx context.Context, c *toolkit.Call, a manageUpdatesArgs) (manageUpdatesResult, error) {
			return d.manageUpdate(ctx, a)
		},
	})
}

// updateConfirm: installing is always confirmed — `restart` for Core, OS and Supervisor as the
// registry identifies them (an entity the registry cannot vouch for counts as one), `change` for
// the rest; skip and clear_skipped change the entity's state, so what the user's automations
// would do about that counts, as for any service.
func updateConfirm(d Deps) *toolkit.Confirm[manageUpdatesArgs] {
	return &toolkit.Confirm[manageUpdatesArgs]{
		When: "action install (`restart` for Home Assistant Core, OS and Supervisor, `change` for others); skip and clear_skipped when an automation of yours they start needs it",
		Check: func(ctx context.Context, c *toolkit.Call, a manageUpdatesArgs) (toolkit.Ask, error) {
			if a.EntityID == "" || !strings.HasPrefix(a.EntityID, "update.") {
				return toolkit.Ask{}, nil // the handler refuses it
			}
			switch a.Action {
			case "install", "skip", "clear_skipped":
			default:
				return toolkit.Ask{}, nil
			}
			w := newWalk(d)
			data := map[string]any{}
			if a.Version != "" {
				data["version"] = a.Version
			}
			var t sensitive.Target
			t.Add(map[string]any{"entity_id": a.EntityID})
			w.service(ctx, "update."+a.Action, t, data)
			if a.Action != "install" {
				return w.ask("Call update." + a.Action + " on " + a.EntityID)
			}
			class, why := installClass(ctx, d, a.EntityID)
			w.fact("update", a.EntityID, string(class), why)
			q := "Install the update " + a.EntityID
			if a.Version != "" {
				q += " (version " + a.Version + ")"
			}
			if why != "" {
				q += ", which " + why
			}
			return w.ask(q, class)
		},
	}
}

// installClass decides from the entity registry whether an install restarts Home Assistant or
// the host: the platform and unique id are the integration's, which a rename cannot change.
func installClass(ctx context.Context, d Deps, entityID string) (sensitive.Class, string) {
	entries, err := d.HA.EntityEntries(ctx, []string{entityID})
	if err != nil {
		return sensitive.Restart, "may restart Home Assistant (hamcp cannot read the entity registry)"
	}
	e, ok := entries[entityID]
	if !ok || e.UniqueID == "" {
		return sensitive.Restart, "may restart Home Assistant (the entity registry does not know it)"
	}
	if why, system := systemUpdates[e.UniqueID]; system && e.Platform == "hassio" {
		return sensitive.Restart, why
	}
	return sensitive.Change, ""
}

// manageUpdate runs one action.
func (d Deps) manageUpdate(ctx context.Context, a manageUpdatesArgs) (manageUpdatesResult, error) {
	if a.Action == "list" {
		return d.listUpdates(ctx, a)
	}
	if a.EntityID == "" {
		return manageUpdatesResult{}, toolkit.InvalidArg("entity_id", "is required for "+a.Action, `{"action": "`+a.Action+`", "entity_id": "update.home_assistant_core_update"}`)
	}
	if !strings.HasPrefix(a.EntityID, "update.") {
		return manageUpdatesResult{}, toolkit.InvalidArg("entity_id", "must be an update entity (update.*) from list", `{"entity_id": "update.home_assistant_core_update"}`)
	}
	if (a.Version != "" || a.Backup) && a.Action != "install" {
		return manageUpdatesResult{}, toolkit.InvalidArg("version", "and backup only apply to install", "")
	}
	st, err := d.HA.State(ctx, a.EntityID)
	if isNotFound(err) {
		return manageUpdatesResult{}, toolkit.NotFound("no update entity "+a.EntityID, `{"action": "list", "all": true} lists them`)
	}
	if err != nil {
		return manageUpdatesResult{}, haError(err, false, "")
	}
	it := updateOf(st)
	switch a.Action {
	case "release_notes":
		return d.releaseNotes(ctx, it)
	case "install":
		return d.installUpdate(ctx, a, it, st)
	}
	return d.skipUpdate(ctx, a, it)
}

func (d Deps) listUpdates(ctx context.Context, a manageUpdatesArgs) (manageUpdatesResult, error) {
	all, err := liveStates(ctx, d.HA)
	if err != nil {
		return manageUpdatesResult{}, haError(err, false, "")
	}
	var items []updateItem
	for _, s := range all {
		if s.Domain() != "update" {
			continue
		}
		it := updateOf(s)
		if !a.All && !it.Pending && it.InProgress == nil {
			continue
		}
		items = append(items, it)
	}
	// Home Assistant itself first, then by entity id.
	sort.Slice(items, func(i, j int) bool {
		ci, cj := strings.HasPrefix(items[i].EntityID, "update.home_assistant_"), strings.HasPrefix(items[j].EntityID, "update.home_assistant_")
		if ci != cj {
			return ci
		}
		return items[i].EntityID < items[j].EntityID
	})
	page := toolkit.Paginate(items, a.Page)
	out := manageUpdatesResult{Action: "list", List: &page}
	if len(items) == 0 && !a.All {
		out.Note = `everything is up to date; {"action": "list", "all": true} shows every update entity`
	}
	return out, nil
}

// updateOf reads an update entity's state: "on" means a newer version waits.
func updateOf(s homeassistant.State) updateItem {
	it := updateItem{EntityID: s.EntityID, Title: stringOf(s.Attributes["title"]), Installed: stringOf(s.Attributes["installed_version"]),
		Latest: stringOf(s.Attributes["latest_version"]), Skipped: stringOf(s.Attributes["skipped_version"]), Pending: s.State == "on",
		URL: stringOf(s.Attributes["release_url"])}
	if it.Title == "" {
		it.Title = s.FriendlyName()
	}
	it.AutoUpdate, _ = s.Attributes["auto_update"].(bool)
	switch p := s.Attributes["in_progress"].(type) {
	case bool:
		if p {
			it.InProgress = true
		}
	case float64:
		it.InProgress = p
	}
	if sum := stringOf(s.Attributes["release_summary"]); sum != "" {
		it.Summary = truncateUTF8(sum, 255)
	}
	f, _ := s.Attributes["supported_features"].(float64)
	for _, feat := range []struct {
		bit  int
		name string
	}{{homeassistant.UpdateSpecificVersion, "specific_version"}, {homeassistant.UpdateBackup, "backup"}, {homeassistant.UpdateReleaseNotes, "release_notes"}} {
		if int(f)&feat.bit != 0 {
			it.Supports = append(it.Supports, feat.name)
		}
	}
	if int(f)&homeassistant.UpdateInstall == 0 {
		it.Supports = append(it.Supports, "no install (update it outside Home Assistant)")
	}
	return it
}

func (it updateItem) supports(name string) bool {
	for _, s := range it.Supports {
		if s == name {
			return true
		}
	}
	return false
}

func (d Deps) releaseNotes(ctx context.Context, it updateItem) (manageUpdatesResult, error) {
	out := manageUpdatesResult{Action: "release_notes", Update: &it}
	if !it.supports("release_notes") {
		out.Note = "this update publishes no release notes through Home Assistant"
		if it.URL != "" {
			out.Note += "; they are at " + it.URL
		}
		return out, nil
	}
	notes, err := d.HA.UpdateReleaseNotes(ctx, it.EntityID)
	if err != nil {
		return manageUpdatesResult{}, haWSError(err, "release notes", false, "")
	}
	if len(notes) > maxReleaseNotes {
		notes, out.Truncated = truncateUTF8(notes, maxReleaseNotes), true
		out.Note = "the notes were cut at 12,000 bytes"
		if it.URL != "" {
			out.Note += "; read them in full at " + it.URL
		}
	}
	out.ReleaseNotes = notes
	return out, nil
}

// installUpdate checks what Home Assistant would refuse, then calls update.install. The call
// lasts as long as the install: past updateWait the answer says it is still going.
func (d Deps) installUpdate(ctx context.Context, a manageUpdatesArgs, it updateItem, st homeassistant.State) (manageUpdatesResult, error) {
	f, _ := st.Attributes["supported_features"].(float64)
	switch {
	case int(f)&homeassistant.UpdateInstall == 0:
		return manageUpdatesResult{}, &toolkit.Error{Code: "not_supported", Field: "entity_id", Message: it.EntityID + " cannot be installed from Home Assistant", Hint: "update it the way its vendor says" + orURL(it.URL)}
	case a.Backup && !it.supports("backup"):
		return manageUpdatesResult{}, toolkit.InvalidArg("backup", "is not supported by "+it.EntityID+": it cannot back up before installing. "+
			`Make one with ha_manage_backups {"action": "create"}, then install without backup`, "")
	case a.Version != "" && !it.supports("specific_version"):
		return manageUpdatesResult{}, toolkit.InvalidArg("version", it.EntityID+" only installs its latest version ("+it.Latest+"); leave version out", "")
	case a.Version == "" && (it.Latest == "" || it.Latest == it.Installed):
		return manageUpdatesResult{}, &toolkit.Error{Code: "no_update", Field: "entity_id", Message: it.EntityID + " is up to date (" + it.Installed + ")"}
	case it.InProgress != nil:
		return manageUpdatesResult{}, &toolkit.Error{Code: "in_progress", Field: "entity_id", Message: "an install of " + it.EntityID + " is already running", Hint: "list shows when it is done"}
	}
	data := map[string]any{}
	if a.Version != "" {
		data["version"] = a.Version
	}
	if a.Backup {
		data["backup"] = true
	}
	target := homeassistant.ServiceTarget{EntityID: []string{it.EntityID}}
	// The install goes on in Home Assistant whatever happens to this call: give it its own
	// context, bounded, and stop waiting for it after updateWait.
	done := make(chan error, 1)
	go func() {
		callCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Minute)
		defer cancel()
		_, err := d.HA.CallServiceWS(callCtx, "update", "install", data, target, false)
		done <- err
	}()
	version := a.Version
	if version == "" {
		version = it.Latest
	}
	select {
	case err := <-done:
		return d.installed(ctx, it, version, err)
	case <-time.After(updateWait):
	case <-ctx.Done():
	}
	return manageUpdatesResult{Action: "install", Update: &it, Done: "installing " + it.EntityID + " " + version,
		Note: `still installing: {"action": "list"} shows in_progress until it is done`}, nil
}

// installed answers for a finished install call.
func (d Deps) installed(ctx context.Context, it updateItem, version string, err error) (manageUpdatesResult, error) {
	out := manageUpdatesResult{Action: "install", Done: "installed " + it.EntityID + " " + version}
	var api *homeassistant.APIError
	switch {
	case errors.Is(err, homeassistant.ErrNoAnswer) || errors.Is(err, homeassistant.ErrUnavailable):
		// A Core or Supervisor update restarts them mid-call.
		out.Done = "installing " + it.EntityID + " " + version
		out.Note = "Home Assistant went away while installing, as it does when the update restarts it; check the version with list once it is back"
		return out, nil
	case errors.As(err, &api):
		return manageUpdatesResult{}, toolkit.Backend("Home Assistant", err, false, "list shows the update's state; ha_get_logs says more")
	case err != nil:
		return manageUpdatesResult{}, haError(err, false, "")
	}
	if st, err := d.HA.State(ctx, it.EntityID); err == nil {
		now := updateOf(st)
		out.Update = &now
	}
	if _, restarts := systemUpdateByEntity(it.EntityID); restarts {
		out.Note = "Home Assistant restarts to finish the update"
	}
	return out, nil
}

// systemUpdateByEntity names the usual entity ids of the Supervisor's system updates, for the
// answer only (the confirmation reads the registry).
func systemUpdateByEntity(entityID string) (string, bool) {
	switch entityID {
	case "update.home_assistant_core_update", "update.home_assistant_operating_system_update":
		return entityID, true
	}
	return "", false
}

func orURL(u string) string {
	if u == "" {
		return ""
	}
	return " (" + u + ")"
}

func (d Deps) skipUpdate(ctx context.Context, a manageUpdatesArgs, it updateItem) (manageUpdatesResult, error) {
	if a.Action == "skip" && !it.Pending {
		return manageUpdatesResult{}, &toolkit.Error{Code: "no_update", Field: "entity_id", Message: it.EntityID + " has no pending update to skip"}
	}
	target := homeassistant.ServiceTarget{EntityID: []string{it.EntityID}}
	if _, err := d.HA.CallServiceWS(ctx, "update", a.Action, nil, target, false); err != nil {
		var api *homeassistant.APIError
		if errors.As(err, &api) {
			return manageUpdatesResult{}, toolkit.Backend("Home Assistant", err, false, "")
		}
		return manageUpdatesResult{}, haError(err, false, "")
	}
	out := manageUpdatesResult{Action: a.Action, Done: strings.ReplaceAll(a.Action, "_", " ") + " " + it.EntityID}
	if st, err := d.HA.State(ctx, it.EntityID); err == nil {
		now := updateOf(st)
		out.Update = &now
	}
	return out, nil
}

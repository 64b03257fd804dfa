package hatools

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/sensitive"
	"github.com/hamcp/hamcp/src/supervisor"
	"github.com/hamcp/hamcp/src/toolkit"
)

// ha_manage_backups: Home Assistant's backups, through the Supervisor inside the add-on and
// through core's backup integration elsewhere, beside hamcp's own copies of the configuration
// files it overwrote. Backups take minutes, so creating one answers once it is done or after
// backupWait with the job to ask about (action status), never holding the call for the whole job.

type manageBackupsArgs struct {
	Action          string       `json:"action" validate:"required,oneof=list create restore delete status"`
	Slug            string       `json:"slug,omitempty" jsonschema:"backup; status: job id"`
	Name            string       `json:"name,omitempty"`
	Partial         *backupParts `json:"partial,omitempty"`
	ExcludeDatabase bool         `json:"exclude_database,omitempty" jsonschema:"leave out / keep history DB"`
	Password        string       `json:"password,omitempty"`
	Source          string       `json:"source,omitempty" validate:"omitempty,oneof=all homeassistant hamcp"`
	Filename        string       `json:"filename,omitempty" jsonschema:"hamcp's copies of this file"`
}

// maxListed bounds a list: the newest first; source and filename narrow it.
const maxListed = 100

// backupParts is a partial backup or restore: the Supervisor's homeassistant, addons, folders.
type backupParts struct {
	HomeAssistant bool     `json:"homeassistant,omitempty"`
	Addons        []string `json:"addons,omitempty"`
	Folders       []string `json:"folders,omitempty" validate:"omitempty,dive,oneof=share ssl media addons/local"`
}

// backupEntry is one row of the list: hamcp's copies, or Home Assistant's backups.
type backupEntry struct {
	backupItem
	Protected bool `json:"protected,omitempty"`
}

type backupJob struct {
	ID       string  `json:"id"`
	Done     bool    `json:"done"`
	Progress float64 `json:"progress,omitempty"`
	Stage    string  `json:"stage,omitempty"`
	Error    string  `json:"error,omitempty"`
}

type manageBackupsResult struct {
	Action string                     `json:"action"`
	List   *toolkit.List[backupEntry] `json:"list,omitempty"`
	Backup *backupEntry               `json:"backup,omitempty"`
	Job    *backupJob                 `json:"job,omitempty"`
	Done   string                     `json:"done,omitempty"`
	Note   string                     `json:"note,omitempty"`
}

// backupWait is how long create waits for its job before answering with the job id; a
// variable so tests can make a held backup answer at once.
var backupWait = 20 * time.Second

// backupPoll is how often a running job is read.
const backupPoll = 250 * time.Millisecond

// backupIDRe is a Supervisor slug (8 hex digits) or core backup id; anything else could steer a path.
var backupIDRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// backupGrant: hamcp's copies of configuration files are read from /config, like the file tools.
var backupGrant = &toolkit.Condition[manageBackupsArgs]{
	Category: toolkit.Filesystem, When: "action list, unless source=homeassistant (hamcp's copies are files under /config)",
	Applies: func(a manageBackupsArgs) bool { return a.Action == "list" && a.Source != "homeassistant" },
}

// backupTools are the backup tools, in the order tools/list shows them.
func backupTools(d Deps) []*toolkit.Tool { return []*toolkit.Tool{manageBackups(d)} }

// manageBackups is ha_manage_backups.
func manageBackups(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[manageBackupsArgs, manageBackupsResult]{
		Name: "ha_manage_backups", Toolset: SetConfig, Title: "Manage backups", Conditional: backupGrant,
		Confirm: &toolkit.Confirm[manageBackupsArgs]{When: "action restore (`restart` and `delete`: it replaces the configuration and restarts); delete (`delete`)",
			Check: func(ctx context.Context, c *toolkit.Call, a manageBackupsArgs) (toolkit.Ask, error) {
				return backupAsk(a), nil
			}},
		Description: "Backups of Home Assistant and hamcp's copies of files it overwrote: list, create (partial: some parts), status of its job; " +
			"confirmed by the user: restore (replaces the config, restarts), delete. Back up before risky changes.",
		Destructive: true,
		Summary:     func(a manageBackupsArgs) string { return strings.TrimSpace(a.Action + " " + a.Slug) },
		Handler: func(ctx context.Context, c *toolkit.Call, a manageBackupsArgs) (manageBackupsResult, error) {
			return d.manageBackup(ctx, a)
		},
	})
}

// backupAsk is the question restore and delete need; a call missing its slug asks nothing and
// fails in the handler with the argument error.
func backupAsk(a manageBackupsArgs) toolkit.Ask {
	if a.check() != nil {
		return toolkit.Ask{}
	}
	switch a.Action {
	case "delete":
		return plain(sensitive.Delete, "Delete the backup "+a.Slug+"? It cannot be recovered.")
	case "restore":
		what := "Home Assistant's configuration, add-ons and folders"
		if a.Partial != nil {
			what = strings.Join(a.Partial.describe(), ", ")
		}
		return toolkit.Ask{Classes: []string{string(sensitive.Restart), string(sensitive.Delete)},
			Question: "Restore the backup " + a.Slug + "? It replaces " + what + " with the backup's copy and restarts Home Assistant; changes made since the backup are lost."}
	}
	return toolkit.Ask{}
}

func (p *backupParts) describe() []string {
	var out []string
	if p.HomeAssistant {
		out = append(out, "Home Assistant's configuration")
	}
	if len(p.Addons) > 0 {
		out = append(out, "the add-ons "+strings.Join(p.Addons, ", "))
	}
	if len(p.Folders) > 0 {
		out = append(out, "the folders "+strings.Join(p.Folders, ", "))
	}
	if len(out) == 0 {
		out = append(out, "nothing")
	}
	return out
}

// manageBackup checks the arguments each action needs, then runs it on the backend there is.
func (d Deps) manageBackup(ctx context.Context, a manageBackupsArgs) (manageBackupsResult, error) {
	if err := a.check(); err != nil {
		return manageBackupsResult{}, err
	}
	if a.Action == "list" {
		return d.listAllBackups(ctx, a)
	}
	var b backupBackend = coreBackups{d.HA}
	if d.Supervisor != nil {
		b = supervisorBackups{d.Supervisor}
	}
	out, err := func() (manageBackupsResult, error) {
		switch a.Action {
		case "create":
			return b.create(ctx, a)
		case "restore":
			return b.restore(ctx, a)
		case "delete":
			return b.remove(ctx, a.Slug)
		}
		return b.status(ctx, a.Slug)
	}()
	out.Action = a.Action
	return out, err
}

// check refuses what an action cannot use, naming the field.
func (a manageBackupsArgs) check() error {
	switch a.Action {
	case "restore", "delete":
		if !backupIDRe.MatchString(a.Slug) {
			return toolkit.InvalidArg("slug", "is required for "+a.Action+": a backup's slug from {\"action\": \"list\"}", `{"action": "`+a.Action+`", "slug": "9ecf2b1a"}`)
		}
	case "status":
		if !backupIDRe.MatchString(a.Slug) {
			return toolkit.InvalidArg("slug", "is required for status: the job id create or restore returned", `{"action": "status", "slug": "5d9e8c7b6a5f4e3d2c1b0a9f8e7d6c5b"}`)
		}
	}
	if len(a.Name) > 200 || len(a.Password) > 200 {
		return toolkit.InvalidArg("name", "and password must be at most 200 characters", "")
	}
	if a.Partial != nil && a.Action != "create" && a.Action != "restore" {
		return toolkit.InvalidArg("partial", "only applies to create and restore", "")
	}
	for _, s := range partialAddons(a.Partial) {
		if !slugRe.MatchString(s) {
			return toolkit.InvalidArg("partial.addons", "must be add-on slugs as ha_manage_addons lists them", `{"partial": {"addons": ["core_mosquitto"]}}`)
		}
	}
	if a.Filename != "" && a.Action != "list" {
		return toolkit.InvalidArg("filename", "only applies to list", "")
	}
	return nil
}

func partialAddons(p *backupParts) []string {
	if p == nil {
		return nil
	}
	return p.Addons
}

// backupBackend is where Home Assistant's backups live: the Supervisor or core's integration.
type backupBackend interface {
	list(ctx context.Context) ([]backupEntry, error)
	create(ctx context.Context, a manageBackupsArgs) (manageBackupsResult, error)
	restore(ctx context.Context, a manageBackupsArgs) (manageBackupsResult, error)
	remove(ctx context.Context, slug string) (manageBackupsResult, error)
	status(ctx context.Context, jobID string) (manageBackupsResult, error)
}

// listAllBackups merges hamcp's copies and Home Assistant's backups, newest first.
func (d Deps) listAllBackups(ctx context.Context, a manageBackupsArgs) (manageBackupsResult, error) {
	var items []backupEntry
	var notes []string
	if a.Source != "homeassistant" && d.Files != nil {
		own, err := hamcpBackups(d.Files, a.Filename)
		if err != nil {
			return manageBackupsResult{}, err
		}
		for _, b := range own {
			items = append(items, backupEntry{backupItem: b})
		}
	}
	if a.Source != "hamcp" && a.Filename == "" {
		var b backupBackend = coreBackups{d.HA}
		if d.Supervisor != nil {
			b = supervisorBackups{d.Supervisor}
		}
		list, err := b.list(ctx)
		var api *homeassistant.APIError
		switch {
		case errors.As(err, &api) && api.Code == "unknown_command":
			notes = append(notes, "Home Assistant's backup integration is not loaded, so only hamcp's copies are listed")
		case err != nil:
			return manageBackupsResult{}, err
		}
		items = append(items, list...)
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].at.After(items[j].at) })
	page := toolkit.Paginate(items, toolkit.Page{Limit: maxListed})
	if page.NextOffset != nil {
		notes = append(notes, fmt.Sprintf("the newest %d of %d: narrow with source or filename", maxListed, len(items)))
	}
	return manageBackupsResult{Action: "list", List: &page, Note: strings.Join(notes, "; ")}, nil
}

// supervisorBackups is the Supervisor's /backups API (the add-on).
type supervisorBackups struct{ s *supervisor.Client }

func (b supervisorBackups) list(ctx context.Context) ([]backupEntry, error) {
	list, err := b.s.Backups(ctx)
	if err != nil {
		return nil, supError(err, false, "")
	}
	out := make([]backupEntry, 0, len(list))
	for _, x := range list {
		out = append(out, backupEntry{backupItem: supervisorBackup(x), Protected: x.Protected})
	}
	return out, nil
}

func (b supervisorBackups) create(ctx context.Context, a manageBackupsArgs) (manageBackupsResult, error) {
	r := supervisor.BackupRequest{Name: a.Name, Password: a.Password, ExcludeDatabase: a.ExcludeDatabase}
	if p := a.Partial; p != nil {
		if !p.HomeAssistant && len(p.Addons) == 0 && len(p.Folders) == 0 {
			return manageBackupsResult{}, toolkit.InvalidArg("partial", "names nothing to back up: set homeassistant, addons or folders", `{"partial": {"homeassistant": true, "folders": ["share"]}}`)
		}
		r.Partial, r.HomeAssistant, r.Addons, r.Folders = true, p.HomeAssistant, p.Addons, p.Folders
	}
	jobID, slug, err := b.s.NewBackup(ctx, r)
	if err != nil {
		return manageBackupsResult{}, supError(err, false, `the add-on slugs are in ha_manage_addons {"action": "list"}`)
	}
	if slug == "" {
		return b.wait(ctx, jobID)
	}
	return b.finished(ctx, jobID, slug)
}

// wait follows a job until it ends or backupWait passes.
func (b supervisorBackups) wait(ctx context.Context, jobID string) (manageBackupsResult, error) {
	deadline := time.Now().Add(backupWait)
	for {
		out, err := b.status(ctx, jobID)
		if err != nil || out.Job == nil || out.Job.Done || time.Now().After(deadline) {
			return out, err
		}
		select {
		case <-ctx.Done():
			return out, nil
		case <-time.After(backupPoll):
		}
	}
}

func (b supervisorBackups) status(ctx context.Context, jobID string) (manageBackupsResult, error) {
	job, err := b.s.Job(ctx, jobID)
	if err != nil {
		return manageBackupsResult{}, supError(err, false, "job ids come from create and restore; list shows the backups that exist")
	}
	j := &backupJob{ID: jobID, Done: job.Done, Progress: job.Progress}
	if job.Stage != nil {
		j.Stage = *job.Stage
	}
	if len(job.Errors) > 0 {
		j.Error = job.Errors[0].Message
	}
	switch {
	case !job.Done:
		return manageBackupsResult{Job: j, Note: `still running: ask again with {"action": "status", "slug": "` + jobID + `"}`}, nil
	case j.Error != "":
		return manageBackupsResult{Job: j, Note: "the job failed: " + j.Error}, nil
	case job.Reference != nil && strings.Contains(job.Name, "_backup"):
		return b.finished(ctx, jobID, *job.Reference)
	}
	return manageBackupsResult{Job: j, Done: "finished"}, nil
}

// finished describes the backup a job made.
func (b supervisorBackups) finished(ctx context.Context, jobID, slug string) (manageBackupsResult, error) {
	out := manageBackupsResult{Job: &backupJob{ID: jobID, Done: true, Progress: 100}, Done: "created " + slug}
	if info, err := b.s.BackupInfo(ctx, slug); err == nil {
		e := backupEntry{backupItem: supervisorBackup(supervisor.Backup{Slug: info.Slug, Name: info.Name, Date: info.Date, Type: info.Type,
			Size: info.Size, Protected: info.Protected, Compressed: info.Compressed, Location: info.Location, Content: info.Content}), Protected: info.Protected}
		out.Backup = &e
	}
	return out, nil
}

func (b supervisorBackups) restore(ctx context.Context, a manageBackupsArgs) (manageBackupsResult, error) {
	info, err := b.s.BackupInfo(ctx, a.Slug)
	if err != nil {
		return manageBackupsResult{}, supError(err, false, `the slugs are in {"action": "list"}`)
	}
	if info.Protected && a.Password == "" {
		return manageBackupsResult{}, toolkit.InvalidArg("password", "is required: the backup "+a.Slug+" is encrypted; ask the user for its password", "")
	}
	r := supervisor.RestoreRequest{Password: a.Password}
	if p := a.Partial; p != nil {
		r.Partial, r.HomeAssistant, r.Addons, r.Folders = true, p.HomeAssistant, p.Addons, p.Folders
	}
	jobID, err := b.s.RestoreBackup(ctx, a.Slug, r)
	if err != nil {
		return manageBackupsResult{}, supError(err, false, "")
	}
	return manageBackupsResult{Job: &backupJob{ID: jobID}, Done: "restore of " + a.Slug + " started",
		Note: "the Supervisor restores in the background and restarts Home Assistant; a full restore restarts the add-ons too, hamcp among them, which ends this session. " +
			`Once it is back, {"action": "status", "slug": "` + jobID + `"} says how it went`}, nil
}

func (b supervisorBackups) remove(ctx context.Context, slug string) (manageBackupsResult, error) {
	if err := b.s.DeleteBackup(ctx, slug); err != nil {
		return manageBackupsResult{}, supError(err, false, `the slugs are in {"action": "list"}`)
	}
	return manageBackupsResult{Done: "deleted " + slug}, nil
}

// coreBackups is core's backup integration over WebSocket (Container and Core installs, or
// hamcp outside the add-on).
type coreBackups struct{ ha *homeassistant.Client }

func backupWSError(err error, changed bool) error {
	return haWSError(err, "backups (the backup integration)", changed, "the backup integration is part of default_config")
}

func (b coreBackups) list(ctx context.Context) ([]backupEntry, error) {
	info, err := b.ha.BackupInfo(ctx)
	if err != nil {
		var api *homeassistant.APIError
		if errors.As(err, &api) && api.Code == "unknown_command" {
			return nil, err
		}
		return nil, backupWSError(err, false)
	}
	out := make([]backupEntry, 0, len(info.Backups))
	for _, x := range info.Backups {
		out = append(out, coreBackupEntry(x))
	}
	return out, nil
}

func coreBackupEntry(x homeassistant.CoreBackup) backupEntry {
	e := backupEntry{backupItem: backupItem{Source: "homeassistant", Slug: x.BackupID, Name: x.Name, Date: x.Date, Type: "partial",
		SizeMB: math.Round(float64(x.Size())/1048576*100) / 100}, Protected: x.Protected()}
	if t, err := time.Parse(time.RFC3339Nano, x.Date); err == nil {
		e.at = t.UTC()
		e.Date = e.at.Format(time.RFC3339)
	}
	if x.HomeAssistantIncluded {
		part := "homeassistant"
		if !x.DatabaseIncluded {
			part += " (without the database)"
		}
		e.Content = append(e.Content, part)
	}
	for _, a := range x.Addons {
		e.Content = append(e.Content, "addon: "+a.Slug)
	}
	if len(x.Folders) > 0 {
		e.Content = append(e.Content, "folders: "+strings.Join(x.Folders, ", "))
	}
	agents := make([]string, 0, len(x.Agents))
	for id := range x.Agents {
		agents = append(agents, id)
	}
	slices.Sort(agents)
	e.Location = strings.Join(agents, ", ")
	return e
}

func (b coreBackups) create(ctx context.Context, a manageBackupsArgs) (manageBackupsResult, error) {
	if p := a.Partial; p != nil && (len(p.Addons) > 0 || len(p.Folders) > 0 || !p.HomeAssistant) {
		return manageBackupsResult{}, toolkit.InvalidArg("partial", "can only be {\"homeassistant\": true} here: without the Supervisor, Home Assistant backs up its own configuration (exclude_database leaves out the history)", "")
	}
	agents, err := b.ha.BackupAgents(ctx)
	if err != nil {
		return manageBackupsResult{}, backupWSError(err, false)
	}
	agent := homeassistant.LocalBackupAgent(agents)
	if agent == "" {
		return manageBackupsResult{}, &toolkit.Error{Code: "not_supported", Message: fmt.Sprintf("Home Assistant has no local backup agent (agents: %s)", strings.Join(agents, ", ")),
			Hint: "set up backups under Settings → System → Backups"}
	}
	jobID, err := b.ha.GenerateBackup(ctx, homeassistant.BackupRequest{AgentIDs: []string{agent}, Name: a.Name, Password: a.Password, ExcludeDatabase: a.ExcludeDatabase})
	if err != nil {
		return manageBackupsResult{}, backupWSError(err, false)
	}
	deadline := time.Now().Add(backupWait)
	for {
		out, err := b.status(ctx, jobID)
		if err != nil || out.Job.Done || time.Now().After(deadline) {
			return out, err
		}
		select {
		case <-ctx.Done():
			return out, nil
		case <-time.After(backupPoll):
		}
	}
}

// status reads the manager: a job is done once the manager is idle again; the backup it made
// carries the job's id on a Container or Core install.
func (b coreBackups) status(ctx context.Context, jobID string) (manageBackupsResult, error) {
	info, err := b.ha.BackupInfo(ctx)
	if err != nil {
		return manageBackupsResult{}, backupWSError(err, false)
	}
	j := &backupJob{ID: jobID}
	for _, x := range info.Backups {
		if x.BackupID == jobID {
			e := coreBackupEntry(x)
			j.Done, j.Progress = true, 100
			return manageBackupsResult{Job: j, Backup: &e, Done: "created " + x.BackupID}, nil
		}
	}
	if info.State != "idle" {
		if ev := info.LastActionEvent; ev != nil && ev.Stage != nil {
			j.Stage = *ev.Stage
		}
		return manageBackupsResult{Job: j, Note: "Home Assistant is busy (" + info.State + `): ask again with {"action": "status", "slug": "` + jobID + `"}`}, nil
	}
	j.Done = true
	if ev := info.LastActionEvent; ev != nil && ev.State == "failed" {
		j.Error = ev.ManagerState + " failed"
		if ev.Reason != nil {
			j.Error += ": " + *ev.Reason
		}
		return manageBackupsResult{Job: j, Note: "the job failed; ha_get_logs shows why"}, nil
	}
	return manageBackupsResult{Job: j, Note: "no backup has this id; the job may have made one under another id: see list"}, nil
}

func (b coreBackups) details(ctx context.Context, slug string) (*homeassistant.CoreBackup, error) {
	x, err := b.ha.BackupDetails(ctx, slug)
	if err != nil {
		return nil, backupWSError(err, false)
	}
	if x == nil {
		return nil, toolkit.NotFound("Home Assistant has no backup "+slug, `the slugs are in {"action": "list"}`)
	}
	return x, nil
}

func (b coreBackups) restore(ctx context.Context, a manageBackupsArgs) (manageBackupsResult, error) {
	if p := a.Partial; p != nil && (len(p.Addons) > 0 || len(p.Folders) > 0 || !p.HomeAssistant) {
		return manageBackupsResult{}, toolkit.InvalidArg("partial", "can only be {\"homeassistant\": true} here: without the Supervisor, Home Assistant restores its own configuration (exclude_database keeps the current history)", "")
	}
	x, err := b.details(ctx, a.Slug)
	if err != nil {
		return manageBackupsResult{}, err
	}
	if x.Protected() && a.Password == "" {
		return manageBackupsResult{}, toolkit.InvalidArg("password", "is required: the backup "+a.Slug+" is encrypted; ask the user for its password", "")
	}
	err = b.ha.RestoreBackup(ctx, a.Slug, x.LocalAgent(), a.Password, a.ExcludeDatabase)
	var api *homeassistant.APIError
	switch {
	case errors.Is(err, homeassistant.ErrNoAnswer):
		// Home Assistant restarts inside the command: the connection ends instead of an answer.
	case errors.As(err, &api) && api.Code == "password_incorrect":
		return manageBackupsResult{}, toolkit.InvalidArg("password", "is not the backup's password; nothing was restored", "")
	case err != nil:
		return manageBackupsResult{}, backupWSError(err, false)
	}
	return manageBackupsResult{Done: "restore of " + a.Slug + " started",
		Note: "Home Assistant restarts to restore the backup; its tools answer again once it is back (ha_system_info)"}, nil
}

func (b coreBackups) remove(ctx context.Context, slug string) (manageBackupsResult, error) {
	// backup/delete answers the same for an id no agent has: look first, so a typo is not "deleted".
	if _, err := b.details(ctx, slug); err != nil {
		return manageBackupsResult{}, err
	}
	failed, err := b.ha.DeleteBackup(ctx, slug)
	if err != nil {
		return manageBackupsResult{}, backupWSError(err, false)
	}
	if len(failed) > 0 {
		agents := make([]string, 0, len(failed))
		for id, msg := range failed {
			agents = append(agents, id+": "+msg)
		}
		slices.Sort(agents)
		return manageBackupsResult{}, toolkit.Backend("Home Assistant", errors.New("some copies were not deleted ("+strings.Join(agents, "; ")+")"), true, "list shows which copies are left")
	}
	return manageBackupsResult{Done: "deleted " + slug}, nil
}

// supervisorBackup is one of the Supervisor's backups as a list row.
func supervisorBackup(b supervisor.Backup) backupItem {
	it := backupItem{Source: "homeassistant", Slug: b.Slug, Name: b.Name, Type: b.Type, Date: b.Date, SizeMB: b.Size}
	if t, err := time.Parse(time.RFC3339Nano, b.Date); err == nil {
		it.at = t.UTC()
		it.Date = it.at.Format(time.RFC3339)
	}
	if b.Content.HomeAssistant {
		it.Content = append(it.Content, "homeassistant")
	}
	if len(b.Content.Addons) > 0 {
		it.Content = append(it.Content, "addons: "+strings.Join(b.Content.Addons, ", "))
	}
	if len(b.Content.Folders) > 0 {
		it.Content = append(it.Content, "folders: "+strings.Join(b.Content.Folders, ", "))
	}
	if b.Location != nil {
		it.Location = *b.Location
	}
	return it
}

package hubitattools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/integrations/hubitat/hubstore"
	"github.com/hamcp/hamcp/src/toolkit"
)

// Dashboards are written to the hub itself, so their writes take every admin write gate: the
// option, the hub_admin grant, a backup through hamcp within the hour, and the user's yes.

type dashboardsArgs struct {
	Action      string   `json:"action" validate:"required,oneof=list get create update delete" example:"list"`
	DashboardID string   `json:"dashboardId,omitempty" validate:"omitempty,numeric"`
	Name        string   `json:"name,omitempty"`
	DeviceIDs   []string `json:"deviceIds,omitempty" validate:"omitempty,dive,numeric"`
	Show        []string `json:"show,omitempty" jsonschema:"tiles shown" validate:"omitempty,dive,oneof=mode clock calendar hsm edit navigation tutorial"`
	toolkit.Page
}

func (a dashboardsArgs) writes() bool {
	return a.Action == "create" || a.Action == "update" || a.Action == "delete"
}

type dashboardsResult struct {
	Action    string                           `json:"action"`
	List      *toolkit.List[hubitat.Dashboard] `json:"list,omitempty"`
	Dashboard *hubitat.Dashboard               `json:"dashboard,omitempty"`
	// Previous is the config an update or delete replaced: update with it to put it back.
	Previous *hubitat.Dashboard `json:"previous,omitempty"`
	Done     string             `json:"done,omitempty"`
	Note     string             `json:"note,omitempty"`
}

var showFlags = []struct {
	name string
	flag func(*hubitat.DashboardConfig) *bool
}{
	{"mode", func(c *hubitat.DashboardConfig) *bool { return &c.ShowModeTile }},
	{"clock", func(c *hubitat.DashboardConfig) *bool { return &c.ShowClockTile }},
	{"calendar", func(c *hubitat.DashboardConfig) *bool { return &c.ShowCalendarTile }},
	{"hsm", func(c *hubitat.DashboardConfig) *bool { return &c.ShowHSMTile }},
	{"edit", func(c *hubitat.DashboardConfig) *bool { return &c.ShowEdit }},
	{"navigation", func(c *hubitat.DashboardConfig) *bool { return &c.ShowNavigation }},
	{"tutorial", func(c *hubitat.DashboardConfig) *bool { return &c.ShowTutorial }},
}

// config is the dashboard the call asks for: base (the current one, for an update) with the
// given fields laid over it.
func (a dashboardsArgs) config(base hubitat.DashboardConfig) hubitat.DashboardConfig {
	cfg := base
	if a.Name != "" {
		cfg.Name = a.Name
	}
	if a.DeviceIDs != nil {
		cfg.DeviceIDs = a.DeviceIDs
	}
	if a.Show != nil {
		for _, f := range showFlags {
			*f.flag(&cfg) = slices.Contains(a.Show, f.name)
		}
	}
	return cfg
}

func manageDashboards(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[dashboardsArgs, dashboardsResult]{
		Name: "hubitat_manage_dashboards", Toolset: SetAdmin, Title: "Hub dashboards",
		Description: "Hub dashboards (legacy ones read-only): list, get, create, update (only the fields given; returns " +
			"previous, which update puts back), delete. PINs stay hidden and unchanged. The user confirms create, update, " +
			"delete; each needs hubitat_create_hub_backup within the hour. Options: hubitat_admin_read to read; " +
			"hubitat_admin_write + hub_admin to change.",
		Available:   d.availableAdmin,
		Conditional: adminGrant(d, "action create, update or delete", dashboardsArgs.writes),
		Confirm: &toolkit.Confirm[dashboardsArgs]{When: "action create, update or delete (`" + AdminConfirmClass + "`: always asked)",
			Check: func(ctx context.Context, _ *toolkit.Call, a dashboardsArgs) (toolkit.Ask, error) {
				if !a.writes() {
					return toolkit.Ask{}, nil
				}
				return d.dashboardAsk(ctx, a)
			}},
		Destructive: true,
		Summary: func(a dashboardsArgs) string {
			return strings.TrimSpace(a.Action + " " + a.DashboardID)
		},
		Handler: func(ctx context.Context, _ *toolkit.Call, a dashboardsArgs) (dashboardsResult, error) {
			if !a.writes() {
				return d.readDashboards(ctx, a)
			}
			if _, err := d.dashboardGates(ctx, a); err != nil {
				return dashboardsResult{}, err
			}
			return d.writeDashboard(ctx, a)
		},
	})
}

func (d Deps) readDashboards(ctx context.Context, a dashboardsArgs) (dashboardsResult, error) {
	if err := d.requireAdminRead(); err != nil {
		return dashboardsResult{}, err
	}
	if a.Action == "get" {
		if err := needDashboardID(a); err != nil {
			return dashboardsResult{}, err
		}
		db, err := d.Hub.Dashboard(ctx, a.DashboardID)
		if err != nil {
			return dashboardsResult{}, d.dashboardError(ctx, "Reading dashboard "+a.DashboardID, err, false)
		}
		return dashboardsResult{Action: a.Action, Dashboard: &db}, nil
	}
	all, err := d.Hub.Dashboards(ctx)
	if err != nil {
		return dashboardsResult{}, d.dashboardError(ctx, "Listing dashboards", err, false)
	}
	l := toolkit.Paginate(all, a.Page)
	return dashboardsResult{Action: a.Action, List: &l}, nil
}

func needDashboardID(a dashboardsArgs) error {
	if a.DashboardID == "" {
		return toolkit.InvalidArg("dashboardId", "is required for action "+a.Action+": the dashboard's id from action list", `{"action": "`+a.Action+`", "dashboardId": "71"}`)
	}
	return nil
}

func (d Deps) dashboardError(ctx context.Context, what string, err error, changed bool) error {
	switch {
	case errors.Is(err, hubitat.ErrDashboardNotFound):
		return toolkit.NotFound("Dashboard not found", "hubitat_manage_dashboards list gives the ids")
	case errors.Is(err, hubitat.ErrUnsupported):
		return toolkit.InvalidArg("dashboardId", err.Error()+"; nothing was done", `{"action": "list"}`)
	}
	return d.adminFailed(ctx, what, err, changed || errors.Is(err, hubitat.ErrNotConfirmed), "hubitat_manage_dashboards list shows what the hub has now")
}

// dashboardGates are the admin write gates after the grant: the option, then the backup.
func (d Deps) dashboardGates(ctx context.Context, a dashboardsArgs) (hubstore.HubBackup, error) {
	if err := d.requireAdminWrite(); err != nil {
		return hubstore.HubBackup{}, err
	}
	return d.backupGate(ctx, "hubitat_manage_dashboards")
}

// dashboardAsk checks the call fully (gates, arguments, the dashboard it changes) before the
// user is asked, so nobody approves a call that would then be refused.
func (d Deps) dashboardAsk(ctx context.Context, a dashboardsArgs) (toolkit.Ask, error) {
	if _, err := d.dashboardGates(ctx, a); err != nil {
		return toolkit.Ask{}, err
	}
	var cur hubitat.Dashboard
	if a.Action != "create" {
		if err := needDashboardID(a); err != nil {
			return toolkit.Ask{}, err
		}
		var err error
		if cur, err = d.Hub.Dashboard(ctx, a.DashboardID); err != nil {
			return toolkit.Ask{}, d.dashboardError(ctx, "Reading dashboard "+a.DashboardID, err, false)
		}
	}
	if a.Action == "delete" {
		return toolkit.Ask{Classes: []string{AdminConfirmClass}, Question: fmt.Sprintf("Delete the Hubitat dashboard %q (id %s)? It cannot be undone.", cur.Name, cur.ID),
			Digest: "dashboard:delete:" + cur.ID + ":" + cur.Name}, nil
	}
	cfg := a.config(cur.DashboardConfig)
	if err := hubitat.CheckDashboard(cfg); err != nil {
		field := strings.TrimSuffix(strings.Fields(err.Error())[0], ":")
		if field == "navigationSelection" {
			field = "navigation"
		}
		return toolkit.Ask{}, toolkit.InvalidArg(field, err.Error(), `{"action": "create", "name": "Kitchen", "deviceIds": ["2", "4"]}`)
	}
	verb := "Create the Hubitat dashboard"
	if a.Action == "update" {
		verb = "Change the Hubitat dashboard " + cur.ID + " to"
	}
	q := fmt.Sprintf("%s %q showing %s%s? Anyone who can open it can control those devices.", verb, cfg.Name, d.deviceNames(cfg.DeviceIDs), hsmNote(cfg))
	return toolkit.Ask{Classes: []string{AdminConfirmClass}, Question: q,
		Digest: fmt.Sprintf("dashboard:%s:%s:%+v", a.Action, cur.ID, cfg)}, nil
}

func hsmNote(cfg hubitat.DashboardConfig) string {
	if cfg.ShowHSMTile {
		return " and the alarm (HSM) tile"
	}
	return ""
}

// deviceNames names devices for the user's question (display only: the user is asked anyway).
func (d Deps) deviceNames(ids []string) string {
	names := make([]string, 0, len(ids))
	for _, id := range ids {
		if dev, ok := d.Hub.Cache().Get(id); ok && dev.Label != "" {
			names = append(names, fmt.Sprintf("%s (%s)", dev.Label, id))
		} else {
			names = append(names, "device "+id)
		}
	}
	return strings.Join(names, ", ")
}

func (d Deps) writeDashboard(ctx context.Context, a dashboardsArgs) (dashboardsResult, error) {
	what := a.Action + " dashboard " + a.DashboardID
	d.Log(ctx, "info", CompHubAdmin, strings.TrimSpace(what))
	switch a.Action {
	case "create":
		cfg := a.config(hubitat.DashboardConfig{})
		id, err := d.Hub.CreateDashboard(ctx, cfg)
		if err != nil {
			return dashboardsResult{}, d.dashboardError(ctx, what, err, false)
		}
		db, err := d.Hub.Dashboard(ctx, id)
		if err != nil {
			return dashboardsResult{Action: a.Action, Done: "dashboard " + id + " created", Note: "reading it back failed: " + err.Error()}, nil
		}
		return dashboardsResult{Action: a.Action, Dashboard: &db, Done: "dashboard " + id + " created"}, nil
	case "update":
		cur, err := d.Hub.Dashboard(ctx, a.DashboardID)
		if err != nil {
			return dashboardsResult{}, d.dashboardError(ctx, what, err, false)
		}
		prev, err := d.Hub.UpdateDashboard(ctx, a.DashboardID, a.config(cur.DashboardConfig))
		if err != nil {
			return dashboardsResult{}, d.dashboardError(ctx, what, err, false)
		}
		db, err := d.Hub.Dashboard(ctx, a.DashboardID)
		if err != nil {
			return dashboardsResult{}, d.dashboardError(ctx, what, err, true)
		}
		return dashboardsResult{Action: a.Action, Dashboard: &db, Previous: &prev, Done: "dashboard " + a.DashboardID + " updated"}, nil
	}
	prev, err := d.Hub.DeleteDashboard(ctx, a.DashboardID)
	if err != nil {
		return dashboardsResult{}, d.dashboardError(ctx, what, err, false)
	}
	return dashboardsResult{Action: a.Action, Previous: &prev, Done: "dashboard " + a.DashboardID + " deleted",
		Note: "previous is what it showed: create can make a new one like it (with a new id, and without its PINs)"}, nil
}

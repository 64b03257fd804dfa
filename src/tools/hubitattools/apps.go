package hubitattools

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/toolkit"
)

// The installed-app tools (hubitat_manage_apps, hubitat_manage_native_rules) read and change the
// hub's app instances through its admin routes, so they mix reads (option hubitat_admin_read)
// and writes (option hubitat_admin_write, the user's hub_admin grant, then the user's yes to the
// one call). Enabling, disabling, pausing and running change what the hub does, not what it
// holds, and are undone by the opposite action: they need no backup.

func installedAppTools(d Deps) []*toolkit.Tool {
	return []*toolkit.Tool{manageNativeRules(d), manageApps(d), manageDashboards(d), manageVariables(d)}
}

// availableAdmin is a mixed tool's Available: it exists when either admin option is on; each
// action then checks its own option.
func (d Deps) availableAdmin() error {
	if !d.AdminRead && !d.AdminWrite {
		return optionOff("hubitat_admin_read", "hub admin")
	}
	return nil
}

// adminGrant is the hub_admin grant a mixed tool's writing actions need. It applies only while
// the write option is on, so the user is never asked for a grant the option then refuses.
func adminGrant[In any](d Deps, when string, writes func(In) bool) *toolkit.Condition[In] {
	return &toolkit.Condition[In]{Category: HubAdmin, When: when,
		Applies: func(in In) bool { return d.AdminWrite && writes(in) }}
}

type manageAppsArgs struct {
	Action        string `json:"action" validate:"required,oneof=list get enable disable" example:"list"`
	AppID         int64  `json:"appId,omitempty" jsonschema:"id from list" validate:"omitempty,min=1"`
	PageName      string `json:"pageName,omitempty" jsonschema:"get: another page" validate:"omitempty,max=64"`
	Filter        string `json:"filter,omitempty" jsonschema:"list" validate:"omitempty,oneof=all user builtin disabled"`
	IncludeHidden bool   `json:"includeHidden,omitempty" jsonschema:"list"`
	toolkit.Page
}

func (a manageAppsArgs) writes() bool { return a.Action == "enable" || a.Action == "disable" }

type appsResult struct {
	Action string                              `json:"action"`
	List   *toolkit.List[hubitat.InstalledApp] `json:"list,omitempty"`
	App    *hubitat.AppConfig                  `json:"app,omitempty"`
	Done   string                              `json:"done,omitempty"`
}

func manageApps(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[manageAppsArgs, appsResult]{
		Name: "hubitat_manage_apps", Toolset: SetAdmin, Title: "Hub apps: enable, disable",
		Description: "Installed app instances (integrations, rules, user apps): list (parentId: the tree), get " +
			"(settings, passwords hidden), enable, disable (the user confirms). Not app code (hubitat_list_hub_apps) " +
			"nor running or pausing rules (hubitat_manage_native_rules). Options: hubitat_admin_read to read; " +
			"hubitat_admin_write + hub_admin to change.",
		Available:   d.availableAdmin,
		Conditional: adminGrant(d, "action enable or disable", manageAppsArgs.writes),
		Confirm: &toolkit.Confirm[manageAppsArgs]{When: "action enable or disable (`" + AdminConfirmClass + "`: always asked)",
			Check: func(ctx context.Context, _ *toolkit.Call, a manageAppsArgs) (toolkit.Ask, error) {
				if !a.writes() {
					return toolkit.Ask{}, nil
				}
				return d.appToggleAsk(ctx, a)
			}},
		Idempotent: true,
		Summary: func(a manageAppsArgs) string {
			if a.AppID != 0 {
				return fmt.Sprintf("%s app %d", a.Action, a.AppID)
			}
			return a.Action
		},
		Handler: func(ctx context.Context, _ *toolkit.Call, a manageAppsArgs) (appsResult, error) {
			switch a.Action {
			case "list":
				return d.listApps(ctx, a)
			case "get":
				return d.getApp(ctx, a)
			}
			return d.toggleApp(ctx, a)
		},
	})
}

func needAppID(id int64, action string) error {
	if id <= 0 {
		return toolkit.InvalidArg("appId", "is required for action "+action+": the app's id from action list", `{"action": "`+action+`", "appId": 50}`)
	}
	return nil
}

func (d Deps) listApps(ctx context.Context, a manageAppsArgs) (appsResult, error) {
	if err := d.requireAdminRead(); err != nil {
		return appsResult{}, err
	}
	apps, err := d.Hub.InstalledApps(ctx)
	if err != nil {
		return appsResult{}, d.adminFailed(ctx, "Listing installed apps", err, false, "")
	}
	visible := promoteHidden(apps, a.IncludeHidden)
	var out []hubitat.InstalledApp
	for _, x := range visible {
		if appFilter(x, a.Filter) {
			out = append(out, x)
		}
	}
	l := toolkit.Paginate(out, a.Page)
	return appsResult{Action: a.Action, List: &l}, nil
}

// promoteHidden drops hidden apps (unless asked for) and gives their children the nearest shown
// ancestor as parent, so every parentId names an app in the list (upstream does the same).
func promoteHidden(apps []hubitat.InstalledApp, includeHidden bool) []hubitat.InstalledApp {
	if includeHidden {
		return apps
	}
	hidden := map[int64]int64{} // hidden app → its parent
	for _, x := range apps {
		if x.Hidden {
			hidden[x.ID] = x.ParentID
		}
	}
	out := make([]hubitat.InstalledApp, 0, len(apps))
	for _, x := range apps {
		if x.Hidden {
			continue
		}
		for range len(hidden) + 1 {
			p, ok := hidden[x.ParentID]
			if !ok {
				break
			}
			x.ParentID = p
		}
		out = append(out, x)
	}
	return out
}

func appFilter(x hubitat.InstalledApp, filter string) bool {
	switch filter {
	case "user":
		return x.User
	case "builtin":
		return !x.User
	case "disabled":
		return x.Disabled
	}
	return true
}

var pageNameRE = regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`)

func (d Deps) getApp(ctx context.Context, a manageAppsArgs) (appsResult, error) {
	if err := d.requireAdminRead(); err != nil {
		return appsResult{}, err
	}
	if err := needAppID(a.AppID, a.Action); err != nil {
		return appsResult{}, err
	}
	if a.PageName != "" && !pageNameRE.MatchString(a.PageName) {
		return appsResult{}, toolkit.InvalidArg("pageName", "is a page name: letters, digits and underscores", `{"pageName": "mainPage"}`)
	}
	cfg, err := d.Hub.AppPage(ctx, a.AppID, a.PageName)
	if err != nil {
		return appsResult{}, d.appError(ctx, "Reading app "+fmt.Sprint(a.AppID), err, false)
	}
	return appsResult{Action: a.Action, App: &cfg}, nil
}

// appError maps the installed-app errors the model can act on.
func (d Deps) appError(ctx context.Context, what string, err error, changed bool) error {
	switch {
	case errors.Is(err, hubitat.ErrAppNotFound):
		return toolkit.NotFound("Installed app not found", "hubitat_manage_apps list gives the ids; never use a similar one")
	case errors.Is(err, hubitat.ErrNotARule):
		return toolkit.InvalidArg("ruleId", err.Error()+": hubitat_manage_native_rules list gives the rules; for other apps use hubitat_manage_apps", `{"action": "list"}`)
	case errors.Is(err, hubitat.ErrUnsupported):
		return toolkit.InvalidArg("action", err.Error()+"; nothing was done", `{"action": "list"}`)
	case errors.Is(err, hubitat.ErrSelf):
		return &toolkit.Error{Code: "refused", Message: err.Error(), Hint: "nothing was done"}
	}
	return d.adminFailed(ctx, what, err, changed, "")
}

// findApp is one app from the tree, for the question the user is asked.
func (d Deps) findApp(ctx context.Context, id int64) (hubitat.InstalledApp, error) {
	apps, err := d.Hub.InstalledApps(ctx)
	if err != nil {
		return hubitat.InstalledApp{}, d.adminFailed(ctx, "Listing installed apps", err, false, "")
	}
	for _, x := range apps {
		if x.ID == id {
			return x, nil
		}
	}
	return hubitat.InstalledApp{}, d.appError(ctx, "", hubitat.ErrAppNotFound, false)
}

func (d Deps) appToggleAsk(ctx context.Context, a manageAppsArgs) (toolkit.Ask, error) {
	if err := d.requireAdminWrite(); err != nil {
		return toolkit.Ask{}, err
	}
	if err := needAppID(a.AppID, a.Action); err != nil {
		return toolkit.Ask{}, err
	}
	x, err := d.findApp(ctx, a.AppID)
	if err != nil {
		return toolkit.Ask{}, err
	}
	what := fmt.Sprintf("the Hubitat app %q (%s, id %d)", x.Name, x.Type, x.ID)
	q := "Disable " + what + "? Everything it does stops until it is enabled again; if it locks doors, arms the alarm or warns of leaks, that stops too."
	if a.Action == "enable" {
		q = "Enable " + what + "? It starts acting on its settings again; hamcp cannot see everything an app does (it may control locks, garage doors or the alarm)."
	}
	if x.Children > 0 {
		q += fmt.Sprintf(" Its %d child apps are affected too.", x.Children)
	}
	return toolkit.Ask{Classes: []string{AdminConfirmClass}, Question: q,
		Digest: fmt.Sprintf("app:%d:%s:%s:%v", x.ID, x.Name, x.Type, x.Disabled)}, nil
}

func (d Deps) toggleApp(ctx context.Context, a manageAppsArgs) (appsResult, error) {
	if err := d.requireAdminWrite(); err != nil {
		return appsResult{}, err
	}
	if err := needAppID(a.AppID, a.Action); err != nil {
		return appsResult{}, err
	}
	disable := a.Action == "disable"
	d.Log(ctx, "info", CompHubAdmin, fmt.Sprintf("Setting installed app %d disabled=%v", a.AppID, disable))
	if err := d.Hub.SetAppDisabled(ctx, a.AppID, disable); err != nil {
		return appsResult{}, d.appError(ctx, a.Action+" app "+fmt.Sprint(a.AppID), err, errors.Is(err, hubitat.ErrNotConfirmed))
	}
	return appsResult{Action: a.Action, Done: fmt.Sprintf("app %d is now %sd", a.AppID, a.Action)}, nil
}

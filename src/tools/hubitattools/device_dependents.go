package hubitattools

import (
	"context"
	"slices"

	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/rules"
	"github.com/hamcp/hamcp/src/toolkit"
)

type hamcpRuleUse struct {
	ID      string   `json:"id"`
	Name    string   `json:"name"`
	Enabled bool     `json:"enabled"`
	Paths   []string `json:"paths"` // where in the rule, e.g. actions[0].deviceId
}

type dependentsResult struct {
	DeviceID string `json:"deviceId"`
	Device   string `json:"device,omitempty"`
	// HubApps are the hub's own apps using it (rules of Rule Machine and the others, dashboards,
	// integrations), as the device page lists them; absent when hubitat_admin_read is off.
	HubApps      []hubitat.AppUse `json:"hubApps,omitempty"`
	HubAppsCount int              `json:"hubAppsCount"`
	HubAppsNote  string           `json:"hubAppsNote,omitempty"`
	HamcpRules   []hamcpRuleUse   `json:"hamcpRules"`
	HamcpNote    string           `json:"hamcpNote,omitempty"`
}

func deviceDependents(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[deviceID, dependentsResult]{
		Name: "hubitat_list_device_dependents", Toolset: SetAdmin, Title: "Which apps and rules use a Hubitat device",
		Description: "Which apps, rules and dashboards use one Hubitat device: the hub's own apps (Rule Machine and other native rules, " +
			"dashboards, integrations; needs option hubitat_admin_read) and hamcp's rules (where in each rule). Call it before " +
			"deleting, disabling or replacing a device. For the device itself use hubitat_get_device.",
		ReadOnly: true,
		Handler: func(ctx context.Context, _ *toolkit.Call, a deviceID) (dependentsResult, error) {
			if !d.Hub.Allowed(a.DeviceID) {
				return dependentsResult{}, hubError(hubitat.ErrDeviceNotFound, false, "")
			}
			out := dependentsResult{DeviceID: a.DeviceID, HamcpRules: []hamcpRuleUse{}}
			if dev, ok := d.Hub.Cache().Get(a.DeviceID); ok {
				out.Device = dev.DisplayName()
			}
			if err := d.hubDependents(ctx, &out); err != nil {
				return dependentsResult{}, err
			}
			return out, d.ruleDependents(ctx, &out)
		},
	})
}

func (d Deps) hubDependents(ctx context.Context, out *dependentsResult) error {
	if !d.AdminRead {
		out.HubAppsNote = "not read: the hub's own apps are read through its admin routes, and the add-on option hubitat_admin_read is off"
		return nil
	}
	m, err := d.Hub.DeviceModel(ctx, out.DeviceID)
	if err != nil {
		return d.deviceAdminError(ctx, "Reading device "+out.DeviceID, err, false)
	}
	out.Device, out.HubApps, out.HubAppsCount = labelOf(m), m.AppsUsing, m.AppsUsingCount
	if m.AppsUsingCount != len(m.AppsUsing) {
		out.HubAppsNote = "the hub counts more apps than it listed"
	}
	return nil
}

func (d Deps) ruleDependents(ctx context.Context, out *dependentsResult) error {
	if d.Rules == nil {
		out.HamcpNote = "hamcp's rule engine is not running"
		return nil
	}
	list, err := d.Rules.List(ctx)
	if err != nil {
		return storeError(err)
	}
	for i := range list {
		var paths []string
		for _, ref := range rules.DeviceRefs(&list[i]) {
			if ref.DeviceID == out.DeviceID && !slices.Contains(paths, ref.Path) {
				paths = append(paths, ref.Path)
			}
		}
		if len(paths) > 0 {
			out.HamcpRules = append(out.HamcpRules, hamcpRuleUse{ID: list[i].ID, Name: list[i].Name, Enabled: list[i].Enabled, Paths: paths})
		}
	}
	return nil
}

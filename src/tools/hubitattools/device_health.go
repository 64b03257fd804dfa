package hubitattools

import (
	"context"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/toolkit"
)

type deviceHealthArgs struct {
	Status       string   `json:"status,omitempty" jsonschema:"default all; unknown = never heard from" validate:"omitempty,oneof=stale unknown offline healthy"`
	StaleHours   int      `json:"staleHours,omitempty" jsonschema:"default 24" validate:"omitempty,min=1,max=8760"`
	BatteryBelow *float64 `json:"batteryBelow,omitempty" jsonschema:"percent, e.g. 20" validate:"omitempty,min=0,max=101"`
	Radio        string   `json:"radio,omitempty" validate:"omitempty,oneof=zigbee zwave matter linked virtual lan"`
	toolkit.Page
}

type healthRow struct {
	ID           string   `json:"id"`
	Label        string   `json:"label"`
	Room         string   `json:"room,omitempty"`
	Status       string   `json:"status"`
	LastActivity string   `json:"lastActivity,omitempty"`
	HoursAgo     *float64 `json:"hoursAgo,omitempty"`
	Battery      *float64 `json:"battery,omitempty"`
	Offline      bool     `json:"offline,omitempty"`
	Disabled     bool     `json:"disabled,omitempty"`
	Radio        string   `json:"radio"`
}

type healthSummary struct {
	Devices    int    `json:"devices"`
	Healthy    int    `json:"healthy"`
	Stale      int    `json:"stale"`
	Unknown    int    `json:"unknown"`
	Offline    int    `json:"offline"`
	LowBattery int    `json:"lowBattery"` // below 20 %
	StaleHours int    `json:"staleHours"`
	CheckedAt  string `json:"checkedAt"`
}

type deviceHealthResult struct {
	Summary healthSummary           `json:"summary"`
	List    toolkit.List[healthRow] `json:"list"`
}

// lowBattery is the level the summary counts as low.
const lowBattery = 20

func deviceHealth(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[deviceHealthArgs, deviceHealthResult]{
		Name: "hubitat_get_device_health", Toolset: SetAdmin, Title: "Hubitat device health: low batteries, stale, offline",
		Description: "Which Hubitat devices have a low battery, have not reported (stale: silent longer than staleHours, default " +
			"24), never reported (unknown), are offline or healthy: last activity, battery, radio (zigbee, zwave, matter, " +
			"linked, virtual, lan); most silent first, paged. Filters: status, batteryBelow (20 for low), radio. A summary counts " +
			"the house. One device's values: hubitat_get_device. Needs option hubitat_admin_read.",
		ReadOnly:  true,
		Available: d.requireAdminRead,
		Handler: func(ctx context.Context, _ *toolkit.Call, a deviceHealthArgs) (deviceHealthResult, error) {
			devs, err := d.Hub.ListedDevices(ctx)
			if err != nil {
				return deviceHealthResult{}, d.adminFailed(ctx, "Reading the device list", err, false, "")
			}
			return healthOf(devs, a, d.now()), nil
		},
	})
}

// healthOf classes every device, counts the house and pages the rows the filters keep.
func healthOf(devs []hubitat.ListedDevice, a deviceHealthArgs, now time.Time) deviceHealthResult {
	stale := a.StaleHours
	if stale == 0 {
		stale = 24
	}
	cut := now.Add(-time.Duration(stale) * time.Hour)
	sum := healthSummary{Devices: len(devs), StaleHours: stale, CheckedAt: now.UTC().Format(time.RFC3339)}
	rows := make([]healthRow, 0, len(devs))
	for _, dv := range devs {
		r := healthRowOf(dv, cut, now)
		switch r.Status {
		case "healthy":
			sum.Healthy++
		case "stale":
			sum.Stale++
		case "unknown":
			sum.Unknown++
		}
		if r.Offline {
			sum.Offline++
		}
		if r.Battery != nil && *r.Battery < lowBattery {
			sum.LowBattery++
		}
		if keepHealth(r, a) {
			rows = append(rows, r)
		}
	}
	slices.SortStableFunc(rows, func(x, y healthRow) int { return compareSilence(x, y) })
	return deviceHealthResult{Summary: sum, List: toolkit.Paginate(rows, a.Page)}
}

func healthRowOf(dv hubitat.ListedDevice, cut, now time.Time) healthRow {
	label := dv.Label
	if label == "" {
		label = dv.Name
	}
	r := healthRow{ID: dv.ID, Label: label, Room: dv.RoomName, Battery: dv.Battery, Disabled: dv.Disabled, Radio: dv.Radio,
		Offline: strings.EqualFold(dv.Health, "offline")}
	switch {
	case dv.LastActivity.IsZero():
		r.Status = "unknown"
	case dv.LastActivity.Before(cut):
		r.Status = "stale"
	default:
		r.Status = "healthy"
	}
	if !dv.LastActivity.IsZero() {
		r.LastActivity = dv.LastActivity.UTC().Format(time.RFC3339)
		h := math.Round(now.Sub(dv.LastActivity).Hours()*10) / 10
		r.HoursAgo = &h
	}
	if r.Offline && r.Status == "healthy" {
		r.Status = "offline" // heard from lately, but its driver says it is unreachable now
	}
	return r
}

func keepHealth(r healthRow, a deviceHealthArgs) bool {
	switch {
	case a.Status == "offline" && !r.Offline:
		return false
	case a.Status != "" && a.Status != "offline" && r.Status != a.Status:
		return false
	case a.Radio != "" && r.Radio != a.Radio:
		return false
	case a.BatteryBelow != nil && (r.Battery == nil || *r.Battery >= *a.BatteryBelow):
		return false
	}
	return true
}

// compareSilence puts the devices never heard from first, then the longest silent.
func compareSilence(x, y healthRow) int {
	hx, hy := math.Inf(1), math.Inf(1)
	if x.HoursAgo != nil {
		hx = *x.HoursAgo
	}
	if y.HoursAgo != nil {
		hy = *y.HoursAgo
	}
	switch {
	case hx > hy:
		return -1
	case hx < hy:
		return 1
	}
	return strings.Compare(x.ID, y.ID)
}

package hubitattools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/toolkit"
)

// SetAdmin is the toolset of the hub administration tools (admin read and admin write). They call
// the hub's undocumented UI routes, so each is behind an add-on option that is off by default.
const SetAdmin = "hubitat_admin"

func adminReadTools(d Deps) []*toolkit.Tool {
	return []*toolkit.Tool{getHubDetails(d), listHubApps(d), listHubDrivers(d), getZWaveDetails(d), getZigbeeDetails(d),
		getHubHealth(d), getCodeSource(d, hubitat.AppCode), getCodeSource(d, hubitat.DriverCode)}
}

// optionOff is the refusal of a tool whose add-on option is off: only the user can turn it on.
func optionOff(option, what string) *toolkit.Error {
	return &toolkit.Error{Code: "tool_not_enabled", Message: fmt.Sprintf("the Hubitat %s tools are off: the add-on option %s is false", what, option),
		Hint: fmt.Sprintf("nothing was done; only the user can turn them on, by setting %s to true in the hamcp add-on's Configuration tab and restarting the add-on", option)}
}

// requireAdminRead is upstream's requireHubAdminRead.
func (d Deps) requireAdminRead() error {
	if !d.AdminRead {
		return optionOff("hubitat_admin_read", "hub admin read")
	}
	return nil
}

// adminFailed logs a failed admin call and maps its error.
func (d Deps) adminFailed(ctx context.Context, what string, err error, changed bool, next string) error {
	d.Log(ctx, "error", CompHubAdmin, what+" failed: "+err.Error())
	return hubError(err, changed, next)
}

// reading is an admin number with its unit, or why it is missing (upstream's "unavailable").
type reading struct {
	Value       *float64 `json:"value,omitempty"`
	Unavailable string   `json:"unavailable,omitempty"`
}

func (d Deps) read(ctx context.Context, what string, get func(context.Context) (float64, error)) reading {
	v, err := get(ctx)
	if err != nil {
		d.Log(ctx, "debug", CompHubAdmin, "Could not get "+what+": "+err.Error())
		return reading{Unavailable: err.Error()}
	}
	return reading{Value: &v}
}

type hubDetails struct {
	hubitat.HubInfo
	InfoUnavailable      string  `json:"infoUnavailable,omitempty"`
	FreeMemoryKB         reading `json:"freeMemoryKB"`
	InternalTempCelsius  reading `json:"internalTempCelsius"`
	DatabaseSizeKB       reading `json:"databaseSizeKB"`
	HamcpVersion         string  `json:"hamcpVersion"`
	DeviceCount          int     `json:"deviceCount"`
	HubAdminReadEnabled  bool    `json:"hubAdminReadEnabled"`
	HubAdminWriteEnabled bool    `json:"hubAdminWriteEnabled"`
	hubVerdict
}

func getHubDetails(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[noArgs, hubDetails]{
		Name: "hubitat_get_hub_details", Toolset: SetAdmin, Title: "Hubitat hub details",
		Available: d.requireAdminRead,
		Description: "Everything hamcp can read about the Hubitat hub: model, firmware, address, uptime, location, radios, plus " +
			"free memory (KB), internal temperature (°C) and database size (KB) from the hub's admin pages, and which " +
			"hamcp Hubitat switches are on. Needs the add-on option hubitat_admin_read. For a quick health verdict use " +
			"hubitat_get_hub_health; for the basics without the option, hubitat_get_hub_info.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, _ noArgs) (hubDetails, error) {
			out := hubDetails{HamcpVersion: d.Version, DeviceCount: d.Hub.Status().Devices, HubAdminReadEnabled: d.AdminRead,
				HubAdminWriteEnabled: d.AdminWrite}
			info, err := d.Hub.HubInfo(ctx)
			if err != nil {
				if fatal(err) {
					return hubDetails{}, d.adminFailed(ctx, "hub details", err, false, "")
				}
				out.InfoUnavailable = err.Error()
			}
			out.HubInfo = info
			out.FreeMemoryKB = d.read(ctx, "free memory", d.Hub.FreeMemoryKB)
			out.InternalTempCelsius = d.read(ctx, "internal temperature", d.Hub.TemperatureC)
			out.DatabaseSizeKB = d.read(ctx, "database size", d.Hub.DatabaseSizeKB)
			out.HubAlerts = d.hubAlertsFor(ctx)
			if b, ok, err := d.Store.LastHubBackup(ctx); err == nil && ok {
				out.LastBackup = stamp(b.TakenAt)
			}
			d.Log(ctx, "info", CompHubAdmin, "Retrieved extended hub details")
			return out, nil
		},
	})
}

// fatal reports whether an admin call failed because the hub is out of reach or refused hamcp's
// login, which fails the whole call; other failures only make one part of the answer unavailable.
func fatal(err error) bool {
	return errors.Is(err, hubitat.ErrUnavailable) || errors.Is(err, hubitat.ErrUnauthorized) || errors.Is(err, hubitat.ErrNoLogin)
}

type codeList struct {
	Items  []hubitat.CodeType `json:"items"`
	Count  int                `json:"count"`
	Source string             `json:"source"`
}

func listHubApps(d Deps) *toolkit.Tool {
	return listCode(d, hubitat.AppCode, "hubitat_list_hub_apps", "List Hubitat app code",
		"List the user app code installed on the Hubitat hub (the Apps Code page: id, name, namespace, version), not the app "+
			"instances set up from it. The id is what hubitat_get_app_source, hubitat_update_app_code and hubitat_delete_app take. "+
			"Needs the add-on option hubitat_admin_read.")
}

func listHubDrivers(d Deps) *toolkit.Tool {
	return listCode(d, hubitat.DriverCode, "hubitat_list_hub_drivers", "List Hubitat driver code",
		"List the user driver code installed on the Hubitat hub (the Drivers Code page: id, name, namespace, version); built-in "+
			"drivers are not listed. The id is what hubitat_get_driver_source, hubitat_update_driver_code and hubitat_delete_driver "+
			"take. Needs the add-on option hubitat_admin_read. For devices use hubitat_list_devices.")
}

func listCode(d Deps, kind hubitat.CodeKind, name, title, desc string) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[noArgs, codeList]{
		Name: name, Toolset: SetAdmin, Title: title, Description: desc, ReadOnly: true,
		Available: d.requireAdminRead,
		Handler: func(ctx context.Context, c *toolkit.Call, _ noArgs) (codeList, error) {
			list := d.Hub.AppTypes
			if kind == hubitat.DriverCode {
				list = d.Hub.DriverTypes
			}
			items, err := list(ctx)
			if err != nil {
				return codeList{}, d.adminFailed(ctx, name, err, false, "the hub's admin pages may have changed with its firmware")
			}
			if items == nil {
				items = []hubitat.CodeType{}
			}
			d.Log(ctx, "info", CompHubAdmin, fmt.Sprintf("Listed hub %ss (%d)", kind, len(items)))
			return codeList{Items: items, Count: len(items), Source: "hub_api"}, nil
		},
	})
}

// rawInfoChars is how much of a text (non-JSON) radio info page is returned, as upstream.
const rawInfoChars = 3000

type radioDetails struct {
	ZWaveVersion  string          `json:"zwaveVersion,omitempty"`
	ZigbeeChannel int             `json:"zigbeeChannel,omitempty"`
	Data          json.RawMessage `json:"data,omitempty"`
	RawResponse   string          `json:"rawResponse,omitempty"`
	Source        string          `json:"source"` // hub_api (JSON), hub_api_raw (text), hub_info_only
	Note          string          `json:"note,omitempty"`
}

func getZWaveDetails(d Deps) *toolkit.Tool {
	return radioTool(d, "hubitat_get_zwave_details", "Hubitat Z-Wave details",
		"The Hubitat hub's Z-Wave radio: SDK version, region, home id and its nodes (id, device, security, signal) as the hub's "+
			"Z-Wave details page shows them, and whether a repair is running. Needs the add-on option hubitat_admin_read. "+
			"Read-only; hubitat_zwave_repair starts a repair.",
		"Z-Wave", func(ctx context.Context) (hubitat.AdminReply, error) { return d.Hub.ZWaveInfo(ctx) },
		func(r *radioDetails, h hubitat.HubInfo) { r.ZWaveVersion = h.ZWaveVersion })
}

func getZigbeeDetails(d Deps) *toolkit.Tool {
	return radioTool(d, "hubitat_get_zigbee_details", "Hubitat Zigbee details",
		"The Hubitat hub's Zigbee radio: channel, PAN id, power level, device count as the hub's Zigbee details page shows "+
			"them. Needs the add-on option hubitat_admin_read. Read-only.",
		"Zigbee", func(ctx context.Context) (hubitat.AdminReply, error) { return d.Hub.ZigbeeInfo(ctx) },
		func(r *radioDetails, h hubitat.HubInfo) { r.ZigbeeChannel = h.ZigbeeChannel })
}

func radioTool(d Deps, name, title, desc, radio string, get func(context.Context) (hubitat.AdminReply, error), basic func(*radioDetails, hubitat.HubInfo)) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[noArgs, radioDetails]{
		Name: name, Toolset: SetAdmin, Title: title, Description: desc, ReadOnly: true,
		Available: d.requireAdminRead,
		Handler: func(ctx context.Context, c *toolkit.Call, _ noArgs) (radioDetails, error) {
			var out radioDetails
			if info, err := d.Hub.HubInfo(ctx); err == nil {
				basic(&out, info)
			}
			rep, err := get(ctx)
			switch {
			case err != nil:
				if fatal(err) {
					return radioDetails{}, d.adminFailed(ctx, radio+" details", err, false, "")
				}
				d.Log(ctx, "debug", CompHubAdmin, radio+" info call failed: "+err.Error())
				out.Source, out.Note = "hub_info_only", fmt.Sprintf("Extended %s info unavailable (%v). Showing the basics only.", radio, err)
			case rep.JSON != nil:
				out.Source, out.Data = "hub_api", rep.JSON
			case rep.Text == "":
				out.Source, out.Note = "hub_api", "Empty response from the "+radio+" info page"
			default:
				out.Source, out.RawResponse, out.Note = "hub_api_raw", firstRunes(rep.Text, rawInfoChars), "Response was not JSON"
			}
			d.Log(ctx, "info", CompHubAdmin, "Retrieved "+radio+" details")
			return out, nil
		},
	})
}

func firstRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// Health thresholds, as upstream: free memory under 50 MB is low and under 100 MB moderate; over
// 70 °C is high and over 60 °C warm; a database over about 500 MB is large.
const (
	memLowKB      = 50000
	memModerateKB = 100000
	tempHighC     = 70
	tempWarmC     = 60
	dbLargeKB     = 500000
)

type hubHealth struct {
	Timestamp           string  `json:"timestamp"`
	UptimeSeconds       int64   `json:"uptimeSeconds"`
	UptimeFormatted     string  `json:"uptimeFormatted,omitempty"`
	FreeMemoryKB        reading `json:"freeMemoryKB"`
	MemoryWarning       string  `json:"memoryWarning,omitempty"`
	MemoryNote          string  `json:"memoryNote,omitempty"`
	InternalTempCelsius reading `json:"internalTempCelsius"`
	TemperatureWarning  string  `json:"temperatureWarning,omitempty"`
	TemperatureNote     string  `json:"temperatureNote,omitempty"`
	DatabaseSizeKB      reading `json:"databaseSizeKB"`
	DatabaseWarning     string  `json:"databaseWarning,omitempty"`
	Status              string  `json:"status"` // ok, attention (a note), warning (a warning)
	DeviceCount         int     `json:"hamcpDeviceCount"`
	LogEntries          int     `json:"hamcpLogEntries"`
	CapturedStates      int     `json:"hamcpCapturedStates"`
	hubVerdict
}

// judge applies the thresholds to the readings it has.
func (h *hubHealth) judge() {
	if v := h.FreeMemoryKB.Value; v != nil {
		switch {
		case *v < memLowKB:
			h.MemoryWarning = fmt.Sprintf("LOW MEMORY: %.0fKB free. Consider rebooting the hub.", *v)
		case *v < memModerateKB:
			h.MemoryNote = fmt.Sprintf("Memory is moderate: %.0fKB free.", *v)
		}
	}
	if v := h.InternalTempCelsius.Value; v != nil {
		switch {
		case *v > tempHighC:
			h.TemperatureWarning = fmt.Sprintf("HIGH TEMPERATURE: %.1f°C. Hub may need better ventilation.", *v)
		case *v > tempWarmC:
			h.TemperatureNote = fmt.Sprintf("Temperature is warm: %.1f°C.", *v)
		}
	}
	if v := h.DatabaseSizeKB.Value; v != nil && *v > dbLargeKB {
		h.DatabaseWarning = fmt.Sprintf("LARGE DATABASE: %.0fMB. Consider cleaning up old data.", *v/1024)
	}
	h.Status = "ok"
	if h.MemoryNote != "" || h.TemperatureNote != "" {
		h.Status = "attention"
	}
	if h.MemoryWarning != "" || h.TemperatureWarning != "" || h.DatabaseWarning != "" {
		h.Status = "warning"
	}
}

func uptimeText(s int64) string {
	return fmt.Sprintf("%dd %dh %dm", s/86400, s%86400/3600, s%3600/60)
}

func getHubHealth(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[noArgs, hubHealth]{
		Name: "hubitat_get_hub_health", Toolset: SetAdmin, Title: "Hubitat hub health",
		Available: d.requireAdminRead,
		Description: "A health check of the Hubitat hub: uptime, free memory (low under 50 MB, moderate under 100 MB), " +
			"internal temperature (warm over 60 °C, high over 70 °C) and database size (large over 500 MB), each with a " +
			"warning or note, an overall status, and hamcp's own counts. Needs the add-on option hubitat_admin_read. " +
			"Use it before suggesting a reboot; it changes nothing.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, _ noArgs) (hubHealth, error) {
			h := hubHealth{Timestamp: stamp(d.now()), DeviceCount: d.Hub.Status().Devices}
			info, err := d.Hub.HubInfo(ctx)
			if err != nil {
				if fatal(err) {
					return hubHealth{}, d.adminFailed(ctx, "hub health", err, false, "")
				}
			} else {
				h.UptimeSeconds, h.UptimeFormatted = info.UptimeSeconds, uptimeText(info.UptimeSeconds)
			}
			h.FreeMemoryKB = d.read(ctx, "free memory", d.Hub.FreeMemoryKB)
			h.InternalTempCelsius = d.read(ctx, "internal temperature", d.Hub.TemperatureC)
			h.DatabaseSizeKB = d.read(ctx, "database size", d.Hub.DatabaseSizeKB)
			h.judge()
			h.applyAlerts(d.hubAlertsFor(ctx))
			if st, err := d.Store.DebugLogStatus(ctx); err == nil {
				h.LogEntries = st.Total
			}
			if cs, err := d.Store.CapturedStates(ctx); err == nil {
				h.CapturedStates = len(cs)
			}
			d.Log(ctx, "info", CompHubAdmin, "Hub health check completed")
			return h, nil
		},
	})
}

// Source paging: a Groovy app can be larger than one result may be.
const (
	defaultSourceChars = 60000
	maxSourceChars     = 90000
)

type appSourceArgs struct {
	AppID  string `json:"appId" jsonschema:"the app code's id from hubitat_list_hub_apps" validate:"required,numeric,max=12"`
	Offset int    `json:"offset,omitempty" jsonschema:"first character to return; pass nextOffset from the previous call" validate:"omitempty,min=0"`
	Length int    `json:"length,omitempty" jsonschema:"most characters to return (default 60000, max 90000)" validate:"omitempty,min=1,max=90000"`
}

type driverSourceArgs struct {
	DriverID string `json:"driverId" jsonschema:"the driver code's id from hubitat_list_hub_drivers" validate:"required,numeric,max=12"`
	Offset   int    `json:"offset,omitempty" jsonschema:"first character to return; pass nextOffset from the previous call" validate:"omitempty,min=0"`
	Length   int    `json:"length,omitempty" jsonschema:"most characters to return (default 60000, max 90000)" validate:"omitempty,min=1,max=90000"`
}

type codeSource struct {
	Success    bool   `json:"success"`
	AppID      string `json:"appId,omitempty"`
	DriverID   string `json:"driverId,omitempty"`
	Version    int64  `json:"version"`
	Status     string `json:"status,omitempty"`
	TotalChars int    `json:"totalChars"`
	Offset     int    `json:"offset"`
	NextOffset *int   `json:"nextOffset,omitempty"`
	Source     string `json:"source"`
}

// window cuts source to [offset, offset+length) in characters.
func window(source string, offset, length int) (string, int, *int) {
	runes := []rune(source)
	total := len(runes)
	if length <= 0 {
		length = defaultSourceChars
	}
	offset = min(offset, total)
	end := min(offset+length, total)
	var next *int
	if end < total {
		next = &end
	}
	return string(runes[offset:end]), total, next
}

// getCodeSource is hubitat_get_app_source or hubitat_get_driver_source: the two take differently
// named ids, as upstream.
func getCodeSource(d Deps, kind hubitat.CodeKind) *toolkit.Tool {
	handler := func(ctx context.Context, id string, offset, length int) (codeSource, error) {
		src, err := d.Hub.CodeSource(ctx, kind, id)
		if err != nil {
			if fatal(err) {
				return codeSource{}, d.adminFailed(ctx, "get "+string(kind)+" source", err, false, "")
			}
			d.Log(ctx, "error", CompHubAdmin, fmt.Sprintf("Failed to get %s source: %v", kind, err))
			return codeSource{}, &toolkit.Error{Code: "not_found", Field: string(kind) + "Id", Message: err.Error(),
				Hint: "hubitat_list_hub_" + string(kind) + "s lists the ids"}
		}
		out := codeSource{Success: true, Version: src.Version, Status: src.Status, Offset: min(offset, utf8.RuneCountInString(src.Source))}
		out.Source, out.TotalChars, out.NextOffset = window(src.Source, offset, length)
		if kind == hubitat.AppCode {
			out.AppID = id
		} else {
			out.DriverID = id
		}
		d.Log(ctx, "info", CompHubAdmin, fmt.Sprintf("Retrieved source code for %s ID: %s", kind, id))
		return out, nil
	}
	desc := func(noun, list, update string) string {
		return "Read the Groovy source and version of one " + noun + " code on the Hubitat hub, by the id " + list + " gives. " +
			"Long code comes in pages: offset/length in characters, with nextOffset while more remains. Read it before " +
			update + " and keep the whole text. Needs the add-on option hubitat_admin_read."
	}
	if kind == hubitat.AppCode {
		return toolkit.Define(toolkit.Spec[appSourceArgs, codeSource]{
			Name: "hubitat_get_app_source", Toolset: SetAdmin, Title: "Hubitat app source",
			Available:   d.requireAdminRead,
			Description: desc("app", "hubitat_list_hub_apps", "hubitat_update_app_code"), ReadOnly: true,
			Handler: func(ctx context.Context, c *toolkit.Call, a appSourceArgs) (codeSource, error) {
				return handler(ctx, a.AppID, a.Offset, a.Length)
			},
		})
	}
	return toolkit.Define(toolkit.Spec[driverSourceArgs, codeSource]{
		Name: "hubitat_get_driver_source", Toolset: SetAdmin, Title: "Hubitat driver source",
		Available:   d.requireAdminRead,
		Description: desc("driver", "hubitat_list_hub_drivers", "hubitat_update_driver_code"), ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a driverSourceArgs) (codeSource, error) {
			return handler(ctx, a.DriverID, a.Offset, a.Length)
		},
	})
}

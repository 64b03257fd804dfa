package hubitattools

import (
	"context"
	"fmt"
	"strings"

	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/toolkit"
)

type virtualDevicesArgs struct {
	Action   string  `json:"action" validate:"required,oneof=drivers list create update delete" example:"drivers"`
	Driver   string  `json:"driver,omitempty" jsonschema:"e.g. \"Virtual Switch\"" validate:"omitempty,max=100"`
	Label    string  `json:"label,omitempty" jsonschema:"create, update" validate:"omitempty,max=100"`
	Name     string  `json:"name,omitempty" jsonschema:"update" validate:"omitempty,max=100"`
	DeviceID string  `json:"deviceId,omitempty" jsonschema:"update, delete" validate:"omitempty,max=18"`
	Room     *string `json:"room,omitempty" jsonschema:"name or id" validate:"omitempty,max=100"`
	toolkit.Page
}

func (a virtualDevicesArgs) writes() bool { return a.Action != "drivers" && a.Action != "list" }

type virtualDevice struct {
	ID       string `json:"id"`
	Label    string `json:"label"`
	Type     string `json:"type,omitempty"`
	Room     string `json:"room,omitempty"`
	Disabled bool   `json:"disabled,omitempty"`
}

type virtualDevicesResult struct {
	Action  string                        `json:"action"`
	Drivers *toolkit.List[hubitat.Driver] `json:"drivers,omitempty"`
	Devices *toolkit.List[virtualDevice]  `json:"devices,omitempty"`
	Device  *virtualDevice                `json:"device,omitempty"`
	Done    string                        `json:"done,omitempty"`
	Note    string                        `json:"note,omitempty"`
}

func manageVirtualDevices(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[virtualDevicesArgs, virtualDevicesResult]{
		Name: "hubitat_manage_virtual_devices", Toolset: SetAdmin, Title: "Hubitat virtual devices",
		Description: "Hubitat virtual devices (built-in drivers): drivers, list, create, update, delete (the " +
			"user confirms; a backup in the hour). Others: hubitat_update_device. Option " +
			"hubitat_admin_read; changes hubitat_admin_write + hub_admin.",
		Destructive: true,
		Available:   d.availableDeviceAdmin,
		Conditional: writeGrant(d, "action create, update or delete", virtualDevicesArgs.writes),
		Confirm: &toolkit.Confirm[virtualDevicesArgs]{When: "action delete (`" + AdminConfirmClass + "`: always asked)",
			Check: func(ctx context.Context, _ *toolkit.Call, a virtualDevicesArgs) (toolkit.Ask, error) {
				if !a.writes() {
					return toolkit.Ask{}, d.requireAdminRead()
				}
				if a.Action != "delete" {
					return toolkit.Ask{}, d.requireAdminWrite()
				}
				m, err := d.virtualModel(ctx, a.DeviceID)
				if err != nil {
					return toolkit.Ask{}, err
				}
				q := fmt.Sprintf("Delete the Hubitat virtual device %s (%s) for good?", m.ID, labelOf(m))
				if m.AppsUsingCount > 0 {
					q += fmt.Sprintf(" %d app(s) on the hub use it.", m.AppsUsingCount)
				}
				return d.destructiveAsk(ctx, "hubitat_manage_virtual_devices", q)
			}},
		Summary: func(a virtualDevicesArgs) string {
			return strings.TrimSpace(fmt.Sprintf("%s %s %s", a.Action, a.Driver, a.DeviceID))
		},
		Handler: func(ctx context.Context, _ *toolkit.Call, a virtualDevicesArgs) (virtualDevicesResult, error) {
			switch a.Action {
			case "drivers":
				return d.virtualDrivers(ctx, a)
			case "list":
				return d.listVirtual(ctx, a)
			case "create":
				return d.createVirtual(ctx, a)
			case "update":
				return d.updateVirtual(ctx, a)
			}
			return d.deleteVirtual(ctx, a)
		},
	})
}

// availableDeviceAdmin: the tool exists when either admin option is on; each action checks its own.
func (d Deps) availableDeviceAdmin() error {
	if !d.AdminRead && !d.AdminWrite {
		return optionOff("hubitat_admin_read", "hub admin")
	}
	return nil
}

func (d Deps) virtualDrivers(ctx context.Context, a virtualDevicesArgs) (virtualDevicesResult, error) {
	drv, err := d.Hub.VirtualDrivers(ctx)
	if err != nil {
		return virtualDevicesResult{}, d.adminFailed(ctx, "Listing drivers", err, false, "")
	}
	l := toolkit.Paginate(drv, a.Page)
	return virtualDevicesResult{Action: a.Action, Drivers: &l}, nil
}

func (d Deps) listVirtual(ctx context.Context, a virtualDevicesArgs) (virtualDevicesResult, error) {
	devs, err := d.Hub.ListedDevices(ctx)
	if err != nil {
		return virtualDevicesResult{}, d.adminFailed(ctx, "Reading the device list", err, false, "")
	}
	out := []virtualDevice{}
	for _, dv := range devs {
		if dv.Radio == "virtual" {
			out = append(out, virtualDevice{ID: dv.ID, Label: firstNonEmpty(dv.Label, dv.Name), Type: dv.Type, Room: dv.RoomName, Disabled: dv.Disabled})
		}
	}
	l := toolkit.Paginate(out, a.Page)
	return virtualDevicesResult{Action: a.Action, Devices: &l}, nil
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// virtualModel reads a device and refuses one that is not virtual.
func (d Deps) virtualModel(ctx context.Context, id string) (hubitat.DeviceModel, error) {
	if id == "" {
		return hubitat.DeviceModel{}, toolkit.InvalidArg("deviceId", "is required: the virtual device's id from action list", `{"deviceId": "101"}`)
	}
	m, err := d.Hub.DeviceModel(ctx, id)
	if err != nil {
		return hubitat.DeviceModel{}, d.deviceAdminError(ctx, "Reading device "+id, err, false)
	}
	if !m.Virtual && !strings.HasPrefix(m.TypeName, "Virtual") {
		return hubitat.DeviceModel{}, toolkit.InvalidArg("deviceId", fmt.Sprintf("device %s (%s) is not a virtual device; nothing was done (hubitat_update_device changes real ones)", m.ID, labelOf(m)), `{"deviceId": "101"}`)
	}
	return m, nil
}

func (d Deps) createVirtual(ctx context.Context, a virtualDevicesArgs) (virtualDevicesResult, error) {
	if strings.TrimSpace(a.Label) == "" {
		return virtualDevicesResult{}, toolkit.InvalidArg("label", "is required for action create", `{"action": "create", "driver": "Virtual Switch", "label": "Guest Mode"}`)
	}
	drivers, err := d.Hub.VirtualDrivers(ctx)
	if err != nil {
		return virtualDevicesResult{}, d.adminFailed(ctx, "Listing drivers", err, false, "")
	}
	var drv *hubitat.Driver
	for i := range drivers {
		if drivers[i].ID == a.Driver || drivers[i].Name == a.Driver {
			drv = &drivers[i]
		}
	}
	if drv == nil {
		return virtualDevicesResult{}, toolkit.InvalidArg("driver", fmt.Sprintf("%q is not one of the hub's virtual drivers (action drivers lists them)", a.Driver), `"Virtual Switch"`)
	}
	id, err := d.Hub.CreateVirtualDevice(ctx, drv.ID)
	if err != nil {
		return virtualDevicesResult{}, d.adminFailed(ctx, "Creating a "+drv.Name, err, false, "")
	}
	d.Log(ctx, "info", CompHubAdmin, "Created virtual device "+id+" ("+drv.Name+")")
	out := virtualDevicesResult{Action: a.Action, Done: "created device " + id + " from " + drv.Name,
		Note: "add it to the Maker API instance's devices in the hub's web UI to control it through hamcp"}
	dev, err := d.setVirtual(ctx, id, a.Label, "", a.Room)
	if err != nil {
		out.Note = "created, but its label or room could not be set (" + toolkit.AsError(err).Message + "); " + out.Note
		dev = virtualDevice{ID: id, Label: drv.Name, Type: drv.Name}
	}
	out.Device = &dev
	return out, nil
}

// setVirtual sets label, name and room in one edit form.
func (d Deps) setVirtual(ctx context.Context, id, label, name string, room *string) (virtualDevice, error) {
	over := map[string]string{}
	if label != "" {
		over["label"] = label
	}
	if name != "" {
		over["name"] = name
	}
	if room != nil {
		over["roomId"] = "0"
		if strings.TrimSpace(*room) != "" {
			rm, err := d.findRoom(ctx, *room)
			if err != nil {
				return virtualDevice{}, err
			}
			over["roomId"] = rm.ID
		}
	}
	m, err := d.Hub.UpdateDevice(ctx, id, over)
	if err != nil {
		return virtualDevice{}, d.deviceAdminError(ctx, "Updating device "+id, err, true)
	}
	return virtualDevice{ID: m.ID, Label: labelOf(m), Type: m.TypeName, Room: m.RoomName, Disabled: m.Disabled}, nil
}

func (d Deps) updateVirtual(ctx context.Context, a virtualDevicesArgs) (virtualDevicesResult, error) {
	if a.Label == "" && a.Name == "" && a.Room == nil {
		return virtualDevicesResult{}, toolkit.InvalidArg("label", "give label, name or room for action update", `{"action": "update", "deviceId": "101", "label": "Guest Mode"}`)
	}
	before, err := d.virtualModel(ctx, a.DeviceID)
	if err != nil {
		return virtualDevicesResult{}, err
	}
	dev, err := d.setVirtual(ctx, a.DeviceID, a.Label, a.Name, a.Room)
	if err != nil {
		return virtualDevicesResult{}, err
	}
	return virtualDevicesResult{Action: a.Action, Device: &dev, Done: fmt.Sprintf("device %s updated (was %q in %q)", dev.ID, labelOf(before), before.RoomName)}, nil
}

func (d Deps) deleteVirtual(ctx context.Context, a virtualDevicesArgs) (virtualDevicesResult, error) {
	if _, err := d.backupGate(ctx, "hubitat_manage_virtual_devices"); err != nil {
		return virtualDevicesResult{}, err
	}
	m, err := d.virtualModel(ctx, a.DeviceID)
	if err != nil {
		return virtualDevicesResult{}, err
	}
	if err := d.Hub.DeleteDevice(ctx, m.ID); err != nil {
		return virtualDevicesResult{}, d.deviceAdminError(ctx, "Deleting device "+m.ID, err, true)
	}
	d.Log(ctx, "warn", CompHubAdmin, "Deleted virtual device "+m.ID+" ("+labelOf(m)+")")
	return virtualDevicesResult{Action: a.Action, Device: &virtualDevice{ID: m.ID, Label: labelOf(m), Type: m.TypeName, Room: m.RoomName},
		Done: "device " + m.ID + " deleted; the hub backup taken through hamcp has it"}, nil
}

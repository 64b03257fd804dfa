package hubitattools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/toolkit"
)

// The device-side admin tools (rooms, device settings, virtual devices) change what the hub
// holds through its own UI routes. Their gates, in the toolkit's order: a writing call needs the
// hubitat_admin_write option (checked before anything else, so nobody is asked for a grant the
// option refuses), the user's hub_admin grant, and, for what destroys or rewrites something (a
// room's deletion, a device's deletion, its preferences), a hub backup through hamcp within the
// hour and the user's yes to that one call. Reads need hubitat_admin_read where they use admin
// routes.

func deviceAdminTools(d Deps) []*toolkit.Tool {
	return []*toolkit.Tool{manageRooms(d), updateDevice(d), sendCommands(d), deviceHealth(d), manageVirtualDevices(d), deviceDependents(d)}
}

// writeGrant is the hub_admin grant a writing action needs, asked only while the write option
// is on (otherwise the call is refused before anyone is asked).
func writeGrant[In any](d Deps, when string, writes func(In) bool) *toolkit.Condition[In] {
	return &toolkit.Condition[In]{Category: HubAdmin, When: when, Applies: func(in In) bool { return d.AdminWrite && writes(in) }}
}

// destructiveAsk is the check before a call that destroys or rewrites: the option, the backup,
// then the question.
func (d Deps) destructiveAsk(ctx context.Context, tool, question string) (toolkit.Ask, error) {
	if err := d.requireAdminWrite(); err != nil {
		return toolkit.Ask{}, err
	}
	if _, err := d.backupGate(ctx, tool); err != nil {
		return toolkit.Ask{}, err
	}
	return toolkit.Ask{Classes: []string{AdminConfirmClass}, Question: question}, nil
}

// deviceAdminError maps the client's errors the model can act on.
func (d Deps) deviceAdminError(ctx context.Context, what string, err error, changed bool) error {
	switch {
	case errors.Is(err, hubitat.ErrRoomNotFound):
		return toolkit.NotFound("Room not found", "hubitat_manage_rooms action list gives the rooms; never use a similar one")
	case errors.Is(err, hubitat.ErrNotConfirmed):
		return d.adminFailed(ctx, what, err, true, "read it back (hubitat_manage_rooms list or hubitat_get_device) before trying again")
	}
	return d.adminFailed(ctx, what, err, changed, "")
}

// checkDeviceIDs refuses ids hamcp may not use, before anything is sent.
func (d Deps) checkDeviceIDs(field string, ids []string) error {
	for i, id := range ids {
		if !d.Hub.Allowed(id) || strings.Trim(id, "0123456789") != "" || id == "" {
			return toolkit.InvalidArg(fmt.Sprintf("%s[%d]", field, i), "is not a device hamcp may use: hubitat_list_devices lists them", `["12"]`)
		}
	}
	return nil
}

type manageRoomsArgs struct {
	Action    string   `json:"action" validate:"required,oneof=list create rename delete move" example:"list"`
	Room      string   `json:"room,omitempty" jsonschema:"name or id; move: target (\"\" = none)" validate:"omitempty,max=100"`
	Name      string   `json:"name,omitempty" jsonschema:"create, rename: new name" validate:"omitempty,max=100"`
	DeviceIDs []string `json:"deviceIds,omitempty" jsonschema:"create, move" validate:"omitempty,max=100,dive,max=18"`
	toolkit.Page
}

func (a manageRoomsArgs) writes() bool { return a.Action != "list" }

type roomDevice struct {
	ID    string `json:"id"`
	Label string `json:"label,omitempty"`
}

type roomRow struct {
	ID          string       `json:"id"`
	Name        string       `json:"name"`
	DeviceCount int          `json:"deviceCount"`
	Devices     []roomDevice `json:"devices"`
}

type roomsResult struct {
	Action string                 `json:"action"`
	List   *toolkit.List[roomRow] `json:"list,omitempty"`
	Room   *roomRow               `json:"room,omitempty"`
	Done   string                 `json:"done,omitempty"`
	Undo   string                 `json:"undo,omitempty"`
}

func manageRooms(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[manageRoomsArgs, roomsResult]{
		Name: "hubitat_manage_rooms", Toolset: SetAdmin, Title: "Hubitat rooms: move devices to a room",
		Description: "Move Hubitat devices (a lamp, a sensor) to a room, or list, create, rename, delete rooms (delete: the user " +
			"confirms; its devices stay, in no room). A device's own label: hubitat_update_device. Changes: option " +
			"hubitat_admin_write + hub_admin; delete also a backup within the hour.",
		Conditional: writeGrant(d, "any action but list", manageRoomsArgs.writes),
		Destructive: true,
		Confirm: &toolkit.Confirm[manageRoomsArgs]{When: "action delete (`" + AdminConfirmClass + "`: always asked)",
			Check: func(ctx context.Context, _ *toolkit.Call, a manageRoomsArgs) (toolkit.Ask, error) {
				if !a.writes() {
					return toolkit.Ask{}, nil
				}
				if a.Action != "delete" {
					return toolkit.Ask{}, d.requireAdminWrite()
				}
				rm, err := d.findRoom(ctx, a.Room)
				if err != nil {
					return toolkit.Ask{}, err
				}
				return d.destructiveAsk(ctx, "hubitat_manage_rooms", fmt.Sprintf("Delete the Hubitat room %q? Its %d device(s) stay on the hub, in no room.",
					rm.Name, len(rm.DeviceIDs)))
			}},
		Summary: func(a manageRoomsArgs) string {
			return strings.TrimSpace(fmt.Sprintf("%s %s %s devices=%d", a.Action, a.Room, a.Name, len(a.DeviceIDs)))
		},
		Handler: func(ctx context.Context, _ *toolkit.Call, a manageRoomsArgs) (roomsResult, error) {
			switch a.Action {
			case "list":
				return d.listRooms(ctx, a)
			case "create":
				return d.createRoom(ctx, a)
			case "rename":
				return d.renameRoom(ctx, a)
			case "delete":
				return d.deleteRoom(ctx, a)
			}
			return d.moveToRoom(ctx, a)
		},
	})
}

func (d Deps) rowOfRoom(r hubitat.Room) roomRow {
	row := roomRow{ID: r.ID, Name: r.Name, Devices: []roomDevice{}}
	for _, id := range r.DeviceIDs {
		if !d.Hub.Allowed(id) {
			continue
		}
		rd := roomDevice{ID: id}
		if dev, ok := d.Hub.Cache().Get(id); ok {
			rd.Label = dev.DisplayName()
		}
		row.Devices = append(row.Devices, rd)
	}
	row.DeviceCount = len(row.Devices)
	return row
}

func (d Deps) listRooms(ctx context.Context, a manageRoomsArgs) (roomsResult, error) {
	rooms, err := d.Hub.Rooms(ctx)
	if err != nil {
		return roomsResult{}, hubError(err, false, "")
	}
	rows := make([]roomRow, len(rooms))
	for i, r := range rooms {
		rows[i] = d.rowOfRoom(r)
	}
	slices.SortFunc(rows, func(x, y roomRow) int { return strings.Compare(strings.ToLower(x.Name), strings.ToLower(y.Name)) })
	l := toolkit.Paginate(rows, a.Page)
	return roomsResult{Action: a.Action, List: &l}, nil
}

// findRoom resolves a room by id or name from every room the hub has.
func (d Deps) findRoom(ctx context.Context, ref string) (hubitat.Room, error) {
	if strings.TrimSpace(ref) == "" {
		return hubitat.Room{}, toolkit.InvalidArg("room", "is required: the room's name or id from action list", `{"room": "Bedroom"}`)
	}
	rooms, err := d.Hub.AllRooms(ctx)
	if err != nil {
		return hubitat.Room{}, d.adminFailed(ctx, "Listing rooms", err, false, "")
	}
	rm, ok := hubitat.FindRoom(rooms, ref)
	if !ok {
		names := make([]string, len(rooms))
		for i, r := range rooms {
			names[i] = r.Name
		}
		return hubitat.Room{}, toolkit.NotFound(fmt.Sprintf("Room %q not found; the rooms are: %s", ref, strings.Join(names, ", ")),
			"use one of these names, or action create; never a similar one")
	}
	return rm, nil
}

func needName(a manageRoomsArgs) (string, error) {
	name := strings.TrimSpace(a.Name)
	if name == "" {
		return "", toolkit.InvalidArg("name", "is required for action "+a.Action, `{"action": "`+a.Action+`", "name": "Workshop"}`)
	}
	return name, nil
}

func (d Deps) createRoom(ctx context.Context, a manageRoomsArgs) (roomsResult, error) {
	name, err := needName(a)
	if err != nil {
		return roomsResult{}, err
	}
	if err := d.checkDeviceIDs("deviceIds", a.DeviceIDs); err != nil {
		return roomsResult{}, err
	}
	rm, err := d.Hub.CreateRoom(ctx, name, a.DeviceIDs)
	if err != nil {
		return roomsResult{}, d.deviceAdminError(ctx, "Creating room "+name, err, false)
	}
	d.Log(ctx, "info", CompHubAdmin, "Created room "+rm.Name+" (id "+rm.ID+")")
	row := d.rowOfRoom(rm)
	return roomsResult{Action: a.Action, Room: &row, Done: "room " + rm.Name + " created",
		Undo: `hubitat_manage_rooms {"action": "delete", "room": "` + rm.ID + `"}`}, nil
}

func (d Deps) renameRoom(ctx context.Context, a manageRoomsArgs) (roomsResult, error) {
	name, err := needName(a)
	if err != nil {
		return roomsResult{}, err
	}
	rm, err := d.findRoom(ctx, a.Room)
	if err != nil {
		return roomsResult{}, err
	}
	out, err := d.Hub.RenameRoom(ctx, rm, name)
	if err != nil {
		return roomsResult{}, d.deviceAdminError(ctx, "Renaming room "+rm.Name, err, false)
	}
	d.Log(ctx, "info", CompHubAdmin, "Renamed room "+rm.Name+" to "+out.Name)
	row := d.rowOfRoom(out)
	return roomsResult{Action: a.Action, Room: &row, Done: fmt.Sprintf("room %q renamed %q; native rules and dashboards that name it may need the new name", rm.Name, out.Name),
		Undo: fmt.Sprintf(`hubitat_manage_rooms {"action": "rename", "room": "%s", "name": %q}`, out.ID, rm.Name)}, nil
}

func (d Deps) deleteRoom(ctx context.Context, a manageRoomsArgs) (roomsResult, error) {
	if _, err := d.backupGate(ctx, "hubitat_manage_rooms"); err != nil { // again: the user may have taken their time
		return roomsResult{}, err
	}
	rm, err := d.findRoom(ctx, a.Room)
	if err != nil {
		return roomsResult{}, err
	}
	if err := d.Hub.DeleteRoom(ctx, rm); err != nil {
		return roomsResult{}, d.deviceAdminError(ctx, "Deleting room "+rm.Name, err, false)
	}
	d.Log(ctx, "warn", CompHubAdmin, fmt.Sprintf("Deleted room %s (id %s); %d devices unassigned", rm.Name, rm.ID, len(rm.DeviceIDs)))
	row := d.rowOfRoom(rm)
	return roomsResult{Action: a.Action, Room: &row, Done: fmt.Sprintf("room %q deleted; its %d device(s) are in no room", rm.Name, len(rm.DeviceIDs)),
		Undo: fmt.Sprintf(`hubitat_manage_rooms {"action": "create", "name": %q, "deviceIds": [%s]}`, rm.Name, quoteIDs(rm.DeviceIDs))}, nil
}

func quoteIDs(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = `"` + id + `"`
	}
	return strings.Join(q, ", ")
}

func (d Deps) moveToRoom(ctx context.Context, a manageRoomsArgs) (roomsResult, error) {
	if len(a.DeviceIDs) == 0 {
		return roomsResult{}, toolkit.InvalidArg("deviceIds", "is required for action move", `{"action": "move", "room": "Bedroom", "deviceIds": ["1"]}`)
	}
	if err := d.checkDeviceIDs("deviceIds", a.DeviceIDs); err != nil {
		return roomsResult{}, err
	}
	target := ""
	if strings.TrimSpace(a.Room) != "" {
		rm, err := d.findRoom(ctx, a.Room)
		if err != nil {
			return roomsResult{}, err
		}
		target = rm.ID
	}
	to, err := d.Hub.MoveDevices(ctx, a.DeviceIDs, target)
	if err != nil {
		return roomsResult{}, d.deviceAdminError(ctx, "Moving devices", err, true)
	}
	where := "no room"
	if target != "" {
		where = "room " + to.Name
	}
	d.Log(ctx, "info", CompHubAdmin, fmt.Sprintf("Moved devices %s to %s", strings.Join(a.DeviceIDs, ", "), where))
	out := roomsResult{Action: a.Action, Done: fmt.Sprintf("%d device(s) moved to %s", len(a.DeviceIDs), where)}
	if target != "" {
		row := d.rowOfRoom(to)
		out.Room = &row
	}
	return out, nil
}

package hubitat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Rooms are read through Maker API's /rooms (the shape of upstream's getRooms(): id, name,
// deviceIds) and changed through the hub's room routes, as upstream's mcp-rooms-lib does:
//
//	POST /room/save        {"roomId":N,"name":…,"deviceIds":[…]}; roomId 0 creates (toolCreateRoom, toolRenameRoom,
//	                       and toolUpdateDevice's room leg). The body is JSON; {"error":…} is a refusal.
//	POST /room/delete/<id> {"roomId":N} (toolDeleteRoom, which falls back to GET)
//
// A device is in one room: saving a room with a device moves it there. Every change is read back
// from /rooms, because the hub answers success for saves that did nothing.

// ErrRoomNotFound is a room name or id the hub does not have.
var ErrRoomNotFound = errors.New("room not found")

// FindRoom finds a room by id or by name (case-insensitive), as upstream resolves them.
func FindRoom(rooms []Room, ref string) (Room, bool) {
	ref = strings.TrimSpace(ref)
	for _, r := range rooms {
		if r.ID == ref {
			return r, true
		}
	}
	for _, r := range rooms {
		if strings.EqualFold(r.Name, ref) {
			return r, true
		}
	}
	return Room{}, false
}

// AllRooms is every room with every device in it. A save must carry the room's whole device
// list (the hub drops the devices it leaves out), and Maker API's /rooms shows only the devices
// selected in its instance, so the members come from the device page's list (/hub2/devicesList,
// each device's roomId) as well.
func (c *Client) AllRooms(ctx context.Context) ([]Room, error) {
	b, err := c.maker(ctx, "/rooms")
	if err != nil {
		return nil, err
	}
	rooms, err := ParseRooms(b)
	if err != nil {
		return nil, err
	}
	devs, err := c.allListedDevices(ctx)
	if err != nil {
		return nil, err
	}
	for i := range rooms {
		for _, d := range devs {
			if d.RoomID == rooms[i].ID && !slices.Contains(rooms[i].DeviceIDs, d.ID) {
				rooms[i].DeviceIDs = append(rooms[i].DeviceIDs, d.ID)
			}
		}
	}
	return rooms, nil
}

// roomReply reads a room route's answer: JSON with "error" is a refusal; anything else is taken
// as done, to be checked against /rooms.
func roomReply(path string, r AdminReply) error {
	if r.JSON == nil {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(r.JSON, &m) != nil {
		return nil
	}
	if raw, ok := m["error"]; ok && string(raw) != "null" && string(raw) != "false" {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			s = string(raw)
		}
		return &APIError{Path: path, Status: r.Status, Message: clean(s)}
	}
	return nil
}

func intIDs(ids []string) ([]int, error) {
	out := make([]int, 0, len(ids))
	for _, id := range ids {
		n, err := strconv.Atoi(id)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("hubitat device %q: %w", clean(id), ErrDeviceNotFound)
		}
		out = append(out, n)
	}
	return out, nil
}

// saveRoom posts one room as it should be.
func (c *Client) saveRoom(ctx context.Context, id int, name string, deviceIDs []string) error {
	ids, err := intIDs(deviceIDs)
	if err != nil {
		return err
	}
	r, err := c.AdminJSON(ctx, "/room/save", map[string]any{"roomId": id, "name": name, "deviceIds": ids})
	if err != nil {
		return err
	}
	return roomReply("/room/save", r)
}

// CreateRoom makes a room (with devices, which leave their rooms) and returns it as /rooms
// then lists it.
func (c *Client) CreateRoom(ctx context.Context, name string, deviceIDs []string) (Room, error) {
	if err := c.saveRoom(ctx, 0, name, deviceIDs); err != nil {
		return Room{}, err
	}
	return c.confirmRoom(ctx, name, func(r Room) bool { return strings.EqualFold(r.Name, name) })
}

// RenameRoom renames room (its devices stay) and returns it as /rooms then lists it.
func (c *Client) RenameRoom(ctx context.Context, room Room, name string) (Room, error) {
	if err := c.saveRoom(ctx, mustID(room.ID), name, room.DeviceIDs); err != nil {
		return Room{}, err
	}
	return c.confirmRoom(ctx, room.ID, func(r Room) bool { return r.ID == room.ID && r.Name == name })
}

func mustID(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func (c *Client) confirmRoom(ctx context.Context, what string, ok func(Room) bool) (Room, error) {
	rooms, err := c.AllRooms(ctx)
	if err != nil {
		return Room{}, err
	}
	for _, r := range rooms {
		if ok(r) {
			return r, nil
		}
	}
	return Room{}, fmt.Errorf("hubitat room %q: %w: /rooms does not show it", clean(what), ErrNotConfirmed)
}

// DeleteRoom deletes a room; its devices are left in no room.
func (c *Client) DeleteRoom(ctx context.Context, room Room) error {
	r, err := c.AdminJSON(ctx, "/room/delete/"+room.ID, map[string]any{"roomId": mustID(room.ID)})
	if err != nil {
		return err
	}
	if err := roomReply("/room/delete/"+room.ID, r); err != nil {
		return err
	}
	rooms, err := c.AllRooms(ctx)
	if err != nil {
		return err
	}
	if _, still := FindRoom(rooms, room.ID); still {
		return fmt.Errorf("hubitat room %q: %w: it is still listed", clean(room.Name), ErrNotConfirmed)
	}
	return nil
}

// MoveDevices puts devices in the room target ("" for none). Upstream's safe order: add to the
// target first (so a failure leaves each device where it was), then take them out of any room
// that still lists them.
func (c *Client) MoveDevices(ctx context.Context, deviceIDs []string, target string) (Room, error) {
	rooms, err := c.AllRooms(ctx)
	if err != nil {
		return Room{}, err
	}
	var to Room
	if target != "" {
		var ok bool
		if to, ok = FindRoom(rooms, target); !ok {
			return Room{}, fmt.Errorf("hubitat room %q: %w", clean(target), ErrRoomNotFound)
		}
		want := slices.Clone(to.DeviceIDs)
		for _, id := range deviceIDs {
			if !slices.Contains(want, id) {
				want = append(want, id)
			}
		}
		if err := c.saveRoom(ctx, mustID(to.ID), to.Name, want); err != nil {
			return Room{}, err
		}
		if rooms, err = c.AllRooms(ctx); err != nil {
			return Room{}, err
		}
	}
	for _, r := range rooms {
		if r.ID == to.ID {
			continue
		}
		keep := slices.DeleteFunc(slices.Clone(r.DeviceIDs), func(id string) bool { return slices.Contains(deviceIDs, id) })
		if len(keep) != len(r.DeviceIDs) {
			if err := c.saveRoom(ctx, mustID(r.ID), r.Name, keep); err != nil {
				return Room{}, err
			}
		}
	}
	return c.checkMoved(ctx, deviceIDs, to)
}

func (c *Client) checkMoved(ctx context.Context, deviceIDs []string, to Room) (Room, error) {
	rooms, err := c.AllRooms(ctx)
	if err != nil {
		return Room{}, err
	}
	for _, r := range rooms {
		for _, id := range deviceIDs {
			if slices.Contains(r.DeviceIDs, id) != (r.ID == to.ID && to.ID != "") {
				return Room{}, fmt.Errorf("hubitat device %s: %w: room %q lists it wrongly after the move", id, ErrNotConfirmed, clean(r.Name))
			}
		}
		if r.ID == to.ID {
			to = r
		}
	}
	return to, nil
}

// Allowed says whether hamcp may use device id (the hubitat_devices option; all when unset).
func (c *Client) Allowed(id string) bool { return c.allowed(id) }

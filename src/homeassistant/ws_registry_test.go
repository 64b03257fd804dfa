package homeassistant

import (
	"context"
	"testing"
)

// connectedSimClient is a connected client of the shared simulated home, as its admin or (user)
// as a non-admin user.
func connectedSimClient(t *testing.T, user bool) *Client {
	t.Helper()
	h := simHome(t)
	token := h.Token()
	if user {
		token = h.UserToken()
	}
	c := fastClient(t, h.URL(), token)
	waitConnected(t, c)
	return c
}

func TestWSRegistries(t *testing.T) {
	t.Parallel()
	c := connectedSimClient(t, false)
	ctx := context.Background()

	areas, err := c.Areas(ctx)
	if err != nil {
		t.Fatal(err)
	}
	floors, err := c.Floors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	labels, err := c.Labels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	devices, err := c.Devices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	entities, err := c.DisplayEntities(ctx)
	if err != nil {
		t.Fatal(err)
	}
	areaIDs, floorIDs, deviceIDs := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, a := range areas {
		areaIDs[a.ID] = true
	}
	for _, f := range floors {
		floorIDs[f.ID] = true
	}
	for _, d := range devices {
		deviceIDs[d.ID] = true
	}
	floored, placedDevices, linked := 0, 0, 0
	for _, a := range areas {
		if a.ID == "" || a.Name == "" {
			t.Errorf("area without id or name: %+v", a)
		}
		if a.FloorID != nil {
			floored++
			if !floorIDs[*a.FloorID] {
				t.Errorf("area %s is on unknown floor %s", a.ID, *a.FloorID)
			}
		}
	}
	for _, d := range devices {
		if d.DisplayName() == "" {
			t.Errorf("device %s has no name", d.ID)
		}
		if d.AreaID != nil {
			placedDevices++
			if !areaIDs[*d.AreaID] {
				t.Errorf("device %s is in unknown area %s", d.ID, *d.AreaID)
			}
		}
	}
	for _, e := range entities {
		if e.EntityID == "" {
			t.Errorf("entity row without id: %+v", e)
		}
		if e.DeviceID != "" {
			linked++
			if !deviceIDs[e.DeviceID] {
				t.Errorf("entity %s belongs to unknown device %s", e.EntityID, e.DeviceID)
			}
		}
	}
	for _, c := range []struct {
		what string
		n    int
	}{{"areas", len(areas)}, {"floors", len(floors)}, {"labels", len(labels)}, {"devices", len(devices)},
		{"entities", len(entities)}, {"areas on a floor", floored}, {"devices in an area", placedDevices}, {"entities of a device", linked}} {
		if c.n == 0 {
			t.Errorf("the simulated home answered no %s", c.what)
		}
	}
	if len(labels) > 0 && (labels[0].ID == "" || labels[0].Name == "") {
		t.Errorf("label without id or name: %+v", labels[0])
	}
}

func TestDeviceDisplayName(t *testing.T) {
	t.Parallel()
	s := func(v string) *string { return &v }
	for _, c := range []struct {
		d    Device
		want string
	}{
		{Device{Name: s("Hue bridge"), NameByUser: s("Bridge")}, "Bridge"},
		{Device{Name: s("Hue bridge"), NameByUser: s("")}, "Hue bridge"},
		{Device{Name: s("Hue bridge")}, "Hue bridge"},
		{Device{}, ""},
	} {
		if got := c.d.DisplayName(); got != c.want {
			t.Errorf("%+v: DisplayName %q, want %q", c.d, got, c.want)
		}
	}
}

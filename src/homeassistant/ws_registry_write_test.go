package homeassistant

import (
	"context"
	"errors"
	"testing"
)

// The registry writes against the simulated home: each kind's create, update and delete, the
// entity and device updates, and Home Assistant's refusals as APIErrors with its codes.
func TestWSRegistryWrites(t *testing.T) {
	t.Parallel()
	c := connectedSimClient(t, false)
	ctx := context.Background()
	cases := []struct {
		kind   RegistryKind
		scope  string
		create map[string]any
		update map[string]any
		check  string // a field update must set
	}{
		{RegistryArea, "", map[string]any{"name": "WR Attic"}, map[string]any{"icon": "mdi:home-roof"}, "icon"},
		{RegistryFloor, "", map[string]any{"name": "WR Loft", "level": 3}, map[string]any{"level": 4}, "level"},
		{RegistryLabel, "", map[string]any{"name": "WR Guests"}, map[string]any{"color": "teal"}, "color"},
		{RegistryCategory, "script", map[string]any{"name": "WR Morning"}, map[string]any{"icon": "mdi:weather-sunny"}, "icon"},
		{RegistryZone, "", map[string]any{"name": "WR Gym", "latitude": 52.1, "longitude": 4.3}, map[string]any{"radius": 40}, "radius"},
	}
	for _, tc := range cases {
		item, err := c.CreateRegistryItem(ctx, tc.kind, tc.scope, tc.create)
		if err != nil {
			t.Fatalf("%s create: %v", tc.kind, err)
		}
		key := tc.kind.IDKey()
		if tc.kind == RegistryZone {
			key = "id"
		}
		id, _ := item[key].(string)
		if id == "" {
			t.Fatalf("%s create returned no %s: %v", tc.kind, key, item)
		}
		upd, err := c.UpdateRegistryItem(ctx, tc.kind, tc.scope, id, tc.update)
		if err != nil || upd[tc.check] == nil {
			t.Fatalf("%s update: %v %v", tc.kind, upd, err)
		}
		if got, ok, err := c.RegistryItem(ctx, tc.kind, tc.scope, id); err != nil || !ok || got[tc.check] == nil {
			t.Fatalf("%s read back: %v %v %v", tc.kind, got, ok, err)
		}
		if err := c.DeleteRegistryItem(ctx, tc.kind, tc.scope, id); err != nil {
			t.Fatalf("%s delete: %v", tc.kind, err)
		}
		if _, ok, _ := c.RegistryItem(ctx, tc.kind, tc.scope, id); ok {
			t.Errorf("%s %s still listed after delete", tc.kind, id)
		}
	}
	_, err := c.CreateRegistryItem(ctx, RegistryLabel, "", map[string]any{"name": "Security"})
	var api *APIError
	if !errors.As(err, &api) || api.Code != "invalid_info" {
		t.Errorf("a label name in use: %v", err)
	}
	res, err := c.UpdateEntityRegistry(ctx, "switch.coffee_machine", map[string]any{"aliases": []string{"espresso"}, "hidden_by": "user"})
	if err != nil || res.Entry["hidden_by"] != "user" {
		t.Fatalf("entity update: %v %v", res, err)
	}
	if _, err := c.UpdateEntityRegistry(ctx, "switch.coffee_machine", map[string]any{"hidden_by": nil, "aliases": []string{}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.EntityRegistryEntry(ctx, "switch.nope"); !errors.As(err, &api) || api.Code != "not_found" {
		t.Errorf("unknown entity: %v", err)
	}
	devs, err := c.Devices(ctx)
	if err != nil || len(devs) == 0 {
		t.Fatal(err)
	}
	dev, err := c.UpdateDeviceRegistry(ctx, devs[0].ID, map[string]any{"labels": []string{"energy"}})
	if err != nil || len(dev["labels"].([]any)) != 1 {
		t.Fatalf("device update: %v %v", dev, err)
	}
	if _, err := c.UpdateDeviceRegistry(ctx, devs[0].ID, map[string]any{"labels": devs[0].Labels}); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := c.DeviceEntry(ctx, devs[0].ID); err != nil || !ok || got["id"] != devs[0].ID {
		t.Errorf("device entry: %v %v %v", got, ok, err)
	}
	if err := c.ExposeEntities(ctx, []string{"conversation"}, []string{"switch.coffee_machine"}, false); err != nil {
		t.Fatal(err)
	}
	exp, err := c.ExposedEntities(ctx)
	if err != nil || exp["switch.coffee_machine"]["conversation"] != false {
		t.Errorf("exposure: %v %v", exp["switch.coffee_machine"], err)
	}
}

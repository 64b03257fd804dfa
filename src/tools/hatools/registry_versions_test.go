package hatools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hamcp/hamcp/dev/sim"
	"github.com/hamcp/hamcp/src/confighistory"
	"github.com/hamcp/hamcp/src/homeassistant"
)

// ha_config_history restores registry items through registryVersions: a deleted label or zone comes
// back, an entity's and a device's settings return to what was kept.
func TestRegistryVersionsRestore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, err := sim.Start(ctx, sim.Options{HistoryDays: -1, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	ha, err := homeassistant.New(homeassistant.Config{BaseURL: h.URL(), Token: h.Token()})
	if err != nil {
		t.Fatal(err)
	}
	ha.Start(ctx)
	t.Cleanup(func() { ha.Close() })
	d := Deps{HA: ha}
	kinds := map[string]versionKind{}
	for _, k := range registryVersions() {
		kinds[k.kind] = k
	}
	roundTrip := func(kind, id string, change func()) {
		t.Helper()
		before, _, err := kinds[kind].read(ctx, d, id)
		if err != nil || before == nil {
			t.Fatalf("%s %s: %s %v", kind, id, before, err)
		}
		change()
		if err := kinds[kind].write(ctx, d, id, before); err != nil {
			t.Fatalf("restore %s %s: %v", kind, id, err)
		}
		after, _, err := kinds[kind].read(ctx, d, id)
		var a, b map[string]any
		if err != nil || json.Unmarshal(before, &a) != nil || json.Unmarshal(after, &b) != nil {
			t.Fatalf("read back %s %s: %s %v", kind, id, after, err)
		}
		for k, v := range a {
			if k != "modified_at" && regJSON(b[k]) != regJSON(v) {
				t.Errorf("%s %s: %s is %v after the restore, was %v", kind, id, k, b[k], v)
			}
		}
	}
	roundTrip("label", "night", func() { regMust(t, ha.DeleteRegistryItem(ctx, homeassistant.RegistryLabel, "", "night")) })
	roundTrip("zone", "work", func() { regMust(t, kinds["zone"].write(ctx, d, "work", nil)) })
	roundTrip("area", "office", func() {
		_, err := ha.UpdateRegistryItem(ctx, homeassistant.RegistryArea, "", "office", map[string]any{"name": "Study", "labels": []string{"night"}})
		regMust(t, err)
	})
	roundTrip("entity", "light.kitchen_island", func() {
		_, err := ha.UpdateEntityRegistry(ctx, "light.kitchen_island", map[string]any{"name": "X", "area_id": "garden", "hidden_by": "user"})
		regMust(t, err)
	})
	devs, err := ha.Devices(ctx)
	if err != nil || len(devs) == 0 {
		t.Fatal(err)
	}
	roundTrip("device", devs[0].ID, func() {
		_, err := ha.UpdateDeviceRegistry(ctx, devs[0].ID, map[string]any{"name_by_user": "Y", "labels": []string{}})
		regMust(t, err)
	})
}

func regJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func regMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// The Activity page shows undoNote before the user presses Undo: a kept rename says it renames back.
func TestUndoNote(t *testing.T) {
	for _, c := range []struct {
		item, config, want string
	}{
		{"automation:porch", `{"alias":"Porch"}`, "Undo puts automation:porch back as it was before (kept version 3)."},
		{"automation:porch", `null`, "Undo deletes automation:porch: it did not exist before."},
		{"entity:light.moved", `{"entity_id":"light.island","name":null}`, "Undo renames light.moved back to light.island and puts its settings back as they were (kept version 3)."},
		{"entity:light.island", `{"entity_id":"light.island"}`, "Undo puts entity:light.island back as it was before (kept version 3)."},
	} {
		if got := undoNote(confighistory.Version{Item: c.item, N: 3, Config: json.RawMessage(c.config)}); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.item, c.config, got, c.want)
		}
	}
}

package hatools

// How ha_config_history reads, checks and writes back the registries: areas, floors, zones,
// labels, categories, entities and devices.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/sensitive"
)

// registryVersions are the registry kinds ha_config_history can restore.
func registryVersions() []versionKind {
	out := []versionKind{entityVersions(), deviceVersions()}
	for _, kind := range []string{KindArea, KindFloor, KindZone, KindLabel, KindCategory} {
		out = append(out, registryItemVersions(kind))
	}
	return out
}

// splitHistoryID undoes historyID.
func splitHistoryID(kind, id string) (scope, itemID string) {
	if kind == KindCategory {
		scope, itemID, _ = strings.Cut(id, "/")
		return scope, itemID
	}
	return "", id
}

// registryItemVersions restores an area, floor, zone, label or category: updated in place when it
// exists, made again (Home Assistant picks the id from the name) when it was deleted, deleted when
// the version is from before it existed.
func registryItemVersions(kind string) versionKind {
	rk := homeassistant.RegistryKind(kind)
	return versionKind{kind: kind,
		read: func(ctx context.Context, d Deps, id string) (json.RawMessage, string, error) {
			scope, itemID := splitHistoryID(kind, id)
			item, ok, err := d.HA.RegistryItem(ctx, rk, scope, itemID)
			if err != nil || !ok {
				return nil, "", err
			}
			raw, err := json.Marshal(compactItem(item))
			return raw, registryTitle(item), err
		},
		check: func(ctx context.Context, d Deps, w *walk, id string, cfg json.RawMessage) {
			var item map[string]any
			_ = json.Unmarshal(cfg, &item)
			switch kind {
			case KindZone: // the version's name too: a zone made again gets its entity id from it
				_, itemID := splitHistoryID(kind, id)
				w.zoneTriggers(ctx, manageRegistryArgs{Kind: kind, ID: itemID, Fields: keptOf(item, []string{"name"})})
			case KindArea: // as ha_manage_registry's update: new labels or floor for an area holding something sensitive
				w.areaReach(ctx, id, item)
			}
		},
		write: func(ctx context.Context, d Deps, id string, cfg json.RawMessage) error {
			defer registryChanged(d)
			scope, itemID := splitHistoryID(kind, id)
			_, exists, err := d.HA.RegistryItem(ctx, rk, scope, itemID)
			if err != nil {
				return err
			}
			if cfg == nil {
				if !exists {
					return nil
				}
				return d.HA.DeleteRegistryItem(ctx, rk, scope, itemID)
			}
			var item map[string]any
			if err := json.Unmarshal(cfg, &item); err != nil {
				return err
			}
			fields := keptOf(item, registryKinds[kind].fields)
			if exists {
				_, err = d.HA.UpdateRegistryItem(ctx, rk, scope, itemID, fields)
				return err
			}
			for k, v := range fields { // create takes no nulls
				if v == nil {
					delete(fields, k)
				}
			}
			_, err = d.HA.CreateRegistryItem(ctx, rk, scope, fields)
			return err
		},
	}
}

// areaReach adds, when restoring item (nil: a delete) gives the existing area id other labels or another
// floor, the sensitive entities it holds: label and floor targets reach them after the restore.
func (w *walk) areaReach(ctx context.Context, id string, item map[string]any) {
	if item == nil {
		return
	}
	now, ok, err := w.d.HA.RegistryItem(ctx, homeassistant.RegistryArea, "", id)
	if err == nil && !ok {
		return // made again under an id Home Assistant picks: it holds nothing yet
	}
	if err == nil && regJSONOf(now["floor_id"]) == regJSONOf(item["floor_id"]) && regJSONOf(sortedLabels(now["labels"])) == regJSONOf(sortedLabels(item["labels"])) {
		return
	}
	w.fact("area", id, regJSONOf(item["labels"]), regJSONOf(item["floor_id"]))
	if reg := w.registry(ctx); reg == nil {
		w.hits = append(w.hits, sensitive.Unknown("change what label and floor targets reach: hamcp cannot read the registries")...)
	} else {
		w.guarded(ctx, reg.reached(sensitive.Target{AreaIDs: []string{id}}), "restore the labels and floor of the area "+id+", which holds")
	}
}

func regJSONOf(v any) string { b, _ := json.Marshal(v); return string(b) }

// sortedLabels is a label list in order, nil for none.
func sortedLabels(v any) []string {
	l, _ := stringList(v)
	s, _ := l.([]string)
	if len(s) == 0 {
		return nil
	}
	return slices.Sorted(slices.Values(s))
}

// entityVersions restores an entity's registry settings (and its Assist exposure when kept).
func entityVersions() versionKind {
	return versionKind{kind: KindEntity,
		read: func(ctx context.Context, d Deps, id string) (json.RawMessage, string, error) {
			e, err := d.HA.EntityRegistryEntry(ctx, id)
			var api *homeassistant.APIError
			if errors.As(err, &api) && api.Code == "not_found" {
				return nil, "", nil
			}
			if err != nil {
				return nil, "", err
			}
			kept := keptOf(e, entityKept)
			kept["registry_id"] = e["id"]
			kept["exposed_to_assist"] = exposedToAssist(ctx, d, id)
			raw, err := json.Marshal(kept)
			return raw, cmp.Or(stringOf(e["name"]), stringOf(e["original_name"])), err
		},
		check: func(ctx context.Context, d Deps, w *walk, id string, cfg json.RawMessage) {
			w.guarded(ctx, []string{id}, "restore the area, labels, device class and visibility of")
			var kept map[string]any
			if json.Unmarshal(cfg, &kept) == nil && kept["exposed_to_assist"] == true {
				w.exposure(ctx, id)
			}
		},
		locate: func(ctx context.Context, d Deps, id string, cfg json.RawMessage) (string, error) {
			var kept struct {
				RegistryID string `json:"registry_id"`
			}
			if json.Unmarshal(cfg, &kept) != nil || kept.RegistryID == "" {
				return id, nil // kept before hamcp recorded the registry id: where it was
			}
			e, err := d.HA.EntityRegistryEntry(ctx, id)
			if err == nil && stringOf(e["id"]) == kept.RegistryID {
				return id, nil
			}
			var api *homeassistant.APIError
			if err != nil && !(errors.As(err, &api) && api.Code == "not_found") {
				return "", err
			}
			now, ok, err := d.HA.FindEntity(ctx, func(r homeassistant.RegistryRow) bool { return r.ID == kept.RegistryID })
			if err != nil {
				return "", err
			}
			if !ok {
				return "", fmt.Errorf("the entity kept as %s is no longer in Home Assistant's entity registry (it was deleted), so there is nothing to restore", id)
			}
			return now, nil
		},
		write: func(ctx context.Context, d Deps, id string, cfg json.RawMessage) error {
			if cfg == nil {
				return errors.New("hamcp does not delete entities; nothing to restore")
			}
			var kept map[string]any
			if err := json.Unmarshal(cfg, &kept); err != nil {
				return err
			}
			defer registryChanged(d)
			fields := keptOf(kept, entityKept[1:])
			if was, _ := kept["entity_id"].(string); was != "" && was != id {
				fields["new_entity_id"] = was // it was renamed since: the restore renames it back
			}
			if _, err := d.HA.UpdateEntityRegistry(ctx, id, fields); err != nil {
				return err
			}
			if was, _ := fields["new_entity_id"].(string); was != "" {
				id = was
			}
			if v, ok := kept["exposed_to_assist"].(bool); ok {
				return d.HA.ExposeEntities(ctx, []string{"conversation"}, []string{id}, v)
			}
			return nil
		},
	}
}

// deviceVersions restores a device's name, area, labels and enabled state.
func deviceVersions() versionKind {
	return versionKind{kind: KindDevice,
		read: func(ctx context.Context, d Deps, id string) (json.RawMessage, string, error) {
			dev, ok, err := d.HA.DeviceEntry(ctx, id)
			if err != nil || !ok {
				return nil, "", err
			}
			raw, err := json.Marshal(keptOf(dev, deviceKept))
			return raw, cmp.Or(stringOf(dev["name_by_user"]), stringOf(dev["name"])), err
		},
		check: func(ctx context.Context, d Deps, w *walk, id string, cfg json.RawMessage) {
			w.deviceEntities(ctx, id, "restore the area, labels and enabled state of the device "+id+", which holds")
		},
		write: func(ctx context.Context, d Deps, id string, cfg json.RawMessage) error {
			if cfg == nil {
				return errors.New("hamcp does not delete devices; nothing to restore")
			}
			var kept map[string]any
			if err := json.Unmarshal(cfg, &kept); err != nil {
				return err
			}
			defer registryChanged(d)
			_, err := d.HA.UpdateDeviceRegistry(ctx, id, keptOf(kept, deviceKept))
			return err
		},
	}
}

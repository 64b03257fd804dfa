package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
)

// storageFiles renders a few of HA's .storage JSON documents, in HA's
// {version, minor_version, key, data} envelope with 2-space indentation.
func storageFiles(o Options, ents entities) ([]file, error) {
	created := o.Now.Add(-90 * 24 * time.Hour).UTC().Format("2006-01-02T15:04:05.000000+00:00")
	entry := func(domain, title, source string, data map[string]any) map[string]any {
		return map[string]any{
			"created_at": created, "data": data, "disabled_by": nil, "discovery_keys": map[string]any{},
			"domain": domain, "entry_id": ulidLike("entry:" + domain), "minor_version": 1, "modified_at": created,
			"options": map[string]any{}, "pref_disable_new_entities": false, "pref_disable_polling": false,
			"source": source, "subentries": []any{}, "title": title, "unique_id": nil, "version": 1,
		}
	}
	var regEntities []map[string]any
	for _, id := range ents.all {
		domain, object, _ := strings.Cut(id, ".")
		regEntities = append(regEntities, map[string]any{
			"entity_id": id, "id": hexID("entity:" + id), "platform": platformFor(domain), "unique_id": object,
			"original_name": nameOf(id), "name": nil, "icon": nil, "area_id": nil, "device_id": nil,
			"disabled_by": nil, "hidden_by": nil, "config_entry_id": nil, "created_at": created, "modified_at": created,
		})
	}
	if regEntities == nil {
		regEntities = []map[string]any{}
	}
	docs := []struct {
		key   string
		minor int
		data  any
	}{
		{"core.config", 4, map[string]any{
			"latitude": 52.3731, "longitude": 4.8922, "elevation": 4, "unit_system_v2": "metric",
			"location_name": "Demo Home", "time_zone": "Europe/Amsterdam", "external_url": nil, "internal_url": nil,
			"currency": "EUR", "country": "NL", "language": "en", "radius": 100,
		}},
		{"core.config_entries", 5, map[string]any{"entries": []any{
			entry("sun", "Sun", "import", map[string]any{}),
			entry("met", "Home", "onboarding", map[string]any{"track_home": true}),
			entry("mqtt", "core-mosquitto", "hassio", map[string]any{"broker": "core-mosquitto", "port": 1883, "discovery": true}),
		}}},
		{"core.entity_registry", 18, map[string]any{"entities": regEntities, "deleted_entities": []any{}}},
		{"onboarding", 1, map[string]any{"done": []string{"user", "core_config", "analytics", "integration"}}},
	}
	var out []file
	for _, d := range docs {
		b, err := json.MarshalIndent(map[string]any{"version": 1, "minor_version": d.minor, "key": d.key, "data": d.data}, "", "  ")
		if err != nil {
			return nil, err
		}
		out = append(out, file{"config/.storage/" + d.key, append(b, '\n'), 0o600})
	}
	return out, nil
}

// hexID is a stable 32-hex-digit id, like the uuid4 hex HA stores.
func hexID(seed string) string {
	h := sha256.Sum256([]byte(seed))
	return hex.EncodeToString(h[:16])
}

// ulidLike is a stable 26-character id in the ULID alphabet, the shape of
// config entry ids.
func ulidLike(seed string) string {
	const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	h := sha256.Sum256([]byte(seed))
	out := []byte("01J")
	for _, c := range h[:23] {
		out = append(out, alphabet[c%32])
	}
	return string(out)
}

func platformFor(domain string) string {
	switch domain {
	case "person":
		return "person"
	case "sun":
		return "sun"
	case "light", "switch", "binary_sensor", "sensor":
		return "mqtt"
	}
	return domain
}

package home

// Registry entries. Field names and JSON keys follow HA's WS registry
// list shapes (docs §2.4); pointers are fields HA sends as null when unset.

// Floor is a floor registry entry.
type Floor struct {
	FloorID    string   `json:"floor_id"`
	Name       string   `json:"name"`
	Level      *int     `json:"level"`
	Icon       *string  `json:"icon"`
	Aliases    []string `json:"aliases"`
	CreatedAt  float64  `json:"created_at"`
	ModifiedAt float64  `json:"modified_at"`
}

// Area is an area registry entry.
type Area struct {
	AreaID              string   `json:"area_id"`
	Name                string   `json:"name"`
	FloorID             *string  `json:"floor_id"`
	Icon                *string  `json:"icon"`
	Picture             *string  `json:"picture"`
	Aliases             []string `json:"aliases"`
	Labels              []string `json:"labels"`
	HumidityEntityID    *string  `json:"humidity_entity_id"`
	TemperatureEntityID *string  `json:"temperature_entity_id"`
	CreatedAt           float64  `json:"created_at"`
	ModifiedAt          float64  `json:"modified_at"`
}

// Label is a label registry entry.
type Label struct {
	LabelID     string  `json:"label_id"`
	Name        string  `json:"name"`
	Color       *string `json:"color"`
	Description *string `json:"description"`
	Icon        *string `json:"icon"`
	CreatedAt   float64 `json:"created_at"`
	ModifiedAt  float64 `json:"modified_at"`
}

// Device is a device registry entry in the 2026.8+ shape (one config entry
// per device, the old list fields kept for compatibility).
type Device struct {
	ID                      string               `json:"id"`
	AreaID                  *string              `json:"area_id"`
	ConfigurationURL        *string              `json:"configuration_url"`
	ConfigEntries           []string             `json:"config_entries"`
	ConfigEntriesSubentries map[string][]*string `json:"config_entries_subentries"`
	ConfigEntryID           *string              `json:"config_entry_id"`
	ConfigSubentryID        *string              `json:"config_subentry_id"`
	Connections             [][2]string          `json:"connections"`
	CreatedAt               float64              `json:"created_at"`
	DisabledBy              *string              `json:"disabled_by"`
	EntryType               *string              `json:"entry_type"`
	HWVersion               *string              `json:"hw_version"`
	Identifiers             [][2]string          `json:"identifiers"`
	Labels                  []string             `json:"labels"`
	Manufacturer            *string              `json:"manufacturer"`
	Model                   *string              `json:"model"`
	ModelID                 *string              `json:"model_id"`
	ModifiedAt              float64              `json:"modified_at"`
	NameByUser              *string              `json:"name_by_user"`
	Name                    string               `json:"name"`
	PrimaryConfigEntry      *string              `json:"primary_config_entry"`
	SerialNumber            *string              `json:"serial_number"`
	SWVersion               *string              `json:"sw_version"`
	ViaDeviceID             *string              `json:"via_device_id"`
}

// EntityEntry is an entity registry entry. List returns the "list" shape;
// Extended adds the fields config/entity_registry/get returns.
type EntityEntry struct {
	ID                  string
	EntityID            string
	UniqueID            string
	Platform            string
	ConfigEntryID       *string
	DeviceID            *string
	AreaID              *string
	Labels              []string
	Name                *string
	OriginalName        *string
	Icon                *string
	OriginalIcon        *string
	EntityCategory      *string
	DisabledBy          *string
	HiddenBy            *string
	HasEntityName       bool
	TranslationKey      *string
	DeviceClass         *string
	OriginalDeviceClass *string
	Aliases             []string
	Capabilities        map[string]any
	CreatedAt           float64
	ModifiedAt          float64
}

// List is the config/entity_registry/list item.
func (e *EntityEntry) List() map[string]any {
	return map[string]any{
		"area_id":            e.AreaID,
		"categories":         map[string]any{},
		"config_entry_id":    e.ConfigEntryID,
		"config_subentry_id": nil,
		"created_at":         e.CreatedAt,
		"device_id":          e.DeviceID,
		"disabled_by":        e.DisabledBy,
		"entity_category":    e.EntityCategory,
		"entity_id":          e.EntityID,
		"has_entity_name":    e.HasEntityName,
		"hidden_by":          e.HiddenBy,
		"icon":               e.Icon,
		"id":                 e.ID,
		"labels":             nonNil(e.Labels),
		"modified_at":        e.ModifiedAt,
		"name":               e.Name,
		"options":            map[string]any{},
		"original_name":      e.OriginalName,
		"platform":           e.Platform,
		"translation_key":    e.TranslationKey,
		"unique_id":          e.UniqueID,
	}
}

// Extended is the config/entity_registry/get shape.
func (e *EntityEntry) Extended() map[string]any {
	m := e.List()
	m["aliases"] = nonNil(e.Aliases)
	m["capabilities"] = e.Capabilities
	m["device_class"] = e.DeviceClass
	m["original_device_class"] = e.OriginalDeviceClass
	m["original_icon"] = e.OriginalIcon
	return m
}

// ConfigEntry is an integration config entry (only what the registries reference).
type ConfigEntry struct {
	EntryID string `json:"entry_id"`
	Domain  string `json:"domain"`
	Title   string `json:"title"`
	State   string `json:"state"`
}

// User is an HA auth user.
type User struct {
	ID      string
	Name    string
	IsOwner bool
	IsAdmin bool
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func strp(s string) *string { return &s }

func cloneStrings(s []string) []string { return append([]string(nil), s...) }

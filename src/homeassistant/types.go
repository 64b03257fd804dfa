package homeassistant

import (
	"encoding/json"
	"strings"
	"time"
)

// State is one entity's state object as HA serialises it (REST /api/states, WS get_states,
// state_changed events). Treat Attributes as read-only: values from the mirror are shared.
type State struct {
	EntityID     string         `json:"entity_id"`
	State        string         `json:"state"`
	Attributes   map[string]any `json:"attributes,omitempty"`
	LastChanged  time.Time      `json:"last_changed,omitzero"`
	LastUpdated  time.Time      `json:"last_updated,omitzero"`
	LastReported time.Time      `json:"last_reported,omitzero"`
	Context      Context        `json:"context,omitzero"`
}

// Context links a state change or event to the user, automation or call that caused it.
type Context struct {
	ID       string  `json:"id"`
	ParentID *string `json:"parent_id"`
	UserID   *string `json:"user_id"`
}

// Domain is the part of the entity id before the first dot ("light" for "light.kitchen").
func (s State) Domain() string {
	d, _, _ := strings.Cut(s.EntityID, ".")
	return d
}

// FriendlyName is the friendly_name attribute, falling back to the entity id.
func (s State) FriendlyName() string {
	if n, ok := s.Attributes["friendly_name"].(string); ok && n != "" {
		return n
	}
	return s.EntityID
}

// CoreConfig is GET /api/config (the same object as WS get_config). Fields HA may add later are
// kept in Raw.
type CoreConfig struct {
	LocationName          string            `json:"location_name"`
	Latitude              float64           `json:"latitude"`
	Longitude             float64           `json:"longitude"`
	Elevation             float64           `json:"elevation"`
	Radius                float64           `json:"radius"`
	UnitSystem            map[string]string `json:"unit_system"`
	TimeZone              string            `json:"time_zone"`
	Components            []string          `json:"components"`
	ConfigDir             string            `json:"config_dir"`
	AllowlistExternalDirs []string          `json:"allowlist_external_dirs"`
	AllowlistExternalURLs []string          `json:"allowlist_external_urls"`
	Version               string            `json:"version"`
	ConfigSource          string            `json:"config_source"`
	RecoveryMode          bool              `json:"recovery_mode"`
	SafeMode              bool              `json:"safe_mode"`
	State                 string            `json:"state"`
	ExternalURL           *string           `json:"external_url"`
	InternalURL           *string           `json:"internal_url"`
	Currency              string            `json:"currency"`
	Country               *string           `json:"country"`
	Language              string            `json:"language"`
	Debug                 bool              `json:"debug"`
	Raw                   json.RawMessage   `json:"-"`
}

// StateUpdate is the body of POST /api/states/<entity_id>.
type StateUpdate struct {
	State       string         `json:"state"`
	Attributes  map[string]any `json:"attributes,omitempty"`
	ForceUpdate bool           `json:"force_update,omitempty"`
}

// EventListener is one row of GET /api/events.
type EventListener struct {
	Event         string `json:"event"`
	ListenerCount int    `json:"listener_count"`
}

// ServiceDomain is one row of GET /api/services: a domain and its services keyed by name.
type ServiceDomain struct {
	Domain   string                        `json:"domain"`
	Services map[string]ServiceDescription `json:"services"`
}

// ServiceDescription describes one service. Field selectors and targets are open-ended, so they
// stay raw JSON.
type ServiceDescription struct {
	Name        string                     `json:"name,omitempty"`
	Description string                     `json:"description,omitempty"`
	Fields      map[string]json.RawMessage `json:"fields,omitempty"`
	Target      json.RawMessage            `json:"target,omitempty"`
	Response    *ServiceResponseSupport    `json:"response,omitempty"`
}

// ServiceResponseSupport is present when a service can return data; Optional false means the
// call must ask for the response.
type ServiceResponseSupport struct {
	Optional bool `json:"optional"`
}

// LogbookEntry is one REST logbook row (When is ISO-8601); HA omits keys that are empty.
type LogbookEntry struct {
	When                string `json:"when"`
	Name                string `json:"name,omitempty"`
	Message             string `json:"message,omitempty"`
	Domain              string `json:"domain,omitempty"`
	EntityID            string `json:"entity_id,omitempty"`
	State               string `json:"state,omitempty"`
	Icon                string `json:"icon,omitempty"`
	Source              string `json:"source,omitempty"`
	ContextID           string `json:"context_id,omitempty"`
	ContextUserID       string `json:"context_user_id,omitempty"`
	ContextEventType    string `json:"context_event_type,omitempty"`
	ContextDomain       string `json:"context_domain,omitempty"`
	ContextService      string `json:"context_service,omitempty"`
	ContextEntityID     string `json:"context_entity_id,omitempty"`
	ContextEntityIDName string `json:"context_entity_id_name,omitempty"`
	ContextName         string `json:"context_name,omitempty"`
	ContextMessage      string `json:"context_message,omitempty"`
	ContextSource       string `json:"context_source,omitempty"`
	ContextState        string `json:"context_state,omitempty"`
}

// Calendar is one row of GET /api/calendars.
type Calendar struct {
	EntityID string `json:"entity_id"`
	Name     string `json:"name"`
}

// CalendarEvent is one event from GET /api/calendars/<entity_id>.
type CalendarEvent struct {
	Start        CalendarTime `json:"start"`
	End          CalendarTime `json:"end"`
	Summary      string       `json:"summary"`
	Description  string       `json:"description,omitempty"`
	Location     string       `json:"location,omitempty"`
	UID          string       `json:"uid,omitempty"`
	RecurrenceID string       `json:"recurrence_id,omitempty"`
	RRule        string       `json:"rrule,omitempty"`
}

// CalendarTime is either a local date-time (timed events) or a date (all-day events).
type CalendarTime struct {
	DateTime string `json:"dateTime,omitempty"`
	Date     string `json:"date,omitempty"`
}

// CheckConfigResult is POST /api/config/core/check_config.
type CheckConfigResult struct {
	Result   string `json:"result"`
	Errors   string `json:"errors,omitempty"`
	Warnings string `json:"warnings,omitempty"`
}

// Valid reports whether HA accepted the configuration.
func (r CheckConfigResult) Valid() bool { return r.Result == "valid" }

// ConfigKind names the config-editor collections reachable over REST.
type ConfigKind string

// The three collections HA's config integration edits over REST.
const (
	KindAutomation ConfigKind = "automation"
	KindScript     ConfigKind = "script"
	KindScene      ConfigKind = "scene"
)

package home

import (
	"slices"
	"sort"
	"strings"
	"time"
)

// EntryDetails is a config entry as HA serialises it for config_entries/get
// and GET /api/config/config_entries/entry (ConfigEntry.as_json_fragment),
// keys in HA's order.
type EntryDetails struct {
	CreatedAt                          float64           `json:"created_at"`
	DisabledBy                         *string           `json:"disabled_by"`
	Domain                             string            `json:"domain"`
	EntryID                            string            `json:"entry_id"`
	ErrorReasonTranslationKey          *string           `json:"error_reason_translation_key"`
	ErrorReasonTranslationPlaceholders map[string]string `json:"error_reason_translation_placeholders"`
	ModifiedAt                         float64           `json:"modified_at"`
	NumSubentries                      int               `json:"num_subentries"`
	PrefDisableNewEntities             bool              `json:"pref_disable_new_entities"`
	PrefDisablePolling                 bool              `json:"pref_disable_polling"`
	Reason                             *string           `json:"reason"`
	Source                             string            `json:"source"`
	State                              string            `json:"state"`
	SupportedSubentryTypes             map[string]any    `json:"supported_subentry_types"`
	SupportsOptions                    bool              `json:"supports_options"`
	SupportsReconfigure                bool              `json:"supports_reconfigure"`
	SupportsRemoveDevice               bool              `json:"supports_remove_device"`
	SupportsUnload                     bool              `json:"supports_unload"`
	Title                              string            `json:"title"`
}

// integrationTypes is each demo integration's manifest integration_type,
// for config_entries/get's type_filter.
var integrationTypes = map[string]string{
	"hue": "hub", "shelly": "device", "zha": "hub", "sonos": "hub", "ecobee": "hub", "cast": "hub", "met": "service",
	"sun": "service", "mobile_app": "device", "hacs": "service", "tuya": "hub", "airgradient": "device", "homewizard": "device",
	"meross": "hub", "nuki": "hub", "overkiz": "hub", "reolink": "hub", "samsungtv": "device", "solaredge": "hub", "tado": "hub",
	"wled": "device", "yale": "hub", "risco": "hub", "local_calendar": "helper", "local_todo": "helper",
}

// optionsFlows are the demo integrations with an options flow.
var optionsFlows = map[string]bool{"hue": true, "zha": true, "sonos": true, "met": false, "cast": true, "hacs": true, "tuya": true, "mobile_app": false}

func newEntryDetails(id, domain, title, source, state string, reason *string, created float64) EntryDetails {
	return EntryDetails{
		CreatedAt: created, Domain: domain, EntryID: id, ModifiedAt: created, Reason: reason, Source: source,
		State: state, SupportedSubentryTypes: map[string]any{}, SupportsOptions: optionsFlows[domain],
		SupportsRemoveDevice: domain == "zha" || domain == "mobile_app", SupportsUnload: true, Title: title,
	}
}

// IntegrationType is a domain's integration_type ("hub" when unknown).
func IntegrationType(domain string) string {
	if t, ok := integrationTypes[domain]; ok {
		return t
	}
	return "hub"
}

// ConfigEntryDetails lists every config entry in HA's shape, sorted like
// HA's registry (by domain, then title). domain and types filter when set.
func (h *Home) ConfigEntryDetails(domain string, types []string) []EntryDetails {
	a := h.admin()
	h.mu.Lock()
	created := Epoch(h.start.Add(-60 * 24 * time.Hour))
	out := make([]EntryDetails, 0, len(h.configEntries)+2)
	for _, e := range h.configEntries {
		out = append(out, newEntryDetails(e.EntryID, e.Domain, e.Title, "user", e.State, nil, created))
	}
	h.mu.Unlock()
	a.mu.Lock()
	out = append(out, a.extraEntries...)
	a.mu.Unlock()
	out = h.entryOverlay(out) // flows.go: entries flows created, disabled ones
	keep := out[:0]
	for _, e := range out {
		if domain != "" && e.Domain != domain {
			continue
		}
		if len(types) > 0 && !slices.Contains(types, IntegrationType(e.Domain)) {
			continue
		}
		keep = append(keep, e)
	}
	sort.Slice(keep, func(i, j int) bool {
		if keep[i].Domain != keep[j].Domain {
			return keep[i].Domain < keep[j].Domain
		}
		return strings.ToLower(keep[i].Title) < strings.ToLower(keep[j].Title)
	})
	return keep
}

// RepairIssue is one issue of HA's issue registry (repairs/list_issues).
type RepairIssue struct {
	BreaksInHAVersion       *string           `json:"breaks_in_ha_version"`
	Created                 string            `json:"created"`
	DismissedVersion        *string           `json:"dismissed_version"`
	Domain                  string            `json:"domain"`
	Ignored                 bool              `json:"ignored"`
	IsFixable               bool              `json:"is_fixable"`
	IssueDomain             *string           `json:"issue_domain"`
	IssueID                 string            `json:"issue_id"`
	LearnMoreURL            *string           `json:"learn_more_url"`
	Severity                string            `json:"severity"` // critical | error | warning
	TranslationKey          string            `json:"translation_key"`
	TranslationPlaceholders map[string]string `json:"translation_placeholders"`
}

func seedIssues(start time.Time) []RepairIssue {
	return []RepairIssue{{
		BreaksInHAVersion: strp("2026.12.0"), Created: ISOTime(start.Add(-3 * 24 * time.Hour)), Domain: "time_date",
		IssueDomain: strp("time_date"), IssueID: "deprecated_yaml", LearnMoreURL: strp("https://www.home-assistant.io/integrations/time_date/"),
		Severity: "warning", TranslationKey: "deprecated_yaml", TranslationPlaceholders: map[string]string{"integration_title": "Time & Date"},
	}}
}

// RepairIssues lists the open and ignored repair issues.
func (h *Home) RepairIssues() []RepairIssue {
	a := h.admin()
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]RepairIssue(nil), a.issues...)
}

// raiseIssue adds (or replaces) a repair issue; the caller holds a.mu.
func (a *adminState) raiseIssue(is RepairIssue) {
	for i, old := range a.issues {
		if old.Domain == is.Domain && old.IssueID == is.IssueID {
			a.issues[i] = is
			return
		}
	}
	a.issues = append(a.issues, is)
}

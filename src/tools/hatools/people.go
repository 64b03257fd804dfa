package hatools

import (
	"context"
	"strings"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/toolkit"
)

// SetPeople is the toolset of persons and their whereabouts.
const SetPeople = "people"

type personArgs struct {
	PersonID   string `json:"person_id,omitempty" jsonschema:"default everyone" validate:"omitempty,max=255" example:"person.alex"`
	IncludeGPS bool   `json:"include_gps,omitempty" jsonschema:"only when the user asks for coordinates"`
	toolkit.Page
}

type personView struct {
	EntityID    string   `json:"entity_id"`
	Name        string   `json:"name"`
	State       string   `json:"state"`
	Zone        string   `json:"zone,omitempty"`
	Since       string   `json:"since,omitempty"`
	Source      string   `json:"source,omitempty"`
	Trackers    []string `json:"trackers,omitempty"`
	Latitude    *float64 `json:"latitude,omitempty"`
	Longitude   *float64 `json:"longitude,omitempty"`
	GPSAccuracy *float64 `json:"gps_accuracy,omitempty"`
}

// personEntityID accepts "person.alex" or the bare "alex".
func personEntityID(ref string) string {
	ref = strings.ToLower(strings.TrimSpace(ref))
	if !strings.Contains(ref, ".") {
		ref = "person." + ref
	}
	return ref
}

// zoneFor maps a person's state to the zone entity it names: "home" is zone.home, other zone
// states are the zone's friendly name; not_home and unknown are no zone.
func zoneFor(state string, zones []homeassistant.State) string {
	if state == "home" {
		return "zone.home"
	}
	for _, z := range zones {
		if strings.EqualFold(z.FriendlyName(), state) {
			return z.EntityID
		}
	}
	return ""
}

func floatAttr(attrs map[string]any, key string) *float64 {
	switch v := attrs[key].(type) {
	case float64:
		return &v
	case int:
		f := float64(v)
		return &f
	}
	return nil
}

// peopleTools are the people tools, in the order tools/list shows them.
func peopleTools(d Deps) []*toolkit.Tool { return []*toolkit.Tool{getPersonLocation(d)} }

// getPersonLocation is ha_get_person_location.
func getPersonLocation(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[personArgs, toolkit.List[personView]]{
		Name: "ha_get_person_location", Toolset: SetPeople, Title: "Where people are",
		Description: "Where the household's people are: home, not_home or zone, since when, and which tracker. " +
			"Coordinates only with include_gps=true; location is personal, share it only with the user who asks.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a personArgs) (toolkit.List[personView], error) {
			return personLocations(ctx, d.HA, a)
		},
	})
}

// personLocations lists every person (or the one asked for) with the zone their state names.
func personLocations(ctx context.Context, ha *homeassistant.Client, a personArgs) (toolkit.List[personView], error) {
	all, err := states(ctx, ha)
	if err != nil {
		return toolkit.List[personView]{}, haError(err, false, "")
	}
	var persons, zones []homeassistant.State
	for _, s := range all {
		switch s.Domain() {
		case "person":
			persons = append(persons, s)
		case "zone":
			zones = append(zones, s)
		}
	}
	want := ""
	if a.PersonID != "" {
		want = personEntityID(a.PersonID)
	}
	var out []personView
	for _, p := range persons {
		if want != "" && p.EntityID != want {
			continue
		}
		v := personView{EntityID: p.EntityID, Name: p.FriendlyName(), State: p.State, Zone: zoneFor(p.State, zones), Since: isoUTC(p.LastChanged)}
		v.Source, _ = p.Attributes["source"].(string)
		if list, ok := p.Attributes["device_trackers"].([]any); ok {
			for _, t := range list {
				if s, ok := t.(string); ok {
					v.Trackers = append(v.Trackers, s)
				}
			}
		}
		if a.IncludeGPS {
			v.Latitude, v.Longitude, v.GPSAccuracy = floatAttr(p.Attributes, "latitude"), floatAttr(p.Attributes, "longitude"), floatAttr(p.Attributes, "gps_accuracy")
		}
		out = append(out, v)
	}
	if want != "" && len(out) == 0 {
		ids := make([]string, 0, len(persons))
		for _, p := range persons {
			ids = append(ids, p.EntityID)
		}
		return toolkit.List[personView]{}, toolkit.InvalidArg("person_id", "is not a person in this home (got "+a.PersonID+"); persons: "+strings.Join(ids, ", "), `{"person_id": "person.alex"}`)
	}
	return toolkit.Paginate(out, a.Page), nil
}

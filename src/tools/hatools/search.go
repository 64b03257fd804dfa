package hatools

import (
	"context"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/toolkit"
)

// SetSearch is the toolset for finding entities and overviews of the home.
const SetSearch = "search"

// searchDoc is what one entity can be found by.
type searchDoc struct{ id, name, area, device string }

// spokenDomains lets everyday words find an entity by its domain ("lamp" finds lights).
var spokenDomains = map[string]string{"lamp": "light", "lamps": "light", "lights": "light", "plug": "switch", "plugs": "switch",
	"thermostat": "climate", "heating": "climate", "blind": "cover", "blinds": "cover", "shade": "cover", "curtain": "cover",
	"tv": "media_player", "speaker": "media_player", "doorbell": "camera", "phone": "device_tracker"}

// searchWords splits text into lower-case words on anything but letters and digits.
func searchWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// oneEditApart reports whether a and b differ by at most one insertion, deletion or substitution.
func oneEditApart(a, b string) bool {
	if isASCII(a) && isASCII(b) {
		return oneEdit([]byte(a), []byte(b))
	}
	return oneEdit([]rune(a), []rune(b))
}

func oneEdit[T byte | rune](a, b []T) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(b)-len(a) > 1 {
		return false
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	if len(a) == len(b) {
		return i == len(a) || slices.Equal(a[i+1:], b[i+1:])
	}
	return slices.Equal(a[i:], b[i+1:])
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// wordMatch grades how well a query word q matches a word w: exact, prefix, or (for words of
// four letters and more) inside the word or one typo away.
func wordMatch(w, q string) int {
	switch {
	case w == q:
		return 3
	case strings.HasPrefix(w, q):
		return 2
	case utf8.RuneCountInString(q) >= 4 && (strings.Contains(w, q) || oneEditApart(w, q)):
		return 1
	}
	return 0
}

// searchScore ranks how well query matches doc; 0 means it does not. Whole-phrase hits on the
// id or name rank first, then entities where every query word matches a word of the name, id,
// area or device (weighted in that order), then partial word matches.
func searchScore(query string, doc searchDoc) int {
	q := strings.ToLower(strings.TrimSpace(query))
	if q == "" {
		return 0
	}
	name, id := strings.ToLower(doc.name), strings.ToLower(doc.id)
	score := 0
	switch {
	case q == id:
		score += 1000
	case q == name:
		score += 800
	case strings.Contains(name, q):
		score += 200
	case strings.Contains(id, q):
		score += 150
	}
	domain, _, _ := strings.Cut(id, ".")
	fields := []struct {
		words  []string
		weight int
	}{{searchWords(doc.name), 4}, {searchWords(doc.id), 3}, {searchWords(doc.area), 2}, {searchWords(doc.device), 2}}
	words := searchWords(q)
	matched, total := 0, 0
	for _, qw := range words {
		best := 0
		for _, f := range fields {
			for _, w := range f.words {
				best = max(best, wordMatch(w, qw)*f.weight)
			}
		}
		if best == 0 && spokenDomains[qw] == domain {
			best = 6
		}
		if best > 0 {
			matched++
			total += best
		}
	}
	switch {
	case len(words) > 0 && matched == len(words):
		score += 100 + total*10
	case matched > 0 && matched*2 >= len(words):
		score += 20 + total*3
	}
	return score
}

type searchArgs struct {
	Query       string `json:"query" validate:"required,min=1,max=200" example:"kitchen light"`
	Domain      string `json:"domain,omitempty" validate:"omitempty,domain"`
	Area        string `json:"area,omitempty" jsonschema:"area id or name"`
	Label       string `json:"label,omitempty" jsonschema:"label id or name"`
	DeviceClass string `json:"device_class,omitempty"`
	State       string `json:"state,omitempty"`
	toolkit.Page
}

type searchHit struct {
	EntityID string `json:"entity_id"`
	Name     string `json:"name,omitempty"`
	State    string `json:"state"`
	Area     string `json:"area,omitempty"`
	Device   string `json:"device,omitempty"`
	Score    int    `json:"score"`
}

type statsArgs struct {
	Domain  string `json:"domain,omitempty" validate:"omitempty,domain"`
	GroupBy string `json:"group_by,omitempty" validate:"omitempty,oneof=label device_class"`
}

type domainStats struct {
	Total  int            `json:"total"`
	States map[string]int `json:"states,omitempty"`
}

type statsResult struct {
	Total          int                    `json:"total"`
	Unavailable    int                    `json:"unavailable"`
	Unknown        int                    `json:"unknown"`
	UnavailableIDs []string               `json:"unavailable_entities,omitempty"`
	Domains        map[string]domainStats `json:"domains"`
	Areas          map[string]int         `json:"areas,omitempty"`
	Groups         map[string]int         `json:"groups,omitempty"`
	Note           string                 `json:"note,omitempty"`
}

type activityArgs struct {
	Minutes   int      `json:"minutes,omitempty" jsonschema:"default 60" validate:"omitempty,min=1,max=10080"`
	Domain    string   `json:"domain,omitempty" validate:"omitempty,domain"`
	Area      string   `json:"area,omitempty" jsonschema:"area id or name"`
	EntityIDs []string `json:"entity_ids,omitempty" validate:"omitempty,max=50,dive,entity_id"`
	toolkit.Page
}

// maxListedUnavailable keeps the stats summary small on homes with many dead entities.
const maxListedUnavailable = 20

// searchTools are the finding and overview tools, in the order tools/list shows them.
func searchTools(d Deps) []*toolkit.Tool {
	return []*toolkit.Tool{searchEntities(d), getOverview(d), getRecentActivity(d)}
}

// searchEntities is ha_search_entities.
func searchEntities(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[searchArgs, toolkit.List[searchHit]]{
		Name: "ha_search_entities", Toolset: SetSearch, Title: "Search entities",
		Description: "Find entities by what people call them: words matched against id, name, area and device, typos tolerated, best first. " +
			"Use it when you do not know the entity id; to list all of a kind, ha_get_states. Paged.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a searchArgs) (toolkit.List[searchHit], error) {
			return findEntities(ctx, d.HA, a)
		},
	})
}

// findEntities ranks every entity passing the filters against the query.
func findEntities(ctx context.Context, ha *homeassistant.Client, a searchArgs) (toolkit.List[searchHit], error) {
	all, err := states(ctx, ha)
	if err != nil {
		return toolkit.List[searchHit]{}, haError(err, false, "")
	}
	inPlace, err := placeFilter(ctx, ha, a.Area, a.Label)
	if err != nil {
		return toolkit.List[searchHit]{}, err
	}
	// Area and device names make "kitchen light" findable; without the registry the
	// search still works on ids and names.
	reg, _ := registryOf(ha).get(ctx)
	var hits []searchHit
	for _, s := range all {
		if a.Domain != "" && s.Domain() != a.Domain || a.State != "" && !strings.EqualFold(s.State, a.State) ||
			a.DeviceClass != "" && s.Attributes["device_class"] != a.DeviceClass || inPlace != nil && !inPlace(s.EntityID) {
			continue
		}
		doc := searchDoc{id: s.EntityID, name: s.FriendlyName()}
		if reg != nil {
			doc.area = reg.areaName(reg.areaOf(s.EntityID))
			if e := reg.entities[s.EntityID]; e != nil && reg.deviceBy[e.DeviceID] != nil {
				doc.device = reg.deviceBy[e.DeviceID].DisplayName()
			}
		}
		if score := searchScore(a.Query, doc); score > 0 {
			// Names repeated in the device or equal to the id carry no information.
			name, device := doc.name, doc.device
			if name == s.EntityID {
				name = ""
			}
			if device == doc.name {
				device = ""
			}
			hits = append(hits, searchHit{EntityID: s.EntityID, Name: name, State: s.State, Area: doc.area, Device: device, Score: score})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].EntityID < hits[j].EntityID
	})
	return toolkit.Paginate(hits, a.Page), nil
}

// getOverview is ha_get_overview.
func getOverview(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[statsArgs, statsResult]{
		Name: "ha_get_overview", Toolset: SetSearch, Title: "Home overview",
		Description: "Small summary of the home: entity counts per domain and state, per area, and which are unavailable. Start here in an unfamiliar home.",
		ReadOnly:    true,
		Handler: func(ctx context.Context, c *toolkit.Call, a statsArgs) (statsResult, error) {
			return homeStats(ctx, d.HA, a)
		},
	})
}

// homeStats counts entities per domain and state, then per area (and label or device class)
// when the registries can be read.
func homeStats(ctx context.Context, ha *homeassistant.Client, a statsArgs) (statsResult, error) {
	all, err := states(ctx, ha)
	if err != nil {
		return statsResult{}, haError(err, false, "")
	}
	out := statsResult{Domains: map[string]domainStats{}}
	perDomain := map[string]map[string]int{}
	var picked []homeassistant.State
	for _, s := range all {
		if a.Domain != "" && s.Domain() != a.Domain {
			continue
		}
		picked = append(picked, s)
		out.Total++
		switch s.State {
		case "unavailable":
			out.Unavailable++
			if len(out.UnavailableIDs) < maxListedUnavailable {
				out.UnavailableIDs = append(out.UnavailableIDs, s.EntityID)
			}
		case "unknown":
			out.Unknown++
		}
		st := s.State
		if _, err := strconv.ParseFloat(st, 64); err == nil {
			st = "numeric"
		}
		if perDomain[s.Domain()] == nil {
			perDomain[s.Domain()] = map[string]int{}
		}
		perDomain[s.Domain()][st]++
	}
	for dom, counts := range perDomain {
		out.Domains[dom] = foldStates(counts)
	}
	reg, err := registryOf(ha).get(ctx)
	if err != nil {
		out.Note = "area and label counts are missing: the registries could not be read (" + err.Error() + ")"
		return out, nil
	}
	out.Areas = map[string]int{}
	if a.GroupBy != "" {
		out.Groups = map[string]int{}
	}
	for _, s := range picked {
		area := reg.areaOf(s.EntityID)
		if area == "" {
			area = "no_area"
		}
		out.Areas[area]++
		switch a.GroupBy {
		case "label":
			if e := reg.entities[s.EntityID]; e != nil {
				for _, l := range e.Labels {
					out.Groups[l]++
				}
			}
		case "device_class":
			if dc, ok := s.Attributes["device_class"].(string); ok {
				out.Groups[dc]++
			}
		}
	}
	return out, nil
}

// foldStates summarises one domain's state counts. Free-text states (sensor strings, media
// titles) would make the summary long, so past eight distinct states they count as "other".
func foldStates(counts map[string]int) domainStats {
	ds := domainStats{States: map[string]int{}}
	for _, n := range counts {
		ds.Total += n
	}
	for st, n := range counts {
		if len(counts) <= 8 || st == "unavailable" || st == "unknown" || st == "numeric" {
			ds.States[st] = n
		}
	}
	if len(ds.States) < len(counts) {
		ds.States["other"] = ds.Total - sumValues(ds.States)
	}
	return ds
}

// getRecentActivity is ha_get_recent_activity.
func getRecentActivity(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[activityArgs, toolkit.List[logRow]]{
		Name: "ha_get_recent_activity", Toolset: SetSearch, Title: "Recent activity",
		Description: "Logbook of the last minutes (default 60), newest first, with causes. Paged. " +
			"Longer periods: ha_get_logbook; numeric trends: ha_get_history or ha_get_statistics.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a activityArgs) (toolkit.List[logRow], error) {
			return recentActivity(ctx, d.HA, a)
		},
	})
}

// recentActivity reads the logbook of the last minutes, newest first.
func recentActivity(ctx context.Context, ha *homeassistant.Client, a activityArgs) (toolkit.List[logRow], error) {
	minutes := a.Minutes
	if minutes == 0 {
		minutes = 60
	}
	end := time.Now().UTC()
	start := end.Add(-time.Duration(minutes) * time.Minute)
	inPlace, err := placeFilter(ctx, ha, a.Area, "")
	if err != nil {
		return toolkit.List[logRow]{}, err
	}
	entries, err := ha.Logbook(ctx, homeassistant.LogbookQuery{Start: start, End: end, EntityIDs: a.EntityIDs})
	if err != nil {
		return toolkit.List[logRow]{}, haError(err, false, "")
	}
	var rows []logRow
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		dom := e.Domain
		if e.EntityID != "" {
			dom, _, _ = strings.Cut(e.EntityID, ".")
		}
		if a.Domain != "" && dom != a.Domain || inPlace != nil && !inPlace(e.EntityID) {
			continue
		}
		rows = append(rows, logRowOf(e))
	}
	return toolkit.Paginate(rows, a.Page), nil
}

func sumValues(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

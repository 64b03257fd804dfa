package home

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The default conversation agent (conversation.home_assistant), reduced to
// the English sentences the simulator understands: turning things on and off
// by name or by area, and asking for the temperature of an area.

// Conversation agent ids HA accepts for its built-in agent.
const (
	DefaultAgent = "conversation.home_assistant"
	legacyAgent  = "homeassistant"
)

// ValidAgent reports whether agent_id names an agent the simulator has.
func ValidAgent(id string) bool { return id == DefaultAgent || id == legacyAgent }

var (
	reTurnFirst    = regexp.MustCompile(`^(?:turn|switch) (on|off) (.+)$`)
	reTurnLast     = regexp.MustCompile(`^(?:turn|switch) (.+) (on|off)$`)
	reTemp         = regexp.MustCompile(`^(?:what is|what's|whats|tell me) the temperature(?: (?:in|of) (.+))?$`)
	reWarm         = regexp.MustCompile(`^how (?:warm|cold|hot) is it(?: in (.+))?$`)
	reSpokenInArea = regexp.MustCompile(`^(.+?) in (.+)$`)
)

// spokenDomains map what people call things to the domain they mean.
var spokenDomains = map[string]string{
	"light": "light", "lights": "light", "lamp": "light", "lamps": "light",
	"switch": "switch", "switches": "switch", "fan": "fan", "fans": "fan",
}

// Converse answers one sentence the way POST /api/conversation/process does
// and returns ConversationResult.as_dict().
func (h *Home) Converse(text, language, conversationID, userID string) map[string]any {
	if language == "" {
		language = "en"
	}
	if conversationID == "" {
		h.mu.Lock()
		conversationID = h.ulid()
		h.mu.Unlock()
	}
	reply := func(speech, kind string, data map[string]any) map[string]any {
		return map[string]any{
			"response": map[string]any{
				"speech":        map[string]any{"plain": map[string]any{"speech": speech, "extra_data": nil}},
				"card":          map[string]any{},
				"language":      language,
				"response_type": kind,
				"data":          data,
			},
			"conversation_id":       conversationID,
			"continue_conversation": false,
		}
	}
	fail := func(code, speech string) map[string]any {
		return reply(speech, "error", map[string]any{"code": code})
	}
	if !strings.HasPrefix(strings.ToLower(language), "en") {
		return fail("no_intent_match", "Sorry, I couldn't understand that")
	}
	s := normaliseSpoken(text)
	snap := h.Snapshot()
	switch {
	case reTurnFirst.MatchString(s) || reTurnLast.MatchString(s):
		on, target := "", ""
		if m := reTurnFirst.FindStringSubmatch(s); m != nil {
			on, target = m[1], m[2]
		} else {
			m := reTurnLast.FindStringSubmatch(s)
			on, target = m[2], m[1]
		}
		ids, targets, names, errCode, errText := resolveSpoken(snap, stripSpokenArticle(target))
		if errCode != "" {
			return fail(errCode, errText)
		}
		list := make([]any, len(ids))
		for i, id := range ids {
			list[i] = id
		}
		if _, err := h.CallService(ServiceCall{Domain: "homeassistant", Service: "turn_" + on, Target: map[string]any{"entity_id": list}, UserID: userID}); err != nil {
			return fail("failed_to_handle", "An unexpected error occurred")
		}
		verb := "Turned on "
		if on == "off" {
			verb = "Turned off "
		}
		label := names[0]["name"].(string)
		if len(targets) > 0 && targets[0]["type"] == "area" {
			label = "the " + targets[len(targets)-1]["name"].(string) + "s"
		}
		return reply(verb+label, "action_done", map[string]any{"targets": targets, "success": names, "failed": []any{}})
	case reTemp.MatchString(s) || reWarm.MatchString(s):
		m := reTemp.FindStringSubmatch(s)
		if m == nil {
			m = reWarm.FindStringSubmatch(s)
		}
		return h.temperatureAnswer(snap, stripSpokenArticle(m[1]), reply, fail)
	}
	return fail("no_intent_match", "Sorry, I couldn't understand that")
}

func normaliseSpoken(text string) string {
	s := strings.ToLower(strings.Join(strings.Fields(text), " "))
	s = strings.TrimRight(s, ".?! ")
	s = strings.TrimPrefix(s, "please ")
	s = strings.TrimSuffix(s, " please")
	return s
}

func stripSpokenArticle(s string) string {
	for _, p := range []string{"all the ", "all ", "the ", "my "} {
		s = strings.TrimPrefix(s, p)
	}
	return strings.TrimSpace(s)
}

// spokenArea matches an area by name, alias or id.
func (s *Snapshot) spokenArea(ref string) (Area, bool) {
	if a, ok := s.resolveArea(ref); ok {
		return a, true
	}
	for _, a := range s.areas {
		for _, al := range a.Aliases {
			if strings.EqualFold(al, ref) {
				return a, true
			}
		}
	}
	return Area{}, false
}

// resolveSpoken turns "kitchen lights", "lights in the kitchen" or an entity's
// name into entity ids, with the intent targets HA reports.
func resolveSpoken(snap *Snapshot, target string) (ids []string, targets, names []map[string]any, code, text string) {
	// An entity's own name wins over reading the words as area + domain ("garage light").
	for _, st := range snap.States() {
		if strings.EqualFold(st.Name(), target) || strings.ReplaceAll(st.ObjectID(), "_", " ") == target || hasEntityAlias(snap, st.EntityID, target) {
			ids = append(ids, st.EntityID)
			names = append(names, map[string]any{"type": "entity", "name": st.Name(), "id": st.EntityID})
		}
	}
	if len(ids) > 0 {
		return ids, []map[string]any{}, names, "", ""
	}
	areaRef, what := "", target
	if m := reSpokenInArea.FindStringSubmatch(target); m != nil {
		what, areaRef = stripSpokenArticle(m[1]), stripSpokenArticle(m[2])
	} else if i := strings.LastIndex(target, " "); i > 0 && spokenDomains[target[i+1:]] != "" {
		if _, ok := snap.spokenArea(target[:i]); ok {
			areaRef, what = target[:i], target[i+1:]
		}
	}
	if areaRef == "" {
		return nil, nil, nil, "no_valid_targets", "Sorry, I am not aware of any device called " + target
	}
	area, ok := snap.spokenArea(areaRef)
	if !ok {
		return nil, nil, nil, "no_valid_targets", "Sorry, I am not aware of any area called " + areaRef
	}
	domain := spokenDomains[what]
	if domain == "" {
		return nil, nil, nil, "no_valid_targets", "Sorry, I am not aware of any device called " + what + " in the " + area.Name
	}
	for _, st := range snap.DomainStates(domain) {
		if snap.entityArea(st.EntityID) == area.AreaID {
			ids = append(ids, st.EntityID)
			names = append(names, map[string]any{"type": "entity", "name": st.Name(), "id": st.EntityID})
		}
	}
	if len(ids) == 0 {
		return nil, nil, nil, "no_valid_targets", "Sorry, there are no " + what + " in the " + area.Name
	}
	targets = []map[string]any{{"type": "area", "name": area.Name, "id": area.AreaID}, {"type": "domain", "name": domain, "id": domain}}
	return ids, targets, names, "", ""
}

func hasEntityAlias(snap *Snapshot, eid, name string) bool {
	for _, al := range snap.entities[eid].Aliases {
		if strings.EqualFold(al, name) {
			return true
		}
	}
	return false
}

// temperatureAnswer reads an area's temperature sensor (or its thermostat);
// without an area, the first thermostat's, as HassClimateGetTemperature does.
func (h *Home) temperatureAnswer(snap *Snapshot, areaRef string, reply func(string, string, map[string]any) map[string]any, fail func(string, string) map[string]any) map[string]any {
	var area Area
	if areaRef != "" {
		var ok bool
		if area, ok = snap.spokenArea(areaRef); !ok {
			return fail("no_valid_targets", "Sorry, I am not aware of any area called "+areaRef)
		}
	}
	inArea := func(id string) bool { return areaRef == "" || snap.entityArea(id) == area.AreaID }
	var candidates []*State
	for _, st := range snap.DomainStates("sensor") {
		if st.Attributes["device_class"] == "temperature" && inArea(st.EntityID) && areaRef != "" {
			candidates = append(candidates, st)
		}
	}
	for _, st := range snap.DomainStates("climate") {
		if _, ok := st.Attributes["current_temperature"]; ok && inArea(st.EntityID) {
			candidates = append(candidates, st)
		}
	}
	sort.SliceStable(candidates, func(i, j int) bool { return candidates[i].Domain() > candidates[j].Domain() })
	for _, st := range candidates {
		value, unit := st.State, "°C"
		if st.Domain() == "climate" {
			f, _ := toFloat(st.Attributes["current_temperature"])
			value = strconv.FormatFloat(f, 'f', -1, 64)
		} else if u, ok := st.Attributes["unit_of_measurement"].(string); ok {
			unit = u
		}
		if _, err := strconv.ParseFloat(value, 64); err != nil {
			continue
		}
		where := ""
		targets := []map[string]any{}
		if areaRef != "" {
			where = " in the " + area.Name
			targets = append(targets, map[string]any{"type": "area", "name": area.Name, "id": area.AreaID})
		}
		return reply("It is "+value+" "+unit+where, "query_answer", map[string]any{"targets": targets,
			"success": []map[string]any{{"type": "entity", "name": st.Name(), "id": st.EntityID}}, "failed": []any{}})
	}
	return fail("no_valid_targets", "Sorry, no temperature sensor is in the "+area.Name)
}

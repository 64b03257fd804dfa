package home

import (
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Validation of automation, script and scene configs: the messages follow
// voluptuous/HA wording so clients see what a real instance would say.

//lint:file-ignore ST1005 the capitalised messages are Home Assistant's own, verbatim.

var triggerPlatforms = []string{"calendar", "conversation", "device", "event", "geo_location", "homeassistant", "mqtt",
	"numeric_state", "persistent_notification", "state", "sun", "tag", "template", "time", "time_pattern", "webhook", "zone"}

var actionKeys = []string{"action", "service", "delay", "wait_template", "wait_for_trigger", "event", "scene", "condition",
	"choose", "if", "repeat", "variables", "stop", "parallel", "sequence", "device_id", "set_conversation_response"}

var conditionTypes = []string{"and", "or", "not", "state", "numeric_state", "template", "time", "sun", "zone", "device", "trigger"}

var scriptModes = []string{"parallel", "queued", "restart", "single"}

func validateConfigItem(kind string, n *yaml.Node) error {
	m, _ := nodeValue(n).(map[string]any)
	if m == nil {
		return fmt.Errorf("expected a dictionary")
	}
	if use, present := m["use_blueprint"]; present {
		u, ok := use.(map[string]any)
		if !ok {
			return fmt.Errorf("expected a dictionary for dictionary value @ data['use_blueprint']")
		}
		if p, ok := u["path"].(string); !ok || p == "" {
			return fmt.Errorf("required key not provided @ data['use_blueprint']['path']")
		}
		if in, present := u["input"]; present {
			if _, ok := in.(map[string]any); !ok && in != nil {
				return fmt.Errorf("expected a dictionary for dictionary value @ data['use_blueprint']['input']")
			}
		}
		return nil
	}
	switch kind {
	case "automation":
		trig, ok := m["triggers"]
		if !ok {
			trig, ok = m["trigger"]
		}
		if !ok {
			return fmt.Errorf("required key not provided @ data['triggers']")
		}
		if err := ValidateTriggers(trig, "data['triggers']"); err != nil {
			return err
		}
		if c, ok := firstKey(m, "conditions", "condition"); ok {
			if err := ValidateConditions(c, "data['conditions']"); err != nil {
				return err
			}
		}
		act, ok := firstKey(m, "actions", "action")
		if !ok {
			return fmt.Errorf("required key not provided @ data['actions']")
		}
		if err := ValidateActions(act, "data['actions']"); err != nil {
			return err
		}
		return validateMode(m)
	case "script":
		seq, ok := m["sequence"]
		if !ok {
			return fmt.Errorf("required key not provided @ data['sequence']")
		}
		if err := ValidateActions(seq, "data['sequence']"); err != nil {
			return err
		}
		return validateMode(m)
	case "scene":
		// config/scene.py validates with scene's PLATFORM_SCHEMA, which wraps the item as
		// {platform: homeassistant, states: [item]}: hence the paths (homeassistant/scene.py).
		const at = "dictionary value @ data['states'][0]"
		switch name, present := m["name"]; {
		case !present:
			return fmt.Errorf("required key not provided @ data['states'][0]['name']")
		case name == nil:
			return fmt.Errorf("string value is None for %s['name']", at)
		}
		if _, bad := m["name"].([]any); bad {
			return fmt.Errorf("value should be a string for %s['name']", at)
		} else if _, bad := m["name"].(map[string]any); bad {
			return fmt.Errorf("value should be a string for %s['name']", at)
		}
		ents, ok := m["entities"].(map[string]any)
		if !ok {
			if _, present := m["entities"]; !present {
				return fmt.Errorf("required key not provided @ data['states'][0]['entities']")
			}
			return fmt.Errorf("expected dict for %s['entities']", at)
		}
		for id, v := range ents {
			if !ValidEntityID(id) {
				return fmt.Errorf("Entity ID %s is an invalid entity ID for %s['entities']", id, at)
			}
			if attrs, isMap := v.(map[string]any); isMap {
				v = attrs["state"]
			}
			switch v.(type) {
			case string, bool:
			default: // _convert_states: a missing or numeric state is refused
				return fmt.Errorf("State for %s should be a string for %s['entities']", id, at)
			}
		}
	}
	return nil
}

func firstKey(m map[string]any, keys ...string) (any, bool) {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			return v, true
		}
	}
	return nil, false
}

func validateMode(m map[string]any) error {
	if mode, ok := m["mode"]; ok {
		s, _ := mode.(string)
		if !contains(scriptModes, s) {
			return fmt.Errorf("value must be one of %s for dictionary value @ data['mode']", pyList(scriptModes))
		}
	}
	return nil
}

// ValidateTriggers checks a trigger list (or single trigger) as validate_config does.
func ValidateTriggers(v any, path string) error {
	for i, t := range asList(v) {
		p := fmt.Sprintf("%s[%d]", path, i)
		m, ok := t.(map[string]any)
		if !ok {
			return fmt.Errorf("expected a dictionary @ %s", p)
		}
		if nested, ok := m["triggers"]; ok {
			if err := ValidateTriggers(nested, p+"['triggers']"); err != nil {
				return err
			}
			continue
		}
		plat, _ := firstKey(m, "trigger", "platform")
		name, _ := plat.(string)
		if name == "" {
			return fmt.Errorf("required key not provided @ %s['trigger']", p)
		}
		if !contains(triggerPlatforms, strings.SplitN(name, ".", 2)[0]) {
			return fmt.Errorf("Invalid trigger '%s' specified @ %s", name, p)
		}
		if name == "state" || name == "numeric_state" {
			if _, ok := m["entity_id"]; !ok {
				return fmt.Errorf("required key not provided @ %s['entity_id']", p)
			}
		}
	}
	return nil
}

// ValidateConditions checks a condition list (or single condition).
func ValidateConditions(v any, path string) error {
	for i, c := range asList(v) {
		p := fmt.Sprintf("%s[%d]", path, i)
		if s, ok := c.(string); ok {
			if !isTemplate(s) {
				return fmt.Errorf("Expected a dictionary @ %s", p)
			}
			continue
		}
		m, ok := c.(map[string]any)
		if !ok {
			return fmt.Errorf("Expected a dictionary @ %s", p)
		}
		typ, _ := m["condition"].(string)
		if typ == "" {
			if _, ok := m["conditions"]; ok {
				continue // shorthand and
			}
			return fmt.Errorf("required key not provided @ %s['condition']", p)
		}
		if !contains(conditionTypes, typ) {
			return fmt.Errorf("Unexpected value for condition: '%s'. Expected and, device, not, numeric_state, or, state, sun, template, time, trigger, zone @ %s", typ, p)
		}
		switch typ {
		case "and", "or", "not":
			if err := ValidateConditions(m["conditions"], p+"['conditions']"); err != nil {
				return err
			}
		case "state", "numeric_state":
			if _, ok := m["entity_id"]; !ok {
				return fmt.Errorf("required key not provided @ %s['entity_id']", p)
			}
		case "template":
			if _, ok := m["value_template"]; !ok {
				return fmt.Errorf("required key not provided @ %s['value_template']", p)
			}
		}
	}
	return nil
}

// ValidateActions checks an action sequence.
func ValidateActions(v any, path string) error {
	for i, a := range asList(v) {
		p := fmt.Sprintf("%s[%d]", path, i)
		m, ok := a.(map[string]any)
		if !ok {
			return fmt.Errorf("expected dictionary @ %s", p)
		}
		var found string
		for _, k := range actionKeys {
			if _, ok := m[k]; ok {
				found = k
				break
			}
		}
		if found == "" {
			return fmt.Errorf("Unable to determine action @ %s", p)
		}
		switch found {
		case "action", "service":
			s, _ := m[found].(string)
			if !isTemplate(s) && !validServiceName(s) {
				return fmt.Errorf("Service %s does not match format <domain>.<name> for dictionary value @ %s['%s']", s, p, found)
			}
		case "condition":
			if err := ValidateConditions(m, p); err != nil {
				return err
			}
		case "sequence", "parallel":
			if err := ValidateActions(m[found], p+"['"+found+"']"); err != nil {
				return err
			}
		case "if":
			if err := ValidateConditions(m["if"], p+"['if']"); err != nil {
				return err
			}
			if err := ValidateActions(m["then"], p+"['then']"); err != nil {
				return err
			}
		}
	}
	return nil
}

func validServiceName(s string) bool {
	d, n, ok := strings.Cut(s, ".")
	return ok && d != "" && n != "" && slugify(d) == d && slugify(n) == n
}

func isTemplate(s string) bool { return strings.Contains(s, "{{") || strings.Contains(s, "{%") }

// ValidateConfigResult is one validate_config answer item.
type ValidateConfigResult struct {
	Valid bool    `json:"valid"`
	Error *string `json:"error"`
}

// ValidateConfig is WS validate_config: each given part validated on its own.
func ValidateConfig(parts map[string]any) map[string]ValidateConfigResult {
	out := map[string]ValidateConfigResult{}
	keys := make([]string, 0, len(parts))
	for k := range parts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var err error
		switch k {
		case "triggers":
			err = ValidateTriggers(parts[k], "data")
		case "conditions":
			err = ValidateConditions(parts[k], "data")
		case "actions":
			err = ValidateActions(parts[k], "data")
		default:
			continue
		}
		r := ValidateConfigResult{Valid: err == nil}
		if err != nil {
			msg := err.Error()
			r.Error = &msg
		}
		out[k] = r
	}
	return out
}

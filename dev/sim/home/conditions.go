package home

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// conditions is true when every condition holds (HA's implicit "and").
func (c *call) conditions(v any, vars map[string]any) (bool, error) {
	for _, cond := range asList(v) {
		ok, err := c.condition(cond, vars)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

func (c *call) condition(v any, vars map[string]any) (bool, error) {
	if s, ok := v.(string); ok {
		return c.templateTrue(s, vars)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return false, invalidf("Expected a dictionary")
	}
	typ, _ := m["condition"].(string)
	if typ == "" && m["conditions"] != nil {
		typ = "and"
	}
	switch typ {
	case "and":
		return c.conditions(m["conditions"], vars)
	case "or":
		for _, sub := range asList(m["conditions"]) {
			ok, err := c.condition(sub, vars)
			if err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	case "not":
		for _, sub := range asList(m["conditions"]) {
			ok, err := c.condition(sub, vars)
			if err != nil || ok {
				return false, err
			}
		}
		return true, nil
	case "state":
		return c.stateCondition(m)
	case "numeric_state":
		return c.numericCondition(m, vars)
	case "template":
		return c.templateTrue(fmt.Sprint(m["value_template"]), vars)
	case "time":
		return c.timeCondition(m), nil
	case "sun":
		now := c.h.now().In(c.h.loc)
		rise, set := timeAt(now, 7, 0, c.h.loc), timeAt(now, 20, 0, c.h.loc)
		ok := true
		if a, _ := m["after"].(string); a != "" {
			ok = ok && now.After(map[string]time.Time{"sunrise": rise, "sunset": set}[a])
		}
		if b, _ := m["before"].(string); b != "" {
			ok = ok && now.Before(map[string]time.Time{"sunrise": rise, "sunset": set}[b])
		}
		return ok, nil
	case "zone":
		zone := c.h.states[fmt.Sprint(m["zone"])]
		if zone == nil {
			return false, nil
		}
		want := zone.Name()
		if zone.EntityID == "zone.home" {
			want = "home"
		}
		for _, id := range asList(m["entity_id"]) {
			st := c.h.states[fmt.Sprint(id)]
			if st == nil || st.State != want {
				return false, nil
			}
		}
		return true, nil
	case "trigger":
		return false, nil // a manual run has no trigger id
	}
	return false, &HAError{Msg: fmt.Sprintf("condition type %q is not supported by the simulator", typ)}
}

func (c *call) templateTrue(tpl string, vars map[string]any) (bool, error) {
	if c.h.renderer == nil {
		return false, &HAError{Msg: "templates are not available in this simulator build"}
	}
	v, err := c.h.renderer(tpl, vars, c.h.snapshotLocked(), false)
	if err != nil {
		return false, err
	}
	b, msg := coerceBool(v)
	return msg == "" && b == true, nil
}

func (c *call) stateCondition(m map[string]any) (bool, error) {
	ids := asList(m["entity_id"])
	anyMatch := m["match"] == "any"
	var want []string
	for _, s := range asList(m["state"]) {
		switch x := s.(type) {
		case bool:
			want = append(want, onOff(x))
		default:
			want = append(want, fmt.Sprint(x))
		}
	}
	attr, _ := m["attribute"].(string)
	var forD time.Duration
	if f, ok := m["for"]; ok {
		forD = parseDelay(f)
	}
	matched := 0
	for _, id := range ids {
		st := c.h.states[fmt.Sprint(id)]
		ok := false
		if st != nil {
			val := st.State
			if attr != "" {
				val = fmt.Sprint(st.Attributes[attr])
				if b, isBool := st.Attributes[attr].(bool); isBool {
					val = strings.ToLower(strconv.FormatBool(b))
				}
			}
			for _, w := range want {
				if val == w || attr != "" && strings.EqualFold(val, w) {
					ok = true
				}
			}
			if ok && forD > 0 && c.h.now().Sub(st.LastChanged) < forD {
				ok = false
			}
		}
		if ok {
			matched++
		}
		if !ok && !anyMatch {
			return false, nil
		}
	}
	return matched > 0, nil
}

func (c *call) numericCondition(m map[string]any, vars map[string]any) (bool, error) {
	bound := func(k string) (float64, bool) {
		v, ok := m[k]
		if !ok {
			return 0, false
		}
		if s, isStr := v.(string); isStr && ValidEntityID(s) {
			if st := c.h.states[s]; st != nil {
				f, err := strconv.ParseFloat(st.State, 64)
				return f, err == nil
			}
			return 0, false
		}
		return toFloat(v)
	}
	attr, _ := m["attribute"].(string)
	for _, id := range asList(m["entity_id"]) {
		st := c.h.states[fmt.Sprint(id)]
		if st == nil {
			return false, nil
		}
		var val float64
		var ok bool
		if attr != "" {
			val, ok = toFloat(st.Attributes[attr])
		} else {
			val, ok = toFloat(st.State)
		}
		if !ok {
			return false, nil
		}
		if a, has := bound("above"); has && !(val > a) {
			return false, nil
		}
		if b, has := bound("below"); has && !(val < b) {
			return false, nil
		}
	}
	return true, nil
}

func (c *call) timeCondition(m map[string]any) bool {
	now := c.h.now().In(c.h.loc)
	clock := func(v any) (time.Time, bool) {
		s := fmt.Sprint(v)
		if st := c.h.states[s]; st != nil {
			s = st.State
			if len(s) > 8 {
				s = s[len(s)-8:]
			}
		}
		for _, layout := range []string{"15:04:05", "15:04"} {
			if t, err := time.Parse(layout, s); err == nil {
				return time.Date(now.Year(), now.Month(), now.Day(), t.Hour(), t.Minute(), t.Second(), 0, c.h.loc), true
			}
		}
		return time.Time{}, false
	}
	after, hasA := clock(m["after"])
	before, hasB := clock(m["before"])
	switch {
	case hasA && hasB && before.Before(after): // window crosses midnight
		if now.Before(after) && !now.Before(before) {
			return false
		}
	default:
		if hasA && now.Before(after) {
			return false
		}
		if hasB && !now.Before(before) {
			return false
		}
	}
	if wd := asList(m["weekday"]); len(wd) > 0 {
		today := strings.ToLower(now.Weekday().String()[:3])
		found := false
		for _, d := range wd {
			if fmt.Sprint(d) == today {
				found = true
			}
		}
		return found
	}
	return true
}

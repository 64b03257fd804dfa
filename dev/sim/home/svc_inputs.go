package home

import (
	"fmt"
	"strconv"
	"strings"
)

func (h *Home) registerInputs() {
	h.addService(&serviceDef{domain: "input_number", name: "set_value", title: "Set", desc: "Sets the value.", target: "input_number",
		fields: []field{{name: "value", kind: kFloat, required: true, desc: "The target value."}},
		entity: func(c *call, st *State) (any, error) { return nil, c.numberTo(st, c.float("value")) }})
	step := func(sign float64) func(c *call, st *State) (any, error) {
		return func(c *call, st *State) (any, error) {
			cur, _ := strconv.ParseFloat(st.State, 64)
			s, _ := toFloat(st.Attributes["step"])
			return nil, c.numberTo(st, cur+sign*s)
		}
	}
	h.addService(&serviceDef{domain: "input_number", name: "increment", title: "Increment", desc: "Increments the value by 1 step.", target: "input_number", entity: step(1)})
	h.addService(&serviceDef{domain: "input_number", name: "decrement", title: "Decrement", desc: "Decrements the current value by 1 step.", target: "input_number", entity: step(-1)})

	h.addService(&serviceDef{domain: "input_select", name: "select_option", title: "Select", desc: "Selects an option.", target: "input_select",
		fields: []field{{name: "option", kind: kString, required: true, desc: "Option to be selected.", example: "Item A"}},
		entity: func(c *call, st *State) (any, error) { return nil, c.selectOption(st, c.str("option")) }})
	move := func(delta int, first, last bool) func(c *call, st *State) (any, error) {
		return func(c *call, st *State) (any, error) {
			opts := strList(st.Attributes["options"])
			if len(opts) == 0 {
				return nil, nil
			}
			i := indexOf(opts, st.State)
			switch {
			case first:
				i = 0
			case last:
				i = len(opts) - 1
			default:
				cycle := true
				if v, ok := c.data["cycle"].(bool); ok {
					cycle = v
				}
				i += delta
				if i < 0 || i >= len(opts) {
					if !cycle {
						return nil, nil
					}
					i = (i + len(opts)) % len(opts)
				}
			}
			return nil, c.selectOption(st, opts[i])
		}
	}
	cycle := []field{{name: "cycle", kind: kBool, desc: "If the option should cycle from the last to the first."}}
	h.addService(&serviceDef{domain: "input_select", name: "select_next", title: "Next", desc: "Selects the next option.", target: "input_select", fields: cycle, entity: move(1, false, false)})
	h.addService(&serviceDef{domain: "input_select", name: "select_previous", title: "Previous", desc: "Selects the previous option.", target: "input_select", fields: cycle, entity: move(-1, false, false)})
	h.addService(&serviceDef{domain: "input_select", name: "select_first", title: "First", desc: "Selects the first option.", target: "input_select", entity: move(0, true, false)})
	h.addService(&serviceDef{domain: "input_select", name: "select_last", title: "Last", desc: "Selects the last option.", target: "input_select", entity: move(0, false, true)})
	h.addService(&serviceDef{domain: "input_select", name: "set_options", title: "Set options", desc: "Sets the options.", target: "input_select",
		fields: []field{{name: "options", kind: kStrList, required: true, desc: "List of options."}},
		entity: func(c *call, st *State) (any, error) {
			opts := c.data["options"].([]any)
			if len(opts) == 0 {
				return nil, invalidf("length of value must be at least 1 for dictionary value @ data['options']")
			}
			seen := map[string]bool{}
			for _, o := range opts {
				if seen[o.(string)] {
					return nil, &HAError{Msg: fmt.Sprintf("Duplicated options: %s", o)}
				}
				seen[o.(string)] = true
			}
			a := cloneAttrs(st.Attributes)
			a["options"] = opts
			state := st.State
			if !seen[state] {
				state = opts[0].(string)
			}
			c.set(st.EntityID, state, a)
			return nil, nil
		}})

	h.addService(&serviceDef{domain: "input_text", name: "set_value", title: "Set", desc: "Sets the value.", target: "input_text",
		fields: []field{{name: "value", kind: kString, required: true, desc: "The target value.", example: "This is an example text"}},
		entity: func(c *call, st *State) (any, error) {
			v := c.str("value")
			lo, _ := toFloat(st.Attributes["min"])
			hi, _ := toFloat(st.Attributes["max"])
			if n := len([]rune(v)); float64(n) < lo || float64(n) > hi {
				// HA's input_text logs and keeps the old value instead of failing.
				c.h.Log("warning", "homeassistant.components.input_text", "Invalid value: %s (length range %s - %s)", v, ftoa(lo, 0), ftoa(hi, 0))
				return nil, nil
			}
			c.set(st.EntityID, v, cloneAttrs(st.Attributes))
			return nil, nil
		}})
	for _, d := range []string{"input_number", "input_select", "input_text"} {
		h.addService(&serviceDef{domain: d, name: "reload", title: "Reload", desc: "Reloads helpers from the YAML-configuration.", run: func(c *call) (any, error) { return nil, nil }})
	}
}

func indexOf(l []string, s string) int {
	for i, x := range l {
		if x == s {
			return i
		}
	}
	return -1
}

func (c *call) numberTo(st *State, v float64) error {
	lo, _ := toFloat(st.Attributes["min"])
	hi, _ := toFloat(st.Attributes["max"])
	if v < lo || v > hi {
		return invalidf("Invalid value for %s: %s (range %s - %s)", st.EntityID, pyRepr(v, kFloat), pyRepr(lo, kFloat), pyRepr(hi, kFloat))
	}
	c.set(st.EntityID, pyRepr(v, kFloat), cloneAttrs(st.Attributes))
	return nil
}

func (c *call) selectOption(st *State, opt string) error {
	opts := strList(st.Attributes["options"])
	if !contains(opts, opt) {
		return &ServiceValidationError{Msg: fmt.Sprintf("Invalid option: %s (possible options: %s)", opt, strings.Join(opts, ", ")), Key: "invalid_option", Domain: "input_select"}
	}
	c.set(st.EntityID, opt, cloneAttrs(st.Attributes))
	return nil
}

func (h *Home) registerNotify() {
	fields := []field{
		{name: "message", kind: kString, required: true, desc: "Message body of the notification.", example: "The garage door has been open for 10 minutes."},
		{name: "title", kind: kString, desc: "Title for your notification.", example: "Your Garage Door Friend"},
		{name: "target", kind: kStrList, desc: "Some integrations allow you to specify the targets that receive the notification."},
		{name: "data", kind: kAny, desc: "Some integrations provide extended functionality."},
	}
	send := func(name string) func(c *call) (any, error) {
		return func(c *call) (any, error) {
			n := SentNotification{Service: "notify." + name, Message: c.str("message"), Title: c.str("title"), Time: c.h.now().UTC()}
			for _, t := range asList(c.data["target"]) {
				n.Target = append(n.Target, fmt.Sprint(t))
			}
			if d, ok := c.data["data"].(map[string]any); ok {
				n.Data = d
			}
			c.h.sent = append(c.h.sent, n)
			return nil, nil
		}
	}
	h.addService(&serviceDef{domain: "notify", name: "notify", title: "Send a notification", desc: "Sends a notification message to selected targets.", fields: fields, run: send("notify")})
	for _, phone := range []string{"alex_phone", "sam_phone"} {
		name := "mobile_app_" + phone
		h.addService(&serviceDef{domain: "notify", name: name, title: "Send a notification via " + name, desc: "Sends a notification message using the " + name + " integration.", fields: fields, run: send(name)})
	}
	h.addService(&serviceDef{domain: "notify", name: "persistent_notification", title: "Send a persistent notification", desc: "Sends a notification that is visible in the notifications panel.",
		fields: []field{fields[0], fields[1], fields[3]},
		run: func(c *call) (any, error) {
			c.h.createNotificationLocked("", c.str("title"), c.str("message"))
			return nil, nil
		}})

	h.addService(&serviceDef{domain: "persistent_notification", name: "create", title: "Create", desc: "Shows a notification on the notifications panel.",
		fields: []field{
			{name: "message", kind: kString, required: true, desc: "Message body of the notification.", example: "Please check your configuration.yaml."},
			{name: "title", kind: kString, desc: "Optional title of the notification.", example: "Test notification"},
			{name: "notification_id", kind: kString, desc: "ID of the notification. This new notification will overwrite an existing notification with the same ID.", example: "1234"},
		},
		run: func(c *call) (any, error) {
			c.h.createNotificationLocked(c.str("notification_id"), c.str("title"), c.str("message"))
			return nil, nil
		}})
	h.addService(&serviceDef{domain: "persistent_notification", name: "dismiss", title: "Dismiss", desc: "Deletes a notification from the notifications panel.",
		fields: []field{{name: "notification_id", kind: kString, required: true, desc: "ID of the notification to be deleted.", example: "1234"}},
		run:    func(c *call) (any, error) { c.h.dismissNotificationLocked(c.str("notification_id")); return nil, nil }})
	h.addService(&serviceDef{domain: "persistent_notification", name: "dismiss_all", title: "Dismiss all", desc: "Deletes all notifications from the notifications panel.",
		run: func(c *call) (any, error) {
			for id := range c.h.notes.items {
				c.h.dismissNotificationLocked(id)
			}
			return nil, nil
		}})
}

func asList(v any) []any {
	switch x := v.(type) {
	case []any:
		return x
	case nil:
		return nil
	}
	return []any{v}
}

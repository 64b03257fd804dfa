package hass

import (
	"errors"
	"sync"
	"time"

	"github.com/hamcp/hamcp/dev/sim/home"
)

var wsCommands map[string]wsCommand

type pongFrame struct {
	ID   int64  `json:"id"`
	Type string `json:"type"`
}

// renderEvent is render_template's event, result first as HA sends it.
type renderEvent struct {
	Result    any       `json:"result"`
	Listeners Listeners `json:"listeners"`
}

func init() {
	wsCommands = map[string]wsCommand{
		"config/auth/list": {admin: true, handle: handleAuthList},
		"ping":             {handle: func(c *wsConn, id int64, m map[string]any) { c.send(pongFrame{ID: id, Type: "pong"}) }},
		"supported_features": {schema: schema{{name: "features", req: true, kind: "dict"}}, handle: func(c *wsConn, id int64, m map[string]any) {
			f, _ := m["features"].(map[string]any)
			c.mu.Lock()
			c.coalesce = truthy(fromGo(f["coalesce_messages"]))
			c.mu.Unlock()
			c.result(id, nil)
		}},
		"get_states":   {handle: func(c *wsConn, id int64, m map[string]any) { c.result(id, c.s.h.States()) }},
		"get_config":   {handle: func(c *wsConn, id int64, m map[string]any) { c.result(id, c.s.h.Config()) }},
		"get_services": {handle: func(c *wsConn, id int64, m map[string]any) { c.result(id, c.s.h.Services()) }},
		"get_panels":   {handle: func(c *wsConn, id int64, m map[string]any) { c.result(id, panels()) }},
		"call_service": {schema: schema{{name: "domain", req: true, kind: "str"}, {name: "service", req: true, kind: "str"}, {name: "service_data", kind: "dict"},
			{name: "target", kind: "dict"}, {name: "return_response", kind: "bool"}}, handle: wsCallService},
		"subscribe_events":   {schema: schema{{name: "event_type", kind: "str"}}, handle: wsSubscribeEvents},
		"unsubscribe_events": {schema: schema{{name: "subscription", req: true, kind: "int"}}, handle: wsUnsubscribe},
		"subscribe_entities": {schema: schema{{name: "entity_ids", kind: "strlist"}}, handle: wsSubscribeEntities},
		"fire_event": {admin: true, schema: schema{{name: "event_type", req: true, kind: "str"}, {name: "event_data", kind: "dict"}}, handle: func(c *wsConn, id int64, m map[string]any) {
			data, _ := toGoNumbers(m["event_data"]).(map[string]any)
			ctx := c.s.h.FireEvent(str(m, "event_type"), data, "REMOTE", c.user.ID)
			c.result(id, map[string]any{"context": ctx})
		}},
		"render_template": {schema: schema{{name: "template", req: true, kind: "str"}, {name: "entity_ids", kind: "strlist"}, {name: "variables", kind: "dict"},
			{name: "timeout", kind: "number"}, {name: "strict", kind: "bool"}, {name: "report_errors", kind: "bool"}}, handle: wsRenderTemplate},
		// Like HA's handle_validate_config, only the plural keys: a singular "trigger" is an
		// extra key (automation files still accept it; this command does not).
		"validate_config": {schema: schema{{name: "triggers", kind: "any"}, {name: "conditions", kind: "any"}, {name: "actions", kind: "any"}},
			handle: func(c *wsConn, id int64, m map[string]any) {
				parts := map[string]any{}
				for k, v := range m {
					if k != "id" && k != "type" {
						parts[k] = toGoNumbers(v)
					}
				}
				c.result(id, home.ValidateConfig(parts))
			}},
		"persistent_notification/subscribe": {handle: func(c *wsConn, id int64, m map[string]any) {
			c.result(id, nil)
			cancel := c.s.h.SubscribeNotifications(func(u home.NotificationUpdate) { c.event(id, u) })
			c.subscribe(id, cancel)
		}},
		"auth/current_user": {handle: func(c *wsConn, id int64, m map[string]any) {
			provider := "homeassistant"
			if c.user.system {
				provider = "system"
			}
			c.result(id, map[string]any{"id": c.user.ID, "name": c.user.Name, "is_owner": c.user.IsOwner, "is_admin": c.user.IsAdmin,
				"credentials": []any{map[string]any{"auth_provider_type": provider, "auth_provider_id": nil}},
				"mfa_modules": []any{map[string]any{"id": "totp", "name": "Authenticator app", "enabled": false}}})
		}},
		"supervisor/api": {admin: true, schema: schema{{name: "endpoint", req: true, kind: "str"}, {name: "method", req: true, kind: "str"},
			{name: "data", kind: "dict"}, {name: "timeout", kind: "any"}, {name: "source", kind: "str"}, {name: "params", kind: "dict"}}, handle: wsSupervisorAPI},
	}
	for name, cmd := range registryCommands() {
		wsCommands[name] = cmd
	}
	for name, cmd := range recorderCommands() {
		wsCommands[name] = cmd
	}
	for name, cmd := range calendarCommands() {
		wsCommands[name] = cmd
	}
}

func panels() map[string]any {
	p := func(name, title, icon string) map[string]any {
		return map[string]any{"component_name": name, "icon": icon, "title": title, "config": nil, "url_path": name, "require_admin": false, "config_panel_domain": nil}
	}
	return map[string]any{"lovelace": p("lovelace", "", ""), "energy": p("energy", "energy", "mdi:lightning-bolt"),
		"map": p("map", "map", "mdi:tooltip-account"), "logbook": p("logbook", "logbook", "mdi:format-list-bulleted-type"),
		"history": p("history", "history", "mdi:chart-box"), "config": p("config", "", "")}
}

func wsCallService(c *wsConn, id int64, m map[string]any) {
	data, _ := toGoNumbers(m["service_data"]).(map[string]any)
	target, _ := toGoNumbers(m["target"]).(map[string]any)
	domain, service := str(m, "domain"), str(m, "service")
	rr := boolOr(m, "return_response", false)
	res, err := c.s.h.CallService(home.ServiceCall{Domain: domain, Service: service, Data: data, Target: target, UserID: c.user.ID, ReturnResponse: rr})
	if err != nil {
		var nf *home.ServiceNotFoundError
		if errors.As(err, &nf) {
			c.sendErrorExtra(id, "not_found", nf.Error(), map[string]any{"translation_key": "service_not_found", "translation_domain": "homeassistant",
				"translation_placeholders": map[string]any{"domain": nf.Domain, "service": nf.Service}})
			return
		}
		c.haError(id, err)
		return
	}
	out := map[string]any{"context": res.Context}
	if rr {
		out["response"] = res.Response
	}
	c.result(id, out)
}

// subscribeAllowlist is what non-admin users may subscribe to (HA's SUBSCRIBE_ALLOWLIST).
var subscribeAllowlist = map[string]bool{"area_registry_updated": true, "call_service": true, "component_loaded": true,
	"core_config_updated": true, "device_registry_updated": true, "entity_registry_updated": true, "floor_registry_updated": true,
	"label_registry_updated": true, "lovelace_updated": true, "panels_updated": true, "persistent_notifications_updated": true,
	"recorder_5min_statistics_generated": true, "recorder_hourly_statistics_generated": true, "service_registered": true,
	"service_removed": true, "shopping_list_updated": true, "state_changed": true, "themes_updated": true}

func wsSubscribeEvents(c *wsConn, id int64, m map[string]any) {
	typ := str(m, "event_type")
	if typ == "" {
		typ = home.MatchAll
	}
	if !c.user.IsAdmin && !subscribeAllowlist[typ] {
		c.sendError(id, "unauthorized", "Unauthorized")
		return
	}
	cancel := c.s.h.Subscribe(typ, func(e home.Event) { c.event(id, e) })
	c.subscribe(id, cancel)
	c.result(id, nil)
}

func wsUnsubscribe(c *wsConn, id int64, m map[string]any) {
	if !c.unsubscribe(intOf(m["subscription"])) {
		c.sendError(id, "not_found", "Subscription not found.")
		return
	}
	c.result(id, nil)
}

// wsSubscribeEntities sends compressed states: first all ("a"), then adds,
// changes ("c") and removals ("r").
func wsSubscribeEntities(c *wsConn, id int64, m map[string]any) {
	var filter map[string]bool
	if ids := strList(m["entity_ids"]); m["entity_ids"] != nil {
		filter = map[string]bool{}
		for _, e := range ids {
			filter[e] = true
		}
	}
	var mu sync.Mutex
	mu.Lock()
	cancel := c.s.h.Subscribe("state_changed", func(e home.Event) {
		mu.Lock()
		defer mu.Unlock()
		eid, _ := e.Data["entity_id"].(string)
		if filter != nil && !filter[eid] {
			return
		}
		if diff, ok := stateDiffEvent(e.Data); ok {
			c.event(id, diff)
		}
	})
	c.subscribe(id, cancel)
	c.result(id, nil)
	initial := map[string]any{}
	for _, st := range c.s.h.States() {
		if filter == nil || filter[st.EntityID] {
			initial[st.EntityID] = st.Compressed()
		}
	}
	c.event(id, map[string]any{"a": initial})
	mu.Unlock()
}

// stateDiffEvent is websocket_api/messages.py _state_diff_event, which the subscribe_entities
// listener (commands.py _forward_entity_changes) runs on every state_changed on the bus, fired
// ones included. Only State objects pass it: a fired event whose new_state/old_state is plain data
// (WS fire_event, a script's event action; REST POST /api/events converts dicts with entity_id and
// state into States first) fails in the listener (KeyError, assert isinstance) and reaches no
// subscriber. A fired new_state of null passes and reaches every subscriber as a removal. The
// diff is keyed by the new state's own entity_id, removals by data.entity_id.
func stateDiffEvent(data map[string]any) (map[string]any, bool) {
	eid, hasID := data["entity_id"]
	newV, hasNew := data["new_state"]
	if !hasID || !hasNew {
		return nil, false
	}
	if newV == nil {
		return map[string]any{"r": []any{eid}}, true
	}
	newS, ok := newV.(*home.State)
	if !ok || newS == nil {
		return nil, false
	}
	oldV, hasOld := data["old_state"]
	if !hasOld {
		return nil, false
	}
	if oldV == nil {
		return map[string]any{"a": map[string]any{newS.EntityID: newS.Compressed()}}, true
	}
	oldS, ok := oldV.(*home.State)
	if !ok || oldS == nil {
		return nil, false
	}
	return map[string]any{"c": map[string]any{newS.EntityID: home.Diff(oldS, newS)}}, true
}

// wsRenderTemplate renders once (errors are template_error results) and
// re-renders when something it listened to changes.
func wsRenderTemplate(c *wsConn, id int64, m map[string]any) {
	tpl := str(m, "template")
	vars, _ := m["variables"].(map[string]any)
	reportErrors := boolOr(m, "report_errors", false)
	out, lst, err := RenderTemplate(tpl, vars, c.s.h.Snapshot())
	if err != nil {
		c.sendError(id, "template_error", err.Error())
		return
	}
	var mu sync.Mutex
	last := out
	// held until the result and first event are out, so no re-render overtakes them
	mu.Lock()
	rerender := func() {
		mu.Lock()
		defer mu.Unlock()
		o, l, err := RenderTemplate(tpl, vars, c.s.h.Snapshot())
		if err != nil {
			if reportErrors {
				c.event(id, map[string]any{"error": err.Error(), "level": "ERROR"})
			}
			return
		}
		lst = l
		if o == last {
			return
		}
		last = o
		c.event(id, renderEvent{Result: toGo(ParseResult(o)), Listeners: l})
	}
	cancelBus := c.s.h.Subscribe("state_changed", func(e home.Event) {
		eid, _ := e.Data["entity_id"].(string)
		mu.Lock()
		l := lst
		mu.Unlock()
		hit := l.All
		for _, x := range l.Entities {
			hit = hit || x == eid
		}
		for _, d := range l.Domains {
			hit = hit || len(eid) > len(d) && eid[:len(d)+1] == d+"."
		}
		if hit {
			rerender()
		}
	})
	stop := make(chan struct{})
	go func() {
		// templates using now() re-render at the start of every minute
		for {
			now := time.Now()
			wait := now.Truncate(time.Minute).Add(time.Minute).Sub(now)
			select {
			case <-stop:
				return
			case <-c.ctx.Done():
				return
			case <-time.After(wait):
				mu.Lock()
				timed := lst.Time
				mu.Unlock()
				if timed {
					rerender()
				}
			}
		}
	}()
	var once sync.Once
	c.subscribe(id, func() { once.Do(func() { cancelBus(); close(stop) }) })
	c.result(id, nil)
	c.event(id, renderEvent{Result: toGo(ParseResult(out)), Listeners: lst})
	mu.Unlock()
}

func wsSupervisorAPI(c *wsConn, id int64, m map[string]any) {
	if c.s.o.Supervisor == nil {
		c.sendError(id, "unknown_error", "Supervisor is not available")
		return
	}
	// HA's websocket_supervisor_api: timeout = msg.get("timeout", 10) seconds, null for none.
	// On expiry core answers unknown_error while the Supervisor carries on.
	timeout := c.s.o.SupervisorAPITimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	if v, given := m["timeout"]; given {
		timeout = 0
		if f, ok := toGoNumbers(v).(float64); ok && f > 0 {
			timeout = time.Duration(f * float64(time.Second))
		} else if n, ok := toGoNumbers(v).(int64); ok && n > 0 {
			timeout = time.Duration(n) * time.Second
		}
	}
	data, _ := toGoNumbers(m["data"]).(map[string]any)
	endpoint := str(m, "endpoint")
	type answer struct {
		res any
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := c.s.o.Supervisor.Call(str(m, "method"), endpoint, data)
		done <- answer{res, err}
	}()
	// Answered from its own goroutine, as HA runs each command as a task: the connection
	// keeps serving other commands meanwhile.
	go func() {
		var expired <-chan time.Time
		if timeout > 0 {
			t := time.NewTimer(timeout)
			defer t.Stop()
			expired = t.C
		}
		select {
		case a := <-done:
			if a.err != nil {
				c.sendError(id, "unknown_error", a.err.Error())
				return
			}
			c.result(id, a.res)
		case <-expired:
			c.sendError(id, "unknown_error", "Timeout on "+endpoint+" request")
		case <-c.ctx.Done():
		}
	}()
}

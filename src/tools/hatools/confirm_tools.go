package hatools

import (
	"context"
	"slices"
	"strings"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/sensitive"
	"github.com/hamcp/hamcp/src/toolkit"
)

// The confirmations each Home Assistant tool declares, built on the walk in confirm.go.

// serviceTarget is the target of an ha_call_service call: its own arguments, and the target keys
// Home Assistant also reads from the data.
func serviceTarget(a callServiceArgs) sensitive.Target {
	var t sensitive.Target
	t.Add(map[string]any{"entity_id": anyList(a.EntityID), "area_id": anyList(a.AreaID), "device_id": anyList(a.DeviceID), "label_id": anyList(a.LabelID)})
	t.Add(a.Data)
	if tg, ok := a.Data["target"]; ok {
		if m, ok := tg.(map[string]any); ok {
			t.Add(m)
		} else {
			t.Templated = true
		}
	}
	return t
}

func anyList(s []string) any {
	if len(s) == 0 {
		return nil
	}
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func callServiceConfirm(d Deps) *toolkit.Confirm[callServiceArgs] {
	return &toolkit.Confirm[callServiceArgs]{
		When: "the service does something in the policy table, however its target is given, also through a script, scene, group or automation it runs, enables or writes, or an automation of yours its changes would start",
		Check: func(ctx context.Context, c *toolkit.Call, a callServiceArgs) (toolkit.Ask, error) {
			w := newWalk(d)
			name := a.Domain + "." + a.Service
			w.service(ctx, name, serviceTarget(a), a.Data)
			return w.ask("Call " + name)
		},
	}
}

// automationConfirm: an automation runs its actions later without asking anyone (and at once through
// automation.trigger), so writing one that does something sensitive needs the same confirmation as
// doing it. always are classes every call of the tool needs (an overwrite is a change of its own).
func automationConfirm[In any](d Deps, when string, cfgOf func(In) automationConfigArgs, what func(In) string, always ...sensitive.Class) *toolkit.Confirm[In] {
	return &toolkit.Confirm[In]{
		When: when,
		Check: func(ctx context.Context, c *toolkit.Call, in In) (toolkit.Ask, error) {
			w := newWalk(d)
			if cfg, err := cfgOf(in).parse(); err == nil { // a bad config is refused by the handler with its parse error
				w.config(ctx, cfg)
			}
			if err := w.writable("config"); err != nil {
				return toolkit.Ask{}, err
			}
			return w.ask(what(in), always...)
		},
	}
}

// updateAutomationConfirm: an update is a change of its own; its new actions count as in
// ha_create_automation, and with merge the stored actions count too: changing only the triggers of an
// automation that unlocks the door makes it unlock the door when the model likes.
func updateAutomationConfirm(d Deps) *toolkit.Confirm[updateAutomationArgs] {
	return &toolkit.Confirm[updateAutomationArgs]{
		When: "always (`change`: it overwrites the automation); its actions count as in ha_create_automation, with merge the stored ones too",
		Check: func(ctx context.Context, c *toolkit.Call, a updateAutomationArgs) (toolkit.Ask, error) {
			w := newWalk(d)
			if cfg, err := a.automationConfigArgs.parse(); err == nil {
				w.config(ctx, cfg)
			}
			if a.Merge {
				id, _, err := resolveAutomation(ctx, d.HA, a.AutomationID)
				var stored any
				if err == nil {
					stored, err = w.item(ctx, homeassistant.KindAutomation, id)
				}
				if err != nil {
					w.hits = append(w.hits, sensitive.Unknown("keep the stored actions of "+a.AutomationID+", which hamcp cannot read")...)
				} else {
					w.config(ctx, stored)
				}
			}
			if err := w.writable("config"); err != nil {
				return toolkit.Ask{}, err
			}
			return w.ask("Overwrite the automation "+a.AutomationID, sensitive.Change)
		},
	}
}

// configFileConfirm: writing a file always asks (it overwrites); YAML whose actions do something
// sensitive (automations.yaml, scripts.yaml, packages) counts that too, since a reload runs it.
func configFileConfirm(d Deps) *toolkit.Confirm[writeConfigArgs] {
	return &toolkit.Confirm[writeConfigArgs]{
		When: "always (`change`: it overwrites the file); YAML whose actions do something in the policy table counts that too",
		Check: func(ctx context.Context, c *toolkit.Call, a writeConfigArgs) (toolkit.Ask, error) {
			w := newWalk(d)
			if isYAML(a.Path) {
				doc, err := yamlTree(a.Content)
				if err != nil {
					w.hits = append(w.hits, sensitive.Unknown("the YAML does not parse, so what it does is unknown")...)
				}
				w.config(ctx, doc)
				w.yamlScenesAndGroups(ctx, doc, 0)
			}
			if err := w.writable("content"); err != nil {
				return toolkit.Ask{}, err
			}
			return w.ask("Overwrite "+a.Path+" in Home Assistant's configuration", sensitive.Change)
		},
	}
}

// yamlScenesAndGroups counts the scenes and groups a YAML file defines: a mapping with `entities`
// is a scene (entity → state) or an old-style group (a list of members), which later calls reach.
func (w *walk) yamlScenesAndGroups(ctx context.Context, v any, depth int) {
	if depth > 50 {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		switch ents := x["entities"].(type) {
		case map[string]any:
			name, _ := x["name"].(string)
			w.sceneEntities(ctx, "the scene "+name, ents)
		case []any, string:
			w.groupSet(ctx, map[string]any{"object_id": "(defined in YAML)", "entities": ents})
		}
		for _, val := range x {
			w.yamlScenesAndGroups(ctx, val, depth+1)
		}
	case []any:
		for _, e := range x {
			w.yamlScenesAndGroups(ctx, e, depth+1)
		}
	}
}

// notifyConfirm: a notification can start the user's automations (persistent_notification
// triggers, automations listening to every service call); what those do counts.
func notifyConfirm(d Deps) *toolkit.Confirm[notifyArgs] {
	return &toolkit.Confirm[notifyArgs]{
		When: "an automation of yours started by a notification can unlock, disarm, open a garage door, restart or delete",
		Check: func(ctx context.Context, c *toolkit.Call, a notifyArgs) (toolkit.Ask, error) {
			w := newWalk(d)
			name := "notify." + strings.TrimPrefix(strings.TrimSpace(a.Service), "notify.")
			if strings.HasPrefix(name, "notify."+persistentTarget) {
				name = persistentTarget + ".create"
			}
			domain, service, _ := strings.Cut(name, ".")
			w.follow(ctx, name, domain, service, sensitive.Target{})
			return w.ask("Send the notification " + name)
		},
	}
}

// fireEventConfirm: events Home Assistant fires itself are refused outright (design.md §5b rule 4);
// any other event counts what the user's automations listening to it would do.
func fireEventConfirm(d Deps) *toolkit.Confirm[fireArgs] {
	return &toolkit.Confirm[fireArgs]{
		When: "an automation of yours listening to the event can unlock, disarm, open a garage door, restart or delete",
		Check: func(ctx context.Context, c *toolkit.Call, a fireArgs) (toolkit.Ask, error) {
			if sensitive.ReservedEvent(a.EventType) {
				return toolkit.Ask{}, toolkit.InvalidArg("event_type", a.EventType+" is an event Home Assistant fires itself "+
					"(state, service, start, registry and automation events); an assistant may not fire it, so nothing was fired",
					`{"event_type": "my_custom_event"}`)
			}
			w := newWalk(d)
			w.event(ctx, a.EventType)
			return w.ask("Fire the event " + a.EventType)
		},
	}
}

// maxAssistConfigs bounds how many scripts and scenes one Assist call reads to see what they do; the
// rest count as unknown.
const maxAssistConfigs = 30

// conversationConfirm: Assist carries out what a sentence asks on every entity exposed to it (and an
// LLM agent behind it does the same), so what it reaches cannot be read from the text: "unlock the
// front door", a script's name, another language. A call needs what the most sensitive exposed entity
// needs: the user un-exposes locks, alarms and garage doors from Assist, or confirms.
func conversationConfirm(d Deps) *toolkit.Confirm[conversationArgs] {
	return &toolkit.Confirm[conversationArgs]{
		When: "a lock, alarm panel or garage door, or a script or scene that reaches one, is exposed to Assist",
		Check: func(ctx context.Context, c *toolkit.Call, a conversationArgs) (toolkit.Ask, error) {
			w := newWalk(d)
			w.load(ctx)
			if w.statesErr != nil { // Assist cannot be reached either: say why, and do nothing
				return toolkit.Ask{}, haError(w.statesErr, false, "")
			}
			hidden := hiddenFromAssist(ctx, d)
			ids := make([]string, 0, len(w.states))
			for id := range w.states {
				if !hidden[id] {
					ids = append(ids, id)
				}
			}
			slices.Sort(ids)
			read := 0
			for _, id := range ids {
				e := w.entity(id)
				switch domain, _, _ := strings.Cut(id, "."); domain {
				case "lock", "alarm_control_panel", "cover":
					for _, h := range sensitive.Service("homeassistant", "toggle", []sensitive.Entity{e}, true) {
						w.hits = append(w.hits, sensitive.Hit{Class: h.Class, What: "reach " + e.ID + " (exposed to Assist)"})
					}
				case "script", "scene":
					if read++; read > maxAssistConfigs {
						w.hits = append(w.hits, sensitive.Unknown("run scripts and scenes exposed to Assist that hamcp did not read")...)
						continue
					}
					if domain == "script" {
						w.script(ctx, e)
					} else {
						w.scene(ctx, e)
					}
				}
			}
			if ix := w.triggers(ctx); ix == nil {
				w.unreadable("a sentence")
			} else {
				for _, id := range ix.conversation {
					w.startedBy(ctx, ix, id, "a sentence to Assist")
				}
			}
			return w.ask("Send \"" + a.Text + "\" to Assist, which can act on every entity exposed to it")
		},
	}
}

// hiddenFromAssist lists the entities the user did not expose to Assist. Entities without a setting,
// and every entity when the list cannot be read, count as exposed.
func hiddenFromAssist(ctx context.Context, d Deps) map[string]bool {
	hidden := map[string]bool{}
	exposed, err := d.HA.ExposedEntities(ctx)
	if err != nil {
		return hidden
	}
	for id, to := range exposed {
		if v, ok := to["conversation"]; ok && !v {
			hidden[id] = true
		}
	}
	return hidden
}

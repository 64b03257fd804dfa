package recorder

import (
	"math/rand/v2"
	"sort"
	"strings"
	"time"
)

// genEvent is one generated events row.
type genEvent struct {
	ts                int64
	typ               string
	data              string
	ctx, parent, user []byte
}

// userID is the (fixed) owner whose UI actions carry context_user_id_bin.
var userID = []byte{0x9c, 0x1b, 0x5e, 0x4f, 0x2a, 0x77, 0x4c, 0x0e, 0x8f, 0x3d, 0x61, 0x52, 0x0b, 0x9a, 0x4e, 0x21}

// generateEvents makes the events a small home's automations, scripts and
// people produce: automation_triggered followed by the call_service it causes
// (same context), script_started, UI service calls, logbook_entry lines and
// the homeassistant_start of the current run.
func generateEvents(o GenerateOptions, start time.Time) []genEvent {
	rng := rand.New(rand.NewPCG(uint64(o.Seed), 0xE7E27))
	var lights, switches []string
	for _, e := range o.Entities {
		switch domainOf(e.EntityID) {
		case "light":
			lights = append(lights, e.EntityID)
		case "switch":
			switches = append(switches, e.EntityID)
		}
	}
	if len(lights) == 0 {
		lights = []string{"light.hallway"}
	}
	type automation struct{ id, name, target, trigger string }
	var autos []automation
	for i, l := range lights[:min(len(lights), 4)] {
		obj := l[strings.IndexByte(l, '.')+1:]
		trig := []string{"state of binary_sensor.motion_" + obj, "time", "sun", "state of binary_sensor.front_door"}[i%4]
		autos = append(autos, automation{"automation." + obj + "_auto", friendlyOrDefault(EntitySpec{EntityID: "automation." + obj}) + " automation", l, trig})
	}
	nextCtx := func(t time.Time) []byte {
		var e [10]byte
		for i := range e {
			e[i] = byte(rng.Uint32())
		}
		return ulidBytes(t, e)
	}
	js := func(v map[string]any) string { b, _ := compactJSON(v); return string(b) }
	var out []genEvent
	add := func(t time.Time, typ string, data map[string]any, ctx, parent, user []byte) {
		out = append(out, genEvent{ts: t.UnixMicro(), typ: typ, data: js(data), ctx: ctx, parent: parent, user: user})
	}
	t0 := start.Add(2 * time.Second)
	add(t0, "homeassistant_start", map[string]any{}, nextCtx(t0), nil, nil)
	for day := start; day.Before(o.Now); day = day.Add(24 * time.Hour) {
		at := func() time.Time { return day.Add(time.Duration(rng.Int64N(int64(24 * time.Hour)))) }
		for _, a := range autos {
			for range 1 + rng.IntN(5) {
				t := at()
				c := nextCtx(t)
				add(t, "automation_triggered", map[string]any{"name": a.name, "entity_id": a.id, "source": a.trigger}, c, nil, nil)
				svc := []string{"turn_on", "turn_off"}[rng.IntN(2)]
				ts := t.Add(40 * time.Millisecond)
				add(ts, "call_service", map[string]any{"domain": "light", "service": svc, "service_data": map[string]any{"entity_id": a.target}}, c, nil, nil)
			}
		}
		t := at()
		add(t, "script_started", map[string]any{"name": "Good night", "entity_id": "script.good_night"}, nextCtx(t), nil, nil)
		for range rng.IntN(4) {
			t := at()
			target := lights[rng.IntN(len(lights))]
			if len(switches) > 0 && rng.IntN(2) == 0 {
				target = switches[rng.IntN(len(switches))]
			}
			add(t, "call_service", map[string]any{"domain": domainOf(target), "service": "toggle", "service_data": map[string]any{"entity_id": target}}, nextCtx(t), nil, userID)
		}
		if rng.IntN(2) == 0 {
			t := at()
			add(t, "logbook_entry", map[string]any{"name": "Washing machine", "message": "finished its cycle", "entity_id": "sensor.washing_machine_status", "domain": "sensor"}, nextCtx(t), nil, nil)
		}
	}
	kept := out[:0]
	for _, e := range out {
		if e.ts < o.Now.UnixMicro() {
			kept = append(kept, e)
		}
	}
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].ts < kept[j].ts })
	return kept
}

var eventTypeOrder = []string{"homeassistant_start", "automation_triggered", "call_service", "script_started", "logbook_entry"}

// writeEvents inserts event_types, deduplicated event_data and events.
func (w *bulkWriter) writeEvents(evs []genEvent) (int64, error) {
	typeIDs := map[string]int64{}
	for i, t := range eventTypeOrder {
		typeIDs[t] = int64(i + 1)
		w.args = append(w.args, int64(i+1), t)
	}
	if err := w.insert("INSERT INTO event_types (event_type_id, event_type)", 2); err != nil {
		return 0, err
	}
	dataIDs := map[string]int64{}
	for _, e := range evs {
		if _, ok := dataIDs[e.data]; !ok {
			id := int64(len(dataIDs) + 1)
			dataIDs[e.data] = id
			w.args = append(w.args, id, fnv1a32([]byte(e.data)), e.data)
		}
	}
	if err := w.insert("INSERT INTO event_data (data_id, hash, shared_data)", 3); err != nil {
		return 0, err
	}
	for _, e := range evs {
		w.args = append(w.args, 0, float64(e.ts)/1e6, dataIDs[e.data], e.ctx, nilBytes(e.user), nilBytes(e.parent), typeIDs[e.typ])
	}
	return int64(len(evs)), w.insert("INSERT INTO events (origin_idx, time_fired_ts, data_id, context_id_bin, context_user_id_bin, context_parent_id_bin, event_type_id)", 7)
}

func nilBytes(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}

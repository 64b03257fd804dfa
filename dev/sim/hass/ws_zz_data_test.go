package hass_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

func TestWSShoppingList(t *testing.T) {
	w := dialAuthed(t, home.Token())
	w.ok(map[string]any{"id": 1, "type": "subscribe_events", "event_type": "shopping_list_updated"})
	item := w.ok(map[string]any{"id": 2, "type": "shopping_list/items/add", "name": "Cheese"}).(map[string]any)
	id, _ := item["id"].(string)
	if len(id) != 32 || strings.Contains(id, "-") || item["complete"] != false || item["name"] != "Cheese" {
		t.Fatalf("added item: %v", item)
	}
	ev := w.waitEvent(1, func(ev map[string]any) bool { return true })
	if d := ev["data"].(map[string]any); d["action"] != "add" || d["item"].(map[string]any)["id"] != id {
		t.Errorf("shopping_list_updated: %v", ev)
	}
	upd := w.ok(map[string]any{"id": 3, "type": "shopping_list/items/update", "item_id": id, "complete": true}).(map[string]any)
	if upd["complete"] != true {
		t.Errorf("update: %v", upd)
	}
	// The same list is the todo.shopping_list entity.
	st := api(t, "GET", "/api/states/todo.shopping_list", "").json(t).(map[string]any)
	items := w.ok(map[string]any{"id": 4, "type": "shopping_list/items"}).([]any)
	open := 0
	for _, it := range items {
		if it.(map[string]any)["complete"] == false {
			open++
		}
	}
	if st["state"] != strconv.Itoa(open) {
		t.Errorf("todo.shopping_list state %v, %d open items", st["state"], open)
	}
	if res := w.ok(map[string]any{"id": 5, "type": "shopping_list/items/clear"}); res != nil {
		t.Errorf("clear result: %v", res)
	}
	for _, it := range w.ok(map[string]any{"id": 6, "type": "shopping_list/items"}).([]any) {
		if it.(map[string]any)["complete"] == true {
			t.Errorf("clear left %v", it)
		}
	}
	first := w.ok(map[string]any{"id": 7, "type": "shopping_list/items/add", "name": "Apples"}).(map[string]any)["id"].(string)
	var ids []any
	for _, it := range w.ok(map[string]any{"id": 8, "type": "shopping_list/items"}).([]any) {
		ids = append([]any{it.(map[string]any)["id"]}, ids...)
	}
	w.ok(map[string]any{"id": 9, "type": "shopping_list/items/reorder", "item_ids": ids})
	if got := w.ok(map[string]any{"id": 10, "type": "shopping_list/items"}).([]any)[0].(map[string]any)["id"]; got != first {
		t.Errorf("reorder: first is %v, want %v", got, first)
	}
	if removed := w.ok(map[string]any{"id": 11, "type": "shopping_list/items/remove", "item_id": first}).(map[string]any); removed["name"] != "Apples" {
		t.Errorf("remove: %v", removed)
	}
	for i, c := range []struct {
		msg        map[string]any
		code, text string
	}{
		{map[string]any{"type": "shopping_list/items/update", "item_id": "nope", "name": "x"}, "item_not_found", "Item not found"},
		{map[string]any{"type": "shopping_list/items/remove", "item_id": first}, "item_not_found", "Item not found"},
		{map[string]any{"type": "shopping_list/items/add"}, "invalid_format", "required key not provided @ data['name']"},
		{map[string]any{"type": "shopping_list/items/update", "item_id": id, "complete": "yes"}, "invalid_format", "expected bool"},
		{map[string]any{"type": "shopping_list/items/reorder", "item_ids": []any{"nope"}}, "not_found", "One or more item id(s) not found."},
		{map[string]any{"type": "shopping_list/items/reorder", "item_ids": []any{}}, "invalid_format", "doesn't contain all the unchecked"},
	} {
		c.msg["id"] = 20 + i
		m, _ := w.cmd(c.msg)
		if errCode(m) != c.code || !strings.Contains(errMsg(m), c.text) {
			t.Errorf("%v: %v", c.msg, m)
		}
	}
}

func TestWSConversationProcess(t *testing.T) {
	w := dialAuthed(t, home.Token())
	res := w.ok(map[string]any{"id": 1, "type": "conversation/process", "text": "turn on the garden path", "conversation_id": "abc"}).(map[string]any)
	resp := res["response"].(map[string]any)
	if res["conversation_id"] != "abc" || res["continue_conversation"] != false || resp["response_type"] != "action_done" || resp["language"] != "en" {
		t.Fatalf("result: %v", res)
	}
	if speech := resp["speech"].(map[string]any)["plain"].(map[string]any); speech["speech"] != "Turned on Garden Path" || speech["extra_data"] != nil {
		t.Errorf("speech: %v", speech)
	}
	if st := api(t, "GET", "/api/states/light.garden_path", "").json(t).(map[string]any); st["state"] != "on" {
		t.Errorf("garden path is %v", st["state"])
	}
	res = w.ok(map[string]any{"id": 2, "type": "conversation/process", "text": "how warm is it in the office", "language": "en-GB"}).(map[string]any)
	resp = res["response"].(map[string]any)
	if resp["response_type"] != "query_answer" || len(res["conversation_id"].(string)) != 26 {
		t.Errorf("temperature: %v", res)
	}
	res = w.ok(map[string]any{"id": 3, "type": "conversation/process", "text": "schalte das Licht ein", "language": "de"}).(map[string]any)
	if d := res["response"].(map[string]any)["data"].(map[string]any); d["code"] != "no_intent_match" {
		t.Errorf("german: %v", res)
	}
	for i, c := range []struct {
		msg  map[string]any
		text string
	}{
		{map[string]any{"type": "conversation/process", "text": "hi", "agent_id": "conversation.openai"}, "invalid agent ID for dictionary value @ data['agent_id']. Got 'conversation.openai'"},
		{map[string]any{"type": "conversation/process"}, "required key not provided @ data['text']"},
		{map[string]any{"type": "conversation/process", "text": "hi", "conversation_id": 5}, "expected str"},
	} {
		c.msg["id"] = 10 + i
		m, _ := w.cmd(c.msg)
		if errCode(m) != "invalid_format" || !strings.Contains(errMsg(m), c.text) {
			t.Errorf("%v: %v", c.msg, m)
		}
	}
	agents := w.ok(map[string]any{"id": 20, "type": "conversation/agent/list"}).(map[string]any)["agents"].([]any)
	if len(agents) != 1 || agents[0].(map[string]any)["id"] != "conversation.home_assistant" {
		t.Errorf("agents: %v", agents)
	}
}

func TestWSEnergyPrefs(t *testing.T) {
	w := dialAuthed(t, home.Token())
	prefs := w.ok(map[string]any{"id": 1, "type": "energy/get_prefs"}).(map[string]any)
	sources := prefs["energy_sources"].([]any)
	types := []string{}
	for _, s := range sources {
		types = append(types, s.(map[string]any)["type"].(string))
	}
	if strings.Join(types, ",") != "grid,solar,gas" || len(prefs["device_consumption"].([]any)) != 3 {
		t.Fatalf("prefs: %v", prefs)
	}
	// Home Assistant 2026.2's form: the grid connection names its meters itself, no flow lists.
	grid := sources[0].(map[string]any)
	if _, legacy := grid["flow_from"]; legacy || grid["stat_energy_from"] != "sensor.house_energy_import" || grid["stat_energy_to"] != "sensor.house_energy_export" {
		t.Errorf("grid: %v", grid)
	}
	saved := w.ok(map[string]any{"id": 2, "type": "energy/save_prefs", "device_consumption": []any{map[string]any{"stat_consumption": "sensor.coffee_machine_energy"}}}).(map[string]any)
	if len(saved["device_consumption"].([]any)) != 1 || len(saved["energy_sources"].([]any)) != 3 {
		t.Errorf("saved: %v", saved)
	}
	user := dialAuthed(t, home.UserToken())
	if m, _ := user.cmd(map[string]any{"id": 1, "type": "energy/save_prefs", "device_consumption": []any{}}); errCode(m) != "unauthorized" {
		t.Errorf("non-admin save: %v", m)
	}
	if m, _ := w.cmd(map[string]any{"id": 3, "type": "energy/save_prefs", "energy_sources": "grid"}); errCode(m) != "invalid_format" {
		t.Errorf("bad save: %v", m)
	}
	w.ok(map[string]any{"id": 4, "type": "energy/save_prefs", "device_consumption": prefs["device_consumption"]})
	// A grid source in the form before 2026.2 is refused as Home Assistant's schema refuses it.
	for i, tt := range []struct {
		grid map[string]any
		want string
	}{
		{map[string]any{"type": "grid", "flow_from": []any{}, "flow_to": []any{}, "cost_adjustment_day": 0}, "extra keys not allowed @ data['energy_sources'][0]['flow_from']"},
		{map[string]any{"type": "grid", "stat_energy_from": "sensor.house_energy_import"}, "required key not provided @ data['energy_sources'][0]['cost_adjustment_day']"},
	} {
		m, _ := w.cmd(map[string]any{"id": 5 + i, "type": "energy/save_prefs", "energy_sources": []any{tt.grid}})
		if errCode(m) != "invalid_format" || !strings.Contains(fmt.Sprint(m), tt.want) {
			t.Errorf("legacy grid %v: %v", tt.grid, m)
		}
	}
}

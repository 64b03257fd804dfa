package home_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/hamcp/hamcp/dev/sim/home"
)

func TestShoppingList(t *testing.T) {
	h, err := home.New(home.Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var mu sync.Mutex
	var actions []string
	cancel := h.Subscribe("shopping_list_updated", func(e home.Event) {
		mu.Lock()
		actions = append(actions, e.Data["action"].(string))
		mu.Unlock()
	})
	defer cancel()
	open := func() string { st, _ := h.State("todo.shopping_list"); return st.State }
	before := len(h.ShoppingItems())
	it := h.AddShoppingItem("Cheese", "")
	if len(h.ShoppingItems()) != before+1 || it.Complete || len(it.ID) != 32 {
		t.Fatalf("add: %+v", it)
	}
	openBefore := open()
	yes := true
	if _, err := h.UpdateShoppingItem(it.ID, nil, &yes, ""); err != nil {
		t.Fatal(err)
	}
	if open() == openBefore {
		t.Errorf("completing did not change the open count %s", open())
	}
	name := "Brie"
	if up, _ := h.UpdateShoppingItem(it.ID, &name, nil, ""); up.Name != "Brie" || !up.Complete {
		t.Errorf("rename: %+v", up)
	}
	h.ClearCompletedShoppingItems("")
	for _, x := range h.ShoppingItems() {
		if x.Complete {
			t.Errorf("clear left %+v", x)
		}
	}
	var nf *home.NotFoundError
	if _, err := h.RemoveShoppingItem(it.ID, ""); !errors.As(err, &nf) {
		t.Errorf("removing a cleared item: %v", err)
	}
	if _, err := h.UpdateShoppingItem("nope", &name, nil, ""); !errors.As(err, &nf) || nf.Msg != "Item not found" {
		t.Errorf("update unknown: %v", err)
	}
	items := h.ShoppingItems()
	ids := []string{items[len(items)-1].ID}
	if err := h.ReorderShoppingItems(ids, ""); err == nil {
		t.Error("reorder without every open item was accepted")
	}
	ids = nil
	for i := len(items) - 1; i >= 0; i-- {
		ids = append(ids, items[i].ID)
	}
	if err := h.ReorderShoppingItems(ids, ""); err != nil || h.ShoppingItems()[0].ID != items[len(items)-1].ID {
		t.Errorf("reorder: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"add", "update", "update", "clear", "reorder"}
	if len(actions) != len(want) {
		t.Fatalf("events %v, want %v", actions, want)
	}
	for i := range want {
		if actions[i] != want[i] {
			t.Errorf("events %v, want %v", actions, want)
		}
	}
}

func TestEnergyPrefsAndCoreListeners(t *testing.T) {
	h, err := home.New(home.Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	p, ok := h.EnergyPrefs()
	if !ok || len(p["energy_sources"].([]any)) != 3 {
		t.Fatalf("prefs: %v", p)
	}
	p["energy_sources"] = nil // the caller's copy, not the store
	again, _ := h.EnergyPrefs()
	if len(again["energy_sources"].([]any)) != 3 {
		t.Error("prefs handed out by reference")
	}
	saved := h.SaveEnergyPrefs(map[string]any{"device_consumption": []any{}})
	if len(saved["device_consumption"].([]any)) != 0 || len(saved["energy_sources"].([]any)) != 3 {
		t.Errorf("save: %v", saved)
	}
	before := h.Listeners()["homeassistant_stop"]
	h.ListenCore()
	h.ListenCore()
	if got := h.Listeners()["homeassistant_stop"]; got-before != 24 {
		t.Errorf("homeassistant_stop listeners %d → %d", before, got)
	}
}

package homeassistant

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestWSShoppingList(t *testing.T) {
	t.Parallel()
	c := connectedSimClient(t, false)
	ctx := context.Background()
	name := fmt.Sprintf("hamcp ws test %d", time.Now().UnixNano())
	find := func(id string) (ShoppingItem, bool) {
		t.Helper()
		items, err := c.ShoppingList(ctx)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(items, func(it ShoppingItem) bool { return it.ID == id })
		if i < 0 {
			return ShoppingItem{}, false
		}
		return items[i], true
	}

	it, err := c.AddShoppingItem(ctx, name)
	if err != nil || it.ID == "" || it.Name != name || it.Complete {
		t.Fatalf("add: %+v, %v", it, err)
	}
	yes, no, renamed := true, false, name+" renamed"
	for _, step := range []struct {
		upd  ShoppingItemUpdate
		want ShoppingItem
	}{
		{ShoppingItemUpdate{Complete: &yes}, ShoppingItem{ID: it.ID, Name: name, Complete: true}},
		{ShoppingItemUpdate{Name: &renamed}, ShoppingItem{ID: it.ID, Name: renamed, Complete: true}}, // completion kept
		{ShoppingItemUpdate{Complete: &no}, ShoppingItem{ID: it.ID, Name: renamed}},                  // false is sent, not dropped
	} {
		got, err := c.UpdateShoppingItem(ctx, it.ID, step.upd)
		if err != nil || got != step.want {
			t.Fatalf("update %+v: %+v, %v; want %+v", step.upd, got, err, step.want)
		}
		if listed, ok := find(it.ID); !ok || listed != step.want {
			t.Fatalf("after update the list has %+v (found %v), want %+v", listed, ok, step.want)
		}
	}
	if got, err := c.RemoveShoppingItem(ctx, it.ID); err != nil || got.ID != it.ID {
		t.Fatalf("remove: %+v, %v", got, err)
	}
	var api *APIError
	for what, err := range map[string]error{
		"remove again": func() error { _, err := c.RemoveShoppingItem(ctx, it.ID); return err }(),
		"update gone": func() error {
			_, err := c.UpdateShoppingItem(ctx, it.ID, ShoppingItemUpdate{Complete: &yes})
			return err
		}(),
	} {
		if !errors.As(err, &api) || api.Code != "item_not_found" {
			t.Errorf("%s = %v, want item_not_found", what, err)
		}
	}

	done, err := c.AddShoppingItem(ctx, name+" done")
	if err != nil {
		t.Fatal(err)
	}
	open, err := c.AddShoppingItem(ctx, name+" open")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateShoppingItem(ctx, done.ID, ShoppingItemUpdate{Complete: &yes}); err != nil {
		t.Fatal(err)
	}
	if err := c.ClearCompletedShoppingItems(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := find(done.ID); ok {
		t.Error("clear left a completed item")
	}
	if _, ok := find(open.ID); !ok {
		t.Error("clear removed an open item")
	}
	if _, err := c.RemoveShoppingItem(ctx, open.ID); err != nil {
		t.Fatal(err)
	}
}

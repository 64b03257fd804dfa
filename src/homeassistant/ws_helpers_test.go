package homeassistant

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestWSHelpers(t *testing.T) {
	t.Parallel()
	c := connectedSimClient(t, false)
	ctx := context.Background()
	name := fmt.Sprintf("ws helper %d", time.Now().UnixNano())

	item, err := c.CreateHelper(ctx, "input_select", map[string]any{"name": name, "options": []string{"low", "high"}, "id": "ignored"})
	if err != nil || item.ID() == "" || item.Name() != name {
		t.Fatalf("create: %v, %v", item, err)
	}
	items, err := c.Helpers(ctx, "input_select")
	if err != nil || !slices.ContainsFunc(items, func(it HelperItem) bool { return it.ID() == item.ID() }) {
		t.Fatalf("list after create: %v, %v", items, err)
	}
	upd, err := c.UpdateHelper(ctx, "input_select", item.ID(), map[string]any{"name": name, "options": []string{"low", "mid", "high"}})
	if err != nil || len(upd["options"].([]any)) != 3 || upd.ID() != item.ID() {
		t.Fatalf("update: %v, %v", upd, err)
	}
	if err := c.DeleteHelper(ctx, "input_select", item.ID()); err != nil {
		t.Fatalf("delete: %v", err)
	}
	// A failed delete answers not_found and then, like Home Assistant, a stray result for the same id:
	// the next call must get its own answer.
	var api *APIError
	if err := c.DeleteHelper(ctx, "input_select", item.ID()); !errors.As(err, &api) || api.Code != "not_found" || !strings.Contains(api.Message, "Unable to find input_select_id") {
		t.Fatalf("second delete: %v", err)
	}
	if _, err := c.Helpers(ctx, "counter"); err != nil {
		t.Fatalf("call after the stray result: %v", err)
	}
	if _, err := c.CreateHelper(ctx, "input_number", map[string]any{"name": "x", "min": 5, "max": 1}); !errors.As(err, &api) || api.Code != "invalid_format" {
		t.Fatalf("refused config: %v", err)
	}
	if _, err := c.Helpers(ctx, "light"); err == nil {
		t.Fatal("a domain without a collection must be refused before sending")
	}
}

func TestWSCalendarEvents(t *testing.T) {
	t.Parallel()
	c := connectedSimClient(t, false)
	ctx := context.Background()
	day := time.Now().AddDate(0, 1, 3).Format(time.DateOnly)
	summary := fmt.Sprintf("ws event %d", time.Now().UnixNano())
	if err := c.CreateCalendarEvent(ctx, "calendar.work", CalendarEventInput{Summary: summary, DTStart: day + "T10:00:00", DTEnd: day + "T11:00:00"}); err != nil {
		t.Fatal(err)
	}
	start, _ := time.Parse(time.DateOnly, day)
	evs, err := c.CalendarEvents(ctx, "calendar.work", start.Add(-24*time.Hour), start.Add(48*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(evs, func(e CalendarEvent) bool { return e.Summary == summary })
	if i < 0 {
		t.Fatalf("created event not listed: %v", evs)
	}
	uid := evs[i].UID
	if err := c.UpdateCalendarEvent(ctx, "calendar.work", uid, "", "", CalendarEventInput{Summary: summary + "!", DTStart: day, DTEnd: day}); err == nil {
		t.Fatal("a zero-length all-day event must be refused")
	}
	if err := c.DeleteCalendarEvent(ctx, "calendar.work", uid, "", ""); err != nil {
		t.Fatal(err)
	}
	var api *APIError
	if err := c.DeleteCalendarEvent(ctx, "calendar.holidays", "x", "", ""); !errors.As(err, &api) || api.Code != "not_supported" {
		t.Fatalf("read-only calendar: %v", err)
	}
}

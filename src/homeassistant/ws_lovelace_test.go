package homeassistant

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
)

func TestWSDashboards(t *testing.T) {
	t.Parallel()
	h := ownHome(t)
	c := fastClient(t, h.URL(), h.Token())
	waitConnected(t, c)
	ctx := context.Background()

	list, err := c.Dashboards(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(list, func(d Dashboard) bool { return d.URLPath == DefaultDashboard })
	if i < 0 || list[i].ID != "lovelace" || list[i].Mode != "storage" || !list[i].ShowInSidebar {
		t.Fatalf("dashboards: %+v", list)
	}
	raw, err := c.DashboardConfig(ctx, DefaultDashboard)
	if err != nil || raw == nil {
		t.Fatalf("default config: %s, %v", raw, err)
	}
	if _, err := c.DashboardConfig(ctx, "no-such"); !IsUnknownDashboard(err) {
		t.Errorf("unknown dashboard: %v", err)
	}

	show := false
	d, err := c.CreateDashboard(ctx, NewDashboard{URLPath: "dashboard-test", Title: "Test", Icon: "mdi:test-tube", ShowInSidebar: &show})
	if err != nil || d.ID != "dashboard_test" || d.ShowInSidebar || d.RequireAdmin || d.Mode != "storage" {
		t.Fatalf("create: %+v, %v", d, err)
	}
	if raw, err := c.DashboardConfig(ctx, "dashboard-test"); err != nil || raw != nil {
		t.Errorf("a new dashboard's config: %s, %v", raw, err)
	}
	cfg := map[string]any{"views": []any{map[string]any{"title": "One", "cards": []any{}}}}
	if err := c.SaveDashboardConfig(ctx, "dashboard-test", cfg); err != nil {
		t.Fatal(err)
	}
	raw, err = c.DashboardConfig(ctx, "dashboard-test")
	var back map[string]any
	if err != nil || json.Unmarshal(raw, &back) != nil || len(back["views"].([]any)) != 1 {
		t.Fatalf("read back: %s, %v", raw, err)
	}
	if err := c.DeleteDashboardConfig(ctx, "dashboard-test"); err != nil {
		t.Fatal(err)
	}
	if raw, _ := c.DashboardConfig(ctx, "dashboard-test"); raw != nil {
		t.Errorf("deleted config reads %s", raw)
	}
	if err := c.DeleteDashboard(ctx, d.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateDashboard(ctx, NewDashboard{URLPath: "nohyphen", Title: "X"}); !hasWSCode(err, "invalid_format") {
		t.Errorf("url_path without a hyphen: %v", err)
	}
	res, err := c.DashboardResources(ctx)
	if err != nil || len(res) != 1 || res[0].Type != "module" || res[0].ID == "" {
		t.Errorf("resources: %+v, %v", res, err)
	}

	// With no "lovelace" entry (Home Assistant before 2026.1, or the user deleted the migrated
	// one) the default dashboard is url_path null.
	if err := c.DeleteDashboard(ctx, "lovelace"); err != nil {
		t.Fatal(err)
	}
	if raw, err := c.DashboardConfig(ctx, DefaultDashboard); err != nil || raw != nil {
		t.Fatalf("default without an entry: %s, %v", raw, err)
	}
	if err := c.SaveDashboardConfig(ctx, DefaultDashboard, cfg); err != nil {
		t.Fatal(err)
	}
	if raw, err := c.DashboardConfig(ctx, DefaultDashboard); err != nil || raw == nil {
		t.Fatalf("default saved at url_path null: %s, %v", raw, err)
	}
}

// hasWSCode reports a WebSocket error with the given code.
func hasWSCode(err error, code string) bool {
	var api *APIError
	return errors.As(err, &api) && api.Code == code
}

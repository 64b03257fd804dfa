package homeassistant

import (
	"context"
	"errors"
	"testing"
)

// TestConfigEntriesAndFlows runs every config entry call against the simulated home, in a home
// of its own: it disables, creates and deletes entries.
func TestConfigEntriesAndFlows(t *testing.T) {
	h := ownHome(t)
	c := fastClient(t, h.URL(), h.Token())
	ctx := context.Background()
	hubs, err := c.ConfigEntryDetails(ctx, "", "hub")
	if err != nil || len(hubs) == 0 {
		t.Fatalf("hubs: %v %v", hubs, err)
	}
	wled, err := c.ConfigEntryDetails(ctx, "wled")
	if err != nil || len(wled) != 1 || !wled[0].SupportsOptions || wled[0].CreatedAt == nil {
		t.Fatalf("wled: %+v %v", wled, err)
	}
	id := wled[0].EntryID
	if restart, err := c.ReloadConfigEntry(ctx, id); err != nil || restart {
		t.Fatalf("reload: %v %v", restart, err)
	}
	if _, err := c.ReloadConfigEntry(ctx, "nope"); !IsStatus(err, 404) {
		t.Fatalf("reload unknown: %v", err)
	}
	if _, err := c.SetConfigEntryDisabled(ctx, id, true); err != nil {
		t.Fatalf("disable: %v", err)
	}
	if got, _ := c.ConfigEntryDetails(ctx, "wled"); got[0].DisabledBy == nil || *got[0].DisabledBy != "user" {
		t.Fatalf("not disabled: %+v", got)
	}
	var api *APIError
	if _, err := c.SetConfigEntryDisabled(ctx, "nope", false); !errors.As(err, &api) || api.Code != "not_found" {
		t.Fatalf("disable unknown: %v", err)
	}
	if _, err := c.SetConfigEntryDisabled(ctx, id, false); err != nil {
		t.Fatalf("enable: %v", err)
	}
	ents, err := c.ConfigEntryEntities(ctx, id)
	if err != nil || len(ents) == 0 {
		t.Fatalf("entities of wled: %v %v", ents, err)
	}

	form, err := c.StartFlow(ctx, "shelly", false)
	if err != nil || form.Type != "form" || form.StepID != "user" || len(form.DataSchema) != 2 {
		t.Fatalf("start: %+v %v", form, err)
	}
	var bad *FlowInputError
	if _, err := c.FlowStep(ctx, form.FlowID, false, map[string]any{"port": 80}); !errors.As(err, &bad) || bad.Errors["host"] != "required key not provided" {
		t.Fatalf("missing host: %v", err)
	}
	if again, err := c.FlowStep(ctx, form.FlowID, false, nil); err != nil || again.StepID != "user" {
		t.Fatalf("read the step again: %+v %v", again, err)
	}
	done, err := c.FlowStep(ctx, form.FlowID, false, map[string]any{"host": "192.168.1.71"})
	if err != nil || done.Type != "create_entry" || len(done.Result) == 0 {
		t.Fatalf("create: %+v %v", done, err)
	}
	if _, err := c.StartFlow(ctx, "wibble", false); !IsStatus(err, 404) {
		t.Fatalf("unknown handler: %v", err)
	}
	opts, err := c.StartFlow(ctx, id, true)
	if err != nil || opts.StepID != "init" {
		t.Fatalf("options: %+v %v", opts, err)
	}
	if err := c.AbortFlow(ctx, opts.FlowID, true); err != nil {
		t.Fatalf("abort: %v", err)
	}
	if err := c.AbortFlow(ctx, opts.FlowID, true); !IsStatus(err, 404) {
		t.Fatalf("abort twice: %v", err)
	}
	if restart, err := c.DeleteConfigEntry(ctx, id); err != nil || restart {
		t.Fatalf("delete: %v %v", restart, err)
	}
	if left, _ := c.ConfigEntryDetails(ctx, "wled"); len(left) != 0 {
		t.Fatalf("deleted entry still listed: %+v", left)
	}
	if _, err := c.DeleteConfigEntry(ctx, id); !IsStatus(err, 404) {
		t.Fatalf("delete twice: %v", err)
	}
}

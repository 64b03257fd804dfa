package homeassistant

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestWSBlueprints(t *testing.T) {
	t.Parallel()
	c := connectedSimClient(t, false)
	ctx := context.Background()

	for _, tc := range []struct {
		domain string
		code   string // "" = answered; "-" = refused before sending
	}{{"automation", ""}, {"script", ""}, {"Not a domain", "-"}} {
		bps, err := c.Blueprints(ctx, tc.domain)
		var api *APIError
		switch {
		case tc.code == "-":
			if err == nil || errors.As(err, &api) {
				t.Errorf("Blueprints(%q) = %v, want a client-side refusal", tc.domain, err)
			}
		case err != nil:
			t.Errorf("Blueprints(%q): %v", tc.domain, err)
		case tc.domain == "automation" && len(bps) == 0:
			t.Errorf("the simulated home has no automation blueprints")
		default:
			for path, bp := range bps {
				if bp.Error == "" && (bp.Metadata == nil || bp.Metadata["name"] == nil) {
					t.Errorf("blueprint %s has neither metadata nor error: %+v", path, bp)
				}
			}
		}
	}

	const src = "https://github.com/home-assistant/core/blob/dev/homeassistant/components/automation/blueprints/notify_leaving_zone.yaml"
	for _, tc := range []struct {
		url, code string
	}{{src, ""}, {"https://example.com/nothing-here.yaml", "unknown_error"}, {"ftp://example.com/x.yaml", "invalid_format"}} {
		imp, err := c.ImportBlueprint(ctx, tc.url)
		var api *APIError
		if tc.code != "" {
			if !errors.As(err, &api) || api.Code != tc.code {
				t.Errorf("ImportBlueprint(%s) = %v, want code %s", tc.url, err, tc.code)
			}
			continue
		}
		if err != nil {
			t.Fatalf("ImportBlueprint: %v", err)
		}
		if imp.SuggestedFilename == "" || imp.RawData == "" || imp.Blueprint.Metadata["domain"] != "automation" {
			t.Fatalf("import answer: %+v", imp)
		}
		path := fmt.Sprintf("hamcp_ws_test/zone_%d", time.Now().UnixNano())
		save := BlueprintSave{Domain: "automation", Path: path, YAML: imp.RawData, SourceURL: tc.url}
		if over, err := c.SaveBlueprint(ctx, save); err != nil || over {
			t.Fatalf("first save: overrides=%v, %v", over, err)
		}
		if _, err := c.SaveBlueprint(ctx, save); !errors.As(err, &api) || api.Code != "already_exists" {
			t.Fatalf("second save without override = %v, want already_exists", err)
		}
		save.AllowOverride = true
		if over, err := c.SaveBlueprint(ctx, save); err != nil || !over {
			t.Fatalf("save with override: overrides=%v, %v", over, err)
		}
		bps, err := c.Blueprints(ctx, "automation")
		if err != nil {
			t.Fatal(err)
		}
		if bp, ok := bps[path+".yaml"]; !ok || bp.Metadata["source_url"] != tc.url {
			t.Fatalf("saved blueprint not listed at %s.yaml with its source: %+v", path, bp)
		}
	}
}

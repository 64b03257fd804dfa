package mcpserver

import (
	"context"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/src/toolkit"
)

// TestResourcesAndPromptsFollowToolsetFilters: a toolset left out by the toolsets or disabled
// options takes its resources and prompts with it, as it does its tools.
func TestResourcesAndPromptsFollowToolsetFilters(t *testing.T) {
	t.Parallel()
	read := func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	}
	prompt := func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	}
	reg := func() *toolkit.Registry {
		r := toolkit.NewRegistry()
		r.AddResources(
			&toolkit.Resource{Toolset: "states", Resource: &mcp.Resource{URI: "hass://entities", Name: "entities"}, Handler: read},
			&toolkit.Resource{Toolset: "states", Template: &mcp.ResourceTemplate{URITemplate: "hass://entities/{id}", Name: "entity"}, Handler: read},
			&toolkit.Resource{Toolset: "organisation", Resource: &mcp.Resource{URI: "hass://areas", Name: "areas"}, Handler: read},
		)
		r.AddPrompts(
			&toolkit.Prompt{Toolsets: []string{"states"}, Prompt: &mcp.Prompt{Name: "troubleshoot"}, Handler: prompt},
			&toolkit.Prompt{Toolsets: []string{"states", "automations"}, Prompt: &mcp.Prompt{Name: "create_automation"}, Handler: prompt},
		)
		return r
	}
	tests := []struct {
		name                          string
		filter                        toolkit.Filter
		resources, templates, prompts []string
	}{
		{"everything", toolkit.Filter{}, []string{"areas", "entities"}, []string{"entity"}, []string{"create_automation", "troubleshoot"}},
		{"states only", toolkit.Filter{Toolsets: []string{"states"}}, []string{"entities"}, []string{"entity"}, []string{"troubleshoot"}},
		{"organisation only", toolkit.Filter{Toolsets: []string{"organisation"}}, []string{"areas"}, nil, nil},
		{"disabled by name", toolkit.Filter{Disabled: []string{"entities", "create_automation"}}, []string{"areas"}, []string{"entity"}, []string{"troubleshoot"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := New(Options{Name: "hamcp", Version: "test", Registry: reg(), Filter: tt.filter})
			ct, st := mcp.NewInMemoryTransports()
			ctx := context.Background()
			ss, err := b.Server(false).Connect(ctx, st, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ss.Close()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			var res, tpl, pr []string
			if lr, err := cs.ListResources(ctx, nil); err == nil {
				for _, r := range lr.Resources {
					res = append(res, r.Name)
				}
			}
			if lt, err := cs.ListResourceTemplates(ctx, nil); err == nil {
				for _, r := range lt.ResourceTemplates {
					tpl = append(tpl, r.Name)
				}
			}
			if lp, err := cs.ListPrompts(ctx, nil); err == nil {
				for _, p := range lp.Prompts {
					pr = append(pr, p.Name)
				}
			}
			slices.Sort(res)
			slices.Sort(tpl)
			slices.Sort(pr)
			if !slices.Equal(res, tt.resources) || !slices.Equal(tpl, tt.templates) || !slices.Equal(pr, tt.prompts) {
				t.Errorf("resources %v templates %v prompts %v; want %v %v %v", res, tpl, pr, tt.resources, tt.templates, tt.prompts)
			}
		})
	}
}

package hatools

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/src/homeassistant"
)

// Resource URIs.
const (
	entitiesURI       = "hass://entities"
	entityURIPrefix   = "hass://entities/"
	entityURITemplate = "hass://entities/{entity_id}"
	areasURI          = "hass://areas"
)

// Resources exposes entities as MCP resources and keeps subscribers told of state changes.
// It returns an extension for the server builder; install it on every server variant.
func Resources(d Deps) func(s *mcp.Server, readOnly bool) {
	var mu sync.Mutex
	var servers []*mcp.Server
	// One mirror listener fans out to every server variant; the SDK only notifies sessions
	// that subscribed to the URI.
	if m := d.HA.Mirror(); m != nil {
		m.OnStateChanged(func(old, new *homeassistant.State) {
			id := ""
			switch {
			case new != nil:
				id = new.EntityID
			case old != nil:
				id = old.EntityID
			}
			mu.Lock()
			list := append([]*mcp.Server(nil), servers...)
			mu.Unlock()
			for _, s := range list {
				ctx := context.Background()
				_ = s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: entityURIPrefix + id})
				_ = s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: entitiesURI})
			}
		})
	}
	return func(s *mcp.Server, _ bool) {
		mu.Lock()
		servers = append(servers, s)
		mu.Unlock()
		s.AddResource(&mcp.Resource{
			URI: entitiesURI, Name: "entities", Title: "All entities",
			Description: "Every entity's id, state and name (compact JSON). Subscribe to be told when any state changes.",
			MIMEType:    "application/json",
		}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			all, err := states(ctx, d.HA)
			if err != nil {
				return nil, err
			}
			type row struct {
				ID    string `json:"entity_id"`
				State string `json:"state"`
				Name  string `json:"name,omitempty"`
			}
			rows := make([]row, 0, len(all))
			for _, st := range all {
				rows = append(rows, row{st.EntityID, st.State, st.FriendlyName()})
			}
			return jsonResource(req.Params.URI, rows)
		})
		s.AddResourceTemplate(&mcp.ResourceTemplate{
			URITemplate: entityURITemplate, Name: "entity", Title: "One entity",
			Description: "One entity's full state and attributes. Subscribe to be told when it changes.",
			MIMEType:    "application/json",
		}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id := strings.TrimPrefix(req.Params.URI, entityURIPrefix)
			st, err := stateOf(ctx, d.HA, id, "")
			if err != nil {
				return nil, mcp.ResourceNotFoundError(req.Params.URI)
			}
			return jsonResource(req.Params.URI, compact(st, true))
		})
		s.AddResource(&mcp.Resource{
			URI: areasURI, Name: "areas", Title: "Areas and their entities",
			Description: "Every area (room) with its floor and the ids of the entities in it (compact JSON).",
			MIMEType:    "application/json",
		}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			reg, err := registryOf(d.HA).get(ctx)
			if err != nil {
				return nil, err
			}
			return jsonResource(req.Params.URI, areaEntities(reg))
		})
	}
}

// areaRow is one area of the hass://areas resource.
type areaRow struct {
	AreaID   string   `json:"area_id"`
	Name     string   `json:"name"`
	Floor    string   `json:"floor,omitempty"`
	Entities []string `json:"entities"`
}

// areaEntities groups entity ids by area; entities without one are left out.
func areaEntities(reg *registry) []areaRow {
	byArea := map[string][]string{}
	for id := range reg.entities {
		if a := reg.areaOf(id); a != "" {
			byArea[a] = append(byArea[a], id)
		}
	}
	out := make([]areaRow, 0, len(reg.areas))
	for _, a := range reg.areas {
		ids := byArea[a.ID]
		sort.Strings(ids)
		if ids == nil {
			ids = []string{}
		}
		out = append(out, areaRow{AreaID: a.ID, Name: a.Name, Floor: reg.floorName(a), Entities: ids})
	}
	return out
}

func jsonResource(uri string, v any) (*mcp.ReadResourceResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
}

// Complete answers completion/complete for entity ids (prompt arguments named entity_id and the
// entity resource template), domains and areas (ids, matched on id or name).
func Complete(d Deps) func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	return func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
		arg := req.Params.Argument
		var values []string
		switch arg.Name {
		case "entity_id":
			all, err := states(ctx, d.HA)
			if err == nil {
				prefix := strings.ToLower(arg.Value)
				for _, st := range all {
					if strings.HasPrefix(st.EntityID, prefix) || (prefix != "" && strings.Contains(strings.ToLower(st.FriendlyName()), prefix)) {
						values = append(values, st.EntityID)
					}
				}
			}
		case "area", "area_id":
			if reg, err := registryOf(d.HA).get(ctx); err == nil {
				prefix := strings.ToLower(arg.Value)
				for _, a := range reg.areas {
					if strings.HasPrefix(a.ID, prefix) || prefix != "" && strings.Contains(strings.ToLower(a.Name), prefix) {
						values = append(values, a.ID)
					}
				}
			}
		case "domain":
			all, err := states(ctx, d.HA)
			if err == nil {
				seen := map[string]bool{}
				for _, st := range all {
					dom := st.Domain()
					if !seen[dom] && strings.HasPrefix(dom, arg.Value) {
						seen[dom] = true
						values = append(values, dom)
					}
				}
			}
		}
		sort.Strings(values)
		total := len(values)
		if len(values) > 100 {
			values = values[:100]
		}
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: total, HasMore: total > len(values)}}, nil
	}
}

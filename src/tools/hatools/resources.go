package hatools

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/src/completion"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/toolkit"
)

// Resource URIs.
const (
	entitiesURI       = "hass://entities"
	entityURIPrefix   = "hass://entities/"
	entityURITemplate = "hass://entities/{entity_id}"
	areasURI          = "hass://areas"
)

// Resources are the Home Assistant resources: every entity, one entity (a template), and the
// areas. Subscribers of an entity's URI (or of all entities) are told when its state changes.
func Resources(d Deps) []*toolkit.Resource {
	out := []*toolkit.Resource{entitiesResource(d, stateUpdates(d)), entityResource(d), areasResource(d)}
	if d.Scope != nil {
		for _, r := range out {
			d.Scope.resource(r)
		}
	}
	return out
}

// stateUpdates fans one mirror listener out to every server the entity resources are installed
// on; the SDK only notifies sessions that subscribed to the URI.
func stateUpdates(d Deps) func(*mcp.Server) {
	var mu sync.Mutex
	var servers []*mcp.Server
	if d.HA == nil { // declared without a backend, to list toolsets
		return func(*mcp.Server) {}
	}
	if m := d.HA.Mirror(); m != nil {
		m.OnStateChanged(func(old, new *homeassistant.State) {
			id := ""
			switch {
			case new != nil:
				id = new.EntityID
			case old != nil:
				id = old.EntityID
			}
			if !d.Scope.notifies(id) {
				return
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
	return func(s *mcp.Server) {
		mu.Lock()
		servers = append(servers, s)
		mu.Unlock()
	}
}

// entitiesResource is hass://entities.
func entitiesResource(d Deps, attach func(*mcp.Server)) *toolkit.Resource {
	return &toolkit.Resource{
		Toolset: SetStates, Attach: attach,
		Resource: &mcp.Resource{
			URI: entitiesURI, Name: "entities", Title: "All entities",
			Description: "Every entity's id, state and name (compact JSON). Subscribe to be told when any state changes.",
			MIMEType:    "application/json",
		},
		Handler: func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
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
		},
	}
}

// entityResource is hass://entities/{entity_id}.
func entityResource(d Deps) *toolkit.Resource {
	return &toolkit.Resource{
		Toolset: SetStates,
		Template: &mcp.ResourceTemplate{
			URITemplate: entityURITemplate, Name: "entity", Title: "One entity",
			Description: "One entity's full state and attributes. Subscribe to be told when it changes.",
			MIMEType:    "application/json",
		},
		Handler: func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id := strings.TrimPrefix(req.Params.URI, entityURIPrefix)
			st, err := stateOf(ctx, d.HA, id, "")
			if err != nil {
				return nil, mcp.ResourceNotFoundError(req.Params.URI)
			}
			return jsonResource(req.Params.URI, compact(st, true))
		},
	}
}

// areasResource is hass://areas.
func areasResource(d Deps) *toolkit.Resource {
	return &toolkit.Resource{
		Toolset: SetOrganisation,
		Resource: &mcp.Resource{
			URI: areasURI, Name: "areas", Title: "Areas and their entities",
			Description: "Every area (room) with its floor and the ids of the entities in it (compact JSON).",
			MIMEType:    "application/json",
		},
		Handler: func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			reg, err := registryOf(d.HA).get(ctx)
			if err != nil {
				return nil, err
			}
			return jsonResource(req.Params.URI, areaEntities(scopedRegistry(ctx, reg)))
		},
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

// Completions declares hamcp's prompts and resource templates for completion/complete, with the
// values of every argument that has a finite domain (entity ids, areas, domains, services).
func Completions(d Deps) *completion.Set {
	sources := argSources(d)
	set := completion.NewSet()
	for _, p := range prompts {
		args := map[string]completion.Source{}
		for _, a := range p.args {
			if src, ok := sources[a.Name]; ok {
				args[a.Name] = src
			}
		}
		set.Prompt(p.name, args)
	}
	set.Template(entityURITemplate, map[string]completion.Source{"entity_id": sources["entity_id"]})
	return set
}

// argSources are where the values of completable arguments come from, by argument name.
func argSources(d Deps) map[string]completion.Source {
	entities := func(ctx context.Context, _ map[string]string) ([]completion.Candidate, error) {
		all, err := states(ctx, d.HA)
		if err == nil && d.Scope != nil {
			v, serr := d.Scope.current(ctx)
			if serr != nil {
				return nil, serr
			}
			all = inScope(withScope(ctx, v), all)
		}
		out := make([]completion.Candidate, 0, len(all))
		for _, st := range all {
			out = append(out, completion.Candidate{Value: st.EntityID, Label: st.FriendlyName()})
		}
		return out, err
	}
	areas := func(ctx context.Context, _ map[string]string) ([]completion.Candidate, error) {
		reg, err := registryOf(d.HA).get(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]completion.Candidate, 0, len(reg.areas))
		for _, a := range reg.areas {
			out = append(out, completion.Candidate{Value: a.ID, Label: a.Name})
		}
		return out, nil
	}
	domains := func(ctx context.Context, _ map[string]string) ([]completion.Candidate, error) {
		all, err := states(ctx, d.HA)
		out := make([]completion.Candidate, 0, 32)
		for _, st := range all {
			out = append(out, completion.Candidate{Value: st.Domain()})
		}
		return out, err
	}
	// A service is domain.service, or just the service when the domain is already chosen.
	services := func(ctx context.Context, resolved map[string]string) ([]completion.Candidate, error) {
		all, err := d.HA.Services(ctx)
		var out []completion.Candidate
		for _, dom := range all {
			if only := resolved["domain"]; only != "" && only != dom.Domain {
				continue
			}
			for name, desc := range dom.Services {
				v := dom.Domain + "." + name
				if resolved["domain"] != "" {
					v = name
				}
				out = append(out, completion.Candidate{Value: v, Label: desc.Name})
			}
		}
		return out, err
	}
	return map[string]completion.Source{
		"entity_id": entities, "area": areas, "area_id": areas, "domain": domains, "service": services,
	}
}

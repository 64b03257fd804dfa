package toolkit

import (
	"fmt"
	"slices"
	"sort"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Resource declares an MCP resource or resource template. It belongs to a toolset like a tool
// does, so the toolsets and disabled options filter resources the same way they filter tools.
type Resource struct {
	Toolset  string
	Resource *mcp.Resource         // a fixed URI, or
	Template *mcp.ResourceTemplate // a URI template
	Handler  mcp.ResourceHandler
	// Attach, if set, is told of every server the resource is installed on, for
	// notifications/resources/updated.
	Attach func(*mcp.Server)
}

// Name is the resource's name, which the disabled option matches.
func (r *Resource) Name() string {
	if r.Template != nil {
		return r.Template.Name
	}
	return r.Resource.Name
}

// Install adds the resource to a server.
func (r *Resource) Install(s *mcp.Server) {
	if r.Template != nil {
		s.AddResourceTemplate(r.Template, r.Handler)
	} else {
		s.AddResource(r.Resource, r.Handler)
	}
	if r.Attach != nil {
		r.Attach(s)
	}
}

// Prompt declares an MCP prompt. Toolsets are the toolsets whose tools the prompt tells the
// model to use: it is offered only when all of them are enabled.
type Prompt struct {
	Toolsets []string
	Prompt   *mcp.Prompt
	Handler  mcp.PromptHandler
}

// Install adds the prompt to a server.
func (p *Prompt) Install(s *mcp.Server) { s.AddPrompt(p.Prompt, p.Handler) }

// AddResources registers resources; a duplicate name is a programming error.
func (r *Registry) AddResources(rs ...*Resource) {
	for _, x := range rs {
		if x.Toolset == "" || x.Handler == nil || (x.Resource == nil) == (x.Template == nil) {
			panic(fmt.Sprintf("toolkit: resource %q needs a toolset, a handler and one of Resource or Template", x.Name()))
		}
		if slices.ContainsFunc(r.resources, func(y *Resource) bool { return y.Name() == x.Name() }) {
			panic(fmt.Sprintf("toolkit: resource %s registered twice", x.Name()))
		}
		r.resources = append(r.resources, x)
	}
}

// AddPrompts registers prompts; a duplicate name is a programming error.
func (r *Registry) AddPrompts(ps ...*Prompt) {
	for _, p := range ps {
		if len(p.Toolsets) == 0 || p.Handler == nil || p.Prompt == nil {
			panic("toolkit: a prompt needs its toolsets, a definition and a handler")
		}
		if slices.ContainsFunc(r.prompts, func(q *Prompt) bool { return q.Prompt.Name == p.Prompt.Name }) {
			panic(fmt.Sprintf("toolkit: prompt %s registered twice", p.Prompt.Name))
		}
		r.prompts = append(r.prompts, p)
	}
}

// SelectResources returns the resources that pass f (every resource is read-only), by name.
func (r *Registry) SelectResources(f Filter) []*Resource {
	var out []*Resource
	for _, x := range r.resources {
		if f.allowsToolset(x.Toolset) && !slices.Contains(f.Disabled, x.Name()) {
			out = append(out, x)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// SelectPrompts returns the prompts that pass f, by name.
func (r *Registry) SelectPrompts(f Filter) []*Prompt {
	var out []*Prompt
	for _, p := range r.prompts {
		ok := !slices.Contains(f.Disabled, p.Prompt.Name)
		for _, ts := range p.Toolsets {
			ok = ok && f.allowsToolset(ts)
		}
		if ok {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Prompt.Name < out[j].Prompt.Name })
	return out
}

// allowsToolset reports whether f keeps a toolset (no toolset list keeps all).
func (f Filter) allowsToolset(ts string) bool {
	return len(f.Toolsets) == 0 || slices.Contains(f.Toolsets, ts)
}

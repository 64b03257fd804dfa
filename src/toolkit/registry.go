package toolkit

import (
	"fmt"
	"slices"
	"sort"
)

// Registry holds every tool hamcp knows. Toolsets, read-only mode and a disable list are
// filters over it; nothing is registered conditionally elsewhere.
type Registry struct {
	tools  []*Tool
	byName map[string]*Tool
	// resources and prompts are filtered by toolset like tools (resource.go).
	resources []*Resource
	prompts   []*Prompt
	core      []string // listed in search mode next to the search (SetCore)
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{byName: map[string]*Tool{}} }

// Add registers tools; a duplicate name is a programming error.
func (r *Registry) Add(tools ...*Tool) {
	for _, t := range tools {
		if _, dup := r.byName[t.Name()]; dup {
			panic(fmt.Sprintf("toolkit: tool %s registered twice", t.Name()))
		}
		r.byName[t.Name()] = t
		r.tools = append(r.tools, t)
	}
}

// Toolsets lists the toolset names present, sorted.
func (r *Registry) Toolsets() []string {
	var out []string
	for _, t := range r.tools {
		if !slices.Contains(out, t.toolset) {
			out = append(out, t.toolset)
		}
	}
	sort.Strings(out)
	return out
}

// Filter selects tools.
type Filter struct {
	Toolsets []string // empty = all
	ReadOnly bool     // keep only read-only tools
	Disabled []string // tool names to leave out
}

// Select returns the tools that pass f, sorted by name so tools/list is deterministic.
func (r *Registry) Select(f Filter) []*Tool {
	var out []*Tool
	for _, t := range r.tools {
		if f.why(t) != "" {
			continue
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// why says which option leaves t out of f ("" when f keeps it).
func (f Filter) why(t *Tool) string {
	switch {
	case len(f.Toolsets) > 0 && !slices.Contains(f.Toolsets, t.toolset):
		return "its toolset " + t.toolset + " is not in the toolsets option"
	case f.ReadOnly && !t.readOnly:
		return "it changes things and this session is read-only (the read_only option or a read-only sign-in)"
	case slices.Contains(f.Disabled, t.Name()):
		return "it is listed in the disabled_tools option"
	}
	return ""
}

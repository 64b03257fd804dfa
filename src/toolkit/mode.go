package toolkit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Mode is how a session's tools are offered (option tool_mode). Clients break under long tool
// lists (tool caps, token warnings), so a large surface is offered as a few core tools plus a
// search over the rest and a proxy that runs what the search found.
type Mode string

// The tool modes.
const (
	ModeAll    Mode = "all"    // every enabled tool in tools/list
	ModeSearch Mode = "search" // the core tools, hamcp_search_tools and hamcp_call_tool
	ModeAuto   Mode = "auto"   // all when the enabled tools fit the budget, search otherwise
)

// DefaultListBudget is the largest tools/list (compact JSON) auto mode offers flat.
const DefaultListBudget = 75 << 10

// Names of the search mode's own tools.
const (
	SearchToolName = "hamcp_search_tools"
	CallToolName   = "hamcp_call_tool"
)

// Results of hamcp_search_tools: a few full definitions, never the whole registry.
const (
	DefaultSearchResults = 5
	MaxSearchResults     = 10
)

// ListBytes is the size of tools/list's result for these tools, as compact JSON.
func ListBytes(tools []*Tool) int {
	defs := make([]*mcp.Tool, len(tools))
	for i, t := range tools {
		defs[i] = t.Definition()
	}
	b, _ := json.Marshal(map[string]any{"tools": defs})
	return len(b)
}

// SetCore names the tools search mode lists next to the search: the few almost every conversation
// needs. A name the registry does not hold is a programming error.
func (r *Registry) SetCore(names ...string) {
	for _, n := range names {
		if _, ok := r.byName[n]; !ok {
			panic(fmt.Sprintf("toolkit: core tool %s is not registered", n))
		}
	}
	r.core = names
}

// Surface is what a session whose filter is f is offered in mode m: the tools to install and the
// mode it came to (auto resolves to all or search by the size of the enabled tools' tools/list
// against budget, 0 meaning DefaultListBudget). In search mode hamcp_search_tools and
// hamcp_call_tool reach exactly the tools f enables, no others.
func (r *Registry) Surface(f Filter, m Mode, budget int) ([]*Tool, Mode) {
	enabled := r.Select(f)
	if budget <= 0 {
		budget = DefaultListBudget
	}
	switch m {
	case ModeAll, "":
		return enabled, ModeAll
	case ModeAuto:
		if ListBytes(enabled) <= budget {
			return enabled, ModeAll
		}
	case ModeSearch:
	default:
		panic(fmt.Sprintf("toolkit: unknown tool mode %q (the tool_mode option is validated at start)", m))
	}
	var out []*Tool
	for _, t := range enabled {
		if slices.Contains(r.core, t.Name()) {
			out = append(out, t)
		}
	}
	return append(out, searchTool(enabled, r.core), r.callTool(enabled, f)), ModeSearch
}

type searchArgs struct {
	Query string `json:"query" jsonschema:"a few words naming the action and the thing, or a tool's name" validate:"required,max=500" example:"create automation"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many tools to return" validate:"omitempty,min=1,max=10" default:"5"`
}

type searchResult struct {
	Query string      `json:"query"`
	Count int         `json:"count"`
	Tools []foundTool `json:"tools"`
	Hint  string      `json:"hint"`
}

func searchTool(enabled []*Tool, core []string) *Tool {
	ix := newIndex(enabled, core)
	return Define(Spec[searchArgs, searchResult]{
		Name: SearchToolName, Title: "Find a tool", Toolset: "hamcp",
		Description: fmt.Sprintf("Find the tool for a task among the %d tools of this session; most are not in your list "+
			"(toolsets: %s). Search whenever no listed tool fits. "+
			"Query with a few words naming the action and the thing, e.g. \"create automation\", \"recorder sql\", \"read file\"; a tool name works too. "+
			"The best results come with their full definition, the rest by name and first sentence (search an exact name for its definition); run one with %s {name, arguments}.",
			len(enabled), strings.Join(toolsetsOf(enabled), ", "), CallToolName),
		ReadOnly: true,
		Handler: func(ctx context.Context, c *Call, in searchArgs) (searchResult, error) {
			if strings.TrimSpace(in.Query) == "" {
				return searchResult{}, InvalidArg("query", "must name what you want to do", `"turn on a light"`)
			}
			n := in.Limit
			if n <= 0 {
				n = DefaultSearchResults
			}
			res := searchResult{Query: in.Query, Tools: answer(ix.search(in.Query, min(n, MaxSearchResults)))}
			res.Count = len(res.Tools)
			if res.Count == 0 {
				res.Hint = "no tool matched: try other words (the action and the kind of thing: light, automation, file, history, add-on)"
			} else {
				res.Hint = "run one with " + CallToolName + " {\"name\": \"<tool>\", \"arguments\": {…}} following its input schema"
			}
			return res, nil
		},
	})
}

func toolsetsOf(tools []*Tool) []string {
	var out []string
	for _, t := range tools {
		if !slices.Contains(out, t.toolset) {
			out = append(out, t.toolset)
		}
	}
	slices.Sort(out)
	return out
}

// callTool is the proxy: it runs the named tool through Env.run exactly as a direct call would
// (argument validation, grants, confirmations, audit, response cap), and only a tool in enabled.
// Its annotations are those of the most dangerous tool it can reach.
func (r *Registry) callTool(enabled []*Tool, f Filter) *Tool {
	reach := make(map[string]*Tool, len(enabled))
	readOnly, destructive, idempotent, openWorld := true, false, true, false
	for _, t := range enabled {
		reach[t.Name()] = t
		a := t.def.Annotations
		readOnly = readOnly && a.ReadOnlyHint
		destructive = destructive || (a.DestructiveHint != nil && *a.DestructiveHint)
		idempotent = idempotent && a.IdempotentHint
		openWorld = openWorld || (a.OpenWorldHint != nil && *a.OpenWorldHint)
	}
	schema := &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"name":      {Type: "string", Description: "the tool's exact name, from " + SearchToolName},
			"arguments": {Type: "object", Description: "the tool's arguments, as its input schema says"},
		},
		Required:             []string{"name"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
	def := &mcp.Tool{
		Name: CallToolName, Title: "Run a found tool",
		Description: "Run a tool that " + SearchToolName + " found, by its exact name, with the arguments its input schema describes. " +
			"The call gets the same checks as a direct one (argument rules, the user's permissions and confirmations) and returns that tool's result or error. " +
			"Only tools enabled for this session run. Tools in your list can be called directly.",
		InputSchema: schema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: readOnly, DestructiveHint: &destructive, IdempotentHint: idempotent, OpenWorldHint: &openWorld},
	}
	t := &Tool{def: def, schema: schema, toolset: "hamcp", readOnly: readOnly}
	t.direct = func(ctx context.Context, env *Env, req *mcp.CallToolRequest) *mcp.CallToolResult {
		name, args, err := proxyArgs(req)
		if err == nil {
			target, ok := reach[name]
			if ok {
				return env.run(ctx, target, &mcp.CallToolRequest{Session: req.Session, Extra: req.Extra, Params: &mcp.CallToolParamsRaw{
					Meta: req.Params.Meta, Name: name, Arguments: args,
					InputResponses: req.Params.InputResponses, RequestState: req.Params.RequestState,
				}})
			}
			err = r.notReachable(name, f)
		}
		res, _ := errorResult(AsError(err))
		return res
	}
	return t
}

// proxyArgs reads hamcp_call_tool's own arguments: a name and an optional arguments object.
func proxyArgs(req *mcp.CallToolRequest) (string, json.RawMessage, error) {
	var in struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	raw := req.Params.Arguments
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return "", nil, InvalidArg("arguments", "must be an object with name (a string) and arguments (an object), and nothing else: "+err.Error(),
			`{"name": "ha_get_history", "arguments": {"entity_id": "sensor.outside_temperature"}}`)
	}
	if in.Name == "" {
		return "", nil, InvalidArg("name", "is required: the exact name of a tool "+SearchToolName+" found", `"ha_get_history"`)
	}
	args := bytes.TrimSpace(in.Arguments)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	if args[0] != '{' {
		return "", nil, InvalidArg("arguments", "must be a JSON object of the tool's arguments", `{"entity_id": "light.kitchen"}`)
	}
	return in.Name, args, nil
}

// notReachable says why a tool cannot run in this session, so the model can tell the user what to change.
func (r *Registry) notReachable(name string, f Filter) error {
	if name == SearchToolName || name == CallToolName {
		return &Error{Code: "invalid_argument", Field: "name", Message: name + " cannot be run through " + CallToolName, Hint: "call it directly"}
	}
	t, ok := r.byName[name]
	if !ok {
		return &Error{Code: "not_found", Field: "name", Message: "there is no tool named " + name,
			Hint: "find the right name with " + SearchToolName}
	}
	return &Error{Code: "tool_not_enabled", Field: "name", Message: name + " is not enabled for this session: " + f.why(t),
		Hint: "nothing was done; tell the user if they want this tool, they can change the add-on option named"}
}

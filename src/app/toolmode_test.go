package app

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/src/mcpserver"
	"github.com/hamcp/hamcp/src/permission"
	"github.com/hamcp/hamcp/src/toolkit"
	"github.com/hamcp/hamcp/src/tools/dbtools"
	"github.com/hamcp/hamcp/src/tools/hatools"
	"github.com/hamcp/hamcp/src/tools/permtools"
	"github.com/hamcp/hamcp/src/tools/systools"
)

// Budgets of the tool surface: what search mode lists must stay small whatever the
// registry grows to.
const searchListBudget = 12 << 10

type modeSession struct {
	cs *mcp.ClientSession
}

// connect serves the real registry (declared: every tool, Hubitat's included, without backends, so
// calls the gate or a confirmation stops reach no handler) in mode (budget 0 = the default) and connects a client to it,
// with an elicitation handler when answer is set.
func connect(t *testing.T, o mcpserver.Options, readOnly bool, answer func(*mcp.ElicitRequest) *mcp.ElicitResult) modeSession {
	t.Helper()
	o.Name, o.Version = "hamcp", "test"
	if o.Registry == nil {
		o.Registry = declared()
	}
	b := mcpserver.New(o)
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := b.Server(readOnly).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	copts := &mcp.ClientOptions{}
	var so *mcp.ClientSessionOptions
	if answer != nil {
		copts.ElicitationHandler = func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return answer(r), nil }
		so = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, copts).Connect(ctx, ct, so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return modeSession{cs: cs}
}

// list returns tools/list's names and its size as compact JSON.
func (s modeSession) list(t *testing.T) ([]string, int) {
	t.Helper()
	res, err := s.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.NextCursor != "" {
		t.Fatalf("tools/list paginates (nextCursor %q): claude.ai does not follow it", res.NextCursor)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	b, _ := json.Marshal(res)
	return names, len(b)
}

// call runs a tool directly or through hamcp_call_tool; it returns the tool error's code ("" on success) and the text.
func (s modeSession) call(t *testing.T, proxy bool, name string, args map[string]any) (string, string) {
	t.Helper()
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	if proxy {
		p = &mcp.CallToolParams{Name: toolkit.CallToolName, Arguments: map[string]any{"name": name, "arguments": args}}
	}
	res, err := s.cs.CallTool(context.Background(), p)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !res.IsError {
		return "", text
	}
	var e toolkit.Error
	if err := json.Unmarshal([]byte(text), &e); err != nil {
		t.Fatal(err)
	}
	return e.Code, text
}

// TestToolModes: tools/list in each mode over a real client session, never paginated; search mode's
// list stays under its budget (a test that fails, not a log line); auto is flat when the enabled tools
// fit its budget and search otherwise.
func TestToolModes(t *testing.T) {
	t.Parallel()
	reg := declared()
	enabled := reg.Select(toolkit.Filter{})
	flat := toolkit.ListBytes(enabled)
	// Search mode lists the core tools next to the search: finding entities, reading them, acting on them.
	core := []string{"ha_search_entities", "ha_get_states", "ha_get_entity_details", "ha_call_service"}
	searchList := append(slices.Clone(core), toolkit.SearchToolName, toolkit.CallToolName)
	slices.Sort(searchList)
	var allNames []string
	for _, tl := range enabled {
		allNames = append(allNames, tl.Name())
	}
	var readOnlyNames, readOnlyCore []string
	for _, tl := range reg.Select(toolkit.Filter{ReadOnly: true}) {
		readOnlyNames = append(readOnlyNames, tl.Name())
		if slices.Contains(core, tl.Name()) {
			readOnlyCore = append(readOnlyCore, tl.Name())
		}
	}
	readOnlyCore = append(readOnlyCore, toolkit.SearchToolName, toolkit.CallToolName)
	tests := []struct {
		name   string
		mode   toolkit.Mode
		budget int
		filter toolkit.Filter
		want   []string
	}{
		{"all", toolkit.ModeAll, 0, toolkit.Filter{}, allNames},
		{"search", toolkit.ModeSearch, 0, toolkit.Filter{}, searchList},
		{"auto, the tools fit", toolkit.ModeAuto, flat, toolkit.Filter{}, allNames},
		{"auto, over the budget", toolkit.ModeAuto, flat - 1, toolkit.Filter{}, searchList},
		{"auto, a small budget", toolkit.ModeAuto, 4 << 10, toolkit.Filter{}, searchList},
		{"search, one toolset without core tools", toolkit.ModeSearch, 0, toolkit.Filter{Toolsets: []string{"files"}},
			[]string{toolkit.CallToolName, toolkit.SearchToolName}},
		{"all, read-only", toolkit.ModeAll, 0, toolkit.Filter{ReadOnly: true}, readOnlyNames},
		{"search, read-only", toolkit.ModeSearch, 0, toolkit.Filter{ReadOnly: true}, readOnlyCore},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := connect(t, mcpserver.Options{Registry: reg, ToolMode: tt.mode, ListBudget: tt.budget, Filter: tt.filter}, false, nil)
			names, size := s.list(t)
			slices.Sort(names)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if !slices.Equal(names, want) {
				t.Fatalf("tools/list %v, want %v", names, want)
			}
			search := slices.Contains(names, toolkit.SearchToolName)
			if search && size > searchListBudget {
				t.Fatalf("search mode's tools/list is %d bytes, over its %d budget: shorten the core tools' descriptions or the core set", size, searchListBudget)
			}
			// The instructions point at the search exactly when not every tool is listed.
			if got := strings.Contains(s.cs.InitializeResult().Instructions, toolkit.SearchToolName); got != search {
				t.Fatalf("instructions mention the search: %v, search mode: %v", got, search)
			}
			t.Logf("%s: %d tools, %d bytes", tt.name, len(names), size)
		})
	}
}

// TestSearchRanksTheObviousTool: everyday requests find the tool that does them first.
func TestSearchRanksTheObviousTool(t *testing.T) {
	t.Parallel()
	s := connect(t, mcpserver.Options{ToolMode: toolkit.ModeSearch}, false, nil)
	tests := []struct {
		query string
		want  []string // any of these first
	}{
		{"turn on the kitchen light", []string{"ha_call_service"}},
		{"read a file", []string{"ha_read_file"}},
		{"recorder sql", []string{"ha_query_sql"}},
		{"create an automation", []string{"ha_create_automation"}},
		{"delete automation", []string{"ha_delete_automation"}},
		{"history of a sensor", []string{"ha_get_history"}},
		{"calendar events", []string{"ha_get_calendar_events"}},
		{"install an add-on", []string{"ha_manage_addons"}},
		{"run a shell command", []string{"ha_execute_command"}},
		{"play music on the speaker", []string{"ha_control_media_player"}},
		{"shopping list", []string{"ha_manage_shopping_list"}},
		{"ha_list_labels", []string{"ha_list_labels"}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			code, text := s.call(t, false, toolkit.SearchToolName, map[string]any{"query": tt.query})
			if code != "" {
				t.Fatal(text)
			}
			var out struct {
				Tools []struct {
					Name        string
					InputSchema *jsonschema.Schema
				}
			}
			if err := json.Unmarshal([]byte(text), &out); err != nil {
				t.Fatal(err)
			}
			var got []string
			for i, tl := range out.Tools {
				got = append(got, tl.Name)
				if i == 0 && (tl.InputSchema == nil || tl.InputSchema.Type != "object") { // the rest may come brief
					t.Errorf("%s came without its input schema", tl.Name)
				}
			}
			if len(got) == 0 || !slices.Contains(tt.want, got[0]) || len(got) > toolkit.DefaultSearchResults {
				t.Fatalf("%q found %v, want %v first", tt.query, got, tt.want)
			}
		})
	}
}

// TestCallToolGatesLikeADirectCall: over the real registry and the real permission manager, a tool
// run through hamcp_call_tool meets the same grant and confirmation as a direct call, and tools a
// read-only session or the options leave out cannot be reached through it.
func TestCallToolGatesLikeADirectCall(t *testing.T) {
	t.Parallel()
	pm, err := permission.New(permission.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pm.Close() })
	env := func() *toolkit.Env { return &toolkit.Env{Gate: permtools.Gate{M: pm}} }

	t.Run("grant", func(t *testing.T) {
		t.Parallel()
		direct := connect(t, mcpserver.Options{ToolMode: toolkit.ModeAll, Env: env()}, false, nil)
		proxy := connect(t, mcpserver.Options{ToolMode: toolkit.ModeSearch, Env: env()}, false, nil)
		args := map[string]any{"path": "/config/configuration.yaml"}
		dc, dtext := direct.call(t, false, "ha_read_file", args)
		pc, ptext := proxy.call(t, true, "ha_read_file", args)
		if dc != "permission_required" || pc != dc {
			t.Fatalf("direct %s, proxy %s: want permission_required from both", dtext, ptext)
		}
	})

	for _, tt := range []struct {
		name     string
		filter   toolkit.Filter
		readOnly bool // the session's credential is read-only
		tool     string
		inError  string
	}{
		{"read_only option", toolkit.Filter{ReadOnly: true}, false, "ha_write_file", "read-only"},
		{"read-only sign-in", toolkit.Filter{}, true, "ha_execute_command", "read-only"},
		{"disabled_tools", toolkit.Filter{Disabled: []string{"ha_read_file"}}, false, "ha_read_file", "disabled_tools"},
		{"toolsets", toolkit.Filter{Toolsets: []string{"states"}}, false, "ha_read_file", "toolsets"},
	} {
		t.Run("refused: "+tt.name, func(t *testing.T) {
			t.Parallel()
			s := connect(t, mcpserver.Options{ToolMode: toolkit.ModeSearch, Filter: tt.filter, Env: env()}, tt.readOnly, nil)
			code, text := s.call(t, true, tt.tool, map[string]any{"path": "/config/x.yaml", "content": "x", "command": "id"})
			if code != "tool_not_enabled" || !strings.Contains(text, tt.inError) {
				t.Fatalf("got %s, want tool_not_enabled naming %s", text, tt.inError)
			}
			// And the search does not offer it.
			_, found := s.call(t, false, toolkit.SearchToolName, map[string]any{"query": tt.tool, "limit": 10})
			if strings.Contains(found, `"name":"`+tt.tool+`"`) {
				t.Fatalf("the search offers %s: %s", tt.tool, found)
			}
		})
	}

	t.Run("confirmation", func(t *testing.T) {
		t.Parallel()
		// A tool every call of which the user confirms and which needs no argument: the question
		// comes before any backend is reached.
		var tool string
		for _, tl := range declared().Select(toolkit.Filter{}) {
			if s, _ := tl.Definition().InputSchema.(*jsonschema.Schema); strings.HasPrefix(tl.ConfirmWhen(), "always") && len(s.Required) == 0 {
				tool = tl.Name()
				break
			}
		}
		if tool == "" {
			t.Fatal("no tool confirms every call without arguments")
		}
		allow, err := permission.New(permission.Options{Policies: map[permission.Category]permission.Policy{
			permission.Filesystem: permission.PolicyAllow, permission.Database: permission.PolicyAllow, permission.Command: permission.PolicyAllow}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { allow.Close() })
		var mu sync.Mutex
		var asked []string
		decline := func(r *mcp.ElicitRequest) *mcp.ElicitResult {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, r.Params.Message)
			return &mcp.ElicitResult{Action: "decline"}
		}
		o := func(m toolkit.Mode) mcpserver.Options {
			return mcpserver.Options{ToolMode: m, Env: &toolkit.Env{Gate: permtools.Gate{M: allow}}}
		}
		dc, dtext := connect(t, o(toolkit.ModeAll), false, decline).call(t, false, tool, map[string]any{"confirm": true})
		pc, ptext := connect(t, o(toolkit.ModeSearch), false, decline).call(t, true, tool, map[string]any{"confirm": true})
		if dc != "confirmation_declined" || pc != dc {
			t.Fatalf("%s: direct %s, proxy %s: want confirmation_declined from both", tool, dtext, ptext)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(asked) != 2 || asked[0] != asked[1] {
			t.Fatalf("%s: the user was asked %q", tool, asked)
		}
	})
}

// TestToolListBytes measures tools/list per mode over a real client session, for a home without a hub
// (Home Assistant and root tools) and with one (Hubitat's tools too), full and read-only, and fails when
// search mode passes its budget. docs/performance.md records its table:
// go test -count=1 -run TestToolListBytes -v ./src/app
func TestToolListBytes(t *testing.T) {
	t.Parallel()
	regs := []struct {
		name string
		reg  *toolkit.Registry
	}{
		{"Home Assistant + root", registry(hatools.Deps{}, nil, nil, nil, dbtools.Deps{}, systools.Deps{})},
		{"with a Hubitat hub", declared()},
	}
	var table strings.Builder
	table.WriteString("\n| tools | session | all: tools, bytes | search: tools, bytes | auto |\n|---|---|---|---|---|\n")
	for _, r := range regs {
		for _, ro := range []bool{false, true} {
			sizes := map[toolkit.Mode][2]int{}
			for _, m := range []toolkit.Mode{toolkit.ModeAll, toolkit.ModeSearch} {
				names, size := connect(t, mcpserver.Options{Registry: r.reg, ToolMode: m}, ro, nil).list(t)
				sizes[m] = [2]int{len(names), size}
			}
			if s := sizes[toolkit.ModeSearch][1]; s > searchListBudget {
				t.Errorf("%s, read-only %v: search mode's tools/list is %d bytes, over its %d budget", r.name, ro, s, searchListBudget)
			}
			_, auto := r.reg.Surface(toolkit.Filter{ReadOnly: ro}, toolkit.ModeAuto, 0)
			session := map[bool]string{false: "full", true: "read-only"}[ro]
			fmt.Fprintf(&table, "| %s | %s | %d, %d | %d, %d | %s |\n", r.name, session,
				sizes[toolkit.ModeAll][0], sizes[toolkit.ModeAll][1], sizes[toolkit.ModeSearch][0], sizes[toolkit.ModeSearch][1], auto)
		}
	}
	// Per toolset (option toolsets), as listed flat: what enabling one toolset costs.
	table.WriteString("\n| toolset | tools | bytes | read-only: tools, bytes |\n|---|---|---|---|\n")
	reg := declared()
	for _, ts := range reg.Toolsets() {
		f := toolkit.Filter{Toolsets: []string{ts}}
		names, size := connect(t, mcpserver.Options{Registry: reg, Filter: f, ToolMode: toolkit.ModeAll}, false, nil).list(t)
		roNames, roSize := connect(t, mcpserver.Options{Registry: reg, Filter: f, ToolMode: toolkit.ModeAll}, true, nil).list(t)
		if len(names) == 0 {
			t.Errorf("toolset %s lists no tools", ts)
		}
		fmt.Fprintf(&table, "| %s | %d | %d | %d, %d |\n", ts, len(names), size, len(roNames), roSize)
	}
	t.Log(table.String())
}

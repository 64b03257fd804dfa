package toolkit

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type noteArgs struct {
	Text string `json:"text" jsonschema:"what to write" validate:"required,max=20"`
}

// proxyHome is a registry of four tools (one open and read-only, one needing the filesystem grant,
// one the user confirms, one in another toolset) with a record of what ran.
type proxyHome struct {
	reg    *Registry
	mu     sync.Mutex
	ran    []string
	opened []string
}

func newProxyHome() *proxyHome {
	h := &proxyHome{reg: NewRegistry()}
	note := func(name, toolset string, cat Category, ro bool) *Tool {
		return Define(Spec[noteArgs, map[string]string]{
			Name: name, Toolset: toolset, Description: "writes a note " + name, Category: cat, ReadOnly: ro, Destructive: !ro,
			Handler: func(ctx context.Context, c *Call, a noteArgs) (map[string]string, error) {
				h.mu.Lock()
				defer h.mu.Unlock()
				h.ran = append(h.ran, name)
				return map[string]string{"tool": c.Tool, "text": a.Text}, nil
			},
		})
	}
	h.reg.Add(note("t_read", "test", "", true), note("t_write", "test", Filesystem, false),
		doorTool(&h.opened, &h.mu), note("t_other", "other", "", true))
	h.reg.SetCore("t_read")
	return h
}

// session connects a client (protocol version, and an elicitation handler when answer is set) to a
// server offering the registry's surface for f in mode m.
func (h *proxyHome) session(t *testing.T, env *Env, f Filter, m Mode, version string, answer func(*mcp.ElicitRequest) *mcp.ElicitResult) *mcp.ClientSession {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	tools, _ := h.reg.Surface(f, m, 0)
	for _, tool := range tools {
		tool.Install(s, env)
	}
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	opts := &mcp.ClientOptions{}
	if answer != nil {
		opts.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return answer(req), nil }
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, opts).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call runs a tool directly (proxy=false) or through hamcp_call_tool and returns the tool error (nil on
// success) and the result's text.
func call(t *testing.T, cs *mcp.ClientSession, proxy bool, name string, args map[string]any) (*Error, string) {
	t.Helper()
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	if proxy {
		p = &mcp.CallToolParams{Name: CallToolName, Arguments: map[string]any{"name": name, "arguments": args}}
	}
	res, err := cs.CallTool(context.Background(), p)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !res.IsError {
		return nil, text
	}
	var e Error
	if err := json.Unmarshal([]byte(text), &e); err != nil {
		t.Fatal(err)
	}
	return &e, text
}

func listed(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func TestSurfaceModes(t *testing.T) {
	t.Parallel()
	h := newProxyHome()
	all := ListBytes(h.reg.Select(Filter{}))
	for _, tt := range []struct {
		name   string
		mode   Mode
		budget int
		want   Mode
		tools  []string
	}{
		{"all", ModeAll, 0, ModeAll, []string{"t_door", "t_other", "t_read", "t_write"}},
		{"unset is all", "", 0, ModeAll, []string{"t_door", "t_other", "t_read", "t_write"}},
		{"search", ModeSearch, 0, ModeSearch, []string{"t_read", SearchToolName, CallToolName}},
		{"auto within budget", ModeAuto, all, ModeAll, []string{"t_door", "t_other", "t_read", "t_write"}},
		{"auto over budget", ModeAuto, all - 1, ModeSearch, []string{"t_read", SearchToolName, CallToolName}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tools, got := h.reg.Surface(Filter{}, tt.mode, tt.budget)
			var names []string
			for _, tl := range tools {
				names = append(names, tl.Name())
			}
			if got != tt.want || !slices.Equal(names, tt.tools) {
				t.Fatalf("mode %s, tools %v; want %s, %v", got, names, tt.want, tt.tools)
			}
		})
	}
	// The proxy says honestly what it can reach: read-only only when everything it reaches is.
	for _, tt := range []struct {
		f            Filter
		ro, destruct bool
	}{{Filter{}, false, true}, {Filter{ReadOnly: true}, true, false}} {
		tools, _ := h.reg.Surface(tt.f, ModeSearch, 0)
		a := tools[len(tools)-1].Definition().Annotations
		if a.ReadOnlyHint != tt.ro || *a.DestructiveHint != tt.destruct {
			t.Errorf("filter %+v: %s annotations %+v", tt.f, CallToolName, a)
		}
	}
}

// TestCallToolIsADirectCall: whatever a direct call would be refused, asked or checked for, the proxy
// is too — and it reaches no tool the session could not call directly.
func TestCallToolIsADirectCall(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		filter   Filter
		tool     string
		args     map[string]any
		code     string // "" = runs
		inError  string
		runsHere bool // the tool is also listed for direct calls
	}{
		{"open tool runs", Filter{}, "t_read", map[string]any{"text": "hi"}, "", "", true},
		{"argument rules", Filter{}, "t_read", map[string]any{"text": strings.Repeat("x", 21)}, "invalid_argument", "text", true},
		{"unknown argument", Filter{}, "t_read", map[string]any{"txt": "hi"}, "invalid_argument", "txt", true},
		{"grant needed", Filter{}, "t_write", map[string]any{"text": "hi"}, "permission_required", "filesystem", true},
		{"confirmation, nobody to ask", Filter{}, "t_door", map[string]any{"door": "front", "confirm": true}, "confirmation_required", "confirm=true is not enough", true},
		{"read-only session", Filter{ReadOnly: true}, "t_write", map[string]any{"text": "hi"}, "tool_not_enabled", "read-only", false},
		{"disabled tool", Filter{Disabled: []string{"t_door"}}, "t_door", map[string]any{"door": "front"}, "tool_not_enabled", "disabled_tools", false},
		{"toolset not enabled", Filter{Toolsets: []string{"test"}}, "t_other", map[string]any{"text": "hi"}, "tool_not_enabled", "toolsets", false},
		{"no such tool", Filter{}, "t_nope", map[string]any{}, "not_found", SearchToolName, false},
		{"no recursion", Filter{}, CallToolName, map[string]any{"name": "t_read"}, "invalid_argument", "call it directly", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newProxyHome()
			g := &categoryGate{}
			// Every tool is listed (all) for the direct call; the proxy comes from search mode over the same filter.
			direct := h.session(t, &Env{Gate: g}, tt.filter, ModeAll, "2025-06-18", nil)
			proxy := h.session(t, &Env{Gate: g}, tt.filter, ModeSearch, "2025-06-18", nil)
			pe, ptext := call(t, proxy, true, tt.tool, tt.args)
			switch {
			case tt.code == "" && pe != nil:
				t.Fatalf("refused through the proxy: %s", ptext)
			case tt.code != "" && (pe == nil || pe.Code != tt.code || !strings.Contains(ptext, tt.inError)):
				t.Fatalf("proxy: got %s, want %s containing %q", ptext, tt.code, tt.inError)
			}
			if !tt.runsHere {
				if slices.Contains(listed(t, direct), tt.tool) {
					t.Fatalf("%s is listed although the session may not call it", tt.tool)
				}
				h.mu.Lock()
				defer h.mu.Unlock()
				if len(h.ran)+len(h.opened) != 0 || len(g.asked) != 0 {
					t.Fatalf("a refused call ran %v / opened %v / asked the gate for %v", h.ran, h.opened, g.asked)
				}
				return
			}
			de, dtext := call(t, direct, false, tt.tool, tt.args)
			if (de == nil) != (pe == nil) || (de != nil && (de.Code != pe.Code || de.Message != pe.Message || de.Field != pe.Field)) {
				t.Fatalf("direct %s, proxy %s", dtext, ptext)
			}
			if de == nil && dtext != ptext {
				t.Fatalf("results differ: direct %s, proxy %s", dtext, ptext)
			}
		})
	}
}

// TestCallToolAsksTheUser: a confirmed tool run through the proxy asks the user the same question as a
// direct call, in a 2025 session (elicitation during the call) and on 2026-07-28 (input_required and a
// retry carrying requestState through the proxy), and runs only when the user accepts.
func TestCallToolAsksTheUser(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		for _, accept := range []bool{false, true} {
			t.Run(version+map[bool]string{true: " accept", false: " decline"}[accept], func(t *testing.T) {
				t.Parallel()
				h := newProxyHome()
				var mu sync.Mutex
				var asked []string
				answer := func(req *mcp.ElicitRequest) *mcp.ElicitResult {
					mu.Lock()
					asked = append(asked, req.Params.Message)
					mu.Unlock()
					if !accept {
						return &mcp.ElicitResult{Action: "decline"}
					}
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}
				}
				g := &confirmGate{}
				env := &Env{Gate: g, ConfirmTrusted: []string{"change"}}
				direct := h.session(t, env, Filter{}, ModeAll, version, answer)
				proxy := h.session(t, env, Filter{}, ModeSearch, version, answer)
				args := map[string]any{"door": "front", "confirm": true}
				de, dtext := call(t, direct, false, "t_door", args)
				pe, ptext := call(t, proxy, true, "t_door", args)
				if accept {
					if de != nil || pe != nil || dtext != ptext {
						t.Fatalf("accepted, yet direct %s, proxy %s", dtext, ptext)
					}
				} else if de == nil || pe == nil || de.Code != "confirmation_declined" || pe.Code != de.Code {
					t.Fatalf("declined, yet direct %s, proxy %s", dtext, ptext)
				}
				mu.Lock()
				defer mu.Unlock()
				if len(asked) != 2 || asked[0] != "Unlock the front door? "+OnceNote || asked[1] != asked[0] {
					t.Fatalf("asked %q", asked)
				}
				if want := map[bool]int{true: 2, false: 0}[accept]; len(h.opened) != want || len(g.actions) != 0 {
					t.Fatalf("opened %v (want %d), approval requests %v", h.opened, want, g.actions)
				}
			})
		}
	}
}

func TestCallToolArguments(t *testing.T) {
	t.Parallel()
	h := newProxyHome()
	cs := h.session(t, &Env{}, Filter{}, ModeSearch, "2025-06-18", nil)
	for _, tt := range []struct {
		name    string
		args    any
		inError string
	}{
		{"no name", map[string]any{"arguments": map[string]any{}}, `"field":"name"`},
		{"name not a string", map[string]any{"name": 5}, "must be an object with name"},
		{"arguments not an object", map[string]any{"name": "t_read", "arguments": []any{"x"}}, "must be a JSON object"},
		{"extra field", map[string]any{"name": "t_read", "text": "hi"}, "nothing else"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: CallToolName, Arguments: tt.args})
			if err != nil {
				t.Fatal(err)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			if !res.IsError || !strings.Contains(text, tt.inError) {
				t.Fatalf("got %s, want an error containing %q", text, tt.inError)
			}
		})
	}
	// No arguments object is an empty one: the tool's own rules then speak.
	if e, text := call(t, cs, true, "t_read", nil); e == nil || e.Field != "text" {
		t.Fatalf("got %s, want t_read's missing text", text)
	}
}

func TestTokenize(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"Turn on the kitchen lights", []string{"turn", "kitchen", "light"}},
		{"ha_read_file", []string{"read", "file"}},
		{"reading files, entities; calling services", []string{"read", "file", "entity", "call", "servic"}},
		{"delete deleted deleting", []string{"delet", "delet", "delet"}},
		{"running stopped logging", []string{"run", "stop", "log"}},
		{"status address", []string{"status", "address"}},
		{"Température du salon", []string{"températur", "du", "salon"}},
		{"  ", nil},
	} {
		if got := tokenize(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("tokenize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := queryTerms("light light LIGHTS " + strings.Repeat("word ", 100)); len(got) != 2 || got[0] != "light" {
		t.Errorf("queryTerms keeps duplicates or too many terms: %q", got)
	}
}

func TestSearchToolBounds(t *testing.T) {
	t.Parallel()
	reg := NewRegistry()
	for i := range 30 {
		name := "t_light_" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		reg.Add(Define(Spec[noteArgs, string]{Name: name, Toolset: "t", Description: "turns a light on", ReadOnly: true,
			Handler: func(context.Context, *Call, noteArgs) (string, error) { return "", nil }}))
	}
	tools, _ := reg.Surface(Filter{}, ModeSearch, 0)
	cs := testServer(t, &Env{}, tools...)
	for _, tt := range []struct {
		args map[string]any
		n    int
		err  string
	}{
		{map[string]any{"query": "light"}, DefaultSearchResults, ""},
		{map[string]any{"query": "light", "limit": 10}, 10, ""},
		{map[string]any{"query": "light", "limit": 11}, 0, "limit"},
		{map[string]any{"query": "zebra"}, 0, ""},
		{map[string]any{"query": " "}, 0, "query"},
		{map[string]any{"query": strings.Repeat("a", 501)}, 0, "query"},
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: SearchToolName, Arguments: tt.args})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if tt.err != "" {
			if !res.IsError || !strings.Contains(text, `"field":"`+tt.err+`"`) {
				t.Errorf("%v: got %s, want an error about %s", tt.args, text, tt.err)
			}
			continue
		}
		var out struct {
			Count int
			Tools []struct {
				Name        string
				InputSchema map[string]any
				Annotations map[string]any
			}
		}
		if err := json.Unmarshal([]byte(text), &out); err != nil || res.IsError {
			t.Fatalf("%v: %s", tt.args, text)
		}
		if out.Count != tt.n || len(out.Tools) != tt.n {
			t.Errorf("%v: %d results, want %d", tt.args, len(out.Tools), tt.n)
		}
		for _, tl := range out.Tools {
			if tl.InputSchema["properties"] == nil || tl.Annotations == nil {
				t.Errorf("%s: a result without its full definition: %s", tl.Name, text)
			}
		}
	}
}

// FuzzQueryTerms: whatever the model searches for, the tokeniser returns bounded, lower-case,
// non-empty terms without separators, and a search over a small index never fails.
func FuzzQueryTerms(f *testing.F) {
	h := newProxyHome()
	ix := newIndex(h.reg.Select(Filter{}), h.reg.core)
	for _, s := range []string{"turn on the kitchen light", "ha_read_file", "", "ÄÖÜ ß ǅ", "a\x00b", "ing ies sses eed", strings.Repeat("x ", 300), "the HSM's private boolean"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		terms := queryTerms(q)
		if len(terms) > maxQueryTokens {
			t.Fatalf("%d terms", len(terms))
		}
		seen := map[string]bool{}
		for _, term := range terms {
			if term == "" || len(term) > maxTokenBytes || seen[term] || strings.ContainsAny(term, " _.-\x00") || term != strings.ToLower(term) {
				t.Fatalf("bad term %q in %q", term, terms)
			}
			seen[term] = true
		}
		hits := ix.search(q, MaxSearchResults)
		if len(hits) > MaxSearchResults {
			t.Fatalf("%d hits", len(hits))
		}
		for i := 1; i < len(hits); i++ {
			if hits[i].score > hits[i-1].score {
				t.Fatalf("hits out of order: %v", hits)
			}
		}
	})
}

// TestIndexRanking: what a description says about other tools or in quoted examples does not make a
// tool match; its name and purpose do.
func TestIndexRanking(t *testing.T) {
	t.Parallel()
	tool := func(name, descr string, ro bool) *Tool {
		return Define(Spec[noteArgs, string]{Name: name, Toolset: "t", Description: descr, ReadOnly: ro,
			Handler: func(context.Context, *Call, noteArgs) (string, error) { return "", nil }})
	}
	tools := []*Tool{
		tool("t_read_file", "Return a file's text.", true),
		tool("t_write_file", "Write text to a path; to see what is there, t_read_file reads a file.", false),
		tool("t_talk", `Send a sentence to the assistant, like "turn on the kitchen light".`, false),
		tool("t_call_service", "Call a service, e.g. light.turn_on or switch.turn_off.", false),
		tool("t_manage_addons", "Install, start or remove addons.", false),
	}
	ix := newIndex(tools, nil)
	for _, tt := range []struct{ query, want string }{
		{"read a file", "t_read_file"},
		{"turn on the kitchen light", "t_call_service"},
		{"install an add-on", "t_manage_addons"},
		{"please use t_write_file", "t_write_file"},
	} {
		hits := ix.search(tt.query, 3)
		if len(hits) == 0 || hits[0].tool.Name() != tt.want {
			var got []string
			for _, h := range hits {
				got = append(got, h.tool.Name())
			}
			t.Errorf("%q ranks %v, want %s first", tt.query, got, tt.want)
		}
	}
}

// FuzzProxyArgs: whatever hamcp_call_tool is sent, it yields a tool name and a JSON object of
// arguments, or an invalid_argument error; never a panic, never arguments that are not an object.
func FuzzProxyArgs(f *testing.F) {
	for _, s := range []string{`{"name":"t_read","arguments":{"text":"hi"}}`, `{"name":"t"}`, `null`, ``, `[]`,
		`{"name":"t","arguments":null}`, `{"name":"t","arguments":[1]}`, `{"name":5}`, `{"name":"t","x":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: CallToolName, Arguments: json.RawMessage(raw)}}
		name, args, err := proxyArgs(req)
		if err != nil {
			if AsError(err).Code != "invalid_argument" {
				t.Fatalf("%q: %v", raw, err)
			}
			return
		}
		var m map[string]any
		if name == "" || json.Unmarshal(args, &m) != nil || m == nil {
			t.Fatalf("%q gave name %q and arguments %s", raw, name, args)
		}
	})
}

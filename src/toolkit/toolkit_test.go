package toolkit

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type sampleArgs struct {
	EntityID string   `json:"entity_id" jsonschema:"the entity" validate:"required,entity_id" example:"light.kitchen"`
	Mode     string   `json:"mode,omitempty" jsonschema:"how" validate:"omitempty,oneof=fast slow" default:"fast"`
	When     string   `json:"when,omitempty" validate:"omitempty,iso8601"`
	Tags     []string `json:"tags,omitempty" validate:"omitempty,max=3,dive,domain"`
	Page
}

func TestDecodeArgs(t *testing.T) {
	schema, err := schemaFor[sampleArgs]()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		args      string
		wantField string
		wantText  string
	}{
		{"ok minimal", `{"entity_id":"light.kitchen"}`, "", ""},
		{"ok full", `{"entity_id":"light.kitchen","mode":"slow","when":"2026-01-02T03:04:05Z","tags":["a"],"limit":5,"offset":10}`, "", ""},
		{"missing required", `{}`, "entity_id", "is required"},
		{"unknown argument", `{"entity_id":"light.kitchen","colour":"red"}`, "colour", "not an argument"},
		{"wrong type", `{"entity_id":5}`, "entity_id", "must be of type string"},
		{"bad entity id", `{"entity_id":"Kitchen Light"}`, "entity_id", "entity id like domain.object_id"},
		{"oneof", `{"entity_id":"light.a","mode":"medium"}`, "mode", "must be one of: fast, slow"},
		{"limit too big", `{"entity_id":"light.a","limit":5000}`, "limit", "at most 1000"},
		{"limit negative", `{"entity_id":"light.a","limit":-1}`, "limit", "at least 1"},
		{"embedded field wrong type", `{"entity_id":"light.a","limit":"ten"}`, "limit", "must be of type integer"},
		{"bad time", `{"entity_id":"light.a","when":"yesterday"}`, "when", "ISO-8601"},
		{"too many tags", `{"entity_id":"light.a","tags":["a","b","c","d"]}`, "tags", "at most 3"},
		{"bad tag item", `{"entity_id":"light.a","tags":["Bad Tag"]}`, "tags[0]", "domain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal([]byte(tt.args), &m); err != nil {
				t.Fatal(err)
			}
			var dst sampleArgs
			err := decodeArgs(m, &dst, schema)
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			te := AsError(err)
			if te == nil || te.Code != "invalid_argument" {
				t.Fatalf("want invalid_argument, got %v", err)
			}
			if te.Field != tt.wantField {
				t.Errorf("field = %q, want %q (%v)", te.Field, tt.wantField, te)
			}
			if !strings.Contains(te.Error(), tt.wantText) {
				t.Errorf("error %q does not contain %q", te.Error(), tt.wantText)
			}
		})
	}
}

func TestSchemaEnrichment(t *testing.T) {
	s, err := schemaFor[sampleArgs]()
	if err != nil {
		t.Fatal(err)
	}
	mode := s.Properties["mode"]
	if len(mode.Enum) != 2 || mode.Enum[0] != "fast" {
		t.Errorf("mode enum = %v", mode.Enum)
	}
	if string(mode.Default) != `"fast"` {
		t.Errorf("mode default = %s", mode.Default)
	}
	if s.Properties["entity_id"].Pattern == "" {
		t.Error("entity_id has no pattern")
	}
	lim := s.Properties["limit"]
	if lim == nil || lim.Maximum == nil || *lim.Maximum != 1000 || lim.Minimum == nil || *lim.Minimum != 1 {
		t.Errorf("limit bounds not in schema: %+v", lim)
	}
	if len(s.Required) != 1 || s.Required[0] != "entity_id" {
		t.Errorf("required = %v", s.Required)
	}
}

func TestPaginate(t *testing.T) {
	all := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	tests := []struct {
		page      Page
		wantItems []int
		wantNext  int // -1 = absent
	}{
		{Page{}, all, -1},
		{Page{Limit: 3}, []int{0, 1, 2}, 3},
		{Page{Limit: 3, Offset: 9}, []int{9}, -1},
		{Page{Limit: 3, Offset: 8}, []int{8, 9}, -1},
		{Page{Limit: 5, Offset: 5}, []int{5, 6, 7, 8, 9}, -1},
		{Page{Limit: 4, Offset: 4}, []int{4, 5, 6, 7}, 8},
		{Page{Offset: 50}, []int{}, -1},
		{Page{Limit: 5000}, all, -1},
	}
	for _, tt := range tests {
		l := Paginate(all, tt.page)
		if l.Total != 10 || l.Count != len(tt.wantItems) {
			t.Errorf("%+v: total %d count %d", tt.page, l.Total, l.Count)
		}
		got, _ := json.Marshal(l.Items)
		want, _ := json.Marshal(tt.wantItems)
		if string(got) != string(want) {
			t.Errorf("%+v: items %s want %s", tt.page, got, want)
		}
		switch {
		case tt.wantNext < 0 && l.NextOffset != nil:
			t.Errorf("%+v: next_offset %d, want none", tt.page, *l.NextOffset)
		case tt.wantNext >= 0 && (l.NextOffset == nil || *l.NextOffset != tt.wantNext):
			t.Errorf("%+v: next_offset %v, want %d", tt.page, l.NextOffset, tt.wantNext)
		}
	}
}

// recordingGate grants a category once the user has (granted, set out of band) and records audits.
type recordingGate struct {
	records []string
	granted bool
}

func (g *recordingGate) Authorize(ctx context.Context, c *Call, summary string) error {
	if g.granted {
		return nil
	}
	return &Error{Code: "permission_required", Message: "ask the user", Details: map[string]any{"request_id": "r1"}}
}

func (g *recordingGate) Record(ctx context.Context, c *Call, summary, outcome string, took time.Duration, detail string) {
	g.records = append(g.records, c.Tool+":"+outcome+":"+summary)
}

type echoOut struct {
	EntityID string `json:"entity_id"`
	Blob     string `json:"blob,omitempty"`
}

func testServer(t *testing.T, env *Env, tools ...*Tool) *mcp.ClientSession {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
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
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestCallPipeline(t *testing.T) {
	echo := Define(Spec[sampleArgs, echoOut]{
		Name: "t_echo", Toolset: "test", Description: "echo", ReadOnly: true,
		Handler: func(ctx context.Context, c *Call, a sampleArgs) (echoOut, error) {
			return echoOut{EntityID: a.EntityID, Blob: strings.Repeat("x", a.Limit)}, nil
		},
	})
	priv := Define(Spec[sampleArgs, echoOut]{
		Name: "t_priv", Toolset: "test", Description: "privileged", Category: Filesystem,
		Summary: func(a sampleArgs) string { return a.EntityID },
		Handler: func(ctx context.Context, c *Call, a sampleArgs) (echoOut, error) {
			return echoOut{EntityID: a.EntityID}, nil
		},
	})
	gate := &recordingGate{}
	cs := testServer(t, &Env{Gate: gate, MaxResponseBytes: 500}, echo, priv)
	ctx := context.Background()

	tests := []struct {
		name      string
		tool      string
		args      map[string]any
		wantError string // substring of the error text; "" = success
		wantText  string
	}{
		{"success", "t_echo", map[string]any{"entity_id": "light.a"}, "", `"entity_id":"light.a"`},
		{"bad arg is a tool error", "t_echo", map[string]any{"entity_id": "nope"}, "invalid_argument", ""},
		{"too large", "t_echo", map[string]any{"entity_id": "light.a", "limit": 900}, "too_large", ""},
		{"gate refuses", "t_priv", map[string]any{"entity_id": "light.a"}, "permission_required", ""},
		{"no argument carries a grant", "t_priv", map[string]any{"entity_id": "light.a", "permission_code": "123456"}, "invalid_argument", ""},
		{"gate grants once the user did", "t_priv", map[string]any{"entity_id": "light.a"}, "", `"entity_id":"light.a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gate.granted = strings.HasPrefix(tt.name, "gate grants")
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
			if err != nil {
				t.Fatalf("protocol error: %v", err)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			if tt.wantError != "" {
				if !res.IsError || !strings.Contains(text, tt.wantError) {
					t.Fatalf("want tool error %q, got isError=%v %s", tt.wantError, res.IsError, text)
				}
				return
			}
			if res.IsError || !strings.Contains(text, tt.wantText) {
				t.Fatalf("want success containing %q, got isError=%v %s", tt.wantText, res.IsError, text)
			}
			if res.StructuredContent == nil {
				t.Error("object result has no structuredContent")
			}
		})
	}
	if len(gate.records) != 2 || gate.records[0] != "t_priv:permission_required:light.a" || gate.records[1] != "t_priv:ok:light.a" {
		t.Errorf("audit records = %v", gate.records)
	}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range lt.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		if strings.Contains(string(b), "permission_code") {
			t.Errorf("%s: the schema still offers permission_code", tool.Name)
		}
		if tool.Annotations == nil || tool.Annotations.DestructiveHint == nil || tool.Annotations.OpenWorldHint == nil {
			t.Errorf("%s: annotations not all set", tool.Name)
		}
	}
}

func TestRegistrySelect(t *testing.T) {
	mk := func(name, set string, ro bool) *Tool {
		return Define(Spec[struct{}, struct{}]{Name: name, Toolset: set, Description: "d", ReadOnly: ro,
			Handler: func(context.Context, *Call, struct{}) (struct{}, error) { return struct{}{}, nil }})
	}
	r := NewRegistry()
	r.Add(mk("b_write", "b", false), mk("a_read", "a", true), mk("b_read", "b", true))
	names := func(ts []*Tool) string {
		var s []string
		for _, t := range ts {
			s = append(s, t.Name())
		}
		return strings.Join(s, ",")
	}
	tests := []struct {
		f    Filter
		want string
	}{
		{Filter{}, "a_read,b_read,b_write"},
		{Filter{ReadOnly: true}, "a_read,b_read"},
		{Filter{Toolsets: []string{"b"}}, "b_read,b_write"},
		{Filter{Disabled: []string{"b_read"}}, "a_read,b_write"},
	}
	for _, tt := range tests {
		if got := names(r.Select(tt.f)); got != tt.want {
			t.Errorf("%+v: %s, want %s", tt.f, got, tt.want)
		}
	}
}

func FuzzDecodeArgs(f *testing.F) {
	schema, err := schemaFor[sampleArgs]()
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{`{}`, `{"entity_id":"light.a"}`, `{"entity_id":"light.a","tags":["x"],"limit":3}`, `{"when":"2026-01-01"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var m map[string]any
		if json.Unmarshal([]byte(raw), &m) != nil || m == nil {
			return
		}
		var dst sampleArgs
		if err := decodeArgs(m, &dst, schema); err == nil {
			// Whatever passed must satisfy the rules.
			if !IsEntityID(dst.EntityID) {
				t.Fatalf("accepted bad entity id %q", dst.EntityID)
			}
			if dst.Limit < 0 || dst.Limit > MaxLimit {
				t.Fatalf("accepted limit %d", dst.Limit)
			}
		} else if AsError(err).Field == "" {
			t.Fatalf("error without field: %v", err)
		}
	})
}

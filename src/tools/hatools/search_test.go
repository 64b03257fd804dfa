package hatools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/dev/sim"
	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/src/completion"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/mcpserver"
	"github.com/hamcp/hamcp/src/supervisor"
	"github.com/hamcp/hamcp/src/toolkit"
	"github.com/hamcp/hamcp/src/tools/hatools"
)

// dataToolsets are the toolsets these tests cover (plus states, whose area and label filters
// live on the registry cache).
var dataToolsets = []string{hatools.SetStates, hatools.SetSearch, hatools.SetOrganisation, hatools.SetConversation, hatools.SetHelpers,
	hatools.SetMedia, hatools.SetEnergy, hatools.SetPeople, hatools.SetEvents, hatools.SetCalendars, hatools.SetLogbook, hatools.SetNotifications}

// dataEnv is a simulated home over loopback sockets, a Home Assistant client with the given
// token, and hamcp's tools served on in-memory MCP sessions.
type dataEnv struct {
	home *sim.Home
	ha   *homeassistant.Client
	srv  *mcp.Server
	deps hatools.Deps
}

// newDataEnv starts a home with days of recorder history (-1: none). A nil token means the
// owner's; ready waits for the client's state mirror.
func newDataEnv(t *testing.T, days int, token func(*sim.Home) string, ready bool) *dataEnv {
	t.Helper()
	ctx := context.Background()
	home, err := sim.Start(ctx, sim.Options{HistoryDays: days, Seed: 7})
	if err != nil {
		t.Fatalf("starting the simulated home: %v", err)
	}
	t.Cleanup(func() { _ = home.Close() })
	return connectDataEnv(t, home, token, ready)
}

func connectDataEnv(t *testing.T, home *sim.Home, token func(*sim.Home) string, ready bool) *dataEnv {
	t.Helper()
	tok := home.Token()
	if token != nil {
		tok = token(home)
	}
	ha, err := homeassistant.New(homeassistant.Config{BaseURL: home.URL(), Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ha.Start(ctx)
	t.Cleanup(func() { cancel(); _ = ha.Close() })
	if ready {
		deadline := time.Now().Add(10 * time.Second)
		for !ha.Mirror().Ready() {
			if time.Now().After(deadline) {
				t.Fatal("the state mirror did not fill within 10 s")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	sup, err := supervisor.New(supervisor.Config{BaseURL: home.SupervisorURL(), Token: home.SupervisorToken()})
	if err != nil {
		t.Fatal(err)
	}
	deps := hatools.Deps{HA: ha, Supervisor: sup}
	reg := toolkit.NewRegistry()
	reg.Add(hatools.Tools(deps)...)
	reg.AddResources(hatools.Resources(deps)...)
	b := mcpserver.New(mcpserver.Options{Name: "hamcp-test", Version: "1", Registry: reg, Filter: toolkit.Filter{Toolsets: dataToolsets},
		Env: &toolkit.Env{ConfirmTrusted: allClasses()}, Completion: completion.Handler(hatools.Completions(deps)),
		Subscribe: func(context.Context, *mcp.SubscribeRequest) error { return nil }, Unsubscribe: func(context.Context, *mcp.UnsubscribeRequest) error { return nil }})
	return &dataEnv{home: home, ha: ha, srv: b.Server(false), deps: deps}
}

// session opens an MCP session; logs, when not nil, receives its log notifications.
//
//lint:ignore SA1019 the test drives the deprecated (SEP-2577) MCP logging that live events use.
func (e *dataEnv) session(t *testing.T, logs chan<- *mcp.LoggingMessageParams) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := e.srv.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	opts := &mcp.ClientOptions{}
	if logs != nil {
		//lint:ignore SA1019 the test drives the deprecated (SEP-2577) MCP logging that live events use.
		opts.LoggingMessageHandler = func(_ context.Context, req *mcp.LoggingMessageRequest) {
			select {
			case logs <- req.Params:
			default:
			}
		}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "data-tools-test", Version: "1"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// dtErr is the JSON of a tool error result.
type dtErr struct {
	Code    string `json:"error"`
	Field   string `json:"field"`
	Message string `json:"message"`
	Hint    string `json:"hint"`
}

func dtCall(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", tool, err)
	}
	return res
}

func dtText(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			return tc.Text
		}
	}
	return ""
}

// dtOK calls a tool that must succeed and decodes its result into out.
func dtOK(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, out any) {
	t.Helper()
	res := dtCall(t, cs, tool, args)
	if res.IsError {
		t.Fatalf("%s %v: unexpected error: %s", tool, args, dtText(res))
	}
	if out != nil {
		if err := json.Unmarshal([]byte(dtText(res)), out); err != nil {
			t.Fatalf("%s: result is not the expected JSON: %v\n%s", tool, err, dtText(res))
		}
	}
}

// dtFail calls a tool that must fail and returns the error it gave.
func dtFail(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) dtErr {
	t.Helper()
	res := dtCall(t, cs, tool, args)
	if !res.IsError {
		t.Fatalf("%s %v: expected an error, got %s", tool, args, dtText(res))
	}
	var e dtErr
	if err := json.Unmarshal([]byte(dtText(res)), &e); err != nil {
		t.Fatalf("%s: error is not JSON: %s", tool, dtText(res))
	}
	return e
}

// dtErrCase is one call that must fail with code (and field, when set).
type dtErrCase struct {
	name, tool string
	args       map[string]any
	code       string
	field      string
	contains   string
}

func dtErrCases(t *testing.T, cs *mcp.ClientSession, cases []dtErrCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := dtFail(t, cs, c.tool, c.args)
			if e.Code != c.code || c.field != "" && e.Field != c.field && !strings.HasPrefix(e.Field, c.field+"[") || !strings.Contains(e.Message+" "+e.Hint, c.contains) {
				t.Errorf("got %+v, want code %q field %q containing %q", e, c.code, c.field, c.contains)
			}
		})
	}
}

// TestHomeDataTools runs every group against one simulated home with a day of history; each
// group is a subtest so `-run TestHomeDataTools/calendars` picks one.
func TestHomeDataTools(t *testing.T) {
	e := newDataEnv(t, 1, nil, true)
	for _, g := range []struct {
		name string
		run  func(*testing.T, *dataEnv)
	}{
		{"search", testSearch}, {"organisation", testOrganisation}, {"conversation", testConversation}, {"helpers", testHelpers},
		{"media", testMedia}, {"energy", testEnergy}, {"people", testPeople}, {"events", testEvents}, {"live", testLiveEvents},
		{"calendars", testCalendars}, {"logbook", testLogbook}, {"notifications", testNotifications}, {"sizes", testDataDefaultSizes},
	} {
		t.Run(g.name, func(t *testing.T) { g.run(t, e) })
	}
}

type dtHit struct {
	EntityID string `json:"entity_id"`
	Area     string `json:"area"`
	Score    int    `json:"score"`
}

func testSearch(t *testing.T, e *dataEnv) {
	cs := e.session(t, nil)
	var res struct {
		Total int     `json:"total"`
		Items []dtHit `json:"items"`
	}
	for _, c := range []struct{ query, area, want string }{
		{"kitchen ceiling", "", "light.kitchen_ceiling"},
		{"kitchn temperature", "", "sensor.kitchen_temperature"}, // a typo
		{"light.office_desk", "", "light.office_desk"},
		{"blinds", "Bedroom", "cover.bedroom_blinds"},
		{"lamp living", "", "light.living_room_lamp"},
	} {
		args := map[string]any{"query": c.query}
		if c.area != "" {
			args["area"] = c.area
		}
		dtOK(t, cs, "ha_search_entities", args, &res)
		if len(res.Items) == 0 || res.Items[0].EntityID != c.want {
			t.Errorf("search %q: first hit %+v, want %s", c.query, res.Items, c.want)
		}
	}
	dtOK(t, cs, "ha_search_entities", map[string]any{"query": "temperature", "area": "bedroom", "limit": 50}, &res)
	for _, h := range res.Items {
		if h.Area != "Bedroom" {
			t.Errorf("area filter let through %+v", h)
		}
	}

	var stats struct {
		Total       int `json:"total"`
		Unavailable int `json:"unavailable"`
		Domains     map[string]struct {
			Total  int            `json:"total"`
			States map[string]int `json:"states"`
		} `json:"domains"`
		Areas  map[string]int `json:"areas"`
		Groups map[string]int `json:"groups"`
	}
	dtOK(t, cs, "ha_get_overview", map[string]any{"group_by": "label"}, &stats)
	if stats.Total < 100 || stats.Domains["light"].Total != 13 || stats.Domains["sensor"].States["numeric"] == 0 || stats.Areas["kitchen"] == 0 || stats.Groups["energy"] == 0 {
		t.Errorf("stats: %+v", stats)
	}
	lights := stats.Domains["light"].States
	if lights["on"]+lights["off"] != 13 {
		t.Errorf("light states: %v", lights)
	}

	// Something happens, and recent activity shows it.
	dtOK(t, cs, "ha_call_service", map[string]any{"domain": "switch", "service": "toggle", "entity_id": []string{"switch.christmas_lights"}}, nil)
	var act struct {
		Items []struct {
			When     string `json:"when"`
			EntityID string `json:"entity_id"`
			State    string `json:"state"`
		} `json:"items"`
	}
	testkit.Eventually(t, "the toggle in recent activity", func() bool {
		dtOK(t, cs, "ha_get_recent_activity", map[string]any{"minutes": 5, "domain": "switch"}, &act)
		return len(act.Items) > 0 && act.Items[0].EntityID == "switch.christmas_lights"
	})
	if _, err := time.Parse(time.RFC3339, act.Items[0].When); err != nil || !strings.HasSuffix(act.Items[0].When, "Z") {
		t.Errorf("when is not ISO-8601 UTC: %q", act.Items[0].When)
	}
	dtOK(t, cs, "ha_get_recent_activity", map[string]any{"minutes": 5, "area": "living_room"}, &act)
	for _, it := range act.Items {
		if it.EntityID != "" && !strings.Contains(it.EntityID, "living_room") && it.EntityID != "switch.christmas_lights" {
			t.Errorf("area filter let through %+v", it)
		}
	}

	dtErrCases(t, cs, []dtErrCase{
		{"empty query", "ha_search_entities", map[string]any{"query": ""}, "invalid_argument", "query", ""},
		{"bad domain", "ha_search_entities", map[string]any{"query": "x", "domain": "Light!"}, "invalid_argument", "domain", ""},
		{"unknown area", "ha_search_entities", map[string]any{"query": "x", "area": "attic"}, "invalid_argument", "area", "kitchen"},
		{"unknown argument", "ha_search_entities", map[string]any{"query": "x", "colour": "red"}, "invalid_argument", "colour", ""},
		{"bad group", "ha_get_overview", map[string]any{"group_by": "colour"}, "invalid_argument", "group_by", ""},
		{"minutes too long", "ha_get_recent_activity", map[string]any{"minutes": 20000}, "invalid_argument", "minutes", ""},
		{"bad entity id", "ha_get_recent_activity", map[string]any{"entity_ids": []string{"Not An Id"}}, "invalid_argument", "entity_ids", ""},
	})
}

// dtValidCalls has one well-formed call of every tool that reaches Home Assistant.
var dtValidCalls = []struct {
	tool string
	args map[string]any
}{
	{"ha_search_entities", map[string]any{"query": "kitchen"}},
	{"ha_get_overview", nil},
	{"ha_get_recent_activity", nil},
	{"ha_list_areas", nil},
	{"ha_list_labels", nil},
	{"ha_list_devices", nil},
	{"ha_get_states", map[string]any{"area": "kitchen"}},
	// The home has a lock exposed to Assist; these fixtures trust every class, so confirm=true is enough.
	{"ha_process_conversation", map[string]any{"text": "turn on the kitchen lights", "confirm": true}},
	{"ha_render_template", map[string]any{"template": "{{ 1 }}"}},
	{"ha_manage_shopping_list", map[string]any{"action": "list"}},
	{"ha_manage_todo", map[string]any{"action": "lists"}},
	{"ha_manage_todo", map[string]any{"action": "list", "entity_id": "todo.chores"}},
	{"ha_manage_helpers", map[string]any{"action": "list"}},
	{"ha_get_camera_snapshot", map[string]any{"entity_id": "camera.garden"}},
	{"ha_control_media_player", map[string]any{"entity_id": "media_player.kitchen_speaker", "action": "pause"}},
	{"ha_get_energy_data", nil},
	{"ha_get_statistics", nil},
	{"ha_get_statistics", map[string]any{"statistic_ids": []string{"sensor.house_power"}}},
	{"ha_get_person_location", nil},
	{"ha_fire_event", map[string]any{"event_type": "hamcp_test"}},
	{"ha_list_event_listeners", nil},
	{"ha_subscribe_events", map[string]any{"event_type": "state_changed"}},
	{"ha_list_calendars", nil},
	{"ha_get_calendar_events", nil},
	{"ha_get_logbook", nil},
	{"ha_send_notification", map[string]any{"service": "persistent_notification", "message": "hi"}},
}

// dtMaxDefaultResult is the token budget of a call with default arguments on the demo home.
const dtMaxDefaultResult = 20 << 10

func testDataDefaultSizes(t *testing.T, e *dataEnv) {
	cs := e.session(t, nil)
	for _, c := range dtValidCalls {
		res := dtCall(t, cs, c.tool, c.args)
		size := 0
		for _, content := range res.Content {
			b, _ := json.Marshal(content)
			size += len(b)
		}
		if res.IsError || size > dtMaxDefaultResult {
			t.Errorf("%s %v: %d bytes, error=%v: %.200s", c.tool, c.args, size, res.IsError, dtText(res))
		}
	}
}

// TestHomeDataToolsDown: with Home Assistant unreachable every tool says so, and that nothing changed.
func TestHomeDataToolsDown(t *testing.T) {
	home, err := sim.Start(context.Background(), sim.Options{HistoryDays: -1, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = home.Close() })
	if err := home.SetDown(true); err != nil {
		t.Fatal(err)
	}
	cs := connectDataEnv(t, home, nil, false).session(t, nil)
	for _, c := range dtValidCalls {
		t.Run(c.tool, func(t *testing.T) {
			res := dtCall(t, cs, c.tool, c.args)
			var e struct {
				Code    string `json:"error"`
				Changed *bool  `json:"changed"`
			}
			_ = json.Unmarshal([]byte(dtText(res)), &e)
			if !res.IsError || e.Code != "backend_unavailable" || e.Changed == nil || *e.Changed {
				t.Errorf("got %s", dtText(res))
			}
		})
	}
}

// TestHomeDataToolsUnauthorized: a token Home Assistant rejects (REST 401, WebSocket
// auth_invalid) is reported as hamcp's configuration problem, not the model's.
func TestHomeDataToolsUnauthorized(t *testing.T) {
	home, err := sim.Start(context.Background(), sim.Options{HistoryDays: -1, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = home.Close() })
	cs := connectDataEnv(t, home, func(*sim.Home) string { return "revoked-token" }, false).session(t, nil)
	for _, c := range dtValidCalls {
		t.Run(c.tool, func(t *testing.T) {
			e := dtFail(t, cs, c.tool, c.args)
			if e.Code != "backend_unauthorized" {
				t.Errorf("got %+v", e)
			}
		})
	}
}

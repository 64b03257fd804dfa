package hatools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/dev/sim/home"
	"github.com/hamcp/hamcp/dev/testkit/tooltest"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/store"
	"github.com/hamcp/hamcp/src/toolkit"
	"github.com/hamcp/hamcp/src/tools/hatools"
)

// A model follows the event bus and reads states while the user disarms the alarm from the UI
// with code 1234, a Keymaster-style lock carries its user code (2468) as an attribute, and the
// model itself disarms with code 4321. Nothing the model reads — answers, live notifications,
// the events ha_get_subscription_stats keeps — and no audit entry the panel shows holds a code.
func TestCodesNeverReachTheModel(t *testing.T) {
	t.Parallel()
	f, err := tooltest.Start(tooltest.Options{HistoryDays: -1, ConfirmTrusted: allClasses(),
		Tools: func(f *tooltest.Fixture) []*toolkit.Tool {
			// A started client: the event tools follow Home Assistant's websocket.
			ha, err := homeassistant.New(homeassistant.Config{BaseURL: f.Home.URL(), Token: f.Home.Token()})
			if err != nil {
				panic(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			ha.Start(ctx)
			f.OnClose(func() { cancel(); _ = ha.Close() })
			return hatools.Tools(hatools.Deps{HA: ha})
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	//lint:ignore SA1019 the test drives the deprecated (SEP-2577) MCP logging that live events use.
	logs := make(chan *mcp.LoggingMessageParams, 64)
	s := f.SessionWith(t, &mcp.ClientOptions{
		//lint:ignore SA1019 the test drives the deprecated (SEP-2577) MCP logging that live events use.
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			select {
			case logs <- req.Params:
			default:
			}
		}})
	//lint:ignore SA1019 the test drives the deprecated (SEP-2577) MCP logging that live events use.
	if err := s.CS.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	var read []string
	seen := func(tool string, args map[string]any) string {
		t.Helper()
		text := s.OK(t, tool, args, nil)
		read = append(read, tool+": "+text)
		return text
	}

	seen("ha_subscribe_events", map[string]any{"event_type": "call_service"})
	// The user, in Home Assistant's UI: HA announces the call, service_data and all, on the bus.
	if _, err := f.Home.Model().CallService(home.ServiceCall{Domain: "alarm_control_panel", Service: "alarm_disarm",
		Data: map[string]any{"entity_id": "alarm_control_panel.home_alarm", "code": "1234"}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.Home.Model().SetState("lock.keymaster_front_door", "locked",
		map[string]any{"friendly_name": "Front Door", "usercode": "2468", "code_slot": 1}, false, ""); err != nil {
		t.Fatal(err)
	}
	// The model, confirmed.
	seen("ha_call_service", map[string]any{"domain": "alarm_control_panel", "service": "alarm_disarm",
		"entity_id": []string{"alarm_control_panel.home_alarm"}, "data": map[string]any{"code": "4321"}, "confirm": true})

	var stats struct {
		Subscriptions []struct {
			Matched int64             `json:"matched"`
			Recent  []json.RawMessage `json:"recent"`
		} `json:"subscriptions"`
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		text := s.OK(t, "ha_get_subscription_stats", map[string]any{"include_events": true}, &stats)
		if len(stats.Subscriptions) == 1 && stats.Subscriptions[0].Matched >= 2 {
			read = append(read, "stats: "+text)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the two call_service events did not arrive: %s", text)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(read[len(read)-1], `alarm_disarm`) || !strings.Contains(read[len(read)-1], `[hidden]`) {
		t.Errorf("the events lost what they are about: %s", read[len(read)-1])
	}
	for n := 0; n < 2; n++ {
		select {
		case m := <-logs:
			b, _ := json.Marshal(m.Data)
			read = append(read, "notification: "+string(b))
		case <-time.After(5 * time.Second):
			t.Fatal("no event notification within 5 s")
		}
	}
	if got := seen("ha_get_entity_details", map[string]any{"entity_id": "lock.keymaster_front_door"}); !strings.Contains(got, `"code_slot":1`) {
		t.Errorf("the slot is gone: %s", got)
	}
	seen("ha_get_states", map[string]any{"domain": "lock", "detail": "full"})
	seen("ha_get_history", map[string]any{"entity_ids": []string{"lock.keymaster_front_door"}, "include_attributes": true, "hours": 1})

	for _, e := range s.Audit(t, store.AuditQuery{Tool: "ha_call_service"}) {
		read = append(read, "audit: "+e.ArgsSummary+" "+e.Detail)
	}
	for _, text := range read {
		for _, code := range []string{"1234", "2468", "4321"} {
			if strings.Contains(text, code) {
				t.Errorf("the model can read code %s in %s", code, text)
			}
		}
	}
}

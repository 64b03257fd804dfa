package demo_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// modernClient speaks MCP 2026-07-28 on the wire, as a stateless client does: no initialize, the
// protocol version and capabilities in every request's _meta, the Mcp-Method/Mcp-Name headers.
type modernClient struct {
	url, token string
	caps       map[string]any
	id         int
}

// modernAnswer is a tools/call result, input_required or complete.
type modernAnswer struct {
	ResultType    string `json:"resultType"`
	IsError       bool   `json:"isError"`
	RequestState  string `json:"requestState"`
	InputRequests map[string]struct {
		Method string `json:"method"`
		Params struct {
			Mode            string         `json:"mode"`
			Message         string         `json:"message"`
			RequestedSchema map[string]any `json:"requestedSchema"`
		} `json:"params"`
	} `json:"inputRequests"`
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
}

func (a modernAnswer) text() string {
	if len(a.Content) == 0 {
		return ""
	}
	return a.Content[0].Text
}

func (a modernAnswer) toolError(t *testing.T) toolError {
	t.Helper()
	var te toolError
	if !a.IsError || json.Unmarshal([]byte(a.text()), &te) != nil {
		t.Fatalf("want a tool error, got %+v", a)
	}
	return te
}

// call sends tools/call; retry carries the user's answer ("accept", "decline", "" for none) to the
// input request of a previous answer, with its requestState.
func (m *modernClient) call(t *testing.T, tool string, args map[string]any, state, answer string) modernAnswer {
	t.Helper()
	m.id++
	params := map[string]any{"name": tool, "arguments": args, "_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": m.caps,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "modern-test", "version": "1"},
	}}
	if state != "" {
		params["requestState"] = state
	}
	switch answer {
	case "accept":
		params["inputResponses"] = map[string]any{"hamcp_confirm": map[string]any{"action": "accept", "content": map[string]any{"allow": true}}}
	case "decline":
		params["inputResponses"] = map[string]any{"hamcp_confirm": map[string]any{"action": "decline"}}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.id, "method": "tools/call", "params": params})
	req, _ := http.NewRequest(http.MethodPost, m.url+"/mcp", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+m.token)
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	data := string(raw)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		_, after, _ := strings.Cut(data, "data: ")
		data, _, _ = strings.Cut(after, "\n")
	}
	var env struct {
		Result *modernAnswer   `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(data), &env) != nil || env.Result == nil {
		t.Fatalf("%s: HTTP %d %s", tool, resp.StatusCode, raw)
	}
	return *env.Result
}

// asked checks that a is an input_required result asking a yes/no question mentioning want.
func asked(t *testing.T, a modernAnswer, want string) {
	t.Helper()
	q, ok := a.InputRequests["hamcp_confirm"]
	if a.ResultType != "input_required" || !ok || a.RequestState == "" || len(a.Content) != 0 {
		t.Fatalf("want input_required with a question, got %+v", a)
	}
	if q.Method != "elicitation/create" || (q.Params.Mode != "" && q.Params.Mode != "form") || !strings.Contains(q.Params.Message, want) {
		t.Fatalf("question %+v does not ask about %q", q, want)
	}
	if _, ok := q.Params.RequestedSchema["properties"].(map[string]any)["allow"]; !ok {
		t.Fatalf("question has no allow checkbox: %+v", q.Params.RequestedSchema)
	}
}

// TestPermissionsThroughInputRequired: a stateless MCP 2026-07-28 client that declares elicitation is
// asked for permissions and confirmations through input_required results (multi round-trip), and the
// requestState hamcp hands out cannot be forged, carried to another call or token, or replayed.
func TestPermissionsThroughInputRequired(t *testing.T) {
	t.Parallel()
	e := startDemo(t, nil)
	form := map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}
	m := &modernClient{url: e.url, token: e.d.Info.Token, caps: form}

	t.Run("accept grants the category to the token", func(t *testing.T) {
		args := map[string]any{"path": "/config"}
		first := m.call(t, "ha_list_directory", args, "", "")
		asked(t, first, "filesystem")
		done := m.call(t, "ha_list_directory", args, first.RequestState, "accept")
		if done.ResultType != "complete" || done.IsError {
			t.Fatalf("accepted call did not run: %+v", done)
		}
		// Granted for the token's sessionless scope: the next call is not asked again.
		if again := m.call(t, "ha_read_file", map[string]any{"path": "/config/configuration.yaml"}, "", ""); again.ResultType != "complete" || again.IsError {
			t.Fatalf("grant did not hold: %+v", again)
		}
	})

	t.Run("decline denies and the denial sticks", func(t *testing.T) {
		args := map[string]any{"command": "echo hi"}
		first := m.call(t, "ha_execute_command", args, "", "")
		asked(t, first, "command")
		if te := m.call(t, "ha_execute_command", args, first.RequestState, "decline").toolError(t); te.Error != "permission_denied" {
			t.Fatalf("declined: %+v", te)
		}
		if te := m.call(t, "ha_execute_command", args, "", "").toolError(t); te.Error != "permission_denied" {
			t.Fatalf("deny did not stick: %+v", te)
		}
	})

	t.Run("a confirmation answers one call, once", func(t *testing.T) {
		for _, item := range []string{"milk", "bread"} {
			if a := m.call(t, "ha_manage_shopping_list", map[string]any{"action": "add", "name": item}, "", ""); a.IsError || a.ResultType != "complete" {
				t.Fatalf("add %s: %+v", item, a)
			}
		}
		milk := map[string]any{"action": "remove", "name": "milk"}
		first := m.call(t, "ha_manage_shopping_list", milk, "", "")
		asked(t, first, "milk")
		// The state names this exact call: the model cannot spend the user's "yes" on another one.
		bread := map[string]any{"action": "remove", "name": "bread"}
		if te := m.call(t, "ha_manage_shopping_list", bread, first.RequestState, "accept").toolError(t); te.Error != "invalid_request_state" {
			t.Fatalf("state carried to other arguments: %+v", te)
		}
		// Nor can another token, even the same user's.
		second, err := e.d.Home.NewAdminToken()
		if err != nil {
			t.Fatal(err)
		}
		other := &modernClient{url: e.url, token: second, caps: form}
		if te := other.call(t, "ha_manage_shopping_list", milk, first.RequestState, "accept").toolError(t); te.Error != "invalid_request_state" {
			t.Fatalf("state carried to another token: %+v", te)
		}
		// A forged or edited state is refused.
		forged := strings.Replace(first.RequestState, ".", "x.", 1)
		if te := m.call(t, "ha_manage_shopping_list", milk, forged, "accept").toolError(t); te.Error != "invalid_request_state" {
			t.Fatalf("forged state: %+v", te)
		}
		done := m.call(t, "ha_manage_shopping_list", milk, first.RequestState, "accept")
		if done.ResultType != "complete" || done.IsError || !strings.Contains(strings.ToLower(done.text()), "milk") {
			t.Fatalf("confirmed remove: %+v", done)
		}
		// Replaying the same "yes" does not run it again: the user is asked afresh.
		asked(t, m.call(t, "ha_manage_shopping_list", milk, first.RequestState, "accept"), "milk")
	})

	t.Run("a declined confirmation runs nothing", func(t *testing.T) {
		bread := map[string]any{"action": "remove", "name": "bread"}
		first := m.call(t, "ha_manage_shopping_list", bread, "", "")
		asked(t, first, "bread")
		if te := m.call(t, "ha_manage_shopping_list", bread, first.RequestState, "decline").toolError(t); te.Error != "confirmation_declined" {
			t.Fatalf("declined confirmation: %+v", te)
		}
		list := m.call(t, "ha_manage_shopping_list", map[string]any{"action": "list"}, "", "")
		if !strings.Contains(strings.ToLower(list.text()), "bread") {
			t.Fatalf("bread was removed although the user declined: %s", list.text())
		}
	})

	t.Run("an answer without hamcp's state grants nothing", func(t *testing.T) {
		args := map[string]any{"sql": "SELECT 1"}
		a := m.call(t, "ha_query_sql", args, "", "accept")
		asked(t, a, "database")
	})

	t.Run("without elicitation the approval link is the way", func(t *testing.T) {
		plain := &modernClient{url: e.url, token: e.d.Info.Token, caps: map[string]any{}}
		te := plain.call(t, "ha_query_sql", map[string]any{"sql": "SELECT 2"}, "", "").toolError(t)
		if te.Error != "permission_required" || fmt.Sprint(te.Details["approval_url"]) == "" || te.Details["approval_url"] == nil {
			t.Fatalf("want the approval link: %+v", te)
		}
	})
}

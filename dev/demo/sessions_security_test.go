package demo_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/src/permission"
)

// TestSessionHijackWithAnotherToken: the administrator holds two Home Assistant tokens (one per
// assistant). The second one, sent with the first one's Mcp-Session-Id, used to drive that
// session — its tools and its permission grants — because only the user was compared.
func TestSessionHijackWithAnotherToken(t *testing.T) {
	t.Parallel()
	e := startDemo(t, nil)
	victim := e.client(t, nil)
	sid := victim.ID()
	if sid == "" {
		t.Fatal("streamable session without id")
	}
	second, err := e.d.Home.NewAdminToken()
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"ha_get_permissions","arguments":{}}}`,
	} {
		req, _ := http.NewRequest(http.MethodPost, e.url+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+second)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), `"error"`) {
			t.Fatalf("another token of the same user on the session: %d %s", resp.StatusCode, b)
		}
	}
	// The owner's session is untouched.
	if res := callJSON(t, victim, "ha_get_permissions", nil, nil); res.IsError {
		t.Fatalf("owner after the attempt: %s", text(res))
	}
}

// stdioConn is a raw stdio connection to the app: hand-written JSON-RPC, so a test can skip
// steps of the handshake as a careless (or hostile) client would.
type stdioConn struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Scanner
	done chan error
	id   int
}

func openStdio(t *testing.T, e *env) *stdioConn {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	c := &stdioConn{t: t, in: cw, out: bufio.NewScanner(cr), done: make(chan error, 1)}
	c.out.Buffer(make([]byte, 4<<20), 4<<20)
	go func() {
		c.done <- e.d.App.ServeStdio(context.Background(), sr, sw)
		sw.Close()
	}()
	t.Cleanup(func() { cw.Close(); cr.Close() })
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	c.recv()
	return c
}

func (c *stdioConn) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

func (c *stdioConn) recv() map[string]any {
	c.t.Helper()
	for c.out.Scan() {
		var m map[string]any
		if err := json.Unmarshal(c.out.Bytes(), &m); err != nil {
			c.t.Fatalf("bad line %q", c.out.Bytes())
		}
		if _, isReply := m["id"]; isReply {
			return m
		}
	}
	c.t.Fatalf("connection closed: %v", c.out.Err())
	return nil
}

// call runs a tool and returns its result.
func (c *stdioConn) call(tool string, args map[string]any) *mcp.CallToolResult {
	c.t.Helper()
	c.id++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	c.send(string(b))
	m := c.recv()
	raw, _ := json.Marshal(m["result"])
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Content) == 0 {
		c.t.Fatalf("%s: %v", tool, m)
	}
	return &res
}

func (c *stdioConn) close() {
	c.t.Helper()
	c.in.Close()
	if err := <-c.done; err != nil {
		c.t.Fatalf("ServeStdio: %v", err)
	}
}

func pendingByID(m *permission.Manager, id string) (permission.Pending, bool) {
	for _, p := range m.Pending() {
		if p.ID == id {
			return p, true
		}
	}
	return permission.Pending{}, false
}

var connKeyPattern = regexp.MustCompile(`^[a-z]+-[0-9a-f]{32}$`)

// TestGrantsEndWithTheConnection: a stdio (or SSH) connection's grants were filed under a key
// made from a pointer, and ended only if the client had sent notifications/initialized. A client
// that skipped it kept its grant after disconnecting, for the next connection that landed on the
// same address. Now each connection has a random key, and its grants and pending requests end
// when the transport closes.
func TestGrantsEndWithTheConnection(t *testing.T) {
	t.Parallel()
	e := startDemo(t, nil)
	pm := e.d.App.Permissions
	read := map[string]any{"path": "/config/configuration.yaml"}
	keys := map[string]bool{}
	for round := range 3 {
		c := openStdio(t, e) // never sends notifications/initialized
		te := asToolError(t, c.call("ha_read_file", read))
		id, _ := te.Details["request_id"].(string)
		p, ok := pendingByID(pm, id)
		if te.Error != "permission_required" || !ok {
			t.Fatalf("round %d: first call %+v (pending %v)", round, te, ok)
		}
		key := p.SessionKey
		if !connKeyPattern.MatchString(key) || keys[key] {
			t.Fatalf("round %d: connection key %q is not a fresh random key", round, key)
		}
		keys[key] = true
		if err := pm.Approve(context.Background(), id, permission.Approver{Via: permission.ViaPanel, UserID: "panel-user"}); err != nil {
			t.Fatalf("approve: %v", err)
		}
		if res := c.call("ha_read_file", read); res.IsError {
			t.Fatalf("round %d: after approval: %s", round, text(res))
		}
		// A second request left pending when the client goes away.
		te = asToolError(t, c.call("ha_execute_command", map[string]any{"command": "true"}))
		pendingID, _ := te.Details["request_id"].(string)
		c.close()
		if g := pm.Grants(key); len(g) != 0 {
			t.Fatalf("round %d: grants outlived the connection: %+v", round, g)
		}
		if _, ok := pendingByID(pm, pendingID); ok && pendingID != "" {
			t.Fatalf("round %d: a request of the closed connection is still pending", round)
		}
	}
	// A new connection starts with nothing.
	c := openStdio(t, e)
	if te := asToolError(t, c.call("ha_read_file", read)); te.Error != "permission_required" {
		t.Fatalf("new connection inherited a grant: %+v", te)
	}
	c.close()
}

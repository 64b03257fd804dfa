package app

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/hamcp/hamcp/src/authn"
	"github.com/hamcp/hamcp/src/httpserver"
	"github.com/hamcp/hamcp/src/mcpserver"
	"github.com/hamcp/hamcp/src/permission"
	"github.com/hamcp/hamcp/src/toolkit"
)

// tokenSet is a verifier for the tokens of a test: each belongs to its own OAuth grant of one user.
type tokenSet map[string]string

// grantPrincipal is the caller behind every token of one OAuth grant.
func grantPrincipal(grant string) *authn.Principal {
	return &authn.Principal{Kind: authn.KindOAuth, UserID: "u-alex", Scopes: []string{authn.ScopeFull}, GrantID: grant}
}

func (ts tokenSet) Verify(_ context.Context, token string) (*auth.TokenInfo, error) {
	if grant, ok := ts[token]; ok {
		return grantPrincipal(grant).TokenInfo(time.Time{}), nil
	}
	return nil, errors.New("unknown token")
}

// TestRequestRoutes: a token sees and may deny only its own sessions' requests and never approves;
// nothing on the MCP port believes an ingress header, even from the Supervisor's address (the panel
// has its own listener, which checks the user against Home Assistant's administrators).
func TestRequestRoutes(t *testing.T) {
	t.Parallel()
	m, err := permission.New(permission.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	ask := func(session, owner string) string {
		err := m.Authorize(context.Background(), permission.Request{SessionKey: session, Owner: owner, Tool: "ha_execute_command", Category: permission.Command})
		var re *permission.RequiredError
		if !errors.As(err, &re) {
			t.Fatalf("want a request, got %v", err)
		}
		return re.RequestID
	}
	reqA, reqB := ask("mcp:session-of-a", grantPrincipal("grant-a").Owner()), ask("mcp:session-of-b", grantPrincipal("grant-b").Owner())
	// serve serves the MCP port's routes over a loopback listener; peer, when set, is the address its
	// connections appear to come from.
	serve := func(peer string) string {
		srv := httpserver.New(httpserver.Options{
			Builder:     mcpserver.New(mcpserver.Options{Name: "hamcp", Version: "test", Registry: toolkit.NewRegistry()}),
			Verifier:    authn.Chain{tokenSet{"tok-a": "grant-a", "tok-b": "grant-b"}},
			MountAuthed: []func(*echo.Group){requestRoutes(m)},
			Logger:      slog.New(slog.DiscardHandler),
		})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		base := "http://" + ln.Addr().String()
		if peer != "" {
			ln = peerListener{ln, &net.TCPAddr{IP: net.ParseIP(peer), Port: 41234}}
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- srv.Serve(ctx, ln, time.Second) }()
		t.Cleanup(func() { cancel(); <-done })
		return base
	}
	do := func(base, token, method, path string, hdr map[string]string) (int, string) {
		req, _ := http.NewRequest(method, base+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	web := serve("")
	call := func(token, method, path string) (int, string) {
		// only believed from the Supervisor's address
		return do(web, token, method, path, map[string]string{"X-Remote-User-Id": "u-alex"})
	}
	tests := []struct {
		name, token, method, path string
		want                      int
	}{
		{"no token, ingress header from elsewhere", "", http.MethodPost, "/api/permissions/requests/" + reqA + "/approve", http.StatusUnauthorized},
		{"b denies a's request", "tok-b", http.MethodPost, "/api/permissions/requests/" + reqA + "/deny", http.StatusForbidden},
		{"b approves a's request", "tok-b", http.MethodPost, "/api/permissions/requests/" + reqA + "/approve", http.StatusForbidden},
		{"a approves its own request", "tok-a", http.MethodPost, "/api/permissions/requests/" + reqA + "/approve", http.StatusForbidden},
		{"unknown request", "tok-a", http.MethodPost, "/api/permissions/requests/req_0000/deny", http.StatusNotFound},
	}
	for _, tc := range tests {
		if code, body := call(tc.token, tc.method, tc.path); code != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, code, body, tc.want)
		}
	}
	code, body := call("tok-a", http.MethodGet, "/api/permissions/requests")
	if code != 200 || !strings.Contains(body, reqA) || strings.Contains(body, reqB) || strings.Contains(body, "session-of") {
		t.Fatalf("a's list: %d %s", code, body)
	}

	// The Supervisor's address naming an HA user is no one here: not a way in, and not an approver.
	fromSupervisor := serve("172.30.32.2")
	ingress := func(method, path string) (int, string) {
		return do(fromSupervisor, "", method, path, map[string]string{"X-Remote-User-Id": "u-alex", "X-Remote-User-Name": "Alex"})
	}
	for _, path := range []string{"/api/permissions/requests/" + reqB + "/approve", "/mcp"} {
		if code, body := ingress(http.MethodPost, path); code != http.StatusUnauthorized {
			t.Fatalf("ingress headers on the MCP port, %s: %d %s", path, code, body)
		}
	}
	var re *permission.RequiredError
	if err := m.Authorize(context.Background(), permission.Request{SessionKey: "mcp:session-of-b", Tool: "ha_execute_command", Category: permission.Command}); !errors.As(err, &re) {
		t.Fatalf("request b was answered: %v", err)
	}
	// The owner withdraws its own request.
	if code, body := call("tok-a", http.MethodPost, "/api/permissions/requests/"+reqA+"/deny"); code != 200 {
		t.Fatalf("a denies its own request: %d %s", code, body)
	}
	var de *permission.DeniedError
	if err := m.Authorize(context.Background(), permission.Request{SessionKey: "mcp:session-of-a", Tool: "ha_execute_command", Category: permission.Command}); !errors.As(err, &de) {
		t.Fatalf("after the owner's denial: %v", err)
	}
}

// peerListener makes its connections appear to come from peer, as the Supervisor's ingress proxy's
// do in the add-on.
type peerListener struct {
	net.Listener
	peer net.Addr
}

func (l peerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return peerConn{c, l.peer}, nil
}

type peerConn struct {
	net.Conn
	peer net.Addr
}

func (c peerConn) RemoteAddr() net.Addr { return c.peer }

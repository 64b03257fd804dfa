package httpserver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hamcp/hamcp/src/authn"
	"github.com/hamcp/hamcp/src/mcpserver"
	"github.com/hamcp/hamcp/src/toolkit"
)

type bigArgs struct {
	KB int `json:"kb" validate:"min=1,max=90"`
}

// TestUnreadStreamIsEnded reproduces a hostile client the fault tests found: it opens a
// legacy SSE stream, never reads it, and POSTs calls whose answers queue up behind it (the
// transport accepts every POST with 202). Six such streams held 150 MB; now the first write that
// cannot reach the client within StreamWriteTimeout ends the stream and its session, so later
// POSTs are refused and the queued answers are freed.
func TestUnreadStreamIsEnded(t *testing.T) {
	t.Parallel()
	reg := toolkit.NewRegistry()
	reg.Add(toolkit.Define(toolkit.Spec[bigArgs, map[string]string]{
		Name: "t_big", Toolset: "t", Description: "answers kb kilobytes", ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a bigArgs) (map[string]string, error) {
			return map[string]string{"data": strings.Repeat("x", a.KB<<10)}, nil
		},
	}))
	s := New(Options{Builder: mcpserver.New(mcpserver.Options{Name: "t", Version: "1", Registry: reg}),
		Verifier: credentialVerifier{}, StreamWriteTimeout: 200 * time.Millisecond})
	base := serve(t, s)
	endpoint, _ := openSSE(t, base, "full", nil) // read up to the endpoint event, then never again
	if r := post(t, endpoint, "full", initCall, nil); r.StatusCode != http.StatusAccepted {
		t.Fatalf("initialize: %d", r.StatusCode)
	}
	post(t, endpoint, "full", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil)
	deadline := time.Now().Add(10 * time.Second)
	accepted := 0
	for i := 0; ; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("after %d answers (%d MB) queued behind an unread stream, its session still takes more", accepted, accepted*80>>10)
		}
		resp := post(t, endpoint, "full", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t_big","arguments":{"kb":80}}}`, i+2), nil)
		if resp.StatusCode != http.StatusAccepted {
			// 404 once hamcp forgot the session; just before, the SDK's own "session closed" (400).
			if msg := jsonError(t, resp); resp.StatusCode != http.StatusNotFound && !(resp.StatusCode == http.StatusBadRequest && strings.Contains(msg, "session closed")) {
				t.Fatalf("POST to an ended session: %d %q, want 404 or the SDK's 400 session closed", resp.StatusCode, msg)
			}
			t.Logf("the session ended after %d answers were queued (%d KB)", accepted, accepted*80)
			break
		}
		resp.Body.Close()
		accepted++
	}
	// The stream's place under the session caps is free again once its GET has returned.
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		s.sessions.mu.Lock()
		n := len(s.sessions.bound)
		s.sessions.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Fatalf("%d sessions still bound 5 s after the stream ended", n)
		}
	}
}

// TestOversizeBodiesNameTheLimit: a body over body_limit_kb is refused with 413 and a message that
// names the option, whether it declares its length (refused before it is read) or is chunked
// (refused when reading passes the limit); the connection is closed rather than drained.
func TestOversizeBodiesNameTheLimit(t *testing.T) {
	t.Parallel()
	base := startSecured(t, Options{BodyLimit: 64 << 10})
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", 100<<10) + `"}}`
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			var body io.Reader = strings.NewReader(big)
			if chunked {
				body = io.MultiReader(strings.NewReader(big)) // no length: sent chunked
			}
			req, _ := http.NewRequest(http.MethodPost, base+"/mcp", body)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer full")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d, want 413", resp.StatusCode)
			}
			if msg := jsonError(t, resp); !strings.Contains(msg, "64 KB (body_limit_kb)") {
				t.Fatalf("message %q does not name the limit and its option", msg)
			}
			if !resp.Close {
				t.Error("the connection is kept open after a refused body")
			}
		})
	}
}

// TestShutdownEndsOpenSessions: sessions whose clients never sent DELETE are ended when the
// server stops, with their grants (the end hooks run), instead of outliving it in the SDK.
func TestShutdownEndsOpenSessions(t *testing.T) {
	t.Parallel()
	b := mcpserver.New(mcpserver.Options{Name: "t", Version: "1", Registry: callRegistry()})
	ended := make(chan string, 8)
	b.OnSessionEnded(func(key string) { ended <- key })
	base, stop := serveStoppable(t, New(Options{Builder: b, Verifier: scopedTokens{"full": {authn.ScopeFull}}}))
	sids := []string{initSession(t, base, "full"), initSession(t, base, "full")}
	if n := b.OpenSessions(); n != 2 {
		t.Fatalf("%d sessions open, want 2", n)
	}
	if err := stop(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	deadline := time.After(5 * time.Second)
	for range sids {
		select {
		case <-ended:
		case <-deadline:
			t.Fatalf("%d sessions still open after the server stopped", b.OpenSessions())
		}
	}
	if n := b.OpenSessions(); n != 0 {
		t.Fatalf("%d sessions open after the server stopped", n)
	}
}

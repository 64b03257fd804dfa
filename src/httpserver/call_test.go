package httpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/hamcp/hamcp/src/authn"
	"github.com/hamcp/hamcp/src/mcpserver"
	"github.com/hamcp/hamcp/src/toolkit"
)

type echoArgs struct {
	Text  string `json:"text" validate:"required,max=64"`
	Count int    `json:"count,omitempty" validate:"omitempty,min=1,max=3"`
}

type echoOut struct {
	Text  string   `json:"text"`
	Parts []string `json:"parts"`
	Token string   `json:"token,omitempty"`
}

// callRegistry is the tools the single-POST comparison calls: answers with HTML characters and
// nested values, a tool error, a privileged category with no gate, a tool read-only tokens do
// not have.
func callRegistry() *toolkit.Registry {
	reg := toolkit.NewRegistry()
	reg.Add(
		toolkit.Define(toolkit.Spec[echoArgs, echoOut]{
			Name: "t_echo", Toolset: "t", Description: "echoes", ReadOnly: true,
			Handler: func(ctx context.Context, c *toolkit.Call, a echoArgs) (echoOut, error) {
				out := echoOut{Text: "<b>" + a.Text + "</b> & more", Parts: []string{}}
				for range a.Count {
					out.Parts = append(out.Parts, a.Text)
				}
				if ti := c.TokenInfo(); ti != nil {
					out.Token = ti.UserID
				}
				return out, nil
			},
		}),
		toolkit.Define(toolkit.Spec[echoArgs, echoOut]{
			Name: "t_fail", Toolset: "t", Description: "fails", ReadOnly: true,
			Handler: func(ctx context.Context, c *toolkit.Call, a echoArgs) (echoOut, error) {
				return echoOut{}, errors.New("the backend said no: " + a.Text)
			},
		}),
		toolkit.Define(toolkit.Spec[echoArgs, echoOut]{
			Name: "t_write", Toolset: "t", Description: "writes",
			Handler: func(ctx context.Context, c *toolkit.Call, a echoArgs) (echoOut, error) {
				return echoOut{Text: "wrote " + a.Text, Parts: []string{}}, nil
			},
		}),
		toolkit.Define(toolkit.Spec[echoArgs, echoOut]{
			Name: "t_files", Toolset: "t", Description: "needs a grant", ReadOnly: true, Category: toolkit.Filesystem,
			Summary: func(a echoArgs) string { return a.Text },
			Handler: func(ctx context.Context, c *toolkit.Call, a echoArgs) (echoOut, error) {
				return echoOut{Text: "read " + a.Text}, nil
			},
		}),
	)
	return reg
}

type scopedTokens map[string][]string

func (s scopedTokens) Verify(ctx context.Context, token string) (*auth.TokenInfo, error) {
	if scopes, ok := s[token]; ok {
		return &auth.TokenInfo{UserID: "user-" + token, Scopes: scopes}, nil
	}
	return nil, authn.ErrInvalidToken
}

// hamcpAndSDK serves one Builder twice: with hamcp's own call paths, and with every call through
// the go-sdk (what they replace). Tokens: "full" and "read" (read-only).
func hamcpAndSDK(t *testing.T) (hamcpBase, sdkBase string) {
	b := mcpserver.New(mcpserver.Options{Name: "t", Version: "1", Registry: callRegistry()})
	tokens := scopedTokens{"full": {authn.ScopeFull}, "read": {authn.ScopeReadOnly}}
	sdk := New(Options{Builder: b, Verifier: tokens})
	sdk.viaSDK = true
	return serve(t, New(Options{Builder: b, Verifier: tokens})), serve(t, sdk)
}

func callBody(id, name, args string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
}

// TestSinglePOSTCallMatchesTheSDK sends the same tools/call POSTs to hamcp's own single-POST
// dispatcher and to the go-sdk's stateless handler it replaces, on servers built from one
// Builder, and requires the same status, content type and JSON answer.
func TestSinglePOSTCallMatchesTheSDK(t *testing.T) {
	t.Parallel()
	fastBase, sdkBase := hamcpAndSDK(t)
	fastURL, sdkURL := fastBase+"/mcp", sdkBase+"/mcp"
	call := callBody
	tests := []struct {
		name, token, body string
		hdr               map[string]string
	}{
		{"structured answer with HTML characters", "full", call("1", "t_echo", `{"text":"a<b>&'c","count":3}`), nil},
		{"string id", "full", call(`"req-7"`, "t_echo", `{"text":"x"}`), nil},
		{"large integer id", "full", call("9007199254740993", "t_echo", `{"text":"x"}`), nil},
		{"progress token and meta", "full", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"progressToken":"p1"},"name":"t_echo","arguments":{"text":"m"}}}`, nil},
		{"no arguments", "full", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t_echo"}}`, nil},
		{"null arguments", "full", call("3", "t_echo", "null"), nil},
		{"invalid argument", "full", call("4", "t_echo", `{"text":"x","count":9}`), nil},
		{"unknown argument", "full", call("4", "t_echo", `{"text":"x","colour":"red"}`), nil},
		{"arguments not an object", "full", call("4", "t_echo", `[1,2]`), nil},
		{"tool error", "full", call("5", "t_fail", `{"text":"boom"}`), nil},
		{"unknown tool", "full", call("6", "t_nope", `{}`), nil},
		{"write tool with a read-only token", "read", call("7", "t_write", `{"text":"x"}`), nil},
		{"write tool with a full token", "full", call("7", "t_write", `{"text":"x"}`), nil},
		{"category with no gate", "full", call("8", "t_files", `{"text":"/config"}`), nil},
		{"2025-06-18 header", "full", call("9", "t_echo", `{"text":"v"}`), map[string]string{"MCP-Protocol-Version": "2025-06-18"}},
		{"2025-11-25 header", "full", call("9", "t_echo", `{"text":"v"}`), map[string]string{"MCP-Protocol-Version": "2025-11-25"}},
		{"unicode escapes", "full", call("10", "t_echo", `{"text":"\u00e9\u2028"}`), nil},
		// Keys are read case-sensitively, as the SDK reads them.
		{"name key in capitals", "full", `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"Name":"t_echo","arguments":{"text":"x"}}}`, nil},
		{"arguments key in capitals", "full", `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"t_echo","Arguments":{"text":"x"}}}`, nil},
		{"name not a string", "full", `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":5}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fs, fc, fb := answer(t, fastURL, tt.token, tt.body, tt.hdr)
			ss, sc, sb := answer(t, sdkURL, tt.token, tt.body, tt.hdr)
			if fs != ss || fc != sc {
				t.Fatalf("status/type: hamcp %d %q, go-sdk %d %q\nhamcp: %s\ngo-sdk: %s", fs, fc, ss, sc, fb, sb)
			}
			if tt.name == "large integer id" {
				// The go-sdk reads ids through float64 and answers 2^53+1 as 2^53; JSON-RPC wants
				// the id back as sent, which hamcp does.
				if !bytes.Contains(fb, []byte(`"id":9007199254740993,`)) {
					t.Fatalf("the id is not echoed as sent: %s", fb)
				}
				sb = bytes.Replace(sb, []byte(`"id":9007199254740992,`), []byte(`"id":9007199254740993,`), 1)
			}
			if !sameJSON(fb, sb) {
				t.Fatalf("answers differ\nhamcp:  %s\ngo-sdk: %s", fb, sb)
			}
			if !bytes.Contains(fb, []byte(`"jsonrpc":"2.0"`)) {
				t.Fatalf("not a JSON-RPC answer: %s", fb)
			}
		})
	}
}

func answer(t *testing.T, url, token, body string, hdr map[string]string) (int, string, []byte) {
	t.Helper()
	resp := post(t, url, token, body, hdr)
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), bytes.TrimSpace(b)
}

func sameJSON(a, b []byte) bool {
	var x, y any
	da, db := json.NewDecoder(bytes.NewReader(a)), json.NewDecoder(bytes.NewReader(b))
	da.UseNumber()
	db.UseNumber()
	if da.Decode(&x) != nil || db.Decode(&y) != nil {
		return bytes.Equal(a, b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// BenchmarkSinglePOSTCall is one sessionless tools/call over loopback HTTP, through hamcp's
// dispatcher and through the go-sdk's stateless handler.
func BenchmarkSinglePOSTCall(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t_echo","arguments":{"text":"hello","count":2}}}`)
	for _, viaSDK := range []bool{false, true} {
		name := "hamcp"
		if viaSDK {
			name = "go-sdk"
		}
		b.Run(name, func(b *testing.B) {
			bld := mcpserver.New(mcpserver.Options{Name: "t", Version: "1", Registry: callRegistry()})
			s := New(Options{Builder: bld, Verifier: scopedTokens{"full": {authn.ScopeFull}}})
			s.viaSDK = viaSDK
			url := serve(b, s) + "/mcp"
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer full")
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
		})
	}
}

// sessionAnswer posts body to session sid and returns the JSON-RPC answer, read from a JSON body
// or from the event stream's message, and whether it came as plain JSON (hamcp's own answer).
func sessionAnswer(t *testing.T, url, token, sid, body string, extra map[string]string) (status int, answer []byte, plainJSON bool) {
	t.Helper()
	hdr := withHdr(map[string]string{sessionHeader: sid})
	for k, v := range extra {
		hdr[k] = v
	}
	resp := post(t, url, token, body, hdr)
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	ct := resp.Header.Get("Content-Type")
	if bytes.HasPrefix([]byte(ct), []byte("text/event-stream")) {
		for _, line := range bytes.Split(b, []byte("\n")) {
			if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok && bytes.Contains(data, []byte(`"id"`)) {
				return resp.StatusCode, data, false
			}
		}
		t.Fatalf("event stream without an answer: %s", b)
	}
	return resp.StatusCode, bytes.TrimSpace(b), true
}

// TestSessionCallMatchesTheSDK runs the same tools/call in a session on hamcp's in-session path
// and on the go-sdk's: standalone reads are answered by hamcp as plain JSON with the SDK's answer;
// everything else (writes, a progress token, unknown tools, another protocol version) still goes
// through the SDK's session.
func TestSessionCallMatchesTheSDK(t *testing.T) {
	t.Parallel()
	fastBase, sdkBase := hamcpAndSDK(t)
	call := callBody
	tests := []struct {
		name, token, body string
		hdr               map[string]string
		hamcp             bool // answered as plain JSON: by hamcp's in-session path (or a refusal)
	}{
		{"standalone read", "full", call("1", "t_echo", `{"text":"a<b>","count":2}`), nil, true},
		{"standalone read, read-only token", "read", call("2", "t_echo", `{"text":"r"}`), nil, true},
		{"string id", "full", call(`"s-1"`, "t_echo", `{"text":"x"}`), nil, true},
		{"tool error", "full", call("3", "t_fail", `{"text":"boom"}`), nil, true},
		{"invalid argument", "full", call("4", "t_echo", `{"text":"x","count":9}`), nil, true},
		{"write tool", "full", call("5", "t_write", `{"text":"x"}`), nil, false},
		{"write tool, read-only token", "read", call("5", "t_write", `{"text":"x"}`), nil, false},
		{"category tool", "full", call("6", "t_files", `{"text":"/config"}`), nil, false},
		{"unknown tool", "full", call("7", "t_nope", `{}`), nil, false},
		{"progress token", "full", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"_meta":{"progressToken":1},"name":"t_echo","arguments":{"text":"p"}}}`, nil, false},
		// The SDK refuses it (its plain-text error, made JSON-RPC by rpcErrorWriter), as before.
		{"only event streams accepted", "full", call("9", "t_echo", `{"text":"x"}`), map[string]string{"Accept": "text/event-stream"}, true},
	}
	sessions := map[string][2]string{}
	for _, tok := range []string{"full", "read"} {
		sessions[tok] = [2]string{initSession(t, fastBase, tok), initSession(t, sdkBase, tok)}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sid := sessions[tt.token]
			fs, fb, plain := sessionAnswer(t, fastBase+"/mcp", tt.token, sid[0], tt.body, tt.hdr)
			ss, sb, _ := sessionAnswer(t, sdkBase+"/mcp", tt.token, sid[1], tt.body, tt.hdr)
			if plain != tt.hamcp {
				t.Fatalf("answered by hamcp: %v, want %v: %s", plain, tt.hamcp, fb)
			}
			if fs != ss || !sameJSON(fb, sb) {
				t.Fatalf("answers differ\nhamcp:  %d %s\ngo-sdk: %d %s", fs, fb, ss, sb)
			}
		})
	}
}

// TestSessionCallKeepsTheSDKsIdleTimerAlive: the SDK closes a session it has not served for 30
// minutes, and calls hamcp answers itself do not reach it, so a session busy with nothing but
// reads sends one of them through the SDK every few minutes.
func TestSessionCallKeepsTheSDKsIdleTimerAlive(t *testing.T) {
	t.Parallel()
	b := mcpserver.New(mcpserver.Options{Name: "t", Version: "1", Registry: callRegistry()})
	s := New(Options{Builder: b, Verifier: scopedTokens{"full": {authn.ScopeFull}}})
	now := time.Now()
	var mu sync.Mutex
	s.sessions.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	base := serve(t, s)
	sid := initSession(t, base, "full")
	read := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t_echo","arguments":{"text":"x"}}}`
	steps := []struct {
		after time.Duration
		hamcp bool
	}{
		{0, true},
		{sdkRefresh - time.Second, true},
		{2 * time.Second, false}, // past the refresh: this one goes through the SDK…
		{time.Second, true},      // …which restarted its timer
	}
	for i, st := range steps {
		advance(st.after)
		status, body, plain := sessionAnswer(t, base+"/mcp", "full", sid, read, nil)
		if status != http.StatusOK || plain != st.hamcp || !bytes.Contains(body, []byte(`"result"`)) {
			t.Fatalf("step %d: status %d, answered by hamcp %v (want %v): %s", i, status, plain, st.hamcp, body)
		}
	}
}

// FuzzSinglePOSTCall feeds any tool name and arguments to both single-POST paths of one Builder
// (hamcp's dispatcher and the go-sdk's stateless handler) and requires the same answer.
func FuzzSinglePOSTCall(f *testing.F) {
	for _, seed := range [][2]string{
		{"t_echo", `{"text":"a<b>&","count":3}`},
		{"t_echo", `{"text":"x","count":9}`},
		{"t_echo", `{"text":1}`},
		{"t_echo", `[1]`},
		{"t_echo", `null`},
		{"t_fail", `{"text":"boom"}`},
		{"t_write", `{"text":"x","extra":{"deep":[1,2,{"a":null}]}}`},
		{"t_files", `{"text":"/config"}`},
		{"t_nope", `{}`},
		{"", `{}`},
		{"t_echo", `{"text":"\u00e9\ud800"}`},
	} {
		f.Add(seed[0], seed[1])
	}
	var once sync.Once
	var fastURL, sdkURL string
	f.Fuzz(func(t *testing.T, name, args string) {
		if !json.Valid([]byte(args)) {
			return // parseBody answers those before either path (FuzzParseBody)
		}
		once.Do(func() {
			// Servers for the whole fuzz run: serve's cleanup would stop them after the first input.
			b := mcpserver.New(mcpserver.Options{Name: "t", Version: "1", Registry: callRegistry()})
			tokens := scopedTokens{"full": {authn.ScopeFull}}
			fast, sdk := New(Options{Builder: b, Verifier: tokens}), New(Options{Builder: b, Verifier: tokens})
			sdk.viaSDK = true
			fastURL, sdkURL = serveForever(fast)+"/mcp", serveForever(sdk)+"/mcp"
		})
		nameJSON, _ := json.Marshal(name)
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":` + string(nameJSON) + `,"arguments":` + args + `}}`
		fs, fc, fb := fuzzPost(t, fastURL, body)
		ss, sc, sb := fuzzPost(t, sdkURL, body)
		if fs != ss || fc != sc || !sameJSON(fb, sb) {
			t.Fatalf("answers differ for %s\nhamcp:  %d %q %s\ngo-sdk: %d %q %s", body, fs, fc, fb, ss, sc, sb)
		}
	})
}

var fuzzClient = &http.Client{Timeout: 5 * time.Second}

// fuzzPost is answer with a deadline: an input that hangs a path is a finding.
func fuzzPost(t *testing.T, url, body string) (int, string, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer full")
	resp, err := fuzzClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: reading the answer: %v", body, err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), bytes.TrimSpace(b)
}

// serveForever runs s on a loopback port for the rest of the process.
func serveForever(s *Server) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go func() { _ = s.Serve(context.Background(), ln, time.Second) }()
	return "http://" + ln.Addr().String()
}

package httpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

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

// callRegistry is the tools the comparisons call: answers with HTML characters and nested
// values, a tool error, a privileged category with no gate, a tool read-only tokens do not have.
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
		return &auth.TokenInfo{UserID: "user-" + token, Scopes: scopes, Expiration: time.Now().Add(time.Hour)}, nil
	}
	return nil, authn.ErrInvalidToken
}

var testTokens = scopedTokens{"full": {authn.ScopeFull}, "read": {authn.ScopeReadOnly}}

// methodsSeen records, through an SDK receiving middleware, every method the SDK dispatched.
type methodsSeen struct {
	mu  sync.Mutex
	all []string
}

func (m *methodsSeen) ext(s *mcp.Server, _ bool) {
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			m.mu.Lock()
			m.all = append(m.all, method)
			m.mu.Unlock()
			return next(ctx, method, req)
		}
	})
}

func (m *methodsSeen) count(method string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, x := range m.all {
		if x == method {
			n++
		}
	}
	return n
}

func testBuilder(seen *methodsSeen) *mcpserver.Builder {
	o := mcpserver.Options{Name: "t", Version: "1", Registry: callRegistry(),
		Completion: func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{"a"}}}, nil
		}}
	if seen != nil {
		o.Extensions = []mcpserver.Extension{seen.ext}
	}
	return mcpserver.New(o)
}

// hamcpAndSDK serves one Builder twice: through hamcp's /mcp, and through the go-sdk's own
// stateless JSON handler with the same tokens — the reference hamcp's single POST must answer
// like. Tokens: "full" and "read" (read-only).
func hamcpAndSDK(t testing.TB, b *mcpserver.Builder) (hamcpURL, sdkURL string) {
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		return b.Server(authn.ReadOnly(auth.TokenInfoFromContext(r.Context())))
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	verify := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		ti, err := testTokens.Verify(ctx, token)
		if err != nil {
			return nil, auth.ErrInvalidToken
		}
		return ti, nil
	}
	ref := httptest.NewServer(auth.RequireBearerToken(verify, nil)(h))
	t.Cleanup(ref.Close)
	return serve(t, New(Options{Builder: b, Verifier: testTokens})) + "/mcp", ref.URL
}

func callBody(id, name, args string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
}

func rpc(id, method, params string) string {
	if params == "" {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `"}`
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`
}

var jsonOnly = map[string]string{"Accept": "application/json"}

// frontCases are the messages hamcp and the SDK must answer alike: every method the server
// answers, and every class of error a method or its params can cause.
var frontCases = []struct {
	name, token, body string
	hdr               map[string]string
}{
	{"structured answer with HTML characters", "full", callBody("1", "t_echo", `{"text":"a<b>&'c","count":3}`), nil},
	{"string id", "full", callBody(`"req-7"`, "t_echo", `{"text":"x"}`), nil},
	{"large integer id", "full", callBody("9007199254740993", "t_echo", `{"text":"x"}`), nil},
	{"progress token and meta", "full", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"progressToken":"p1"},"name":"t_echo","arguments":{"text":"m"}}}`, nil},
	{"no arguments", "full", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t_echo"}}`, nil},
	{"null arguments", "full", callBody("3", "t_echo", "null"), nil},
	{"invalid argument", "full", callBody("4", "t_echo", `{"text":"x","count":9}`), nil},
	{"unknown argument", "full", callBody("4", "t_echo", `{"text":"x","colour":"red"}`), nil},
	{"arguments not an object", "full", callBody("4", "t_echo", `[1,2]`), nil},
	{"tool error", "full", callBody("5", "t_fail", `{"text":"boom"}`), nil},
	{"unknown tool", "full", callBody("6", "t_nope", `{}`), nil},
	{"write tool with a read-only token", "read", callBody("7", "t_write", `{"text":"x"}`), nil},
	{"write tool with a full token", "full", callBody("7", "t_write", `{"text":"x"}`), nil},
	{"category with no gate", "full", callBody("8", "t_files", `{"text":"/config"}`), nil},
	{"2025-06-18 header", "full", callBody("9", "t_echo", `{"text":"v"}`), map[string]string{"MCP-Protocol-Version": "2025-06-18"}},
	{"2025-11-25 header", "full", callBody("9", "t_echo", `{"text":"v"}`), map[string]string{"MCP-Protocol-Version": "2025-11-25"}},
	{"unicode escapes", "full", callBody("10", "t_echo", `{"text":"\u00e9\u2028"}`), nil},
	{"name key in capitals", "full", `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"Name":"t_echo","arguments":{"text":"x"}}}`, nil},
	{"arguments key in capitals", "full", `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"t_echo","Arguments":{"text":"x"}}}`, nil},
	{"name not a string", "full", `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":5}}`, nil},
	{"tools/call without params", "full", rpc("14", "tools/call", ""), nil},
	{"tools/call with null params", "full", rpc("14", "tools/call", "null"), nil},
	// From a client that takes JSON only: one that also takes event streams gets a session.
	{"initialize", "full", rpc("20", "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`), jsonOnly},
	{"initialize, old version", "full", rpc("20", "initialize", `{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`), jsonOnly},
	{"initialize without params", "full", rpc("20", "initialize", ""), jsonOnly},
	{"ping", "full", rpc("21", "ping", ""), nil},
	{"ping with params", "full", rpc("21", "ping", `{}`), nil},
	{"tools/list", "full", rpc("22", "tools/list", ""), nil},
	{"tools/list, read-only token", "read", rpc("22", "tools/list", `{}`), nil},
	{"tools/list with a bad cursor", "full", rpc("22", "tools/list", `{"cursor":"nope"}`), nil},
	{"resources/list", "full", rpc("23", "resources/list", ""), nil},
	{"resources/templates/list", "full", rpc("24", "resources/templates/list", ""), nil},
	{"resources/read of nothing", "full", rpc("25", "resources/read", `{"uri":"hamcp://nope"}`), nil},
	{"prompts/list", "full", rpc("26", "prompts/list", ""), nil},
	{"prompts/get of nothing", "full", rpc("27", "prompts/get", `{"name":"nope"}`), nil},
	{"completion/complete", "full", rpc("28", "completion/complete", `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""}}`), nil},
	{"logging/setLevel", "full", rpc("29", "logging/setLevel", `{"level":"debug"}`), nil},
	{"logging/setLevel, bad level", "full", rpc("29", "logging/setLevel", `{"level":"loud"}`), nil},
	{"params not an object for the method", "full", rpc("30", "tools/list", `{"cursor":5}`), nil},
	{"notifications/initialized", "full", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil},
	{"notifications/cancelled", "full", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, nil},
}

// TestSinglePOSTMatchesTheSDK sends each message to hamcp's /mcp and to the go-sdk's own
// stateless handler, built from one Builder, and requires the same answer. The SDK's HTTP layer
// writes some refusals as plain text (an unknown method, a request without its id); on /mcp every
// answer is JSON-RPC, so there the JSON-RPC error must carry the SDK's words.
func TestSinglePOSTMatchesTheSDK(t *testing.T) {
	t.Parallel()
	hamcpURL, sdkURL := hamcpAndSDK(t, testBuilder(nil))
	for _, tt := range append(slices.Clone(frontCases), []struct {
		name, token, body string
		hdr               map[string]string
	}{
		{"unknown method", "full", rpc("40", "tools/frobnicate", `{}`), nil},
		{"unknown notification", "full", `{"jsonrpc":"2.0","method":"notifications/frobnicated"}`, nil},
		{"a request sent as a notification", "full", `{"jsonrpc":"2.0","method":"tools/list"}`, nil},
		{"a notification sent with an id", "full", rpc("41", "notifications/initialized", ""), nil},
	}...) {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			hs, hc, hb := answer(t, hamcpURL, tt.token, tt.body, withHdr(tt.hdr))
			sdkHdr := withHdr(tt.hdr)
			sdkHdr["Accept"] = "application/json, text/event-stream" // the SDK's handler needs both
			ss, sc, sb := answer(t, sdkURL, tt.token, tt.body, sdkHdr)
			if strings.HasPrefix(sc, "text/plain") {
				// The SDK's HTTP layer refused it before dispatch; on /mcp that is a JSON-RPC
				// error of the same class: method not found, or an invalid request in its words.
				var e struct {
					Error struct {
						Code    int    `json:"code"`
						Message string `json:"message"`
					} `json:"error"`
				}
				words := strings.TrimSpace(string(sb))
				ok := hc == "application/json" && json.Unmarshal(hb, &e) == nil &&
					(e.Error.Code == codeInvalidRequest && strings.Contains(e.Error.Message, words) ||
						e.Error.Code == codeMethodNotFound && strings.Contains(words, "not handled"))
				if !ok {
					t.Fatalf("the SDK refused with %d %q; want a JSON-RPC error saying so\nhamcp: %d %s", ss, sb, hs, hb)
				}
				return
			}
			if hs != ss || hc != sc && !(hs == http.StatusAccepted && hb == nil && sb == nil) {
				t.Fatalf("status/type: hamcp %d %q, go-sdk %d %q\nhamcp: %s\ngo-sdk: %s", hs, hc, ss, sc, hb, sb)
			}
			if tt.name == "large integer id" {
				// The go-sdk reads ids through float64 and answers 2^53+1 as 2^53; JSON-RPC wants
				// the id back as sent, which hamcp does.
				if !bytes.Contains(hb, []byte(`"id":9007199254740993`)) {
					t.Fatalf("the id is not echoed as sent: %s", hb)
				}
				sb = bytes.Replace(sb, []byte(`"id":9007199254740992`), []byte(`"id":9007199254740993`), 1)
			}
			if !sameJSON(hb, sb) && !sameMethodNotFound(hb, sb) {
				t.Fatalf("answers differ\nhamcp:  %s\ngo-sdk: %s", hb, sb)
			}
		})
	}
}

// TestEveryMessageReachesTheSDK: the SDK's receiving middleware sees each message hamcp is sent,
// sessionless or in a session, the hot path included.
func TestEveryMessageReachesTheSDK(t *testing.T) {
	t.Parallel()
	seen := &methodsSeen{}
	b := testBuilder(seen)
	base := serve(t, New(Options{Builder: b, Verifier: testTokens}))
	sid := initSession(t, base, "full")
	for _, tt := range []struct {
		method, body string
		session      bool
	}{
		{"tools/call", callBody("1", "t_echo", `{"text":"x"}`), false},
		{"tools/call", callBody("1", "t_echo", `{"text":"x"}`), true},
		{"tools/list", rpc("2", "tools/list", ""), false},
		{"tools/list", rpc("2", "tools/list", ""), true},
		{"ping", rpc("3", "ping", ""), false},
		{"initialize", rpc("4", "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`), false},
	} {
		before := seen.count(tt.method)
		hdr := map[string]string{}
		if tt.session {
			hdr = withHdr(map[string]string{sessionHeader: sid})
		}
		resp := post(t, base+"/mcp", "full", tt.body, hdr)
		io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s (session %v): status %d", tt.method, tt.session, resp.StatusCode)
		}
		if seen.count(tt.method) != before+1 {
			t.Fatalf("%s (session %v): the SDK's middleware did not see it", tt.method, tt.session)
		}
	}
}

// TestSessionlessCallsDoNotMix: concurrent sessionless calls from different tokens share the
// SDK session that serves them, and each still gets its own answer, id and identity.
func TestSessionlessCallsDoNotMix(t *testing.T) {
	t.Parallel()
	hamcpURL, _ := hamcpAndSDK(t, testBuilder(nil))
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok := []string{"full", "read"}[i%2]
			text := strings.Repeat("x", 1+i%20)
			body := callBody(`"same-id"`, "t_echo", `{"text":"`+text+`"}`)
			req, _ := http.NewRequest(http.MethodPost, hamcpURL, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+tok)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			var out struct {
				ID     string `json:"id"`
				Result struct {
					Structured echoOut `json:"structuredContent"`
				} `json:"result"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
				errs <- err
				return
			}
			if out.ID != "same-id" || out.Result.Structured.Text != "<b>"+text+"</b> & more" || out.Result.Structured.Token != "user-"+tok {
				errs <- errors.New("mixed answer: " + out.ID + " " + out.Result.Structured.Text + " " + out.Result.Structured.Token)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// sameMethodNotFound reports whether two answers are the same -32601 for the same id and method:
// the SDK words it one way when its HTTP layer refuses the method before dispatch and another
// when its dispatcher does.
func sameMethodNotFound(a, b []byte) bool {
	type answer struct {
		ID    json.RawMessage `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	var x, y answer
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil || x.Error.Code != codeMethodNotFound || y.Error.Code != codeMethodNotFound {
		return false
	}
	_, mx, _ := strings.Cut(x.Error.Message, `"`)
	_, my, _ := strings.Cut(y.Error.Message, `"`)
	mx, _, _ = strings.Cut(mx, `"`)
	my, _, _ = strings.Cut(my, `"`)
	return string(x.ID) == string(y.ID) && mx != "" && mx == my
}

func answer(t *testing.T, url, token, body string, hdr map[string]string) (int, string, []byte) {
	t.Helper()
	resp := post(t, url, token, body, hdr)
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		b = nil
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
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

// BenchmarkSinglePOSTCall is one sessionless tools/call over loopback HTTP, through hamcp's /mcp
// and through the go-sdk's own stateless handler.
func BenchmarkSinglePOSTCall(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t_echo","arguments":{"text":"hello","count":2}}}`)
	hamcpURL, sdkURL := hamcpAndSDK(b, testBuilder(nil))
	for _, p := range []struct{ name, url string }{{"hamcp", hamcpURL}, {"go-sdk", sdkURL}} {
		b.Run(p.name, func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodPost, p.url, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
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

// FuzzSinglePOSTCall feeds any method, tool name and arguments to hamcp's /mcp and to the go-sdk's
// stateless handler of one Builder and requires the same answer.
func FuzzSinglePOSTCall(f *testing.F) {
	for _, seed := range [][3]string{
		{"tools/call", "t_echo", `{"text":"a<b>&","count":3}`},
		{"tools/call", "t_echo", `{"text":"x","count":9}`},
		{"tools/call", "t_echo", `{"text":1}`},
		{"tools/call", "t_echo", `[1]`},
		{"tools/call", "t_echo", `null`},
		{"tools/call", "t_fail", `{"text":"boom"}`},
		{"tools/call", "t_write", `{"text":"x","extra":{"deep":[1,2,{"a":null}]}}`},
		{"tools/call", "t_files", `{"text":"/config"}`},
		{"tools/call", "t_nope", `{}`},
		{"tools/call", "", `{}`},
		{"tools/call", "t_echo", `{"text":"\u00e9\ud800"}`},
		{"tools/list", "", `{}`},
		{"prompts/get", "p", `{}`},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	var once sync.Once
	var hamcpURL, sdkURL string
	f.Fuzz(func(t *testing.T, method, name, args string) {
		if !json.Valid([]byte(args)) || method == "initialize" {
			return // parseBody answers invalid JSON before either path (FuzzParseBody)
		}
		once.Do(func() {
			// Servers for the whole fuzz run: cleanups would stop them after the first input.
			b := testBuilder(nil)
			hamcpURL = serveForever(New(Options{Builder: b, Verifier: testTokens})) + "/mcp"
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return b.Server(false) },
				&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
			sdkURL = httptest.NewServer(auth.RequireBearerToken(func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
				return testTokens.Verify(ctx, token)
			}, nil)(h)).URL
		})
		methodJSON, _ := json.Marshal(method)
		nameJSON, _ := json.Marshal(name)
		body := `{"jsonrpc":"2.0","id":1,"method":` + string(methodJSON) + `,"params":{"name":` + string(nameJSON) + `,"arguments":` + args + `}}`
		hs, hc, hb := fuzzPost(t, hamcpURL, body)
		ss, sc, sb := fuzzPost(t, sdkURL, body)
		if strings.HasPrefix(sc, "text/plain") {
			if hc != "application/json" || !bytes.Contains(hb, []byte(`"error"`)) {
				t.Fatalf("the SDK refused %s with %d %s; hamcp answered %d %s", body, ss, sb, hs, hb)
			}
			return
		}
		if hs != ss || hc != sc || !sameJSON(hb, sb) && !sameMethodNotFound(hb, sb) {
			t.Fatalf("answers differ for %s\nhamcp:  %d %q %s\ngo-sdk: %d %q %s", body, hs, hc, hb, ss, sc, sb)
		}
	})
}

var fuzzClient = &http.Client{Timeout: 5 * time.Second}

// fuzzPost is answer with a deadline: an input that hangs a path is a finding.
func fuzzPost(t *testing.T, url, body string) (int, string, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
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

// TestOneErrorShapeOnMCP: every refusal on /mcp is a JSON-RPC error object — a body over the
// limit (413), a client over the rate limit or the session cap (429), a forbidden Origin (403), a
// body that did not arrive in time (408) — while the plain JSON endpoints keep their form.
func TestOneErrorShapeOnMCP(t *testing.T) {
	t.Parallel()
	isRPC := func(t *testing.T, status int, body []byte, want int) {
		t.Helper()
		var e struct {
			JSONRPC string `json:"jsonrpc"`
			Error   struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if status != want || json.Unmarshal(body, &e) != nil || e.JSONRPC != "2.0" || e.Error.Code == 0 || e.Error.Message == "" {
			t.Fatalf("status %d (want %d), body %s: want a JSON-RPC error", status, want, body)
		}
	}
	t.Run("413", func(t *testing.T) {
		t.Parallel()
		base := startSecured(t, Options{BodyLimit: 1024})
		s, _, b := answer(t, base+"/mcp", "full", callBody("1", "t_wait", `{"pad":"`+strings.Repeat("x", 4096)+`"}`), nil)
		isRPC(t, s, b, http.StatusRequestEntityTooLarge)
	})
	t.Run("429 rate", func(t *testing.T) {
		t.Parallel()
		base := startSecured(t, Options{RateLimit: 1})
		answer(t, base+"/mcp", "full", rpc("1", "ping", ""), nil)
		s, _, b := answer(t, base+"/mcp", "full", rpc("2", "ping", ""), nil)
		isRPC(t, s, b, http.StatusTooManyRequests)
	})
	t.Run("429 sessions", func(t *testing.T) {
		t.Parallel()
		base := startSecured(t, Options{MaxSessionsPerIP: 1})
		initSession(t, base, "full")
		s, _, b := answer(t, base+"/mcp", "full", initCall, streamHdr)
		isRPC(t, s, b, http.StatusTooManyRequests)
	})
	t.Run("403 origin", func(t *testing.T) {
		t.Parallel()
		base := startSecured(t, Options{})
		s, _, b := answer(t, base+"/mcp", "full", rpc("1", "ping", ""), map[string]string{"Origin": "https://evil.example"})
		isRPC(t, s, b, http.StatusForbidden)
	})
	t.Run("408", func(t *testing.T) {
		t.Parallel()
		base := startSecured(t, Options{BodyReadTimeout: 200 * time.Millisecond})
		c := rawConn(t, base, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer full\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{")
		dribble(t, c)
		closed, raw := closedWithin(c, 20*time.Second)
		if !closed {
			t.Fatal("a slow body is still connected")
		}
		head, body, _ := strings.Cut(raw, "\r\n\r\n")
		if !strings.Contains(head, " 408 ") {
			t.Fatalf("answer: %q", raw)
		}
		if i := strings.Index(body, "{"); i >= 0 {
			body = body[i:]
		}
		body = body[:strings.LastIndex(body, "}")+1]
		isRPC(t, http.StatusRequestTimeout, []byte(body), http.StatusRequestTimeout)
	})
	t.Run("plain JSON endpoints keep their form", func(t *testing.T) {
		t.Parallel()
		base := startSecured(t, Options{})
		resp := do(t, http.MethodGet, base+"/mcp/tools", "full", map[string]string{"Origin": "https://evil.example"})
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusForbidden || !strings.HasPrefix(string(b), `{"error":`) {
			t.Fatalf("GET /mcp/tools from a bad Origin: %d %s", resp.StatusCode, b)
		}
	})
}

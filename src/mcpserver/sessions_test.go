package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/src/toolkit"
)

type noArgs struct{}

// keyBuilder is a Builder whose only tool reports the grant key of the session that calls it,
// and which records every key it is told has ended.
func keyBuilder(t *testing.T) (*Builder, func() []string, <-chan string) {
	t.Helper()
	reg := toolkit.NewRegistry()
	reg.Add(toolkit.Define(toolkit.Spec[noArgs, map[string]string]{
		Name: "t_key", Toolset: "t", Description: "reports the session key", ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, _ noArgs) (map[string]string, error) {
			return map[string]string{"key": c.SessionKey}, nil
		},
	}))
	var mu sync.Mutex
	var ended []string
	ch := make(chan string, 16)
	b := New(Options{Name: "t", Version: "1", Registry: reg, SessionEnded: func(key string) {
		mu.Lock()
		ended = append(ended, key)
		mu.Unlock()
		ch <- key
	}})
	return b, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), ended...)
	}, ch
}

// rawConn drives a connection with hand-written JSON-RPC lines, as a client that skips steps
// of the handshake would.
type rawConn struct {
	t   *testing.T
	in  *io.PipeWriter
	out *bufio.Scanner
}

func (c *rawConn) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

func (c *rawConn) recv() map[string]any {
	c.t.Helper()
	if !c.out.Scan() {
		c.t.Fatalf("connection closed: %v", c.out.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(c.out.Bytes(), &m); err != nil {
		c.t.Fatalf("bad line %q: %v", c.out.Bytes(), err)
	}
	return m
}

const (
	initLine    = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	keyCallLine = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t_key","arguments":{}}}`
)

// startRaw runs b.Run on a pipe pair and returns the client end and Run's result.
func startRaw(t *testing.T, b *Builder, key string) (*rawConn, <-chan error) {
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- b.Run(context.Background(), false, &mcp.IOTransport{Reader: sr, Writer: sw}, key)
		sw.Close()
	}()
	sc := bufio.NewScanner(cr)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	t.Cleanup(func() { cw.Close(); cr.Close() })
	return &rawConn{t: t, in: cw, out: sc}, done
}

func (c *rawConn) callKey() string {
	c.t.Helper()
	c.send(keyCallLine)
	m := c.recv()
	res, _ := m["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		c.t.Fatalf("tools/call answer: %v", m)
	}
	var out struct{ Key string }
	_ = json.Unmarshal([]byte(content[0].(map[string]any)["text"].(string)), &out)
	return out.Key
}

var randomKey = regexp.MustCompile(`^[a-z]+-[0-9a-f]{32}$`)

// TestConnectionKeysAreUniqueAndEndWithTheTransport: every connection gets a fresh random key
// (a pointer-derived key was reused once a session ended, handing its grants to the next
// connection), and the key is ended when the transport closes even if the client never sent
// notifications/initialized.
func TestConnectionKeysAreUniqueAndEndWithTheTransport(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		key         string
		initialized bool
	}{
		{"initialized, random key", "", true},
		{"initialize only", "", false},
		{"key given by the transport (SSH)", "ssh-0123456789abcdef0123456789abcdef", false},
	}
	seen := map[string]bool{}
	var mu sync.Mutex
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, ended, _ := keyBuilder(t)
			for range 3 {
				c, done := startRaw(t, b, tt.key)
				c.send(initLine)
				c.recv()
				if tt.initialized {
					c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
				}
				key := c.callKey()
				if !randomKey.MatchString(key) || (tt.key != "" && key != tt.key) {
					t.Fatalf("session key %q: want a random key (or the transport's %q)", key, tt.key)
				}
				if !b.Live(key) {
					t.Fatalf("session %q not live while connected", key)
				}
				mu.Lock()
				if seen[key] && tt.key == "" {
					t.Fatalf("key %q used by two connections", key)
				}
				seen[key] = true
				mu.Unlock()
				c.in.Close()
				if err := <-done; err != nil {
					t.Fatalf("Run: %v", err)
				}
				// Run returns only after the end hooks ran: no window where the grant outlives the connection.
				if got := ended(); len(got) == 0 || got[len(got)-1] != key {
					t.Fatalf("ended keys %v, want %q last", got, key)
				}
				if b.Live(key) {
					t.Fatalf("session %q still live after its transport closed", key)
				}
			}
			if n := len(ended()); n != 3 {
				t.Fatalf("%d sessions ended, want 3 (each exactly once)", n)
			}
		})
	}
}

// TestSessionsConnectedElsewhereAreTracked: a session the SDK connects itself (the HTTP
// handlers do) is tracked from its first message and ended when it closes, initialized or not.
func TestSessionsConnectedElsewhereAreTracked(t *testing.T) {
	t.Parallel()
	b, _, endedCh := keyBuilder(t)
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := b.Server(false).Connect(WithConnKey(ctx, "sse-00000000000000000000000000000001"), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t_key"})
	if err != nil || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "sse-00000000000000000000000000000001") {
		t.Fatalf("call: %v %v", err, res)
	}
	cs.Close()
	_ = ss.Wait()
	// The waiter goroutine runs the hooks right after Wait.
	select {
	case got := <-endedCh:
		if got != "sse-00000000000000000000000000000001" {
			t.Fatalf("ended %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("session end never reported")
	}
}

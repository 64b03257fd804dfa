package httpserver

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// longBody is a body timeout no test waits for: a refused connection that is closed within
// closeBound was closed because it was refused, not because its body ran out of time.
const (
	longBody   = 10 * time.Minute
	closeBound = 15 * time.Second
)

// dribble sends c's body one byte at a time, as a slow-loris client does, until the server
// closes c or the test ends.
func dribble(t *testing.T, c net.Conn) {
	t.Helper()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	t.Cleanup(func() { close(stop); wg.Wait() })
	go func() {
		defer wg.Done()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := c.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
}

// slowPost is the head of a POST /mcp whose 100 KB body (under net/http's 256 KiB drain
// allowance, so the server would wait for all of it) has barely begun.
func slowPost(hdr string) string {
	return "POST /mcp HTTP/1.1\r\n" + hdr + "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"
}

// TestRefusedRequestsDoNotHoldConnections: a request refused before its body arrived (bad Host,
// bad Origin, rate limited, over the in-flight cap, over the body limit, unauthenticated) used
// to keep its connection while the client dribbled the body — with no deadline at all for the
// refusals in front of the body timeout. The refusal must say so (Connection: close) and the
// connection must be closed without waiting for the body.
func TestRefusedRequestsDoNotHoldConnections(t *testing.T) {
	t.Parallel()
	_, loop, _ := net.ParseCIDR("127.0.0.1/32")
	tests := []struct {
		name   string
		o      Options
		prime  func(t *testing.T, base string) // fills whatever the request is refused by
		hdr    string
		status string
	}{
		{name: "bad Origin", hdr: "Host: 127.0.0.1\r\nAuthorization: Bearer full\r\nOrigin: https://evil.example.com\r\n", status: "403"},
		{name: "bad Host", hdr: "Host: evil.example.com\r\nAuthorization: Bearer full\r\n", status: "403"},
		{name: "unauthenticated", hdr: "Host: 127.0.0.1\r\n", status: "401"},
		{name: "bad token", hdr: "Host: 127.0.0.1\r\nAuthorization: Bearer stolen\r\n", status: "401"},
		{name: "over the body limit", o: Options{BodyLimit: 1 << 10}, hdr: "Host: 127.0.0.1\r\nAuthorization: Bearer full\r\n", status: "413"},
		{
			name: "rate limited", o: Options{RateLimit: 1}, status: "429",
			prime: func(t *testing.T, base string) {
				if resp := post(t, base+"/mcp", "full", listCall, nil); resp.StatusCode != http.StatusOK {
					t.Fatalf("first request: %d", resp.StatusCode)
				}
			},
			hdr: "Host: 127.0.0.1\r\nAuthorization: Bearer full\r\n",
		},
		{
			// Behind a trusted proxy the in-flight cap is what tells clients apart.
			name: "over the in-flight cap", o: Options{MaxConnsPerIP: 2, TrustedProxies: []*net.IPNet{loop}}, status: "429",
			prime: func(t *testing.T, base string) {
				for range 2 {
					openSSE(t, base, "full", map[string]string{"X-Forwarded-For": "10.0.0.1"})
				}
			},
			hdr: "Host: 127.0.0.1\r\nAuthorization: Bearer full\r\nX-Forwarded-For: 10.0.0.1\r\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := tt.o
			o.BodyReadTimeout = longBody
			base := startSecured(t, o)
			if tt.prime != nil {
				tt.prime(t, base)
			}
			c := rawConn(t, base, slowPost(tt.hdr))
			dribble(t, c)
			closed, answer := closedWithin(c, closeBound)
			if !closed {
				t.Fatalf("refused connection still open after %v while its body dribbles (answer %q)", closeBound, answer)
			}
			if !strings.HasPrefix(answer, "HTTP/1.1 "+tt.status) || !strings.Contains(answer, "\r\nConnection: close\r\n") {
				t.Errorf("answer to the refused request: %q, want %s with Connection: close", answer, tt.status)
			}
		})
	}
}

// TestRefusedFloodDoesNotLockOutItsIP: more refused slow connections than the per-IP cap (the
// red team's bad-Origin flood) all end, and a well-behaved client on the same IP is served.
func TestRefusedFloodDoesNotLockOutItsIP(t *testing.T) {
	t.Parallel()
	base := startSecured(t, Options{BodyReadTimeout: longBody})
	const flood = DefaultMaxConnsPerIP + 8
	conns := make([]net.Conn, flood)
	for i := range conns {
		conns[i] = rawConn(t, base, slowPost("Host: 127.0.0.1\r\nAuthorization: Bearer full\r\nOrigin: https://evil.example.com\r\n"))
		dribble(t, conns[i])
	}
	open := make(chan int, flood)
	for i, c := range conns {
		go func() {
			if closed, _ := closedWithin(c, closeBound); !closed {
				open <- i
				return
			}
			open <- -1
		}()
	}
	held := 0
	for range conns {
		if <-open >= 0 {
			held++
		}
	}
	if held > 0 {
		t.Fatalf("%d of %d refused connections still open after %v", held, flood, closeBound)
	}
	resp := post(t, base+"/mcp", "full", listCall, nil)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("well-behaved request after the flood: %d %s", resp.StatusCode, b)
	}
}

// TestReadGuardOutlastsServerDeadlines: net/http sets and clears a connection's read deadline
// on its own (per request, while idle, around its background read); none of that may lift the
// guard, and a refusal may only bring it closer.
func TestReadGuardOutlastsServerDeadlines(t *testing.T) {
	t.Parallel()
	past, future := time.Now().Add(-time.Second), time.Now().Add(time.Hour)
	tests := []struct {
		name    string
		steps   func(gc *guardedConn)
		expired bool // the next read fails at once
	}{
		{"armed guard survives a cleared deadline", func(gc *guardedConn) { gc.setGuard(past); _ = gc.SetReadDeadline(time.Time{}) }, true},
		{"armed guard beats a later deadline", func(gc *guardedConn) { gc.setGuard(past); _ = gc.SetReadDeadline(future) }, true},
		{"armed guard survives SetDeadline", func(gc *guardedConn) { gc.setGuard(past); _ = gc.SetDeadline(time.Time{}) }, true},
		{"an earlier deadline still applies", func(gc *guardedConn) { gc.setGuard(future); _ = gc.SetReadDeadline(past) }, true},
		{"a cut never extends the guard", func(gc *guardedConn) { gc.setGuard(past); gc.cutGuard(future) }, true},
		{"a cut re-arms a lifted guard", func(gc *guardedConn) { gc.setGuard(time.Time{}); gc.cutGuard(past) }, true},
		{"lifted guard leaves the server's deadline", func(gc *guardedConn) {
			gc.setGuard(past)
			_ = gc.SetReadDeadline(time.Time{})
			gc.setGuard(time.Time{})
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			client, server := net.Pipe()
			defer client.Close()
			gc := &guardedConn{Conn: server}
			defer gc.Close()
			tt.steps(gc)
			go client.Write([]byte("x")) // a read that is allowed to proceed gets this byte
			_, err := gc.Read(make([]byte, 1))
			if expired := errors.Is(err, os.ErrDeadlineExceeded); expired != tt.expired {
				t.Fatalf("read error %v, want expired=%v", err, tt.expired)
			}
		})
	}
}

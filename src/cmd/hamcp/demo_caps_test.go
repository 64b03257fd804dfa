package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestDemoRateLimitOffLiftsSessionCaps: `hamcp demo --rate-limit 0` lifts the session caps too,
// so a client that opens a session per run and never ends them (the conformance suite, run
// twice) is not refused 30 minutes before the idle ones expire; with a rate limit the caps stay.
func TestDemoRateLimitOffLiftsSessionCaps(t *testing.T) {
	t.Parallel()
	const perToken = 32 // httpserver.DefaultMaxSessionsPerToken, the first cap one client meets
	for _, tc := range []struct {
		rateLimit string
		refused   bool // the session after perToken is refused at the token's cap
	}{
		{"1000", true},
		{"0", false},
	} {
		t.Run("rate-limit "+tc.rateLimit, func(t *testing.T) {
			t.Parallel()
			p := startDemoProc(t, "--rate-limit", tc.rateLimit)
			ctx := context.Background()
			for range perToken {
				p.openSession(t, ctx, http.DefaultClient, "")
			}
			resp, err := p.hostileRequest(ctx, http.DefaultClient, http.MethodPost, "/mcp", "", strings.NewReader(initializeBody), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			refused := resp.StatusCode == http.StatusTooManyRequests && strings.Contains(string(b), "open sessions per token")
			if refused != tc.refused || !refused && resp.StatusCode != http.StatusOK {
				t.Errorf("session %d with --rate-limit %s: %d %.200s; want refused at the token's cap: %v", perToken+1, tc.rateLimit, resp.StatusCode, b, tc.refused)
			}
		})
	}
}

package faults

import (
	"context"
	"fmt"
	"regexp"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/testkit"
)

// TestHASlowOrFailing: Home Assistant answers late (held for seconds on the socket) or answers
// 500s (aiohttp's error page over REST, unknown_error over the WebSocket). Each tool call ends
// by its timeout (made short here) with an error that names the cause; /mcp/health says
// degraded while HA misbehaves and ok once it recovers; and once it has, the process holds no
// more goroutines than before: nothing waiting on an answer that never came was left behind.
//
// Not parallel: it counts the process's goroutines, which other tests' would blur (parallel
// tests wait until the serial ones are done).
func TestHASlowOrFailing(t *testing.T) {
	const (
		// Each call to HA (app.Options.HATimeout): short enough that the test does not crawl, long
		// enough that a healthy (or quickly failing) HA answers a burst within it on a busy 2-core
		// machine — at 300 ms a loaded CI turned the 500s into timeouts.
		timeout = 2 * time.Second
		burst   = 8 // calls of each kind at once
		slack   = 2 // goroutines at work that may come and go on their own
		// How late the slow HA answers: far beyond the timeout, so a call that took this long
		// waited for HA instead of ending by its timeout, whatever the machine's load. Turning
		// the fault off releases the held answers, so the test does not wait it out.
		haDelay = 20 * time.Second
	)
	// The error names how long the call waited: at most the configured limit, and less when the
	// call's own deadline had already used some of it (a busy machine prints 296ms of 300ms), so
	// the test checks the bound, never the exact figure.
	const waited = `within ([0-9][0-9.]*(?:ns|µs|us|ms|s|m))\b`
	waitedRE := regexp.MustCompile(waited)
	e := haStart(t, haOptions{haTimeout: timeout})
	cs := e.client(t)
	calls := []haCallSpec{haWSCall, haRESTCall}

	// together fires burst calls of each kind at once and returns them all.
	together := func() map[string][]haResult {
		var mu sync.Mutex
		var wg sync.WaitGroup
		out := map[string][]haResult{}
		for _, c := range calls {
			for range burst {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel()
					r := haCall(ctx, cs, c.tool, c.args)
					mu.Lock()
					out[c.tool] = append(out[c.tool], r)
					mu.Unlock()
				}()
			}
		}
		wg.Wait()
		return out
	}
	healthy := func(t *testing.T) {
		t.Helper()
		for tool, rs := range together() {
			for _, r := range rs {
				if r.err != nil || r.isError {
					t.Fatalf("%s with HA healthy: %v %s", tool, r.err, r.text)
				}
			}
		}
		if status, ha := e.health(t); status != "ok" || ha["ok"] != true {
			t.Fatalf("health with HA healthy: %s %v", status, ha)
		}
	}
	healthy(t) // warms connection pools and caches up to the sizes a burst needs
	before := haStacks()

	for _, tc := range []struct {
		name  string
		on    func()
		off   func()
		words map[string][]string // patterns in each tool's error
		code  string
	}{
		{"slow", func() { e.home.Faults().SetDelay(haDelay) }, func() { e.home.Faults().SetDelay(0) },
			map[string][]string{
				haWSCall.tool:   {"Home Assistant is not reachable", "no answer to shopping_list/items " + waited},
				haRESTCall.tool: {"Home Assistant is not reachable", "no answer " + waited},
			}, "backend_unavailable"},
		{"500s", func() { e.home.Faults().SetFailing(true) }, func() { e.home.Faults().SetFailing(false) },
			map[string][]string{
				haWSCall.tool:   {"Home Assistant returned an error", "unknown_error: Unknown error"},
				haRESTCall.tool: {"Home Assistant returned an error", "returned 500", "Server got itself in trouble"},
			}, "backend_error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.on()
			restored := false
			defer func() {
				if !restored {
					tc.off()
				}
			}()
			for tool, rs := range together() {
				for _, r := range rs {
					if r.err != nil || !r.isError || r.code != tc.code {
						t.Fatalf("%s: want a %s tool error, got %v %s", tool, tc.code, r.err, r.text)
					}
					for _, w := range tc.words[tool] {
						if !regexp.MustCompile(w).MatchString(r.text) {
							t.Fatalf("%s: error does not match %q: %s", tool, w, r.text)
						}
					}
					if m := waitedRE.FindStringSubmatch(r.text); m != nil {
						if d, err := time.ParseDuration(m[1]); err != nil || d <= 0 || d > timeout {
							t.Errorf("%s: the error says it waited %s; want more than 0 and at most the %v limit: %s", tool, m[1], timeout, r.text)
						}
					}
					// The timeout ends the wait, not HA's answer: a bound no scheduling delay
					// reaches, which a call waiting for the slow HA would.
					if r.took >= haDelay {
						t.Errorf("%s took %v with a %v timeout: it waited for HA (answering after %v)", tool, r.took, timeout, haDelay)
					}
				}
			}
			status, ha := e.health(t)
			if errText, _ := ha["detail"].(map[string]any)["error"].(string); status != "degraded" || ha["ok"] != false || errText == "" {
				t.Fatalf("health while HA is %s: %s %v", tc.name, status, ha)
			}
			t.Logf("health while HA is %s: %v", tc.name, ha["detail"])

			tc.off()
			restored = true
			testkit.Eventually(t, "health ok again", func() bool { s, _ := e.health(t); return s == "ok" })
			healthy(t)
			var now haGoroutines
			testkit.EventuallyNoError(t, "goroutines back to where they were", func() error {
				if now = haStacks(); now.busy() > before.busy()+slack {
					return fmt.Errorf("%d before, %d after; grown:\n%s", before.busy(), now.busy(), haGrown(before, now))
				}
				return nil
			})
			t.Logf("goroutines at work: %d before, %d after (%d and %d with idle connections)", before.busy(), now.busy(), before.total(), now.total())
		})
	}
}

// haGoroutines counts the process's goroutines by where they are.
type haGoroutines map[string]int

// haStacks reads pprof's goroutine profile, whose records group goroutines with one stack.
func haStacks() haGoroutines {
	var b strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
	out := haGoroutines{}
	for _, rec := range strings.Split(b.String(), "\n\n")[1:] {
		n, stack, ok := strings.Cut(rec, " @ ")
		if !ok {
			continue
		}
		count, _ := strconv.Atoi(strings.TrimSpace(n))
		var frames []string // function names without offsets, innermost first
		for _, line := range strings.Split(stack, "\n")[1:] {
			if f := strings.Fields(line); len(f) >= 3 && f[0] == "#" {
				fn, _, _ := strings.Cut(f[2], "+0x")
				frames = append(frames, fn)
			}
		}
		out[strings.Join(frames, " < ")] += count
	}
	return out
}

func (g haGoroutines) total() (n int) {
	for _, c := range g {
		n += c
	}
	return n
}

// busy leaves out what is not work in progress: keep-alive connections idling in a pool (a
// client's read and write loops, a server's wait for the next request; their number is bounded
// by the pools, not by the calls made) and the test's own bookkeeping.
func (g haGoroutines) busy() (n int) {
	for stack, c := range g {
		if !haIdle(stack) {
			n += c
		}
	}
	return n
}

func haIdle(stack string) bool {
	switch {
	case strings.Contains(stack, "net/http.(*persistConn).readLoop"), strings.Contains(stack, "net/http.(*persistConn).writeLoop"):
		return true
	case strings.HasSuffix(stack, "net/http.(*conn).serve") && !strings.Contains(stack, "ServeHTTP"):
		return true // between requests
	case strings.Contains(stack, "runtime/pprof."), strings.Contains(stack, "testing.(*T).Run"):
		return true
	}
	return false
}

// haGrown lists the places with more goroutines at work now than before.
func haGrown(before, after haGoroutines) string {
	var b strings.Builder
	for k, n := range after {
		if n > before[k] && !haIdle(k) {
			fmt.Fprintf(&b, "+%d %s\n", n-before[k], k)
		}
	}
	return b.String()
}

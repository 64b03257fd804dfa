package panel

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ---- Connect ----

type connectData struct {
	Connect
	DesktopJSON string
}

func (p *Panel) connectPage(w http.ResponseWriter, r *http.Request) {
	c := p.o.Connect(r)
	d := connectData{Connect: c}
	if c.SSH != nil {
		d.DesktopJSON = desktopJSON(c.SSH)
	}
	p.render(w, r, "connect", "Connect", d)
}

// desktopJSON is the claude_desktop_config.json entry for SSH, laid out as people write it (command
// first, the arguments on one line).
func desktopJSON(s *SSHConnect) string {
	// ssh expands ~ in -i itself (ssh(1): IdentityFile), so one snippet fits macOS, Linux and Windows.
	args, _ := json.Marshal([]string{"-p", strconv.Itoa(s.Port), "-i", "~/.ssh/hamcp", "-o", "BatchMode=yes", s.User + "@" + s.Host})
	return "{\n  \"mcpServers\": {\n    \"home\": {\n      \"command\": \"ssh\",\n      \"args\": " +
		strings.ReplaceAll(string(args), `","`, `", "`) + "\n    }\n  }\n}"
}

// checkTimeout bounds each live check; the page shows "not reachable" after it.
const checkTimeout = 4 * time.Second

type checkResult struct {
	OK bool `json:"ok"`
	// State is "ok" (green: checked the way the client will reach it), "info" (hamcp answered a
	// check that never left this machine) or "bad".
	State  string `json:"state"`
	Detail string `json:"detail"`
}

// connectChecks runs every transport's reachability check at once and answers with their results.
func (p *Panel) connectChecks(w http.ResponseWriter, r *http.Request) {
	checks := p.o.Connect(r).Checks
	out := make([]checkResult, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(r.Context(), checkTimeout)
			defer cancel()
			start := time.Now()
			if err := c.Run(ctx); err != nil {
				out[i] = checkResult{State: "bad", Detail: err.Error()}
				return
			}
			took := fmt.Sprintf("answered in %d ms", time.Since(start).Milliseconds())
			if c.Local {
				out[i] = checkResult{OK: true, State: "info", Detail: "hamcp answers on this machine (" + took + "); this check did not leave it, " +
					"so it does not show that other devices can reach this address"}
				return
			}
			out[i] = checkResult{OK: true, State: "ok", Detail: took}
		}()
	}
	wg.Wait()
	writeJSON(w, map[string]any{"checks": out})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

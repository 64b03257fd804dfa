package hatools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/dev/sim"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/toolkit"
	"github.com/hamcp/hamcp/src/tools/hatools"
)

// TestRenderTemplateRefusedBeforeHA plays the model: hostile templates through
// ha_render_template never reach Home Assistant (a proxy in front of the simulated HA records
// every template POSTed to /api/template), and a normal one still renders.
func TestRenderTemplateRefusedBeforeHA(t *testing.T) {
	ctx := context.Background()
	home, err := sim.Start(ctx, sim.Options{HistoryDays: -1, Seed: 7})
	if err != nil {
		t.Fatalf("starting the simulated home: %v", err)
	}
	t.Cleanup(func() { _ = home.Close() })
	target, err := url.Parse(home.URL())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var received []string
	upstream := httputil.NewSingleHostReverseProxy(target)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/api/template" {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var m struct {
				Template string `json:"template"`
			}
			_ = json.Unmarshal(body, &m)
			mu.Lock()
			received = append(received, m.Template)
			mu.Unlock()
		}
		upstream.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)

	ha, err := homeassistant.New(homeassistant.Config{BaseURL: proxy.URL, Token: home.Token()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ha.Close() })
	var tool *toolkit.Tool
	for _, tl := range hatools.Tools(hatools.Deps{HA: ha}) {
		if tl.Name() == "ha_render_template" {
			tool = tl
		}
	}
	if tool == nil {
		t.Fatal("ha_render_template is not among the tools")
	}
	call := func(tpl string) (*mcp.CallToolResult, string) {
		t.Helper()
		args, _ := json.Marshal(map[string]any{"template": tpl})
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		res := tool.Handle(cctx, &toolkit.Env{}, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "ha_render_template", Arguments: args}})
		return res, dtText(res)
	}

	for _, c := range []struct{ name, tpl string }{
		{"nested loops over a billion", "{% for i in range(10**9) %}{% for j in range(10**9) %}x{% endfor %}{% endfor %}"},
		{"a gigabyte string", "{{ 'x' * 10**9 }}"},
		{"a macro that recurses", "{% macro f(n) %}{{ f(n) }}{{ f(n) }}{% endmacro %}{{ f(1) }}"},
		{"a namespace that doubles", "{% set ns = namespace(s='x') %}{% for i in range(1000) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s | length }}"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, text := call(c.tpl)
			var e dtErr
			if !res.IsError || json.Unmarshal([]byte(text), &e) != nil || e.Code != "invalid_argument" || e.Field != "template" || !strings.Contains(e.Message, "event loop") {
				t.Fatalf("want the guard's invalid_argument on template, got %s", text)
			}
		})
	}
	mu.Lock()
	if len(received) != 0 {
		t.Errorf("Home Assistant received refused templates: %q", received)
	}
	mu.Unlock()

	res, text := call("{{ states('sun.sun') in ['above_horizon', 'below_horizon'] }}")
	if res.IsError || text != "True" {
		t.Fatalf("a normal template: %s", text)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(received) != 1 {
		t.Errorf("Home Assistant received %d templates, want the one normal template", len(received))
	}
}

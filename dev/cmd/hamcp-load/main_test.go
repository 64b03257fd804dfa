package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/dev/loadgen"
)

func TestParseArgs(t *testing.T) {
	t.Parallel()
	mix := filepath.Join(t.TempDir(), "mix.json")
	os.WriteFile(mix, []byte(`[{"name":"b","weight":2}]`), 0o600)
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte("secret\n"), 0o600)
	for _, tt := range []struct {
		name    string
		args    []string
		check   func(*loadgen.Config) bool
		wantErr string
	}{
		{"session defaults", []string{"--url", "http://127.0.0.1:1/mcp", "--call", `a={"x":1}`, "--mix", mix, "--token-file", tokenFile, "--header", "X-A: 1"},
			func(c *loadgen.Config) bool {
				return c.Mode == loadgen.ModeSession && len(c.Calls) == 2 && c.Calls[1].Weight == 2 && c.Token == "secret" &&
					c.Headers[0] == [2]string{"X-A", "1"} && c.Concurrency == 1 && c.Warmup > 0
			}, ""},
		{"stdio command after --", []string{"--mode", "stdio", "-c", "8", "-n", "100", "--env", "GOGC=400", "--call", "a", "--", "hamcp", "stdio", "--demo"},
			func(c *loadgen.Config) bool {
				return strings.Join(c.Command, " ") == "hamcp stdio --demo" && c.Concurrency == 8 && c.Count == 100 && c.Env[0] == "GOGC=400"
			}, ""},
		{"long names", []string{"--url", "http://h/mcp", "--call", "a", "--concurrency", "3", "--duration", "2s"},
			func(c *loadgen.Config) bool { return c.Concurrency == 3 && c.Duration.Seconds() == 2 }, ""},
		{"no call", []string{"--url", "http://h/mcp"}, nil, "--call"},
		{"bad call", []string{"--url", "http://h/mcp", "--call", "a=notjson"}, nil, "--call"},
		{"command over http", []string{"--url", "http://h/mcp", "--call", "a", "--", "x"}, nil, "--mode stdio"},
		{"bad header", []string{"--url", "http://h/mcp", "--call", "a", "--header", "nocolon"}, nil, "--header"},
		{"two tokens", []string{"--url", "http://h/mcp", "--call", "a", "--token", "x", "--token-file", tokenFile}, nil, "--token"},
		{"env over http", []string{"--url", "http://h/mcp", "--call", "a", "--env", "A=1"}, nil, "--env"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := parseArgs(tt.args, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || !tt.check(cfg) {
				t.Fatalf("%+v %v", cfg, err)
			}
		})
	}
}

func TestHelpDocumentsEveryFlag(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if _, _, err := parseArgs([]string{"--help"}, &out); err != flag.ErrHelp {
		t.Fatal(err)
	}
	for _, want := range []string{"-url", "-mode", "-stdio-processes", "-call", "-mix", "-c ", "-d ", "-n ", "-warmup", "-timeout", "-token",
		"-token-file", "-header", "-env", "-protocol-version", "-pid", "-rss-interval", "-sse-linger", "-out", "-fail-on-error",
		"http_STATUS", "jsonrpc_CODE", "tool_error", "log-linear", "Exit status"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

func TestRunPrintsJSONAndFailsOnErrors(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"isError":true,"content":[{"type":"text","text":"nope"}]}}`))
	}))
	defer srv.Close()
	args := []string{"--url", srv.URL, "--mode", "sessionless", "-n", "10", "--warmup", "0", "--call", "t", "--compact"}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var rep loadgen.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || rep.Calls != 10 || rep.ErrorsByKind["tool_error"] != 10 {
		t.Fatalf("report %s: %v", stdout.String(), err)
	}
	stdout.Reset()
	if code := run(context.Background(), append(args, "--fail-on-error"), &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "10 of 10 calls failed") {
		t.Fatalf("--fail-on-error: exit %d, %s", code, stderr.String())
	}
	if code := run(context.Background(), []string{"--mode", "bogus"}, &stdout, &stderr); code != 2 {
		t.Fatalf("bad flags: exit %d", code)
	}
}

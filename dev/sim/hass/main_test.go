package hass_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/sim"
)

// One simulated home serves every test in this package (real sockets).
var home *sim.Home

func TestMain(m *testing.M) {
	var err error
	home, err = sim.Start(context.Background(), sim.Options{Seed: 3, HistoryDays: 1, AuthTimeout: 300 * time.Millisecond})
	if err != nil {
		fmt.Fprintln(os.Stderr, "sim:", err)
		os.Exit(1)
	}
	code := m.Run()
	home.Close()
	os.Exit(code)
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t *testing.T) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("body is not JSON (%d): %q", r.status, r.body)
	}
	return v
}

func do(t *testing.T, base, method, path, token, body string) reply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = bytes.NewBufferString(body)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, raw}
}

func api(t *testing.T, method, path, body string) reply {
	t.Helper()
	return do(t, home.URL(), method, path, home.Token(), body)
}

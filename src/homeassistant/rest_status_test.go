package homeassistant

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/testkit"
)

// TestRESTStatusMapping drives the error path over a real socket with the bodies HA and the
// Supervisor proxy send, including ones the simulator has no reason to produce (500, 502).
func TestRESTStatusMapping(t *testing.T) {
	tests := []struct {
		status       int
		ctype, body  string
		wantMsg      string
		unauthorized bool
		unavailable  bool
	}{
		{400, "application/json", `{"message":"Invalid JSON specified"}`, "Invalid JSON specified", false, false},
		{401, "text/plain", "401: Unauthorized", "401: Unauthorized", true, false},
		{403, "text/plain", "403: Forbidden", "403: Forbidden", true, false},
		{404, "application/json", `{"message":"Entity not found."}`, "Entity not found.", false, false},
		{405, "text/plain", "405: Method Not Allowed", "405: Method Not Allowed", false, false},
		{500, "application/json", `{"message":"Error reading events: boom"}`, "Error reading events: boom", false, false},
		{500, "text/plain", "500 Internal Server Error\n\nServer got itself in trouble", "500 Internal Server Error  Server got itself in trouble", false, false},
		{502, "text/plain", "", "Bad Gateway", false, true},
		{503, "text/html", "<html>down</html>", "<html>down</html>", false, true},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.ctype)
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			c := restClient(t, srv.URL, "tok")
			_, err := c.States(context.Background())
			var apiErr *APIError
			if !errors.As(err, &apiErr) || apiErr.Status != tt.status || apiErr.Message != tt.wantMsg {
				t.Fatalf("got %#v (%v), want %d %q", apiErr, err, tt.status, tt.wantMsg)
			}
			if errors.Is(err, ErrUnauthorized) != tt.unauthorized || errors.Is(err, ErrUnavailable) != tt.unavailable {
				t.Fatalf("sentinels wrong for %d: %v", tt.status, err)
			}
		})
	}
}

func TestRESTSendsTokenAndShapesRequests(t *testing.T) {
	type seen struct{ method, path, query, auth, ctype, body string }
	var mu sync.Mutex
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		_, _ = b.ReadFrom(r.Body)
		mu.Lock()
		got = append(got, seen{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Get("Authorization"), r.Header.Get("Content-Type"), b.String()})
		mu.Unlock()
		switch {
		case strings.HasPrefix(r.URL.Path, "/api/history/"):
			_, _ = w.Write([]byte(`[[{"entity_id":"sensor.a","state":"1","last_changed":"2026-01-01T00:00:00+00:00"},{"state":"2","last_changed":"2026-01-01T01:00:00+00:00"}]]`))
		case strings.HasPrefix(r.URL.Path, "/api/services/"):
			_, _ = w.Write([]byte(`{"changed_states":[],"service_response":{"ok":true}}`))
		default:
			_, _ = w.Write([]byte(`{}`))
		}
	}))
	defer srv.Close()
	c := restClient(t, srv.URL+"/", "sekret")
	ctx := context.Background()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 3600))
	rows, err := c.History(ctx, HistoryQuery{EntityIDs: []string{"sensor.a", "sensor.b"}, Start: start, MinimalResponse: true, SkipInitialState: true})
	if err != nil || len(rows) != 1 || rows[0][1].EntityID != "sensor.a" {
		t.Fatalf("History: %+v, %v", rows, err)
	}
	_, resp, err := c.CallService(ctx, "weather", "get_forecasts", nil, true)
	if err != nil || string(resp) != `{"ok":true}` {
		t.Fatalf("CallService: %s, %v", resp, err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []seen{
		{"GET", "/api/history/period/2025-12-31T23:00:00+00:00", "filter_entity_id=sensor.a%2Csensor.b&minimal_response=&significant_changes_only=0&skip_initial_state=", "Bearer sekret", "", ""},
		{"POST", "/api/services/weather/get_forecasts", "return_response=", "Bearer sekret", "application/json", "{}"},
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("request %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

// TestTokenNeverLogged runs the failure paths with a logger attached and checks the output.
func TestTokenNeverLogged(t *testing.T) {
	const token = "very-secret-token-value"
	f := newFakeWS(t) // accepts only "good-token", so this client is rejected
	var buf bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(p)
	}), &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, err := New(Config{BaseURL: f.url(), Token: token, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	c.backoffBase, c.backoffCap = time.Millisecond, 5*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	c.Start(ctx)
	testkit.Eventually(t, "a rejected attempt", func() bool { return f.connectCount() == 0 && c.Status(ctx).LastError != "" })
	testkit.Eventually(t, "the failed attempts logged", func() bool { mu.Lock(); defer mu.Unlock(); return buf.Len() > 0 })
	st := c.Status(ctx)
	cancel()
	c.Close()
	mu.Lock()
	defer mu.Unlock()
	if buf.Len() == 0 {
		t.Fatal("expected some log output from the failed attempts")
	}
	for _, s := range []string{buf.String(), st.LastError, st.RESTError} {
		if strings.Contains(s, token) {
			t.Fatalf("token leaked: %s", s)
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

package supervisor

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// How the shared round trip's failures reach callers: a connection that drops mid-answer is the
// Supervisor being unreachable; an answer that ends cleanly but does not parse is not.
func TestTransportFailures(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/cut":
			conn, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 200\r\n\r\n{\"result\": \"ok\", \"data\": {")
			_ = buf.Flush()
			_ = conn.Close()
		case "/truncated":
			_, _ = w.Write([]byte(`{"result": "ok", "data": {`))
		case "/hang":
			<-r.Context().Done()
		case "/gone":
			w.WriteHeader(http.StatusBadGateway)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{BaseURL: srv.URL, Token: "tok", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name            string
		ctx             context.Context
		path            string
		wantUnavailable bool
		wantText        string
	}{
		{"body cut short", context.Background(), "/cut", true, "unexpected EOF"},
		{"incomplete JSON", context.Background(), "/truncated", false, "malformed answer"},
		{"cancelled", cancelled, "/hang", false, "cancelled"},
		{"gateway down", context.Background(), "/gone", true, "502"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out map[string]any
			err := c.Do(tt.ctx, http.MethodGet, tt.path, nil, &out)
			if err == nil || errors.Is(err, ErrUnavailable) != tt.wantUnavailable || !strings.Contains(err.Error(), tt.wantText) {
				t.Fatalf("err = %v; want unavailable=%v and %q", err, tt.wantUnavailable, tt.wantText)
			}
		})
	}
}

package httpserver

import (
	"bytes"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

// TestRequestLogNamesTheRouteNotItsSecrets: a credential carried in a path segment (the Hubitat
// hub's push address) never reaches the log, even at debug level; the route's name does.
func TestRequestLogNamesTheRouteNotItsSecrets(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	s := &Server{o: Options{Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))}}
	e := echo.New()
	e.Use(s.requestLog)
	e.Any("/hubitat/events/:secret", func(c echo.Context) error { return c.NoContent(204) })
	e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/hubitat/events/s3cr3t-push-segment", nil))
	e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/mcp/health", nil))
	logged := buf.String()
	if strings.Contains(logged, "s3cr3t") || !strings.Contains(logged, "/hubitat/events/:secret") {
		t.Errorf("request log:\n%s", logged)
	}
	if !strings.Contains(logged, "/mcp/health") {
		t.Errorf("an unrouted path is not named:\n%s", logged)
	}
}

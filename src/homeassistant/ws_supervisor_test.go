package homeassistant

import (
	"context"
	"errors"
	"net/http"
	"testing"
)

func TestWSSupervisorAPI(t *testing.T) {
	t.Parallel()
	h := simHome(t)
	admin := fastClient(t, h.URL(), h.Token())
	user := fastClient(t, h.URL(), h.UserToken())
	ctx := context.Background()

	var info struct {
		Version string `json:"version"`
		Port    int    `json:"port"`
	}
	if err := admin.SupervisorAPI(ctx, http.MethodGet, "/core/info", nil, &info); err != nil || info.Version == "" || info.Port == 0 {
		t.Fatalf("GET /core/info = %+v, %v", info, err)
	}
	var addons struct {
		Addons []struct {
			Slug string `json:"slug"`
		} `json:"addons"`
	}
	if err := admin.SupervisorAPI(ctx, http.MethodGet, "/addons", nil, &addons); err != nil || len(addons.Addons) == 0 {
		t.Fatalf("GET /addons = %+v, %v", addons, err)
	}
	// An action: the message carries data and no core-side timeout.
	if err := admin.SupervisorAPI(ctx, http.MethodPost, "/core/check", map[string]any{}, nil); err != nil {
		t.Fatalf("POST /core/check: %v", err)
	}
	tests := []struct {
		name string
		c    *Client
		path string
		code string
	}{
		{"unknown endpoint", admin, "/nowhere/info", ""},
		{"non-admin", user, "/core/info", "unauthorized"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.SupervisorAPI(ctx, http.MethodGet, tt.path, nil, nil)
			var api *APIError
			if !errors.As(err, &api) || (tt.code != "" && api.Code != tt.code) || errors.Is(err, ErrUnavailable) {
				t.Fatalf("err = %v, want an APIError %q", err, tt.code)
			}
		})
	}
}

package homeassistant

import (
	"context"
	"errors"
	"slices"
	"testing"
)

func TestWSHACSRepositories(t *testing.T) {
	t.Parallel()
	h := simHome(t)
	c := fastClient(t, h.URL(), h.Token())
	ctx := context.Background()
	all, err := c.HACSRepositories(ctx)
	if err != nil || len(all) == 0 {
		t.Fatalf("HACSRepositories() = %d repositories, %v", len(all), err)
	}
	tests := []struct {
		name       string
		categories []string
	}{
		{"one category", []string{"theme"}},
		{"two categories", []string{"integration", "plugin"}},
		{"unknown category", []string{"gadget"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.HACSRepositories(ctx, tt.categories...)
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			for _, r := range all {
				if slices.Contains(tt.categories, r.Category) {
					want++
				}
			}
			if len(got) != want {
				t.Fatalf("got %d repositories, want %d", len(got), want)
			}
			for _, r := range got {
				if !slices.Contains(tt.categories, r.Category) || r.ID == "" || r.FullName == "" {
					t.Fatalf("repository %+v outside %v or incomplete", r, tt.categories)
				}
			}
		})
	}
}

// A download and a remove on the shared home leave the repository as it was.
func TestWSHACSRepositoryLifecycle(t *testing.T) {
	t.Parallel()
	h := simHome(t)
	c := fastClient(t, h.URL(), h.Token())
	ctx := context.Background()
	themes, err := c.HACSRepositories(ctx, "theme")
	if err != nil || len(themes) == 0 {
		t.Fatalf("themes: %v, %v", themes, err)
	}
	repo := themes[0]
	if repo.Installed {
		t.Fatalf("%s is installed in a fresh home", repo.FullName)
	}
	if err := c.HACSDownload(ctx, repo.ID, ""); err != nil {
		t.Fatalf("HACSDownload: %v", err)
	}
	info, err := c.HACSRepositoryInfo(ctx, repo.ID)
	if err != nil || !info.Installed || info.InstalledVersion == nil || info.LocalPath == "" || len(info.Releases) == 0 {
		t.Fatalf("info after download = %+v, %v", info, err)
	}
	if err := c.HACSRemove(ctx, repo.ID); err != nil {
		t.Fatalf("HACSRemove: %v", err)
	}
	if info, err := c.HACSRepositoryInfo(ctx, repo.ID); err != nil || info.Installed {
		t.Fatalf("info after remove = %+v, %v", info, err)
	}
}

func TestWSHACSErrors(t *testing.T) {
	t.Parallel()
	h := simHome(t)
	admin := fastClient(t, h.URL(), h.Token())
	user := fastClient(t, h.URL(), h.UserToken())
	ctx := context.Background()
	themes, err := admin.HACSRepositories(ctx, "theme")
	if err != nil || len(themes) == 0 {
		t.Fatalf("themes: %v, %v", themes, err)
	}
	tests := []struct {
		name     string
		call     func() error
		wantCode string
	}{
		{"info of an unknown id", func() error { _, err := admin.HACSRepositoryInfo(ctx, "999"); return err }, "repository_not_found"},
		{"download of an unknown id", func() error { return admin.HACSDownload(ctx, "999", "") }, "unknown_error"},
		{"download of an unknown version", func() error { return admin.HACSDownload(ctx, themes[0].ID, "v0") }, "error"},
		{"remove of an unknown id", func() error { return admin.HACSRemove(ctx, "999") }, "unknown_error"},
		{"list as a non-admin", func() error { _, err := user.HACSRepositories(ctx); return err }, "unauthorized"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var api *APIError
			if !errors.As(err, &api) || api.Code != tt.wantCode || errors.Is(err, ErrUnavailable) {
				t.Fatalf("err = %v, want APIError code %q", err, tt.wantCode)
			}
		})
	}
}

package homeassistant

import (
	"context"
	"errors"
	"testing"
)

func TestWSConfigEntries(t *testing.T) {
	t.Parallel()
	h := simHome(t)
	c := fastClient(t, h.URL(), h.Token())
	ctx := context.Background()
	all, err := c.ConfigEntries(ctx, "")
	if err != nil || len(all) == 0 {
		t.Fatalf("ConfigEntries() = %d entries, %v", len(all), err)
	}
	for _, e := range all {
		if e.EntryID == "" || e.Domain == "" || e.State == "" {
			t.Fatalf("incomplete entry %+v", e)
		}
	}
	tests := []struct {
		domain string
		want   int
	}{
		{all[0].Domain, 0},
		{"no_such_integration", 0},
	}
	for _, e := range all {
		if e.Domain == all[0].Domain {
			tests[0].want++
		}
	}
	for _, tt := range tests {
		t.Run(tt.domain, func(t *testing.T) {
			got, err := c.ConfigEntries(ctx, tt.domain)
			if err != nil || len(got) != tt.want {
				t.Fatalf("ConfigEntries(%q) = %d entries, %v; want %d", tt.domain, len(got), err, tt.want)
			}
			for _, e := range got {
				if e.Domain != tt.domain {
					t.Fatalf("entry of %s in the %s list", e.Domain, tt.domain)
				}
			}
		})
	}
	user := fastClient(t, h.URL(), h.UserToken())
	var api *APIError
	if _, err := user.ConfigEntries(ctx, ""); !errors.As(err, &api) || api.Code != "unauthorized" {
		t.Fatalf("non-admin ConfigEntries: %v", err)
	}
}

func TestWSRepairsAndRecorder(t *testing.T) {
	t.Parallel()
	h := simHome(t)
	c := fastClient(t, h.URL(), h.Token())
	ctx := context.Background()
	issues, err := c.RepairIssues(ctx)
	if err != nil || len(issues) == 0 {
		t.Fatalf("RepairIssues() = %v, %v", issues, err)
	}
	for _, is := range issues {
		if is.Domain == "" || is.IssueID == "" || is.Severity == "" {
			t.Fatalf("incomplete issue %+v", is)
		}
	}
	rec, err := c.RecorderInfo(ctx)
	if err != nil || !rec.Recording || !rec.ThreadRunning || rec.Backlog == nil || rec.MaxBacklog == 0 {
		t.Fatalf("RecorderInfo() = %+v, %v", rec, err)
	}
}

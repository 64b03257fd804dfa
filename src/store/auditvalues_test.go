package store

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestAuditValuesAndClientFilter: the panel's filter choices are each column's distinct values,
// most recently seen first, and the client filter selects by client.
func TestAuditValuesAndClientFilter(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	seedAudit(t, s)
	if err := s.AppendAudit(ctx, AuditEntry{Time: t0.Add(time.Hour), SessionID: "s9", Client: "n8n/1", Tool: "ha_get_states", Outcome: OutcomeOK}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		col  AuditColumn
		want []string
	}{
		{AuditSession, []string{"s9", "s3", "s2", "s1"}},
		{AuditClient, []string{"n8n/1", "claude-code/1.0"}},
		{AuditTool, []string{"ha_get_states", "ha_execute_sql", "ha_read_file"}},
		{AuditCategory, []string{"database", "filesystem"}}, // the empty category is no choice
		{AuditOutcome, []string{OutcomeOK, OutcomeDenied}},
	} {
		got, err := s.AuditValues(ctx, tt.col, 0)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("AuditValues(%s) = %v, %v; want %v", tt.col, got, err, tt.want)
		}
	}
	if got, _ := s.AuditValues(ctx, AuditSession, 2); !slices.Equal(got, []string{"s9", "s3"}) {
		t.Errorf("limit 2: %v", got)
	}
	if _, err := s.AuditValues(ctx, "detail; DROP TABLE audit_log", 0); err == nil {
		t.Error("an unknown column was listed")
	}
	got, total, err := s.ListAudit(ctx, AuditQuery{Client: "n8n/1"})
	if err != nil || total != 1 || got[0].SessionID != "s9" {
		t.Errorf("client filter: %v %d %+v", err, total, got)
	}
}

package permission

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hamcp/hamcp/src/store"
)

func TestDenySticksForTheSession(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Options{})
	re := asRequired(t, f.m.Authorize(ctx, req("s1", Command)))
	if err := f.m.Deny(ctx, re.RequestID, admin); err != nil {
		t.Fatal(err)
	}
	accepted := req("s1", Command)
	accepted.Elicit = accept
	for _, r := range []Request{req("s1", Command), accepted} {
		de := asDenied(t, f.m.Authorize(ctx, r))
		if de.ByPolicy || !strings.Contains(de.Error(), re.RequestID) || !strings.Contains(de.Error(), "Do not retry") {
			t.Fatalf("after Deny: %v", de)
		}
	}
	for _, answer := range []func(context.Context, string, Approver) error{f.m.Approve, f.m.Deny} {
		if err := answer(ctx, re.RequestID, admin); !errors.Is(err, ErrUnknownRequest) {
			t.Fatalf("answering an answered request: %v, want ErrUnknownRequest", err)
		}
	}
	asRequired(t, f.m.Authorize(ctx, req("s2", Command)))
	st := f.m.Status("s1")
	if st[2].Category != Command || st[2].State != StateDenied || !strings.Contains(st[2].Reason, re.RequestID) {
		t.Fatalf("Status after Deny: %+v", st[2])
	}
	log := f.auditLog(t, store.AuditQuery{SessionID: "s1", Outcome: store.OutcomeDenied})
	if len(log) != 1 || log[0].Tool != "ha_execute_command" {
		t.Fatalf("audit of the denial: %+v", log)
	}
}

func TestPendingNeverShowsSessionKeysOrLinks(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Options{})
	a := asRequired(t, f.m.Authorize(ctx, req("s1", Filesystem)))
	f.clock.Advance(time.Second)
	b := asRequired(t, f.m.Authorize(ctx, req("session-two-secret-id", Database)))
	got := f.m.Pending()
	if len(got) != 2 || got[0].ID != a.RequestID || got[1].ID != b.RequestID {
		t.Fatalf("Pending = %+v, want %s then %s", got, a.RequestID, b.RequestID)
	}
	p := got[1]
	if p.Tool != "ha_execute_sql" || p.Category != Database || p.Session != f.m.SessionLabel("session-two-secret-id") ||
		p.Warning != f.m.Warning(Database) || !p.ExpiresAt.Equal(t0.Add(time.Second+10*time.Minute)) {
		t.Fatalf("pending entry: %+v", p)
	}
	// What the panel and the API serialize names the session by its label only, and carries no link.
	raw, _ := json.Marshal(got)
	for _, secret := range []string{"session-two-secret-id", secretOf(t, b.Link), secretOf(t, a.Link)} {
		if strings.Contains(string(raw), secret) {
			t.Fatalf("JSON of pending requests carries %q: %s", secret, raw)
		}
	}
	if l := f.m.SessionLabel("s1"); l == f.m.SessionLabel("s2") || strings.Contains(l, "s1") {
		t.Fatalf("session labels: %q", l)
	}
}

func TestPendingMessageForTheUser(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Options{})
	re := asRequired(t, f.m.Authorize(ctx, req("session-with-a-long-id-1234", Database)))
	p := f.inbox.posted[0]
	msg := p.Message()
	for _, want := range []string{re.Link, "database", "ha_execute_sql", "path=/config/configuration.yaml",
		f.m.Warning(Database), "claude-code/1.0", "12:10", "deny", "administrator", "panel", p.Session} {
		if !strings.Contains(msg, want) {
			t.Errorf("notification message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "session-with-a-long-id") {
		t.Errorf("message shows the session id: %s", msg)
	}
}

func TestStatus(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Options{
		Policies:   map[Category]Policy{Command: PolicyDeny, HubAdmin: PolicyAllow},
		Categories: AllCategories,
	})
	fs := asRequired(t, f.m.Authorize(ctx, req("s1", Filesystem)))
	if err := f.m.Approve(ctx, fs.RequestID, admin); err != nil {
		t.Fatal(err)
	}
	db := asRequired(t, f.m.Authorize(ctx, req("s1", Database)))
	tests := []struct {
		session string
		c       Category
		state   string
		check   func(CategoryStatus) bool
	}{
		{"s1", Filesystem, StateGranted, func(s CategoryStatus) bool {
			return s.Via == ViaApproval && s.ExpiresAt.Equal(t0.Add(8*time.Hour)) && s.Policy == PolicyAsk
		}},
		{"s1", Database, StatePending, func(s CategoryStatus) bool {
			return s.RequestID == db.RequestID && strings.Contains(s.HowTo, db.RequestID) && strings.Contains(s.HowTo, db.Link)
		}},
		{"s1", Command, StateDenied, func(s CategoryStatus) bool {
			return s.Policy == PolicyDeny && strings.Contains(s.Reason, "HAMCP_PERMISSION_COMMAND")
		}},
		{"s1", HubAdmin, StateGranted, func(s CategoryStatus) bool { return s.Via == ViaPolicy }},
		{"s2", Filesystem, StateNotRequested, func(s CategoryStatus) bool { return s.HowTo != "" && s.Warning != "" }},
		{"s2", Database, StateNotRequested, func(s CategoryStatus) bool { return s.RequestID == "" }},
	}
	for _, tc := range tests {
		var got *CategoryStatus
		for _, st := range f.m.Status(tc.session) {
			if st.Category == tc.c {
				got = &st
			}
		}
		if got == nil || got.State != tc.state || !tc.check(*got) {
			t.Errorf("Status(%s)[%s] = %+v, want state %s", tc.session, tc.c, got, tc.state)
		}
	}
	// By default only the three root categories are listed.
	g := newFixture(t, Options{})
	if st := g.m.Status("x"); len(st) != 3 || st[0].Category != Filesystem || st[2].Category != Command {
		t.Fatalf("default Status categories: %+v", st)
	}
}

func TestAuditQueuesToolOutcomes(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	for i := range 50 {
		f.m.Audit(ctx, store.AuditEntry{SessionID: "s1", Tool: "ha_read_file", Category: "filesystem", Outcome: store.OutcomeOK, DurationMS: int64(i)})
	}
	log := f.auditLog(t, store.AuditQuery{SessionID: "s1"})
	if len(log) != 50 || !log[0].Time.Equal(t0) {
		t.Fatalf("%d entries written (first %+v), want 50 stamped with the injected clock", len(log), log[0])
	}
	// After Close, Audit neither blocks nor panics.
	f.m.Audit(ctx, store.AuditEntry{Tool: "late"})
}

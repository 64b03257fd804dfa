package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func openTemp(t testing.TB) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hamcp.db")
	s, err := Open(path)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func TestOpenRejectsBadPaths(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "plain")
	if err := os.WriteFile(notDir, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("this is not sqlite ", 400)), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want string
	}{
		{"empty", "", "path is empty"},
		{"memory", ":memory:", "not a plain file path"},
		{"uri", "file:" + filepath.Join(dir, "a.db"), "not a plain file path"},
		{"question mark", filepath.Join(dir, "a?b.db"), "contains '?'"},
		{"nul", filepath.Join(dir, "a\x00b.db"), "NUL"},
		{"missing folder", filepath.Join(dir, "nope", "hamcp.db"), "create it"},
		{"folder is a file", filepath.Join(notDir, "hamcp.db"), "not a directory"},
		{"not sqlite", garbage, "SQLite file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(tc.path)
			if err == nil {
				s.Close()
				t.Fatalf("Open(%q) succeeded, want error containing %q", tc.path, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open(%q) error %q, want it to contain %q", tc.path, err, tc.want)
			}
		})
	}
}

func TestOpenSetsPragmasOnEveryConnection(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	// Hold several connections at once so the check is not just on the first one.
	var conns []interface{ Close() error }
	for i := 0; i < 3; i++ {
		c, err := s.DB().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		checks := []struct {
			pragma, want string
		}{
			{"journal_mode", "wal"},
			{"foreign_keys", "1"},
			{"busy_timeout", "5000"},
			{"synchronous", "1"},
		}
		for _, ck := range checks {
			var got string
			if err := c.QueryRowContext(ctx, "PRAGMA "+ck.pragma).Scan(&got); err != nil {
				t.Fatalf("conn %d PRAGMA %s: %v", i, ck.pragma, err)
			}
			if got != ck.want {
				t.Errorf("conn %d PRAGMA %s = %q, want %q", i, ck.pragma, got, ck.want)
			}
		}
	}
	for _, c := range conns {
		c.Close()
	}
}

func TestReopenKeepsData(t *testing.T) {
	s, path := openTemp(t)
	ctx := context.Background()
	if err := s.AppendAudit(ctx, AuditEntry{SessionID: "s1", Tool: "ha_read_file", Outcome: OutcomeOK}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s2.Close()
	got, total, err := s2.ListAudit(ctx, AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if total != 1 || len(got) != 1 || got[0].Tool != "ha_read_file" {
		t.Fatalf("after reopen: total %d, entries %+v; want the one entry written before", total, got)
	}
}

func TestConcurrentOpenOfNewFile(t *testing.T) {
	// Two processes (here: two Stores) starting at once on a fresh file must both end up with one
	// complete schema and no duplicate migration rows.
	path := filepath.Join(t.TempDir(), "hamcp.db")
	const n = 4
	stores := make([]*Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stores[i], errs[i] = Open(path)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Open #%d: %v", i, err)
		}
		defer stores[i].Close()
	}
	var rows int
	if err := stores[0].DB().QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != len(migrations) {
		t.Fatalf("schema_migrations has %d rows, want %d", rows, len(migrations))
	}
}

package store

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// seedAudit writes a small, known log: 3 sessions × 2 tools × 2 outcomes, one minute apart.
func seedAudit(t *testing.T, s *Store) []AuditEntry {
	t.Helper()
	var all []AuditEntry
	i := 0
	for _, sess := range []string{"s1", "s2", "s3"} {
		for _, tool := range []string{"ha_read_file", "ha_execute_sql"} {
			for _, outcome := range []string{OutcomeOK, OutcomeDenied} {
				cat := "filesystem"
				if tool == "ha_execute_sql" {
					cat = "database"
				}
				e := AuditEntry{
					Time: t0.Add(time.Duration(i) * time.Minute), SessionID: sess, Client: "claude-code/1.0",
					Tool: tool, Category: cat, ArgsSummary: fmt.Sprintf("call %d", i), Outcome: outcome,
					Detail: "d", DurationMS: int64(i),
				}
				if err := s.AppendAudit(context.Background(), e); err != nil {
					t.Fatal(err)
				}
				all = append(all, e)
				i++
			}
		}
	}
	return all
}

func TestListAuditFilters(t *testing.T) {
	s, _ := openTemp(t)
	seedAudit(t, s)
	tests := []struct {
		name      string
		q         AuditQuery
		wantTotal int
		check     func(AuditEntry) bool
	}{
		{"all", AuditQuery{}, 12, func(AuditEntry) bool { return true }},
		{"session", AuditQuery{SessionID: "s2"}, 4, func(e AuditEntry) bool { return e.SessionID == "s2" }},
		{"tool", AuditQuery{Tool: "ha_execute_sql"}, 6, func(e AuditEntry) bool { return e.Tool == "ha_execute_sql" }},
		{"category", AuditQuery{Category: "filesystem"}, 6, func(e AuditEntry) bool { return e.Category == "filesystem" }},
		{"outcome", AuditQuery{Outcome: OutcomeDenied}, 6, func(e AuditEntry) bool { return e.Outcome == OutcomeDenied }},
		{"since", AuditQuery{Since: t0.Add(10 * time.Minute)}, 2, func(e AuditEntry) bool { return !e.Time.Before(t0.Add(10 * time.Minute)) }},
		{"combined", AuditQuery{SessionID: "s1", Tool: "ha_read_file", Outcome: OutcomeOK}, 1,
			func(e AuditEntry) bool {
				return e.SessionID == "s1" && e.Tool == "ha_read_file" && e.Outcome == OutcomeOK
			}},
		{"no match", AuditQuery{SessionID: "nobody"}, 0, nil},
		{"injection is just a value", AuditQuery{SessionID: "s1' OR '1'='1"}, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, total, err := s.ListAudit(context.Background(), tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if total != tc.wantTotal || len(got) != tc.wantTotal {
				t.Fatalf("total %d, %d rows; want %d", total, len(got), tc.wantTotal)
			}
			for i, e := range got {
				if !tc.check(e) {
					t.Errorf("row %+v does not match the filter", e)
				}
				if i > 0 && e.Time.After(got[i-1].Time) {
					t.Errorf("rows not newest first: %v after %v", e.Time, got[i-1].Time)
				}
				if e.Time.Location() != time.UTC {
					t.Errorf("time %v not in UTC", e.Time)
				}
			}
		})
	}
}

func TestListAuditPaging(t *testing.T) {
	s, _ := openTemp(t)
	all := seedAudit(t, s)
	ctx := context.Background()
	var seen []string
	for off := 0; off < len(all); off += 5 {
		page, total, err := s.ListAudit(ctx, AuditQuery{Limit: 5, Offset: off})
		if err != nil {
			t.Fatal(err)
		}
		if total != len(all) {
			t.Fatalf("offset %d: total %d, want %d", off, total, len(all))
		}
		if want := min(5, len(all)-off); len(page) != want {
			t.Fatalf("offset %d: %d rows, want %d", off, len(page), want)
		}
		for _, e := range page {
			seen = append(seen, e.ArgsSummary)
		}
	}
	// Newest first, every entry exactly once, with every field read back as written.
	for i, summary := range seen {
		if want := all[len(all)-1-i].ArgsSummary; summary != want {
			t.Fatalf("page order: position %d is %q, want %q", i, summary, want)
		}
	}
	page, _, _ := s.ListAudit(ctx, AuditQuery{Limit: 1})
	want := all[len(all)-1]
	want.ID = page[0].ID
	if page[0] != want {
		t.Fatalf("round trip:\n got %+v\nwant %+v", page[0], want)
	}
	past, total, err := s.ListAudit(ctx, AuditQuery{Offset: 100})
	if err != nil || len(past) != 0 || total != len(all) || past == nil {
		t.Fatalf("offset past the end: %v rows, total %d, err %v; want an empty (non-nil) page and the total", past, total, err)
	}
}

func TestListAuditRejectsBadPaging(t *testing.T) {
	s, _ := openTemp(t)
	tests := []struct {
		q    AuditQuery
		want string
	}{
		{AuditQuery{Limit: -1}, "limit -1 is out of range"},
		{AuditQuery{Limit: MaxAuditLimit + 1}, "use 1 to 1000"},
		{AuditQuery{Offset: -3}, "offset -3 is negative"},
	}
	for _, tc := range tests {
		if _, _, err := s.ListAudit(context.Background(), tc.q); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ListAudit(%+v) error %v, want it to contain %q", tc.q, err, tc.want)
		}
	}
	if _, _, err := s.ListAudit(context.Background(), AuditQuery{Limit: MaxAuditLimit}); err != nil {
		t.Errorf("limit %d must be accepted: %v", MaxAuditLimit, err)
	}
}

func TestPruneAudit(t *testing.T) {
	s, _ := openTemp(t)
	all := seedAudit(t, s)
	ctx := context.Background()
	n, err := s.PruneAudit(ctx, t0.Add(5*time.Minute))
	if err != nil || n != 5 {
		t.Fatalf("PruneAudit removed %d (err %v), want 5", n, err)
	}
	_, total, _ := s.ListAudit(ctx, AuditQuery{})
	if total != len(all)-5 {
		t.Fatalf("after prune total %d, want %d", total, len(all)-5)
	}
	if n, _ := s.PruneAudit(ctx, t0.Add(5*time.Minute)); n != 0 {
		t.Fatalf("second prune removed %d, want 0", n)
	}
}

func TestAppendAuditDefaultsAndCaps(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	before := time.Now().Add(-time.Second)
	long := strings.Repeat("é", maxSummary) // 2 bytes each: twice the cap
	if err := s.AppendAudit(ctx, AuditEntry{Tool: "t", ArgsSummary: long, Detail: "bad\xffutf8", DurationMS: -5}); err != nil {
		t.Fatal(err)
	}
	got, _, _ := s.ListAudit(ctx, AuditQuery{})
	e := got[0]
	if e.Time.Before(before) || e.Time.After(time.Now().Add(time.Second)) {
		t.Errorf("zero Time became %v, want now", e.Time)
	}
	if len(e.ArgsSummary) > maxSummary || !strings.HasSuffix(e.ArgsSummary, truncMark) || !utf8.ValidString(e.ArgsSummary) {
		t.Errorf("long summary stored as %d bytes (valid UTF-8 %v), want ≤ %d ending in the truncation mark",
			len(e.ArgsSummary), utf8.ValidString(e.ArgsSummary), maxSummary)
	}
	if e.Detail != "bad\uFFFDutf8" {
		t.Errorf("invalid UTF-8 stored as %q", e.Detail)
	}
	if e.DurationMS != 0 {
		t.Errorf("negative duration stored as %d, want 0", e.DurationMS)
	}
}

func TestAppendAuditConcurrently(t *testing.T) {
	s, _ := openTemp(t)
	const writers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				errs <- s.AppendAudit(context.Background(), AuditEntry{SessionID: fmt.Sprint("w", w), Tool: "t", Outcome: OutcomeOK, DurationMS: int64(i)})
			}
		}()
	}
	// Readers run alongside the writers, as ha_get_audit_log would.
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				if _, _, err := s.ListAudit(context.Background(), AuditQuery{Limit: 10}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	_, total, _ := s.ListAudit(context.Background(), AuditQuery{})
	if total != writers*each {
		t.Fatalf("total %d, want %d", total, writers*each)
	}
}

func FuzzAuditRoundTrip(f *testing.F) {
	s, _ := openTemp(f)
	f.Add("s1", "ha_read_file", "path=/config/x.yaml", "'; DROP TABLE audit_log; --")
	f.Add("", "", "", "")
	f.Add("\x00", "é", strings.Repeat("x", 3000), "\xff\xfe")
	f.Fuzz(func(t *testing.T, session, tool, summary, detail string) {
		ctx := context.Background()
		e := AuditEntry{Time: t0, SessionID: session, Tool: tool, ArgsSummary: summary, Detail: detail, Outcome: "fuzz"}
		if err := s.AppendAudit(ctx, e); err != nil {
			t.Fatal(err)
		}
		got, total, err := s.ListAudit(ctx, AuditQuery{SessionID: Clip(session, maxShortField), Tool: Clip(tool, maxShortField), Outcome: "fuzz", Limit: 1})
		if err != nil || total == 0 {
			t.Fatalf("entry not found by its own fields: total %d, err %v", total, err)
		}
		if got[0].ArgsSummary != Clip(summary, maxSummary) || got[0].Detail != Clip(detail, maxDetail) {
			t.Fatalf("round trip changed the text: %q/%q -> %q/%q", summary, detail, got[0].ArgsSummary, got[0].Detail)
		}
		if len(got[0].ArgsSummary) > maxSummary || !utf8.ValidString(got[0].ArgsSummary) {
			t.Fatalf("stored summary breaks the cap or UTF-8: %q", got[0].ArgsSummary)
		}
		if _, err := s.DB().ExecContext(ctx, `DELETE FROM audit_log WHERE outcome = 'fuzz'`); err != nil {
			t.Fatal(err)
		}
	})
}

func BenchmarkAppendAudit(b *testing.B) {
	s, _ := openTemp(b)
	ctx := context.Background()
	e := AuditEntry{SessionID: "bench", Client: "claude-code/1.0", Tool: "ha_read_file", Category: "filesystem",
		ArgsSummary: "path=/config/configuration.yaml", Outcome: OutcomeOK, DurationMS: 3}
	b.ResetTimer()
	for b.Loop() {
		if err := s.AppendAudit(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkListAuditPage(b *testing.B) {
	s, _ := openTemp(b)
	ctx := context.Background()
	tx, _ := s.DB().Begin()
	for i := range 100_000 {
		tx.Exec(insertAuditSQL, Millis(t0.Add(time.Duration(i)*time.Second)), fmt.Sprint("s", i%50), "c", "ha_read_file", "filesystem", "p", OutcomeOK, "", 1)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := s.ListAudit(ctx, AuditQuery{SessionID: "s7", Limit: 100, Offset: 500}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestAppendAuditsWritesABatchInOrder(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	ctx := context.Background()
	var batch []AuditEntry
	for i := range 300 {
		batch = append(batch, AuditEntry{Time: t0.Add(time.Duration(i) * time.Second), SessionID: "batch", Tool: fmt.Sprint("tool_", i), Outcome: OutcomeOK})
	}
	if err := s.AppendAudits(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendAudits(ctx, nil); err != nil {
		t.Fatalf("an empty batch: %v", err)
	}
	got, total, err := s.ListAudit(ctx, AuditQuery{SessionID: "batch", Limit: 1000})
	if err != nil || total != 300 || len(got) != 300 {
		t.Fatalf("ListAudit: %d of %d, %v", len(got), total, err)
	}
	for i, e := range got { // newest first
		if want := fmt.Sprint("tool_", 299-i); e.Tool != want || !e.Time.Equal(batch[299-i].Time) {
			t.Fatalf("row %d: %s at %v, want %s", i, e.Tool, e.Time, want)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.AppendAudits(cancelled, batch[:10]); err == nil {
		t.Fatal("a batch with a cancelled context was written")
	}
	if _, total, _ := s.ListAudit(ctx, AuditQuery{SessionID: "batch"}); total != 300 {
		t.Fatalf("a failed batch left %d rows, want the 300 before it", total)
	}
}

// BenchmarkAppendAudits is one entry's share of a 64-entry batch (compare BenchmarkAppendAudit).
func BenchmarkAppendAudits(b *testing.B) {
	s, _ := openTemp(b)
	ctx := context.Background()
	batch := make([]AuditEntry, 64)
	for i := range batch {
		batch[i] = AuditEntry{SessionID: "bench", Client: "claude-code/1.0", Tool: "ha_read_file", Category: "filesystem",
			ArgsSummary: "path=/config/configuration.yaml", Outcome: OutcomeOK, DurationMS: 3}
	}
	b.ResetTimer()
	for b.Loop() {
		if err := s.AppendAudits(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/entry")
}

package hubstore

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

var hubT0 = time.Date(2026, 1, 31, 10, 0, 0, 0, time.UTC)

func TestCapturedStatesEvictOldestAndReplaceSameID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openTemp(t)
	for i := range 5 {
		ev, err := s.SaveCapturedState(ctx, CapturedState{ID: fmt.Sprintf("s%d", i), CapturedAt: hubT0.Add(time.Duration(i) * time.Minute),
			Devices: map[string]map[string]string{"1": {"switch": "on"}, "2": {"level": "40"}}}, 3)
		if err != nil {
			t.Fatal(err)
		}
		if want := i >= 3; (len(ev) == 1) != want {
			t.Fatalf("save %d evicted %v", i, ev)
		}
	}
	// Re-capturing an existing id replaces it and evicts nothing, even at the limit.
	ev, err := s.SaveCapturedState(ctx, CapturedState{ID: "s2", CapturedAt: hubT0.Add(time.Hour), Devices: map[string]map[string]string{"9": {"switch": "off"}}}, 3)
	if err != nil || len(ev) != 0 {
		t.Fatalf("replace: evicted %v, %v", ev, err)
	}
	got, err := s.CapturedStates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range got {
		ids = append(ids, c.ID)
	}
	if fmt.Sprint(ids) != "[s2 s4 s3]" {
		t.Fatalf("newest first: %v", ids)
	}
	one, ok, err := s.CapturedState(ctx, "s2")
	if err != nil || !ok || one.Devices["9"]["switch"] != "off" || len(one.Devices) != 1 || !one.CapturedAt.Equal(hubT0.Add(time.Hour)) {
		t.Fatalf("read s2: %+v %v %v", one, ok, err)
	}
	if _, ok, _ := s.CapturedState(ctx, "s0"); ok {
		t.Fatal("s0 should have been evicted")
	}
	if ok, err := s.DeleteCapturedState(ctx, "s3"); !ok || err != nil {
		t.Fatalf("delete s3: %v %v", ok, err)
	}
	if ok, _ := s.DeleteCapturedState(ctx, "s3"); ok {
		t.Fatal("second delete reported a capture")
	}
	if n, err := s.ClearCapturedStates(ctx); n != 2 || err != nil {
		t.Fatalf("clear: %d %v", n, err)
	}
	for _, bad := range []string{"", string(bytes.Repeat([]byte("x"), 101)), "\xff"} {
		if _, err := s.SaveCapturedState(ctx, CapturedState{ID: bad}, 0); err == nil {
			t.Errorf("id %q accepted", bad)
		}
	}
}

func TestDebugLogRingBufferAndLevel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openTemp(t)
	if lvl, _ := s.DebugLogLevel(ctx); lvl != DefaultDebugLevel {
		t.Fatalf("default level %q", lvl)
	}
	if kept, _ := s.AppendDebugLog(ctx, DebugEntry{Time: hubT0, Level: "info", Message: "dropped"}); kept {
		t.Fatal("info kept at level error")
	}
	if prev, err := s.SetDebugLogLevel(ctx, "debug"); prev != "error" || err != nil {
		t.Fatalf("set level: %q %v", prev, err)
	}
	if _, err := s.SetDebugLogLevel(ctx, "verbose"); err == nil {
		t.Fatal("unknown level accepted")
	}
	if _, err := s.AppendDebugLog(ctx, DebugEntry{Level: "loud"}); err == nil {
		t.Fatal("unknown entry level accepted")
	}
	for i := range DebugLogCapacity + 30 {
		lvl := DebugLevels[i%4]
		comp := "server"
		if i%2 == 1 {
			comp = "hub-admin"
		}
		if _, err := s.AppendDebugLog(ctx, DebugEntry{Time: hubT0.Add(time.Duration(i) * time.Second), Level: lvl, Component: comp,
			RuleID: fmt.Sprint(i % 3), Message: fmt.Sprintf("m%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.DebugLogs(ctx, DebugQuery{})
	if err != nil || len(all) != DebugLogCapacity {
		t.Fatalf("ring holds %d entries, %v", len(all), err)
	}
	if all[0].Message != "m30" || all[len(all)-1].Message != "m129" {
		t.Fatalf("ring order: first %s last %s", all[0].Message, all[len(all)-1].Message)
	}
	cases := []struct {
		q     DebugQuery
		n     int
		first string
	}{
		{DebugQuery{Level: "error"}, 25, "m31"},
		{DebugQuery{Component: "admin"}, 50, "m31"},
		{DebugQuery{RuleID: "0", Limit: 5}, 5, "m117"},
		{DebugQuery{Level: "warn", Component: "server", Limit: 3}, 3, "m118"},
		{DebugQuery{Component: "nothing"}, 0, ""},
	}
	for _, c := range cases {
		got, err := s.DebugLogs(ctx, c.q)
		if err != nil || len(got) != c.n || c.n > 0 && got[0].Message != c.first {
			t.Errorf("%+v: %d entries (first %v), %v; want %d first %s", c.q, len(got), got, err, c.n, c.first)
		}
	}
	st, err := s.DebugLogStatus(ctx)
	if err != nil || st.Total != 100 || st.ByLevel["error"] != 25 || st.Level != "debug" || !st.Oldest.Equal(hubT0.Add(30*time.Second)) ||
		!st.Newest.Equal(hubT0.Add(129*time.Second)) || st.Capacity != DebugLogCapacity {
		t.Fatalf("status %+v %v", st, err)
	}
	if n, _ := s.ClearDebugLogs(ctx); n != 100 {
		t.Fatalf("cleared %d", n)
	}
	if st, _ := s.DebugLogStatus(ctx); st.Total != 0 || !st.Oldest.IsZero() {
		t.Fatalf("after clear %+v", st)
	}
	long := string(bytes.Repeat([]byte("é"), 5000))
	if _, err := s.AppendDebugLog(ctx, DebugEntry{Time: hubT0, Level: "error", Message: long, Details: long}); err != nil {
		t.Fatal(err)
	}
	got, _ := s.DebugLogs(ctx, DebugQuery{})
	if len(got[0].Message) > maxDebugMessage || len(got[0].Details) > maxDebugDetails {
		t.Fatalf("not clipped: %d %d", len(got[0].Message), len(got[0].Details))
	}
}

func TestDebugLogConcurrentWritersKeepCapacity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openTemp(t)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 40 {
				if _, err := s.AppendDebugLog(ctx, DebugEntry{Time: hubT0, Level: "error", Message: fmt.Sprintf("w%d-%d", w, i)}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if st, _ := s.DebugLogStatus(ctx); st.Total != DebugLogCapacity {
		t.Fatalf("after concurrent writes: %d entries", st.Total)
	}
}

func TestHubBackupsAreFilesBesideTheDatabaseAndPruned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hamcp.db")
	st, s := openFile(t, path)
	if _, ok, err := s.LastHubBackup(ctx); ok || err != nil {
		t.Fatalf("fresh store has a backup: %v %v", ok, err)
	}
	if _, err := s.SaveHubBackup(ctx, hubT0, nil); err == nil {
		t.Fatal("empty backup accepted")
	}
	var saved []HubBackup
	for i := range HubBackupsKept + 2 {
		b, err := s.SaveHubBackup(ctx, hubT0.Add(time.Duration(i)*time.Minute), []byte(fmt.Sprintf("backup %d", i)))
		if err != nil {
			t.Fatal(err)
		}
		saved = append(saved, b)
	}
	dir := filepath.Join(filepath.Dir(path), hubBackupDir)
	entries, _ := os.ReadDir(dir)
	if len(entries) != HubBackupsKept {
		t.Fatalf("%d files kept, want %d", len(entries), HubBackupsKept)
	}
	last := saved[len(saved)-1]
	data, err := os.ReadFile(last.Path)
	if err != nil || string(data) != fmt.Sprintf("backup %d", HubBackupsKept+1) || filepath.Dir(last.Path) != dir {
		t.Fatalf("last backup file %s: %q %v", last.Path, data, err)
	}
	if fi, _ := os.Stat(last.Path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup mode %v", fi.Mode())
	}
	if _, err := os.Stat(saved[0].Path); !os.IsNotExist(err) {
		t.Fatalf("oldest file not pruned: %v", err)
	}
	// The time of the last backup survives a restart.
	st.Close()
	st2, s2 := openFile(t, path)
	defer st2.Close()
	got, ok, err := s2.LastHubBackup(ctx)
	if err != nil || !ok || !got.TakenAt.Equal(last.TakenAt) || got.Path != last.Path || got.SHA256 != last.SHA256 || got.Size != last.Size {
		t.Fatalf("after reopen: %+v %v %v, want %+v", got, ok, err, last)
	}
}

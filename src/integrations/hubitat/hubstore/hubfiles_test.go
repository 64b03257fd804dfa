package hubstore

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestKeepHubFile: copies land beside the database, outside the backups hamcp counts, private to
// the add-on, newest first, pruned to KeptCopies per name.
func TestKeepHubFile(t *testing.T) {
	s, dbPath := openTemp(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	for i := range KeptCopies + 2 {
		if _, err := s.KeepHubFile(ctx, HubFileHistory, "notes.txt", at.Add(time.Duration(i)*time.Second), []byte{byte('a' + i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.KeepHubFile(ctx, HubFileHistory, "other.txt", at, []byte("x")); err != nil {
		t.Fatal(err)
	}
	kept, err := s.KeptCopiesOf(ctx, HubFileHistory, "notes.txt")
	if err != nil || len(kept) != KeptCopies {
		t.Fatalf("%d copies kept (%v), want %d", len(kept), err, KeptCopies)
	}
	if data, _ := os.ReadFile(kept[0].Path); string(data) != string(rune('a'+KeptCopies+1)) {
		t.Errorf("newest copy holds %q", data)
	}
	if fi, _ := os.Stat(kept[0].Path); fi.Mode().Perm() != 0o600 || filepath.Dir(filepath.Dir(kept[0].Path)) != filepath.Dir(dbPath) {
		t.Errorf("copy %s mode %v", kept[0].Path, fi.Mode())
	}
	if other, _ := s.KeptCopiesOf(ctx, HubFileHistory, "other.txt"); len(other) != 1 {
		t.Errorf("pruning one name touched another: %d", len(other))
	}
	if _, ok, _ := s.LastHubBackup(ctx); ok {
		t.Error("a kept file counts as a hub backup")
	}
	for _, bad := range []string{"../x", "a/b", ".hidden", "x@y", ""} {
		if _, err := s.KeepHubFile(ctx, HubDownloads, bad, at, []byte("x")); err == nil {
			t.Errorf("name %q kept", bad)
		}
	}
	if _, err := s.KeepHubFile(ctx, "elsewhere", "x.txt", at, []byte("x")); err == nil {
		t.Error("an unknown folder accepted")
	}
}

package recorder

import (
	"database/sql"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	out.Close()
}

func TestOpenLocates(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "config", "home-assistant_v2.db")
	os.MkdirAll(filepath.Dir(real), 0o755)
	copyFile(t, generated(t), real)
	weird := filepath.Join(dir, "we?ird#name%25.db")
	copyFile(t, generated(t), weird)
	missing := filepath.Join(dir, "homeassistant", "home-assistant_v2.db")
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"first existing candidate", Options{Candidates: []string{missing, real}}, real},
		{"explicit path wins", Options{Path: real, Candidates: []string{missing}}, real},
		{"characters SQLite URIs treat specially", Options{Path: weird}, weird},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db, err := Open(tc.o)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if db.Path() != tc.want {
				t.Errorf("Path() = %s, want %s", db.Path(), tc.want)
			}
			in, err := db.Info(t.Context())
			if err != nil || in.Entities == 0 {
				t.Fatalf("info: %+v %v", in, err)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("this is not a database at all"), 0o644)
	plain := filepath.Join(dir, "plain.db")
	p, err := sql.Open("sqlite", plain)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Exec("CREATE TABLE t (x)"); err != nil {
		t.Fatal(err)
	}
	p.Close()
	tests := []struct {
		name string
		o    Options
		want string
		is   error
	}{
		{"nothing found", Options{Candidates: []string{filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")}}, "tried " + filepath.Join(dir, "a.db"), nil},
		{"explicit path missing", Options{Path: filepath.Join(dir, "gone.db")}, "gone.db", nil},
		{"directory", Options{Path: dir}, "not a regular file", nil},
		{"not sqlite", Options{Path: text}, "not a SQLite database", nil},
		{"sqlite but not HA", Options{Path: plain}, "schema_changes", ErrNotRecorder},
		{"nul in path", Options{Path: "a\x00b"}, "NUL", nil},
		{"negative busy timeout", Options{Path: plain, BusyTimeout: -time.Second}, "busy_timeout", nil},
		{"negative statement timeout", Options{Path: plain, StatementTimeout: -1}, "statement_timeout", nil},
		{"max rows too big", Options{Path: plain, MaxRows: 1 << 30}, "max_rows", nil},
		{"negative max rows", Options{Path: plain, MaxRows: -1}, "max_rows", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db, err := Open(tc.o)
			if err == nil {
				db.Close()
				t.Fatal("opened")
			}
			if !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Fatalf("err = %v, want one naming %q", err, tc.want)
			}
		})
	}
}

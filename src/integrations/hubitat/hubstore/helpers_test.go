package hubstore

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/hamcp/hamcp/src/store"
)

// openTemp is a fresh store file with the Hubitat tables, closed when the test ends.
func openTemp(t testing.TB) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hamcp.db")
	st, s := openFile(t, path)
	t.Cleanup(func() { st.Close() })
	return s, path
}

// openFile opens the store file at path and adds the Hubitat tables, as the app does when the
// integration starts; the caller closes st.
func openFile(t testing.TB, path string) (st *store.Store, s *Store) {
	t.Helper()
	st, err := store.Open(path)
	if err != nil {
		t.Fatalf("store.Open(%s): %v", path, err)
	}
	if s, err = Open(context.Background(), st); err != nil {
		st.Close()
		t.Fatal(err)
	}
	return st, s
}

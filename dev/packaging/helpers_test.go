package packaging

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// repo is the repository root, found once for the package.
var repo = sync.OnceValues(func() (string, error) { return Root(".") })

func root(t *testing.T) string { t.Helper(); return must(t, repo) }

// must returns a shared fixture, failing the test when it could not be made.
func must[T any](t *testing.T, fixture func() (T, error)) T {
	t.Helper()
	v, err := fixture()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func readYAML(t *testing.T, rel string) map[string]any {
	t.Helper()
	m, err := ReadYAML(filepath.Join(root(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func manifest(t *testing.T) Manifest {
	t.Helper()
	m, err := DecodeManifest(readYAML(t, "config.yaml"))
	if err != nil {
		t.Fatalf("config.yaml: %v", err)
	}
	return m
}

// linterSchema is the add-on linter's JSON Schema for config.yaml, resolved once.
var linterSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	raw, err := os.ReadFile(filepath.Join("testdata", "addon-config.schema.json"))
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	return &s, json.Unmarshal(raw, &s)
})

func resolvedSchema(t *testing.T) (*jsonschema.Schema, *jsonschema.Resolved) {
	t.Helper()
	s, err := linterSchema()
	if err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("resolving the linter's schema: %v", err)
	}
	return s, rs
}

// inCI reports whether a missing tool must fail the test rather than skip it.
func inCI() bool { return os.Getenv("CI") == "true" }

package packaging

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestVendoredSDKIsUpstreamPlusThePatches: third_party/go-sdk is the official go-sdk at the
// version go.mod names, file for file, with only the patches in docs/upstream/ applied (the
// changes proposed upstream; docs/performance.md has their benchmarks). When upstream takes them,
// the replace directive and third_party/ go; until then, an upgrade copies the new release and
// applies the patches again, and this test says whether that was done.
func TestVendoredSDKIsUpstreamPlusThePatches(t *testing.T) {
	root := filepath.Join("..", "..")
	const version = "v1.8.0"
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(gomod, []byte("github.com/modelcontextprotocol/go-sdk "+version)) ||
		!bytes.Contains(gomod, []byte("replace github.com/modelcontextprotocol/go-sdk => ./third_party/go-sdk")) {
		t.Fatalf("go.mod must require go-sdk %s and replace it with ./third_party/go-sdk", version)
	}
	out, err := exec.Command("go", "mod", "download", "-json", "github.com/modelcontextprotocol/go-sdk@"+version).Output()
	if err != nil {
		t.Fatalf("go mod download: %v", err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download: %s", out)
	}
	ours := filepath.Join(root, "third_party", "go-sdk")
	patches := map[string]string{} // file → its patch, from each patch's "+++ b/<file>" line
	found, _ := filepath.Glob(filepath.Join(root, "docs", "upstream", "go-sdk-*.patch"))
	for _, p := range found {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		_, rest, ok := strings.Cut(string(b), "\n+++ b/")
		file, _, _ := strings.Cut(rest, "\n")
		if !ok || file == "" {
			t.Fatalf("%s: no +++ b/<file> line", p)
		}
		patches[file] = string(b)
	}
	if len(patches) == 0 {
		t.Fatal("no patches in docs/upstream")
	}
	seen := 0
	err = filepath.WalkDir(ours, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(ours, p)
		seen++
		upstream := filepath.Join(mod.Dir, rel)
		if want, ok := patches[filepath.ToSlash(rel)]; ok {
			diff, _ := exec.Command("diff", "-u", upstream, p).Output()
			if body(diff) != body([]byte(want)) {
				t.Errorf("%s differs from upstream by more or less than the patch:\n%s", rel, diff)
			}
			return nil
		}
		a, err := os.ReadFile(upstream)
		if err != nil {
			t.Errorf("%s is not in go-sdk %s", rel, version)
			return nil
		}
		b, _ := os.ReadFile(p)
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs from go-sdk %s", rel, version)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 40 {
		t.Fatalf("only %d files under third_party/go-sdk", seen)
	}
}

// body is a unified diff without its two header lines (paths and times).
func body(diff []byte) string {
	lines := strings.SplitN(string(diff), "\n", 3)
	if len(lines) < 3 {
		return ""
	}
	return lines[2]
}

package packaging

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// addonScripts are the shell scripts the image build and the container run, and the client example.
var addonScripts = []string{"run.sh", "addon/compile-hamcp.sh", "addon/clients/claude-code.sh"}

// TestScriptsShellcheck runs Debian's shellcheck over the add-on's scripts (CI installs it).
func TestScriptsShellcheck(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("shellcheck")
	if err != nil {
		if inCI() {
			t.Fatal("shellcheck is not installed; .ci/run installs it (apt-get install shellcheck)")
		}
		t.Skip("shellcheck is not installed (apt-get install shellcheck)")
	}
	for _, s := range addonScripts {
		t.Run(s, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(bin, "--severity=style", "--external-sources", s)
			cmd.Dir = root(t)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("shellcheck %s: %v\n%s", s, err, out)
			}
		})
	}
}

// TestScriptsExecutable: the image runs them directly, so git must record them as executable
// (git update-index --chmod=+x when committing from a file system without modes).
func TestScriptsExecutable(t *testing.T) {
	t.Parallel()
	for _, s := range addonScripts {
		fi, err := os.Stat(filepath.Join(root(t), s))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o111 != 0o111 {
			t.Errorf("%s has mode %v, want executable (0755)", s, fi.Mode().Perm())
		}
	}
}

// Package nodetest finds, for tests, Node and the official MCP TypeScript SDK that .ci/run
// installs into .ci/node_modules, so Go tests can drive hamcp with the SDK's own client.
package nodetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Find returns the node binary and the node_modules directory to put in NODE_PATH. root is the
// repository root. Missing, the test fails under CI=true (CI installs them) and is skipped
// elsewhere, saying how to install them.
func Find(t testing.TB, root string) (node, modules string) {
	t.Helper()
	modules = filepath.Join(root, ".ci", "node_modules")
	node = filepath.Join(modules, ".bin", "node")
	if _, err := os.Stat(node); err != nil {
		node, _ = exec.LookPath("node")
	}
	if _, err := os.Stat(filepath.Join(modules, "@modelcontextprotocol", "sdk", "package.json")); node == "" || err != nil {
		msg := "needs Node and @modelcontextprotocol/sdk in .ci/node_modules (bash .ci/run installs them, or: npm install --prefix .ci node@22 @modelcontextprotocol/sdk)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node, modules
}

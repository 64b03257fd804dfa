package demo_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/crypto/ssh"

	"github.com/hamcp/hamcp/src/config"
)

// sshBinary finds the OpenSSH client; CI installs it, so there a missing client is a failure.
func sshBinary(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("ssh")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("the OpenSSH client (ssh) is required in CI")
		}
		t.Skip("ssh not installed")
	}
	return p
}

func clientKey(t *testing.T) (keyFile, authorized string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "demo test")
	if err != nil {
		t.Fatal(err)
	}
	keyFile = filepath.Join(t.TempDir(), "id_ed25519")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return keyFile, string(ssh.MarshalAuthorizedKey(sshPub))
}

// TestSSHStdioWithOpenSSH runs MCP through the real OpenSSH client against the demo's SSH server,
// as Claude Desktop does with `ssh -p 2222 -i KEY hamcp@homeassistant.local`.
func TestSSHStdioWithOpenSSH(t *testing.T) {
	t.Parallel()
	sshBin := sshBinary(t)
	key, authorized := clientKey(t)
	e := startDemo(t, func(c *config.Config) { c.SSHAuthorizedKeys = authorized })
	ctx, cancel := context.WithCancel(context.Background())
	addr, wait, err := e.d.App.ServeSSH(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); wait() })
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(sshBin, "-p", port, "-i", key, "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
		"-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-o", "LogLevel=ERROR", "hamcp@127.0.0.1")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "ssh-test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var lights struct{ Total int }
	if res := callJSON(t, cs, "ha_get_states", map[string]any{"domain": "light", "limit": 1}, &lights); res.IsError || lights.Total == 0 {
		t.Fatalf("ha_get_states over ssh: %s", text(res))
	}
	// Root tools still ask: an SSH session starts with no grants.
	if te := asToolError(t, callJSON(t, cs, "ha_read_file", map[string]any{"path": "/config/configuration.yaml"}, nil)); te.Error != "permission_required" {
		t.Fatalf("ssh session started with a grant: %+v", te)
	}
}

package app

import (
	"crypto/ed25519"
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/hamcp/hamcp/src/config"
)

// TestServeSSHBusyPort: when the SSH port is taken, the error names the option to change and the
// address, and hamcp does not start an SSH server.
func TestServeSSHBusyPort(t *testing.T) {
	t.Parallel()
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	a := &App{
		Config: &config.Config{SSHAuthorizedKeys: string(ssh.MarshalAuthorizedKey(key)), SSHPort: busy.Addr().(*net.TCPAddr).Port, DataDir: t.TempDir()},
		Logger: slog.New(slog.DiscardHandler),
	}
	_, _, err = a.ServeSSH(t.Context(), busy.Addr().String())
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Option != "ssh_port" || !strings.Contains(err.Error(), busy.Addr().String()) {
		t.Fatalf("ServeSSH on a busy address: %v", err)
	}
}

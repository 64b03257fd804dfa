package sshserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/hamcp/hamcp/dev/testkit"
)

// These tests drive the real OpenSSH client, as Claude Desktop does.

func TestOpenSSHCarriesMCP(t *testing.T) {
	key := newClientKey(t, "alice@laptop")
	ts := startServer(t, "# hamcp test keys\n\n"+key.authorized+"\n", nil)

	cases := []struct {
		name   string
		extra  []string
		remote []string
	}{
		// Claude Desktop's config line: no command, so ssh asks for a shell.
		{name: "shell request", extra: []string{"-o", "SetEnv=HAMCP_TRY=1"}},
		{name: "exec of any command", remote: []string{"hamcp", "stdio", "--whatever"}},
		{name: "mcp subsystem", extra: []string{"-s"}, remote: []string{"mcp"}},
		{name: "no terminal flag", extra: []string{"-T"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs, stderr := ts.mcpOverSSH(t, ctx, key, tc.extra, tc.remote...)
			if got := cs.InitializeResult().ServerInfo.Name; got != "hamcp-ssh-test" {
				t.Fatalf("initialize: server name %q, want hamcp-ssh-test", got)
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			if len(tools.Tools) != 1 || tools.Tools[0].Name != "whoami" {
				t.Fatalf("tools/list = %+v, want the one whoami tool", tools.Tools)
			}
			w := callWhoami(t, ctx, cs, whoamiArgs{Echo: "héllo ✓"})
			if w.Echo != "héllo ✓" {
				t.Errorf("echo %q came back as %q", "héllo ✓", w.Echo)
			}
			if !strings.HasPrefix(w.SessionKey, "ssh-") || len(w.SessionKey) != len("ssh-")+32 {
				t.Errorf("session key %q, want ssh- and 32 hex digits", w.SessionKey)
			}
			wantUser := ssh.FingerprintSHA256(key.signer.PublicKey()) + " alice@laptop"
			if w.User != wantUser {
				t.Errorf("user %q, want %q", w.User, wantUser)
			}
			// Closing stdin ends the session; exit status 0 makes ssh exit 0.
			if err := cs.Close(); err != nil {
				t.Errorf("ssh exited with %v after the session (stderr: %s)", err, stderr.String())
			}
		})
	}
	if logs := ts.logs.String(); !strings.Contains(logs, "type=env") {
		t.Errorf("SetEnv reached the server without being refused; log:\n%s", logs)
	}
	if logs := ts.logs.String(); strings.Contains(logs, strings.Fields(key.authorized)[1]) {
		t.Errorf("the server log contains the public key itself; only fingerprints may be logged:\n%s", logs)
	}
}

func TestOpenSSHSessionsAreSeparate(t *testing.T) {
	key := newClientKey(t, "")
	ts := startServer(t, key.authorized, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// Two SSH sessions open at the same time, from the same key; A records a grant first.
	csA, _ := ts.mcpOverSSH(t, ctx, key, nil)
	csB, _ := ts.mcpOverSSH(t, ctx, key, nil)
	a := callWhoami(t, ctx, csA, whoamiArgs{Grant: true})
	b := callWhoami(t, ctx, csB, whoamiArgs{})
	if a.SessionKey == b.SessionKey {
		t.Fatalf("two SSH sessions share session key %q", a.SessionKey)
	}
	if !a.Granted || b.Granted {
		t.Fatalf("grant made in session A leaked or got lost: A granted=%v, B granted=%v", a.Granted, b.Granted)
	}
	if a.User != b.User || a.User != ssh.FingerprintSHA256(key.signer.PublicKey()) {
		t.Errorf("users %q and %q, want the key fingerprint for both", a.User, b.User)
	}
	if again := callWhoami(t, ctx, csA, whoamiArgs{}); again.SessionKey != a.SessionKey || !again.Granted {
		t.Errorf("session A changed key or lost its grant between calls: %+v then %+v", a, again)
	}
	for _, cs := range []interface{ Close() error }{csA, csB} {
		if err := cs.Close(); err != nil {
			t.Errorf("ssh exited with %v", err)
		}
	}
}

func TestOpenSSHRefusals(t *testing.T) {
	key := newClientKey(t, "")
	stranger := newClientKey(t, "")
	ts := startServer(t, key.authorized, nil)

	cases := []struct {
		name       string
		key        clientKey
		extra      []string
		remote     []string
		wantStderr string
		wantLog    string // what the server log must say about it
	}{
		{name: "key not in authorized_keys", key: stranger, wantStderr: "Permission denied (publickey)",
			wantLog: "fingerprint=" + ssh.FingerprintSHA256(stranger.signer.PublicKey())},
		{name: "password", key: key, extra: []string{"-o", "PreferredAuthentications=password", "-o", "PasswordAuthentication=yes", "-o", "PubkeyAuthentication=no"},
			wantStderr: "Permission denied (publickey)"},
		{name: "keyboard-interactive", key: key, extra: []string{"-o", "PreferredAuthentications=keyboard-interactive", "-o", "KbdInteractiveAuthentication=yes", "-o", "PubkeyAuthentication=no"},
			wantStderr: "Permission denied (publickey)"},
		{name: "remote port forwarding", key: key, extra: []string{"-N", "-R", "0:127.0.0.1:9", "-o", "ExitOnForwardFailure=yes"},
			wantStderr: "remote port forwarding failed", wantLog: "type=tcpip-forward"},
		{name: "stdio forwarding (direct-tcpip)", key: key, extra: []string{"-W", ts.addr},
			wantStderr: "stdio forwarding failed", wantLog: "type=direct-tcpip"},
		{name: "terminal forced", key: key, extra: []string{"-tt"}, wantStderr: "PTY allocation request failed", wantLog: "SSH terminal request refused"},
		{name: "other subsystem", key: key, extra: []string{"-s"}, remote: []string{"sftp"}, wantStderr: "subsystem request failed", wantLog: "subsystem=sftp"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			before := ts.served.Load()
			cmd := ts.sshCommand(t, ctx, tc.key, append([]string{"-o", "LogLevel=INFO"}, tc.extra...), tc.remote...)
			code, stdout, stderr := runSSH(t, cmd, "")
			if code == 0 {
				t.Fatalf("ssh succeeded; want it refused (stdout %q, stderr %q)", stdout, stderr)
			}
			if !strings.Contains(stderr, tc.wantStderr) {
				t.Errorf("ssh stderr %q does not mention %q", stderr, tc.wantStderr)
			}
			if tc.wantLog != "" && !strings.Contains(ts.logs.String(), tc.wantLog) {
				t.Errorf("server log does not say %q:\n%s", tc.wantLog, ts.logs.String())
			}
			if strings.HasPrefix(tc.name, "key") || tc.name == "password" || tc.name == "keyboard-interactive" {
				if n := ts.served.Load() - before; n != 0 {
					t.Errorf("an MCP session started for a refused login (%d)", n)
				}
			}
		})
	}

	// The server is still healthy after all that.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, _ := ts.mcpOverSSH(t, ctx, key, nil)
	callWhoami(t, ctx, cs, whoamiArgs{})
	if err := cs.Close(); err != nil {
		t.Errorf("ssh after the refusals: %v", err)
	}
}

func TestOpenSSHConnectionCap(t *testing.T) {
	key := newClientKey(t, "")
	ts := startServer(t, key.authorized, func(o *Options) { o.MaxConnections = 2 })
	held := []*ssh.Client{dialGo(t, ts.addr, key), dialGo(t, ts.addr, key)}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code, _, stderr := runSSH(t, ts.sshCommand(t, ctx, key, []string{"-o", "LogLevel=INFO"}), "")
	if code == 0 {
		t.Fatalf("a third connection was accepted with MaxConnections=2")
	}
	if !strings.Contains(stderr, "too many SSH connections (limit 2)") {
		t.Errorf("refused client was not told why; stderr %q", stderr)
	}

	_ = held[0].Close()
	testkit.EventuallyNoError(t, "a connection after one was closed", func() error {
		code, _, stderr := runSSH(t, ts.sshCommand(t, ctx, key, nil), "")
		if code != 0 {
			return fmt.Errorf("ssh exit %d: %s", code, stderr)
		}
		return nil
	})
}

func TestOpenSSHHostKeySurvivesRestart(t *testing.T) {
	key := newClientKey(t, "")
	hostKeyPath := filepath.Join(t.TempDir(), "data", "ssh_host_ed25519_key")
	first := startServer(t, key.authorized, func(o *Options) { o.HostKeyPath = hostKeyPath })
	pinned := first.hostKey.PublicKey()
	first.stop(t)

	second := startServer(t, key.authorized, func(o *Options) { o.HostKeyPath = hostKeyPath })
	if second.HostKeyFingerprint() != ssh.FingerprintSHA256(pinned) {
		t.Fatalf("host key changed across restart: %s then %s", ssh.FingerprintSHA256(pinned), second.HostKeyFingerprint())
	}
	// OpenSSH with strict checking against the key pinned from the first run.
	knownHosts := filepath.Join(t.TempDir(), "known_hosts")
	line := fmt.Sprintf("[127.0.0.1]:%s %s", second.port, ssh.MarshalAuthorizedKey(pinned))
	if err := os.WriteFile(knownHosts, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := second.sshCommand(t, ctx, key, []string{"-o", "StrictHostKeyChecking=yes", "-o", "UserKnownHostsFile=" + knownHosts})
	if code, _, stderr := runSSH(t, cmd, ""); code != 0 {
		t.Fatalf("ssh with the pinned host key failed (exit %d): %s", code, stderr)
	}
}

func TestOpenSSHShutdownEndsSessions(t *testing.T) {
	key := newClientKey(t, "")
	ts := startServer(t, key.authorized, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, _ := ts.mcpOverSSH(t, ctx, key, nil)
	callWhoami(t, ctx, cs, whoamiArgs{})

	ts.stop(t) // fails the test if Serve does not return promptly
	ended := make(chan error, 1)
	go func() { ended <- cs.Wait() }()
	select {
	case <-ended:
	case <-ctx.Done():
		t.Fatal("the MCP session over ssh was still open after the server shut down")
	}
	_ = cs.Close()
}

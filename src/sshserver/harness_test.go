package sshserver

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/crypto/ssh"

	"github.com/hamcp/hamcp/src/authn"
)

// clientKey is an SSH key pair made for one test, with the private half on disk for ssh -i.
type clientKey struct {
	priv       ed25519.PrivateKey
	signer     ssh.Signer
	path       string // private key file, mode 0600
	authorized string // authorized_keys line
}

func newClientKey(t testing.TB, comment string) clientKey {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, comment)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "id_ed25519")
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey())))
	if comment != "" {
		line += " " + comment
	}
	return clientKey{priv: priv, signer: signer, path: path, authorized: line}
}

// grantBook stands in for the permission manager: grants are recorded per session key, which is
// exactly the property the SSH server must provide (one key per SSH session).
type grantBook struct {
	mu     sync.Mutex
	grants map[string]bool
}

func (g *grantBook) grant(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.grants[key] = true
}

func (g *grantBook) has(key string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.grants[key]
}

type whoami struct {
	SessionKey string `json:"session_key"`
	User       string `json:"user"`
	Echo       string `json:"echo"`
	Granted    bool   `json:"granted"`
}

type whoamiArgs struct {
	Echo  string `json:"echo,omitempty" jsonschema:"text to send back"`
	Grant bool   `json:"grant,omitempty" jsonschema:"record a permission grant for this session first"`
}

// testServer is a running sshserver with the go-sdk MCP server of the tests behind it.
type testServer struct {
	*Server
	addr   string
	port   string
	cancel context.CancelFunc
	done   chan error
	served atomic.Int32 // Serve calls, i.e. MCP sessions started
	grants *grantBook
	logs   *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// mcpServe is the Options.Serve the tests use: a small go-sdk server with one tool.
func (ts *testServer) mcpServe(ctx context.Context, rw io.ReadWriteCloser, sessionKey string, who *authn.Principal) error {
	ts.served.Add(1)
	srv := mcp.NewServer(&mcp.Implementation{Name: "hamcp-ssh-test", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "reports the SSH session key and user"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in whoamiArgs) (*mcp.CallToolResult, whoami, error) {
			if in.Grant {
				ts.grants.grant(sessionKey)
			}
			return nil, whoami{SessionKey: sessionKey, User: who.String(), Echo: in.Echo, Granted: ts.grants.has(sessionKey)}, nil
		})
	err := srv.Run(ctx, &mcp.IOTransport{Reader: rw, Writer: rw})
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// startServer runs a Server on 127.0.0.1:0 until the test ends. edit may adjust the options.
func startServer(t *testing.T, authorized string, edit func(*Options)) *testServer {
	t.Helper()
	ts := &testServer{grants: &grantBook{grants: map[string]bool{}}, logs: &lockedBuffer{}, done: make(chan error, 1)}
	o := Options{
		AuthorizedKeys: authorized,
		HostKeyPath:    filepath.Join(t.TempDir(), "ssh_host_ed25519_key"),
		Logger:         slog.New(slog.NewTextHandler(ts.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Serve:          ts.mcpServe,
	}
	if edit != nil {
		edit(&o)
	}
	s, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ts.Server = s
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts.addr = ln.Addr().String()
	ts.port = strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ctx, cancel := context.WithCancel(context.Background())
	ts.cancel = cancel
	go func() { ts.done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() { ts.stop(t) })
	return ts
}

// stop shuts the server down and checks Serve returned cleanly; safe to call twice.
func (ts *testServer) stop(t *testing.T) {
	t.Helper()
	ts.cancel()
	select {
	case err, ok := <-ts.done:
		if ok && err != nil {
			t.Errorf("Serve returned %v after shutdown", err)
		}
		if ok {
			close(ts.done)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("Serve did not return within 10s of shutdown")
	}
}

// sshPath finds the OpenSSH client. CI installs it, so there its absence is a failure.
func sshPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("ssh")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the OpenSSH client (ssh) is required in CI: %v", err)
		}
		t.Skipf("OpenSSH client not installed: %v", err)
	}
	return p
}

// sshCommand builds an OpenSSH invocation against ts with key; extra goes before the destination,
// after it come remote command words.
func (ts *testServer) sshCommand(t *testing.T, ctx context.Context, key clientKey, extra []string, remote ...string) *exec.Cmd {
	t.Helper()
	args := []string{
		"-F", "/dev/null", // no user or system ssh_config
		"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
		"-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-o", "ConnectTimeout=10",
		"-o", "LogLevel=ERROR",
		"-i", key.path, "-p", ts.port,
	}
	args = append(args, extra...)
	args = append(args, "hamcp@127.0.0.1")
	args = append(args, remote...)
	cmd := exec.CommandContext(ctx, sshPath(t), args...)
	cmd.Env = append(os.Environ(), "SSH_AUTH_SOCK=") // keep any agent of the machine out of it
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// runSSH runs ssh to completion with stdin as input and returns its exit code, stdout and stderr.
func runSSH(t *testing.T, cmd *exec.Cmd, stdin string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("running ssh: %v (stderr: %s)", err, errb.String())
		}
		code = ee.ExitCode()
	}
	return code, out.String(), errb.String()
}

// mcpOverSSH connects a go-sdk client through the OpenSSH client.
func (ts *testServer) mcpOverSSH(t *testing.T, ctx context.Context, key clientKey, extra []string, remote ...string) (*mcp.ClientSession, *lockedBuffer) {
	t.Helper()
	cmd := ts.sshCommand(t, ctx, key, extra, remote...)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-like", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("MCP initialize through ssh: %v (ssh stderr: %s; server log: %s)", err, stderr.String(), ts.logs.String())
	}
	return cs, stderr
}

// callWhoami calls the test tool and decodes its structured result.
func callWhoami(t *testing.T, ctx context.Context, cs *mcp.ClientSession, args whoamiArgs) whoami {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: args})
	if err != nil {
		t.Fatalf("tools/call whoami: %v", err)
	}
	if res.IsError {
		t.Fatalf("tools/call whoami returned a tool error: %+v", res.Content)
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var w whoami
	if err := json.Unmarshal(raw, &w); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
	return w
}

// dialGo opens an authenticated connection with x/crypto's client, for protocol details the
// OpenSSH command line cannot show directly.
func dialGo(t *testing.T, addr string, key clientKey) *ssh.Client {
	t.Helper()
	c, err := dialGoErr(addr, ssh.PublicKeys(key.signer))
	if err != nil {
		t.Fatalf("ssh dial %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func dialGoErr(addr string, auth ...ssh.AuthMethod) (*ssh.Client, error) {
	return ssh.Dial("tcp", addr, &ssh.ClientConfig{
		User:            "hamcp",
		Auth:            auth,
		HostKeyCallback: ssh.InsecureIgnoreHostKey(),
		Timeout:         10 * time.Second,
	})
}

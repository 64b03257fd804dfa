package sshserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/hamcp/hamcp/dev/testkit"
	"github.com/hamcp/hamcp/src/authn"
)

// These tests use x/crypto's SSH client over loopback where exact protocol replies matter.

func TestChannelRequests(t *testing.T) {
	key := newClientKey(t, "")
	ts := startServer(t, key.authorized, nil)
	client := dialGo(t, ts.addr, key)

	str := func(s string) []byte { return ssh.Marshal(struct{ S string }{s}) }
	cases := []struct {
		name    string
		req     string
		payload []byte
		want    bool
	}{
		{"exec with any command", "exec", str("rm -rf / # ignored"), true},
		{"shell", "shell", nil, true},
		{"mcp subsystem", "subsystem", str("mcp"), true},
		{"sftp subsystem", "subsystem", str("sftp"), false},
		{"malformed exec", "exec", []byte{0, 0, 0, 9, 'x'}, false},
		{"env", "env", ssh.Marshal(struct{ K, V string }{"LD_PRELOAD", "/tmp/x.so"}), false},
		{"pty", "pty-req", ssh.Marshal(struct {
			Term         string
			W, H, PW, PH uint32
			Modes        string
		}{"xterm", 80, 24, 0, 0, ""}), false},
		{"x11", "x11-req", ssh.Marshal(struct {
			Single        bool
			Proto, Cookie string
			Screen        uint32
		}{false, "MIT-MAGIC-COOKIE-1", "00", 0}), false},
		{"agent forwarding", "auth-agent-req@openssh.com", nil, false},
		{"window change", "window-change", ssh.Marshal(struct{ W, H, PW, PH uint32 }{80, 24, 0, 0}), false},
		{"signal", "signal", str("KILL"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sess, err := client.NewSession()
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			ok, err := sess.SendRequest(tc.req, true, tc.payload)
			if err != nil {
				t.Fatalf("%s request: %v", tc.req, err)
			}
			if ok != tc.want {
				t.Fatalf("%s request answered %v, want %v", tc.req, ok, tc.want)
			}
			if ok {
				// Once the MCP session runs, nothing can start a second one on the channel.
				for _, again := range []string{"exec", "shell"} {
					if ok, err := sess.SendRequest(again, true, str("again")); err != nil || ok {
						t.Errorf("second %s on a running session answered %v, %v; want refused", again, ok, err)
					}
				}
			}
		})
	}
}

func TestExitStatus(t *testing.T) {
	key := newClientKey(t, "")
	ts := startServer(t, key.authorized, func(o *Options) {
		// A line-echoing Serve that fails when told to, standing in for an MCP session.
		o.Serve = func(ctx context.Context, rw io.ReadWriteCloser, _ string, _ *authn.Principal) error {
			defer rw.Close()
			line, err := bufio.NewReader(rw).ReadString('\n')
			if err != nil {
				return err
			}
			if _, err := fmt.Fprintf(rw, "got %s", line); err != nil {
				return err
			}
			switch strings.TrimSpace(line) {
			case "fail":
				return errors.New("session failed on purpose")
			case "panic":
				panic("session panicked on purpose")
			}
			return nil
		}
	})
	client := dialGo(t, ts.addr, key)
	cases := []struct {
		input string
		want  int
	}{
		{"ok\n", 0},
		{"fail\n", 1},
		{"panic\n", 1}, // and the server survives it: the next case runs on the same connection
		{"", 0},        // the client closes stdin at once: EOF is a normal end
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%q", tc.input), func(t *testing.T) {
			sess, err := client.NewSession()
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			sess.Stdin = strings.NewReader(tc.input)
			var out strings.Builder
			sess.Stdout = &out
			err = sess.Run("anything")
			code := 0
			var ee *ssh.ExitError
			switch {
			case errors.As(err, &ee):
				code = ee.ExitStatus()
			case err != nil:
				t.Fatalf("session ended without an exit status: %v", err)
			}
			if code != tc.want {
				t.Errorf("exit status %d, want %d", code, tc.want)
			}
			if tc.input != "" && out.String() != "got "+tc.input {
				t.Errorf("output %q, want %q", out.String(), "got "+tc.input)
			}
		})
	}
}

func TestForwardingRefused(t *testing.T) {
	key := newClientKey(t, "")
	ts := startServer(t, key.authorized, nil)
	client := dialGo(t, ts.addr, key)

	if c, err := client.Dial("tcp", ts.addr); err == nil {
		c.Close()
		t.Error("direct-tcpip (ssh -L) was allowed")
	} else if !strings.Contains(err.Error(), "administratively prohibited") {
		t.Errorf("direct-tcpip refused with %v, want administratively prohibited", err)
	}
	if ln, err := client.Listen("tcp", "127.0.0.1:0"); err == nil {
		ln.Close()
		t.Error("tcpip-forward (ssh -R) was allowed")
	}
	for _, typ := range []string{"x11", "direct-streamlocal@openssh.com", "tun@openssh.com", "auth-agent@openssh.com"} {
		if ch, _, err := client.OpenChannel(typ, nil); err == nil {
			ch.Close()
			t.Errorf("channel type %s was accepted", typ)
		}
	}
	// Keep-alives get an answer (a refusal), which is all OpenSSH needs to see the server is alive.
	if _, _, err := client.SendRequest("keepalive@openssh.com", true, nil); err != nil {
		t.Errorf("keepalive: %v", err)
	}
}

func TestSessionsPerConnection(t *testing.T) {
	key := newClientKey(t, "")
	ts := startServer(t, key.authorized, nil)
	client := dialGo(t, ts.addr, key)
	var open []*ssh.Session
	for range maxSessionsPerConn {
		s, err := client.NewSession()
		if err != nil {
			t.Fatalf("session %d of %d: %v", len(open)+1, maxSessionsPerConn, err)
		}
		open = append(open, s)
	}
	if s, err := client.NewSession(); err == nil {
		s.Close()
		t.Fatalf("session %d on one connection was accepted", maxSessionsPerConn+1)
	}
	open[0].Close()
	testkit.EventuallyNoError(t, "a session after one closed", func() error {
		s, err := client.NewSession()
		if err == nil {
			s.Close()
		}
		return err
	})
}

func TestIdleTimeout(t *testing.T) {
	key := newClientKey(t, "")
	ts := startServer(t, key.authorized, func(o *Options) { o.IdleTimeout = 500 * time.Millisecond })

	// Traffic keeps a connection open past the idle timeout…
	busy := dialGo(t, ts.addr, key)
	for range 15 { // 750ms in all, well past the timeout
		if _, _, err := busy.SendRequest("keepalive@openssh.com", true, nil); err != nil {
			t.Fatalf("connection with traffic every 50ms was closed: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// …and silence closes it.
	closed := make(chan error, 1)
	go func() { closed <- busy.Wait() }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("an idle connection was still open 10s after a 500ms idle timeout")
	}
	testkit.EventuallyNoError(t, "the idle close is logged", func() error {
		if !strings.Contains(ts.logs.String(), "closed after being idle") {
			return errors.New("not logged yet")
		}
		return nil
	})
}

func TestHandshakeTimeout(t *testing.T) {
	key := newClientKey(t, "")
	ts := startServer(t, key.authorized, func(o *Options) {
		o.HandshakeTimeout = 200 * time.Millisecond
		o.MaxConnections = 1
	})
	// A client that connects and never speaks holds the only slot until the handshake timeout.
	nc, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(nc)
	version, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(version, "SSH-2.0-hamcp") {
		t.Fatalf("server version line %q, %v", version, err)
	}
	if _, err := io.Copy(io.Discard, r); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("the server kept a silent connection open for 10s despite a 200ms handshake timeout")
		}
	}
	testkit.EventuallyNoError(t, "the slot is free again", func() error {
		c, err := dialGoErr(ts.addr, ssh.PublicKeys(key.signer))
		if err == nil {
			c.Close()
		}
		return err
	})
}

func TestOnlyPublicKeyAuth(t *testing.T) {
	key := newClientKey(t, "")
	ts := startServer(t, key.authorized, nil)
	cases := []struct {
		name string
		auth []ssh.AuthMethod
	}{
		{"none", nil},
		{"password", []ssh.AuthMethod{ssh.Password("hamcp")}},
		{"keyboard-interactive", []ssh.AuthMethod{ssh.KeyboardInteractive(func(string, string, []string, []bool) ([]string, error) {
			return []string{"hamcp"}, nil
		})}},
		{"unknown key", []ssh.AuthMethod{ssh.PublicKeys(newClientKey(t, "").signer)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := dialGoErr(ts.addr, tc.auth...)
			if err == nil {
				c.Close()
				t.Fatal("login succeeded")
			}
			if !strings.Contains(err.Error(), "attempted methods") {
				t.Errorf("refused with %v, want an authentication failure", err)
			}
		})
	}
	if n := ts.served.Load(); n != 0 {
		t.Errorf("%d MCP sessions started without a valid key", n)
	}
}

func TestKeyOptionsEnforced(t *testing.T) {
	key := newClientKey(t, "opts")
	bare := strings.TrimSpace(strings.TrimSuffix(key.authorized, "opts"))
	cases := []struct {
		name     string
		keys     string
		allowed  bool
		wantUser string // appended to the fingerprint: the comment of the line that let it in
	}{
		{"from loopback", `from="127.0.0.1" ` + bare, true, ""},
		{"from network", `from="127.0.0.0/8" ` + bare + " net", true, " net"},
		{"from elsewhere", `from="10.0.0.0/8,192.168.*" ` + bare, false, ""},
		{"negated", `from="127.0.0.*,!127.0.0.1" ` + bare, false, ""},
		{"expired", `expiry-time="20000101" ` + bare, false, ""},
		{"not yet expired", `expiry-time="29991231Z" ` + bare, true, ""},
		{"restricted with command", `restrict,command="/bin/false",no-pty ` + bare, true, ""},
		{"second line lets it in", `from="10.0.0.0/8" ` + bare + " first\n" + bare + " second", true, " second"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, tc.keys, func(o *Options) {
				o.Serve = func(_ context.Context, rw io.ReadWriteCloser, _ string, who *authn.Principal) error {
					_, err := io.WriteString(rw, who.String())
					return err
				}
			})
			c, err := dialGoErr(ts.addr, ssh.PublicKeys(key.signer))
			if !tc.allowed {
				if err == nil {
					c.Close()
					t.Fatal("login succeeded; the key's options should refuse it")
				}
				if !strings.Contains(ts.logs.String(), "refused by its authorized_keys options") {
					t.Errorf("refusal not logged with its reason:\n%s", ts.logs.String())
				}
				return
			}
			if err != nil {
				t.Fatalf("login refused: %v\n%s", err, ts.logs.String())
			}
			defer c.Close()
			sess, err := c.NewSession()
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			out, err := sess.Output("whatever")
			if err != nil {
				t.Fatalf("session: %v", err)
			}
			if want := ssh.FingerprintSHA256(key.signer.PublicKey()) + tc.wantUser; string(out) != want {
				t.Errorf("user %q, want %q", out, want)
			}
		})
	}
}

func TestServeStopsOnContext(t *testing.T) {
	key := newClientKey(t, "")
	ts := startServer(t, key.authorized, nil)
	ts.stop(t)
	if _, err := net.DialTimeout("tcp", ts.addr, time.Second); err == nil {
		t.Error("the listener still accepts connections after shutdown")
	}
}

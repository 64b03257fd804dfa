package sshserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sync"

	"golang.org/x/crypto/ssh"

	"github.com/hamcp/hamcp/src/authn"
)

// runSession serves one session channel. The first exec (any command), shell, or "mcp"
// subsystem request starts the MCP session; every other request is refused. The exit status is
// sent when the MCP session ends.
func (s *Server) runSession(ctx context.Context, ch ssh.Channel, reqs <-chan *ssh.Request, who *authn.Principal, log *slog.Logger) {
	defer ch.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var done chan error // nil until the MCP session starts
	var sessionKey string
	for {
		select {
		case req, ok := <-reqs:
			if !ok {
				// The client closed the channel or the connection dropped.
				if done == nil {
					return
				}
				cancel()
				reqs = nil
				continue
			}
			if done != nil || !startsSession(req, log) {
				if req.WantReply {
					_ = req.Reply(false, nil)
				}
				continue
			}
			_ = req.Reply(true, nil)
			sessionKey = newSessionKey()
			log.Info("MCP session over SSH started", "session", sessionKey, "request", req.Type)
			done = make(chan error, 1)
			go func() { done <- s.serveOne(ctx, ch, sessionKey, who) }()
		case err := <-done:
			status := uint32(0)
			if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
				status = 1
				log.Warn("MCP session over SSH failed", "session", sessionKey, "error", err)
			} else {
				log.Info("MCP session over SSH ended", "session", sessionKey)
			}
			_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{status}))
			return
		}
	}
}

// serveOne runs Options.Serve, turning a panic into a failed session: one broken MCP session
// must not take the whole add-on down with it.
func (s *Server) serveOne(ctx context.Context, ch ssh.Channel, sessionKey string, who *authn.Principal) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("MCP session panicked: %v\n%s", p, debug.Stack())
		}
	}()
	return s.opts.Serve(ctx, &channelRW{ch: ch}, sessionKey, who)
}

// startsSession decides whether req may start the MCP session. The command text of exec is
// ignored (and not logged: people put secrets on command lines): whatever the client runs, it
// gets MCP. shell is accepted because `ssh host` with no command sends it, and that is the
// line Claude Desktop is configured with.
func startsSession(req *ssh.Request, log *slog.Logger) bool {
	switch req.Type {
	case "exec":
		var cmd struct{ Command string }
		return ssh.Unmarshal(req.Payload, &cmd) == nil
	case "shell":
		return true
	case "subsystem":
		var sub struct{ Name string }
		if ssh.Unmarshal(req.Payload, &sub) != nil {
			return false
		}
		if sub.Name != "mcp" {
			log.Info("SSH subsystem refused; only \"mcp\" is served", "subsystem", truncate(sub.Name, 32))
			return false
		}
		return true
	case "pty-req":
		log.Info("SSH terminal request refused: hamcp serves MCP only (drop -t from the ssh command)")
	case "x11-req", "auth-agent-req@openssh.com":
		log.Info("SSH forwarding request refused", "type", req.Type)
	default: // env, window-change, signal, break, keepalive@openssh.com, …
		log.Debug("SSH channel request refused", "type", req.Type)
	}
	return false
}

// newSessionKey is random rather than a counter so keys never repeat across restarts, where a
// stored grant could otherwise meet a new session with an old key.
func newSessionKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "ssh-" + hex.EncodeToString(b[:])
}

// channelRW hands the channel to Serve. Close only ends our side of the stream (EOF to the
// client), so the exit status can still be sent before the channel is really closed.
type channelRW struct {
	ch   ssh.Channel
	once sync.Once
}

func (c *channelRW) Read(p []byte) (int, error)  { return c.ch.Read(p) }
func (c *channelRW) Write(p []byte) (int, error) { return c.ch.Write(p) }
func (c *channelRW) Close() error {
	var err error
	c.once.Do(func() { err = c.ch.CloseWrite() })
	return err
}

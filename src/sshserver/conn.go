package sshserver

import (
	"context"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"
)

const (
	// maxSessionsPerConn matches OpenSSH's MaxSessions: one login cannot open MCP sessions
	// without bound by multiplexing channels.
	maxSessionsPerConn = 10
	// shutdownGrace is how long sessions get to send their exit status after shutdown begins.
	shutdownGrace = 2 * time.Second
)

// handleConn runs one SSH connection: handshake under a deadline, then its channels and global
// requests until the client leaves, the idle timeout hits, or ctx ends.
func (s *Server) handleConn(ctx context.Context, nc net.Conn) {
	remote := nc.RemoteAddr().String()
	ic := newIdleConn(nc, s.opts.IdleTimeout)
	defer ic.Close()

	_ = nc.SetDeadline(time.Now().Add(s.opts.HandshakeTimeout))
	sconn, chans, reqs, err := ssh.NewServerConn(ic, s.config)
	if err != nil {
		s.log.Info("SSH login failed", "remote", remote, "error", err)
		return
	}
	_ = nc.SetDeadline(time.Time{})
	defer sconn.Close()

	key := s.byLine[lineOf(sconn.Permissions)]
	if key == nil { // cannot happen: checkKey always records the line
		s.log.Error("SSH connection without a recorded key; closing", "remote", remote)
		return
	}
	log := s.log.With("remote", remote, "key", key.Fingerprint)
	log.Info("SSH login", "login", sconn.User(), "comment", key.Comment)

	var (
		sessions sync.WaitGroup
		globals  sync.WaitGroup
		active   atomic.Int32
	)
	globals.Go(func() { refuseGlobalRequests(reqs, log) })
	defer func() {
		_ = sconn.Close() // also ends the global request loop and any session still reading
		sessions.Wait()
		globals.Wait()
		if ic.idledOut() {
			log.Info("SSH connection closed after being idle", "idle_timeout", s.opts.IdleTimeout)
		} else {
			log.Info("SSH connection closed")
		}
	}()

	for {
		select {
		case nch, ok := <-chans:
			if !ok {
				return
			}
			if nch.ChannelType() != "session" {
				// direct-tcpip (ssh -L / -W), forwarded-tcpip, x11, tun…: no forwarding of any kind.
				log.Info("SSH channel refused", "type", nch.ChannelType())
				_ = nch.Reject(ssh.Prohibited, "hamcp only serves MCP sessions; forwarding and other channel types are not allowed")
				continue
			}
			if active.Load() >= maxSessionsPerConn {
				_ = nch.Reject(ssh.ResourceShortage, "too many sessions on this connection (limit "+strconv.Itoa(maxSessionsPerConn)+")")
				continue
			}
			ch, creqs, err := nch.Accept()
			if err != nil {
				log.Info("SSH session channel failed", "error", err)
				continue
			}
			active.Add(1)
			sessions.Go(func() {
				defer active.Add(-1)
				s.runSession(ctx, ch, creqs, key.Principal(), log)
			})
		case <-ctx.Done():
			drainUntilSessionsEnd(chans, &sessions)
			return
		}
	}
}

// drainUntilSessionsEnd waits, up to shutdownGrace, for sessions (which see ctx end) to send
// their exit status. New channels are refused meanwhile; x/crypto stalls the whole connection
// if its channel queue is not read.
func drainUntilSessionsEnd(chans <-chan ssh.NewChannel, sessions *sync.WaitGroup) {
	ended := make(chan struct{})
	go func() { sessions.Wait(); close(ended) }()
	grace := time.NewTimer(shutdownGrace)
	defer grace.Stop()
	for {
		select {
		case <-ended:
			return
		case <-grace.C:
			return
		case nch, ok := <-chans:
			if !ok {
				return
			}
			_ = nch.Reject(ssh.ResourceShortage, "hamcp is shutting down")
		}
	}
}

// refuseGlobalRequests answers every connection-level request with failure: tcpip-forward
// (ssh -R), streamlocal-forward, and the rest. OpenSSH's keep-alives still work, because any
// reply counts as proof of life.
func refuseGlobalRequests(reqs <-chan *ssh.Request, log *slog.Logger) {
	for req := range reqs {
		switch req.Type {
		case "tcpip-forward", "cancel-tcpip-forward", "streamlocal-forward@openssh.com", "cancel-streamlocal-forward@openssh.com":
			log.Info("SSH forwarding request refused", "type", req.Type)
		default:
			log.Debug("SSH global request refused", "type", req.Type)
		}
		if req.WantReply {
			_ = req.Reply(false, nil)
		}
	}
}

func lineOf(p *ssh.Permissions) int {
	if p == nil {
		return 0
	}
	n, _ := strconv.Atoi(p.Extensions[extKeyLine])
	return n
}

package sshserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// Server accepts SSH connections and turns each session channel into one MCP stdio session.
type Server struct {
	opts    Options
	log     *slog.Logger
	config  *ssh.ServerConfig
	hostKey ssh.Signer
	keys    map[string][]*AuthorizedKey // by the key's wire encoding; a key may appear on several lines
	byLine  map[int]*AuthorizedKey

	slots    chan struct{} // one per open connection, up to MaxConnections
	refusals chan struct{} // bounds the goroutines spent politely turning connections away
}

// Extension carrying the authorized_keys line that let a connection in, from auth to the session.
const extKeyLine = "hamcp-authorized-key-line"

// noTouchRequired is the extension x/crypto/ssh reads to accept FIDO signatures without a touch.
const noTouchRequired = "no-touch-required"

var errKeyNotAuthorized = errors.New("public key is not in ssh_authorized_keys")

// New parses the authorized keys (an error names the bad line) and loads or creates the host key.
func New(o Options) (*Server, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	keys, err := ParseAuthorizedKeys(o.AuthorizedKeys)
	if err != nil {
		return nil, fmt.Errorf("sshserver: ssh_authorized_keys (HAMCP_SSH_AUTHORIZED_KEYS): %w", err)
	}
	if len(keys) == 0 {
		return nil, errors.New("sshserver: ssh_authorized_keys (HAMCP_SSH_AUTHORIZED_KEYS) holds no public key; add one per line, e.g. the contents of ~/.ssh/id_ed25519.pub, or leave SSH off")
	}
	signer, created, err := loadOrCreateHostKey(o.HostKeyPath)
	if err != nil {
		return nil, err
	}
	s := &Server{
		opts:     o,
		log:      o.Logger.With("component", "ssh"),
		hostKey:  signer,
		keys:     make(map[string][]*AuthorizedKey, len(keys)),
		byLine:   make(map[int]*AuthorizedKey, len(keys)),
		slots:    make(chan struct{}, o.MaxConnections),
		refusals: make(chan struct{}, o.MaxConnections),
	}
	for i := range keys {
		k := &keys[i]
		wire := string(k.Key.Marshal())
		s.keys[wire] = append(s.keys[wire], k)
		s.byLine[k.Line] = k
	}
	// Only PublicKeyCallback is set, so x/crypto offers no password, keyboard-interactive or
	// "none" method at all.
	s.config = &ssh.ServerConfig{
		PublicKeyCallback: s.checkKey,
		ServerVersion:     serverVersion,
		MaxAuthTries:      6,
	}
	s.config.AddHostKey(signer)
	if created {
		s.log.Info("generated a new SSH host key", "path", o.HostKeyPath, "fingerprint", s.HostKeyFingerprint())
	}
	return s, nil
}

// HostKeyFingerprint is the host key's SHA256 fingerprint, as ssh shows it on first connect.
func (s *Server) HostKeyFingerprint() string { return ssh.FingerprintSHA256(s.hostKey.PublicKey()) }

// Serve accepts connections on ln until ctx ends, then closes ln, ends every session and waits
// for them. It returns nil after a shutdown and an error if accepting fails for good.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { _ = ln.Close() })
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	s.log.Info("SSH server listening", "addr", ln.Addr().String(), "host_key", s.HostKeyFingerprint())

	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if !errors.Is(err, net.ErrClosed) {
				// Out of file descriptors, an aborted handshake and the like: wait and retry
				// instead of taking the SSH server down.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Warn("SSH accept failed; retrying", "error", err, "retry_in", backoff)
				select {
				case <-time.After(backoff):
				case <-ctx.Done():
					return nil
				}
				continue
			}
			cancel()
			return fmt.Errorf("sshserver: accept: %w", err)
		}
		backoff = 0
		select {
		case s.slots <- struct{}{}:
			wg.Go(func() {
				defer func() { <-s.slots }()
				s.handleConn(ctx, nc)
			})
		default:
			s.log.Warn("SSH connection refused: too many connections", "remote", nc.RemoteAddr().String(), "limit", s.opts.MaxConnections)
			select {
			case s.refusals <- struct{}{}:
				wg.Go(func() {
					defer func() { <-s.refusals }()
					refuseBusy(nc, s.opts.MaxConnections)
				})
			default:
				_ = nc.Close()
			}
		}
	}
}

// checkKey is x/crypto's PublicKeyCallback: the key must be listed and its options must let it in
// from this address now.
func (s *Server) checkKey(conn ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
	entries := s.keys[string(key.Marshal())]
	if len(entries) == 0 {
		s.log.Info("SSH key refused: not in ssh_authorized_keys", "fingerprint", ssh.FingerprintSHA256(key), "remote", conn.RemoteAddr().String(), "login", conn.User())
		return nil, errKeyNotAuthorized
	}
	var refused error
	for _, k := range entries {
		if err := k.allows(conn.RemoteAddr(), time.Now()); err != nil {
			refused = err
			continue
		}
		perms := &ssh.Permissions{Extensions: map[string]string{extKeyLine: strconv.Itoa(k.Line)}}
		if k.NoTouchRequired {
			perms.Extensions[noTouchRequired] = ""
		}
		return perms, nil
	}
	s.log.Info("SSH key refused by its authorized_keys options", "fingerprint", entries[0].Fingerprint, "remote", conn.RemoteAddr().String(), "reason", refused)
	return nil, refused
}

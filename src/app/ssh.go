package app

import (
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"

	"github.com/hamcp/hamcp/src/authn"
	"github.com/hamcp/hamcp/src/config"
	"github.com/hamcp/hamcp/src/sshserver"
)

// SSHEnabled reports whether stdio-over-SSH is configured (it is off unless keys are set).
func (a *App) SSHEnabled() bool { return a.Config.SSHAuthorizedKeys != "" && a.Config.SSHPort > 0 }

// ServeSSH serves MCP stdio sessions over SSH until ctx ends. Each SSH session is its own MCP
// session, so it holds its own permission grants. listen "" means every interface on ssh_port.
func (a *App) ServeSSH(ctx context.Context, listen string) (addr string, wait func() error, err error) {
	srv, err := sshserver.New(sshserver.Options{
		AuthorizedKeys: a.Config.SSHAuthorizedKeys,
		HostKeyPath:    filepath.Join(a.Config.DataDir, "ssh_host_ed25519_key"),
		Logger:         a.Logger.With("component", "ssh"),
		Serve: func(ctx context.Context, rw io.ReadWriteCloser, sessionKey string, who *authn.Principal) error {
			a.Logger.Info("ssh session", "user", who.String())
			return a.ServeConn(authn.WithPrincipal(ctx, who), rw, rw, sessionKey)
		},
	})
	if err != nil {
		return "", nil, &config.Error{Option: "ssh_authorized_keys", Source: "configuration", Reason: err.Error()}
	}
	if listen == "" {
		listen = ":" + strconv.Itoa(a.Config.SSHPort)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return "", nil, &config.Error{Option: "ssh_port", Source: "configuration", Value: strconv.Itoa(a.Config.SSHPort), Reason: err.Error()}
	}
	a.Logger.Info("SSH server listening", "addr", ln.Addr().String(), "host_key", srv.HostKeyFingerprint())
	sshAddr := ln.Addr().String()
	a.panel.sshAddr.Store(&sshAddr)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	return ln.Addr().String(), func() error {
		if err := <-done; err != nil {
			return fmt.Errorf("ssh server: %w", err)
		}
		return nil
	}, nil
}

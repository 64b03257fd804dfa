package sshserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/hamcp/hamcp/src/authn"
)

// Defaults for the zero values in Options.
const (
	DefaultMaxConnections   = 8
	DefaultHandshakeTimeout = 10 * time.Second
	DefaultIdleTimeout      = 30 * time.Minute
)

// Options configure a Server. Only AuthorizedKeys, HostKeyPath and Serve are required.
type Options struct {
	// AuthorizedKeys is OpenSSH authorized_keys text: one key per line, blank lines and
	// #-comments allowed, options such as restrict, from="…" and expiry-time="…" honoured
	// (see ParseAuthorizedKeys for the full list).
	AuthorizedKeys string
	// HostKeyPath holds the server's private host key. It is generated (ed25519, mode 0600) on
	// first start and reused afterwards so clients' known_hosts entries stay valid.
	HostKeyPath string
	// MaxConnections caps simultaneous SSH connections; later ones are told so and closed.
	MaxConnections int
	// HandshakeTimeout bounds key exchange plus authentication.
	HandshakeTimeout time.Duration
	// IdleTimeout closes a connection after no bytes moved either way for this long.
	IdleTimeout time.Duration
	Logger      *slog.Logger
	// Serve runs one MCP stdio session over rw until rw reaches EOF or ctx ends. sessionKey is
	// unique per SSH session (so each SSH session holds its own permission grants); who is the
	// key that logged in (fingerprint and comment). A nil error becomes exit status 0, anything
	// else exit status 1.
	Serve func(ctx context.Context, rw io.ReadWriteCloser, sessionKey string, who *authn.Principal) error
}

// withDefaults fills zero values and refuses values that cannot be meant.
func (o Options) withDefaults() (Options, error) {
	var errs []error
	if o.Serve == nil {
		errs = append(errs, errors.New("sshserver: Options.Serve is required (the function that runs one MCP session)"))
	}
	if o.HostKeyPath == "" {
		errs = append(errs, errors.New("sshserver: Options.HostKeyPath is required, e.g. /data/ssh_host_ed25519_key"))
	}
	switch {
	case o.MaxConnections == 0:
		o.MaxConnections = DefaultMaxConnections
	case o.MaxConnections < 0:
		errs = append(errs, fmt.Errorf("sshserver: Options.MaxConnections is %d; use a positive number such as %d", o.MaxConnections, DefaultMaxConnections))
	}
	switch {
	case o.HandshakeTimeout == 0:
		o.HandshakeTimeout = DefaultHandshakeTimeout
	case o.HandshakeTimeout < 0:
		errs = append(errs, fmt.Errorf("sshserver: Options.HandshakeTimeout is %s; use a positive duration such as %s", o.HandshakeTimeout, DefaultHandshakeTimeout))
	}
	switch {
	case o.IdleTimeout == 0:
		o.IdleTimeout = DefaultIdleTimeout
	case o.IdleTimeout < 0:
		errs = append(errs, fmt.Errorf("sshserver: Options.IdleTimeout is %s; use a positive duration such as %s", o.IdleTimeout, DefaultIdleTimeout))
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, errors.Join(errs...)
}

// Package httpx holds what hamcp's HTTP backend clients (Home Assistant, Supervisor, Hubitat) share
// at the wire level: a client tuned for a home network, draining responses so connections are
// reused, making untrusted error text safe for one log line, and the error answer (APIError).
package httpx

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// NewClient returns an HTTP client with dial and TLS timeouts but no overall timeout: service
// calls and restarts block for as long as the backend works on them, so each request gets its
// deadline from its context. HTTP/1.1 only: a WebSocket upgrade may share the transport, and an
// HTTP/2 connection negotiated with a TLS reverse proxy cannot be upgraded.
func NewClient(maxIdlePerHost int) *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		MaxIdleConnsPerHost:   maxIdlePerHost,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}}
}

// GatewayDown reports a status a proxy answers when the service behind it is down (the
// Supervisor's /core proxy while Home Assistant restarts, a reverse proxy in front of HA).
func GatewayDown(status int) bool {
	return status == http.StatusBadGateway || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout
}

// DrainClose reads a little of what is left of a body, so the connection can be reused, and closes it.
func DrainClose(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	_ = resp.Body.Close()
}

// Cause drops the url.Error wrapper, which repeats the URL the caller names anyway.
func Cause(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err
	}
	return err
}

// CleanLine makes an untrusted message safe for one log line: valid UTF-8, no control
// characters, at most max bytes (then an ellipsis).
func CleanLine(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	truncated := false
	for _, r := range s {
		if b.Len() >= max {
			truncated = true
			break
		}
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case r < 0x20 || r == 0x7f:
		default:
			b.WriteRune(r)
		}
	}
	out := strings.TrimSpace(b.String())
	if truncated {
		out += "…"
	}
	return out
}

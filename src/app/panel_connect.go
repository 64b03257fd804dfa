package app

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hamcp/hamcp/src/panel"
	"golang.org/x/crypto/ssh"
)

// browserHost is the name the user's browser reached Home Assistant at: the best guess at the
// machine's name on the local network. The ingress proxy passes the original Host on.
func browserHost(r *http.Request) string {
	h := r.Header.Get("X-Forwarded-Host")
	if h == "" {
		h = r.Host
	}
	if i := strings.IndexByte(h, ','); i >= 0 {
		h = h[:i]
	}
	h = strings.TrimSpace(h)
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.Trim(h, "[]")
	if h == "" || strings.ContainsAny(h, "/@?#\\ \"'<>") || len(h) > 253 {
		return "homeassistant.local"
	}
	if strings.Contains(h, ":") {
		return "[" + h + "]"
	}
	return h
}

// lanHost is the machine's name on the local network: Home Assistant's own internal URL when it is
// set (the browser may have come through a remote address such as Nabu Casa's), else the name the
// browser used.
func (a *App) lanHost(ctx context.Context, r *http.Request) string {
	if cfg, err := a.HA.Config(ctx); err == nil && cfg.InternalURL != nil {
		if u, err := url.Parse(*cfg.InternalURL); err == nil && u.Hostname() != "" {
			if strings.Contains(u.Hostname(), ":") {
				return "[" + u.Hostname() + "]"
			}
			return u.Hostname()
		}
	}
	return browserHost(r)
}

// selfInfo asks the Supervisor which host ports the add-on's container ports are published on
// ("8099/tcp" → 8099) and the add-on's host name on Home Assistant's internal network; empty outside
// the add-on or when it cannot tell.
func (a *App) selfInfo(ctx context.Context) (ports map[string]int, hostname string) {
	out := map[string]int{}
	if a.Supervisor == nil {
		return out, ""
	}
	info, err := a.Supervisor.AddonInfo(ctx, "self")
	if err != nil {
		return out, ""
	}
	if len(info.Network) == 0 {
		return out, info.Hostname
	}
	var mapped map[string]*int
	if json.Unmarshal(info.Network, &mapped) != nil {
		return out, info.Hostname
	}
	for k, v := range mapped {
		if v != nil {
			out[k] = *v
		}
	}
	return out, info.Hostname
}

func (a *App) panelConnect(r *http.Request) panel.Connect {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	host := a.lanHost(ctx, r)
	ports := map[string]int{}
	var c panel.Connect
	if a.Config.InAddon() && a.Supervisor != nil {
		ports, c.AddonHost = a.selfInfo(ctx)
	}
	if p := a.panel.httpAddr.Load(); p != nil {
		h, port, _ := net.SplitHostPort(*p)
		if hp, ok := ports[port+"/tcp"]; ok {
			port = strconv.Itoa(hp)
		}
		if ip := net.ParseIP(h); ip == nil || ip.IsUnspecified() {
			h = host
		} else if ip.To4() == nil {
			h = "[" + h + "]"
		}
		c.LocalURL = "http://" + net.JoinHostPort(strings.Trim(h, "[]"), port) + "/mcp"
		c.SSEURL = strings.TrimSuffix(c.LocalURL, "/mcp") + "/sse"
		local := "http://" + loopbackFor(*p) + "/mcp/health"
		if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
			c.LocalOnly = true
		}
		c.Checks = append(c.Checks, panel.Check{Name: "Streamable HTTP (local network)", Target: c.LocalURL, Local: true,
			How: "asked by hamcp itself on " + local,
			Run: func(ctx context.Context) error { return checkHealth(ctx, local) }})
	}
	if ext := strings.TrimSuffix(a.Config.ExternalURL, "/"); ext != "" {
		c.PublicURL = ext + "/mcp"
		c.PublicProblems = publicURLProblems(ctx, ext, a.lookupHost)
		// An external_url on this machine or this network is fetched without leaving it: never green.
		c.Checks = append(c.Checks, panel.Check{Name: "claude.ai: OAuth metadata at the public address", Target: ext, Local: len(c.PublicProblems) > 0,
			How: "fetched by the add-on through the public address, as claude.ai will; it shows the address answers with hamcp and names itself, " +
				"not that Anthropic's servers can reach it (a firewall may still allow only your network)",
			Run: func(ctx context.Context) error {
				if err := checkHealth(ctx, ext+"/mcp/health"); err != nil {
					return fmt.Errorf("%s/mcp/health: %w", ext, err)
				}
				return checkMetadata(ctx, a.publicClient(), ext)
			}})
	}
	if p := a.panel.sshAddr.Load(); p != nil && a.SSHEnabled() {
		h, port, _ := net.SplitHostPort(*p)
		n, _ := strconv.Atoi(port)
		if hp, ok := ports[port+"/tcp"]; ok {
			n = hp
		}
		if ip := net.ParseIP(h); ip == nil || ip.IsUnspecified() {
			h = host
		}
		c.SSH = &panel.SSHConnect{Host: h, Port: n, User: "hamcp", HostKey: a.hostKeyFingerprint()}
		local := loopbackFor(*p)
		c.Checks = append(c.Checks, panel.Check{Name: "SSH (Claude Desktop)", Target: net.JoinHostPort(h, strconv.Itoa(n)), Local: true,
			How: "asked by hamcp itself on " + local,
			Run: func(ctx context.Context) error { return checkSSH(ctx, local) }})
	}
	return c
}

// loopbackFor turns a listen address into one this process can dial (an unspecified host becomes
// loopback).
func loopbackFor(addr string) string {
	h, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(h); ip == nil || ip.IsUnspecified() {
		h = "127.0.0.1"
	}
	return net.JoinHostPort(h, port)
}

var checkClient = &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
	return http.ErrUseLastResponse
}}

// checkHealth asks /mcp/health, the unauthenticated status endpoint, and wants its 200.
func checkHealth(ctx context.Context, url string) error {
	var h struct {
		Status string `json:"status"`
	}
	if err := getJSON(ctx, checkClient, url, &h); err != nil {
		return err
	}
	if h.Status != "ok" {
		return fmt.Errorf("hamcp answers, status %q", h.Status)
	}
	return nil
}

// checkSSH connects and reads the server's SSH banner.
func checkSSH(ctx context.Context, addr string) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return errors.New("cannot connect")
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "SSH-2.0-") {
		return errors.New("connected, but no SSH server answered")
	}
	return nil
}

// hostKeyFingerprint reads the SSH server's host key (public half only) for the Connect page.
func (a *App) hostKeyFingerprint() string {
	b, err := os.ReadFile(filepath.Join(a.Config.DataDir, "ssh_host_ed25519_key"))
	if err != nil {
		return ""
	}
	s, err := ssh.ParsePrivateKey(b)
	if err != nil {
		return ""
	}
	return ssh.FingerprintSHA256(s.PublicKey())
}

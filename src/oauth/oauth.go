// Package oauth is hamcp's OAuth 2.1 authorization server. Users log in through their own Home
// Assistant (hamcp is an IndieAuth client of HA), must be HA administrators, approve the client on a
// consent page, and the client gets hamcp's own opaque tokens, audience-bound to the MCP endpoint and
// stored only as hashes. Clients register by Dynamic Client Registration (RFC 7591) or by Client ID
// Metadata Documents. The package also provides the verifier that checks those tokens on /mcp.
package oauth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hamcp/hamcp/src/authn"
	"github.com/hamcp/hamcp/src/store"
)

// Options configure the authorization server.
type Options struct {
	Store *store.Store
	// Issuer is hamcp's external URL, e.g. https://mcp.example.com. It names the authorization
	// server, prefixes every endpoint, and (with a trailing slash) is hamcp's IndieAuth client id at HA.
	Issuer string
	// ResourcePath is the MCP endpoint's path ("/mcp" by default); the resource is Issuer+ResourcePath.
	ResourcePath string
	// HAInternalURL is where hamcp itself reaches Home Assistant for /auth/token, /auth/revoke and
	// the WebSocket API (e.g. http://homeassistant:8123 inside the add-on).
	HAInternalURL string
	// HABrowserURL is where the user's browser reaches Home Assistant's /auth/authorize. The wiring
	// should pass HA's external_url; empty means HAInternalURL.
	HABrowserURL string
	// AllowedRedirectHosts are the hosts client redirect URIs may point at (https; plain http only for
	// loopback hosts listed here). Default: claude.ai, claude.com, localhost, 127.0.0.1, ::1.
	AllowedRedirectHosts []string
	AccessTTL            time.Duration // default 1 h
	RefreshTTL           time.Duration // default 30 days, renewed on every refresh
	// GrantLifetime bounds a grant from its consent, however often it is refreshed: after it the
	// user logs in again (default 90 days).
	GrantLifetime time.Duration
	// HACommand runs a WebSocket command with hamcp's own administrator access to Home Assistant
	// (the app passes its HA client's Call). Every refresh lists HA's users (config/auth/list) to
	// check that the grant's user still exists, is active and is an administrator. Required.
	HACommand  func(ctx context.Context, msgType string, payload any, out any) error
	HTTPClient *http.Client // for HA and client metadata documents
	Logger     *slog.Logger
	Now        func() time.Time
	// CIMDAllowHTTPHosts lists host:port values whose client metadata documents may be fetched over
	// plain http. Only for tests and development; real client ids are https URLs. The address check
	// (public addresses only, cimd_dial.go) applies all the same.
	CIMDAllowHTTPHosts []string
	// CIMDPrivateHosts are host:port values (a bare host means port 443) of the household's own
	// MCP clients whose https metadata documents may be fetched from private addresses; every
	// other client id URL is only fetched from a public address (cimd_private.go). Only an
	// administrator sets this, never a client.
	CIMDPrivateHosts []string
	// CIMDRootCAs are PEM certificates trusted, besides the system's, for documents on
	// CIMDPrivateHosts only.
	CIMDRootCAs string

	// cimdAllowLoopback lets metadata documents come from loopback addresses. Only tests in this
	// package set it (their document servers listen on 127.0.0.1); nothing outside can.
	cimdAllowLoopback bool
	// limits replaces the quotas (quotas.go); zero fields keep the defaults. Tests only.
	limits quotaLimits
}

// Default redirect hosts: Claude's callbacks live on claude.ai and claude.com; native clients
// (Claude Code, the MCP Inspector) listen on loopback.
var defaultRedirectHosts = []string{"claude.ai", "claude.com", "localhost", "127.0.0.1", "::1"}

const (
	defaultAccessTTL  = time.Hour
	defaultRefreshTTL = 30 * 24 * time.Hour
	// DefaultGrantLifetime is the absolute lifetime of a grant when Options.GrantLifetime is 0.
	DefaultGrantLifetime = 90 * 24 * time.Hour
	codeTTL              = 10 * time.Minute
	loginTTL             = 10 * time.Minute
)

// Server is the authorization server. Create it with New and add its routes with Mount.
type Server struct {
	o          Options
	db         *sql.DB
	log        *slog.Logger
	now        func() time.Time
	issuer     string // no trailing slash
	resource   string // canonical form
	haInternal string
	haBrowser  string
	haClientID string // Issuer + "/"
	haRedirect string
	allowed    hostSet
	cimdHTTP   hostSet
	logins     *logins
	cimd       *cimdCache
	cimdClient *http.Client
	// cimdPrivate are the listed private client hosts, fetched by cimdPrivateClient.
	cimdPrivate       privateHosts
	cimdPrivateClient *http.Client
	limits            quotaLimits
	lastSweep         atomic.Int64
}

// New checks the options and returns a server. Every error names the option and what to do.
func New(o Options) (*Server, error) {
	if o.Store == nil {
		return nil, errors.New("oauth: Store is required")
	}
	issuer, err := baseURL("Issuer (hamcp's external URL)", o.Issuer, true)
	if err != nil {
		return nil, err
	}
	if o.ResourcePath == "" {
		o.ResourcePath = "/mcp"
	}
	if !strings.HasPrefix(o.ResourcePath, "/") || strings.ContainsAny(o.ResourcePath, "?#") {
		return nil, fmt.Errorf("oauth: ResourcePath %q must be a path such as /mcp", o.ResourcePath)
	}
	haInternal, err := baseURL("HAInternalURL (where hamcp reaches Home Assistant)", o.HAInternalURL, false)
	if err != nil {
		return nil, err
	}
	haBrowser := haInternal
	if o.HABrowserURL != "" {
		if haBrowser, err = baseURL("HABrowserURL (Home Assistant's external URL)", o.HABrowserURL, false); err != nil {
			return nil, err
		}
	}
	if o.AllowedRedirectHosts == nil {
		o.AllowedRedirectHosts = defaultRedirectHosts
	}
	allowed, err := newHostSet("AllowedRedirectHosts", o.AllowedRedirectHosts)
	if err != nil {
		return nil, err
	}
	cimdHTTP, err := newHostSet("CIMDAllowHTTPHosts", o.CIMDAllowHTTPHosts)
	if err != nil {
		return nil, err
	}
	cimdPrivate, err := newPrivateHosts(o.CIMDPrivateHosts)
	if err != nil {
		return nil, err
	}
	cimdRootPool, err := cimdRoots(o.CIMDRootCAs)
	if err != nil {
		return nil, err
	}
	if cimdRootPool != nil && len(cimdPrivate) == 0 {
		return nil, &FieldError{Field: "CIMDRootCAs", Reason: "only applies to the listed private client hosts (CIMDPrivateHosts), and none is listed: list the client's host:port too"}
	}
	if o.AccessTTL <= 0 {
		o.AccessTTL = defaultAccessTTL
	}
	if o.RefreshTTL <= 0 {
		o.RefreshTTL = defaultRefreshTTL
	}
	if o.GrantLifetime <= 0 {
		o.GrantLifetime = DefaultGrantLifetime
	}
	if o.HACommand == nil {
		return nil, errors.New("oauth: HACommand is required: every refresh asks Home Assistant whether the user is still an administrator")
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 15 * time.Second}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	resource, err := canonicalResource(issuer + o.ResourcePath)
	if err != nil {
		return nil, fmt.Errorf("oauth: Issuer+ResourcePath %q is not a usable resource URL: %w", issuer+o.ResourcePath, err)
	}
	s := &Server{
		o: o, db: o.Store.DB(), log: o.Logger.With("component", "oauth"), now: o.Now,
		issuer: issuer, resource: resource,
		haInternal: haInternal, haBrowser: haBrowser,
		haClientID: issuer + "/", haRedirect: issuer + "/oauth/ha-callback",
		allowed: allowed, cimdHTTP: cimdHTTP,
		logins: newLogins(), cimd: newCIMDCache(),
	}
	s.cimdClient = s.cimdHTTPClient(nil, nil)
	if len(cimdPrivate) > 0 {
		s.cimdPrivate, s.cimdPrivateClient = cimdPrivate, s.cimdHTTPClient(cimdPrivate, cimdRootPool)
	}
	s.limits = o.limits.withDefaults()
	s.logins.max, s.logins.perAddr = s.limits.logins, s.limits.loginsPerAddr
	return s, nil
}

// baseURL checks an absolute http(s) URL without query or fragment and drops a trailing slash.
// The issuer must be https unless it is on loopback: OAuth codes and tokens travel through it.
func baseURL(field, raw string, httpsUnlessLoopback bool) (string, error) {
	if raw == "" {
		return "", fmt.Errorf("oauth: %s is required, e.g. https://mcp.example.com", field)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("oauth: %s %q must be an absolute http or https URL, e.g. https://mcp.example.com", field, raw)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("oauth: %s %q must not carry a query, fragment or user info", field, raw)
	}
	if httpsUnlessLoopback && u.Scheme != "https" && !isLoopbackHost(u.Hostname()) {
		return "", fmt.Errorf("oauth: %s %q must use https (plain http is only accepted on loopback)", field, raw)
	}
	if httpsUnlessLoopback && strings.Trim(u.Path, "/") != "" {
		// Metadata lives at fixed /.well-known paths of the origin, so the issuer is the origin.
		return "", fmt.Errorf("oauth: %s %q must be an origin without a path, e.g. https://mcp.example.com", field, raw)
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) + strings.TrimSuffix(u.Path, "/"), nil
}

// Verifier checks hamcp's access tokens for the MCP endpoint; it passes other tokens on (ErrNotMine).
func (s *Server) Verifier() authn.Verifier { return verifier{s} }

// ResourceMetadataURL is the protected resource metadata URL advertised in 401 challenges (the
// RFC 9728 path-inserted form for the MCP endpoint).
func (s *Server) ResourceMetadataURL() string {
	return s.issuer + "/.well-known/oauth-protected-resource" + s.o.ResourcePath
}

// Resource is the canonical MCP resource URL tokens are bound to.
func (s *Server) Resource() string { return s.resource }

// hostSet is a set of lower-case host names (IPv6 without brackets).
type hostSet map[string]bool

func newHostSet(field string, hosts []string) (hostSet, error) {
	set := hostSet{}
	for _, raw := range hosts {
		h := strings.ToLower(strings.TrimSpace(raw))
		if hh, port, err := net.SplitHostPort(h); err == nil && allDigits(port) && field == "AllowedRedirectHosts" {
			h = hh // redirect hosts match whatever the port
		}
		h = strings.Trim(h, "[]")
		if h == "" || strings.ContainsAny(h, "/?#@ *\\") {
			return nil, fmt.Errorf("oauth: %s entry %q must be a plain host name such as claude.ai", field, raw)
		}
		set[h] = true
	}
	return set, nil
}

func isLoopbackHost(host string) bool {
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

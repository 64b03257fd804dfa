// Package homeassistant is hamcp's client for Home Assistant's REST and WebSocket APIs, with a
// state mirror kept live by state_changed events. It knows HA's wire protocols and nothing of MCP.
package homeassistant

import (
	"errors"
	"fmt"
	"github.com/hamcp/hamcp/src/internal/httpx"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Config says where Home Assistant is and how to authenticate.
type Config struct {
	// BaseURL is HA's root, e.g. "http://homeassistant.local:8123", or in the add-on the
	// Supervisor proxy "http://supervisor/core". A trailing "/api" is accepted and dropped.
	BaseURL string
	// Token is a long-lived access token or the add-on's SUPERVISOR_TOKEN. It is never logged.
	Token string
	// HTTPClient is used for REST and for the WebSocket handshake; nil means a client with
	// dial, TLS and header timeouts.
	HTTPClient *http.Client
	Logger     *slog.Logger
	// Timeout bounds each REST and WebSocket call whose context has no deadline of its own, so a
	// Home Assistant that stops answering fails calls instead of holding them; 0 means 2 minutes.
	Timeout time.Duration
}

// Client talks to one Home Assistant instance. REST methods work right after New; WebSocket
// calls, subscriptions and the state mirror need Start.
type Client struct {
	base     string // scheme://host[:port][/prefix], no trailing slash
	wsURL    string
	token    string
	http     *http.Client
	ownsHTTP bool
	log      *slog.Logger
	mirror   *StateMirror

	// Tuning knobs; fixed in production, shortened by tests in this package.
	backoffBase   time.Duration
	backoffCap    time.Duration
	stableAfter   time.Duration
	pingInterval  time.Duration
	pongTimeout   time.Duration
	handshakeWait time.Duration
	setupTimeout  time.Duration
	writeTimeout  time.Duration
	readLimit     int64
	callTimeout   time.Duration // Config.Timeout

	ws wsState
}

// Defaults chosen for a home network and HA's own limits: HA drops clients that do not
// authenticate within 10 s, and get_states on a large install is tens of megabytes.
const (
	defaultBackoffBase   = 500 * time.Millisecond
	defaultBackoffCap    = 4 * time.Second // HA back after any outage is found within 5 s; a refused dial costs it nothing
	defaultStableAfter   = 10 * time.Second
	defaultPingInterval  = 30 * time.Second
	defaultPongTimeout   = 10 * time.Second
	defaultHandshakeWait = 10 * time.Second
	defaultSetupTimeout  = 60 * time.Second
	defaultWriteTimeout  = 10 * time.Second
	defaultReadLimit     = 128 << 20
	defaultCallTimeout   = 2 * time.Minute
)

// New validates cfg and builds a client. It does not contact Home Assistant.
func New(cfg Config) (*Client, error) {
	base, wsURL, err := deriveURLs(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(cfg.Token) == "" {
		return nil, errors.New("homeassistant: Token is empty: set a long-lived access token (HA profile → Security) or SUPERVISOR_TOKEN")
	}
	if !validHeaderValue(cfg.Token) {
		return nil, errors.New("homeassistant: Token contains characters not allowed in an HTTP header: paste the token without quotes or line breaks")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Client{
		base:          base,
		wsURL:         wsURL,
		token:         cfg.Token,
		http:          cfg.HTTPClient,
		log:           log.With("component", "homeassistant"),
		mirror:        newStateMirror(),
		backoffBase:   defaultBackoffBase,
		backoffCap:    defaultBackoffCap,
		stableAfter:   defaultStableAfter,
		pingInterval:  defaultPingInterval,
		pongTimeout:   defaultPongTimeout,
		handshakeWait: defaultHandshakeWait,
		setupTimeout:  defaultSetupTimeout,
		writeTimeout:  defaultWriteTimeout,
		readLimit:     defaultReadLimit,
		callTimeout:   defaultCallTimeout,
	}
	if cfg.Timeout > 0 {
		c.callTimeout = cfg.Timeout
	}
	if c.http == nil {
		c.http = defaultHTTPClient()
		c.ownsHTTP = true
	}
	c.ws.init()
	return c, nil
}

// BaseURL is the normalised HA root the client talks to (no token, safe to show).
func (c *Client) BaseURL() string { return c.base }

// Timeout is how long a call without a deadline of its own waits for Home Assistant (Config.Timeout).
func (c *Client) Timeout() time.Duration { return c.callTimeout }

// Mirror is the live, in-memory copy of all entity states. It fills after Start connects.
func (c *Client) Mirror() *StateMirror { return c.mirror }

// Close stops the WebSocket loop, fails pending calls and stops event delivery. REST calls made
// after Close still work; WebSocket calls return ErrClosed.
func (c *Client) Close() error {
	c.stopWS()
	c.mirror.close()
	if c.ownsHTTP {
		c.http.CloseIdleConnections()
	}
	return nil
}

func defaultHTTPClient() *http.Client { return httpx.NewClient(8) }

// deriveURLs normalises the base URL and derives the WebSocket endpoint. Standalone HA serves
// it at /api/websocket; the Supervisor proxy (…/core) serves it at /core/websocket.
func deriveURLs(raw string) (base, ws string, err error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", "", errors.New(`homeassistant: BaseURL is empty: set it to Home Assistant's address, e.g. "http://homeassistant.local:8123" (or "http://supervisor/core" inside the add-on)`)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", fmt.Errorf("homeassistant: BaseURL %q is not a valid URL: %v", raw, err)
	}
	var wsScheme string
	switch u.Scheme {
	case "http":
		wsScheme = "ws"
	case "https":
		wsScheme = "wss"
	default:
		return "", "", fmt.Errorf(`homeassistant: BaseURL %q must start with http:// or https://, e.g. "http://homeassistant.local:8123"`, raw)
	}
	if u.Host == "" {
		return "", "", fmt.Errorf(`homeassistant: BaseURL %q has no host, e.g. "http://homeassistant.local:8123"`, raw)
	}
	if u.User != nil {
		// Not echoed: the URL holds a password.
		return "", "", errors.New("homeassistant: BaseURL must not carry credentials (user:password@): put the access token in Token instead")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", "", fmt.Errorf("homeassistant: BaseURL %q must not carry a query or a fragment: use scheme://host:port[/path]", raw)
	}
	path := strings.TrimRight(u.Path, "/")
	path = strings.TrimSuffix(path, "/api")
	u.Path, u.RawPath = path, ""
	base = u.String()
	wsPath := path + "/api/websocket"
	if strings.HasSuffix(path, "/core") {
		wsPath = path + "/websocket"
	}
	wu := *u
	wu.Scheme, wu.Path = wsScheme, wsPath
	return base, wu.String(), nil
}

// validHeaderValue rejects bytes that would break or smuggle an Authorization header.
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b == 0x7f {
			return false
		}
	}
	return true
}

package hubitat

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/hamcp/hamcp/src/internal/httpx"
)

// Client talks to one hub. Maker API and admin calls work right after New; Start adds the live
// event link and the device cache.
type Client struct {
	base, wsURL  string
	appID, token string
	username     string
	password     string
	ruleApp      string          // hubitat_rm_endpoint's rule app id; "" without one
	ruleToken    string          // and its access token, a secret like token
	allow        map[string]bool // nil: everything Maker API authorised
	mode         EventMode
	pushURL      string
	pushSecret   string
	http         *http.Client
	ownsHTTP     bool
	log          *slog.Logger
	cache        *Cache
	link         linkState
	syncMu       sync.Mutex // a resync and event application never interleave
	session      adminSession
	closeOnce    sync.Once
	closed       chan struct{}

	// Tuning knobs; fixed in production, shortened by tests in this package.
	backoffBase  time.Duration
	backoffCap   time.Duration
	stableAfter  time.Duration
	pingInterval time.Duration
	callTimeout  time.Duration
	backupWait   time.Duration
	sessionTTL   time.Duration
}

const (
	defaultBackoffBase = 500 * time.Millisecond
	// A hub is one box on the home's network: a connection attempt every few seconds costs it
	// nothing, and rules hear nothing until the eventsocket is back (missed events are not
	// replayed), so the link retries at most 4 s apart, as Home Assistant's does.
	defaultBackoffCap   = 4 * time.Second
	defaultStableAfter  = 10 * time.Second
	defaultPingInterval = 60 * time.Second
	defaultCallTimeout  = 30 * time.Second
	// Upstream allows a backup 300 s: the hub writes its whole database first.
	defaultBackupWait = 300 * time.Second
	// Upstream keeps a Hub Security cookie 30 minutes.
	defaultSessionTTL = 30 * time.Minute
	maxReplyBytes     = 32 << 20
)

// New validates o and builds a client. It does not contact the hub.
func New(o Options) (*Client, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	base, _ := normaliseURL(o.URL)
	secret := make([]byte, 24)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("hubitat: push secret: %w", err)
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Client{
		base: base, wsURL: "ws" + strings.TrimPrefix(base, "http") + "/eventsocket",
		appID: strings.TrimSpace(o.AppID), token: o.Token, username: o.Username, password: o.Password,
		mode: o.Events, pushURL: strings.TrimRight(o.PushURL, "/"), pushSecret: hex.EncodeToString(secret),
		log: log.With("component", "hubitat"), cache: newCache(), closed: make(chan struct{}),
		backoffBase: defaultBackoffBase, backoffCap: defaultBackoffCap, stableAfter: defaultStableAfter,
		pingInterval: defaultPingInterval, callTimeout: defaultCallTimeout, backupWait: defaultBackupWait,
		sessionTTL: defaultSessionTTL,
	}
	if o.RuleEndpoint != "" {
		c.ruleApp, c.ruleToken, _ = ParseRuleEndpoint(o.URL, o.RuleEndpoint) // Validate passed
	}
	if len(o.Devices) > 0 {
		c.allow = map[string]bool{}
		for _, d := range o.Devices {
			c.allow[strings.TrimSpace(d)] = true
		}
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = httpx.NewClient(4)
		c.ownsHTTP = true
	}
	// The admin routes answer with redirects that carry meaning (a new app's id, the login
	// page); following them would lose it, and would resend the session cookie elsewhere.
	cp := *hc
	cp.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.http = &cp
	c.link.init()
	return c, nil
}

// BaseURL is the hub's root (no token, safe to show).
func (c *Client) BaseURL() string { return c.base }

// Cache is the device cache the live link keeps; see Cache.Live before trusting it.
func (c *Client) Cache() *Cache { return c.cache }

// Close stops the live link and event delivery. Calls made afterwards return ErrClosed.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.stopLink()
		c.cache.close()
		if c.ownsHTTP {
			c.http.CloseIdleConnections()
		}
	})
	return nil
}

func (c *Client) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// reply is a hub answer read whole.
type reply struct {
	status   int
	ctype    string
	location string
	cookies  []string
	body     []byte
}

// do sends one request to the hub. path is already escaped and carries no token; query holds
// any parameters. Transport failures mark the live link as failing, so that the calls after
// this one fail fast.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, form url.Values, cookie string, timeout time.Duration) (*reply, error) {
	return c.send(ctx, method, path, query, formPayload(form), cookie, timeout)
}

// payload is a request body and its Content-Type; nil sends none.
type payload struct {
	body  []byte
	ctype string
}

func formPayload(form url.Values) *payload {
	if form == nil {
		return nil
	}
	return &payload{body: []byte(form.Encode()), ctype: "application/x-www-form-urlencoded"}
}

func (c *Client) send(ctx context.Context, method, path string, query url.Values, p *payload, cookie string, timeout time.Duration) (*reply, error) {
	if c.isClosed() {
		return nil, ErrClosed
	}
	if err := c.link.gate(); err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var body io.Reader
	if p != nil {
		body = bytes.NewReader(p.body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, c.scrub(fmt.Errorf("hubitat: building %s %s: %w", method, path, err))
	}
	if p != nil {
		req.Header.Set("Content-Type", p.ctype)
	}
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() == nil || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			c.linkFailed(err)
		}
		return nil, c.scrub(unavailable(method+" "+path, err))
	}
	defer httpx.DrainClose(resp)
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxReplyBytes+1))
	if err != nil {
		return nil, c.scrub(unavailable(method+" "+path, err))
	}
	if len(b) > maxReplyBytes {
		return nil, fmt.Errorf("hubitat %s: reply larger than %d MB", path, maxReplyBytes>>20)
	}
	return &reply{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), location: resp.Header.Get("Location"),
		cookies: resp.Header.Values("Set-Cookie"), body: b}, nil
}

func (c *Client) apiError(path string, r *reply) error {
	body := r.body
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &obj) == nil && obj.Message != "" {
		body = []byte(obj.Message)
	}
	msg := clean(scrubText(string(body), c.token, c.password, c.ruleToken))
	if msg == "" || strings.HasPrefix(strings.TrimSpace(string(r.body)), "<") {
		msg = http.StatusText(r.status)
	}
	return &APIError{Status: r.status, Path: path, Message: msg}
}

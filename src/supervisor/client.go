// Package supervisor is hamcp's client for the Home Assistant Supervisor REST API (add-ons,
// core, host, OS, backups, resolution). It knows the {result,data} envelope and nothing of MCP.
package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hamcp/hamcp/src/internal/httpx"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Config says where the Supervisor is and how to authenticate.
type Config struct {
	BaseURL    string       // "http://supervisor" inside an add-on; empty means that
	Token      string       // SUPERVISOR_TOKEN; never logged
	HTTPClient *http.Client // nil means a client with dial and TLS timeouts
	Logger     *slog.Logger
}

// DefaultBaseURL is where add-ons reach the Supervisor.
const DefaultBaseURL = "http://supervisor"

// Client talks to the Supervisor.
type Client struct {
	base        string
	token       string
	http        *http.Client
	log         *slog.Logger
	callTimeout time.Duration
}

// Bounds on what is read: JSON answers and logs are large but finite; an error needs little.
const (
	maxJSONBody  = 64 << 20
	maxLogBody   = 64 << 20
	maxErrorBody = 64 << 10
	// Updates and restarts block until done, so the default deadline (used only when the
	// caller's context has none) is long.
	defaultCallTimeout = 10 * time.Minute
)

// New validates cfg and builds a client. It does not contact the Supervisor.
func New(cfg Config) (*Client, error) {
	raw := strings.TrimSpace(cfg.BaseURL)
	if raw == "" {
		raw = DefaultBaseURL
	}
	u, err := url.Parse(raw)
	if err == nil && u.User != nil {
		return nil, errors.New("supervisor: BaseURL must not carry credentials (user:password@): put the token in Token instead")
	}
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf(`supervisor: BaseURL %q is not valid: use an http(s) URL such as "http://supervisor"`, raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("supervisor: BaseURL %q must not carry a query or a fragment", raw)
	}
	if strings.TrimSpace(cfg.Token) == "" {
		return nil, errors.New("supervisor: Token is empty: inside the add-on use the SUPERVISOR_TOKEN environment variable (needs hassio_api: true)")
	}
	for i := 0; i < len(cfg.Token); i++ {
		if b := cfg.Token[i]; b < 0x20 || b == 0x7f {
			return nil, errors.New("supervisor: Token contains characters not allowed in an HTTP header")
		}
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = httpx.NewClient(4)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return &Client{base: u.String(), token: cfg.Token, http: hc, log: log.With("component", "supervisor"), callTimeout: defaultCallTimeout}, nil
}

// BaseURL is the Supervisor address the client uses.
func (c *Client) BaseURL() string { return c.base }

// Do calls the Supervisor and unwraps its envelope: on success the "data" member is decoded into
// out (nil skips it); on failure the error is an *APIError with the HTTP status and message.
// path starts with "/", e.g. "/addons"; body is JSON-encoded when not nil.
func (c *Client) Do(ctx context.Context, method, path string, body any, out any) error {
	if err := checkPath(path); err != nil {
		return err
	}
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return fmt.Errorf("supervisor: encoding %s %s body: %w", method, path, err)
		}
	}
	return c.roundTrip(ctx, httpx.Request{Method: method, Path: path, Body: payload, Accept: "application/json"}, func(resp *http.Response) error {
		var env struct {
			Result  string          `json:"result"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		dec := json.NewDecoder(httpx.Limit(resp.Body, maxJSONBody))
		if err := dec.Decode(&env); err != nil {
			switch {
			case errors.Is(err, io.EOF):
				return nil // some actions answer 200 with no body
			case errors.Is(err, httpx.ErrTooLarge):
				return fmt.Errorf("supervisor: %s %s: answer %w", method, path, err)
			}
			return fmt.Errorf("supervisor: %s %s: malformed answer: %w", method, path, err)
		}
		if env.Result == "error" {
			return &APIError{Status: resp.StatusCode, Message: clean(env.Message)}
		}
		if out == nil || len(env.Data) == 0 || string(env.Data) == "null" {
			return nil
		}
		if err := json.Unmarshal(env.Data, out); err != nil {
			return fmt.Errorf("supervisor: %s %s: decoding data: %w", method, path, err)
		}
		return nil
	})
}

// Logs returns the last lines of a journal-backed log as plain text, e.g. path "/core/logs",
// "/supervisor/logs" or "/addons/<slug>/logs". lines <= 0 leaves the count to the Supervisor.
func (c *Client) Logs(ctx context.Context, path string, lines int) (string, error) {
	if err := checkPath(path); err != nil {
		return "", err
	}
	q := url.Values{"no_colors": {""}}
	if lines > 0 {
		q.Set("lines", fmt.Sprint(lines))
	}
	var text string
	err := c.roundTrip(ctx, httpx.Request{Method: http.MethodGet, Path: path, Query: q, Accept: "text/plain"}, func(resp *http.Response) error {
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxLogBody+1))
		if err != nil {
			return err
		}
		if len(data) > maxLogBody {
			data = data[len(data)-maxLogBody:]
		}
		text = string(data)
		return nil
	})
	return text, err
}

func (c *Client) roundTrip(ctx context.Context, r httpx.Request, read func(*http.Response) error) error {
	r.Token = c.token
	backend := httpx.Backend{Name: "supervisor", Base: c.base, HTTP: c.http, Timeout: c.callTimeout, MaxErrorBody: maxErrorBody,
		Status:      func(status int, body []byte) error { return parseErrorBody(status, body) },
		Unreachable: c.transportError,
	}
	return backend.Do(ctx, r, read)
}

func (c *Client) transportError(err error, cancelled bool) error {
	if cancelled {
		return fmt.Errorf("supervisor: request to %s cancelled: %w", c.base, context.Canceled)
	}
	return fmt.Errorf("%w at %s: %w", ErrUnavailable, c.base, httpx.Cause(err))
}

// checkPath keeps caller-supplied paths inside the API: absolute, no traversal, no query.
func checkPath(path string) error {
	if !strings.HasPrefix(path, "/") || strings.Contains(path, "..") || strings.ContainsAny(path, "?#\\ ") {
		return fmt.Errorf(`supervisor: path %q is not valid: use an API path such as "/addons" or "/core/info"`, path)
	}
	for i := 0; i < len(path); i++ {
		if b := path[i]; b < 0x20 || b == 0x7f {
			return fmt.Errorf("supervisor: path %q contains control characters", path)
		}
	}
	return nil
}

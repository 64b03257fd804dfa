package homeassistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hamcp/hamcp/src/internal/httpx"
	"io"
	"net/http"
	"net/url"
	"time"
)

// Response size bounds: state lists and logs on a big install are large but not unbounded, and
// an error body only needs enough for its message.
const (
	maxJSONBody  = 256 << 20
	maxTextBody  = 64 << 20
	maxErrorBody = 64 << 10
)

// request describes one REST call; body is JSON-encoded unless it is already []byte.
type request struct {
	method string
	path   string // below base, starting with "/api/"
	query  url.Values
	body   any
	token  string // overrides the client token (ValidateToken)
	accept string // "" means application/json
}

// roundTrip performs req and hands a 2xx response to read; anything else becomes an error.
func (c *Client) roundTrip(ctx context.Context, req request, read func(*http.Response) error) error {
	var body []byte
	switch b := req.body.(type) {
	case nil:
	case []byte:
		body = b
		if body == nil {
			body = []byte{}
		}
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return fmt.Errorf("homeassistant: encoding %s %s body: %w", req.method, req.path, err)
		}
		body = data
	}
	token := c.token
	if req.token != "" {
		token = req.token
	}
	accept := req.accept
	if accept == "" {
		accept = "application/json"
	}
	budget := c.callTimeout // what Do gives a call without a deadline
	if _, ok := ctx.Deadline(); ok {
		budget = budgetOf(ctx)
	}
	backend := httpx.Backend{Name: "homeassistant", Base: c.base, HTTP: c.http, Timeout: c.callTimeout, MaxErrorBody: maxErrorBody,
		Status:      func(status int, body []byte) error { return parseErrorBody(status, body) },
		Unreachable: func(err error, cancelled bool) error { return c.transportError(err, cancelled, budget) },
	}
	var readBody func(*http.Response) error
	if read != nil {
		readBody = func(resp *http.Response) error {
			if err := read(resp); err != nil {
				return fmt.Errorf("homeassistant: reading %s %s response: %w", req.method, req.path, err)
			}
			return nil
		}
	}
	return backend.Do(ctx, httpx.Request{Method: req.method, Path: req.path, Query: req.query, Body: body, Token: token, Accept: accept}, readBody)
}

// transportError separates "the caller gave up" from "HA is unreachable or too slow".
func (c *Client) transportError(err error, cancelled bool, budget time.Duration) error {
	if cancelled {
		return fmt.Errorf("homeassistant: request to %s cancelled: %w", c.base, context.Canceled)
	}
	cause := httpx.Cause(err)
	if errors.Is(cause, context.DeadlineExceeded) {
		// A request that ran out of time was most likely sent (connecting fails fast on a home
		// network): HA may have carried it out.
		return unanswered(c.base, fmt.Errorf("no answer within %s: %w", budget, context.DeadlineExceeded))
	}
	return unavailable(c.base, cause)
}

// getJSON decodes a JSON answer into out.
func (c *Client) getJSON(ctx context.Context, path string, query url.Values, out any) error {
	return c.doJSON(ctx, request{method: http.MethodGet, path: path, query: query}, out)
}

func (c *Client) doJSON(ctx context.Context, req request, out any) error {
	return c.roundTrip(ctx, req, func(resp *http.Response) error {
		if out == nil {
			return nil
		}
		return decodeJSON(resp.Body, out)
	})
}

func decodeJSON(r io.Reader, out any) error {
	dec := json.NewDecoder(httpx.Limit(r, maxJSONBody))
	if err := dec.Decode(out); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("empty body where JSON was expected")
		}
		return err
	}
	return nil
}

// readText returns a whole text (or binary) body up to limit bytes, with its content type.
func readText(resp *http.Response, limit int64) ([]byte, string, error) {
	data, err := httpx.ReadAll(resp.Body, limit)
	if err != nil {
		return nil, "", err
	}
	return data, resp.Header.Get("Content-Type"), nil
}

package homeassistant

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hamcp/hamcp/src/internal/httpx"
	"io"
	"net"
	"net/http"
	"net/url"
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
	if _, ok := ctx.Deadline(); !ok && c.restTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.restTimeout)
		defer cancel()
	}
	target := c.base + req.path
	if len(req.query) > 0 {
		target += "?" + req.query.Encode()
	}
	var body io.Reader
	switch b := req.body.(type) {
	case nil:
	case []byte:
		body = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return fmt.Errorf("homeassistant: encoding %s %s body: %w", req.method, req.path, err)
		}
		body = bytes.NewReader(data)
	}
	hreq, err := http.NewRequestWithContext(ctx, req.method, target, body)
	if err != nil {
		return fmt.Errorf("homeassistant: building %s %s: %w", req.method, req.path, err)
	}
	token := c.token
	if req.token != "" {
		token = req.token
	}
	hreq.Header.Set("Authorization", "Bearer "+token)
	accept := req.accept
	if accept == "" {
		accept = "application/json"
	}
	hreq.Header.Set("Accept", accept)
	if body != nil {
		hreq.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		return c.transportError(ctx, err)
	}
	defer httpx.DrainClose(resp)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return parseErrorBody(resp.StatusCode, data)
	}
	if read == nil {
		return nil
	}
	if err := read(resp); err != nil {
		if ctx.Err() != nil || isNetError(err) {
			return c.transportError(ctx, err)
		}
		return fmt.Errorf("homeassistant: reading %s %s response: %w", req.method, req.path, err)
	}
	return nil
}

// transportError separates "the caller gave up" from "HA is unreachable or too slow".
func (c *Client) transportError(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return fmt.Errorf("homeassistant: request to %s cancelled: %w", c.base, ctx.Err())
	}
	return unavailable(c.base, httpx.Cause(err))
}

// isNetError reports a failure of the connection itself while a body was being read.
func isNetError(err error) bool {
	var nerr net.Error
	return errors.As(err, &nerr) || errors.Is(err, io.ErrUnexpectedEOF)
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
	dec := json.NewDecoder(io.LimitReader(r, maxJSONBody))
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
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, "", err
	}
	if int64(len(data)) > limit {
		return nil, "", fmt.Errorf("body larger than %d bytes", limit)
	}
	return data, resp.Header.Get("Content-Type"), nil
}

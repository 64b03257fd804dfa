package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// httpShared is what every worker of an HTTP run shares: one keep-alive pool and the base headers.
type httpShared struct {
	client  *http.Client
	url     *url.URL
	base    http.Header
	timeout time.Duration
	linger  time.Duration
	// lingered counts SSE streams the server left open after the answer (closed by the client,
	// costing a new connection next time).
	lingered atomic.Int64
}

func newHTTPShared(cfg *Config) (*httpShared, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("--url %q: %w", cfg.URL, err)
	}
	tr := &http.Transport{
		Proxy:       nil, // load goes to the URL given, never through a proxy
		DialContext: (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		// Never more connections than clients: a client that dials an extra one while its own is
		// on its way back to the pool would count against the server's per-IP connection cap
		// (hamcp's is 64, and at the cap it closes the oldest idle connection — possibly the one
		// another worker is about to send on, and a POST is not retried).
		MaxConnsPerHost:     cfg.Concurrency,
		MaxIdleConns:        cfg.Concurrency,
		MaxIdleConnsPerHost: cfg.Concurrency,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
	base := http.Header{
		"Content-Type": {"application/json"},
		// Both, as the Streamable HTTP transport requires of clients.
		"Accept":     {"application/json, text/event-stream"},
		"User-Agent": {"hamcp-load/1"},
	}
	if cfg.Token != "" {
		base.Set("Authorization", "Bearer "+cfg.Token)
	}
	for _, h := range cfg.Headers {
		base.Add(h[0], h[1])
	}
	return &httpShared{
		client:  &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		url:     u,
		base:    base,
		timeout: cfg.Timeout,
		linger:  cfg.SSELinger,
	}, nil
}

func (s *httpShared) close() { s.client.CloseIdleConnections() }

// countingReader counts the bytes of a response body.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// httpConn is one worker's client: a session (session mode) or just headers (sessionless).
type httpConn struct {
	s     *httpShared
	hdr   http.Header // never modified once calls start: requests share it read-only
	sid   string
	body  bytes.Buffer
	cr    countingReader
	sse   sseReader
	msg   message
	reqRd bytes.Reader
}

func newHTTPConn(s *httpShared) *httpConn {
	c := &httpConn{s: s, hdr: s.base.Clone()}
	c.sse.lr.br = bufio.NewReaderSize(nil, 32<<10)
	return c
}

// open starts a session: initialize, then notifications/initialized.
func (c *httpConn) open(ctx context.Context, version string) (string, error) {
	o := c.call(ctx, initializeBody(0, version), 0)
	if o.kind != "" {
		return "", fmt.Errorf("initialize: %s: %s", o.kind, o.msg)
	}
	negotiated := o.version
	if negotiated == "" {
		negotiated = version
	}
	if c.sid != "" {
		c.hdr.Set("Mcp-Session-Id", c.sid)
	}
	c.hdr.Set("Mcp-Protocol-Version", negotiated)
	status, msg, err := c.send(ctx, http.MethodPost, initializedBody)
	if err != nil {
		return "", fmt.Errorf("notifications/initialized: %w", err)
	}
	if status/100 != 2 {
		return "", fmt.Errorf("notifications/initialized: HTTP %d: %s", status, clip(msg))
	}
	return negotiated, nil
}

// closeSession ends the session (DELETE), as a polite client does; 405 (the server does not
// let clients end sessions) is fine.
func (c *httpConn) closeSession(ctx context.Context) {
	if c.sid != "" {
		c.send(ctx, http.MethodDelete, nil)
	}
}

// send sends a request whose answer is not a JSON-RPC response (a notification, DELETE).
func (c *httpConn) send(ctx context.Context, method string, body []byte) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.s.url.String(), bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header = c.hdr
	resp, err := c.s.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, string(b), nil
}

// call POSTs one request and waits for its answer, as JSON or as an SSE stream.
func (c *httpConn) call(parent context.Context, body []byte, id int64) outcome {
	ctx, cancel := context.WithTimeout(parent, c.s.timeout)
	defer cancel()
	c.reqRd.Reset(body)
	req := (&http.Request{
		Method:        http.MethodPost,
		URL:           c.s.url,
		Host:          c.s.url.Host,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        c.hdr,
		Body:          io.NopCloser(&c.reqRd),
		ContentLength: int64(len(body)),
		// Lets the transport resend on a kept-alive connection the server had just closed.
		GetBody: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil },
	}).WithContext(ctx)
	resp, err := c.s.client.Do(req)
	if err != nil {
		return transportFailure(ctx, err)
	}
	defer resp.Body.Close()
	if id == 0 && c.sid == "" {
		c.sid = resp.Header.Get("Mcp-Session-Id")
	}
	c.cr = countingReader{r: resp.Body}
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(&c.cr, 64<<10))
		o := failed(KindHTTP(resp.StatusCode), strings.TrimSpace(string(b)))
		o.in = c.cr.n
		return o
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return c.readStream(ctx, cancel, id)
	}
	c.body.Reset()
	if _, err := c.body.ReadFrom(&c.cr); err != nil {
		return transportFailure(ctx, err)
	}
	at := time.Now()
	raw := c.body.Bytes()
	c.msg = message{}
	if err := jsonUnmarshal(raw, &c.msg); err != nil || !idIs(c.msg.ID, id) {
		o := failed(KindBadResponse, fmt.Sprintf("HTTP %d %q: not the JSON-RPC response to id %d: %s", resp.StatusCode, resp.Header.Get("Content-Type"), id, raw))
		o.in = c.cr.n
		return o
	}
	o := judge(&c.msg, raw)
	o.at, o.in = at, c.cr.n
	return o
}

// readStream reads an SSE response until the event answering id. Server requests and
// notifications on the stream are skipped (the load tool declares no capabilities, so a
// conforming server sends it no requests). Once answered, the stream is read to its end so the
// connection can be reused, for at most the linger time.
func (c *httpConn) readStream(ctx context.Context, cancel context.CancelFunc, id int64) outcome {
	c.sse.reset(&c.cr)
	for {
		data, err := c.sse.next()
		if err != nil {
			if err == io.EOF {
				o := failed(KindBadResponse, fmt.Sprintf("event stream ended without the response to id %d", id))
				o.in = c.cr.n
				return o
			}
			return transportFailure(ctx, err)
		}
		c.msg = message{}
		if err := jsonUnmarshal(data, &c.msg); err != nil {
			o := failed(KindBadResponse, "an event that is not JSON: "+string(data))
			o.in = c.cr.n
			return o
		}
		if c.msg.Method != "" || !idIs(c.msg.ID, id) {
			continue
		}
		at := time.Now()
		o := judge(&c.msg, data)
		o.at = at
		t := time.AfterFunc(c.s.linger, cancel)
		if _, err := io.Copy(io.Discard, &c.cr); err != nil && errors.Is(ctx.Err(), context.Canceled) {
			c.s.lingered.Add(1)
		}
		t.Stop()
		o.in = c.cr.n
		return o
	}
}

func transportFailure(ctx context.Context, err error) outcome {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return failed(KindTimeout, err.Error())
	}
	return failed(KindTransport, err.Error())
}

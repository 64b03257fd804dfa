package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Messages that belong to no MCP session — the single-POST form of Streamable HTTP that curl,
// n8n and other HTTP automation use — are served by the go-sdk server like any other: the SDK
// reads the method and params, runs its receiving middleware and answers errors. What hamcp
// changes is the carrier. The SDK's own stateless mode connects and tears down a server session
// (a jsonrpc2 connection and its goroutines) for every request; here a message that reads and
// changes no session state is handed, already decoded, to one long-lived session per server
// variant and protocol version, and its answer is routed back to its request by an id of the
// carrier's own. Everything else gets a session of its own for that one message, as in the
// SDK's stateless mode.

// SessionlessMessage is one JSON-RPC request of a sessionless POST. Notifications are not
// carried: they have no answer to route, and the SDK's own stateless handler serves them.
type SessionlessMessage struct {
	ReadOnly bool
	// Version is the request's MCP-Protocol-Version ("" = 2025-03-26, as the transport says).
	Version string
	// ID is the request id exactly as the client sent it (a JSON string or integer). Answers
	// carry it back byte for byte.
	ID     []byte
	Method string
	Params []byte
	Extra  *mcp.RequestExtra
	// Shared allows the long-lived session: the request carries a credential, so the grant
	// scope is the credential's (RequestKey). A request without one (the --no-auth demo) gets a
	// session of its own, which has a grant scope of its own.
	Shared bool
}

// sharedMethods may be served on a long-lived session: their answer depends on no session state
// and they change none. Any other method — initialize, setLevel, subscriptions, a method a later
// SDK adds — gets a session of its own, so this list only decides speed, never what is answered.
var sharedMethods = map[string]bool{
	"tools/call": true, "tools/list": true, "resources/read": true, "resources/list": true,
	"resources/templates/list": true, "prompts/list": true, "prompts/get": true,
	"completion/complete": true, "ping": true,
}

// SupportsVersion reports whether a sessionless request may name this protocol version: one the
// SDK negotiates, before 2026-07-28 (whose stateless requests the SDK's own handler serves).
func SupportsVersion(v string) bool {
	return v == "" || v < "2026" && slices.Contains(mcp.SupportedProtocolVersions(), v)
}

type sharedKey struct {
	readOnly bool
	version  string
}

// sessionless holds the long-lived sessions.
type sessionless struct {
	mu     sync.Mutex
	shared map[sharedKey]*carrier
	closed bool
}

// SessionlessAnswer is the SDK's answer to a SessionlessMessage.
type SessionlessAnswer struct {
	JSON []byte // the JSON-RPC response, with the client's id
	// ErrorCode is the JSON-RPC error code when the answer is an error, else 0.
	ErrorCode int64
}

// ServeSessionless serves one sessionless request through the SDK. The call is not cancelled when
// ctx is: a service call half sent to Home Assistant is worse than an answer nobody reads.
func (b *Builder) ServeSessionless(ctx context.Context, m SessionlessMessage) (SessionlessAnswer, error) {
	if m.ID == nil {
		return SessionlessAnswer{}, errors.New("mcpserver: a sessionless message needs an id")
	}
	req := &jsonrpc.Request{Method: m.Method, Params: m.Params, Extra: m.Extra}
	var c *carrier
	var err error
	if m.Shared && sharedMethods[m.Method] {
		c, err = b.sharedCarrier(m.ReadOnly, m.Version)
	} else {
		c, err = b.oneShot(ctx, m)
		if c != nil {
			defer c.close()
		}
	}
	if err != nil {
		return SessionlessAnswer{}, err
	}
	return c.call(req, m.ID)
}

func (b *Builder) sharedCarrier(readOnly bool, version string) (*carrier, error) {
	k := sharedKey{readOnly, version}
	b.sl.mu.Lock()
	defer b.sl.mu.Unlock()
	if b.sl.closed {
		return nil, errors.New("the server is shutting down")
	}
	if c := b.sl.shared[k]; c != nil && !c.isClosed() {
		return c, nil
	}
	c := newCarrier()
	if _, err := b.Server(readOnly).Connect(context.Background(), c, sessionlessState(version, "")); err != nil {
		return nil, err
	}
	if b.sl.shared == nil {
		b.sl.shared = map[sharedKey]*carrier{}
	}
	b.sl.shared[k] = c
	return c, nil
}

// oneShot connects a session for one message. Its context is ctx's values without its
// cancellation, so a transport's connection key reaches RequestKey and the call outlives a
// client that went away.
func (b *Builder) oneShot(ctx context.Context, m SessionlessMessage) (*carrier, error) {
	c := newCarrier()
	if _, err := b.Server(m.ReadOnly).Connect(context.WithoutCancel(ctx), c, sessionlessState(m.Version, m.Method)); err != nil {
		return nil, err
	}
	return c, nil
}

// sessionlessState is the state the SDK's stateless mode gives a session: initialized at the
// request's protocol version, unless the message is the one that would initialize it.
func sessionlessState(version, method string) *mcp.ServerSessionOptions {
	if version == "" {
		version = "2025-03-26"
	}
	st := &mcp.ServerSessionState{LogLevel: "info"}
	if method != "initialize" {
		st.InitializeParams = &mcp.InitializeParams{ProtocolVersion: version}
	}
	if method != "notifications/initialized" {
		st.InitializedParams = &mcp.InitializedParams{}
	}
	return &mcp.ServerSessionOptions{State: st}
}

// CloseSessionless ends the long-lived sessionless sessions (HTTP server shutdown, once no
// request is left to answer).
func (b *Builder) CloseSessionless() {
	b.sl.mu.Lock()
	b.sl.closed = true
	all := b.sl.shared
	b.sl.shared = nil
	b.sl.mu.Unlock()
	for _, c := range all {
		c.close()
	}
}

// carrier is the mcp.Connection of a sessionless session: the SDK reads the messages handed to
// it and writes each answer back to the request waiting for it.
type carrier struct {
	in      chan jsonrpc.Message
	done    chan struct{}
	once    sync.Once
	next    atomic.Uint64
	mu      sync.Mutex
	waiting map[string]chan *jsonrpc.Response
}

func newCarrier() *carrier {
	return &carrier{in: make(chan jsonrpc.Message), done: make(chan struct{}), waiting: map[string]chan *jsonrpc.Response{}}
}

// Connect lets a carrier serve as its own mcp.Transport.
func (c *carrier) Connect(context.Context) (mcp.Connection, error) { return c, nil }

func (c *carrier) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.in:
		return m, nil
	case <-c.done:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// errNoSession answers what the server asks of a client that has no session to be asked on
// (elicitation, sampling, roots); the SDK hands it to the caller without closing the session.
var errNoSession = &jsonrpc.Error{Code: -32005, Message: "rejected by transport: a sessionless request cannot be asked anything; start a session (initialize) for that"}

func (c *carrier) Write(_ context.Context, msg jsonrpc.Message) error {
	switch m := msg.(type) {
	case *jsonrpc.Response:
		id, _ := m.ID.Raw().(string)
		c.mu.Lock()
		ch := c.waiting[id]
		delete(c.waiting, id)
		c.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	case *jsonrpc.Request:
		if m.IsCall() {
			return errNoSession
		}
		// A notification (progress, a log line, list_changed) has no one to go to.
	}
	return nil
}

func (c *carrier) Close() error {
	c.once.Do(func() { close(c.done) })
	return nil
}

func (c *carrier) close() { _ = c.Close() }

func (c *carrier) isClosed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (c *carrier) SessionID() string { return "" }

// call hands req to the SDK under an id of the carrier's own (ids of different clients share
// the session) and returns the answer with the client's id put back.
func (c *carrier) call(req *jsonrpc.Request, clientID []byte) (SessionlessAnswer, error) {
	own := "s" + strconv.FormatUint(c.next.Add(1), 36)
	req.ID, _ = jsonrpc.MakeID(own)
	ch := make(chan *jsonrpc.Response, 1)
	c.mu.Lock()
	c.waiting[own] = ch
	c.mu.Unlock()
	var resp *jsonrpc.Response
	select {
	case c.in <- req:
		select {
		case resp = <-ch:
		case <-c.done:
		}
	case <-c.done:
	}
	if resp == nil {
		c.mu.Lock()
		delete(c.waiting, own)
		c.mu.Unlock()
		return SessionlessAnswer{}, errors.New("the server is shutting down")
	}
	out, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		return SessionlessAnswer{}, err
	}
	var a SessionlessAnswer
	if resp.Error != nil {
		a.ErrorCode = jsonrpc.CodeInternalError
		var we *jsonrpc.Error
		if errors.As(resp.Error, &we) {
			a.ErrorCode = we.Code
		}
	}
	// The envelope's id comes before the result in the SDK's encoding, so the first match is it.
	a.JSON = bytes.Replace(out, []byte(`"id":"`+own+`"`), append([]byte(`"id":`), clientID...), 1)
	return a, nil
}

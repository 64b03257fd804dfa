package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A session's grant scope (its "key") must be unique for the life of the process and never
// reused: permissions, pending requests and ownership are filed under it. Streamable HTTP
// sessions have a random MCP session id; every other connection (stdio, SSH, legacy SSE) gets
// a random key when it connects, carried in the context the transport was connected with.

type connKeyCtx struct{}

// WithConnKey returns ctx carrying the grant key of the connection about to be served on it. A
// transport calls it before connecting (the SDK hands the connect context's values to every
// request of the session); an empty key draws a random one.
func WithConnKey(ctx context.Context, key string) context.Context {
	if key == "" {
		key = NewConnKey("conn")
	}
	return context.WithValue(ctx, connKeyCtx{}, key)
}

// NewConnKey returns prefix-<128 random bits>.
func NewConnKey(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

func connKey(ctx context.Context) string {
	k, _ := ctx.Value(connKeyCtx{}).(string)
	return k
}

// sessions tracks live sessions from their first message (or from Run) to their end, so the end
// hooks fire for every session however it ends — also one that never sent
// notifications/initialized, or sent nothing but initialize.
type sessions struct {
	mu    sync.Mutex
	live  map[*mcp.ServerSession]string
	byID  map[string]*mcp.ServerSession // Streamable HTTP sessions by their MCP session id
	ended []func(key string)
}

// track registers ss under the key the connection was given (or its MCP session id) the first
// time it is seen, and arranges for the end hooks to run when it closes. A session with neither
// and a bearer token (the sessionless single POST) is scoped by its token and not tracked; one
// with no token either (a transport that did not say) gets a random key of its own.
func (t *sessions) track(ctx context.Context, ss *mcp.ServerSession, hasToken bool) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if k, ok := t.live[ss]; ok {
		return k
	}
	key := connKey(ctx)
	if key == "" && ss.ID() != "" {
		key = "mcp:" + ss.ID()
	}
	if key == "" {
		if hasToken {
			return ""
		}
		key = NewConnKey("conn")
	}
	if t.live == nil {
		t.live = map[*mcp.ServerSession]string{}
	}
	t.live[ss] = key
	if id := ss.ID(); id != "" {
		if t.byID == nil {
			t.byID = map[string]*mcp.ServerSession{}
		}
		t.byID[id] = ss
	}
	go func() {
		_ = ss.Wait()
		t.end(ss)
	}()
	return key
}

// end runs the end hooks once for ss. Both the waiter started by track and Run call it; the
// first one wins. The map entry is what keeps ss from being collected while it is live, so a
// later session can never be allocated at the same address and meet the old key.
func (t *sessions) end(ss *mcp.ServerSession) {
	t.mu.Lock()
	key, ok := t.live[ss]
	delete(t.live, ss)
	if id := ss.ID(); id != "" && t.byID[id] == ss {
		delete(t.byID, id)
	}
	hooks := t.ended
	t.mu.Unlock()
	if !ok {
		return
	}
	for _, h := range hooks {
		h(key)
	}
}

func (t *sessions) key(ss *mcp.ServerSession) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.live[ss]
}

// SessionByID returns the live Streamable HTTP session with this MCP session id, or nil.
func (b *Builder) SessionByID(id string) *mcp.ServerSession {
	b.sess.mu.Lock()
	defer b.sess.mu.Unlock()
	return b.sess.byID[id]
}

// Live reports whether the session with this grant key is still open.
func (b *Builder) Live(key string) bool {
	b.sess.mu.Lock()
	defer b.sess.mu.Unlock()
	for _, k := range b.sess.live {
		if k == key {
			return true
		}
	}
	return false
}

// OnSessionEnded adds a hook told the grant key of every session that closes. Hooks run after
// Options.SessionEnded, in the order added; they must not block.
func (b *Builder) OnSessionEnded(f func(key string)) {
	b.sess.mu.Lock()
	defer b.sess.mu.Unlock()
	b.sess.ended = append(b.sess.ended, f)
}

// Run serves one connection (stdio, an SSH channel) until the peer closes it or ctx ends. key
// names its grant scope ("" draws a random one). When Run returns, the session's grants and
// pending requests have been ended.
func (b *Builder) Run(ctx context.Context, readOnly bool, t mcp.Transport, key string) error {
	ctx = WithConnKey(ctx, key)
	ss, err := b.Server(readOnly).Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	b.sess.track(ctx, ss, false)
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = ss.Close()
		<-done
		err = ctx.Err()
	}
	b.sess.end(ss)
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// trackingMiddleware sees every incoming message, so a session is tracked from the first one.
func (b *Builder) trackingMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
			extra := req.GetExtra()
			b.sess.track(ctx, ss, extra != nil && extra.TokenInfo != nil)
		}
		return next(ctx, method, req)
	}
}

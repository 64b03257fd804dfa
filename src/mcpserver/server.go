// Package mcpserver assembles the go-sdk MCP server from the tool registry: which tools a
// session sees, server instructions, resources, prompts, completion, and the hooks that end
// per-session state when a session closes. It knows nothing of HTTP or SSH.
package mcpserver

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/src/authn"
	"github.com/hamcp/hamcp/src/permission"
	"github.com/hamcp/hamcp/src/toolkit"
)

// Instructions tell the model how to use hamcp well; kept short because every session pays for them.
const Instructions = `hamcp controls a home: Home Assistant, and a Hubitat hub when one is configured.
- Read before you act: ha_get_states (filter by domain/area/search) and ha_get_entity_details give entity ids; never guess ids.
- Lists are paged (limit/offset, next_offset). Ask for fewer fields or a filter rather than a bigger page.
- Before anything that unlocks, disarms, opens a garage, restarts or deletes, tell the user what will happen; hamcp then asks the user itself (confirmation_required: relay its message and wait). Your confirm=true is not their answer.
- Filesystem, database, command and hub admin tools need the user's permission for this session; if a call returns permission_required, tell the user exactly what the message says and wait.`

// Extension adds resources, prompts or other features to a freshly built server.
type Extension func(s *mcp.Server, readOnly bool)

// Options configure the assembly.
type Options struct {
	Name, Version string
	Registry      *toolkit.Registry
	Filter        toolkit.Filter
	// ToolMode is how tools are offered (option tool_mode; "" = all); ListBudget is the tools/list
	// size auto mode offers flat (0 = toolkit.DefaultListBudget).
	ToolMode   toolkit.Mode
	ListBudget int
	Env        *toolkit.Env
	Logger     *slog.Logger
	Extensions []Extension
	// Completion answers completion/complete (prompt arguments, resource template variables).
	Completion func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error)
	// Subscribe and Unsubscribe enable resources/subscribe.
	Subscribe   func(ctx context.Context, req *mcp.SubscribeRequest) error
	Unsubscribe func(ctx context.Context, req *mcp.UnsubscribeRequest) error
	// SessionEnded is told the grant key of every session that closes (stdio, SSH, HTTP session).
	SessionEnded func(key string)
}

// Builder builds and caches one server per variant (full, read-only); a go-sdk Server serves
// any number of sessions.
type Builder struct {
	o       Options
	mu      sync.Mutex
	servers map[serverKind]*mcp.Server
	sess    sessions
	sl      sessionless
}

// New returns a Builder. The Env's SessionKey is set to this package's rule.
func New(o Options) *Builder {
	if o.Env == nil {
		o.Env = &toolkit.Env{}
	}
	b := &Builder{o: o, servers: map[serverKind]*mcp.Server{}}
	if o.Env.SessionKey == nil {
		o.Env.SessionKey = b.RequestKey
	}
	if o.Env.Logger == nil {
		o.Env.Logger = o.Logger
	}
	if o.SessionEnded != nil {
		b.sess.ended = append(b.sess.ended, o.SessionEnded)
	}
	return b
}

// Tools returns the tools a session may call: listed, or in search mode found and run through
// hamcp_call_tool.
func (b *Builder) Tools(readOnly bool) []*toolkit.Tool {
	f := b.o.Filter
	f.ReadOnly = f.ReadOnly || readOnly
	return b.o.Registry.Select(f)
}

// Listed returns the tools a session's tools/list holds and the mode they follow (auto resolved):
// in search mode the core tools and the search and call tools, which reach all of Tools(readOnly).
func (b *Builder) Listed(readOnly bool) ([]*toolkit.Tool, toolkit.Mode) {
	f := b.o.Filter
	f.ReadOnly = f.ReadOnly || readOnly
	return b.o.Registry.Surface(f, b.o.ToolMode, b.o.ListBudget)
}

// searchInstructions is added to Instructions when not every tool is listed.
const searchInstructions = `
- Not every tool is listed: when none of yours fits, find one with ` + toolkit.SearchToolName + ` and run it with ` + toolkit.CallToolName + `.`

// serverKind names one of the servers a Builder makes: full or read-only, and whether it is the
// legacy HTTP+SSE transport's.
type serverKind struct{ readOnly, legacy bool }

// Server returns the server for full access (readOnly=false) or for read-only sessions.
func (b *Builder) Server(readOnly bool) *mcp.Server { return b.server(serverKind{readOnly: readOnly}) }

// LegacyServer is the server of the 2024-11-05 HTTP+SSE transport. It negotiates the 2025
// versions only: the transport predates 2026-07-28, and with the list fixed when the server is
// made, a server/discover that reaches the go-sdk before it has recorded the session's versions
// (it sends the endpoint event first) cannot offer 2026-07-28 over SSE.
func (b *Builder) LegacyServer(readOnly bool) *mcp.Server {
	return b.server(serverKind{readOnly: readOnly, legacy: true})
}

func (b *Builder) server(kind serverKind) *mcp.Server {
	readOnly := kind.readOnly
	b.mu.Lock()
	defer b.mu.Unlock()
	if s, ok := b.servers[kind]; ok {
		return s
	}
	tools, mode := b.Listed(readOnly)
	instructions := Instructions
	if mode == toolkit.ModeSearch {
		instructions += searchInstructions
	}
	opts := &mcp.ServerOptions{
		Instructions:       instructions,
		Logger:             b.o.Logger,
		CompletionHandler:  b.o.Completion,
		SubscribeHandler:   b.o.Subscribe,
		UnsubscribeHandler: b.o.Unsubscribe,
		SetCacheable:       cacheHints,
		Capabilities: &mcp.ServerCapabilities{
			//lint:ignore SA1019 MCP logging (deprecated by SEP-2577 in 2026-07-28) is how clients of earlier protocol versions get it; dropping it is a design change.
			Logging: &mcp.LoggingCapabilities{},
			Tools:   &mcp.ToolCapabilities{ListChanged: true},
		},
	}
	if kind.legacy {
		opts.SupportedProtocolVersions = slices.DeleteFunc(mcp.SupportedProtocolVersions(), func(v string) bool { return v >= "2026" })
	}
	s := mcp.NewServer(&mcp.Implementation{Name: b.o.Name, Title: "hamcp — Home Assistant MCP server", Version: b.o.Version}, opts)
	s.AddReceivingMiddleware(b.trackingMiddleware, olderClientResults)
	for _, t := range tools {
		t.Install(s, b.o.Env)
	}
	// Resources and prompts follow the same toolset and disabled filters as the tools.
	for _, r := range b.o.Registry.SelectResources(b.o.Filter) {
		r.Install(s)
	}
	for _, p := range b.o.Registry.SelectPrompts(b.o.Filter) {
		p.Install(s)
	}
	for _, ext := range b.o.Extensions {
		ext(s, readOnly)
	}
	b.servers[kind] = s
	return s
}

// ListTTL is how long a client may cache discovery and list results (MCP 2026-07-28 ttlMs). What
// a server lists is fixed for the life of the process; a restart with another configuration is
// the only change, and five minutes is soon enough for that.
const ListTTL = 5 * time.Minute

// cacheHints sets the cache-control fields of discovery, list and read results. Every one is
// private: what a client sees depends on its credential (read-only tokens see fewer tools), and a
// shared cache must not hand one user's answer to another. resources/read is the live state of
// the home and is never fresh.
func cacheHints(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
	c.CacheScope = "private"
	c.TTLMs = int(ListTTL / time.Millisecond)
	if _, ok := req.(*mcp.ReadResourceRequest); ok {
		c.TTLMs = 0
	}
}

// RequestKey is the grant scope of a tool call: the connection's key (stdio, SSH, legacy SSE)
// or the MCP session id (Streamable HTTP). Sessionless HTTP requests (one POST, no initialize)
// are scoped to the caller's token or OAuth grant, so a grant lasts across requests. A session
// this package never saw connect, or a caller with nothing that outlives a connection, gets "":
// nothing another session could also land on.
func (b *Builder) RequestKey(req *mcp.CallToolRequest) string {
	session := ""
	if req.Session != nil {
		if session = b.sess.key(req.Session); session == "" && req.Session.ID() != "" {
			session = "mcp:" + req.Session.ID()
		}
	}
	var ti *auth.TokenInfo
	if req.Extra != nil {
		ti = req.Extra.TokenInfo
	}
	return permission.ScopeOf(authn.PrincipalOf(ti), session).Key()
}

// Package toolkit is the one way hamcp declares a tool: typed arguments with json, jsonschema and
// validate tags, honest annotations, a toolset and an optional permission category. It runs every
// call through the same steps: decode and validate, permission gate, handler, result shaping with a
// size cap, audit. It knows no backend and no transport.
package toolkit

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Category is a permission category a tool belongs to. Tools without one need no grant.
type Category string

// hamcp's own permission categories (design §5); integrations declare theirs (Hubitat's hub_admin).
const (
	Filesystem Category = "filesystem"
	Database   Category = "database"
	Command    Category = "command"
	// SupervisorToken: a command gets the add-on's Supervisor token (asked for on top of Command).
	SupervisorToken Category = "supervisor_token"
	// DatabaseWrite: a statement changes the recorder database (asked for on top of Database).
	DatabaseWrite Category = "database_write"
)

// Spec declares a tool. In is the args struct; Out is what the handler returns.
type Spec[In, Out any] struct {
	Name        string
	Title       string
	Toolset     string
	Description string // written for the model: what, when, when not, paging, consequences
	// Category is the permission every call needs ("" for none).
	Category Category
	// Conditional is a permission only some calls need, decided from their arguments (grants.go).
	Conditional *Condition[In]
	// Available, when set, says whether the tool may run at all in this installation (an option
	// that switches it off). It is asked before anything else, so a tool the administrator left
	// off never sends the user a grant or confirmation they cannot usefully give.
	Available func() error
	// Confirm is a confirmation some calls need from the user (confirm.go). It adds the `confirm`
	// argument to the schema; the handler never sees it.
	Confirm *Confirm[In]

	ReadOnly    bool // changes nothing anywhere
	Destructive bool // may destroy or overwrite something (only meaningful when not ReadOnly)
	Idempotent  bool // repeating the call has no further effect
	OpenWorld   bool // reaches beyond the home's own systems (internet, third-party services)

	// Kind files the tool's calls in the audit log (undo.go: device, config, file, …); "" derives it
	// from the category a call needs, else the toolset.
	Kind string

	Handler func(ctx context.Context, c *Call, in In) (Out, error)
	// Summary returns a short, secret-free description of the args for the audit log.
	// Defaults to the argument names.
	Summary func(in In) string
}

// Tool is a declared tool, ready to be installed on a server.
type Tool struct {
	def    *mcp.Tool // InputSchema is set by inputSchema: read it through Definition
	schema *jsonschema.Schema
	// lazySchema builds schema on first use (Define); nil for tools made with their schema.
	lazySchema func() *jsonschema.Schema
	toolset    string
	category   Category
	grants     []Grant // every category a call may need, for listings and DOCS.md
	confirm    string  // when calls need the user's confirmation, for DOCS.md ("" = never)
	readOnly   bool
	kind       string // declared Kind; see kindOf
	invoke     func(ctx context.Context, c *Call, args map[string]any) (any, string, error)
	// direct answers the call itself instead of through env.run (hamcp_call_tool, which runs its target through env.run).
	direct func(ctx context.Context, env *Env, req *mcp.CallToolRequest) *mcp.CallToolResult
}

// Define builds a Tool from its spec. It panics on a malformed declaration, which is a
// programming error caught by every test that builds the registry.
func Define[In, Out any](s Spec[In, Out]) *Tool {
	if s.Name == "" || s.Description == "" || s.Toolset == "" || s.Handler == nil {
		panic(fmt.Sprintf("toolkit: tool %q needs a name, toolset, description and handler", s.Name))
	}
	if s.Confirm != nil && (s.Confirm.When == "" || s.Confirm.Check == nil) {
		panic(fmt.Sprintf("toolkit: tool %s: a Confirm needs a When for the documentation and a Check", s.Name))
	}
	destructive := s.Destructive && !s.ReadOnly
	openWorld := s.OpenWorld
	def := &mcp.Tool{
		Name:        s.Name,
		Title:       s.Title,
		Description: s.Description,
		// The title is said once, at the top level (MCP 2025-06-18); annotations.title only repeats it.
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:    s.ReadOnly,
			DestructiveHint: &destructive,
			IdempotentHint:  s.Idempotent || s.ReadOnly,
			OpenWorldHint:   &openWorld,
		},
	}
	t := &Tool{def: def, toolset: s.Toolset, category: s.Category, readOnly: s.ReadOnly, kind: s.Kind,
		grants: grantsOf(s.Category, s.Conditional)}
	// The input schema is built from In by reflection the first time anything needs it (a
	// client's tools/list, a search, a call): an add-on nobody has connected to yet does not hold
	// a hundred schemas. A malformed declaration still panics, at the first use, which every test
	// that lists the registry's tools (the toolsnaps) reaches.
	t.lazySchema = sync.OnceValue(func() *jsonschema.Schema {
		schema, err := schemaFor[In]()
		if err != nil {
			panic(fmt.Sprintf("toolkit: tool %s: input schema: %v", s.Name, err))
		}
		if s.Confirm != nil {
			if _, dup := schema.Properties[confirmArg]; dup {
				panic(fmt.Sprintf("toolkit: tool %s declares Confirm and its own confirm argument: drop the field", s.Name))
			}
			schema.Properties = maps.Clone(schema.Properties) // never write into a schema another tool may share
			schema.Properties[confirmArg] = confirmProperty()
		}
		def.InputSchema = schema
		return schema
	})
	if s.Confirm != nil {
		t.confirm = s.Confirm.When
	}
	t.invoke = func(ctx context.Context, c *Call, args map[string]any) (any, string, error) {
		if s.Available != nil {
			if err := s.Available(); err != nil {
				return nil, "", err
			}
		}
		var in In
		said, key := false, ""
		if s.Confirm != nil {
			var err error
			if said, err = takeConfirm(args); err != nil {
				return nil, "", err
			}
			key = callKey(s.Name, args)
		}
		if err := decodeArgs(args, &in, t.inputSchema()); err != nil {
			return nil, "", err
		}
		c.decoded = true
		summary := Summarize(args)
		if s.Summary != nil {
			summary = s.Summary(in)
		}
		for _, cat := range s.Conditional.needed(t.category, in) {
			c.Category = cat
			if err := c.authorize(ctx, summary); err != nil {
				return nil, summary, err
			}
		}
		if s.Confirm != nil {
			ask, err := s.Confirm.Check(ctx, c, in)
			if err != nil {
				return nil, summary, err
			}
			if len(ask.Classes) > 0 {
				recheck := func(ctx context.Context) (Ask, error) { return s.Confirm.Check(ctx, c, in) }
				if err := c.confirm(ctx, ask, said, summary, key, recheck); err != nil {
					return nil, summary, err
				}
			}
		}
		out, err := s.Handler(ctx, c, in)
		return out, summary, err
	}
	return t
}

// Guard runs every call of t through g: g sees the raw arguments before anything else (validation,
// grants, confirmations) and the handler's output or error before it is shaped. An option that
// narrows what every tool of a toolset may see and touch (expose_scope) is one guard, not an edit
// of each handler.
func (t *Tool) Guard(g func(ctx context.Context, args map[string]any, next func(context.Context) (any, error)) (any, error)) {
	inner := t.invoke
	t.invoke = func(ctx context.Context, c *Call, args map[string]any) (any, string, error) {
		var summary string
		out, err := g(ctx, args, func(ctx context.Context) (any, error) {
			out, s, err := inner(ctx, c, args)
			summary = s
			return out, err
		})
		return out, summary, err
	}
}

// Name is the tool's name.
func (t *Tool) Name() string { return t.def.Name }

// Toolset is the toolset the tool belongs to.
func (t *Tool) Toolset() string { return t.toolset }

// ConfirmWhen says which calls need the user's confirmation ("" = none), for DOCS.md.
func (t *Tool) ConfirmWhen() string { return t.confirm }

// Category is the tool's permission category ("" for none).
func (t *Tool) Category() Category { return t.category }

// ReadOnly reports whether the tool changes nothing.
func (t *Tool) ReadOnly() bool { return t.readOnly }

// Definition is the MCP tool definition (name, description, input schema, annotations).
func (t *Tool) Definition() *mcp.Tool {
	t.inputSchema()
	return t.def
}

// inputSchema is the tool's input schema, built on first use.
func (t *Tool) inputSchema() *jsonschema.Schema {
	if t.lazySchema != nil {
		return t.lazySchema()
	}
	return t.schema
}

// Install adds the tool to an MCP server; every call goes through env.
func (t *Tool) Install(s *mcp.Server, env *Env) {
	s.AddTool(t.Definition(), func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return t.Handle(ctx, env, req), nil
	})
}

// Handle runs one call of t. Install hands it to a go-sdk server; the sessionless HTTP form calls
// it directly (mcpserver.Builder.CallTool), so both run the same validation, grants and shaping.
func (t *Tool) Handle(ctx context.Context, env *Env, req *mcp.CallToolRequest) *mcp.CallToolResult {
	if t.direct != nil {
		return t.direct(ctx, env, req)
	}
	return env.run(ctx, t, req)
}

// Env is what every call needs from the server around it.
type Env struct {
	Gate   Gate
	Logger *slog.Logger
	// MaxResponseBytes caps a single result; larger results become an error that says how to narrow the call.
	MaxResponseBytes int
	// SessionKey names the grant scope of a request: the MCP session id, or for sessionless HTTP the token's grant key.
	SessionKey func(req *mcp.CallToolRequest) string
	// ConfirmTrusted are the confirmation classes (package sensitive) for which the model's confirm=true
	// is enough (the confirm_trusted option). Any other class needs the user's own answer.
	ConfirmTrusted []string
	// AuditReads records calls that change nothing too (the audit_reads option). Every call that
	// changes something, or needed a category or the user's confirmation, is recorded regardless.
	AuditReads bool
}

// DefaultMaxResponseBytes keeps one result well inside a model's working context.
const DefaultMaxResponseBytes = 100 << 10

// Gate decides whether a privileged call may run and records what happened.
type Gate interface {
	// Authorize returns nil when the call's category is granted for its session, or an error
	// (a *Error with code permission_required or permission_denied) that the model can act on.
	// Nothing the model sends can grant: there is no argument for it.
	Authorize(ctx context.Context, c *Call, argsSummary string) error
	// Record writes an audit entry for a call: c.Kind says what it changed and c.UndoInfo how to undo
	// it. It must not block: the call's answer waits for it.
	Record(ctx context.Context, c *Call, argsSummary, outcome string, took time.Duration, detail string)
}

func (env *Env) run(ctx context.Context, t *Tool, req *mcp.CallToolRequest) *mcp.CallToolResult {
	start := time.Now()
	c := newCall(env, t, req)
	args, err := rawArgs(req)
	if err == nil {
		err = c.beginRound(args) // before invoke consumes args: the requestState is bound to them
	}
	var out any
	var summary string
	if err == nil {
		out, summary, err = t.invoke(ctx, c, args)
	}
	if ask := c.inputRequired(); ask != nil {
		// Nothing ran and nothing was decided: the client asks its user and retries (mrtr.go).
		if env.Logger != nil {
			env.Logger.LogAttrs(ctx, slog.LevelDebug, "tool call", slog.String("tool", t.def.Name),
				slog.String("session", c.SessionKey), slog.String("outcome", "input_required"))
		}
		return ask
	}
	res, terr := env.shape(t, out, err)
	outcome := "ok"
	if terr != nil {
		outcome = terr.Code
	}
	took := time.Since(start)
	env.record(ctx, t, c, summary, outcome, took, terr)
	if env.Logger != nil {
		env.Logger.LogAttrs(ctx, slog.LevelDebug, "tool call", slog.String("tool", t.def.Name),
			slog.String("session", c.SessionKey), slog.String("outcome", outcome), slog.Duration("took", took))
	}
	return res
}

// record audits every call that changes something, every privileged or confirmed one, and reads
// when the user asked for them. A call refused before its arguments were understood did nothing
// worth a line.
func (env *Env) record(ctx context.Context, t *Tool, c *Call, summary, outcome string, took time.Duration, terr *Error) {
	if env.Gate == nil || !c.decoded {
		return
	}
	if t.readOnly && c.Category == "" && c.Confirmed == "" && !env.AuditReads {
		return
	}
	if !t.readOnly || c.Category != "" || c.Confirmed != "" {
		c.Kind = kindOf(t.kind, c.Category, t.toolset)
	}
	if t.readOnly {
		c.undo.Store(&Undo{Read: true}) // nothing to undo: Activity says it only read
	}
	detail := ""
	if terr != nil {
		detail = terr.Error()
		// What failed did not happen (or not all of it): there is nothing to offer to undo.
		c.undo.Store(nil)
	} else if c.Confirmed != "" {
		detail = "confirmed: " + c.Confirmed
	}
	env.Gate.Record(context.WithoutCancel(ctx), c, summary, outcome, took, detail)
}

func rawArgs(req *mcp.CallToolRequest) (map[string]any, error) {
	args := map[string]any{}
	raw := req.Params.Arguments
	if len(raw) == 0 || string(raw) == "null" {
		return args, nil
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, InvalidArg("arguments", "must be a JSON object", `{"limit": 10}`)
	}
	return args, nil
}

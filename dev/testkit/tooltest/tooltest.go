// Package tooltest is the fixture the toolset tests share: a simulated home over loopback
// sockets, its sandbox folders behind a real fsguard, hamcp's store and permission manager, and
// the tools under test served the way hamcp serves them (mcpserver, toolkit Env, permission gate).
// A test opens one MCP session per case, each with its own grant scope, so cases run in
// parallel on one fixture without seeing each other's grants.
package tooltest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hamcp/hamcp/dev/sim"
	"github.com/hamcp/hamcp/src/fsguard"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/mcpserver"
	"github.com/hamcp/hamcp/src/permission"
	"github.com/hamcp/hamcp/src/store"
	"github.com/hamcp/hamcp/src/toolkit"
	"github.com/hamcp/hamcp/src/tools/permtools"
)

// Options configure Start.
type Options struct {
	// HistoryDays of recorder history in the simulated home (-1: an empty database).
	HistoryDays int
	// Policies of the permission manager; missing categories are ask.
	Policies map[permission.Category]permission.Policy
	// ConfirmTrusted are the confirmation classes the model's confirm=true stands for (confirm_trusted).
	ConfirmTrusted []string
	// Tools are the tools under test, built from the fixture's parts.
	Tools func(f *Fixture) []*toolkit.Tool
}

// Fixture is one simulated home with hamcp's parts around it.
type Fixture struct {
	Home  *sim.Home
	HA    *homeassistant.Client
	Files *fsguard.FS
	Store *store.Store
	Perms *permission.Manager
	// Trash is the fsguard trash directory (outside every root).
	Trash string

	srv     *mcp.Server
	trusted []string
	tmp     string
	closers []func()
}

// Start builds a fixture. It takes no *testing.T so a package can start one in TestMain and
// share it; Close releases everything.
func Start(o Options) (_ *Fixture, err error) {
	f := &Fixture{}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	if f.tmp, err = os.MkdirTemp("", "hamcp-tooltest-*"); err != nil {
		return nil, err
	}
	f.closers = append(f.closers, func() { os.RemoveAll(f.tmp) })
	ctx := context.Background()
	if f.Home, err = sim.Start(ctx, sim.Options{HistoryDays: o.HistoryDays, Seed: 11}); err != nil {
		return nil, fmt.Errorf("simulated home: %w", err)
	}
	f.closers = append(f.closers, func() { f.Home.Close() })
	if f.HA, err = homeassistant.New(homeassistant.Config{BaseURL: f.Home.URL(), Token: f.Home.Token()}); err != nil {
		return nil, err
	}
	f.closers = append(f.closers, func() { f.HA.Close() })
	// The roots hamcp gives the add-on (app.fileRoots), over the sandbox's folders.
	l := f.Home.Sandbox()
	roots := []fsguard.Root{{Alias: "/config", Path: l.Config}, {Alias: "/homeassistant", Path: l.Config}, {Alias: "/ssl", Path: l.SSL},
		{Alias: "/backup", Path: l.Backup}, {Alias: "/share", Path: l.Share}, {Alias: "/media", Path: l.Media},
		{Alias: "/addons", Path: l.Addons}, {Alias: "/addon_configs", Path: l.AddonConfigs}}
	f.Trash = filepath.Join(f.tmp, "trash")
	if f.Files, err = fsguard.New(fsguard.Options{Roots: roots, TrashDir: f.Trash}); err != nil {
		return nil, err
	}
	f.closers = append(f.closers, func() { f.Files.Close() })
	if f.Store, err = store.Open(filepath.Join(f.tmp, "hamcp.db")); err != nil {
		return nil, err
	}
	f.closers = append(f.closers, func() { f.Store.Close() })
	if f.Perms, err = permission.New(permission.Options{Policies: o.Policies, Store: f.Store}); err != nil {
		return nil, err
	}
	f.closers = append(f.closers, func() { f.Perms.Close() }) // before the store: it drains the audit queue
	f.trusted = o.ConfirmTrusted
	f.srv = f.server(o.Tools(f))
	return f, nil
}

// server serves tools the way hamcp does: mcpserver, the permission gate, confirm_trusted.
func (f *Fixture) server(tools []*toolkit.Tool) *mcp.Server {
	reg := toolkit.NewRegistry()
	reg.Add(tools...)
	return mcpserver.New(mcpserver.Options{Name: "hamcp-tooltest", Version: "1", Registry: reg,
		Env: &toolkit.Env{Gate: permtools.Gate{M: f.Perms}, ConfirmTrusted: f.trusted}}).Server(false)
}

// Serving is a view of f whose sessions see tools instead of Options.Tools (a toolset built with
// other options, or over another backend), sharing f's home, store and permission manager.
// Close f, not the view.
func (f *Fixture) Serving(tools []*toolkit.Tool) *Fixture {
	v := *f
	v.closers = nil
	v.srv = f.server(tools)
	return &v
}

// Close stops everything Start started, newest first.
func (f *Fixture) Close() {
	for i := len(f.closers) - 1; i >= 0; i-- {
		f.closers[i]()
	}
	f.closers = nil
}

// OnClose runs fn when the fixture closes, before the parts Start made (for what Tools opened).
func (f *Fixture) OnClose(fn func()) { f.closers = append(f.closers, fn) }

// Main runs a package's tests on one fixture: call it from TestMain.
func Main(m *testing.M, o Options, set func(*Fixture)) {
	f, err := Start(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tooltest:", err)
		os.Exit(1)
	}
	set(f)
	code := m.Run()
	f.Close()
	os.Exit(code)
}

// Session is one MCP client session with its own grant scope (Key).
type Session struct {
	CS  *mcp.ClientSession
	Key string
	f   *Fixture
}

// Session connects a new client; its grant key is a fresh random one, as hamcp gives every
// stdio or SSH connection.
func (f *Fixture) Session(t testing.TB) *Session {
	t.Helper()
	return f.SessionWith(t, nil)
}

// SessionWith connects a client with the given options (e.g. an ElicitationHandler: a client
// that can ask its user).
func (f *Fixture) SessionWith(t testing.TB, opts *mcp.ClientOptions) *Session {
	t.Helper()
	key := mcpserver.NewConnKey("test")
	ct, st := mcp.NewInMemoryTransports()
	ss, err := f.srv.Connect(mcpserver.WithConnKey(context.Background(), key), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "tooltest-model", Version: "1"}, opts).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return &Session{CS: cs, Key: key, f: f}
}

// Granted opens a session holding the given categories, granted the way the user grants them:
// the request a call posts, approved in the panel.
func (f *Fixture) Granted(t testing.TB, cats ...permission.Category) *Session {
	t.Helper()
	s := f.Session(t)
	for _, c := range cats {
		s.Grant(t, c)
	}
	return s
}

// Grant has the user approve category c for this session in the panel.
func (s *Session) Grant(t testing.TB, c permission.Category) {
	t.Helper()
	s.answer(t, c, true)
}

// Deny has the user deny category c for this session in the panel.
func (s *Session) Deny(t testing.TB, c permission.Category) {
	t.Helper()
	s.answer(t, c, false)
}

func (s *Session) answer(t testing.TB, c permission.Category, approve bool) {
	t.Helper()
	ctx := context.Background()
	err := s.f.Perms.Authorize(ctx, permission.Request{SessionKey: s.Key, Tool: "tooltest", Category: c, ArgsSummary: "grant for a test"})
	var req *permission.RequiredError
	if !errors.As(err, &req) {
		t.Fatalf("asking for %s: %v (want a pending request)", c, err)
	}
	if approve {
		s.f.Approve(t, req.RequestID)
	} else {
		s.f.DenyRequest(t, req.RequestID)
	}
}

// panelUser is the user answering requests in the hamcp panel.
var panelUser = permission.Approver{Via: permission.ViaPanel, UserID: "tooltest-admin", Name: "Test Admin"}

// Approve has the user approve a pending request (a permission or a confirmation) in the panel.
func (f *Fixture) Approve(t testing.TB, requestID string) {
	t.Helper()
	if err := f.Perms.Approve(context.Background(), requestID, panelUser); err != nil {
		t.Fatalf("approving %s: %v", requestID, err)
	}
}

// DenyRequest has the user deny a pending request in the panel.
func (f *Fixture) DenyRequest(t testing.TB, requestID string) {
	t.Helper()
	if err := f.Perms.Deny(context.Background(), requestID, panelUser); err != nil {
		t.Fatalf("denying %s: %v", requestID, err)
	}
}

// Call calls a tool and fails the test on a protocol error.
func (s *Session) Call(t testing.TB, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := s.CS.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", tool, err)
	}
	return res
}

// Text is a result's first text block.
func Text(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			return tc.Text
		}
	}
	return ""
}

// OK calls a tool that must succeed and decodes its JSON result into out (when not nil).
func (s *Session) OK(t testing.TB, tool string, args map[string]any, out any) string {
	t.Helper()
	res := s.Call(t, tool, args)
	if res.IsError {
		t.Fatalf("%s %v: unexpected error: %s", tool, args, Text(res))
	}
	if out != nil {
		if err := json.Unmarshal([]byte(Text(res)), out); err != nil {
			t.Fatalf("%s: result is not the expected JSON: %v\n%s", tool, err, Text(res))
		}
	}
	return Text(res)
}

// Err is a tool error as the model reads it.
type Err struct {
	Code    string         `json:"error"`
	Field   string         `json:"field"`
	Message string         `json:"message"`
	Hint    string         `json:"hint"`
	Details map[string]any `json:"details"`
}

// Fail calls a tool that must fail and returns its error.
func (s *Session) Fail(t testing.TB, tool string, args map[string]any) Err {
	t.Helper()
	res := s.Call(t, tool, args)
	if !res.IsError {
		t.Fatalf("%s %v: expected an error, got %s", tool, args, Text(res))
	}
	var e Err
	if err := json.Unmarshal([]byte(Text(res)), &e); err != nil {
		t.Fatalf("%s: error is not JSON: %s", tool, Text(res))
	}
	return e
}

// ErrCase is one call that must fail with Code (any code when empty), naming Field (when set) and
// saying Contains in its message or hint.
type ErrCase struct {
	Name, Tool string
	Args       map[string]any
	Code       string
	Field      string
	Contains   string
}

// Check runs c on s.
func (c ErrCase) Check(t *testing.T, s *Session) {
	t.Helper()
	e := s.Fail(t, c.Tool, c.Args)
	if c.Code != "" && e.Code != c.Code || c.Field != "" && e.Field != c.Field || !strings.Contains(e.Message+" "+e.Hint, c.Contains) {
		t.Errorf("got %+v, want code %q field %q containing %q", e, c.Code, c.Field, c.Contains)
	}
}

// Audit waits (the manager writes the audit log in the background) until the store holds an
// entry of the session matching q, and returns the session's entries matching q.
func (s *Session) Audit(t testing.TB, q store.AuditQuery) []store.AuditEntry {
	t.Helper()
	q.SessionID = s.Key
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, _, err := s.f.Store.ListAudit(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) > 0 || time.Now().After(deadline) {
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
}

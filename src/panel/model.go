package panel

import (
	"context"
	"time"
)

// Connect is how assistants reach this installation, for the Connect page. Nothing in it is secret:
// tokens are made by the user in Home Assistant and never shown here.
type Connect struct {
	// LocalURL is the MCP URL on the local network (Streamable HTTP), e.g.
	// http://homeassistant.local:8099/mcp; "" when unknown.
	LocalURL string
	// SSEURL is the legacy HTTP+SSE endpoint beside LocalURL, for clients that predate Streamable HTTP.
	SSEURL string
	// PublicURL is external_url's MCP URL, which claude.ai and OAuth clients use; "" when not set.
	PublicURL string
	// PublicProblems say why PublicURL cannot work for claude.ai (http, a private or local name…),
	// found without leaving the machine; empty when none was found.
	PublicProblems []string
	// AddonHost is the add-on's host name on Home Assistant's internal network (what a tunnel or
	// proxy add-on forwards to); "" outside the add-on.
	AddonHost string
	// LocalOnly is set when hamcp listens on loopback only (the demo): nothing outside this machine
	// reaches it.
	LocalOnly bool
	SSH       *SSHConnect // nil while SSH is off
	// Checks are the live reachability checks, one per transport, run when the page asks.
	Checks []Check
}

// SSHConnect is what a stdio client needs to reach hamcp over SSH.
type SSHConnect struct {
	Host    string // the machine's name as the browser sees it
	Port    int    // the port to connect to
	HostKey string // SHA256:… fingerprint of the host key, "" until the server made one
	User    string // the SSH user name ("hamcp"; any name is accepted)
}

// Check is one live reachability check.
type Check struct {
	Name   string // e.g. "Streamable HTTP (local network)"
	Target string // what is checked, e.g. the URL or host:port
	// Local checks never leave this machine (hamcp asking itself): a success shows that hamcp runs,
	// not that anyone else can reach it, so it is never shown as a green light.
	Local bool
	// How says how and from where it is checked, shown beside the result.
	How string
	Run func(ctx context.Context) error
}

// SSHKey is one authorized SSH key, as the panel may show it: never the key itself.
type SSHKey struct {
	Fingerprint string
	Comment     string
	Expires     time.Time // zero: never
}

// Status is the Status page.
type Status struct {
	Version  string
	Backends []Backend
	// OpenSessions counts MCP sessions open now (Streamable HTTP, SSE, stdio, SSH).
	OpenSessions int
	Toolsets     []ToolsetCount
	// ToolMode describes which tools sessions see (all, read-only, filtered).
	ToolMode string
	// ToolsListed and ToolsListBytes are the size of tools/list for a full-access session.
	ToolsListed    int
	ToolsListBytes int
	// Sensitive is what hamcp asks the user about however it is reached (the effective list:
	// locks, alarm panels, garage doors and the openers beside them or in sensitive_entities);
	// SensitiveErr says why it could not be read.
	Sensitive    []SensitiveEntity
	SensitiveErr string
	// StoppedRules are hamcp's Hubitat rules it stopped and disabled as runaways, with the reason.
	StoppedRules []StoppedRule
}

// SensitiveEntity is one entry of the effective list of what the user confirms.
type SensitiveEntity struct {
	EntityID string
	Why      string
}

// StoppedRule is a rule hamcp disabled because it ran away.
type StoppedRule struct {
	Name   string
	Reason string
	At     time.Time
}

// Backend is one system hamcp depends on and whether it answers now.
type Backend struct {
	Name   string
	OK     bool
	Detail string
}

// ToolsetCount is how many tools of a toolset a full-access session sees, of how many there are.
type ToolsetCount struct {
	Name    string
	Enabled int
	Total   int
}

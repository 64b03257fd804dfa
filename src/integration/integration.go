// Package integration is how a backend beside Home Assistant (a Hubitat hub) plugs into hamcp, the
// way Home Assistant's core integrations plug into it: one package tree brings its toolsets, its
// permission categories, its tables in hamcp's store, its HTTP routes and its health check through
// one interface, and the app composes a list of them. The app knows an integration only as a Kind
// (how to build it from the configuration) and an Integration (what it adds once built).
package integration

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/hamcp/hamcp/src/config"
	"github.com/hamcp/hamcp/src/permission"
	"github.com/hamcp/hamcp/src/store"
	"github.com/hamcp/hamcp/src/supervisor"
	"github.com/hamcp/hamcp/src/toolkit"
)

// Kind is an integration hamcp can run, whether or not this installation configured it.
type Kind struct {
	// Name is the integration's name, e.g. "hubitat": the health check's name and the prefix of its
	// tools and toolsets ("hubitat_").
	Name string
	// Title names it for people, e.g. "Hubitat".
	Title string
	// Enable says what turns it on, for a user who asked for its toolsets without it, e.g.
	// "with a hub: set hubitat_url".
	Enable string
	// Declared is every tool it can have, declared without backends (the accepted toolsets,
	// DOCS.md's tables, the tool snapshots).
	Declared func() []*toolkit.Tool
	// New builds it from the configuration, checking its options: nil, nil when the configuration
	// does not ask for it; a *config.Error naming the option for a bad value. It starts nothing.
	New func(cfg *config.Config) (Integration, error)
}

// Host is what hamcp lends an integration when it starts.
type Host struct {
	Store      *store.Store // its tables are there once Migrations ran
	Logger     *slog.Logger
	Version    string             // hamcp's own version
	Supervisor *supervisor.Client // nil outside the add-on
	// HomePlace is where the home is by Home Assistant's configuration: its IANA time zone and
	// coordinates. An integration whose device does not say (a Hubitat hub without an admin login)
	// schedules by it. Nil without Home Assistant.
	HomePlace func(ctx context.Context) (timeZone string, latitude, longitude float64, err error)
}

// Route is an HTTP route an integration serves outside hamcp's authentication (a device pushing
// events cannot send a bearer token): the handler checks its own credential.
type Route struct {
	// Path is an echo path, e.g. "/hubitat/events/:secret".
	Path    string
	Handler http.Handler
}

// Integration is one configured integration. The app calls, in order: Categories and Migrations
// (before anything runs), Start, then Tools, Routes and Health while serving, and Close at the end.
type Integration interface {
	Name() string
	// Categories are the permission categories its tools need that hamcp does not have itself. Each
	// must already be registered (permission.RegisterCategory, from the declaring package's init),
	// so that grants and the panel know it before any manager is built.
	Categories() []permission.CategoryInfo
	// Migrations are the steps of its own tables in hamcp's store: applied in the file's one
	// version sequence (store.Store.Migrate), each at most once.
	Migrations() []store.Migration
	// Start connects to the backend. Slow work (a live link, a device cache) goes on in the
	// background: hamcp serves meanwhile.
	Start(ctx context.Context, h Host) error
	// Tools are the tools it adds to hamcp's registry (valid after Start).
	Tools() []*toolkit.Tool
	Routes() []Route
	// Health reports the backend for /mcp/health without waiting on it. The endpoint is
	// unauthenticated: detail must hold no address, secret or error text.
	Health(ctx context.Context) (ok bool, detail any)
	Close() error
}

// StatusReporter is an Integration with something for the add-on panel's Status page beyond its
// health check. The panel asks each running integration that implements it.
type StatusReporter interface {
	// StoppedRules are the integration's automations hamcp stopped and disabled as runaways (too
	// many runs or commands a minute, a loop), so the user sees which and why.
	StoppedRules(ctx context.Context) ([]StoppedRule, error)
}

// StoppedRule is an automation hamcp stopped and disabled, and why.
type StoppedRule struct {
	Name   string
	Reason string
	At     time.Time
}

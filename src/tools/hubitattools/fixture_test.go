package hubitattools_test

// The fixture every test of this package shares. API:
//
//   - fx (*tooltest.Fixture): the simulated Home Assistant, hamcp's store (fx.Store) and
//     permission manager (fx.Perms), with the Hubitat tables over that store (hubStore), serving hubitattools.Tools(defaultDeps()) the way hamcp does
//     (mcpserver, the permission gate, toolkit confirmations). fx.Session(t) opens an MCP session
//     with its own grant scope; fx.Granted(t, permission.CatX, …) one holding those categories,
//     granted by the user in the panel; s.Grant/s.Deny per category; s.OK, s.Fail, s.Call and
//     tooltest.ErrCase to call tools; fx.SessionWith(t, &mcp.ClientOptions{ElicitationHandler: …})
//     for a client that can ask its user.
//   - hub (*simhub.Hub) and client (*hubitat.Client): one simulated Hubitat hub (Hub Security on,
//     login hubUser/hubPassword) on a loopback socket and a started client connected to it over
//     the eventsocket, its device cache synced before any test runs. Shared: tests that change
//     global hub state (mode, HSM, reboot) use their own hub from newHub.
//   - defaultDeps() is the Deps fx serves (admin read and write off, Version "1.2.3", no
//     Supervisor); served(mod) is a view of fx serving Tools(deps) after mod changed them (admin
//     switches, a fake clock, another client), sharing fx's store and permission manager:
//     served(func(d *hubitattools.Deps) { d.AdminRead = true }).Session(t).
//   - newHub(t, simOpts, clientOpts) starts a separate hub and a started client (closed at the
//     end of the test); clientOpts may set Devices (the hubitat_devices allow-list) or Events.
//     withClient(c) is the mod that serves the tools over c.
//   - testkit.Eventually(t, what, cond) waits (bounded) for something the live link does in the background.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	simhub "github.com/hamcp/hamcp/dev/sim/hubitat"
	"github.com/hamcp/hamcp/dev/testkit/tooltest"
	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/integrations/hubitat/hubstore"
	"github.com/hamcp/hamcp/src/toolkit"
	"github.com/hamcp/hamcp/src/tools/hubitattools"
)

const (
	hubUser     = "admin"
	hubPassword = "hub-secret-pw"
	testVersion = "1.2.3"
)

var (
	fx       *tooltest.Fixture
	hubStore *hubstore.Store
	hub      *simhub.Hub
	client   *hubitat.Client
)

func TestMain(m *testing.M) {
	var err error
	hub, client, err = startHub(simhub.Options{Username: hubUser, Password: hubPassword}, hubitat.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "simulated hub:", err)
		os.Exit(1)
	}
	tooltest.Main(m, tooltest.Options{HistoryDays: -1, Tools: func(f *tooltest.Fixture) []*toolkit.Tool {
		f.OnClose(func() { client.Close(); hub.Close() })
		// The Hubitat tables in fx's store, as the integration adds them to hamcp's.
		if hubStore, err = hubstore.Open(context.Background(), f.Store); err != nil {
			fmt.Fprintln(os.Stderr, "the Hubitat tables:", err)
			os.Exit(1)
		}
		d := defaultDeps()
		d.Store = hubStore
		return hubitattools.Tools(d)
	}}, func(f *tooltest.Fixture) { fx = f })
}

// startHub starts a simulated hub on a loopback port and a client for it, and waits until the
// client's device cache is live.
func startHub(so simhub.Options, co hubitat.Options) (*simhub.Hub, *hubitat.Client, error) {
	h := simhub.New(so)
	url, err := h.Start(context.Background(), "")
	if err != nil {
		return nil, nil, err
	}
	co.URL, co.AppID, co.Token = url, h.AppID(), h.Token()
	switch co.RuleEndpoint {
	case simEndpoint:
		co.RuleEndpoint = h.RuleEndpointURL()
	case simEndpointOldToken:
		u, _, _ := strings.Cut(h.RuleEndpointURL(), "?")
		co.RuleEndpoint = u + "?access_token=renewed-since-0123456789"
	}
	if so.Username != "" && co.Username == "" {
		co.Username, co.Password = so.Username, so.Password
	}
	c, err := hubitat.New(co)
	if err != nil {
		h.Close()
		return nil, nil, err
	}
	c.Start(context.Background())
	deadline := time.Now().Add(10 * time.Second)
	for !c.Cache().Live() {
		if time.Now().After(deadline) {
			c.Close()
			h.Close()
			return nil, nil, fmt.Errorf("the client's cache did not go live: %+v", c.Status())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return h, c, nil
}

// simEndpoint in hubitat.Options.RuleEndpoint stands for the sim hub's endpoint rule's URL, and
// simEndpointOldToken for that URL with a token the hub no longer knows.
const simEndpoint, simEndpointOldToken = "sim", "sim-old-token"

// newHub starts a hub of the test's own, and a started client for it.
func newHub(t testing.TB, so simhub.Options, co hubitat.Options) (*simhub.Hub, *hubitat.Client) {
	t.Helper()
	h, c, err := startHub(so, co)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); h.Close() })
	return h, c
}

// defaultDeps are the Deps fx serves, without the store (hubStore, set by served and TestMain).
func defaultDeps() hubitattools.Deps {
	return hubitattools.Deps{Hub: client, Version: testVersion}
}

// served is a view of fx serving the toolset built from defaultDeps changed by mods.
func served(mods ...func(*hubitattools.Deps)) *tooltest.Fixture {
	d := defaultDeps()
	d.Store = hubStore
	for _, m := range mods {
		m(&d)
	}
	return fx.Serving(hubitattools.Tools(d))
}

// withClient serves the tools over c (a client of a hub from newHub).
func withClient(c *hubitat.Client) func(*hubitattools.Deps) {
	return func(d *hubitattools.Deps) { d.Hub = c }
}

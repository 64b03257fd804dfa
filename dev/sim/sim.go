// Package sim starts the simulated home: a Home Assistant (REST +
// WebSocket) on one loopback listener, the Supervisor (plus its /core
// proxy) on a second, a sandbox /config tree and a recorder database with
// generated history. `hamcp demo` and every test use it; server packages
// only ever talk to it over sockets.
package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hamcp/hamcp/dev/sim/haauth"
	"github.com/hamcp/hamcp/dev/sim/hass"
	"github.com/hamcp/hamcp/dev/sim/home"
	"github.com/hamcp/hamcp/dev/sim/recorder"
	"github.com/hamcp/hamcp/dev/sim/sandbox"
)

// Options configures Start.
type Options struct {
	// Dir is the sandbox root (config/, ssl/, backup/, ...; the recorder DB
	// is config/home-assistant_v2.db). "" means a new temp dir removed on Close.
	Dir string
	// HAListen and SupervisorListen default to 127.0.0.1:0.
	HAListen, SupervisorListen string
	// Token is the admin long-lived token, SupervisorToken the add-on token;
	// "" means random per Start.
	Token, SupervisorToken string
	// HistoryDays of generated recorder history when the DB is new: 0 means
	// 3, negative means an empty database.
	HistoryDays int
	// ExtraSensors adds synthetic sensors to the demo home (e.g. 2900 for a 3,000-entity home).
	ExtraSensors int
	Seed         int64
	// AuthTimeout for WebSocket logins; 0 means HA's 10 s.
	AuthTimeout time.Duration
	// Supervised makes the home an HA OS / Supervised install, where the add-on runs: core
	// logs to the journal only, so there is no home-assistant.log and GET /api/error_log is
	// 404; the log is the Supervisor's /core/logs. Off, it is a container install with a
	// log file (the Supervisor still answers, for the add-on tools).
	Supervised bool
	// SupervisorAPITimeout is how long core's WS supervisor/api waits for the Supervisor when
	// the message sets no timeout; 0 means HA's 10 s (tests shorten it).
	SupervisorAPITimeout time.Duration
	Logger               *slog.Logger
}

// Home is a running simulated home.
type Home struct {
	o       Options
	dir     string
	tempDir bool
	layout  sandbox.Layout
	model   *home.Home
	rec     *recorder.DB
	srv     *hass.Server
	sup     *hass.Supervisor
	log     *slog.Logger

	adminTok, userTok, sysTok, supTok string
	auth                              *haauth.Provider
	logins                            []Login

	mu      sync.Mutex
	haAddr  string
	haLn    net.Listener
	haHTTP  *http.Server
	down    bool
	supHTTP *http.Server
	supAddr string
	recMu   sync.Mutex
	closed  bool
	unsub   func()
}

// Start builds the sandbox and recorder DB (when missing), then serves HA
// and the Supervisor on loopback.
func Start(ctx context.Context, o Options) (_ *Home, err error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Home{o: o, dir: o.Dir, log: o.Logger}
	defer func() {
		if err != nil {
			h.Close()
		}
	}()
	if h.dir == "" {
		if h.dir, err = os.MkdirTemp("", "hamcp-sim-*"); err != nil {
			return nil, fmt.Errorf("sim: temp dir: %w", err)
		}
		h.tempDir = true
	}
	now := time.Now().UTC()
	// A first, file-less model gives the entity ids the sandbox's YAML files mention.
	probe, err := home.New(home.Options{Seed: o.Seed})
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	states := probe.States()
	probe.Close()
	ids := make([]string, len(states))
	for i, s := range states {
		ids[i] = s.EntityID
	}
	if h.layout, err = sandbox.Create(h.dir, sandbox.Options{Now: now, Entities: ids, HAVersion: home.Version}); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	if h.rec, err = openRecorder(ctx, h.layout.RecorderPath(), states, o, now); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	if h.model, err = home.New(home.Options{Seed: o.Seed, ConfigDir: h.layout.Config, Logger: o.Logger, ExtraSensors: o.ExtraSensors, JournalLog: o.Supervised}); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	if o.Supervised {
		// The sandbox's log files became the journal; HA OS has none on disk.
		for _, f := range []string{"home-assistant.log", "home-assistant.log.1"} {
			if err := os.Remove(filepath.Join(h.layout.Config, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("sim: %w", err)
			}
		}
	}
	h.recordAll()
	h.unsub = h.model.Subscribe(home.MatchAll, h.record)
	h.registerRecorderServices()
	if err := h.tokens(); err != nil {
		return nil, err
	}
	if err := h.startServers(); err != nil {
		return nil, err
	}
	return h, nil
}

func (h *Home) tokens() error {
	var err error
	gen := func(given string, jwt bool) string {
		if given != "" || err != nil {
			return given
		}
		var t string
		if jwt {
			t, err = newJWT()
		} else {
			t, err = randomHex(32)
		}
		return t
	}
	h.adminTok = gen(h.o.Token, true)
	h.userTok = gen("", true)
	h.sysTok = gen("", true)
	h.supTok = gen(h.o.SupervisorToken, false)
	if err != nil {
		return fmt.Errorf("sim: tokens: %w", err)
	}
	return nil
}

func (h *Home) startServers() error {
	var err error
	h.sup, err = hass.NewSupervisor(hass.SupervisorOptions{
		Home: h.model, Token: h.supTok, SystemToken: h.sysTok, HAURL: h.liveURL,
		Folders: map[string]string{"homeassistant": h.layout.Config, "ssl": h.layout.SSL, "share": h.layout.Share,
			"media": h.layout.Media, "addons/local": h.layout.Addons},
		BackupDir: h.layout.Backup, OnCoreRestart: func() { h.srv.CloseClients() }, Logger: h.log,
	})
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	users := h.model.Users()
	for i, u := range users[:2] {
		h.logins = append(h.logins, Login{Username: strings.ToLower(strings.Fields(u.Name)[0]), Password: "demo-" + strings.ToLower(strings.Fields(u.Name)[0]), Admin: i == 0})
	}
	h.auth = haauth.New([]haauth.User{
		{ID: users[0].ID, Name: users[0].Name, Username: h.logins[0].Username, Password: h.logins[0].Password, Admin: users[0].IsAdmin},
		{ID: users[1].ID, Name: users[1].Name, Username: h.logins[1].Username, Password: h.logins[1].Password, Admin: users[1].IsAdmin},
	})
	h.srv, err = hass.New(hass.Options{Home: h.model, Recorder: h.rec, AdminToken: h.adminTok, UserToken: h.userTok,
		SystemToken: h.sysTok, AuthTimeout: h.o.AuthTimeout, Logger: h.log, Supervisor: h.sup, Auth: h.auth, JournalLog: h.o.Supervised,
		SupervisorAPITimeout: h.o.SupervisorAPITimeout})
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	h.model.OnRestart(h.srv.CloseClients)
	haListen := h.o.HAListen
	if haListen == "" {
		haListen = "127.0.0.1:0"
	}
	if err := h.listenHA(haListen); err != nil {
		return err
	}
	supListen := h.o.SupervisorListen
	if supListen == "" {
		supListen = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", supListen)
	if err != nil {
		return fmt.Errorf("sim: supervisor listen %s: %w", supListen, err)
	}
	h.supAddr = ln.Addr().String()
	h.supHTTP = &http.Server{Handler: h.sup.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = h.supHTTP.Serve(ln) }()
	return nil
}

func (h *Home) listenHA(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("sim: HA listen %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h.srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	h.mu.Lock()
	h.haAddr, h.haLn, h.haHTTP = ln.Addr().String(), ln, srv
	h.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
	return nil
}

// URL is HA's base URL, http://127.0.0.1:PORT.
func (h *Home) URL() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return "http://" + h.haAddr
}

func (h *Home) liveURL() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.down || h.haAddr == "" {
		return ""
	}
	return "http://" + h.haAddr
}

// SupervisorURL plays http://supervisor.
func (h *Home) SupervisorURL() string { return "http://" + h.supAddr }

// Token is the admin (owner) long-lived access token.
func (h *Home) Token() string { return h.adminTok }

// UserToken is a non-admin user's token.
func (h *Home) UserToken() string { return h.userTok }

// Login is a user who can sign in on the simulated HA's login page (OAuth clients).
type Login struct {
	Username string `json:"username"`
	Password string `json:"password"`
	Admin    bool   `json:"admin"`
}

// Logins lists the demo users' credentials: the administrator first, then a non-admin.
func (h *Home) Logins() []Login { return append([]Login(nil), h.logins...) }

// NewAdminToken creates another long-lived access token for the administrator, as a user can
// hold several in HA (e.g. one for an assistant, one for a script).
func (h *Home) NewAdminToken() (string, error) {
	tok, err := newJWT()
	if err != nil {
		return "", err
	}
	h.srv.AddToken(tok, h.model.Users()[0].ID)
	return tok, nil
}

// SupervisorToken is the add-on's SUPERVISOR_TOKEN.
func (h *Home) SupervisorToken() string { return h.supTok }

// Sandbox is the folder layout (/config, /ssl, /backup, ...).
func (h *Home) Sandbox() sandbox.Layout { return h.layout }

// HoldSupervisorActions makes the Supervisor's slow actions (add-on install and update, new
// backups) wait until release is called, so a test can outlast a timeout without sleeping;
// started gets each waiting action's endpoint.
func (h *Home) HoldSupervisorActions() (started <-chan string, release func()) {
	return h.sup.HoldSlowActions()
}

// RecorderPath is the recorder database file.
func (h *Home) RecorderPath() string { return h.layout.RecorderPath() }

// Model is the home model itself, for tests that assert on state directly.
func (h *Home) Model() *home.Home { return h.model }

// Faults switches HA's slow answers and 500s on and off; SetDown is a restart, DropClients a
// network failure.
func (h *Home) Faults() *hass.Faults { return h.srv.Faults() }

// DropClients resets every WebSocket connection to HA, with no close handshake.
func (h *Home) DropClients() { h.srv.DropClients() }

// Stop makes HA unreachable (SetDown(true)).
func (h *Home) Stop() { h.SetDown(true) }

// SetDown(true) closes HA's listener and drops its clients, so connections
// are refused; SetDown(false) listens again on the same address.
func (h *Home) SetDown(down bool) error {
	h.mu.Lock()
	if h.closed || h.down == down {
		h.mu.Unlock()
		return nil
	}
	h.down = down
	srv, addr := h.haHTTP, h.haAddr
	h.mu.Unlock()
	if down {
		_ = srv.Close()
		h.srv.CloseClients()
		return nil
	}
	var err error
	for i := 0; i < 50; i++ { // the port can take a moment to free up
		if err = h.listenHA(addr); err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	h.mu.Lock()
	h.down = true
	h.mu.Unlock()
	return err
}

// Close stops everything and removes a temp Dir.
func (h *Home) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	haHTTP := h.haHTTP
	h.mu.Unlock()
	var errs []error
	if haHTTP != nil {
		_ = haHTTP.Close()
	}
	if h.srv != nil {
		h.srv.CloseClients()
	}
	if h.supHTTP != nil {
		_ = h.supHTTP.Close()
	}
	if h.unsub != nil {
		h.unsub()
	}
	if h.model != nil {
		h.model.Close()
	}
	h.recMu.Lock()
	if h.rec != nil {
		errs = append(errs, h.rec.Close())
		h.rec = nil
	}
	h.recMu.Unlock()
	if h.tempDir {
		errs = append(errs, os.RemoveAll(h.dir))
	}
	return errors.Join(errs...)
}

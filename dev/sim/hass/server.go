// Package hass serves the simulated Home Assistant over real sockets: the
// REST API, the WebSocket API, and (on its own listener) the Supervisor API
// with its /core proxy. The model behind it is package home; history,
// logbook and statistics come from the recorder database (package recorder).
package hass

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hamcp/hamcp/dev/sim/haauth"
	"github.com/hamcp/hamcp/dev/sim/home"
	"github.com/hamcp/hamcp/dev/sim/recorder"
)

// Options configures New.
type Options struct {
	Home *home.Home
	// Recorder answers history, logbook and statistics; nil leaves those
	// integrations unloaded (their routes 404, their commands are unknown).
	Recorder *recorder.DB
	// AdminToken is the owner's long-lived token; UserToken a non-admin
	// user's; SystemToken the Supervisor's own (used by its /core proxy).
	AdminToken, UserToken, SystemToken string
	// AuthTimeout is how long a WebSocket client has to authenticate (HA: 10 s).
	AuthTimeout time.Duration
	Logger      *slog.Logger
	// Supervisor answers WS supervisor/api; nil makes that command fail as
	// it does on a core install without a Supervisor.
	Supervisor *Supervisor
	// Auth is the login side (/auth/*) for OAuth clients; nil leaves it out.
	Auth *haauth.Provider
	// SupervisorAPITimeout is WS supervisor/api's timeout when the message has none (HA:
	// 10 s; 0 means that). "timeout": null waits as long as the Supervisor takes.
	SupervisorAPITimeout time.Duration
	// JournalLog is an HA OS / Supervised install: core logs to the journal only, so
	// /api/error_log is not registered (404) and the log is the Supervisor's /core/logs.
	JournalLog bool
}

// user is who a token belongs to.
type user struct {
	home.User
	system bool
}

// Server is the HA API server.
type Server struct {
	o      Options
	h      *home.Home
	rec    *recorder.DB
	log    *slog.Logger
	tokens map[string]*user
	tokMu  sync.RWMutex // guards tokens, which AddToken extends
	mux    *router

	mu    sync.Mutex
	conns map[*wsConn]bool

	faults *Faults // faults.go
}

// New builds the server (no listener: the caller serves Handler()).
func New(o Options) (*Server, error) {
	if o.Home == nil {
		return nil, errors.New("hass: Options.Home is required")
	}
	if o.AdminToken == "" || o.UserToken == "" || o.SystemToken == "" {
		return nil, errors.New("hass: AdminToken, UserToken and SystemToken are required")
	}
	if o.AuthTimeout <= 0 {
		o.AuthTimeout = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{o: o, h: o.Home, rec: o.Recorder, log: o.Logger, conns: map[*wsConn]bool{}, faults: newFaults()}
	users := o.Home.Users()
	s.tokens = map[string]*user{
		o.AdminToken:  {User: users[0]},
		o.UserToken:   {User: users[1]},
		o.SystemToken: {User: home.User{ID: "0f3e2a8d5c1b4e7f9a6d3c2b1e0f4a5d", Name: "Supervisor", IsAdmin: true}, system: true},
	}
	o.Home.SetRenderer(homeRenderer)
	s.routes()
	return s, nil
}

// Handler serves /api/..., /api/websocket and, with Options.Auth, /auth/....
func (s *Server) Handler() http.Handler { return s.faults.wrap(s.loginHandler(s.mux)) }

// CloseClients drops every WebSocket client (a restart, or HA going down).
func (s *Server) CloseClients() {
	for _, c := range s.clients() {
		c.close()
	}
}

// clients is a snapshot of the connected WebSocket clients.
func (s *Server) clients() []*wsConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	conns := make([]*wsConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	return conns
}

// authenticate resolves the bearer token; nil means 401.
func (s *Server) authenticate(r *http.Request) *user {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil
	}
	return s.userForToken(strings.TrimSpace(tok))
}

func (s *Server) userForToken(tok string) *user {
	if tok == "" {
		return nil
	}
	s.tokMu.RLock()
	defer s.tokMu.RUnlock()
	for t, u := range s.tokens {
		if subtle.ConstantTimeCompare([]byte(t), []byte(tok)) == 1 {
			return u
		}
	}
	return s.loginUser(tok)
}

// authed wraps a view: 401 without a valid token, 401 for non-admins on
// admin views (HA raises Unauthorized, which the http layer turns into 401).
func (s *Server) authed(admin bool, h func(w http.ResponseWriter, r *http.Request, p params, u *user)) func(http.ResponseWriter, *http.Request, params) {
	return func(w http.ResponseWriter, r *http.Request, p params) {
		u := s.authenticate(r)
		if u == nil || admin && !u.IsAdmin {
			plain(w, http.StatusUnauthorized, "401: Unauthorized")
			return
		}
		h(w, r, p, u)
	}
}

// marshal is compact JSON without HTML escaping, like orjson.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	raw, err := marshal(v)
	if err != nil {
		plain(w, http.StatusInternalServerError, "500 Internal Server Error\n\nServer got itself in trouble")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(raw)
}

// message is HA's json_message: {"message": "..."}.
func message(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"message": msg})
}

func plain(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(text))
}

const (
	badRequest  = "400: Bad Request"
	serverError = "500 Internal Server Error\n\nServer got itself in trouble"
	maxBody     = 16 << 20
)

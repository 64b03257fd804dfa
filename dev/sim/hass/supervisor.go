package hass

import (
	"crypto/subtle"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hamcp/hamcp/dev/sim/home"
)

// SupervisorOptions configures NewSupervisor.
type SupervisorOptions struct {
	Home *home.Home
	// Token is the SUPERVISOR_TOKEN add-ons present.
	Token string
	// SystemToken is what the Supervisor itself uses against HA (its /core proxy).
	SystemToken string
	// HAURL returns HA's base URL (http://127.0.0.1:PORT), "" while HA is down.
	HAURL func() string
	// Folders maps backup folder names (homeassistant, ssl, share, media,
	// addons/local) to directories; BackupDir holds the backup tar files.
	Folders   map[string]string
	BackupDir string
	// OnCoreRestart is called for /core/restart (drop HA's clients).
	OnCoreRestart func()
	// SelfSlug is the hamcp add-on's slug ("self"); default local_hamcp.
	SelfSlug string
	Logger   *slog.Logger
}

// Supervisor plays http://supervisor: add-ons, core, host, OS, backups,
// resolution, and the proxy to HA at /core/api and /core/websocket.
type Supervisor struct {
	o      SupervisorOptions
	mux    *router
	table  []tableEntry
	client *http.Client

	mu      sync.Mutex
	addons  []*addon
	backups map[string]*backup
	jobs    map[string]map[string]any
	started time.Time
	logs    []string

	holdMu sync.Mutex
	hold   *actionHold
	// corePort is the simulated core's last known port (HA keeps it while down).
	corePort int
}

// actionHold keeps the slow actions (add-on install and update, new backups: a docker pull
// or a tar of /config on a real box) waiting until released, so a test can make them take
// as long as it needs without sleeping.
type actionHold struct {
	started chan string   // each waiting action's endpoint
	release chan struct{} // closed to let them finish
}

// HoldSlowActions makes add-on install/update and new backups wait until release is
// called; started gets each one's endpoint when it begins to wait.
func (s *Supervisor) HoldSlowActions() (started <-chan string, release func()) {
	h := &actionHold{started: make(chan string, 16), release: make(chan struct{})}
	s.holdMu.Lock()
	s.hold = h
	s.holdMu.Unlock()
	var once sync.Once
	return h.started, func() {
		once.Do(func() {
			s.holdMu.Lock()
			if s.hold == h {
				s.hold = nil
			}
			s.holdMu.Unlock()
			close(h.release)
		})
	}
}

// slowAction waits while a test holds slow actions.
func (s *Supervisor) slowAction(endpoint string) {
	s.holdMu.Lock()
	h := s.hold
	s.holdMu.Unlock()
	if h == nil {
		return
	}
	select {
	case h.started <- endpoint:
	default:
	}
	<-h.release
}

// supResp is a Supervisor answer: an envelope (data or error) or a raw body.
type supResp struct {
	status int
	data   any
	err    string
	raw    string
	rawCT  string
	bytes  []byte
}

func ok(data any) supResp { return supResp{status: 200, data: data} }
func fail(status int, msg string) supResp {
	return supResp{status: status, err: msg}
}
func text(s string) supResp { return supResp{status: 200, raw: s, rawCT: "text/plain; charset=utf-8"} }

type supHandler func(req *supReq) supResp

type supReq struct {
	method string
	p      params
	query  url.Values
	body   map[string]any
}

// NewSupervisor builds the Supervisor API (serve Handler() on its own listener).
func NewSupervisor(o SupervisorOptions) (*Supervisor, error) {
	if o.Home == nil || o.Token == "" || o.SystemToken == "" || o.HAURL == nil {
		return nil, errors.New("hass: supervisor needs Home, Token, SystemToken and HAURL")
	}
	if o.SelfSlug == "" {
		o.SelfSlug = "local_hamcp"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Supervisor{o: o, addons: catalog(o.SelfSlug), backups: map[string]*backup{}, jobs: map[string]map[string]any{},
		started: o.Home.Now(), client: &http.Client{Timeout: 5 * time.Minute}}
	now := o.Home.Now()
	for _, a := range s.addons {
		if a.installed && a.state == "started" {
			a.bootLogs(now)
		}
	}
	s.logs = []string{now.Format("2006-01-02 15:04:05") + " INFO (MainThread) [supervisor.bootstrap] Initializing Supervisor setup",
		now.Format("2006-01-02 15:04:05") + " INFO (MainThread) [supervisor.core] Supervisor is up and running"}
	if err := s.loadBackups(); err != nil {
		return nil, err
	}
	s.routes()
	return s, nil
}

// Handler serves the Supervisor API.
func (s *Supervisor) Handler() http.Handler { return s.mux }

func (s *Supervisor) routes() {
	rt := &router{notFound: "404: Not Found"}
	s.mux = rt
	add := func(method, pattern string, h supHandler) {
		rt.handle(method, pattern, func(w http.ResponseWriter, r *http.Request, p params) { s.serve(w, r, p, h) })
		s.table = append(s.table, tableEntry{r: rt.routes[len(rt.routes)-1], h: h})
	}
	add("GET", "/supervisor/ping", func(*supReq) supResp { return ok(map[string]any{}) })
	add("GET", "/supervisor/info", s.supervisorInfo)
	add("GET", "/supervisor/logs", func(r *supReq) supResp { return s.logText(s.logs, r) })
	add("GET", "/info", s.info)
	add("GET", "/core/info", s.coreInfo)
	add("POST", "/core/check", s.coreCheck)
	add("POST", "/core/restart", s.coreRestart)
	add("GET", "/core/logs", func(r *supReq) supResp {
		return s.logText(strings.Split(strings.TrimRight(s.o.Home.LogText(0), "\n"), "\n"), r)
	})
	add("GET", "/host/info", s.hostInfo)
	add("GET", "/os/info", s.osInfo)
	add("GET", "/resolution/info", s.resolutionInfo)
	add("GET", "/addons", s.listAddons)
	add("GET", "/store/addons", s.storeAddons)
	add("GET", "/addons/{slug}/info", s.addonInfo)
	add("GET", "/addons/{slug}/logs", s.addonLogs)
	add("GET", "/addons/{slug}/stats", s.addonStats)
	for _, verb := range []string{"start", "stop", "restart", "uninstall"} {
		verb := verb
		add("POST", "/addons/{slug}/"+verb, func(r *supReq) supResp { return s.addonAction(r, verb) })
	}
	for _, verb := range []string{"install", "update"} {
		verb := verb
		add("POST", "/store/addons/{slug}/"+verb, func(r *supReq) supResp { return s.storeAction(r, verb) })
		add("POST", "/addons/{slug}/"+verb, func(r *supReq) supResp { return s.storeAction(r, verb) }) // deprecated paths still answer
	}
	add("GET", "/backups", s.listBackups)
	add("GET", "/backups/info", s.listBackups)
	add("POST", "/backups/new/full", func(r *supReq) supResp { return s.newBackup(r, true) })
	add("POST", "/backups/new/partial", func(r *supReq) supResp { return s.newBackup(r, false) })
	add("GET", "/backups/{slug}/info", s.backupInfo)
	add("DELETE", "/backups/{slug}", s.deleteBackup)
	add("GET", "/backups/{slug}/download", s.downloadBackup)
	add("GET", "/jobs/{uuid}", s.jobInfo)
	add("POST", "/backups/{slug}/restore/full", func(r *supReq) supResp { return s.restoreBackup(r, true) })
	add("POST", "/backups/{slug}/restore/partial", func(r *supReq) supResp { return s.restoreBackup(r, false) })
	// The proxy's routes (supervisor/api/__init__.py _register_proxy): GET, POST and DELETE under
	// /core/api/, only GET and POST under the legacy /homeassistant/api/; anything else is 405.
	for prefix, methods := range map[string][]string{"/core": {"GET", "POST", "DELETE"}, "/homeassistant": {"GET", "POST"}} {
		rt.handle("GET", prefix+"/api/websocket", s.proxyWS) // before {rest:*}, which would take it
		rt.handle("GET", prefix+"/websocket", s.proxyWS)
		for _, m := range methods {
			rt.handle(m, prefix+"/api/{rest:*}", s.proxyREST)
		}
	}
}

// checkToken: missing → 401, wrong → 403 (the Supervisor's security middleware).
func (s *Supervisor) checkToken(w http.ResponseWriter, r *http.Request) bool {
	tok := r.Header.Get("X-Supervisor-Token")
	if tok == "" {
		if scheme, t, found := strings.Cut(r.Header.Get("Authorization"), " "); found && strings.EqualFold(scheme, "Bearer") {
			tok = strings.TrimSpace(t)
		}
	}
	if tok == "" {
		plain(w, 401, "401: Unauthorized")
		return false
	}
	if subtle.ConstantTimeCompare([]byte(tok), []byte(s.o.Token)) != 1 {
		plain(w, 403, "403: Forbidden")
		return false
	}
	return true
}

func (s *Supervisor) serve(w http.ResponseWriter, r *http.Request, p params, h supHandler) {
	if !s.checkToken(w, r) {
		return
	}
	req := &supReq{method: r.Method, p: p, query: r.URL.Query(), body: map[string]any{}}
	if r.Method == "POST" || r.Method == "PUT" {
		raw, err := readBody(r)
		if err != nil {
			writeJSON(w, 400, errEnvelope{Result: "error", Message: "Can't read request body"})
			return
		}
		if len(strings.TrimSpace(string(raw))) > 0 {
			var v any
			if err := decodeJSON(raw, &v); err != nil {
				writeJSON(w, 400, errEnvelope{Result: "error", Message: "Invalid JSON body"})
				return
			}
			m, isMap := v.(map[string]any)
			if !isMap {
				writeJSON(w, 400, errEnvelope{Result: "error", Message: "Invalid JSON body: expected an object"})
				return
			}
			req.body = toGoNumbers(m).(map[string]any)
		}
	}
	resp := h(req)
	s.write(w, resp)
}

func (s *Supervisor) write(w http.ResponseWriter, resp supResp) {
	switch {
	case resp.bytes != nil:
		w.Header().Set("Content-Type", resp.rawCT)
		w.WriteHeader(resp.status)
		_, _ = w.Write(resp.bytes)
	case resp.rawCT != "":
		w.Header().Set("Content-Type", resp.rawCT)
		w.WriteHeader(resp.status)
		_, _ = w.Write([]byte(resp.raw))
	case resp.err != "":
		writeJSON(w, resp.status, errEnvelope{Result: "error", Message: resp.err})
	default:
		data := resp.data
		if data == nil {
			data = map[string]any{}
		}
		writeJSON(w, resp.status, okEnvelope{Result: "ok", Data: data})
	}
}

// The Supervisor's envelopes, in its key order.
type okEnvelope struct {
	Result string `json:"result"`
	Data   any    `json:"data"`
}

type errEnvelope struct {
	Result  string `json:"result"`
	Message string `json:"message"`
}

// Call runs an endpoint in-process for WS supervisor/api: the data member
// on success, the Supervisor's message as the error otherwise.
func (s *Supervisor) Call(method, endpoint string, data map[string]any) (any, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, err
	}
	method = strings.ToUpper(method)
	for _, e := range s.table {
		p, match := e.r.match(u.EscapedPath())
		if !match || e.r.method != method {
			continue
		}
		if data == nil {
			data = map[string]any{}
		}
		resp := e.h(&supReq{method: method, p: p, query: u.Query(), body: data})
		switch {
		case resp.err != "":
			return nil, errors.New(resp.err)
		case resp.bytes != nil:
			return nil, errors.New("endpoint returns binary data; use the Supervisor API directly")
		case resp.rawCT != "":
			// HA's send_command decodes every answer as JSON, so a text endpoint (logs)
			// fails through supervisor/api.
			return nil, errors.New("Failed to decode the Supervisor's answer as JSON (" + resp.rawCT + ")")
		case resp.data == nil:
			return map[string]any{}, nil
		}
		return resp.data, nil
	}
	return nil, errors.New("404: Not Found")
}

// tableEntry keeps each envelope endpoint for in-process calls.
type tableEntry struct {
	r route
	h supHandler
}

func (s *Supervisor) logText(lines []string, r *supReq) supResp {
	if n, err := strconv.Atoi(r.query.Get("lines")); err == nil && n > 0 && n < len(lines) {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 1 && lines[0] == "" {
		lines = nil
	}
	out := strings.Join(lines, "\n")
	if out != "" {
		out += "\n"
	}
	return text(out)
}

func (s *Supervisor) findAddon(slug string) *addon {
	if slug == "self" {
		slug = s.o.SelfSlug
	}
	for _, a := range s.addons {
		if a.slug == slug {
			return a
		}
	}
	return nil
}

func (s *Supervisor) listAddons(r *supReq) supResp {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := []any{}
	for _, a := range s.addons {
		if a.installed {
			list = append(list, a.summary())
		}
	}
	return ok(map[string]any{"addons": list})
}

func (s *Supervisor) storeAddons(r *supReq) supResp {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := []any{}
	for _, a := range s.addons {
		m := a.summary()
		m["repository"] = a.repository
		list = append(list, m)
	}
	sort.Slice(list, func(i, j int) bool {
		return list[i].(map[string]any)["slug"].(string) < list[j].(map[string]any)["slug"].(string)
	})
	return ok(map[string]any{"addons": list})
}

// installed finds an installed add-on: unknown → 404, not installed → 400.
func (s *Supervisor) installed(slug string) (*addon, supResp, bool) {
	a := s.findAddon(slug)
	if a == nil {
		return nil, fail(404, "Addon "+slug+" does not exist"), false
	}
	if !a.installed {
		return nil, fail(400, "Addon is not installed"), false
	}
	return a, supResp{}, true
}

func (s *Supervisor) addonInfo(r *supReq) supResp {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.findAddon(r.p["slug"])
	if a == nil {
		return fail(404, "Addon "+r.p["slug"]+" does not exist")
	}
	return ok(a.info(s.o.SelfSlug))
}

func (s *Supervisor) addonLogs(r *supReq) supResp {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, bad, found := s.installed(r.p["slug"])
	if !found {
		return bad
	}
	return s.logText(append([]string(nil), a.logs...), r)
}

func (s *Supervisor) addonStats(r *supReq) supResp {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, bad, found := s.installed(r.p["slug"])
	if !found {
		return bad
	}
	cpu, mem := 0.0, 0
	if a.state == "started" {
		cpu, mem = 0.8, 48<<20
	}
	return ok(map[string]any{"cpu_percent": cpu, "memory_usage": mem, "memory_limit": 8 << 30, "memory_percent": float64(mem) / float64(8<<30) * 100,
		"network_rx": 1024, "network_tx": 2048, "blk_read": 0, "blk_write": 0})
}

func (s *Supervisor) addonAction(r *supReq, verb string) supResp {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, bad, found := s.installed(r.p["slug"])
	if !found {
		return bad
	}
	now := s.o.Home.Now()
	switch verb {
	case "start":
		if a.state == "started" {
			return ok(nil)
		}
		a.state = "started"
		a.bootLogs(now)
	case "stop":
		a.state = "stopped"
		a.logLine(now, "INFO", "Stopping "+a.name)
		a.logs = append(a.logs, "s6-rc: info: service legacy-services: stopping", "s6-rc: info: service s6rc-oneshot-runner successfully stopped")
	case "restart":
		a.logLine(now, "INFO", "Restarting "+a.name)
		a.state = "started"
		a.bootLogs(now)
	case "uninstall":
		a.installed, a.state, a.version = false, "unknown", ""
		a.logs = nil
	}
	return ok(nil)
}

func (s *Supervisor) storeAction(r *supReq, verb string) supResp {
	s.slowAction("/store/addons/" + r.p["slug"] + "/" + verb)
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.findAddon(r.p["slug"])
	if a == nil {
		return fail(404, "Addon "+r.p["slug"]+" does not exist in the store")
	}
	now := s.o.Home.Now()
	switch verb {
	case "install":
		if a.installed {
			return fail(400, "Addon "+a.slug+" is already installed")
		}
		a.installed, a.version, a.state = true, a.versionLatest, "stopped"
		if a.ip == "" {
			a.ip = "172.30.33." + strconv.Itoa(10+len(a.slug)%200)
		}
		a.logLine(now, "INFO", "Add-on "+a.name+" installed")
	case "update":
		if !a.installed {
			return fail(400, "Addon is not installed")
		}
		if !a.updateAvailable() {
			return fail(400, "No update available for add-on "+a.slug)
		}
		a.version = a.versionLatest
		a.logLine(now, "INFO", "Add-on "+a.name+" updated to "+a.version)
		if a.state == "started" {
			a.bootLogs(now)
		}
	}
	if truthy(fromGo(r.body["background"])) {
		return ok(map[string]any{"job_id": s.doneJob("addon_manager_"+verb, a.slug)})
	}
	return ok(nil)
}

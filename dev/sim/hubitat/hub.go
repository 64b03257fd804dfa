// Package hubitat is a simulated Hubitat Elevation hub: the Maker API with its documented
// shapes, the eventsocket stream, Maker API postURL pushes, modes, HSM, hub variables, rooms,
// the admin routes behind Hub Security (memory, temperature, database size, app and driver code,
// backups, reboot, Z-Wave and Zigbee) and a demo house of devices whose commands really change
// their attributes. `hamcp demo` and the tests use it over loopback sockets; it knows nothing of
// hamcp's own packages.
//
// Where the Maker API documentation is silent (the status of an unknown device, a bad token or
// an unsupported command) the simulator's choice is marked "assumed" next to it.
package hubitat

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Location is where the hub is, for sunrise and sunset.
type Location struct {
	Name             string  `json:"name"`
	Latitude         float64 `json:"latitude"`
	Longitude        float64 `json:"longitude"`
	TimeZone         string  `json:"timeZone"`
	TemperatureScale string  `json:"temperatureScale"`
	ZipCode          string  `json:"zipCode"`
}

// Options configures New. The zero value is a demo hub without Hub Security.
type Options struct {
	// AppID is the Maker API instance's id; "" means "7".
	AppID string
	// Token is the Maker API access token; "" means a random UUID.
	Token string
	// Username and Password turn Hub Security on.
	Username, Password string
	// LoginStatus is what an admin route answers without a session: 0 means a 302 redirect to
	// /login (what the hub does), 401 or 403 emulate firmware that refuses outright.
	LoginStatus int
	// SessionTTL is how long a login cookie stays valid; 0 means 6 hours.
	SessionTTL time.Duration
	// RebootDelay is how long a reboot keeps the hub offline; 0 means 150 ms.
	RebootDelay time.Duration
	// ArmingDelay is HSM's exit delay for armAway/armHome/armNight (state "arming…" first);
	// 0 arms at once.
	ArmingDelay time.Duration
	// PostURL is the initial postURL target; Maker API's /postURL/<url> changes it.
	PostURL string
	// BareCommands makes /devices/<id> list commands as bare strings, as some firmware does,
	// instead of {"command":…} objects.
	BareCommands bool
	// TextReplies makes the admin info routes answer as older firmware does: numbers with a
	// unit and a newline, Z-Wave/Zigbee info as text.
	TextReplies bool
	// NoEventSocket makes /eventsocket answer 404, as a firmware that dropped it would.
	NoEventSocket bool
	// Location defaults to a house in Boston.
	Location Location
	Logger   *slog.Logger
}

type mode struct {
	ID   int
	Name string
}

type variable struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Type  string `json:"type"`
}

type code struct {
	ID        int
	Name      string
	Namespace string
	Version   int
	Source    string
}

// Hub is one simulated hub.
type Hub struct {
	o     Options
	log   *slog.Logger
	token string
	appID string
	boot  time.Time

	mu        sync.Mutex
	devices   []*device
	byID      map[int]*device
	history   map[int][]eventRecord
	modes     []mode
	modeID    int
	hsm       string
	hsmTimer  *time.Timer
	vars      []variable
	postURL   string
	apps      []code
	drivers   []code
	nextCode  int
	sessions  map[string]time.Time
	logins    int
	backups   int
	repairing bool
	requests  map[string]int
	inst      *installedApps // installed app instances (apps.go), seeded on first use
	extra     *hubAdminState // logs, backups, File Manager, platform update (hubadmin.go), seeded on first use
	dadm      *deviceAdmin   // rooms, device edits, virtual devices (deviceadmin.go), seeded on first use

	netMu  sync.Mutex
	addr   string
	srv    *http.Server
	down   bool
	closed bool

	sockMu   sync.Mutex
	sockets  map[*socket]struct{}
	pushMu   sync.RWMutex // guards sending on pushQ against Close closing it
	pushDone bool
	pushQ    chan []byte
	pushWG   sync.WaitGroup
	pushHTTP *http.Client

	faults faults // injected trouble (faults.go)
}

// New builds a hub with the demo house. It does not listen until Start.
func New(o Options) *Hub {
	if o.AppID == "" {
		o.AppID = "7"
	}
	if o.Token == "" {
		o.Token = uuid()
	}
	if o.SessionTTL == 0 {
		o.SessionTTL = 6 * time.Hour
	}
	if o.RebootDelay == 0 {
		o.RebootDelay = 150 * time.Millisecond
	}
	if o.Location == (Location{}) {
		o.Location = Location{Name: "Home", Latitude: 42.3601, Longitude: -71.0589, TimeZone: "America/New_York", TemperatureScale: "F", ZipCode: "02108"}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Hub{o: o, log: o.Logger.With("component", "sim-hubitat"), token: o.Token, appID: o.AppID, boot: time.Now(),
		byID: map[int]*device{}, history: map[int][]eventRecord{}, sessions: map[string]time.Time{},
		requests: map[string]int{}, sockets: map[*socket]struct{}{}, postURL: o.PostURL,
		pushQ: make(chan []byte, 1024), pushHTTP: &http.Client{Timeout: 5 * time.Second}}
	h.devices = demoDevices()
	for _, d := range h.devices {
		h.byID[d.id] = d
	}
	h.modes = []mode{{1, "Day"}, {2, "Evening"}, {3, "Night"}, {4, "Away"}}
	h.modeID = 1
	h.hsm = "disarmed"
	h.vars = []variable{
		{Name: "GuestMode", Value: "false", Type: "boolean"},
		{Name: "WakeTime", Value: "06:45", Type: "string"},
		{Name: "TargetTemp", Value: "68", Type: "integer"},
		{Name: "PowerPrice", Value: "0.21", Type: "decimal"},
	}
	h.apps = []code{
		{ID: 101, Name: "Motion Lighting Helper", Namespace: "demo", Version: 4, Source: groovyApp("Motion Lighting Helper")},
		{ID: 102, Name: "Leak Alert", Namespace: "demo", Version: 2, Source: groovyApp("Leak Alert")},
	}
	h.drivers = []code{
		{ID: 201, Name: "Weather Station", Namespace: "demo", Version: 7, Source: groovyDriver("Weather Station")},
	}
	h.nextCode = 300
	h.pushWG.Add(1)
	go h.pushLoop()
	return h
}

func groovyApp(name string) string {
	return fmt.Sprintf("definition(name: %q, namespace: \"demo\", author: \"hamcp\")\n\npreferences {\n    page(name: \"main\")\n}\n\ndef installed() {\n    initialize()\n}\n\ndef initialize() {\n    log.info \"%s ready\"\n}\n", name, name)
}

func groovyDriver(name string) string {
	return fmt.Sprintf("metadata {\n    definition(name: %q, namespace: \"demo\", author: \"hamcp\") {\n        capability \"TemperatureMeasurement\"\n    }\n}\n\ndef parse(String description) {\n}\n", name)
}

func uuid() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// Start listens on addr ("" means 127.0.0.1:0) and serves until ctx ends or Close. It returns
// the hub's URL, http://host:port.
func (h *Hub) Start(ctx context.Context, addr string) (string, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	if err := h.listen(addr); err != nil {
		return "", err
	}
	go func() {
		<-ctx.Done()
		h.Close()
	}()
	return h.URL(), nil
}

func (h *Hub) listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("sim hubitat: listen %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h.Handler(), ReadHeaderTimeout: 10 * time.Second}
	h.netMu.Lock()
	h.addr, h.srv, h.down = ln.Addr().String(), srv, false
	h.netMu.Unlock()
	go func() { _ = srv.Serve(ln) }()
	return nil
}

// URL is the hub's root.
func (h *Hub) URL() string {
	h.netMu.Lock()
	defer h.netMu.Unlock()
	return "http://" + h.addr
}

// AppID and Token are the Maker API instance's id and access token.
func (h *Hub) AppID() string { return h.appID }

// Token is the Maker API access token.
func (h *Hub) Token() string { return h.token }

// Location is the hub's location (for sunrise and sunset).
func (h *Hub) Location() Location { return h.o.Location }

// Close stops serving and drops every eventsocket.
func (h *Hub) Close() error {
	h.netMu.Lock()
	if h.closed {
		h.netMu.Unlock()
		return nil
	}
	h.closed = true
	srv := h.srv
	h.netMu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
	h.dropSockets()
	h.mu.Lock()
	if h.hsmTimer != nil {
		h.hsmTimer.Stop()
	}
	h.mu.Unlock()
	h.pushMu.Lock()
	h.pushDone = true
	close(h.pushQ)
	h.pushMu.Unlock()
	h.pushWG.Wait()
	return nil
}

// setDown closes the listener (connections are refused) or listens again on the same address.
func (h *Hub) setDown(down bool) error {
	h.netMu.Lock()
	if h.closed || h.down == down {
		h.netMu.Unlock()
		return nil
	}
	h.down = down
	srv, addr := h.srv, h.addr
	h.netMu.Unlock()
	if down {
		_ = srv.Close()
		h.dropSockets()
		return nil
	}
	var err error
	for range 50 { // the port can take a moment to free up
		if err = h.listen(addr); err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}

// Reboot takes the hub offline for RebootDelay, drops every eventsocket, then comes back and
// emits systemStart. done is closed when the hub answers again.
func (h *Hub) Reboot() (done <-chan struct{}) {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		if err := h.setDown(true); err != nil {
			return
		}
		time.Sleep(h.o.RebootDelay)
		if err := h.setDown(false); err != nil {
			h.log.Error("reboot: listening again failed", "error", err)
			return
		}
		h.mu.Lock()
		h.boot = time.Now()
		h.sessions = map[string]time.Time{}
		h.mu.Unlock()
		h.emitLocation("systemStart", "true", "Hub starting up")
	}()
	return ch
}

// Down reports whether the hub is offline (rebooting or shut down).
func (h *Hub) Down() bool {
	h.netMu.Lock()
	defer h.netMu.Unlock()
	return h.down
}

// Logins counts successful Hub Security logins; Backups counts backup downloads.
func (h *Hub) Logins() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.logins
}

// Backups counts backup downloads.
func (h *Hub) Backups() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.backups
}

// Requests counts requests per route ("GET /devices/all", "GET /hub/advanced/freeOSMemory").
func (h *Hub) Requests(route string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.requests[route]
}

// ExpireSessions forgets every Hub Security login, as a hub restart or a timeout does.
func (h *Hub) ExpireSessions() {
	h.mu.Lock()
	h.sessions = map[string]time.Time{}
	h.mu.Unlock()
}

// PostURL is the registered postURL target ("" when none).
func (h *Hub) PostURL() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.postURL
}

// Attribute reads a device attribute as text, for tests.
func (h *Hub) Attribute(id int, name string) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	d, ok := h.byID[id]
	if !ok {
		return "", false
	}
	a := d.attr(name)
	if a == nil {
		return "", false
	}
	return valueString(a.value), true
}

// SetAttribute changes an attribute as a physical event would (a sensor reporting), emitting
// the event. quiet changes it without any event, as a change made while nobody listened.
func (h *Hub) SetAttribute(id int, name, value string, quiet bool) error {
	h.mu.Lock()
	d, ok := h.byID[id]
	if !ok || d.attr(name) == nil {
		h.mu.Unlock()
		return fmt.Errorf("sim hubitat: device %d has no attribute %q", id, name)
	}
	var v any = value
	if d.attr(name).dataType == "NUMBER" {
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			h.mu.Unlock()
			return fmt.Errorf("sim hubitat: %s is a number", name)
		}
		v = f
	}
	if quiet {
		d.attr(name).value = v
		h.mu.Unlock()
		return nil
	}
	recs := h.applyLocked(d, []change{{name: name, value: v}}, "physical")
	h.mu.Unlock()
	h.publish(recs)
	return nil
}

// EmitLocationEvent sends a location event (mode, hsmStatus, systemStart, …) to every listener.
func (h *Hub) EmitLocationEvent(name, value string) { h.emitLocation(name, value, "") }

// DeviceIDs lists every device on the hub, authorised in Maker API or not.
func (h *Hub) DeviceIDs(authorisedOnly bool) []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []int
	for _, d := range h.devices {
		if d.authorised || !authorisedOnly {
			out = append(out, d.id)
		}
	}
	return out
}

// Mode is the current mode's name; HSM is the HSM status.
func (h *Hub) Mode() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.modeNameLocked(h.modeID)
}

// HSM is the current HSM status.
func (h *Hub) HSM() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hsm
}

func (h *Hub) modeNameLocked(id int) string {
	i := slices.IndexFunc(h.modes, func(m mode) bool { return m.ID == id })
	if i < 0 {
		return ""
	}
	return h.modes[i].Name
}

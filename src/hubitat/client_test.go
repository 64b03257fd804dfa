package hubitat

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	simhub "github.com/hamcp/hamcp/dev/sim/hubitat"
	"github.com/hamcp/hamcp/dev/testkit"
)

func startHub(t *testing.T, o simhub.Options) *simhub.Hub {
	t.Helper()
	h := simhub.New(o)
	if _, err := h.Start(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func newClient(t *testing.T, h *simhub.Hub, mutate func(*Options)) *Client {
	t.Helper()
	o := Options{URL: h.URL(), AppID: h.AppID(), Token: h.Token()}
	if mutate != nil {
		mutate(&o)
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	c.backoffBase, c.backoffCap, c.callTimeout = 5*time.Millisecond, 40*time.Millisecond, 2*time.Second
	t.Cleanup(func() { c.Close() })
	return c
}

func TestValidateNamesTheOption(t *testing.T) {
	t.Parallel()
	ok := Options{URL: "http://192.168.1.20", AppID: "7", Token: "0b2c4e6a-1111-2222-3333-444455556666"}
	tests := []struct {
		name   string
		mutate func(*Options)
		want   string // "" means valid
	}{
		{"valid", func(*Options) {}, ""},
		{"empty url", func(o *Options) { o.URL = "" }, "hubitat_url is empty"},
		{"url scheme", func(o *Options) { o.URL = "192.168.1.20" }, "hubitat_url"},
		{"url with token query", func(o *Options) { o.URL = "http://hub/?access_token=abc" }, "hubitat_url must not carry a query"},
		{"url with path", func(o *Options) { o.URL = "http://hub/apps/api/7" }, "hubitat_url"},
		{"url with credentials", func(o *Options) { o.URL = "http://u:p@hub" }, "hubitat_url must not carry user:password"},
		{"app id empty", func(o *Options) { o.AppID = "" }, "hubitat_app_id is empty"},
		{"app id not a number", func(o *Options) { o.AppID = "maker" }, "hubitat_app_id"},
		{"token empty", func(o *Options) { o.Token = " " }, "hubitat_token is empty"},
		{"token with a quote", func(o *Options) { o.Token = `"abc"` }, "hubitat_token contains"},
		{"user without password", func(o *Options) { o.Username = "admin" }, "hubitat_password is empty"},
		{"password without user", func(o *Options) { o.Password = "pw" }, "hubitat_username is empty"},
		{"device not an id", func(o *Options) { o.Devices = []string{"12", "lamp"} }, "hubitat_devices[1]"},
		{"device twice", func(o *Options) { o.Devices = []string{"12", "12"} }, "hubitat_devices lists \"12\" twice"},
		{"events unknown", func(o *Options) { o.Events = "poll" }, "hubitat_events"},
		{"posturl needs a push url", func(o *Options) { o.Events = EventsPostURL }, "hubitat_events"},
		{"rule endpoint", func(o *Options) { o.RuleEndpoint = "http://192.168.1.20/apps/api/14/trigger?access_token=abc-1" }, ""},
		{"rule endpoint elsewhere", func(o *Options) { o.RuleEndpoint = "https://cloud.hubitat.com/api/x/apps/14/trigger?access_token=abc" }, "hubitat_rm_endpoint"},
		{"rule endpoint without token", func(o *Options) { o.RuleEndpoint = "http://192.168.1.20/apps/api/14/trigger" }, "hubitat_rm_endpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := ok
			tt.mutate(&o)
			err := o.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "abc") && tt.name == "url with token query" {
				t.Fatal("the token in a pasted URL was echoed")
			}
		})
	}
}

// One test per Maker API shape, read through the client against the simulated hub.
func TestMakerShapes(t *testing.T) {
	t.Parallel()
	h := startHub(t, simhub.Options{})
	bare := startHub(t, simhub.Options{BareCommands: true})
	c := newClient(t, h, nil)
	cb := newClient(t, bare, nil)
	ctx := t.Context()
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"/devices", func(t *testing.T) {
			ds, err := c.ListDevices(ctx)
			if err != nil || len(ds) < 25 || ds[0].ID != "1" || ds[0].Label != "Living Room Lamp" || ds[0].Detailed {
				t.Fatalf("%v %+v", err, ds[:1])
			}
		}},
		{"/devices/all attribute map", func(t *testing.T) {
			ds, err := c.AllDevices(ctx)
			if err != nil {
				t.Fatal(err)
			}
			d := ds[slices.IndexFunc(ds, func(d Device) bool { return d.ID == "16" })]
			a, _ := d.Attribute("heatingSetpoint")
			if f, ok := a.Value.Float(); !ok || f != 68 || a.DataType != "" {
				t.Fatalf("heatingSetpoint %+v", a)
			}
			if !d.HasCommand("setHeatingSetpoint") || len(d.Capabilities) == 0 {
				t.Fatalf("device %+v", d)
			}
			lock := ds[slices.IndexFunc(ds, func(d Device) bool { return d.ID == "8" })]
			if a, _ := lock.Attribute("lastCodeName"); !a.Value.IsNull() {
				t.Fatalf("null attribute read as %q", a.Value)
			}
		}},
		{"/devices/<id> attribute array", func(t *testing.T) {
			d, err := c.FetchDevice(ctx, "16")
			if err != nil {
				t.Fatal(err)
			}
			a, _ := d.Attribute("heatingSetpoint")
			if f, ok := a.Value.Float(); !ok || f != 68 || a.DataType != "NUMBER" {
				t.Fatalf("heatingSetpoint %+v", a)
			}
			if m, _ := d.Attribute("thermostatMode"); len(m.Values) == 0 {
				t.Fatal("enum values lost")
			}
			if slices.ContainsFunc(d.Capabilities, func(s string) bool { return s == "" }) || !slices.Contains(d.Capabilities, "Thermostat") {
				t.Fatalf("capabilities %v", d.Capabilities)
			}
		}},
		{"commands as objects and as bare strings", func(t *testing.T) {
			for _, cl := range []*Client{c, cb} {
				d, err := cl.FetchDevice(ctx, "1")
				if err != nil || !d.HasCommand("setLevel") || !d.HasCommand("on") {
					t.Fatalf("%v %+v", err, d.Commands)
				}
			}
		}},
		{"/devices/<id>/events", func(t *testing.T) {
			if err := c.SendCommand(ctx, "27", "on"); err != nil {
				t.Fatal(err)
			}
			evs, err := c.DeviceEvents(ctx, "27", 10)
			if err != nil || len(evs) != 1 || evs[0].Name != "switch" || evs[0].Value.String() != "on" || evs[0].Date.IsZero() || evs[0].DeviceID != "27" {
				t.Fatalf("%v %+v", err, evs)
			}
		}},
		{"/modes ids and names", func(t *testing.T) {
			ms, err := c.Modes(ctx)
			if err != nil || len(ms) != 4 || ms[1].ID != "2" || ms[1].Name != "Evening" {
				t.Fatalf("%v %+v", err, ms)
			}
		}},
		{"/hsm", func(t *testing.T) {
			if s, err := cb.HSM(ctx); err != nil || s != "disarmed" {
				t.Fatalf("%v %q", err, s)
			}
		}},
		{"/hubvariables", func(t *testing.T) {
			vs, err := c.Variables(ctx)
			if err != nil || len(vs) != 4 {
				t.Fatalf("%v %+v", err, vs)
			}
			if err := c.SetVariable(ctx, "WakeTime", "07:15 am"); err != nil {
				t.Fatal(err)
			}
			v, err := c.Variable(ctx, "WakeTime")
			if err != nil || v.Value.String() != "07:15 am" {
				t.Fatalf("%v %+v", err, v)
			}
			if err := c.SetVariable(ctx, "TargetTemp", "warm"); !IsStatus(err, 400) {
				t.Fatalf("typed variable: %v", err)
			}
			if _, err := c.Variable(ctx, "Nope"); err == nil || !strings.Contains(err.Error(), "not found") {
				t.Fatal(err)
			}
		}},
		{"/rooms", func(t *testing.T) {
			rs, err := c.Rooms(ctx)
			if err != nil || len(rs) < 5 || rs[0].Name != "Living Room" || !slices.Contains(rs[0].DeviceIDs, "1") {
				t.Fatalf("%v %+v", err, rs)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.run)
	}
}

func TestSetModeAndHSM(t *testing.T) {
	t.Parallel()
	h := startHub(t, simhub.Options{})
	c := newClient(t, h, nil)
	ctx := t.Context()
	prev, now, err := c.SetMode(ctx, "night")
	if err != nil || prev.Name != "Day" || now.Name != "Night" || now.ID != "3" || h.Mode() != "Night" {
		t.Fatalf("%v %+v %+v %s", err, prev, now, h.Mode())
	}
	if _, _, err := c.SetMode(ctx, "Vacation"); err == nil || !strings.Contains(err.Error(), "Day, Evening, Night, Away") {
		t.Fatalf("unknown mode: %v", err)
	}
	if err := c.SetHSM(ctx, "armNight"); err != nil || h.HSM() != "armedNight" {
		t.Fatalf("%v %s", err, h.HSM())
	}
	if err := c.SetHSM(ctx, "armed"); err == nil || !strings.Contains(err.Error(), "armAway") {
		t.Fatalf("bad hsm value: %v", err)
	}
}

func TestCommandsAndDeviceNotFound(t *testing.T) {
	t.Parallel()
	h := startHub(t, simhub.Options{})
	c := newClient(t, h, nil)
	narrow := newClient(t, h, func(o *Options) { o.Devices = []string{"1", "8", "29"} })
	ctx := t.Context()
	// Arguments go comma-separated and URL-escaped in one segment.
	if err := c.SendCommand(ctx, "9", "setCode", "4", "2580", "Dog Walker/Tue"); err != nil {
		t.Fatal(err)
	}
	if codes, _ := h.Attribute(9, "lockCodes"); !strings.Contains(codes, `"name":"Dog Walker/Tue"`) {
		t.Fatalf("lockCodes %s", codes)
	}
	if err := c.SendCommand(ctx, "9", "setCode", "5", "1,2"); err == nil || !strings.Contains(err.Error(), "parameters[1]") {
		t.Fatalf("comma: %v", err)
	}
	if err := c.SendCommand(ctx, "10", "on"); !IsStatus(err, 400) || !strings.HasSuffix(err.Error(), "answered 400: Command on not found on device 10") {
		t.Fatalf("unsupported command: %v", err)
	}
	if err := c.SendCommand(ctx, "1", "on/../../hsm"); err == nil || !strings.Contains(err.Error(), "not a command name") {
		t.Fatalf("command path: %v", err)
	}
	notFound := []struct {
		name string
		cl   *Client
		id   string
	}{
		{"unknown device", c, "4242"},
		{"not authorised in Maker API", c, "29"},
		{"outside hubitat_devices", narrow, "2"},
		{"outside hubitat_devices and Maker API", narrow, "29"},
		{"not an id", c, "1/../2"},
	}
	for _, tt := range notFound {
		t.Run(tt.name, func(t *testing.T) {
			for _, err := range []error{
				func() error { _, err := tt.cl.FetchDevice(ctx, tt.id); return err }(),
				func() error { _, err := tt.cl.Device(ctx, tt.id); return err }(),
				tt.cl.SendCommand(ctx, tt.id, "on"),
				func() error { _, err := tt.cl.DeviceEvents(ctx, tt.id, 5); return err }(),
			} {
				if !errors.Is(err, ErrDeviceNotFound) || !strings.HasSuffix(err.Error(), "device not found") {
					t.Fatalf("error %v, want device not found", err)
				}
			}
		})
	}
	ds, err := narrow.AllDevices(ctx)
	if err != nil || len(ds) != 2 || ds[0].ID != "1" || ds[1].ID != "8" {
		t.Fatalf("narrowed list %v %+v", err, ds)
	}
}

func TestCacheFollowsEvents(t *testing.T) {
	t.Parallel()
	h := startHub(t, simhub.Options{})
	c := newClient(t, h, nil)
	events := make(chan Event, 64)
	c.Cache().OnEvent(func(e Event) { events <- e })
	c.Start(t.Context())
	testkit.Eventually(t, "live cache", c.Cache().Live)
	ctx := t.Context()
	if c.Cache().Mode() != "Day" || c.Cache().HSM() != "disarmed" {
		t.Fatalf("location not primed: %q %q", c.Cache().Mode(), c.Cache().HSM())
	}
	fetches := h.Requests("GET /devices/all")
	if err := c.SendCommand(ctx, "2", "setLevel", "35"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"level", "switch"} {
		if e := <-events; e.DeviceID != "2" || e.Name != want || e.DisplayName != "Kitchen Lights" {
			t.Fatalf("event %+v", e)
		}
	}
	d, err := c.Device(ctx, "2")
	if a, _ := d.Attribute("level"); err != nil || a.Value.String() != "35" {
		t.Fatalf("cached level %v %+v", err, a)
	}
	// A physical change reaches the cache too.
	h.SetAttribute(12, "motion", "active", false)
	if e := <-events; e.DeviceID != "12" || e.Value.String() != "active" {
		t.Fatalf("event %+v", e)
	}
	// The socket streams devices Maker API does not authorise; the cache keeps them out.
	h.SetAttribute(29, "switch", "on", false)
	h.EmitLocationEvent("mode", "Evening")
	if e := <-events; !e.Location() || e.Name != "mode" || c.Cache().Mode() != "Evening" {
		t.Fatalf("event %+v", e)
	}
	if _, ok := c.Cache().Get("29"); ok {
		t.Fatal("unauthorised device in the cache")
	}
	if _, err := c.Device(ctx, "29"); !errors.Is(err, ErrDeviceNotFound) {
		t.Fatal(err)
	}
	if ds, err := c.ListDevices(ctx); err != nil || len(ds) != 28 {
		t.Fatalf("list %v %d", err, len(ds))
	}
	if got := h.Requests("GET /devices/all"); got != fetches || h.Requests("GET /devices/2") != 0 || h.Requests("GET /devices") != 0 {
		t.Fatalf("reads went to the hub: /devices/all %d→%d", fetches, got)
	}
	// With a live cache an unsupported command is refused before the hub, naming the supported ones.
	if err := c.SendCommand(ctx, "1", "lock"); err == nil || !strings.Contains(err.Error(), "supports: on, off, setLevel") {
		t.Fatalf("unsupported: %v", err)
	}
	if err := c.SendCommand(ctx, "12", "on"); err == nil || !strings.Contains(err.Error(), "no commands") {
		t.Fatalf("unsupported: %v", err)
	}
}

// A hub reboot mid-session: the eventsocket drops, calls fail fast while the hub is away, the
// client reconnects and the cache resyncs changes made while it was blind.
func TestRebootMidSession(t *testing.T) {
	t.Parallel()
	h := startHub(t, simhub.Options{RebootDelay: 400 * time.Millisecond})
	c := newClient(t, h, nil)
	c.Start(t.Context())
	testkit.Eventually(t, "live cache", c.Cache().Live)
	ctx := t.Context()
	if err := c.Reboot(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the link to notice", func() bool { return !c.Cache().Live() })
	testkit.Eventually(t, "the link to be down", func() bool { return c.Status().Link == "down" })
	// A change nobody hears about: the cache can only learn it by resyncing.
	h.SetAttribute(14, "humidity", "57", true)
	start := time.Now()
	_, err := c.Device(ctx, "14")
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "retrying in the background") {
		t.Fatalf("during the outage: %v", err)
	}
	if err := c.SendCommand(ctx, "3", "on"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("command during the outage: %v", err)
	}
	if el := time.Since(start); el > 100*time.Millisecond {
		t.Fatalf("calls during the outage took %s, want fail-fast", el)
	}
	testkit.Eventually(t, "reconnect", c.Cache().Live)
	d, err := c.Device(ctx, "14")
	if a, _ := d.Attribute("humidity"); err != nil || a.Value.String() != "57" {
		t.Fatalf("after resync %v %+v", err, a)
	}
	if st := c.Status(); st.Link != "connected" || st.Reconnects == 0 || st.Via != "eventsocket" {
		t.Fatalf("status %+v", st)
	}
	if err := c.SendCommand(ctx, "3", "on"); err != nil {
		t.Fatal(err)
	}
}

func TestSystemStartResyncs(t *testing.T) {
	t.Parallel()
	h := startHub(t, simhub.Options{})
	c := newClient(t, h, nil)
	c.Start(t.Context())
	testkit.Eventually(t, "live cache", c.Cache().Live)
	h.SetAttribute(15, "humidity", "70", true)
	h.EmitLocationEvent("systemStart", "true")
	testkit.Eventually(t, "resync", func() bool {
		d, _ := c.Cache().Get("15")
		a, _ := d.Attribute("humidity")
		return a.Value.String() == "70"
	})
}

// postURL pushes into the client's handler feed the same cache.
func TestPostURLPushesFeedTheCache(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		hub  simhub.Options
		mode EventMode
	}{
		{"posturl", simhub.Options{}, EventsPostURL},
		{"auto falls back when the eventsocket is refused", simhub.Options{NoEventSocket: true}, EventsAuto},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := startHub(t, tt.hub)
			mux := http.NewServeMux()
			srv := httptest.NewServer(mux)
			defer srv.Close()
			c := newClient(t, h, func(o *Options) { o.Events, o.PushURL = tt.mode, srv.URL+"/hubitat/events" })
			mux.Handle("/hubitat/events/", c.PushHandler())
			c.Start(t.Context())
			testkit.Eventually(t, "connected", func() bool { return c.Status().Link == "connected" })
			if h.PostURL() != c.PushTarget() || c.Status().Via != "posturl" {
				t.Fatalf("postURL %q, via %s", h.PostURL(), c.Status().Via)
			}
			if err := c.SendCommand(t.Context(), "4", "on"); err != nil {
				t.Fatal(err)
			}
			testkit.Eventually(t, "push", func() bool {
				d, _ := c.Cache().Get("4")
				a, _ := d.Attribute("switch")
				return a.Value.String() == "on"
			})
			// Only the secret path is accepted, and only POST.
			for _, r := range []struct {
				method, path string
				want         int
			}{
				{"POST", "/hubitat/events/guess", 404},
				{"POST", "/hubitat/events/", 404},
				{"GET", "/hubitat/events/" + c.pushSecret, 405},
				{"POST", "/hubitat/events/" + c.pushSecret, 400},
			} {
				req, _ := http.NewRequest(r.method, srv.URL+r.path, strings.NewReader("not json"))
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != r.want {
					t.Errorf("%s %s = %d, want %d", r.method, r.path, resp.StatusCode, r.want)
				}
			}
			// systemStart through a push resyncs.
			h.SetAttribute(15, "humidity", "66", true)
			h.EmitLocationEvent("systemStart", "true")
			testkit.Eventually(t, "resync", func() bool {
				d, _ := c.Cache().Get("15")
				a, _ := d.Attribute("humidity")
				return a.Value.String() == "66"
			})
		})
	}
}

func TestHubSecurityLogin(t *testing.T) {
	t.Parallel()
	for _, status := range []int{0, 401, 403} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			t.Parallel()
			h := startHub(t, simhub.Options{Username: "admin", Password: "hub-pass", LoginStatus: status})
			c := newClient(t, h, func(o *Options) { o.Username, o.Password = "admin", "hub-pass" })
			ctx := t.Context()
			for range 3 {
				if kb, err := c.FreeMemoryKB(ctx); err != nil || kb != 482716 {
					t.Fatalf("%v %v", err, kb)
				}
			}
			if h.Logins() != 1 {
				t.Fatalf("%d logins, want the cookie reused", h.Logins())
			}
			h.ExpireSessions() // the hub forgot the session: one refusal, one login, one retry
			if _, err := c.TemperatureC(ctx); err != nil {
				t.Fatal(err)
			}
			if h.Logins() != 2 || h.Requests("GET /hub/advanced/internalTempCelsius") != 2 {
				t.Fatalf("logins %d, requests %d", h.Logins(), h.Requests("GET /hub/advanced/internalTempCelsius"))
			}
			// The cookie expires on our side after its TTL as well.
			c.session.mu.Lock()
			c.session.expires = time.Now().Add(-time.Second)
			c.session.mu.Unlock()
			if _, err := c.DatabaseSizeKB(ctx); err != nil || h.Logins() != 3 {
				t.Fatalf("%v, %d logins", err, h.Logins())
			}
		})
	}
	h := startHub(t, simhub.Options{Username: "admin", Password: "hub-pass"})
	wrong := newClient(t, h, func(o *Options) { o.Username, o.Password = "admin", "nope-nope" })
	if _, err := wrong.FreeMemoryKB(t.Context()); !errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), "hubitat_username") {
		t.Fatalf("wrong password: %v", err)
	}
	none := newClient(t, h, nil)
	if _, err := none.FreeMemoryKB(t.Context()); !errors.Is(err, ErrNoLogin) {
		t.Fatalf("no login: %v", err)
	}
}

func TestAdminRoutes(t *testing.T) {
	t.Parallel()
	h := startHub(t, simhub.Options{Username: "admin", Password: "pw"})
	old := startHub(t, simhub.Options{TextReplies: true})
	c := newClient(t, h, func(o *Options) { o.Username, o.Password = "admin", "pw" })
	co := newClient(t, old, nil)
	ctx := t.Context()
	for _, cl := range []*Client{c, co} {
		if temp, err := cl.TemperatureC(ctx); err != nil || temp != 43.2 {
			t.Fatalf("temperature %v %v", err, temp)
		}
	}
	// Credentials for a hub without Hub Security: nothing asks for a login, so none happens.
	withCreds := newClient(t, old, func(o *Options) { o.Username, o.Password = "admin", "pw" })
	if _, err := withCreds.FreeMemoryKB(ctx); err != nil || old.Logins() != 0 {
		t.Fatalf("%v, %d logins", err, old.Logins())
	}
	if r, err := c.ZWaveInfo(ctx); err != nil || r.JSON == nil {
		t.Fatalf("zwave JSON %v %+v", err, r)
	}
	if r, err := co.ZWaveInfo(ctx); err != nil || r.JSON != nil || !strings.Contains(r.Text, "Z-Wave region") {
		t.Fatalf("zwave text %v %+v", err, r)
	}
	apps, err := c.AppTypes(ctx)
	if err != nil || len(apps) != 2 || apps[0].ID != "101" || apps[0].Version != 4 {
		t.Fatalf("%v %+v", err, apps)
	}
	if ds, err := c.DriverTypes(ctx); err != nil || len(ds) != 1 {
		t.Fatalf("%v %+v", err, ds)
	}
	src, err := c.CodeSource(ctx, AppCode, "101")
	if err != nil || src.Version != 4 || !strings.Contains(src.Source, "definition(") {
		t.Fatalf("%v %+v", err, src)
	}
	if _, err := c.CodeSource(ctx, AppCode, "999"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatal(err)
	}
	id, err := c.InstallCode(ctx, DriverCode, `metadata { definition(name: "Test Driver", namespace: "t") { } }`)
	if err != nil || id == "" {
		t.Fatalf("install %v %q", err, id)
	}
	if _, err := c.InstallCode(ctx, AppCode, "def broken() {"); err == nil || !strings.Contains(err.Error(), "No definition") {
		t.Fatalf("install broken: %v", err)
	}
	up, err := c.UpdateCode(ctx, AppCode, "101", src.Source+"\n// edited\n")
	if err != nil || up.Version != 5 {
		t.Fatalf("update %v %+v", err, up)
	}
	if _, err := c.UpdateCode(ctx, AppCode, "101", "definition(name: \"x\") {"); err == nil || !strings.Contains(err.Error(), "unexpected token") {
		t.Fatalf("compile error: %v", err)
	}
	if err := c.DeleteCode(ctx, DriverCode, id); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteCode(ctx, DriverCode, id); err == nil {
		t.Fatal("deleted twice")
	}
	b, err := c.Backup(ctx)
	if err != nil || !bytes.HasPrefix(b, []byte{'Z', 'V', 0x01, 0x00, 0xff, 0xfe}) || h.Backups() != 1 {
		t.Fatalf("backup %v % x", err, b[:min(8, len(b))])
	}
	if err := c.ZWaveRepair(ctx); err != nil {
		t.Fatal(err)
	}
	if r, _ := c.ZWaveInfo(ctx); !strings.Contains(r.Text, `"repairRunning":true`) {
		t.Fatalf("repair not running: %s", r.Text)
	}
	info, err := c.HubInfo(ctx)
	if loc := h.Location(); err != nil || info.Latitude != loc.Latitude || info.Longitude != loc.Longitude || info.TimeZone != loc.TimeZone || info.UptimeSeconds < 0 {
		t.Fatalf("hub info %v %+v", err, info)
	}
	if _, err := c.Admin(ctx, "GET", "/apps/api/7/devices", nil); err == nil {
		t.Fatal("Admin reached the Maker API")
	}
}

// lockedBuffer collects log output from concurrent goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The token and the password never reach a log line or an error, whatever fails.
func TestSecretsNeverInLogsOrErrors(t *testing.T) {
	t.Parallel()
	h := startHub(t, simhub.Options{Username: "admin", Password: "pw-9f8e7d6c", RebootDelay: 300 * time.Millisecond})
	var logs lockedBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := newClient(t, h, func(o *Options) { o.Logger, o.Username, o.Password = logger, "admin", "pw-9f8e7d6c" })
	badTok := newClient(t, h, func(o *Options) { o.Logger, o.Token = logger, "bad-token-5a4b3c2d" })
	ctx := t.Context()
	var errs []error
	_, err := badTok.ListDevices(ctx)
	errs = append(errs, err)
	c.Start(ctx)
	testkit.Eventually(t, "live", c.Cache().Live)
	if err := c.Reboot(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "down", func() bool { return c.Status().Link == "down" })
	_, err = c.Device(ctx, "1")
	errs = append(errs, err)
	_, err = c.FreeMemoryKB(ctx)
	errs = append(errs, err)
	// A call that meets the closed port itself (not the fail-fast gate) quotes a URL inside.
	raw, _ := New(Options{URL: h.URL(), AppID: h.AppID(), Token: h.Token(), Logger: logger})
	_, err = raw.ListDevices(ctx)
	errs = append(errs, err)
	testkit.Eventually(t, "reconnect", c.Cache().Live)
	c.Close()
	_, err = c.ListDevices(ctx)
	errs = append(errs, err)
	for i, err := range errs {
		if err == nil {
			t.Fatalf("call %d did not fail", i)
		}
		for _, secret := range []string{h.Token(), "bad-token-5a4b3c2d", "pw-9f8e7d6c"} {
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("error %d carries a secret: %v", i, err)
			}
		}
	}
	if !errors.Is(errs[0], ErrUnauthorized) || !errors.Is(errs[3], ErrUnavailable) {
		t.Fatalf("errors %v / %v", errs[0], errs[3])
	}
	out := logs.String()
	if !strings.Contains(out, "hubitat event link down") || !strings.Contains(out, "hubitat reconnect failed") {
		t.Fatalf("expected the outage in the log:\n%s", out)
	}
	for _, secret := range []string{h.Token(), "bad-token-5a4b3c2d", "pw-9f8e7d6c", c.pushSecret} {
		if strings.Contains(out, secret) {
			t.Fatalf("log carries a secret:\n%s", out)
		}
	}
}

func TestCloseStopsEverything(t *testing.T) {
	t.Parallel()
	h := startHub(t, simhub.Options{})
	c := newClient(t, h, nil)
	c.Start(context.Background())
	testkit.Eventually(t, "live", c.Cache().Live)
	c.Close()
	if _, err := c.Modes(t.Context()); !errors.Is(err, ErrClosed) {
		t.Fatal(err)
	}
	if c.Status().Link != "closed" || c.Cache().Live() {
		t.Fatalf("%+v", c.Status())
	}
	testkit.Eventually(t, "socket closed", func() bool { return h.Sockets() == 0 })
}

func TestParseRuleEndpoint(t *testing.T) {
	t.Parallel()
	const hub = "http://192.168.1.20"
	for _, tc := range []struct {
		name, hub, raw string
		app, token     string // "" app: refused
	}{
		{"as Rule Machine shows it", hub, hub + "/apps/api/14/trigger?access_token=0b2c-4e6a", "14", "0b2c-4e6a"},
		{"any last segment", hub, hub + "/apps/api/205/go?access_token=t0k", "205", "t0k"},
		{"hub url with a slash", hub + "/", hub + "/apps/api/14/trigger?access_token=t0k", "14", "t0k"},
		{"hub with a port", "http://hub.lan:8080", "http://hub.lan:8080/apps/api/3/x?access_token=t0k", "3", "t0k"},
		{"the cloud endpoint", hub, "https://cloud.hubitat.com/api/abc/apps/14/trigger?access_token=t0k", "", ""},
		{"https for an http hub", hub, "https://192.168.1.20/apps/api/14/trigger?access_token=t0k", "", ""},
		{"another host", hub, "http://192.168.1.21/apps/api/14/trigger?access_token=t0k", "", ""},
		{"no token", hub, hub + "/apps/api/14/trigger", "", ""},
		{"two tokens", hub, hub + "/apps/api/14/trigger?access_token=a&access_token=b", "", ""},
		{"another parameter", hub, hub + "/apps/api/14/trigger?access_token=t0k&x=1", "", ""},
		{"token with a quote", hub, hub + "/apps/api/14/trigger?access_token=%22t0k", "", ""},
		{"app id not a number", hub, hub + "/apps/api/rm/trigger?access_token=t0k", "", ""},
		{"no last segment", hub, hub + "/apps/api/14?access_token=t0k", "", ""},
		{"deeper path", hub, hub + "/apps/api/14/a/b?access_token=t0k", "", ""},
		{"user info", hub, "http://u:p@192.168.1.20/apps/api/14/trigger?access_token=t0k", "", ""},
		{"fragment", hub, hub + "/apps/api/14/trigger?access_token=t0k#x", "", ""},
		{"bad hub url", "", hub + "/apps/api/14/trigger?access_token=t0k", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app, token, err := ParseRuleEndpoint(tc.hub, tc.raw)
			if app != tc.app || token != tc.token || (err == nil) != (tc.app != "") {
				t.Fatalf("ParseRuleEndpoint(%q) = %q, %q, %v; want %q, %q", tc.raw, app, token, err, tc.app, tc.token)
			}
			if err != nil && (strings.Contains(err.Error(), "t0k") || !strings.Contains(err.Error(), "hub")) {
				t.Fatalf("the error echoes the token or names nothing: %v", err)
			}
		})
	}
}

// TestSetRuleBoolean: the verb goes to the endpoint rule with its token, over the socket, and
// only the named rule's boolean changes; a renewed token and a closed hub say so without the token.
func TestSetRuleBoolean(t *testing.T) {
	t.Parallel()
	h := startHub(t, simhub.Options{})
	c := newClient(t, h, func(o *Options) { o.RuleEndpoint = h.RuleEndpointURL() })
	ctx := t.Context()
	if !c.HasRuleEndpoint() {
		t.Fatal("the endpoint was not taken")
	}
	for _, v := range []bool{false, true, false} {
		if err := c.SetRuleBoolean(ctx, 12, v); err != nil {
			t.Fatal(err)
		}
		if st, _ := h.InstalledApp(12); st.PrivateBoolean != v {
			t.Fatalf("rule 12 reads %v after setting %v", st.PrivateBoolean, v)
		}
	}
	if st, _ := h.InstalledApp(11); !st.PrivateBoolean {
		t.Error("another rule's boolean changed")
	}
	if n := h.Requests("GET /apps/api/14/setRuleBooleanFalse=12"); n != 2 {
		t.Errorf("%d requests for false, want 2", n)
	}
	plain := newClient(t, h, nil)
	if err := plain.SetRuleBoolean(ctx, 12, true); !errors.Is(err, ErrNoRuleEndpoint) || plain.HasRuleEndpoint() {
		t.Errorf("without the option: %v", err)
	}
	u, tok, _ := strings.Cut(h.RuleEndpointURL(), "?access_token=")
	stale := newClient(t, h, func(o *Options) { o.RuleEndpoint = u + "?access_token=old-5e6f7a8b" })
	err := stale.SetRuleBoolean(ctx, 12, true)
	if !errors.Is(err, ErrRuleEndpointRefused) || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "old-5e6f7a8b") {
		t.Errorf("a renewed token: %v", err)
	}
	// A hub that is gone: the URL the transport quotes must not carry the token.
	raw, _ := New(Options{URL: h.URL(), AppID: h.AppID(), Token: h.Token(), RuleEndpoint: h.RuleEndpointURL()})
	defer raw.Close()
	h.Close()
	if err := raw.SetRuleBoolean(ctx, 12, true); err == nil || strings.Contains(err.Error(), tok) || !errors.Is(err, ErrUnavailable) {
		t.Errorf("a closed hub: %v", err)
	}
}

func FuzzParseRuleEndpoint(f *testing.F) {
	for _, s := range []string{"http://192.168.1.20/apps/api/14/trigger?access_token=abc", "http://192.168.1.20/apps/api/14/x?access_token=a&b=c",
		"https://cloud.hubitat.com/x", "http://192.168.1.20/apps/api//x?access_token=a", "http://192.168.1.20/apps/api/1%2F2/x?access_token=a"} {
		f.Add(s)
	}
	// Every refusal's fixed words, so a token that happens to be one of them is not a leak.
	var fixed strings.Builder
	for _, raw := range []string{"x", "http://other/apps/api/1/x?access_token=a", "http://192.168.1.20/apps/api/1/x?b=c"} {
		_, _, err := ParseRuleEndpoint("http://192.168.1.20", raw)
		fixed.WriteString(err.Error())
	}
	f.Fuzz(func(t *testing.T, raw string) {
		app, token, err := ParseRuleEndpoint("http://192.168.1.20", raw)
		if err != nil {
			if app != "" || token != "" {
				t.Fatalf("an error with a result: %q %q", app, token)
			}
			if _, q, ok := strings.Cut(raw, "access_token="); ok && len(q) >= 4 && strings.Contains(err.Error(), q) && !strings.Contains(fixed.String(), q) {
				t.Fatalf("the error echoes the token: %v", err)
			}
			return
		}
		if !allDigits(app) || app == "" || token == "" || !tokenChars(token) {
			t.Fatalf("accepted app %q token %q from %q", app, token, raw)
		}
		// What the client builds from it stays on the hub, under the app's path.
		u, perr := url.Parse("http://192.168.1.20/apps/api/" + app + "/setRuleBooleanTrue=1?access_token=" + token)
		if perr != nil || u.Host != "192.168.1.20" || u.Query().Get("access_token") != token {
			t.Fatalf("the request URL from %q escapes: %v %v", raw, u, perr)
		}
	})
}

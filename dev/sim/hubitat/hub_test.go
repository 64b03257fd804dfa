package hubitat

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func startHub(t *testing.T, o Options) *Hub {
	t.Helper()
	h := New(o)
	if _, err := h.Start(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func get(t *testing.T, h *Hub, path string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(h.URL() + "/apps/api/" + h.AppID() + path + sep(path) + "access_token=" + h.Token())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func sep(path string) string {
	if strings.Contains(path, "?") {
		return "&"
	}
	return "?"
}

func decode[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	return v
}

// The shapes the Maker API reference documents, one check per route.
func TestMakerShapes(t *testing.T) {
	t.Parallel()
	h := startHub(t, Options{})
	bare := startHub(t, Options{BareCommands: true})
	tests := []struct {
		name  string
		hub   *Hub
		path  string
		check func(t *testing.T, b []byte)
	}{
		{"devices lists id name label of authorised devices", h, "/devices", func(t *testing.T, b []byte) {
			ds := decode[[]map[string]any](t, b)
			if len(ds) < 25 {
				t.Fatalf("%d devices, want at least 25", len(ds))
			}
			for _, d := range ds {
				if _, ok := d["id"].(string); !ok || d["label"] == nil || d["name"] == nil {
					t.Fatalf("entry %v lacks id/name/label", d)
				}
				if d["id"] == "29" {
					t.Fatal("device 29 is not authorised in Maker API but is listed")
				}
			}
		}},
		{"devices/all has attributes as a map and commands as objects", h, "/devices/all", func(t *testing.T, b []byte) {
			ds := decode[[]struct {
				ID         string            `json:"id"`
				Attributes map[string]any    `json:"attributes"`
				Commands   []json.RawMessage `json:"commands"`
				Caps       []string          `json:"capabilities"`
			}](t, b)
			if ds[0].Attributes["switch"] != "on" || ds[0].Attributes["level"] != "60" {
				t.Fatalf("device 1 attributes = %v", ds[0].Attributes)
			}
			if string(ds[0].Commands[0]) != `{"command":"on"}` {
				t.Fatalf("command shape %s", ds[0].Commands[0])
			}
		}},
		{"devices/<id> has attributes as an array with currentValue and dataType", h, "/devices/16", func(t *testing.T, b []byte) {
			d := decode[struct {
				Attributes []struct {
					Name         string   `json:"name"`
					CurrentValue any      `json:"currentValue"`
					DataType     string   `json:"dataType"`
					Values       []string `json:"values"`
				} `json:"attributes"`
				Commands []map[string]string `json:"commands"`
			}](t, b)
			found := false
			for _, a := range d.Attributes {
				if a.Name == "heatingSetpoint" {
					found = a.CurrentValue == 68.0 && a.DataType == "NUMBER"
				}
				if a.Name == "thermostatMode" && len(a.Values) == 0 {
					t.Fatal("ENUM without values")
				}
			}
			if !found || d.Commands[0]["command"] == "" {
				t.Fatalf("shape: %s", b)
			}
		}},
		{"devices/<id> with bare command strings", bare, "/devices/1", func(t *testing.T, b []byte) {
			d := decode[struct {
				Commands []string `json:"commands"`
			}](t, b)
			if d.Commands[0] != "on" {
				t.Fatalf("commands %v", d.Commands)
			}
		}},
		{"modes carry numeric ids and an active flag", h, "/modes", func(t *testing.T, b []byte) {
			ms := decode[[]struct {
				ID     int    `json:"id"`
				Name   string `json:"name"`
				Active bool   `json:"active"`
			}](t, b)
			if len(ms) != 4 || ms[0].ID != 1 || !ms[0].Active || ms[1].Active {
				t.Fatalf("modes %s", b)
			}
		}},
		{"hsm", h, "/hsm", func(t *testing.T, b []byte) {
			if decode[map[string]string](t, b)["hsm"] != "disarmed" {
				t.Fatalf("hsm %s", b)
			}
		}},
		{"hubvariables", h, "/hubvariables", func(t *testing.T, b []byte) {
			if vs := decode[[]variable](t, b); len(vs) != 4 || vs[2].Type != "integer" {
				t.Fatalf("vars %s", b)
			}
		}},
		{"rooms", h, "/rooms", func(t *testing.T, b []byte) {
			rs := decode[[]room](t, b)
			if len(rs) < 5 || rs[0].Name != "Living Room" || len(rs[0].DeviceIDs) == 0 {
				t.Fatalf("rooms %s", b)
			}
		}},
		{"device events newest first", h, "/devices/1/events", func(t *testing.T, b []byte) {
			decode[[]map[string]any](t, b)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, b := get(t, tt.hub, tt.path)
			if st != http.StatusOK {
				t.Fatalf("status %d: %s", st, b)
			}
			tt.check(t, b)
		})
	}
}

func TestMakerErrors(t *testing.T) {
	t.Parallel()
	h := startHub(t, Options{})
	tests := []struct {
		name string
		url  string
		want int
	}{
		{"no token", h.URL() + "/apps/api/" + h.AppID() + "/devices", 401},
		{"bad token", h.URL() + "/apps/api/" + h.AppID() + "/devices?access_token=nope", 401},
		{"other app", h.URL() + "/apps/api/999/devices?access_token=" + h.Token(), 404},
		{"unknown device", h.URL() + "/apps/api/" + h.AppID() + "/devices/4242?access_token=" + h.Token(), 404},
		{"device not authorised", h.URL() + "/apps/api/" + h.AppID() + "/devices/29/on?access_token=" + h.Token(), 404},
		{"unsupported command", h.URL() + "/apps/api/" + h.AppID() + "/devices/10/on?access_token=" + h.Token(), 400},
		{"bad argument", h.URL() + "/apps/api/" + h.AppID() + "/devices/1/setLevel/bright?access_token=" + h.Token(), 400},
		{"unknown mode id", h.URL() + "/apps/api/" + h.AppID() + "/modes/77?access_token=" + h.Token(), 404},
		{"bad hsm value", h.URL() + "/apps/api/" + h.AppID() + "/hsm/armEverything?access_token=" + h.Token(), 400},
		{"typed variable", h.URL() + "/apps/api/" + h.AppID() + "/hubvariables/TargetTemp/warm?access_token=" + h.Token(), 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Get(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
}

type frame struct {
	Source   string `json:"source"`
	Name     string `json:"name"`
	Value    string `json:"value"`
	DeviceID int    `json:"deviceId"`
}

func dialSocket(t *testing.T, h *Hub) (<-chan frame, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(h.URL(), "http")+"/eventsocket", nil)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan frame, 256)
	go func() {
		defer close(ch)
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				return
			}
			var f frame
			_ = json.Unmarshal(b, &f)
			ch <- f
		}
	}()
	for h.Sockets() == 0 {
		time.Sleep(time.Millisecond)
	}
	return ch, func() { cancel(); c.CloseNow() }
}

func next(t *testing.T, ch <-chan frame) frame {
	t.Helper()
	select {
	case f, ok := <-ch:
		if !ok {
			t.Fatal("eventsocket closed")
		}
		return f
	case <-time.After(3 * time.Second):
		t.Fatal("no event")
	}
	return frame{}
}

// Commands change attributes and the eventsocket carries each change.
func TestCommandsChangeAttributesAndEmitEvents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		path   string
		device int
		events []frame // in order
		attrs  map[string]string
	}{
		{"setLevel also turns on", "/devices/2/setLevel/40", 2,
			[]frame{{Name: "level", Value: "40"}, {Name: "switch", Value: "on"}}, map[string]string{"level": "40", "switch": "on"}},
		{"unlock", "/devices/8/unlock", 8, []frame{{Name: "lock", Value: "unlocked"}}, map[string]string{"lock": "unlocked"}},
		{"setCode with comma-separated arguments", "/devices/9/setCode/3,4321,Dog%20Walker", 9,
			[]frame{{Name: "lockCodes"}, {Name: "codeChanged", Value: "3 added"}}, nil},
		{"thermostat setpoint", "/devices/16/setHeatingSetpoint/71", 16,
			[]frame{{Name: "heatingSetpoint", Value: "71"}, {Name: "thermostatSetpoint", Value: "71"}, {Name: "thermostatOperatingState", Value: "heating"}},
			map[string]string{"heatingSetpoint": "71"}},
		{"shade setPosition", "/devices/19/setPosition/35", 19,
			[]frame{{Name: "position", Value: "35"}, {Name: "windowShade", Value: "partially open"}}, nil},
		{"shade open", "/devices/20/close", 20, []frame{{Name: "windowShade", Value: "closed"}, {Name: "position", Value: "0"}}, nil},
		{"button push", "/devices/17/push/2", 17, []frame{{Name: "pushed", Value: "2"}}, nil},
		{"valve", "/devices/21/open", 21, []frame{{Name: "valve", Value: "open"}}, nil},
		{"fan speed", "/devices/22/setSpeed/medium", 22, []frame{{Name: "speed", Value: "medium"}, {Name: "switch", Value: "on"}}, nil},
		{"speaker volume", "/devices/23/setVolume/60", 23, []frame{{Name: "volume", Value: "60"}}, nil},
		{"presence", "/devices/25/arrived", 25, []frame{{Name: "presence", Value: "present"}}, nil},
		{"colour", "/devices/5/setHue/30", 5, []frame{{Name: "hue", Value: "30"}, {Name: "colorMode", Value: "RGB"}, {Name: "switch", Value: "on"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := startHub(t, Options{})
			ch, stop := dialSocket(t, h)
			defer stop()
			if st, b := get(t, h, tt.path); st != 200 {
				t.Fatalf("status %d: %s", st, b)
			}
			for _, want := range tt.events {
				f := next(t, ch)
				if f.Source != "DEVICE" || f.DeviceID != tt.device || f.Name != want.Name || (want.Value != "" && f.Value != want.Value) {
					t.Fatalf("event %+v, want %+v", f, want)
				}
			}
			for k, v := range tt.attrs {
				if got, _ := h.Attribute(tt.device, k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

func TestButtonRepeatsAndHiddenDevicesStream(t *testing.T) {
	t.Parallel()
	h := startHub(t, Options{})
	ch, stop := dialSocket(t, h)
	defer stop()
	for range 2 {
		get(t, h, "/devices/18/push/1")
		if f := next(t, ch); f.Name != "pushed" || f.Value != "1" {
			t.Fatalf("event %+v", f)
		}
	}
	// The socket is not Maker API: it streams devices Maker API does not authorise.
	if err := h.SetAttribute(29, "switch", "on", false); err != nil {
		t.Fatal(err)
	}
	if f := next(t, ch); f.DeviceID != 29 {
		t.Fatalf("event %+v", f)
	}
}

func TestPostURLPushes(t *testing.T) {
	t.Parallel()
	got := make(chan map[string]map[string]any, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		got <- body
	}))
	defer srv.Close()
	h := startHub(t, Options{PostURL: srv.URL + "/configured"})
	get(t, h, "/devices/1/off")
	if c := (<-got)["content"]; c["deviceId"] != "1" || c["value"] != "off" {
		t.Fatalf("push to the configured URL %v", c)
	}
	if st, _ := get(t, h, "/postURL/"+url.PathEscape(srv.URL+"/hook/s3cret")); st != 200 || h.PostURL() != srv.URL+"/hook/s3cret" {
		t.Fatalf("postURL = %q", h.PostURL())
	}
	get(t, h, "/devices/3/on")
	c := (<-got)["content"]
	if c["deviceId"] != "3" || c["name"] != "switch" || c["value"] != "on" {
		t.Fatalf("push %v", c)
	}
	h.SetAttribute(29, "switch", "on", false) // not authorised: not pushed
	get(t, h, "/modes/3")
	c = (<-got)["content"]
	if c["deviceId"] != nil || c["name"] != "mode" || c["value"] != "Night" {
		t.Fatalf("push %v", c)
	}
}

func TestHSMArmingDelay(t *testing.T) {
	t.Parallel()
	h := startHub(t, Options{ArmingDelay: 30 * time.Millisecond})
	ch, stop := dialSocket(t, h)
	defer stop()
	_, b := get(t, h, "/hsm/armAway")
	if decode[map[string]string](t, b)["hsm"] != "armingAway" {
		t.Fatalf("reply %s", b)
	}
	for _, want := range []string{"armingAway", "armedAway"} {
		if f := next(t, ch); f.Source != "LOCATION" || f.Name != "hsmStatus" || f.Value != want {
			t.Fatalf("event %+v, want %s", f, want)
		}
	}
	if h.HSM() != "armedAway" {
		t.Fatal(h.HSM())
	}
}

func TestRebootDropsSocketAndEmitsSystemStart(t *testing.T) {
	t.Parallel()
	h := startHub(t, Options{RebootDelay: 50 * time.Millisecond})
	ch, stop := dialSocket(t, h)
	defer stop()
	resp, err := http.Post(h.URL()+"/hub/reboot", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case _, ok := <-ch:
		if ok {
			t.Fatal("frame during reboot")
		}
	case <-time.After(3 * time.Second):
		t.Fatal("eventsocket not dropped")
	}
	deadline := time.Now().Add(3 * time.Second)
	for h.Down() || h.Sockets() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("hub did not come back")
		}
		time.Sleep(5 * time.Millisecond)
	}
	ch2, stop2 := dialSocket(t, h)
	defer stop2()
	h.EmitLocationEvent("systemStart", "true")
	if f := next(t, ch2); f.Name != "systemStart" || f.Source != "LOCATION" {
		t.Fatalf("event %+v", f)
	}
}

func TestHubSecurity(t *testing.T) {
	t.Parallel()
	h := startHub(t, Options{Username: "admin", Password: "pw"})
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(h.URL() + "/hub/advanced/freeOSMemory")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/login" {
		t.Fatalf("without a session: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, _ = noFollow.PostForm(h.URL()+"/login", url.Values{"username": {"admin"}, "password": {"wrong"}})
	resp.Body.Close()
	if len(resp.Cookies()) != 0 || !strings.Contains(resp.Header.Get("Location"), "loginFailed") {
		t.Fatal("a wrong password got a session")
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, _ = c.PostForm(h.URL()+"/login", url.Values{"username": {"admin"}, "password": {"pw"}})
	resp.Body.Close()
	resp, _ = c.Get(h.URL() + "/hub/advanced/freeOSMemory")
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "482716" || h.Logins() != 1 {
		t.Fatalf("memory %q, logins %d", b, h.Logins())
	}
}

// Every demo device takes any command and arguments without panicking: refused with a status,
// or applied.
func FuzzDeviceCommand(f *testing.F) {
	f.Add(16, "setThermostatMode", "emergency heat,x")
	f.Add(8, "setCode", "3,1234,Guest")
	f.Add(5, "setColor", `{"hue":10,"saturation":20}`)
	f.Add(22, "cycleSpeed", "")
	f.Fuzz(func(t *testing.T, id int, cmd, args string) {
		ds := demoDevices()
		d := ds[((id%len(ds))+len(ds))%len(ds)]
		var list []string
		if args != "" {
			list = strings.Split(args, ",")
		}
		changes, err := d.run(cmd, list)
		if err != nil {
			if _, ok := err.(*cmdError); !ok {
				t.Fatalf("error %T %v", err, err)
			}
			return
		}
		for _, c := range changes {
			if d.attr(c.name) == nil {
				t.Fatalf("%s changed %q, which device %d lacks", cmd, c.name, d.id)
			}
		}
	})
}

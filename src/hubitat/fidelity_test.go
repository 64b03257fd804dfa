package hubitat

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	simhub "github.com/hamcp/hamcp/dev/sim/hubitat"
)

// These tests pin the request and reply shapes where hamcp's client used to disagree with
// upstream (kingpanther13/Hubitat-local-MCP-server 4.0.2); docs/hubitat-fidelity.md has the rows.

// wireHub is a hub that records each request and answers from a table keyed "METHOD /path".
type wireHub struct {
	mu      sync.Mutex
	seen    []wireReq
	answers map[string]func(w http.ResponseWriter)
}

type wireReq struct {
	method, path, query, ctype, body string
}

func startWireHub(t *testing.T, answers map[string]func(w http.ResponseWriter)) (*wireHub, *Client) {
	t.Helper()
	wh := &wireHub{answers: answers}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		wh.mu.Lock()
		wh.seen = append(wh.seen, wireReq{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Content-Type"), string(b)})
		wh.mu.Unlock()
		if f, ok := answers[r.Method+" "+r.URL.Path]; ok {
			f(w)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	c, err := New(Options{URL: srv.URL, AppID: "7", Token: "0b2c4e6a-1111-2222-3333-444455556666"})
	if err != nil {
		t.Fatal(err)
	}
	c.callTimeout = 2 * time.Second
	t.Cleanup(func() { c.Close() })
	return wh, c
}

func (wh *wireHub) requests() []wireReq {
	wh.mu.Lock()
	defer wh.mu.Unlock()
	return append([]wireReq(nil), wh.seen...)
}

func jsonAnswer(body string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}
}

// Upstream's toolInstallItem (libraries/mcp-code-management-lib.groovy): POST
// /app/saveOrUpdateJson with the JSON body {id: null, source, version: 1}; the reply is
// {success, id, message}.
func TestInstallCodePostsSaveOrUpdateJSON(t *testing.T) {
	t.Parallel()
	wh, c := startWireHub(t, map[string]func(http.ResponseWriter){
		"POST /driver/saveOrUpdateJson": jsonAnswer(`{"success":true,"id":412,"message":""}`),
		"POST /app/saveOrUpdateJson":    jsonAnswer(`{"success":false,"id":null,"message":"No definition found for this app"}`),
	})
	id, err := c.InstallCode(t.Context(), DriverCode, "metadata { definition(name: \"x\") { } }")
	if err != nil || id != "412" {
		t.Fatalf("install: %q %v", id, err)
	}
	if _, err := c.InstallCode(t.Context(), AppCode, "def x() {}"); err == nil || !strings.Contains(err.Error(), "No definition found") {
		t.Fatalf("the hub's message must reach the caller: %v", err)
	}
	reqs := wh.requests()
	if len(reqs) != 2 {
		t.Fatalf("requests %+v", reqs)
	}
	r := reqs[0]
	if r.method != "POST" || r.path != "/driver/saveOrUpdateJson" || r.ctype != "application/json" {
		t.Fatalf("request %+v", r)
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(r.body), &body); err != nil {
		t.Fatalf("body %q: %v", r.body, err)
	}
	if v, ok := body["id"]; !ok || v != nil || body["version"] != float64(1) || !strings.Contains(body["source"].(string), "definition(") || len(body) != 3 {
		t.Fatalf("create body %v, want {id: null, source, version: 1}", body)
	}
}

// Upstream's toolUpdateItem: GET /app/ajax/code?id=N for the version, then POST
// /app/saveOrUpdateJson {id: N, source, version: current}; success under another id is a
// duplicate, not a success.
func TestUpdateCodePostsSaveOrUpdateJSON(t *testing.T) {
	t.Parallel()
	wh, c := startWireHub(t, map[string]func(http.ResponseWriter){
		"GET /app/ajax/code":            jsonAnswer(`{"id":101,"source":"definition(name: \"a\")","version":7,"status":"success"}`),
		"POST /app/saveOrUpdateJson":    jsonAnswer(`{"success":true,"id":101,"message":"","version":8}`),
		"GET /driver/ajax/code":         jsonAnswer(`{"id":201,"source":"definition(name: \"d\")","version":3,"status":"success"}`),
		"POST /driver/saveOrUpdateJson": jsonAnswer(`{"success":true,"id":999,"message":""}`),
	})
	src, err := c.UpdateCode(t.Context(), AppCode, "101", "definition(name: \"b\")")
	if err != nil || src.Version != 8 {
		t.Fatalf("update: %+v %v", src, err)
	}
	reqs := wh.requests()
	if reqs[0].method != "GET" || reqs[0].path != "/app/ajax/code" || reqs[0].query != "id=101" {
		t.Fatalf("read %+v", reqs[0])
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(reqs[1].body), &body); err != nil || body["id"] != float64(101) || body["version"] != float64(7) || reqs[1].ctype != "application/json" {
		t.Fatalf("update body %+v (%v)", reqs[1], err)
	}
	if _, err := c.UpdateCode(t.Context(), DriverCode, "201", "definition(name: \"d2\")"); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Fatalf("success under another id must fail: %v", err)
	}
}

// The simulated hub answers saveOrUpdateJson as the real one: create, update under the current
// version only, and a compile error in message; and no longer serves the 2.4 form routes.
func TestSimSaveOrUpdateJSON(t *testing.T) {
	t.Parallel()
	h := startHub(t, simhub.Options{Username: "admin", Password: "pw"})
	c := newClient(t, h, func(o *Options) { o.Username, o.Password = "admin", "pw" })
	ctx := t.Context()
	r, err := c.AdminJSON(ctx, "/app/saveOrUpdateJson", map[string]any{"id": 101, "source": "definition(name: \"a\")", "version": 1})
	if err != nil || !strings.Contains(r.Text, `"success":false`) || !strings.Contains(r.Text, "version mismatch") {
		t.Fatalf("stale version: %v %s", err, r.Text)
	}
	r, err = c.AdminJSON(ctx, "/driver/saveOrUpdateJson", map[string]any{"id": nil, "source": "broken", "version": 1})
	if err != nil || !strings.Contains(r.Text, `"message":"No definition found for this driver"`) {
		t.Fatalf("compile error: %v %s", err, r.Text)
	}
	for _, old := range []string{"/app/save", "/app/ajax/update"} {
		if _, err := c.Admin(ctx, http.MethodPost, old, nil); !IsStatus(err, http.StatusNotFound) {
			t.Errorf("POST %s: %v, want 404", old, err)
		}
	}
}

// Upstream's toolManageZwave (repair_start): GET /hub/zwaveRepair2?resetStats=false&maxHealth=10,
// then GET /hub/zwaveRepair when the hub has no such route.
func TestZWaveRepairRoutes(t *testing.T) {
	t.Parallel()
	ok := func(w http.ResponseWriter) { io.WriteString(w, "OK") }
	modern, c := startWireHub(t, map[string]func(http.ResponseWriter){"GET /hub/zwaveRepair2": ok})
	if err := c.ZWaveRepair(t.Context()); err != nil {
		t.Fatal(err)
	}
	if r := modern.requests(); len(r) != 1 || r[0].query != "maxHealth=10&resetStats=false" {
		t.Fatalf("modern hub saw %+v", r)
	}
	legacy, lc := startWireHub(t, map[string]func(http.ResponseWriter){"GET /hub/zwaveRepair": ok})
	if err := lc.ZWaveRepair(t.Context()); err != nil {
		t.Fatal(err)
	}
	if r := legacy.requests(); len(r) != 2 || r[1].method != "GET" || r[1].path != "/hub/zwaveRepair" {
		t.Fatalf("legacy hub saw %+v", r)
	}
}

// /hub2/hubData as upstream captured it from a real hub (Hub2DataDiagnosticsSpec): the
// firmware is "version"; there is no "firmwareVersion".
func TestHubDataCapturedShape(t *testing.T) {
	t.Parallel()
	captured := `{"hubId":"811e21ba","version":"2.5.0.143","model":"C-8","name":"CrameHub","safeMode":false,
		"alerts":{"platformUpdateAvailable":true,"platformUpdateVersion":"2.5.0.153","hubLowMemory":true,"databaseSize":15,
		"headerMessages":["Platform update 2.5.0.153 available"]}}`
	info, err := ParseHubInfo([]byte(captured))
	if err != nil || info.Firmware != "2.5.0.143" || info.Model != "C-8" || info.Name != "CrameHub" {
		t.Fatalf("%+v %v", info, err)
	}
	h := startHub(t, simhub.Options{})
	r, err := newClient(t, h, nil).Admin(t.Context(), http.MethodGet, "/hub2/hubData", nil)
	if err != nil {
		t.Fatal(err)
	}
	var sim map[string]any
	if err := json.Unmarshal(r.JSON, &sim); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"hubId", "version", "model", "name", "safeMode", "alerts"} {
		if _, ok := sim[k]; !ok {
			t.Errorf("the simulator's /hub2/hubData lacks %q", k)
		}
	}
	if _, ok := sim["firmwareVersion"]; ok {
		t.Error("the simulator's /hub2/hubData sends firmwareVersion, which the real hub does not")
	}
	if alerts, _ := sim["alerts"].(map[string]any); alerts == nil || alerts["platformUpdateAvailable"] != false {
		t.Errorf("alerts %v", sim["alerts"])
	}
}

// Upstream's getHubSecurityCookie: POST /login with username and password as a form; the
// first Set-Cookie pair is the session.
func TestLoginFormShape(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var loginForm string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/login":
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			loginForm = r.Header.Get("Content-Type") + " " + string(b)
			mu.Unlock()
			http.SetCookie(w, &http.Cookie{Name: "HUBSESSION", Value: "s1"})
			http.Redirect(w, r, "/", http.StatusFound)
		case r.Header.Get("Cookie") == "HUBSESSION=s1":
			io.WriteString(w, "482716")
		default:
			http.Redirect(w, r, "/login", http.StatusFound)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := New(Options{URL: srv.URL, AppID: "7", Token: "0b2c4e6a-1111-2222-3333-444455556666", Username: "admin", Password: "p&w"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if kb, err := c.FreeMemoryKB(t.Context()); err != nil || kb != 482716 {
		t.Fatalf("%v %v", kb, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.HasPrefix(loginForm, "application/x-www-form-urlencoded ") || !strings.Contains(loginForm, "username=admin") || !strings.Contains(loginForm, "password=p%26w") {
		t.Fatalf("login form %q", loginForm)
	}
}

package sim_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/sim"
	"github.com/hamcp/hamcp/dev/sim/recorder"
)

func get(t *testing.T, url, token string) (int, string, error) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

func post(t *testing.T, url, token, body string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestStartWithDirAndTokens(t *testing.T) {
	dir := t.TempDir()
	h, err := sim.Start(context.Background(), sim.Options{Dir: dir, Token: "admin-token", SupervisorToken: "sup-token", HistoryDays: 1, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if h.Token() != "admin-token" || h.SupervisorToken() != "sup-token" || h.UserToken() == "" || h.UserToken() == h.Token() {
		t.Errorf("tokens: %q %q %q", h.Token(), h.SupervisorToken(), h.UserToken())
	}
	l := h.Sandbox()
	for _, d := range []string{l.Config, l.SSL, l.Backup, l.Share, l.Media, l.Addons, l.AddonConfigs} {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			t.Errorf("sandbox folder %s missing", d)
		}
	}
	if h.RecorderPath() != l.RecorderPath() {
		t.Errorf("recorder path %s", h.RecorderPath())
	}
	if code, _, err := get(t, h.URL()+"/api/", "admin-token"); err != nil || code != 200 {
		t.Fatalf("HA: %d %v", code, err)
	}
	if code, body, _ := get(t, h.SupervisorURL()+"/supervisor/ping", "sup-token"); code != 200 || body != `{"result":"ok","data":{}}` {
		t.Errorf("supervisor ping: %d %s", code, body)
	}
	// a live change reaches the recorder file
	if code := post(t, h.URL()+"/api/services/lock/unlock", "admin-token", `{"entity_id":"lock.front_door"}`); code != 200 {
		t.Fatalf("unlock: %d", code)
	}
	db, err := recorder.Open(h.RecorderPath())
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.History(context.Background(), recorder.HistoryOptions{EntityIDs: []string{"lock.front_door"}, Start: time.Now().Add(-time.Minute)})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	if r := rows["lock.front_door"]; len(r) == 0 || r[len(r)-1].State != "unlocked" {
		t.Errorf("recorder does not hold the change: %+v", r)
	}
	// edits survive a restart on the same Dir
	if code := post(t, h.URL()+"/api/config/script/config/kept", "admin-token", `{"alias":"Kept","sequence":[]}`); code != 200 {
		t.Fatalf("script create: %d", code)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	h2, err := sim.Start(context.Background(), sim.Options{Dir: dir, Token: "admin-token", Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	if code, _, _ := get(t, h2.URL()+"/api/states/script.kept", "admin-token"); code != 200 {
		t.Errorf("script from the first run is gone: %d", code)
	}
}

func TestSetDownAndBack(t *testing.T) {
	h, err := sim.Start(context.Background(), sim.Options{HistoryDays: -1})
	if err != nil {
		t.Fatal(err)
	}
	dir := h.Sandbox().Root
	defer func() {
		h.Close()
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("temp dir %s not removed", dir)
		}
	}()
	url := h.URL()
	if err := h.SetDown(true); err != nil {
		t.Fatal(err)
	}
	if _, _, err := get(t, url+"/api/", h.Token()); err == nil {
		t.Fatal("HA still answers while down")
	}
	if code, _, _ := get(t, h.SupervisorURL()+"/core/api/", h.SupervisorToken()); code != 502 {
		t.Errorf("supervisor proxy while HA is down: %d, want 502", code)
	}
	if err := h.SetDown(false); err != nil {
		t.Fatal(err)
	}
	if h.URL() != url {
		t.Errorf("URL changed across SetDown: %s -> %s", url, h.URL())
	}
	if code, _, err := get(t, url+"/api/", h.Token()); err != nil || code != 200 {
		t.Errorf("HA back: %d %v", code, err)
	}
	h.Stop()
	if _, _, err := get(t, url+"/api/", h.Token()); err == nil {
		t.Error("Stop left HA reachable")
	}
}

func TestStartRejectsForeignDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/unrelated.txt", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := sim.Start(context.Background(), sim.Options{Dir: dir, HistoryDays: -1}); err == nil {
		t.Fatal("started in a directory that is not a sandbox")
	}
}

// TestSupervisedLogs: on HA OS / Supervised core logs to the journal only: no
// home-assistant.log, /api/error_log is 404, and the log is the Supervisor's /core/logs, also
// reachable through core's hassio view (admins only) but never through the add-on proxy.
func TestSupervisedLogs(t *testing.T) {
	t.Parallel()
	for _, supervised := range []bool{false, true} {
		h, err := sim.Start(context.Background(), sim.Options{HistoryDays: -1, Seed: 5, Supervised: supervised})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		_, statErr := os.Stat(filepath.Join(h.Sandbox().Config, "home-assistant.log"))
		errorLog, _, _ := get(t, h.URL()+"/api/error_log", h.Token())
		if supervised != os.IsNotExist(statErr) || supervised != (errorLog == 404) {
			t.Errorf("supervised=%v: log file %v, /api/error_log %d", supervised, statErr, errorLog)
		}
		h.Model().Log("warning", "homeassistant.components.test", "journal line %v", supervised)
		for _, c := range []struct {
			name, url, token string
			code             int
		}{
			{"Supervisor", h.SupervisorURL() + "/core/logs?lines=5&no_colors", h.SupervisorToken(), 200},
			{"core's hassio view", h.URL() + "/api/hassio/core/logs?lines=5&no_colors", h.Token(), 200},
			{"core's hassio view, not an admin", h.URL() + "/api/hassio/core/logs", h.UserToken(), 401},
			{"core's hassio view, not a log", h.URL() + "/api/hassio/backups", h.Token(), 404},
			{"the add-on proxy to core's hassio view", h.SupervisorURL() + "/core/api/hassio/core/logs", h.SupervisorToken(), 403},
		} {
			code, body, err := get(t, c.url, c.token)
			if err != nil || code != c.code {
				t.Errorf("supervised=%v %s: %d %v, want %d", supervised, c.name, code, err, c.code)
				continue
			}
			if code == 200 && (strings.Count(body, "\n") != 5 || !strings.Contains(body, "journal line")) {
				t.Errorf("supervised=%v %s: %q", supervised, c.name, body)
			}
		}
	}
}

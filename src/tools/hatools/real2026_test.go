package hatools_test

import (
	"database/sql"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the recorder database the simulated HA reads statistics from
)

// TestStatisticsMeanType: HA's list_statistic_ids has mean_type (0 none, 1 arithmetic,
// 2 circular) and a deprecated has_mean that is true only for an arithmetic mean, so a wind
// direction's circular mean must be read from mean_type.
func TestStatisticsMeanType(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{})
	db, err := sql.Open("sqlite", "file:"+e.home.RecorderPath()+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// What HA's sensor platform records for a measurement_angle and a measurement sensor.
	for _, r := range []struct {
		id       string
		hasMean  bool
		meanType int
	}{{"sensor.garden_wind_direction", false, 2}, {"sensor.garden_wind_speed", true, 1}} {
		if _, err := db.Exec(`INSERT INTO statistics_meta (statistic_id, source, unit_of_measurement, unit_class, has_mean, has_sum, name, mean_type)
			VALUES (?, 'recorder', '°', NULL, ?, 0, NULL, ?)`, r.id, r.hasMean, r.meanType); err != nil {
			t.Fatal(err)
		}
	}
	items := admItems(t, e.ok(t, "ha_get_statistics", map[string]any{"search": "garden_wind"})["available"].(map[string]any), "items")
	got := map[string]map[string]any{}
	for _, it := range items {
		got[it["statistic_id"].(string)] = it
	}
	for id, want := range map[string]string{"sensor.garden_wind_direction": "circular", "sensor.garden_wind_speed": "arithmetic"} {
		if it := got[id]; it == nil || it["has_mean"] != true || it["mean_type"] != want {
			t.Errorf("%s listed as %v, want has_mean and mean_type %s", id, it, want)
		}
	}
}

// TestLogsOnSupervisedInstall: HA OS and Supervised installs have no home-assistant.log and
// answer /api/error_log with 404; the log is the Supervisor's journal, read directly inside
// the add-on and through core's hassio view when hamcp runs elsewhere.
func TestLogsOnSupervisedInstall(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		o    admOpts
	}{
		{"add-on", admOpts{supervised: true}},
		{"standalone against HA OS", admOpts{supervised: true, noSupervisor: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := admStart(t, c.o)
			r := e.ok(t, "ha_get_logs", map[string]any{"search": "met.no", "lines": 1, "traceback": true})
			entries := admItems(t, r, "entries")
			if r["source"] != "supervisor" || len(entries) != 1 || !strings.Contains(entries[0]["detail"].(string), "UpdateFailed") {
				t.Fatalf("logs: %v", r)
			}
		})
	}
	t.Run("non-admin standalone", func(t *testing.T) {
		t.Parallel()
		e := admStart(t, admOpts{supervised: true, noSupervisor: true, userToken: true})
		e.fails(t, "ha_get_logs", nil, "backend_unauthorized", "")
	})
}

// TestAddonInstallOutlastsCoreTimeout: outside the add-on, add-on actions go through core's
// supervisor/api, which answers unknown_error after 10 s unless the call says "timeout": null;
// an install (a docker pull) takes longer. Core's default is shortened here and the
// Supervisor's install held past it.
func TestAddonInstallOutlastsCoreTimeout(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{noSupervisor: true, supervisorAPITimeout: 100 * time.Millisecond})
	started, release := e.home.HoldSupervisorActions()
	defer release()
	go func() {
		select {
		case <-started:
			time.Sleep(300 * time.Millisecond) // past core's (shortened) default timeout
		case <-time.After(10 * time.Second):
		}
		release()
	}()
	r := e.ok(t, "ha_manage_addons", map[string]any{"action": "install", "slug": "core_samba"})
	if addon, _ := r["addon"].(map[string]any); addon["version"] == nil {
		t.Fatalf("install: %v", r)
	}
}

// TestAddonSupervisorThroughREST: inside the add-on Home Assistant is reached through the
// Supervisor's proxy, which refuses supervisor/* WebSocket commands from add-ons, so the
// Supervisor tools must use the Supervisor's REST API there.
func TestAddonSupervisorThroughREST(t *testing.T) {
	t.Parallel()
	e := admStart(t, admOpts{viaProxy: true})
	if items := admItems(t, e.ok(t, "ha_manage_addons", map[string]any{"action": "list"})["list"].(map[string]any), "items"); len(items) < 3 {
		t.Fatalf("add-ons: %v", items)
	}
	e.ok(t, "ha_manage_addons", map[string]any{"action": "install", "slug": "core_samba"})
	if r := e.ok(t, "ha_get_supervisor_info", map[string]any{"component": "core"}); r["core"] == nil {
		t.Fatalf("core info: %v", r)
	}
	// Without its Supervisor client (as outside the add-on) the same proxy refuses the calls.
	proxyOnly := admStart(t, admOpts{viaProxy: true, noSupervisor: true})
	if r := proxyOnly.call(t, "ha_manage_addons", map[string]any{"action": "list"}); r.err == nil {
		t.Fatalf("supervisor/api through the add-on proxy was not refused: %s", r.raw)
	}
}

package hatools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/tools/hatools"
)

const manageIntegrations = "ha_manage_integrations"

// hasAll fails unless every "|"-separated text of want is in got.
func hasAll(t *testing.T, got, want string) {
	t.Helper()
	for _, w := range strings.Split(want, "|") {
		if !strings.Contains(got, w) {
			t.Fatalf("%s lacks %s", got, w)
		}
	}
}

func TestManageIntegrationsDefinition(t *testing.T) {
	for _, tool := range hatools.Tools(hatools.Deps{}) {
		if tool.Name() != manageIntegrations {
			continue
		}
		b, _ := json.Marshal(tool.Definition())
		if len(b) > 1400 {
			t.Fatalf("definition is %d bytes, over 1,400: %s", len(b), b)
		}
		return
	}
	t.Fatal("ha_manage_integrations is not listed")
}

func TestManageIntegrationsList(t *testing.T) {
	e := admStart(t, admOpts{})
	all := e.ok(t, manageIntegrations, map[string]any{"action": "list"})["list"].(map[string]any)
	if all["total"].(float64) < 8 {
		t.Fatalf("integrations: %v", all)
	}
	cases := []struct {
		name string
		args map[string]any
		code string
		want string // "|" separates texts that must all appear
	}{
		{"failing", map[string]any{"state": "failing"}, "", `"domain":"tuya"|"reason":"Unable to connect|"state":"setup_retry"`},
		{"by state", map[string]any{"state": "setup_retry", "limit": 5}, "", `"total":1`},
		{"by domain", map[string]any{"domain": "hacs"}, "", `"state":"loaded"|"title":"HACS"|"supports_options":true`},
		{"no match", map[string]any{"domain": "nonexistent"}, "", `"total":0`},
		{"none disabled", map[string]any{"state": "disabled"}, "", `"total":0`},
		{"bad state", map[string]any{"state": "broken"}, "invalid_argument", "state"},
		{"bad domain", map[string]any{"domain": "Hue Bridge"}, "invalid_argument", "domain"},
		{"bad action", map[string]any{"action": "purge"}, "invalid_argument", "action"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := map[string]any{"action": "list"}
			for k, v := range c.args {
				args[k] = v
			}
			if c.code != "" {
				e.fails(t, manageIntegrations, args, c.code, c.want)
				return
			}
			hasAll(t, admJSON(e.ok(t, manageIntegrations, args)), c.want)
		})
	}
	t.Run("down", func(t *testing.T) {
		e.down(t)
		e.fails(t, manageIntegrations, map[string]any{"action": "list"}, "backend_unavailable", "not reachable")
	})
}

// entryOf finds a domain's entry id in the list.
func entryOf(t *testing.T, e *admEnv, domain string) string {
	t.Helper()
	items := admItems(t, e.ok(t, manageIntegrations, map[string]any{"action": "list", "domain": domain})["list"].(map[string]any), "items")
	if len(items) != 1 {
		t.Fatalf("%s has %d entries", domain, len(items))
	}
	return items[0]["entry_id"].(string)
}

func TestManageIntegrationsLifecycle(t *testing.T) {
	e := admStart(t, admOpts{})
	ctx := context.Background()
	shelly := entryOf(t, e, "shelly")
	cases := []struct {
		name string
		args map[string]any
		code string
		want string
	}{
		{"reload by domain", map[string]any{"action": "reload", "domain": "hue"}, "", `"done":"reloaded hue (hue)"`},
		{"reload needs an entry", map[string]any{"action": "reload"}, "invalid_argument", "entry_id"},
		{"reload unknown entry", map[string]any{"action": "reload", "entry_id": "01NOTANENTRY"}, "not_found", "no config entry"},
		{"bad entry id", map[string]any{"action": "reload", "entry_id": "../../states"}, "invalid_argument", "entry_id"},
		{"a domain with two entries", map[string]any{"action": "reload", "domain": "mobile_app"}, "invalid_argument", "2 entries"},
		{"disable", map[string]any{"action": "disable", "entry_id": shelly}, "", `"done":"disabled shelly|"disabled_by":"user"|"state":"not_loaded"`},
		{"listed as disabled", map[string]any{"action": "list", "state": "disabled"}, "", `"total":1|"domain":"shelly"`},
		{"enable", map[string]any{"action": "enable", "domain": "shelly"}, "", `"done":"enabled shelly|"state":"loaded"`},
		{"no options", map[string]any{"action": "options_start", "domain": "shelly"}, "not_supported", "no options"},
		{"delete", map[string]any{"action": "delete", "domain": "sonos", "confirm": true}, "", `"done":"deleted sonos (sonos) with its devices and entities"|flow_start`},
		{"deleted", map[string]any{"action": "reload", "domain": "sonos"}, "not_found", "flow_start"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.code != "" {
				e.fails(t, manageIntegrations, c.args, c.code, c.want)
				return
			}
			hasAll(t, admJSON(e.ok(t, manageIntegrations, c.args)), c.want)
			switch c.name {
			case "disable":
				if _, err := e.ha.State(ctx, "switch.coffee_machine"); !homeassistant.IsStatus(err, 404) {
					t.Fatalf("a disabled integration's entity still has a state: %v", err)
				}
			case "enable":
				if s, err := e.ha.State(ctx, "switch.coffee_machine"); err != nil || s.State == "" {
					t.Fatalf("the entity did not come back: %v %v", s, err)
				}
			case "delete":
				if _, err := e.ha.State(ctx, "media_player.kitchen_speaker"); !homeassistant.IsStatus(err, 404) {
					t.Fatalf("a deleted integration's entity is still there: %v", err)
				}
			}
		})
	}
}

func TestIntegrationFlows(t *testing.T) {
	e := admStart(t, admOpts{})
	start := e.ok(t, manageIntegrations, map[string]any{"action": "flow_start", "domain": "hue"})
	hasAll(t, admJSON(start), `"type":"form"|"step":"manual"|{"name":"host","required":true,"type":"string"}`)
	flowID := start["flow"].(map[string]any)["flow_id"].(string)
	step := func(input map[string]any) map[string]any {
		t.Helper()
		args := map[string]any{"action": "flow_step", "flow_id": flowID}
		if input != nil {
			args["user_input"] = input
		}
		return e.ok(t, manageIntegrations, args)
	}
	hasAll(t, admJSON(step(map[string]any{"host": "10.0.0.99"})), `"errors":{"base":"cannot_connect"}|"step":"manual"`)
	e.fails(t, manageIntegrations, map[string]any{"action": "flow_step", "flow_id": flowID}, "invalid_argument", "host: required key not provided")
	e.fails(t, manageIntegrations, map[string]any{"action": "flow_step", "flow_id": flowID, "user_input": map[string]any{"host": "192.168.1.21", "port": 80}},
		"invalid_argument", "extra keys not allowed @ data['port']")
	e.fails(t, manageIntegrations, map[string]any{"action": "flow_step", "flow_id": flowID, "user_input": map[string]any{"host": 21}}, "invalid_argument", "host: expected str")
	hasAll(t, admJSON(step(map[string]any{"host": "192.168.1.21"})), `"step":"link"|no user_input`)
	done := admJSON(step(nil))
	hasAll(t, done, `"type":"create_entry"|"title":"Hue Bridge ECB5FAFFFE0A1B2C"|"domain":"hue"|"state":"loaded"|the integration is set up`)
	hasAll(t, admJSON(e.ok(t, manageIntegrations, map[string]any{"action": "list", "domain": "hue"})), `"total":2|"title":"Hue Bridge ECB5FAFFFE0A1B2C"`)
	e.fails(t, manageIntegrations, map[string]any{"action": "flow_step", "flow_id": flowID}, "not_found", "no flow")

	again := e.ok(t, manageIntegrations, map[string]any{"action": "flow_start", "domain": "hue"})
	again2 := e.ok(t, manageIntegrations, map[string]any{"action": "flow_step", "flow_id": again["flow"].(map[string]any)["flow_id"], "user_input": map[string]any{"host": "192.168.1.21"}})
	hasAll(t, admJSON(again2), `"type":"abort"|"reason":"already_configured"`)

	t.Run("password never comes back", func(t *testing.T) {
		r := e.ok(t, manageIntegrations, map[string]any{"action": "flow_start", "domain": "shelly"})
		hasAll(t, admJSON(r), `{"default":80,"name":"port","required":true,"type":"integer"}`)
		id := r["flow"].(map[string]any)["flow_id"]
		r = e.ok(t, manageIntegrations, map[string]any{"action": "flow_step", "flow_id": id, "user_input": map[string]any{"host": "192.168.1.70", "port": "80"}})
		hasAll(t, admJSON(r), `"step":"credentials"|"name":"password"|"secret":true`)
		wrong := e.ok(t, manageIntegrations, map[string]any{"action": "flow_step", "flow_id": id, "user_input": map[string]any{"password": "hunter2-wrong"}})
		right := e.ok(t, manageIntegrations, map[string]any{"action": "flow_step", "flow_id": id, "user_input": map[string]any{"password": "study-shelly"}})
		hasAll(t, admJSON(wrong), `"errors":{"base":"invalid_auth"}`)
		hasAll(t, admJSON(right), `"title":"Study Shutter"|"type":"create_entry"`)
		if s := admJSON(wrong) + admJSON(right); strings.Contains(s, "hunter2") || strings.Contains(s, "study-shelly") {
			t.Fatalf("a password came back: %s", s)
		}
	})
	t.Run("options", func(t *testing.T) {
		r := e.ok(t, manageIntegrations, map[string]any{"action": "options_start", "domain": "reolink"})
		hasAll(t, admJSON(r), `"step":"init"|"options":["rtsp","rtmp","flv"]|"default":"rtsp"`)
		id := r["flow"].(map[string]any)["flow_id"]
		e.fails(t, manageIntegrations, map[string]any{"action": "flow_step", "flow_id": id, "user_input": map[string]any{"protocol": "hls"}},
			"invalid_argument", "protocol: value must be one of ['flv', 'rtmp', 'rtsp']")
		hasAll(t, admJSON(e.ok(t, manageIntegrations, map[string]any{"action": "flow_step", "flow_id": id, "user_input": map[string]any{"protocol": "flv"}})),
			`"type":"create_entry"|done: saved`)
		r = e.ok(t, manageIntegrations, map[string]any{"action": "options_start", "domain": "reolink"})
		hasAll(t, admJSON(r), `"default":"flv"`)
		id = r["flow"].(map[string]any)["flow_id"]
		hasAll(t, admJSON(e.ok(t, manageIntegrations, map[string]any{"action": "flow_abort", "flow_id": id})), `"done":"aborted flow`)
		e.fails(t, manageIntegrations, map[string]any{"action": "flow_abort", "flow_id": id}, "not_found", "no flow")
	})
	t.Run("ends and refusals", func(t *testing.T) {
		hasAll(t, admJSON(e.ok(t, manageIntegrations, map[string]any{"action": "flow_start", "domain": "sun"})), `"reason":"single_instance_allowed"`)
		e.fails(t, manageIntegrations, map[string]any{"action": "flow_start", "domain": "wibble"}, "not_found", "no config flow for wibble")
		e.fails(t, manageIntegrations, map[string]any{"action": "flow_start"}, "invalid_argument", "domain")
		e.fails(t, manageIntegrations, map[string]any{"action": "flow_step"}, "invalid_argument", "flow_id")
		e.fails(t, manageIntegrations, map[string]any{"action": "flow_step", "flow_id": "a/b"}, "invalid_argument", "flow_id")
	})
}

// TestManageIntegrationsConfirm: with confirm_trusted at its default, deleting always needs the
// user, and so does disabling an integration that provides a lock; disabling lights does not.
func TestManageIntegrationsConfirm(t *testing.T) {
	e := admStart(t, admOpts{defaultTrust: true})
	for _, c := range []struct {
		args   map[string]any
		asked  bool
		reason string
	}{
		{map[string]any{"action": "disable", "domain": "nuki", "confirm": true}, true, "lock.front_door"},
		{map[string]any{"action": "disable", "domain": "risco", "confirm": true}, true, "alarm_control_panel.home_alarm"},
		{map[string]any{"action": "disable", "domain": "meross", "confirm": true}, true, "cover.garage_door"},
		{map[string]any{"action": "delete", "domain": "wled", "confirm": true}, true, "Delete the integration wled"},
		{map[string]any{"action": "disable", "domain": "hue"}, false, ""},
		{map[string]any{"action": "reload", "domain": "nuki"}, false, ""},
	} {
		r := e.call(t, manageIntegrations, c.args)
		if !c.asked {
			if r.err != nil {
				t.Fatalf("%v: %s", c.args, r.raw)
			}
			continue
		}
		if r.err == nil || r.err.Code != "confirmation_required" || !strings.Contains(r.raw, c.reason) {
			t.Fatalf("%v was not stopped for the user (%s): %s", c.args, c.reason, r.raw)
		}
	}
	if s := e.truth(t, "lock.front_door"); s.State != "locked" {
		t.Fatalf("the lock changed: %v", s)
	}
}

package privileged

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestService(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		priv bool
	}{
		{"hassio.addon_start", true}, {"hassio.host_reboot", true}, {"HASSIO.ADDON_STDIN", true},
		{"shell_command.anything", true}, {"python_script.x", true}, {"pyscript.jupyter_kernel_start", true},
		{"hacs.download", true}, {"update.install", true}, {"rest_command.call", true},
		{" recorder.disable ", true}, {"cloud.remote_connect", true},
		// Confirmed by the user (package sensitive) rather than behind a root-equivalent grant.
		{"homeassistant.restart", false}, {"homeassistant.stop", false}, {"recorder.purge", false}, {"recorder.purge_entities", false},
		{"{{ 'shell_command' }}.x", true}, {"{% if 1 %}light{% endif %}.turn_on", true},
		{"light.turn_on", false}, {"homeassistant.reload_all", false}, {"homeassistant.turn_off", false},
		{"recorder.enable", false}, {"update.skip", false}, {"script.turn_on", false}, {"lock.unlock", false},
		{"shell_command", false}, {"", false},
	} {
		if _, got := Name(c.name); got != c.priv {
			t.Errorf("Name(%q) privileged = %v, want %v", c.name, got, c.priv)
		}
	}
}

func TestInConfig(t *testing.T) {
	t.Parallel()
	var cfg any
	if err := json.Unmarshal([]byte(`{"alias":"x","triggers":[{"trigger":"event","event_type":"shell_command.fake"}],
		"actions":[{"action":"light.turn_on"},
		  {"choose":[{"conditions":[],"sequence":[{"service":"shell_command.wipe"}]}],
		   "default":[{"if":[],"then":[{"parallel":[{"action":"hassio.addon_stdin","data":{"addon":"a","input":"x"}}]}]}]},
		  {"repeat":{"count":2,"sequence":[{"action":"{{ svc }}"}]}},
		  {"service_template":"python_script.run"},
		  {"action":"notify.mobile_app","data":{"actions":[{"action":"URI","title":"open"}]}}]}`), &cfg); err != nil {
		t.Fatal(err)
	}
	got := InConfig(cfg)
	slices.Sort(got)
	if want := []string{"hassio.addon_stdin", "python_script.run", "shell_command.wipe", "{{ svc }}"}; !slices.Equal(got, want) {
		t.Errorf("InConfig = %q, want %q", got, want)
	}
	if got := InConfig(map[string]any{"actions": []any{map[string]any{"action": "light.turn_on"}}}); len(got) != 0 {
		t.Errorf("a harmless automation flagged: %v", got)
	}
}

// FuzzInConfig: any JSON document is walked without panicking, and every service it reports is one
// Name calls privileged.
func FuzzInConfig(f *testing.F) {
	f.Add(`{"actions":[{"action":"shell_command.x"},{"service":"light.on"}]}`)
	f.Add(`[{"sequence":[{"action":"{{ x }}"}]}]`)
	f.Fuzz(func(t *testing.T, doc string) {
		var v any
		if json.Unmarshal([]byte(doc), &v) != nil {
			return
		}
		for _, s := range InConfig(v) {
			if _, ok := Name(s); !ok {
				t.Fatalf("%q reported but not privileged", s)
			}
		}
	})
}

package app

import (
	"slices"
	"testing"

	"github.com/hamcp/hamcp/src/mcpserver"
	"github.com/hamcp/hamcp/src/toolkit"
)

// TestSearchFindsHubitatDeviceTools: hamcp_search_tools ranks the Hubitat device admin tools
// first for the plain requests a user makes of them (the cases proposed for searcheval.json).
func TestSearchFindsHubitatDeviceTools(t *testing.T) {
	t.Parallel()
	s := connect(t, mcpserver.Options{Registry: declared(), ToolMode: toolkit.ModeSearch}, false, nil)
	for _, c := range []struct{ query, want string }{
		{"which devices have a low battery", "hubitat_get_device_health"},
		{"which hubitat devices have not reported for a day", "hubitat_get_device_health"},
		{"move the lamp to the bedroom", "hubitat_manage_rooms"},
		{"create a room called Workshop on the hub", "hubitat_manage_rooms"},
		{"rename the hubitat device to Reading Lamp", "hubitat_update_device"},
		{"disable the hubitat motion sensor", "hubitat_update_device"},
		{"turn off all the hubitat lights at once", "hubitat_send_commands"},
		{"create a virtual switch on the hub", "hubitat_manage_virtual_devices"},
		{"which hubitat apps and rules use the front door lock", "hubitat_list_device_dependents"},
	} {
		// Found: among the first three, as the evaluation set counts it (the house may also mean
		// Home Assistant, and "disable" names hubitat_disable_rule).
		got := evalSearch(t, s, c.query)
		i := slices.Index(got, c.want)
		t.Logf("%q: %s at rank %d", c.query, c.want, i+1)
		if i < 0 || i >= 3 {
			t.Errorf("%q: %s at rank %d; got %v", c.query, c.want, i+1, got[:min(3, len(got))])
		}
	}
}

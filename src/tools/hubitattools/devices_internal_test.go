package hubitattools

import (
	"strconv"
	"strings"
	"testing"

	"github.com/hamcp/hamcp/src/hubitat"
)

// The classes a command falls in come from the capability it acts through, never from the
// device's name, and follow the one policy table: unlocking is lock, opening a garage or a
// gate is garage, opening a valve and sounding a siren are change, the rest is nothing.
func TestCommandAsk(t *testing.T) {
	t.Parallel()
	dev := func(label string, caps ...string) hubitat.Device {
		return hubitat.Device{ID: "40", Label: label, Capabilities: caps}
	}
	tests := []struct {
		name    string
		dev     hubitat.Device
		command string
		want    string
	}{
		{"unlock", dev("Front Door", "Lock"), "unlock", "lock"},
		{"set a code", dev("Front Door", "Lock", "LockCodes"), "setCode", "lock"},
		{"delete a code", dev("Front Door", "Lock", "LockCodes"), "deleteCode", "lock"},
		{"lock", dev("Front Door", "Lock"), "lock", ""},
		{"garage door", dev("Garage", "GarageDoorControl"), "open", "garage"},
		{"garage door close", dev("Garage", "GarageDoorControl"), "close", ""},
		{"gate opener", dev("Gate", "DoorControl"), "open", "garage"},
		{"valve", dev("Garden", "Valve"), "open", "change"},
		{"siren", dev("Siren", "Alarm"), "both", "change"},
		{"siren off", dev("Siren", "Alarm"), "off", ""},
		{"a shade named Garage Door", dev("Garage Door", "WindowShade"), "open", ""},
		{"a switch named Lock", dev("Lock", "Switch"), "unlock", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ask := commandAsk(tc.dev, tc.command)
			if got := strings.Join(ask.Classes, ","); got != tc.want {
				t.Errorf("classes %q, want %q", got, tc.want)
			}
			if tc.want != "" && !strings.Contains(ask.Question, tc.dev.Label) {
				t.Errorf("question %q does not name the device", ask.Question)
			}
		})
	}
}

func TestUpstreamParam(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]any{"50": int64(50), "045": int64(45), "-3": int64(-3), "66.5": 66.5, "1e3": 1000.0,
		"medium": "medium", "0x1F": "0x1F", "Inf": "Inf", "NaN": "NaN", "": "", " 7 ": int64(7), "1_000": "1_000"} {
		if got := upstreamParam(in); got != want {
			t.Errorf("%q → %#v, want %#v", in, got, want)
		}
	}
}

// Whatever the model sends, a converted parameter is sent as text that reads back as the same
// value, and never gains a comma or a slash that would change the Maker API path.
func FuzzUpstreamParam(f *testing.F) {
	for _, s := range []string{"50", "66.5", "1e308", "-0", "medium", "0x10", "1e400", " 3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := upstreamParam(s)
		wire := paramString(v)
		switch v := v.(type) {
		case int64:
			if back, err := strconv.ParseInt(wire, 10, 64); err != nil || back != v {
				t.Fatalf("%q → %d → %q", s, v, wire)
			}
		case float64:
			if back, err := strconv.ParseFloat(wire, 64); err != nil || back != v {
				t.Fatalf("%q → %v → %q", s, v, wire)
			}
		case string:
			if wire != s {
				t.Fatalf("text %q sent as %q", s, wire)
			}
		}
		if !strings.Contains(s, ",") && strings.Contains(wire, ",") || !strings.Contains(s, "/") && strings.Contains(wire, "/") {
			t.Fatalf("%q became %q", s, wire)
		}
	})
}

package app

import (
	"net/http/httptest"
	"testing"
)

// TestBrowserHost: the Connect page names the machine as the browser did, and never writes a
// header that is not a host name into a URL.
func TestBrowserHost(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ host, forwarded, want string }{
		{"homeassistant.local:8123", "", "homeassistant.local"},
		{"ignored:1", "192.168.1.10:8123", "192.168.1.10"},
		{"x", "ha.lan, proxy.example", "ha.lan"},
		{"[fe80::1]:8123", "", "[fe80::1]"},
		{"evil.example/path", "", "homeassistant.local"},
		{`a"b`, "", "homeassistant.local"},
		{"", "", "homeassistant.local"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host = tt.host
		if tt.forwarded != "" {
			r.Header.Set("X-Forwarded-Host", tt.forwarded)
		}
		if got := browserHost(r); got != tt.want {
			t.Errorf("Host %q, X-Forwarded-Host %q: %q, want %q", tt.host, tt.forwarded, got, tt.want)
		}
	}
}

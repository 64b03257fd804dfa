package panel

import (
	"encoding/json"
	"testing"
)

// TestDesktopJSONIsValid: the snippet users paste into claude_desktop_config.json parses, and says
// what Claude Desktop needs.
func TestDesktopJSONIsValid(t *testing.T) {
	t.Parallel()
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	s := desktopJSON(&SSHConnect{Host: `home"assistant.local`, Port: 2222, User: "hamcp"})
	if err := json.Unmarshal([]byte(s), &cfg); err != nil {
		t.Fatalf("%v:\n%s", err, s)
	}
	home := cfg.MCPServers["home"]
	if home.Command != "ssh" || len(home.Args) != 7 || home.Args[1] != "2222" || home.Args[6] != `hamcp@home"assistant.local` {
		t.Fatalf("%+v", cfg)
	}
}

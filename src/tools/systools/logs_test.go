package systools

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hamcp/hamcp/src/fsguard"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/sim"
	"github.com/hamcp/hamcp/src/supervisor"
)

// TestReadCoreLog: the log is /config/home-assistant.log on a container install; HA OS and
// Supervised installs keep none, so the Supervisor's journal is read, directly inside the
// add-on and through Home Assistant when hamcp runs elsewhere.
func TestReadCoreLog(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name               string
		supervised, addon  bool
		source, wantSource string
	}{
		{"container install, standalone", false, false, "", "/config/home-assistant.log"},
		{"HA OS, standalone", true, false, "", "supervisor /core/logs (through Home Assistant)"},
		{"HA OS, add-on", true, true, "", "supervisor /core/logs"},
		{"HA OS, add-on, source=file", true, true, "file", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			h, err := sim.Start(ctx, sim.Options{HistoryDays: -1, Seed: 3, Supervised: c.supervised})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { h.Close() })
			d := Deps{}
			if d.HA, err = homeassistant.New(homeassistant.Config{BaseURL: h.URL(), Token: h.Token()}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { d.HA.Close() })
			if c.addon {
				if d.Supervisor, err = supervisor.New(supervisor.Config{BaseURL: h.SupervisorURL(), Token: h.SupervisorToken()}); err != nil {
					t.Fatal(err)
				}
			}
			if d.Files, err = fsguard.New(fsguard.Options{Roots: []fsguard.Root{{Alias: "/config", Path: h.Sandbox().Config}}, TrashDir: t.TempDir()}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { d.Files.Close() })
			text, source, err := readCoreLog(ctx, d, c.source)
			if c.wantSource == "" {
				if err == nil || !strings.Contains(err.Error(), "home-assistant.log") {
					t.Fatalf("source=file without a log file: %q, %v", source, err)
				}
				return
			}
			if err != nil || source != c.wantSource || !strings.Contains(text, "met.no") {
				t.Fatalf("source %q (want %q), %d bytes, err %v", source, c.wantSource, len(text), err)
			}
		})
	}
}

package hubitattools

import (
	"context"
	"testing"

	simhub "github.com/hamcp/hamcp/dev/sim/hubitat"
	"github.com/hamcp/hamcp/src/hubitat"
	"github.com/hamcp/hamcp/src/toolkit"
)

// BenchmarkHubLogs100k reads a hub's 100,000-line past log over a loopback socket (Hub Security
// on) and filters and pages it as hubitat_get_hub_logs does: one call per iteration.
func BenchmarkHubLogs100k(b *testing.B) {
	h := simhub.New(simhub.Options{Username: "owner", Password: "bench-pw"})
	url, err := h.Start(context.Background(), "")
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	h.FillLogs(100_000, false)
	c, err := hubitat.New(hubitat.Options{URL: url, AppID: h.AppID(), Token: h.Token(), Username: "owner", Password: "bench-pw"})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	d := Deps{Hub: c}
	// The hub's side (the simulator building 7 MB of JSON) and the socket out of the way: what
	// hamcp itself spends on a reply already read.
	b.Run("parse_filter_page", func(b *testing.B) {
		r, err := c.Admin(context.Background(), "GET", "/logs/past/json", nil)
		if err != nil {
			b.Fatal(err)
		}
		f, _, _ := d.logFilter(hubLogsArgs{Level: "error", Text: "value changed to 4"})
		b.SetBytes(int64(len(r.Body)))
		for b.Loop() {
			es, err := hubitat.ParseHubLogs(r.Body)
			if err != nil || len(es) != 100_000 {
				b.Fatal(len(es), err)
			}
			if l := pageLogs(f.apply(es), toolkit.Page{}); l.Total == 0 {
				b.Fatal("nothing matched")
			}
		}
	})
	for _, bc := range []struct {
		name string
		args hubLogsArgs
	}{
		{"all", hubLogsArgs{}},
		{"errors_text_since", hubLogsArgs{Level: "error", Text: "value changed to 4", Since: "12h", Page: toolkit.Page{Limit: 100}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				out, err := d.hubLogs(context.Background(), bc.args)
				if err != nil || out.Scanned != 100_000 || out.Total == 0 {
					b.Fatalf("%+v %v", out.List.Total, err)
				}
			}
		})
	}
}

// FuzzHubLogsArgs: whatever the model sends as filters, the tool answers or refuses with an
// argument error; it never panics.
func FuzzHubLogsArgs(f *testing.F) {
	f.Add("error", "Lamp", "jammed", "2h", "1h", int64(8), int64(0))
	f.Add("", "", "", "2026-01-15T10:30:00Z", "2026-01-15 11:00:00", int64(0), int64(60))
	f.Add("info", "\u00c9clairage", "\xff", "999999d", "", int64(-1), int64(1))
	f.Fuzz(func(t *testing.T, level, source, text, since, until string, dev, app int64) {
		a := hubLogsArgs{Level: level, Source: source, Text: text, Since: since, Until: until, DeviceID: dev, AppID: app}
		fl, _, err := Deps{}.logFilter(a)
		if err != nil {
			if toolkit.AsError(err).Code != "invalid_argument" {
				t.Fatalf("not an argument error: %v", err)
			}
			return
		}
		es := []hubitat.LogEntry{{Source: "Lamp", Level: "error", Message: "jammed \u00e9"}, {Source: "\u00c9clairage", Message: text}}
		_ = pageLogs(fl.apply(es), toolkit.Page{})
	})
}

package hubitattools

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestHealthThresholds: upstream's thresholds, at and around each edge.
func TestHealthThresholds(t *testing.T) {
	t.Parallel()
	f := func(v float64) reading { return reading{Value: &v} }
	cases := []struct {
		name               string
		mem, temp, db      reading
		status             string
		memWarn, memNote   bool
		tempWarn, tempNote bool
		dbWarn             bool
	}{
		{"healthy", f(482716), f(43.2), f(38912), "ok", false, false, false, false, false},
		{"memory exactly 100 MB", f(100000), f(40), f(1000), "ok", false, false, false, false, false},
		{"memory moderate", f(99999), f(40), f(1000), "attention", false, true, false, false, false},
		{"memory exactly 50 MB", f(50000), f(40), f(1000), "attention", false, true, false, false, false},
		{"memory low", f(49999), f(40), f(1000), "warning", true, false, false, false, false},
		{"temperature exactly 60", f(200000), f(60), f(1000), "ok", false, false, false, false, false},
		{"temperature warm", f(200000), f(60.1), f(1000), "attention", false, false, false, true, false},
		{"temperature exactly 70", f(200000), f(70), f(1000), "attention", false, false, false, true, false},
		{"temperature high", f(200000), f(70.5), f(1000), "warning", false, false, true, false, false},
		{"database large", f(200000), f(40), f(500001), "warning", false, false, false, false, true},
		{"database at 500 MB", f(200000), f(40), f(500000), "ok", false, false, false, false, false},
		{"nothing readable", reading{Unavailable: "x"}, reading{Unavailable: "x"}, reading{Unavailable: "x"}, "ok", false, false, false, false, false},
	}
	for _, c := range cases {
		h := hubHealth{FreeMemoryKB: c.mem, InternalTempCelsius: c.temp, DatabaseSizeKB: c.db}
		h.judge()
		if h.Status != c.status || (h.MemoryWarning != "") != c.memWarn || (h.MemoryNote != "") != c.memNote ||
			(h.TemperatureWarning != "") != c.tempWarn || (h.TemperatureNote != "") != c.tempNote || (h.DatabaseWarning != "") != c.dbWarn {
			t.Errorf("%s: %+v", c.name, h)
		}
	}
	if got := uptimeText(2*86400 + 3*3600 + 4*60 + 5); got != "2d 3h 4m" {
		t.Errorf("uptime %q", got)
	}
}

// FuzzSourceWindow: any offset and length cut hub source (any bytes) into pages that join back
// into the whole, without splitting a character.
func FuzzSourceWindow(f *testing.F) {
	f.Add("definition(name: \"x\")\n", 0, 5)
	f.Add("héllo wörld ✓", 3, 2)
	f.Add("\xff\xfe broken", 1, 1)
	f.Add("", 10, 0)
	f.Fuzz(func(t *testing.T, src string, offset, length int) {
		if offset < 0 || length < 0 || length > 1<<20 {
			return
		}
		page, total, next := window(src, offset, length)
		if total != utf8.RuneCountInString(src) || !utf8.ValidString(page) && utf8.ValidString(src) {
			t.Fatalf("total %d, page %q", total, page)
		}
		var joined strings.Builder
		for off, n := 0, 0; ; n++ {
			p, _, nx := window(src, off, max(length, 1))
			joined.WriteString(p)
			if nx == nil {
				break
			}
			if *nx <= off || n > total+1 {
				t.Fatalf("no progress at %d", off)
			}
			off = *nx
		}
		if joined.String() != string([]rune(src)) {
			t.Fatalf("pages do not join back")
		}
		_ = next
	})
}

// FuzzBugReportLink: whatever the model writes into a report, the prefilled link stays within its
// bound, parses, and carries a prefix of the report (the whole report when it fits).
func FuzzBugReportLink(f *testing.F) {
	f.Add("Porch light", "# Bug Report\n\nbody")
	f.Add("t&itle=x#frag", strings.Repeat("ü%&=#+ ", 2000))
	f.Add("\x00\xff", "\xff\xfe\x00")
	f.Fuzz(func(t *testing.T, title, body string) {
		link := prefilled(title, body)
		if len(link) > maxPrefillURL {
			t.Fatalf("link of %d bytes", len(link))
		}
		u, err := url.Parse(link)
		if err != nil || u.Host != "github.com" || u.Path != "/hamcp/hamcp/issues/new" {
			t.Fatalf("link %q: %v", link, err)
		}
		got := u.Query().Get("body")
		valid := strings.ToValidUTF8(body, "\uFFFD")
		if got != body && got != valid {
			cut, _, _ := strings.Cut(got, "\n\n_(cut to fit the link")
			if !strings.HasPrefix(valid, cut) && !strings.HasPrefix(body, cut) {
				t.Fatalf("body in the link is not a prefix of the report")
			}
		}
	})
}

package hatools

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func FuzzParseLog(f *testing.F) {
	f.Add("2026-05-01 12:00:00.123 WARNING (MainThread) [homeassistant.core] hello\nTraceback (most recent call last):\n  File \"x\"\nValueError: y\n")
	f.Add("\x1b[32m2026-05-01 12:00:00 INFO (Recorder) [x] colour\x1b[0m\r\n")
	f.Add("orphan line\n2026-13-45 99:99:99.1 ERROR (a) [b] bad time\n")
	f.Add(strings.Repeat("continuation\n", 100))
	f.Fuzz(func(t *testing.T, text string) {
		entries := parseLog(text, time.UTC)
		for _, e := range entries {
			if e.Level != "" && levelRank(e.Level) == 0 {
				t.Fatalf("unknown level %q", e.Level)
			}
			if n := strings.Count(e.Detail, "\n"); n >= maxTracebackLines {
				t.Fatalf("detail of %d lines", n+1)
			}
			short := e.trimmed(false)
			if len(short.Message) > maxLogMessage+len("…") {
				t.Fatalf("message of %d bytes", len(short.Message))
			}
			if utf8.ValidString(e.Message) && !utf8.ValidString(short.Message) {
				t.Fatalf("trimming broke UTF-8: %q", short.Message)
			}
		}
	})
}

func TestParseLog(t *testing.T) {
	ams, _ := time.LoadLocation("Europe/Amsterdam")
	cases := []struct {
		name string
		text string
		loc  *time.Location
		want []logEntry
	}{
		{"record with traceback", "2026-05-01 12:00:00.123 ERROR (MainThread) [homeassistant.components.met] Unexpected error\nTraceback:\n  line 1\n", ams,
			[]logEntry{{Time: "2026-05-01T10:00:00.123Z", Level: "ERROR", Logger: "homeassistant.components.met", Message: "Unexpected error", Detail: "Traceback:\n  line 1"}}},
		{"two records, colours stripped", "\x1b[33m2026-05-01 12:00:00.000 WARNING (MainThread) [a] one\x1b[0m\n2026-05-01 12:00:01.000 INFO (SyncWorker_1) [b] two\n", time.UTC,
			[]logEntry{{Time: "2026-05-01T12:00:00.000Z", Level: "WARNING", Logger: "a", Message: "one"}, {Time: "2026-05-01T12:00:01.000Z", Level: "INFO", Logger: "b", Message: "two"}}},
		{"text before the first record", "tail of a cut line\n2026-05-01 12:00:00 CRITICAL (MainThread) [c] boom\n", time.UTC,
			[]logEntry{{Message: "tail of a cut line"}, {Time: "2026-05-01T12:00:00.000Z", Level: "CRITICAL", Logger: "c", Message: "boom"}}},
		{"empty", "", time.UTC, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := parseLog(c.text, c.loc)
			if len(got) != len(c.want) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("entry %d: got %+v, want %+v", i, got[i], c.want[i])
				}
			}
		})
	}
}

// BenchmarkParseLog reads a log of the size ha_get_logs falls back to from the Supervisor.
func BenchmarkParseLog(b *testing.B) {
	var sb strings.Builder
	for i := 0; i < logFetchLines/5; i++ {
		sb.WriteString("2026-05-01 12:00:00.123 WARNING (MainThread) [homeassistant.components.http.ban] Login attempt with invalid authentication from 192.168.1.20\n")
		sb.WriteString("2026-05-01 12:00:01.456 ERROR (MainThread) [homeassistant.components.met.coordinator] Unexpected error fetching met data\n")
		sb.WriteString("Traceback (most recent call last):\n  File \"x.py\", line 1, in y\nUpdateFailed: Update failed\n")
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		parseLog(text, time.UTC)
	}
}

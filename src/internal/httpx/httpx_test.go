package httpx

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCleanLine(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"plain", 100, "plain"},
		{"two\nlines\ttab", 100, "two lines tab"},
		{"bell\x07 and del\x7f", 100, "bell and del"},
		{"  padded  ", 100, "padded"},
		{"bad \xff utf8", 100, "bad \uFFFD utf8"},
		{strings.Repeat("a", 20), 10, strings.Repeat("a", 10) + "…"},
	}
	for _, tt := range tests {
		if got := CleanLine(tt.in, tt.max); got != tt.want {
			t.Errorf("CleanLine(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}

func FuzzCleanLine(f *testing.F) {
	f.Add("hello\nworld", 8)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 1 || max > 1<<16 {
			return
		}
		out := CleanLine(s, max)
		if !utf8.ValidString(out) || strings.ContainsAny(out, "\n\r\t\x00") {
			t.Fatalf("unsafe output %q", out)
		}
		if len(strings.TrimSuffix(out, "…")) > max+utf8.UTFMax {
			t.Fatalf("output %d bytes over %d", len(out), max)
		}
	})
}

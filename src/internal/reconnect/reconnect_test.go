package reconnect

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n        int
		base     time.Duration
		limit    time.Duration
		min, max time.Duration
	}{
		{0, 100 * time.Millisecond, 30 * time.Second, 50 * time.Millisecond, 100 * time.Millisecond},
		{3, 100 * time.Millisecond, 30 * time.Second, 400 * time.Millisecond, 800 * time.Millisecond},
		{60, 100 * time.Millisecond, 30 * time.Second, 15 * time.Second, 30 * time.Second},
		{5, 0, time.Second, 0, 0},
		{2, time.Nanosecond, time.Second, 2 * time.Nanosecond, 4 * time.Nanosecond},
	} {
		for range 200 {
			if d := Backoff(tc.n, tc.base, tc.limit); d < tc.min || d > tc.max {
				t.Fatalf("Backoff(%d, %v, %v) = %v, want within [%v, %v]", tc.n, tc.base, tc.limit, d, tc.min, tc.max)
			}
		}
	}
}

func TestStateString(t *testing.T) {
	t.Parallel()
	want := map[State]string{Idle: "not_started", Connecting: "connecting", Connected: "connected", Down: "down", Closed: "closed", 99: "unknown"}
	for s, w := range want {
		if s.String() != w {
			t.Errorf("State(%d) = %q, want %q", int(s), s.String(), w)
		}
	}
}

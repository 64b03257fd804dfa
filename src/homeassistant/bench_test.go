package homeassistant

import (
	"context"
	"testing"

	"github.com/hamcp/hamcp/dev/testkit"
)

// BenchmarkStatesMirror reads every state from the mirror: what a tool pays once it is ready.
func BenchmarkStatesMirror(b *testing.B) {
	h := simHome(b)
	c := fastClient(b, h.URL(), h.Token())
	waitConnected(b, c)
	testkit.Eventually(b, "mirror ready", c.Mirror().Ready)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if len(c.Mirror().All()) == 0 {
			b.Fatal("empty mirror")
		}
	}
}

// BenchmarkStateMirrorGet is the single-entity read.
func BenchmarkStateMirrorGet(b *testing.B) {
	h := simHome(b)
	c := fastClient(b, h.URL(), h.Token())
	waitConnected(b, c)
	testkit.Eventually(b, "mirror ready", c.Mirror().Ready)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := c.Mirror().Get("sun.sun"); !ok {
			b.Fatal("sun.sun missing")
		}
	}
}

// BenchmarkStatesREST is the same read as a GET /api/states round trip over loopback.
func BenchmarkStatesREST(b *testing.B) {
	h := simHome(b)
	c := restClient(b, h.URL(), h.Token())
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		states, err := c.States(ctx)
		if err != nil || len(states) == 0 {
			b.Fatal(err)
		}
	}
}

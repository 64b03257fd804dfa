package permission

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
)

// BenchmarkAuthorizeGranted is the cost every privileged tool call pays once its session holds the grant.
func BenchmarkAuthorizeGranted(b *testing.B) {
	f := newFixture(b, Options{})
	ctx := context.Background()
	const sessions = 64
	for i := range sessions {
		r := req(fmt.Sprint("s", i), Filesystem)
		r.Elicit = accept
		if err := f.m.Authorize(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		r := req(fmt.Sprint("s", next.Add(1)%sessions), Filesystem)
		for pb.Next() {
			if err := f.m.Authorize(ctx, r); err != nil {
				b.Fatal(err)
			}
		}
	})
}

package permission

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

func TestConcurrentAuthorize(t *testing.T) {
	ctx := context.Background()
	const callers = 40

	t.Run("one request and one notification for many waiting calls", func(t *testing.T) {
		f := newFixture(t, Options{})
		ids := make([]string, callers)
		var wg sync.WaitGroup
		for i := range callers {
			wg.Go(func() { ids[i] = requestID(t, f.m.Authorize(ctx, req("s1", Filesystem))) })
		}
		wg.Wait()
		for _, id := range ids {
			if id != ids[0] {
				t.Fatalf("concurrent calls got different requests: %s and %s", ids[0], id)
			}
		}
		if f.inbox.count() != 1 {
			t.Fatalf("%d notifications for one session and category, want 1", f.inbox.count())
		}
		if err := f.m.Approve(ctx, ids[0], admin); err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, callers)
		for range callers {
			wg.Go(func() { errs <- f.m.Authorize(ctx, req("s1", Filesystem)) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("one elicitation for many calls", func(t *testing.T) {
		f := newFixture(t, Options{})
		var asked atomic.Int32
		release := make(chan struct{})
		r := req("s1", Database)
		r.Elicit = func(context.Context, string) (bool, error) {
			asked.Add(1)
			<-release
			return true, nil
		}
		errs := make(chan error, callers)
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() { errs <- f.m.Authorize(ctx, r) })
		}
		close(release)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if n := asked.Load(); n != 1 {
			t.Fatalf("the user was asked %d times, want once", n)
		}
	})

	t.Run("many sessions, grants stay apart", func(t *testing.T) {
		f := newFixture(t, Options{})
		const sessions = 20
		var wg sync.WaitGroup
		for i := range sessions {
			wg.Go(func() {
				me := fmt.Sprint("s", i)
				r := req(me, Filesystem)
				// Even sessions accept through the client, odd ones are approved on the page.
				if i%2 == 0 {
					r.Elicit = accept
					if err := f.m.Authorize(ctx, r); err != nil {
						t.Error(err)
						return
					}
				} else {
					id := requestID(t, f.m.Authorize(ctx, r))
					if err := f.m.Approve(ctx, id, admin); err != nil {
						t.Error(err)
						return
					}
					if err := f.m.Authorize(ctx, r); err != nil {
						t.Error(err)
						return
					}
				}
				for range 20 {
					if err := f.m.Authorize(ctx, req(me, Filesystem)); err != nil {
						t.Error(err)
					}
					if err := f.m.Authorize(ctx, req(me, Command)); err == nil {
						t.Errorf("%s got command without a grant", me)
					}
					_ = f.m.Status(me)
					_ = f.m.Pending()
				}
			})
		}
		wg.Wait()
		for i := range sessions {
			if g := f.m.Grants(fmt.Sprint("s", i)); len(g) != 1 || g[0].Category != Filesystem {
				t.Fatalf("session s%d grants: %+v", i, g)
			}
		}
		for i := range sessions {
			f.m.EndSession(fmt.Sprint("s", i))
		}
		if p := f.m.Pending(); len(p) != 0 {
			t.Fatalf("pending after all sessions ended: %+v", p)
		}
	})
}

// requestID is asRequired for goroutines other than the test's, which must not call t.Fatal.
func requestID(t *testing.T, err error) string {
	var re *RequiredError
	if !errors.As(err, &re) {
		t.Errorf("got %v, want *RequiredError", err)
		return ""
	}
	return re.RequestID
}

func TestForgottenSessionsAreSwept(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Options{})
	// Sessions whose transport never calls EndSession: their requests expire and their state goes.
	for i := range 200 {
		asRequired(t, f.m.Authorize(ctx, req(fmt.Sprint("gone", i), Filesystem)))
	}
	f.clock.Advance(11 * 60e9)
	for i := range 200 {
		asRequired(t, f.m.Authorize(ctx, req(fmt.Sprint("new", i), Filesystem)))
	}
	f.m.mu.RLock()
	n := len(f.m.sessions)
	f.m.mu.RUnlock()
	if n > 300 {
		t.Fatalf("%d sessions held after 200 expired and 200 live ones, want the expired ones swept", n)
	}
}

package authn

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/hamcp/hamcp/dev/testkit/fakeclock"
)

// haAPI is a loopback server answering GET /api/ like Home Assistant: 200 for the good token,
// 401 otherwise; it counts requests so caching can be observed.
func haAPI(t *testing.T, good string) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if r.Header.Get("Authorization") != "Bearer "+good {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, "401: Unauthorized")
			return
		}
		fmt.Fprint(w, `{"message":"API running."}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func checkVia(url string) TokenCheck {
	return func(ctx context.Context, token string) (string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/api/", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized {
			return "", ErrRejected
		}
		if token == "good-user" {
			return "", ErrForbidden
		}
		return "u1", nil
	}
}

func TestHATokenCaching(t *testing.T) {
	srv, calls := haAPI(t, "good")
	clock := fakeclock.New(time.Unix(1000, 0))
	v := &HAToken{Check: checkVia(srv.URL), TTL: time.Minute, NegTTL: 10 * time.Second, Now: clock.Now}
	ctx := context.Background()
	steps := []struct {
		token     string
		advance   time.Duration
		wantErr   error
		wantCalls int32
	}{
		{"good", 0, nil, 1},
		{"good", 30 * time.Second, nil, 1},           // cached
		{"good", 31 * time.Second, nil, 2},           // expired, asked again
		{"bad", 0, ErrInvalidToken, 3},               // rejected
		{"bad", 5 * time.Second, ErrInvalidToken, 3}, // negative cache
		{"bad", 6 * time.Second, ErrInvalidToken, 4}, // negative cache expired
	}
	for i, s := range steps {
		clock.Advance(s.advance)
		info, err := v.Verify(ctx, s.token)
		if !errors.Is(err, s.wantErr) {
			t.Fatalf("step %d: err %v, want %v", i, err, s.wantErr)
		}
		if p := PrincipalOf(info); err == nil && (info.UserID != "ha-user:u1" || p.Kind != KindHAToken || p.UserID != "u1" || p.GrantID != Fingerprint(s.token)) {
			t.Fatalf("step %d: token info %+v", i, info)
		}
		if got := calls.Load(); got != s.wantCalls {
			t.Fatalf("step %d: %d calls to HA, want %d", i, got, s.wantCalls)
		}
	}
}

func TestHATokenUnavailable(t *testing.T) {
	srv, _ := haAPI(t, "good")
	url := srv.URL
	srv.Close()
	v := &HAToken{Check: checkVia(url)}
	_, err := v.Verify(context.Background(), "good")
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("HA down: %v, want ErrUnavailable", err)
	}
}

type prefixVerifier string

func (p prefixVerifier) Verify(ctx context.Context, token string) (*auth.TokenInfo, error) {
	if len(token) < len(p) || token[:len(p)] != string(p) {
		return nil, ErrNotMine
	}
	if token == string(p)+"ok" {
		return &auth.TokenInfo{UserID: string(p)}, nil
	}
	return nil, ErrInvalidToken
}

func TestChain(t *testing.T) {
	c := Chain{prefixVerifier("a_"), prefixVerifier("b_")}
	tests := []struct {
		token string
		user  string
		err   error
	}{
		{"a_ok", "a_", nil},
		{"b_ok", "b_", nil},
		{"a_bad", "", ErrInvalidToken},
		{"zzz", "", ErrInvalidToken},
		{"", "", ErrInvalidToken},
	}
	for _, tt := range tests {
		info, err := c.Verify(context.Background(), tt.token)
		if !errors.Is(err, tt.err) || (err == nil && info.UserID != tt.user) {
			t.Errorf("%q: %v %v", tt.token, info, err)
		}
	}
}

func TestReadOnlyScope(t *testing.T) {
	tests := []struct {
		scopes []string
		want   bool
	}{
		{nil, false},
		{[]string{ScopeFull}, false},
		{[]string{ScopeReadOnly}, true},
		{[]string{ScopeReadOnly, ScopeFull}, false},
	}
	for _, tt := range tests {
		if got := ReadOnly(&auth.TokenInfo{Scopes: tt.scopes}); got != tt.want {
			t.Errorf("%v: %v", tt.scopes, got)
		}
	}
	if Fingerprint("x") == Fingerprint("y") || len(Fingerprint("x")) != 16 {
		t.Error("fingerprint")
	}
}

// TestHATokenOneCheckForManyWaiters: when a token's cache entry has expired under load, the
// requests that arrive together cost Home Assistant one check, not one each; a waiter whose own
// request is cancelled stops waiting without failing the others.
func TestHATokenOneCheckForManyWaiters(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		release := make(chan struct{})
		v := &HAToken{Check: func(ctx context.Context, token string) (string, error) {
			calls.Add(1)
			<-release
			return "u1", nil
		}}
		const waiters = 64
		errs := make(chan error, waiters)
		for range waiters {
			go func() {
				_, err := v.Verify(context.Background(), "tok")
				errs <- err
			}()
		}
		cancelled, cancel := context.WithCancel(context.Background())
		gone := make(chan error, 1)
		go func() {
			_, err := v.Verify(cancelled, "tok")
			gone <- err
		}()
		synctest.Wait() // every request is now waiting on the one check
		if n := calls.Load(); n != 1 {
			t.Fatalf("%d requests waiting cost %d checks, want 1", waiters+1, n)
		}
		cancel()
		if err := <-gone; !errors.Is(err, context.Canceled) {
			t.Fatalf("the cancelled waiter got %v", err)
		}
		close(release)
		for range waiters {
			if err := <-errs; err != nil {
				t.Fatalf("a waiter failed: %v", err)
			}
		}
		// A request arriving after the check is answered from the cache.
		if _, err := v.Verify(context.Background(), "tok"); err != nil {
			t.Fatal(err)
		}
		if n := calls.Load(); n != 1 {
			t.Errorf("Home Assistant was asked %d times, want 1", n)
		}
	})
}

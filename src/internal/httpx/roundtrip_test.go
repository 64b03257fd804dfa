package httpx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

const testToken = "secret-token-value"

// arrived is signalled by /hang once a request is in, so a test cancels a call that is surely
// in flight.
var arrived = make(chan struct{}, 16)

var (
	srvOnce sync.Once
	srv     *httptest.Server
)

// server is one backend for every test of the package: each path answers one way.
func server(t *testing.T) *httptest.Server {
	t.Helper()
	srvOnce.Do(func() {
		mux := http.NewServeMux()
		mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			_ = json.NewEncoder(w).Encode(map[string]string{
				"method": r.Method, "auth": r.Header.Get("Authorization"), "accept": r.Header.Get("Accept"),
				"content_type": r.Header.Get("Content-Type"), "query": r.URL.RawQuery, "body": string(body)})
		})
		mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write(bytes.Repeat([]byte("x"), 4096))
		})
		mux.HandleFunc("/teapot", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusTeapot)
			_, _ = w.Write(bytes.Repeat([]byte("e"), 1000))
		})
		mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
			select {
			case arrived <- struct{}{}:
			default:
			}
			<-r.Context().Done()
		})
		mux.HandleFunc("/cut", func(w http.ResponseWriter, r *http.Request) {
			// Promises 100 bytes, sends 10, then drops the connection.
			conn, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"a\": \"123")
			_ = buf.Flush()
			_ = conn.Close()
		})
		mux.HandleFunc("/truncated", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"a": "123`)) // complete HTTP answer, incomplete JSON
		})
		srv = httptest.NewServer(mux)
	})
	return srv
}

// outcome records which hook answered, and how.
type outcome struct {
	status      int
	errorBody   int
	unreachable bool
	cancelled   bool
}

func backend(t *testing.T, got *outcome) Backend {
	return Backend{Name: "test", Base: server(t).URL, HTTP: server(t).Client(), MaxErrorBody: 100,
		Status: func(status int, body []byte) error {
			got.status, got.errorBody = status, len(body)
			return fmt.Errorf("status %d", status)
		},
		Unreachable: func(err error, cancelled bool) error {
			got.unreachable, got.cancelled = true, cancelled
			return fmt.Errorf("unreachable: %w", err)
		},
	}
}

func decodeInto(out any, limit int64) func(*http.Response) error {
	return func(resp *http.Response) error { return json.NewDecoder(Limit(resp.Body, limit)).Decode(out) }
}

func TestDo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		req     Request
		timeout time.Duration
		cancel  bool // cancel the call once the server has it
		read    func(*http.Response) error
		want    outcome
		wantErr error // matched with errors.Is; nil with an empty want means success
	}{
		{name: "success", req: Request{Method: "GET", Path: "/echo"}, read: decodeInto(&map[string]string{}, 1<<20)},
		{name: "no reader", req: Request{Method: "POST", Path: "/echo", Body: []byte(`{}`)}},
		{name: "non-2xx", req: Request{Method: "GET", Path: "/teapot"}, want: outcome{status: http.StatusTeapot, errorBody: 100}},
		{name: "oversized body", req: Request{Method: "GET", Path: "/big"},
			read: func(resp *http.Response) error { _, err := ReadAll(resp.Body, 1000); return err }, wantErr: ErrTooLarge},
		{name: "oversized JSON", req: Request{Method: "GET", Path: "/echo", Query: url.Values{"pad": {strings.Repeat("p", 300)}}},
			read: decodeInto(&map[string]string{}, 200), wantErr: ErrTooLarge},
		{name: "timeout", req: Request{Method: "GET", Path: "/hang"}, timeout: 50 * time.Millisecond,
			want: outcome{unreachable: true}, wantErr: context.DeadlineExceeded},
		{name: "cancelled", req: Request{Method: "GET", Path: "/hang"}, cancel: true,
			want: outcome{unreachable: true, cancelled: true}, wantErr: context.Canceled},
		{name: "body cut short", req: Request{Method: "GET", Path: "/cut"}, read: decodeInto(&map[string]string{}, 1<<20),
			want: outcome{unreachable: true}, wantErr: io.ErrUnexpectedEOF},
		{name: "malformed answer is the reader's", req: Request{Method: "GET", Path: "/truncated"}, read: decodeInto(&map[string]string{}, 1<<20),
			wantErr: io.ErrUnexpectedEOF},
		{name: "bad method", req: Request{Method: "BAD METHOD", Path: "/echo"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got outcome
			b := backend(t, &got)
			b.Timeout = tt.timeout
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
				go func() {
					<-arrived
					cancel()
				}()
			}
			err := b.Do(ctx, tt.req, tt.read)
			if got != tt.want {
				t.Fatalf("hooks saw %+v, want %+v (err %v)", got, tt.want, err)
			}
			switch {
			case tt.name == "bad method":
				if err == nil || !strings.HasPrefix(err.Error(), "test: building BAD METHOD /echo") {
					t.Fatalf("err = %v, want a building error", err)
				}
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
			case tt.want.status != 0:
				if err == nil || err.Error() != fmt.Sprintf("status %d", tt.want.status) {
					t.Fatalf("err = %v, want the Status hook's", err)
				}
			case err != nil:
				t.Fatal(err)
			}
		})
	}
}

func TestDoSendsRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		req  Request
		want map[string]string
	}{
		{"get", Request{Method: "GET", Path: "/echo", Token: testToken, Accept: "text/plain", Query: url.Values{"lines": {"5"}, "no_colors": {""}}},
			map[string]string{"method": "GET", "auth": "Bearer " + testToken, "accept": "text/plain", "content_type": "", "query": "lines=5&no_colors=", "body": ""}},
		{"post", Request{Method: "POST", Path: "/echo", Token: testToken, Accept: "application/json", Body: []byte(`{"a":1}`)},
			map[string]string{"method": "POST", "auth": "Bearer " + testToken, "accept": "application/json", "content_type": "application/json", "query": "", "body": `{"a":1}`}},
		{"empty body", Request{Method: "POST", Path: "/echo", Token: testToken, Accept: "application/json", Body: []byte{}},
			map[string]string{"method": "POST", "auth": "Bearer " + testToken, "accept": "application/json", "content_type": "application/json", "query": "", "body": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got outcome
			var echo map[string]string
			if err := backend(t, &got).Do(context.Background(), tt.req, decodeInto(&echo, 1<<20)); err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.want {
				if echo[k] != v {
					t.Errorf("%s = %q, want %q", k, echo[k], v)
				}
			}
		})
	}
}

// The token goes in the header only: errors of every kind leave it out.
func TestDoErrorsLeaveTokenOut(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"/teapot", "/cut", "/hang"} {
		var got outcome
		b := backend(t, &got)
		b.Timeout = 20 * time.Millisecond
		err := b.Do(context.Background(), Request{Method: "GET", Path: path, Token: testToken}, decodeInto(&map[string]string{}, 1<<20))
		if err == nil || strings.Contains(err.Error(), testToken) {
			t.Fatalf("%s: err = %v", path, err)
		}
	}
}

func TestLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		size, limit int
		wantErr     bool
	}{
		{0, 0, false}, {0, 10, false}, {10, 10, false}, {11, 10, true}, {1, 0, true}, {5000, 4096, true}, {4096, 5000, false},
	}
	for _, tt := range tests {
		data, err := ReadAll(bytes.NewReader(bytes.Repeat([]byte("a"), tt.size)), int64(tt.limit))
		if tt.wantErr {
			var tl *TooLargeError
			if !errors.As(err, &tl) || tl.Limit != int64(tt.limit) || !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), fmt.Sprint(tt.limit)) {
				t.Errorf("%d bytes, limit %d: err = %v, want a TooLargeError naming the limit", tt.size, tt.limit, err)
			}
			continue
		}
		if err != nil || len(data) != tt.size {
			t.Errorf("%d bytes, limit %d: %d bytes, %v", tt.size, tt.limit, len(data), err)
		}
	}
}

func FuzzLimit(f *testing.F) {
	f.Add(10, 10, 3)
	f.Add(11, 10, 1)
	f.Add(0, 0, 7)
	f.Fuzz(func(t *testing.T, size, limit, chunk int) {
		if size < 0 || size > 1<<16 || limit < 0 || limit > 1<<16 || chunk < 1 || chunk > 1<<12 {
			return
		}
		r := Limit(bytes.NewReader(make([]byte, size)), int64(limit))
		total := 0
		buf := make([]byte, chunk)
		for {
			n, err := r.Read(buf)
			total += n
			if errors.Is(err, ErrTooLarge) {
				if size <= limit || total > limit {
					t.Fatalf("size %d limit %d: too large after %d bytes", size, limit, total)
				}
				return
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if size > limit || total != size {
			t.Fatalf("size %d limit %d: read %d bytes without error", size, limit, total)
		}
	})
}

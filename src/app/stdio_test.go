package app

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

type sink struct {
	mu sync.Mutex
	bytes.Buffer
}

func (s *sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Buffer.Write(p)
}
func (s *sink) Close() error { return nil }

// TestFinishingHoldsEOF: the end of input reaches the SDK only once every request read has been
// answered, or the grace has passed, or the connection was closed — with a fake clock.
func TestFinishingHoldsEOF(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		input   string
		answers []string      // written back, in order, 1s apart
		close   bool          // Close instead of answering
		wantEOF time.Duration // when Read reports EOF
	}{
		{"nothing pending", `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n", nil, false, 0},
		{"answered", `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n", []string{`{"jsonrpc":"2.0","id":1,"result":{}}`}, false, time.Second},
		{"last line without newline", `{"jsonrpc":"2.0","id":"a","method":"ping"}`, []string{`{"jsonrpc":"2.0","id":"a","result":{}}`}, false, time.Second},
		{"two requests, same id twice", `{"jsonrpc":"2.0","id":7,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":7,"method":"ping"}` + "\n",
			[]string{`{"jsonrpc":"2.0","id":7,"result":{}}`, `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"dup"}}`}, false, 2 * time.Second},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]` + "\n",
			[]string{`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]`}, false, time.Second},
		{"server requests and client responses are not requests read",
			`{"jsonrpc":"2.0","id":9,"result":{}}` + "\n" + `{"jsonrpc":"2.0","id":1,"method":"tools/call"}` + "\n",
			[]string{`{"jsonrpc":"2.0","id":1,"method":"elicitation/create"}`, `{"jsonrpc":"2.0","id":1,"result":{}}`}, false, 2 * time.Second},
		{"never answered: the grace bounds it", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}` + "\n", nil, false, 5 * time.Second},
		{"closed while waiting", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}` + "\n", nil, true, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				out := &sink{}
				f := newFinishing(io.NopCloser(strings.NewReader(tt.input)), out, 5*time.Second)
				start := time.Now()
				go func() {
					for _, a := range tt.answers {
						time.Sleep(time.Second)
						if _, err := f.Write([]byte(a + "\n")); err != nil {
							t.Error(err)
						}
					}
					if tt.close {
						time.Sleep(time.Second)
						f.Close()
					}
				}()
				got, err := io.ReadAll(f)
				if err != nil || string(got) != tt.input {
					t.Fatalf("read %q, %v", got, err)
				}
				if took := time.Since(start); took != tt.wantEOF {
					t.Errorf("EOF after %v, want %v", took, tt.wantEOF)
				}
				synctest.Wait()
			})
		})
	}
}

func FuzzFinishing(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	f.Add(`[{"id":1.0,"method":"x"},{"id":"1","method":"y"}]`, `[{"id":1,"result":1},{"id":"1","error":{}}]`)
	f.Add("{\n}\n[", "]")
	f.Fuzz(func(t *testing.T, in, answer string) {
		synctest.Test(t, func(t *testing.T) {
			fin := newFinishing(io.NopCloser(strings.NewReader(in)), &sink{}, time.Second)
			go fin.Write([]byte(answer))
			start := time.Now()
			if _, err := io.ReadAll(fin); err != nil {
				t.Fatal(err)
			}
			if time.Since(start) > time.Second {
				t.Fatalf("held EOF past the grace")
			}
			synctest.Wait()
		})
	})
}

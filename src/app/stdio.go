package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// finishing sits between a stdio-style connection (stdin/stdout, an SSH channel) and the SDK's
// transport so that the end of input does not cut off requests still running. The SDK ends a
// session as soon as its reader reports EOF, dropping the answers of calls in flight: a piped
// script (`printf '…initialize…\n…tools/call…\n' | hamcp stdio`) got no answer. finishing
// counts the requests it has passed on (by id) and the responses written back, and holds the
// EOF until every request read has been answered, or grace has passed, or the connection is
// closed. It works on the newline-delimited wire itself, so the SDK's own transport (batches,
// line limits, protocol-version rules) stays untouched.
type finishing struct {
	in    io.ReadCloser
	out   io.WriteCloser
	grace time.Duration

	mu      sync.Mutex
	pending map[string]int // request id → requests read and not yet answered
	line    []byte         // the incomplete last line read so far
	eof     bool

	answered  chan struct{} // a response was written (buffered 1)
	closed    chan struct{}
	closeOnce sync.Once
	closeErr  error
}

func newFinishing(in io.ReadCloser, out io.WriteCloser, grace time.Duration) *finishing {
	return &finishing{in: in, out: out, grace: grace, pending: map[string]int{},
		answered: make(chan struct{}, 1), closed: make(chan struct{})}
}

// Read passes input through, noting the id of every request in it. At EOF it waits for the
// answers first.
func (f *finishing) Read(p []byte) (int, error) {
	f.mu.Lock()
	eof := f.eof
	f.mu.Unlock()
	if !eof {
		n, err := f.in.Read(p)
		f.note(p[:n], err == io.EOF)
		if n > 0 || err != io.EOF {
			// Bytes first: the last request must reach the SDK before the EOF is held back.
			return n, err
		}
	}
	f.waitAnswered()
	return 0, io.EOF
}

func (f *finishing) note(b []byte, eof bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.line = append(f.line, b...)
	for {
		i := bytes.IndexByte(f.line, '\n')
		if i < 0 {
			break
		}
		f.countRequests(f.line[:i])
		f.line = f.line[i+1:]
	}
	if eof {
		f.countRequests(f.line)
		f.line, f.eof = nil, true
	}
	if len(f.line) > mcp.DefaultMaxLineLength {
		f.line = nil // the SDK refuses a line this long and ends the session; nothing to count
	}
}

// Write passes a message to the peer and notes the response it is, if it is one. The SDK writes
// one message (or one batch) per call.
func (f *finishing) Write(p []byte) (int, error) {
	n, err := f.out.Write(p)
	f.mu.Lock()
	f.countResponses(p)
	f.mu.Unlock()
	select {
	case f.answered <- struct{}{}:
	default:
	}
	return n, err
}

// Close closes both directions once; the SDK's transport calls it as reader and as writer.
func (f *finishing) Close() error {
	f.closeOnce.Do(func() {
		close(f.closed)
		f.closeErr = errors.Join(f.in.Close(), f.out.Close())
	})
	return f.closeErr
}

func (f *finishing) waitAnswered() {
	deadline := time.NewTimer(f.grace)
	defer deadline.Stop()
	for {
		f.mu.Lock()
		open := len(f.pending)
		f.mu.Unlock()
		if open == 0 {
			return
		}
		select {
		case <-f.answered:
		case <-deadline.C:
			return
		case <-f.closed:
			return
		}
	}
}

// wireMsg is what finishing needs of a JSON-RPC message.
type wireMsg struct {
	ID     any             `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func messages(line []byte) []wireMsg {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	if line[0] == '[' {
		var batch []wireMsg
		_ = json.Unmarshal(line, &batch)
		return batch
	}
	var m wireMsg
	if json.Unmarshal(line, &m) != nil {
		return nil
	}
	return []wireMsg{m}
}

func idKey(id any) string { return fmt.Sprintf("%T:%v", id, id) }

func (f *finishing) countRequests(line []byte) {
	for _, m := range messages(line) {
		if m.ID != nil && m.Method != "" {
			f.pending[idKey(m.ID)]++
		}
	}
}

func (f *finishing) countResponses(line []byte) {
	for _, m := range messages(line) {
		if m.ID == nil || m.Method != "" || (m.Result == nil && m.Error == nil) {
			continue
		}
		k := idKey(m.ID)
		if f.pending[k] > 1 {
			f.pending[k]--
		} else {
			delete(f.pending, k)
		}
	}
}

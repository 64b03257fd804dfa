package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// stdioProc is one server child process speaking newline-delimited JSON-RPC. Any number of
// workers may have calls in flight on it: a single reader matches answers to callers by id.
type stdioProc struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	wmu     sync.Mutex
	w       *bufio.Writer
	mu      sync.Mutex
	pending map[int64]chan<- outcome
	dead    error
	stderr  tail
	exited  chan struct{} // closed when the process has been waited for
	waitErr error
	// nonJSON counts stdout lines that were not JSON (a server logging to stdout).
	nonJSON atomic.Int64
	msg     message
}

// tail keeps the end of the child's stderr for error messages.
type tail struct {
	mu  sync.Mutex
	buf []byte
	out io.Writer
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 4096 {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-2048:]...)
	}
	if t.out != nil {
		t.out.Write(p)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

func startStdio(argv, env []string, stderr io.Writer) (*stdioProc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	// Its own process group: a Ctrl+C at the terminal reaches the load tool, which then ends
	// the server (and a wrapper's children, as npx has) itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &stdioProc{cmd: cmd, pending: map[int64]chan<- outcome{}, exited: make(chan struct{})}
	p.stderr.out = stderr
	cmd.Stderr = &p.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// stdout through a pipe of our own, so that waiting for the process (below, at once) does
	// not close it under the reader before the last answers are read.
	out, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = w
	err = cmd.Start()
	w.Close()
	if err != nil {
		out.Close()
		return nil, fmt.Errorf("starting %q: %w", strings.Join(argv, " "), err)
	}
	p.stdin, p.w = in, bufio.NewWriterSize(in, 64<<10)
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	go p.read(out)
	return p, nil
}

func (p *stdioProc) pid() int { return p.cmd.Process.Pid }

// read is the single reader of the child's stdout.
func (p *stdioProc) read(out io.ReadCloser) {
	defer out.Close()
	lr := lineReader{br: bufio.NewReaderSize(out, 64<<10)}
	var err error
	for {
		var line []byte
		line, err = lr.line()
		if err != nil {
			break
		}
		at := time.Now()
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		p.msg = message{}
		if jsonUnmarshal(line, &p.msg) != nil {
			p.nonJSON.Add(1)
			continue
		}
		if p.msg.Method != "" {
			if id := bytes.TrimSpace(p.msg.ID); len(id) > 0 && string(id) != "null" {
				p.answer(id, p.msg.Method)
			}
			continue // notifications (logging, progress) are not counted
		}
		id, perr := strconv.ParseInt(string(bytes.TrimSpace(p.msg.ID)), 10, 64)
		if perr != nil {
			p.nonJSON.Add(1)
			continue
		}
		o := judge(&p.msg, line)
		o.at, o.in = at, len(line)+1
		p.mu.Lock()
		if ch, ok := p.pending[id]; ok {
			delete(p.pending, id)
			ch <- o // buffered, and its worker has no other call in flight
		}
		p.mu.Unlock()
	}
	<-p.exited
	msg := p.deathNote(fmt.Sprintf("the server's stdout closed (%v)", err))
	p.mu.Lock()
	p.dead = fmt.Errorf("%s", msg)
	for id, ch := range p.pending {
		delete(p.pending, id)
		ch <- failed(KindTransport, msg)
	}
	p.mu.Unlock()
}

// deathNote explains a failure with the process's exit status and the end of its stderr.
func (p *stdioProc) deathNote(what string) string {
	select {
	case <-p.exited:
		what += fmt.Sprintf("; the server exited: %v", p.waitErr)
	default:
	}
	if t := p.stderr.String(); t != "" {
		what += "; its stderr ends: " + t
	}
	return what
}

// answer replies to a request from the server: ping as the protocol requires, anything else
// (sampling, elicitation, roots) as not supported, since the load tool declared no capabilities.
func (p *stdioProc) answer(id []byte, method string) {
	var b []byte
	if method == "ping" {
		b = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{}}`, id)
	} else {
		m, _ := json.Marshal("hamcp-load does not support " + method)
		b = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":%s}}`, id, m)
	}
	p.write(b)
}

func (p *stdioProc) write(b []byte) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	p.w.Write(b)
	p.w.WriteByte('\n')
	return p.w.Flush()
}

// call sends one request and waits for its answer on ch (capacity 1, owned by the caller).
func (p *stdioProc) call(ctx context.Context, body []byte, id int64, ch chan outcome, timeout time.Duration) outcome {
	p.mu.Lock()
	if p.dead != nil {
		p.mu.Unlock()
		return failed(KindTransport, p.dead.Error())
	}
	p.pending[id] = ch
	p.mu.Unlock()
	if err := p.write(body); err != nil {
		p.forget(id, ch)
		select { // a broken pipe usually means the server has exited: say how
		case <-p.exited:
		case <-time.After(time.Second):
		}
		return failed(KindTransport, p.deathNote("writing to the server's stdin: "+err.Error()))
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case o := <-ch:
		return o
	case <-t.C:
		p.forget(id, ch)
		return failed(KindTimeout, fmt.Sprintf("no answer to id %d within %v", id, timeout))
	case <-ctx.Done():
		p.forget(id, ch)
		return failed(KindTransport, ctx.Err().Error())
	}
}

// forget drops a call that will not be waited for, and any answer that raced in.
func (p *stdioProc) forget(id int64, ch chan outcome) {
	p.mu.Lock()
	delete(p.pending, id)
	p.mu.Unlock()
	select {
	case <-ch:
	default:
	}
}

// initialize opens the MCP session on the pipe.
func (p *stdioProc) initialize(ctx context.Context, version string, timeout time.Duration) (string, error) {
	ch := make(chan outcome, 1)
	o := p.call(ctx, initializeBody(0, version), 0, ch, timeout)
	if o.kind != "" {
		return "", fmt.Errorf("initialize: %s: %s", o.kind, o.msg)
	}
	if err := p.write(initializedBody); err != nil {
		return "", fmt.Errorf("notifications/initialized: %w", err)
	}
	if o.version == "" {
		o.version = version
	}
	return o.version, nil
}

// stop closes stdin (a stdio server's signal to exit), then asks the process group to end, and
// finally kills it.
func (p *stdioProc) stop() {
	p.wmu.Lock()
	p.stdin.Close()
	p.wmu.Unlock()
	done := p.exited
	for _, step := range []struct {
		sig  syscall.Signal
		wait time.Duration
	}{{0, 3 * time.Second}, {syscall.SIGTERM, 2 * time.Second}, {syscall.SIGKILL, 5 * time.Second}} {
		if step.sig != 0 {
			syscall.Kill(-p.pid(), step.sig)
		}
		select {
		case <-done:
			return
		case <-time.After(step.wait):
		}
	}
}

// stdioConn is one worker's handle on a (possibly shared) process.
type stdioConn struct {
	p       *stdioProc
	ch      chan outcome
	timeout time.Duration
}

func (c *stdioConn) call(ctx context.Context, body []byte, id int64) outcome {
	return c.p.call(ctx, body, id, c.ch, c.timeout)
}

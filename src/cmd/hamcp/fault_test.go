package main

// Fault tests of the real binary: SIGTERM under load. `hamcp demo` runs as a user runs
// it, driven by dev/loadgen (sessions and sessionless POSTs) while a shell command and a stream
// of file writes are in flight; then it gets SIGTERM.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/loadgen"
	"github.com/hamcp/hamcp/dev/testkit"
)

// demoProc is a running `hamcp demo` process.
type demoProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	addr   string // host:port of /mcp
	info   demoInfoFile
	stderr *syncBuffer
	exited chan struct{} // closed once the process has been waited for
	code   int
}

// demoInfoFile is the part of --info-file these tests read.
type demoInfoFile struct {
	MCPURL     string `json:"mcp_url"`
	Token      string `json:"token"`
	UserToken  string `json:"user_token"`
	SandboxDir string `json:"sandbox_dir"`
}

// startDemoProc starts `hamcp demo` on a free loopback port with every tool listed, its files in
// a directory of the test (so they can be inspected after it exits), and args on top. It returns
// once the info file is written, i.e. the server is about to accept.
func startDemoProc(t *testing.T, args ...string) *demoProc {
	t.Helper()
	dir := t.TempDir()
	infoPath := filepath.Join(dir, "info.json")
	cmd := exec.Command(bin, append([]string{"demo", "--listen", "127.0.0.1:0", "--info-file", infoPath, "--dir", filepath.Join(dir, "home"),
		"--tool-mode", "all"}, args...)...)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	p := &demoProc{t: t, cmd: cmd, stderr: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = cmd.Wait()
		p.code = cmd.ProcessState.ExitCode()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.exited
	})
	testkit.EventuallyNoError(t, "hamcp demo ready", func() error {
		select {
		case <-p.exited:
			t.Fatalf("hamcp demo exited with %d before it was ready:\n%s", p.code, p.stderr.String())
		default:
		}
		if b, err := os.ReadFile(infoPath); err != nil || json.Unmarshal(b, &p.info) != nil || p.info.MCPURL == "" {
			return fmt.Errorf("no info file yet:\n%s", p.stderr.String())
		}
		return nil
	})
	u, err := url.Parse(p.info.MCPURL)
	if err != nil {
		t.Fatal(err)
	}
	p.addr = u.Host
	// The info file is written just before the listener is served; wait for an answer.
	testkit.EventuallyNoError(t, "/mcp/health answers", func() error {
		resp, err := http.Get("http://" + p.addr + "/mcp/health")
		if err != nil {
			return fmt.Errorf("%v\n%s", err, p.stderr.String())
		}
		resp.Body.Close()
		return nil
	})
	return p
}

// pid is the server's process id.
func (p *demoProc) pid() int { return p.cmd.Process.Pid }

// wait waits up to d for the process to exit and returns its exit code.
func (p *demoProc) wait(d time.Duration) int {
	p.t.Helper()
	select {
	case <-p.exited:
		return p.code
	case <-time.After(d):
		p.t.Fatalf("hamcp demo still running %v later:\n%s", d, p.stderr.String())
		return -1
	}
}

// rpcAnswer is a JSON-RPC answer to one call, as far as these tests look at it.
type rpcAnswer struct {
	Status int
	Header http.Header
	Body   string
	Result *struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		Content           []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// post sends one JSON-RPC message to /mcp and reads the answer, whether plain JSON or an SSE
// stream. hdr adds headers (X-Forwarded-For, Mcp-Session-Id).
func (p *demoProc) post(ctx context.Context, client *http.Client, token, body string, hdr map[string]string) (rpcAnswer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+p.addr+"/mcp", strings.NewReader(body))
	if err != nil {
		return rpcAnswer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return rpcAnswer{}, err
	}
	defer resp.Body.Close()
	a := rpcAnswer{Status: resp.StatusCode, Header: resp.Header}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(data, `"id"`) {
				a.Body = data
				break
			}
		}
		if a.Body == "" {
			return a, fmt.Errorf("SSE answer without a response: %v", sc.Err())
		}
	} else {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return a, err
		}
		a.Body = string(b)
	}
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal([]byte(a.Body), &a); err != nil {
			return a, fmt.Errorf("answer is not JSON-RPC: %v: %.200s", err, a.Body)
		}
	}
	return a, nil
}

func toolCall(id int, name string, args any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
	return string(b)
}

// ended reports whether process pid is gone (or a zombie: dead, waiting for its parent).
func ended(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// readPIDs reads "shellpid childpid" written by a command, waiting for it to appear.
func readPIDs(t *testing.T, path string, p *demoProc) []int {
	t.Helper()
	var b []byte
	testkit.EventuallyNoError(t, "the command writes "+path, func() (err error) {
		if b, err = os.ReadFile(path); err == nil && !bytes.HasSuffix(b, []byte("\n")) {
			err = fmt.Errorf("%q so far", b)
		}
		if err != nil {
			return fmt.Errorf("%v\n%s", err, p.stderr.String())
		}
		return nil
	})
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("pid file %q", b)
		}
		pids = append(pids, n)
	}
	return pids
}

// cachedReads is the load's mix: reads the state mirror answers.
var cachedReads = []loadgen.Call{
	{Name: "ha_get_entity_details", Arguments: json.RawMessage(`{"entity_id":"sun.sun"}`)},
	{Name: "ha_get_states", Arguments: json.RawMessage(`{"domain":"light"}`)},
}

// TestSIGTERMUnderLoad: with sessions and sessionless calls running, a shell command that ends
// within the grace period, one that would outlive it and file writes in flight, SIGTERM makes
// hamcp stop accepting at once, answer the calls that can finish within --shutdown-grace, end
// every process the command tool started, leave each written file whole or absent, and exit 0.
func TestSIGTERMUnderLoad(t *testing.T) {
	t.Parallel()
	// The short command has under a second left when the signal comes: the rest of the grace
	// period is slack for a busy machine.
	const grace = 4 * time.Second
	p := startDemoProc(t, "--rate-limit", "0", "--permission-command", "allow", "--permission-filesystem", "allow",
		"--shutdown-grace", grace.String())
	tmp := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}

	// The load: a session client and a sessionless one, until the process is gone.
	var reps [2]*loadgen.Report
	var runErrs [2]error
	var load sync.WaitGroup
	for i, mode := range []string{loadgen.ModeSession, loadgen.ModeSessionless} {
		load.Go(func() {
			reps[i], runErrs[i] = loadgen.Run(ctx, loadgen.Config{Mode: mode, URL: p.info.MCPURL, Token: p.info.Token,
				Calls: cachedReads, Concurrency: 3, Duration: 30 * time.Second, Timeout: 10 * time.Second, Label: mode})
		})
	}

	// Two commands in flight: one ends 1 s after it started (within the grace period), one would
	// run a minute. Each writes its shell's pid and its child's.
	type cmdCall struct {
		pidFile string
		answer  rpcAnswer
		err     error
		at      time.Time
		done    chan struct{}
	}
	run := func(id int, script string) *cmdCall {
		c := &cmdCall{pidFile: filepath.Join(tmp, fmt.Sprintf("cmd%d.pid", id)), done: make(chan struct{})}
		go func() {
			defer close(c.done)
			line := fmt.Sprintf(`%s & echo $$ $! > %s.tmp && mv %s.tmp %s; wait; echo finished`, script, c.pidFile, c.pidFile, c.pidFile)
			c.answer, c.err = p.post(ctx, client, p.info.Token, toolCall(id, "ha_execute_command", map[string]any{"command": line, "timeout_seconds": 120}), nil)
			c.at = time.Now()
		}()
		return c
	}
	short, long := run(1, "sleep 1"), run(2, "sleep 60")

	// File writes, one after another, each 256 KiB of one repeated line naming its round.
	var writesOK atomic.Int64
	writesDone := make(chan struct{})
	go func() {
		defer close(writesDone)
		for i := 1; ctx.Err() == nil; i++ {
			a, err := p.post(ctx, client, p.info.Token, toolCall(1000+i, "ha_write_file",
				map[string]any{"path": "/config/fault/state.txt", "content": writeContent(i), "create_dirs": true}), nil)
			if err != nil {
				return // the server is gone
			}
			if a.Status != http.StatusOK || a.Result == nil || a.Result.IsError {
				t.Errorf("write %d: %d %.300s", i, a.Status, a.Body)
				return
			}
			writesOK.Add(1)
		}
	}()

	shortPIDs, longPIDs := readPIDs(t, short.pidFile, p), readPIDs(t, long.pidFile, p)
	testkit.Eventually(t, "file writes under way", func() bool { return writesOK.Load() >= 2 })

	sent := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// No new connection is accepted once the signal is handled. (A connection that raced the
	// listener's close sits in its backlog and is reset; the ones after it are refused.)
	var refusedAfter time.Duration
	for {
		c, err := net.DialTimeout("tcp", p.addr, 200*time.Millisecond)
		if err != nil {
			if errors.Is(err, syscall.ECONNRESET) {
				continue
			}
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("dial after SIGTERM: %v, want connection refused", err)
			}
			refusedAfter = time.Since(sent)
			break
		}
		c.Close()
		// A bound no scheduling delay reaches, unless the listener stayed open through the
		// shutdown: once the grace period is over, the in-flight calls are gone too.
		if time.Since(sent) > grace {
			t.Fatalf("hamcp still accepts connections %v after SIGTERM", grace)
		}
		time.Sleep(5 * time.Millisecond)
	}

	// The short command's call is answered, in full, within the grace period.
	<-short.done
	if short.err != nil || short.answer.Status != http.StatusOK || short.answer.Result == nil || short.answer.Result.IsError ||
		!strings.Contains(string(short.answer.Result.StructuredContent), `"exit_code":0`) ||
		!strings.Contains(string(short.answer.Result.StructuredContent), "finished") {
		t.Errorf("the in-flight command that ends within the grace period: %v %d %.400s", short.err, short.answer.Status, short.answer.Body)
	}
	if d := short.at.Sub(sent); d > grace {
		t.Errorf("the short command was answered %v after SIGTERM, past the %v grace", d, grace)
	}

	code := p.wait(grace + 10*time.Second)
	exitedAfter := time.Since(sent)
	cancel()
	load.Wait()
	<-writesDone
	<-long.done
	if code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0:\n%s", code, p.stderr.String())
	}
	if exitedAfter > grace+5*time.Second {
		t.Errorf("exited %v after SIGTERM with a %v grace period", exitedAfter, grace)
	}
	// The long command outlived the grace period: its connection was closed and its processes
	// killed (by the command's reaper, which the kernel signals when hamcp goes).
	if long.err == nil && long.answer.Result != nil && strings.Contains(string(long.answer.Result.StructuredContent), `"stdout":"finished`) {
		t.Errorf("the minute-long command finished?! %.300s", long.answer.Body)
	}
	for _, pid := range append(shortPIDs, longPIDs...) {
		testkit.Eventually(t, fmt.Sprintf("process %d started by a command ends after hamcp exited", pid), func() bool { return ended(pid) })
	}

	// Whatever was written is whole: the file holds one round's complete content, and nothing
	// half-written (a temporary file) is left beside it.
	dir := filepath.Join(p.info.SandboxDir, "config", "fault")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("the written directory: %v", err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		round, whole := wholeContent(b)
		switch last := int(writesOK.Load()); {
		case e.Name() != "state.txt" || !whole:
			t.Errorf("%s left in %s (%d bytes, whole=%v)", e.Name(), dir, len(b), whole)
		case round != last && round != last+1: // the last answered write, or the one in flight at the end
			t.Errorf("the file holds round %d; %d writes were answered", round, last)
		}
	}

	// The load: every answered call succeeded; the only failures are connections the stopping
	// server refused or closed.
	var ok uint64
	for i, r := range reps {
		if runErrs[i] != nil {
			t.Fatalf("loadgen: %v", runErrs[i])
		}
		ok += r.OK
		for kind, n := range r.ErrorsByKind {
			if kind != loadgen.KindTransport {
				t.Errorf("%s: %d %s errors: %s", r.Label, n, kind, r.ErrorSamples[kind])
			}
		}
	}
	if ok == 0 {
		t.Error("no call of the load succeeded")
	}
	t.Logf("SIGTERM: refused new connections after %v, exited %v after it (grace %v); %d load calls answered; %d writes; long command: %v %.120s",
		refusedAfter.Round(time.Millisecond), exitedAfter.Round(time.Millisecond), grace, ok, writesOK.Load(), long.err, long.answer.Body)
}

// writeContent is round i's file: 256 KiB of one line repeated.
func writeContent(i int) string {
	line := fmt.Sprintf("round %08d\n", i)
	return strings.Repeat(line, 256<<10/len(line))
}

// wholeContent reports which round's writeContent b is, and whether it is that whole content.
func wholeContent(b []byte) (int, bool) {
	var i int
	if _, err := fmt.Sscanf(string(b), "round %08d\n", &i); err != nil {
		return 0, false
	}
	return i, string(b) == writeContent(i)
}

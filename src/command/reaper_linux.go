package command

import (
	"bytes"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// On Linux every command runs under a reaper: a copy of hamcp itself (/proc/self/exe, so an upgraded
// binary on disk does not matter) that makes itself a child subreaper with prctl(PR_SET_CHILD_SUBREAPER)
// and then starts the shell. A process that leaves the process group with setsid, or double-forks, is
// re-parented to the reaper instead of to init, so the reaper sees the whole tree and can kill and reap
// all of it: at SIGTERM (timeout, cancel, hamcp stopping) and when the shell exits on its own.
//
// Why a reaper process and not hamcp itself or a cgroup: a subreaper attribute is per process, so making
// hamcp one would re-parent every orphan (Chromium's helpers, ssh sessions) to it and it could not tell a
// command's orphans from others' without racing their exit codes; a per-run reaper only ever has that
// run's processes. cgroups need a writable cgroup tree, which an add-on container does not have;
// PR_SET_CHILD_SUBREAPER needs no privilege (Linux 3.4+).

// reaperEnv marks a process started as a reaper; the value guards against an accidental match.
const (
	reaperEnv   = "HAMCP_COMMAND_REAPER"
	reaperValue = "v1"
)

// init turns this process into the reaper when hamcp (or a test binary linking this package) started it
// as one. It runs before main, so the reaper never starts hamcp's servers.
func init() {
	if os.Getenv(reaperEnv) == reaperValue && len(os.Args) > 1 {
		// syscall.Exit, not os.Exit: nothing to flush, and a race-enabled build (tests) would sleep a
		// second at exit in os.Exit.
		syscall.Exit(reap(os.Args[1:]))
	}
}

// canReap: without /proc there is neither /proc/self/exe to start nor a process table to walk; the
// shell then runs directly, in its own process group, as on other systems.
var canReap = sync.OnceValue(func() bool {
	_, err := os.Stat("/proc/self/exe")
	return err == nil
})

func launcher(shell, cmdline string) (path string, args []string, env []string) {
	if !canReap() {
		return shell, []string{"-c", cmdline}, nil
	}
	return "/proc/self/exe", []string{shell, "-c", cmdline}, []string{reaperEnv + "=" + reaperValue}
}

// sysProcAttr puts the reaper in its own process group (the backstop kill) and has the kernel send it
// SIGTERM if hamcp dies first, so it still cleans up when hamcp is killed. (Go's fork re-checks the
// parent after arming Pdeathsig, so a hamcp that dies during the fork is not missed either. SIGTERM is
// caught only once signal.Notify runs in reap; one arriving before that ends the reaper before it has
// started the shell.)
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// terminate asks the reaper to end the tree; it SIGKILLs what is left after killGrace. Without a reaper
// the process group gets the signal.
func terminate(pid int) error {
	if !canReap() {
		return syscall.Kill(-pid, syscall.SIGTERM)
	}
	return syscall.Kill(pid, syscall.SIGTERM)
}

// reap runs args (shell, -c, command) as the reaper's child and returns the shell's exit code once
// nothing it started is alive.
func reap(args []string) int {
	// Failure leaves only the process-group kill; there is no one to tell but the command's stderr.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		os.Stderr.WriteString("hamcp: cannot become a child subreaper (" + err.Error() + "); detached children may survive\n")
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, reaperEnv+"=") })
	shell, err := os.StartProcess(args[0], args, &os.ProcAttr{Env: env, Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}})
	if err != nil {
		os.Stderr.WriteString("hamcp: starting the shell: " + err.Error() + "\n")
		return 127
	}
	shellDone := make(chan unix.WaitStatus, 1)
	allGone := make(chan struct{})
	go func() {
		defer close(allGone)
		for {
			var ws unix.WaitStatus
			pid, err := unix.Wait4(-1, &ws, 0, nil)
			if err == unix.EINTR {
				continue
			}
			if err != nil { // ECHILD: no child and, as the subreaper, no descendant either
				return
			}
			if pid == shell.Pid {
				shellDone <- ws
			}
		}
	}()

	var status unix.WaitStatus
	got := false
	select {
	case status = <-shellDone:
		got = true
	case <-stop:
		signalTree(syscall.SIGTERM)
		select {
		case status = <-shellDone:
			got = true
		case <-time.After(killGrace):
		}
	}
	killTree(allGone)
	if !got {
		select {
		case status = <-shellDone:
		default:
			return 128 + int(syscall.SIGKILL)
		}
	}
	if status.Signaled() {
		return 128 + int(status.Signal())
	}
	return status.ExitStatus()
}

func signalTree(sig syscall.Signal) {
	for _, pid := range descendants(os.Getpid()) {
		_ = syscall.Kill(pid, sig)
	}
}

// killTree SIGKILLs every descendant until all are reaped. A process forking between two scans is caught
// by the next one; one stuck in the kernel (D state) is given up on after a few seconds.
func killTree(allGone <-chan struct{}) {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		signalTree(syscall.SIGKILL)
		select {
		case <-allGone:
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// descendants lists the live processes below root, from /proc (zombies are left to the reaper loop).
func descendants(root int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, state, ok := procStat(pid)
		if !ok || state == 'Z' {
			continue
		}
		children[ppid] = append(children[ppid], pid)
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// procStat reads a process's parent and state from /proc/<pid>/stat.
func procStat(pid int) (ppid int, state byte, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	return parseStat(b)
}

// parseStat reads state and parent from a stat line. The command name is chosen by the process (a
// command can name itself "x) Z 1"), which is why only what follows the last ')' is trusted.
func parseStat(b []byte) (ppid int, state byte, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 || len(f[0]) != 1 {
		return 0, 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, f[0][0], err == nil
}

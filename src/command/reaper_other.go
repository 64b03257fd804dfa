//go:build !linux

package command

import "syscall"

// Without PR_SET_CHILD_SUBREAPER the shell runs directly in its own process group: a timeout kills the
// group, and WaitDelay stops a detached child that holds the output open from holding the call.
func launcher(shell, cmdline string) (path string, args []string, env []string) {
	return shell, []string{"-c", cmdline}, nil
}

func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func terminate(pid int) error { return syscall.Kill(-pid, syscall.SIGTERM) }

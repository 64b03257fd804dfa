//go:build linux

package nodump

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The child mode: the test binary re-run with a secret in its environment, optionally protected,
// prints "ready" and waits for stdin to close.
func TestMain(m *testing.M) {
	if mode := os.Getenv("NODUMP_CHILD"); mode != "" {
		if mode == "protect" {
			if err := Protect(); err != nil {
				os.Stdout.WriteString("error " + err.Error() + "\n")
				os.Exit(1)
			}
		}
		os.Stdout.WriteString("ready\n")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// dockerDefaultCaps is the capability set Docker gives a container, so the Supervisor gives an add-on
// that asks for no `privileged` capabilities (hamcp's config.yaml asks for none).
const dockerDefaultCaps = "-all,+chown,+dac_override,+fsetid,+fowner,+mknod,+net_raw,+setgid,+setuid,+setfcap,+setpcap,+net_bind_service,+sys_chroot,+kill,+audit_write"

// TestCommandCannotReadSecretsOfItsParent plays the attack: a command running as the same user as
// hamcp (root), with the add-on container's capabilities, reads hamcp's /proc environ and mem.
// Unprotected, it gets the secret; protected, the kernel refuses.
func TestCommandCannotReadSecretsOfItsParent(t *testing.T) {
	t.Parallel()
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("setpriv (util-linux) is needed to run the reader with the add-on container's capabilities")
		}
		t.Skip("setpriv (util-linux) not installed")
	}
	const secret = "SUPERVISOR_TOKEN=nodump-test-secret-4f1c"
	for _, tc := range []struct {
		mode     string
		readable bool
	}{{"plain", true}, {"protect", false}} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			// Both run with the container's capabilities, as hamcp and its commands do in the add-on.
			child := exec.Command(setpriv, "--bounding-set", dockerDefaultCaps, "--", os.Args[0], "-test.run=^$")
			child.Env = append(os.Environ(), "NODUMP_CHILD="+tc.mode, secret)
			in, err := child.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			out, err := child.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := child.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { in.Close(); _ = child.Wait() }()
			line, _ := bufio.NewReader(out).ReadString('\n')
			if strings.TrimSpace(line) != "ready" {
				t.Fatalf("child said %q", line)
			}
			pid := child.Process.Pid
			for _, file := range []string{"environ", "mem"} {
				read := exec.Command(setpriv, "--bounding-set", dockerDefaultCaps, "--",
					"dd", "if=/proc/"+itoa(pid)+"/"+file, "bs=65536", "count=1", "status=none")
				got, err := read.Output()
				switch {
				case tc.readable && file == "environ" && !strings.Contains(string(got), secret):
					t.Fatalf("control: an unprotected process's environ should be readable (err %v)", err)
				case !tc.readable && (err == nil || strings.Contains(string(got), secret)):
					t.Fatalf("protected process: /proc/%d/%s was readable by a command without CAP_SYS_PTRACE", pid, file)
				}
			}
		})
	}
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for n > 0 || i == len(b) {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

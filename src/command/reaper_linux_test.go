package command

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestParseStat(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		line  string
		ppid  int
		state byte
		ok    bool
	}{
		{"123 (sleep) S 45 123 45 0 -1", 45, 'S', true},
		{"123 (x) Z 1 (evil)) R 77 1 1", 77, 'R', true}, // a name that imitates the fields after it
		{"123 (a b) Z 9", 9, 'Z', true},
		{"123 (no end S 45", 0, 0, false},
		{"123 (x) SS 45", 0, 0, false},
		{"123 (x) S", 0, 0, false},
		{"", 0, 0, false},
	} {
		ppid, state, ok := parseStat([]byte(c.line))
		if ok != c.ok || ok && (ppid != c.ppid || state != c.state) {
			t.Errorf("parseStat(%q) = %d %q %v", c.line, ppid, state, ok)
		}
	}
	// This process, read from /proc, has the parent the kernel reports.
	if ppid, _, ok := procStat(os.Getpid()); !ok || ppid != os.Getppid() {
		t.Errorf("procStat(self) = %d, %v; want %d", ppid, ok, os.Getppid())
	}
	if _, _, ok := procStat(1 << 30); ok {
		t.Error("a pid that does not exist was read")
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("123 (sleep) S 45 123 45 0 -1"))
	f.Add([]byte("1 ()) ) Z 0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ppid, state, ok := parseStat(b)
		if !ok {
			return
		}
		// What it read is the two fields right after the last ')', whatever the name held.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if n, err := strconv.Atoi(f[1]); f[0] != string([]byte{state}) || err != nil || n != ppid {
			t.Fatalf("%q read as state %q parent %d", b, state, ppid)
		}
	})
}

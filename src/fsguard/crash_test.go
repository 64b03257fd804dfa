package fsguard

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

const (
	helperEnv = "FSGUARD_CRASH_HELPER_DIR"
	crashSize = 2 << 20
)

// crashNoise is the body every generation is derived from.
var crashNoise = func() []uint64 {
	r := rand.New(rand.NewPCG(1, 2))
	words := make([]uint64, crashSize/8)
	for i := range words {
		words[i] = r.Uint64()
	}
	return words
}()

// crashContent is generation gen of the file the helper rewrites: a header naming the generation, then
// the noise mixed with a per-generation key, so every word differs between generations and any mix of
// two, or a short file, is detected.
func crashContent(gen uint64) []byte {
	b := make([]byte, crashSize)
	key := gen*0x9e3779b97f4a7c15 + 1
	for i, w := range crashNoise {
		binary.LittleEndian.PutUint64(b[i*8:], w^key)
	}
	copy(b, fmt.Sprintf("generation %020d\n", gen))
	return b
}

func crashOptions(dir string) Options {
	return Options{
		Roots:       []Root{{Alias: "/config", Path: filepath.Join(dir, "config")}},
		TrashDir:    filepath.Join(dir, "trash"),
		MaxVersions: 2,
	}
}

// TestHelperWriter is not a test on its own: TestCrashDuringWrite runs the test binary again with only
// this function and the helper variable set, and it rewrites the file until it is killed.
func TestHelperWriter(t *testing.T) {
	dir := os.Getenv(helperEnv)
	if dir == "" {
		t.Skip("helper process for TestCrashDuringWrite")
	}
	f, err := New(crashOptions(dir))
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	start := uint64(time.Now().UnixNano())
	fmt.Println("ready")
	for gen := start; ; gen++ {
		if _, err := f.WriteFile("/config/big.bin", crashContent(gen), 0, WriteOptions{}); err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		fmt.Println("wrote")
	}
}

// TestCrashDuringWrite kills a writing child process at random moments and checks that the file always
// holds one complete generation, keeps its mode, and that a restart leaves no temp files behind.
func TestCrashDuringWrite(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "config"), 0o755))
	target := filepath.Join(dir, "config", "big.bin")
	must(t, os.WriteFile(target, crashContent(0), 0o640))

	const kills = 24
	gens := map[uint64]bool{}
	for i := range kills {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$", "-test.count=1")
		cmd.Env = append(os.Environ(), helperEnv+"="+dir)
		out, err := cmd.StdoutPipe()
		must(t, err)
		must(t, cmd.Start())
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() }) // if a check below stops the test early
		lines := bufio.NewScanner(out)
		if !lines.Scan() || lines.Text() != "ready" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("helper did not start: %q", lines.Text())
		}
		wrote := make(chan struct{}, 1000)
		drained := make(chan string)
		go func() { // keep the pipe drained so the child never blocks on it
			failure := ""
			for lines.Scan() {
				if bytes.HasPrefix(lines.Bytes(), []byte("error")) {
					failure = lines.Text()
				}
				wrote <- struct{}{}
			}
			drained <- failure
		}()
		// Let a random number of writes complete, then kill at a random moment of the next ones.
		for range rand.IntN(3) {
			select {
			case <-wrote:
			case <-time.After(30 * time.Second):
				t.Fatalf("kill %d: the helper stopped writing", i)
			}
		}
		time.Sleep(time.Duration(rand.IntN(40)) * time.Millisecond)
		must(t, cmd.Process.Signal(syscall.SIGKILL))
		failure := <-drained // the pipe closes when the child dies
		cmd.Wait()
		if failure != "" {
			t.Fatalf("kill %d: helper failed: %s", i, failure)
		}

		data, err := os.ReadFile(target)
		must(t, err)
		var gen uint64
		if _, err := fmt.Sscanf(string(data[:min(len(data), 31)]), "generation %d\n", &gen); err != nil {
			t.Fatalf("kill %d: unreadable header %q", i, data[:min(len(data), 31)])
		}
		if !bytes.Equal(data, crashContent(gen)) {
			t.Fatalf("kill %d: the file is not a complete generation %d (%d bytes)", i, gen, len(data))
		}
		if m := modeOf(t, target); m != 0o640 {
			t.Fatalf("kill %d: mode %v", i, m)
		}
		gens[gen] = true

		f, err := New(crashOptions(dir)) // cleans what the killed writer left
		must(t, err)
		f.Close()
		if left := tempFiles(t, filepath.Join(dir, "config")); len(left) > 0 {
			t.Fatalf("kill %d: temp files left after restart: %v", i, left)
		}
	}
	if len(gens) < 2 {
		t.Fatalf("saw only generations %v; the helper never completed a write", gens)
	}
	t.Logf("%d kills, %d distinct complete generations seen", kills, len(gens))
}

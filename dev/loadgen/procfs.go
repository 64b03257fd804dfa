package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Linux's /proc: the server's resident memory and CPU time, with its descendants' (a server
// started through npx or a shell wrapper is really its child).

// treePIDs returns pid and its descendants, found through /proc/PID/task/TID/children.
func treePIDs(pid int) []int {
	out := []int{pid}
	for i := 0; i < len(out) && len(out) < 1024; i++ {
		tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(out[i]) + "/task")
		for _, t := range tasks {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(out[i]) + "/task/" + t.Name() + "/children")
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// rssKiB is the VmRSS of one process, in KiB, from /proc/PID/status.
func rssKiB(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	return parseVmRSS(b)
}

// RSSKiB is the resident memory (VmRSS) of process pid, in KiB; the soak test samples its own.
func RSSKiB(pid int) (int64, error) { return rssKiB(pid) }

func parseVmRSS(status []byte) (int64, error) {
	for line := range bytes.SplitSeq(status, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			f := strings.Fields(string(v))
			if len(f) == 0 {
				break
			}
			n, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("VmRSS %q: %w", v, err)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS line (a kernel thread or a zombie?)")
}

// treeRSS sums the RSS of every process in the trees rooted at roots.
func treeRSS(roots []int) (int64, error) {
	var sum int64
	var firstErr error
	found := false
	for _, r := range roots {
		for _, pid := range treePIDs(r) {
			n, err := rssKiB(pid)
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			sum, found = sum+n, true
		}
	}
	if !found {
		return 0, firstErr
	}
	return sum, nil
}

// clockTick is USER_HZ, 100 on every Linux architecture Go supports.
const clockTick = 100

// cpuSeconds is the user+system CPU time of one process, from /proc/PID/stat.
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	return parseStatCPU(b)
}

func parseStatCPU(stat []byte) (float64, error) {
	// The command name (field 2) is in parentheses and may hold spaces: count from the last ")".
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed /proc stat")
	}
	f := strings.Fields(string(stat[i+1:]))
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("malformed /proc stat")
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("malformed /proc stat")
	}
	return float64(u+s) / clockTick, nil
}

func treeCPU(roots []int) float64 {
	var sum float64
	for _, r := range roots {
		for _, pid := range treePIDs(r) {
			if s, err := cpuSeconds(pid); err == nil {
				sum += s
			}
		}
	}
	return sum
}

// loadAverage is /proc/loadavg's 1, 5 and 15 minute figures.
func loadAverage() []float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return nil
	}
	var out []float64
	for _, f := range strings.Fields(string(b))[:3] {
		v, _ := strconv.ParseFloat(f, 64)
		out = append(out, v)
	}
	return out
}

// rssSampler samples the trees' RSS every interval until stopped.
type rssSampler struct {
	mu                 sync.Mutex
	n                  int
	min, max, sum, cur int64
	lastErr            error
	stop               context.CancelFunc
	done               chan struct{}
}

func startRSSSampler(roots []int, every time.Duration) *rssSampler {
	ctx, cancel := context.WithCancel(context.Background())
	s := &rssSampler{stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			s.sample(roots)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *rssSampler) sample(roots []int) {
	v, err := treeRSS(roots)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.lastErr = err
		return
	}
	if s.n == 0 || v < s.min {
		s.min = v
	}
	if v > s.max {
		s.max = v
	}
	s.n++
	s.sum += v
	s.cur = v
}

func (s *rssSampler) finish() {
	s.stop()
	<-s.done
}

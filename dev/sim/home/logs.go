package home

import (
	"fmt"
	"os"
	"strings"
	"sync"
)

// logBook is HA's home-assistant.log: what /api/error_log and the
// Supervisor's /core/logs return. Lines go to the file in the config dir
// (when there is one) and to a bounded in-memory tail.
type logBook struct {
	mu    sync.Mutex
	path  string
	lines []string
}

const maxLogLines = 5000

func (l *logBook) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
	if len(l.lines) > maxLogLines {
		l.lines = append([]string(nil), l.lines[len(l.lines)-maxLogLines:]...)
	}
	if l.path == "" {
		return
	}
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	_, _ = f.WriteString(line + "\n")
	_ = f.Close()
}

// Log writes one line in HA's log format, e.g.
// "2026-05-01 12:00:00.123 WARNING (MainThread) [homeassistant.helpers.service] ...".
func (h *Home) Log(level, logger, format string, args ...any) {
	ts := h.now().In(h.loc).Format("2006-01-02 15:04:05.000")
	h.logs.add(fmt.Sprintf("%s %s (MainThread) [%s] %s", ts, strings.ToUpper(level), logger, fmt.Sprintf(format, args...)))
}

// LogText is the whole log as HA's file would hold it; lines>0 keeps the last n.
func (h *Home) LogText(lines int) string {
	h.logs.mu.Lock()
	defer h.logs.mu.Unlock()
	src := h.logs.lines
	if h.logs.path != "" {
		if raw, err := os.ReadFile(h.logs.path); err == nil {
			src = strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
			if len(raw) == 0 {
				src = nil
			}
		}
	}
	if lines > 0 && len(src) > lines {
		src = src[len(src)-lines:]
	}
	if len(src) == 0 {
		return ""
	}
	return strings.Join(src, "\n") + "\n"
}

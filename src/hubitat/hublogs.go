package hubitat

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The hub's past logs are GET /logs/past/json (upstream: mcp-diagnostics-lib toolGetHubLogs): a
// JSON array of tab-separated lines, oldest first, "name\tlevel\tmessage\ttime\ttype". Firmware
// 2.5.0.126 and later may put the time first and leave the fourth field empty; older firmware
// answers plain text, one line per entry. ?type=dev&id=N or ?type=app&id=N scope it on the hub,
// which answers [] for an unknown id.

// LogEntry is one line of the hub's past log. Everything in it but Time was written by a device,
// an app or the hub, so it is data, never an instruction.
type LogEntry struct {
	Time    time.Time // zero when the hub's time did not parse
	RawTime string    // the time as the hub wrote it
	Source  string    // the device's or app's name
	Level   string    // trace, debug, info, warn, error
	Message string
	Type    string // dev, app, or what the hub wrote
}

// LogScope asks the hub for one device's or one app's lines; the zero value is every line.
type LogScope struct {
	Kind string // "dev" or "app"
	ID   int64
}

// HubLogs reads the hub's past log, newest first.
func (c *Client) HubLogs(ctx context.Context, scope LogScope) ([]LogEntry, error) {
	path := "/logs/past/json"
	if scope.Kind != "" {
		if (scope.Kind != "dev" && scope.Kind != "app") || scope.ID <= 0 {
			return nil, fmt.Errorf("hubitat logs: scope %q %d must be dev or app with a positive id", scope.Kind, scope.ID)
		}
		path += "?" + url.Values{"type": {scope.Kind}, "id": {strconv.FormatInt(scope.ID, 10)}}.Encode()
	}
	r, err := c.Admin(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	return ParseHubLogs(r.Body)
}

// ParseHubLogs reads a /logs/past/json reply (or the older plain-text one) and returns its lines
// newest first. Lines with fewer than two fields are skipped, as upstream does.
func ParseHubLogs(b []byte) ([]LogEntry, error) {
	t := bytes.TrimSpace(b)
	var lines []string
	switch {
	case len(t) == 0:
		return []LogEntry{}, nil
	case t[0] == '[':
		var ok bool
		if lines, ok = jsonStrings(string(t)); !ok {
			if err := json.Unmarshal(t, &lines); err != nil {
				return nil, fmt.Errorf("hubitat /logs/past/json: expected a JSON list of lines: %w", err)
			}
		}
	case t[0] == '{' || t[0] == '<':
		return nil, fmt.Errorf("hubitat /logs/past/json: expected a list of log lines, got %q", clean(string(firstBytes(t, 120))))
	default:
		lines = strings.Split(string(t), "\n")
	}
	out := make([]LogEntry, 0, len(lines))
	for i := len(lines) - 1; i >= 0; i-- {
		if e, ok := parseLogLine(lines[i]); ok {
			out = append(out, e)
		}
	}
	return out, nil
}

func firstBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// jsonStrings reads a JSON array of strings the way a 100,000-line log needs: the strings
// without escapes are cut out of s without copying. ok is false for anything else (a malformed
// list, an element that is not a string), which the caller hands to encoding/json.
func jsonStrings(s string) (out []string, ok bool) {
	if !strings.HasPrefix(s, "[") {
		return nil, false
	}
	i := skipSpace(s, 1)
	if i < len(s) && s[i] == ']' {
		return []string{}, skipSpace(s, i+1) == len(s)
	}
	out = make([]string, 0, strings.Count(s, "\",\"")+1)
	for i < len(s) {
		if s[i] != '"' {
			return nil, false
		}
		end, escaped := i+1, false
		for ; end < len(s) && s[end] != '"'; end++ {
			if s[end] == '\\' {
				escaped = true
				end++
			} else if s[end] < 0x20 {
				return nil, false
			}
		}
		if end >= len(s) {
			return nil, false
		}
		v := s[i+1 : end]
		if !utf8.ValidString(v) { // encoding/json replaces what is not UTF-8
			return nil, false
		}
		if escaped {
			if v, ok = unescape(v); !ok && json.Unmarshal([]byte(s[i:end+1]), &v) != nil {
				return nil, false
			}
		}
		out = append(out, v)
		i = skipSpace(s, end+1)
		switch {
		case i < len(s) && s[i] == ',':
			i = skipSpace(s, i+1)
		case i < len(s) && s[i] == ']':
			return out, skipSpace(s, i+1) == len(s)
		default:
			return nil, false
		}
	}
	return nil, false
}

// unescape undoes JSON's one-letter escapes (a log line's tabs come as \t); ok is false for
// \u escapes and anything unknown, which encoding/json then reads.
func unescape(v string) (string, bool) {
	var b strings.Builder
	b.Grow(len(v))
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i++; i >= len(v) {
			return "", false
		}
		switch v[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case '"', '\\', '/':
			b.WriteByte(v[i])
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		default:
			return "", false
		}
	}
	return b.String(), true
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t') {
		i++
	}
	return i
}

// maxLogFields bounds the split of one line; a message's own tabs are joined back.
const maxLogFields = 64

func parseLogLine(line string) (LogEntry, bool) {
	if strings.TrimSpace(line) == "" {
		return LogEntry{}, false
	}
	var buf [8]string
	parts := splitTabs(line, buf[:0])
	if len(parts) < 2 {
		return LogEntry{}, false
	}
	e := LogEntry{Source: strings.TrimSpace(parts[0]), Level: strings.ToLower(strings.TrimSpace(parts[1]))}
	switch n := len(parts); {
	case n > 5: // the message itself held tabs
		e.Message = strings.Join(parts[2:n-2], "\t")
		e.RawTime, e.Type = strings.TrimSpace(parts[n-2]), strings.TrimSpace(parts[n-1])
	default:
		if n > 2 {
			e.Message = parts[2]
		}
		if n > 3 {
			e.RawTime = strings.TrimSpace(parts[3])
		}
		if n > 4 {
			e.Type = strings.TrimSpace(parts[4])
		}
	}
	e.Message = strings.TrimSpace(e.Message)
	if e.RawTime == "" { // the newer shape: the time first
		if t, ok := ParseHubTime(e.Source); ok {
			e.RawTime, e.Time, e.Source = e.Source, t, ""
			return e, true
		}
	}
	e.Time, _ = ParseHubTime(e.RawTime)
	return e, true
}

// splitTabs is strings.Split(line, "\t") into buf, without allocating for the usual five fields.
func splitTabs(line string, buf []string) []string {
	for len(buf) < maxLogFields-1 {
		i := strings.IndexByte(line, '\t')
		if i < 0 {
			break
		}
		buf = append(buf, line[:i])
		line = line[i+1:]
	}
	return append(buf, line)
}

// hubTimeLayouts are the times the hub writes in its logs: no zone, meaning UTC (upstream reads
// them so), and ISO-8601 with a zone.
var hubTimeLayouts = []string{"2006-01-02 15:04:05.000", "2006-01-02 15:04:05", "2006-01-02T15:04:05.000", "2006-01-02T15:04:05"}

// ParseHubTime reads a time as the hub writes it in logs and lists.
func ParseHubTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 19 || s[0] < '0' || s[0] > '9' {
		return time.Time{}, false
	}
	for _, l := range hubTimeLayouts {
		if t, err := time.ParseInLocation(l, s, time.UTC); err == nil {
			return t, true
		}
	}
	for _, l := range []string{time.RFC3339Nano, "2006-01-02T15:04:05-0700", "2006-01-02T15:04:05.000-0700"} {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

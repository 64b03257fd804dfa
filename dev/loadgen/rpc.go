package loadgen

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"time"
)

// encoded is one mix entry's request, pre-encoded around its id: prefix + id + suffix.
type encoded struct {
	label          int
	prefix, suffix []byte
}

func (e *encoded) build(buf []byte, id int64) []byte {
	buf = append(buf[:0], e.prefix...)
	buf = strconv.AppendInt(buf, id, 10)
	return append(buf, e.suffix...)
}

// encodeCall pre-encodes c. stateless adds the _meta that MCP 2026-07-28 requests carry in
// place of a session (protocol version, capabilities, client info).
func encodeCall(c Call, label int, version string, stateless bool) (encoded, error) {
	method := c.Method
	if method == "" {
		method = "tools/call"
	}
	var params bytes.Buffer
	if method == "tools/call" {
		name, _ := json.Marshal(c.Name)
		params.WriteString(`{"name":`)
		params.Write(name)
		if len(c.Arguments) > 0 {
			params.WriteString(`,"arguments":`)
			if err := json.Compact(&params, c.Arguments); err != nil {
				return encoded{}, err
			}
		}
	} else if len(c.Arguments) > 0 {
		if err := json.Compact(&params, c.Arguments); err != nil {
			return encoded{}, err
		}
		params.Truncate(params.Len() - 1) // reopen the object for _meta below
	} else {
		params.WriteString(`{`)
	}
	if stateless && version >= "2026-07-28" {
		if params.Len() > 1 {
			params.WriteString(`,`)
		}
		v, _ := json.Marshal(version)
		params.WriteString(`"_meta":{"io.modelcontextprotocol/protocolVersion":`)
		params.Write(v)
		params.WriteString(`,"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"hamcp-load","version":"1"}}`)
	}
	params.WriteString(`}`)
	m, _ := json.Marshal(method)
	suffix := append([]byte(`,"method":`), m...)
	suffix = append(suffix, `,"params":`...)
	suffix = append(suffix, params.Bytes()...)
	suffix = append(suffix, '}')
	return encoded{label: label, prefix: []byte(`{"jsonrpc":"2.0","id":`), suffix: suffix}, nil
}

func initializeBody(id int64, version string) []byte {
	v, _ := json.Marshal(version)
	b := []byte(`{"jsonrpc":"2.0","id":`)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":"initialize","params":{"protocolVersion":`...)
	b = append(b, v...)
	return append(b, `,"capabilities":{},"clientInfo":{"name":"hamcp-load","version":"1"}}}`...)
}

var initializedBody = []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

// message is the part of a JSON-RPC message the load tool looks at.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Result *struct {
		IsError         bool   `json:"isError"`
		ProtocolVersion string `json:"protocolVersion"`
	} `json:"result"`
}

// idIs reports whether raw (a JSON id) is the number id.
func idIs(raw json.RawMessage, id int64) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || len(raw) > 20 {
		return false
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return err == nil && n == id
}

// Error kinds in the report.
const (
	KindToolError   = "tool_error"   // result.isError: the tool ran and failed
	KindTransport   = "transport"    // connection refused/reset, broken pipe, server exited
	KindTimeout     = "timeout"      // no answer within --timeout
	KindBadResponse = "bad_response" // a 2xx answer that is not a JSON-RPC response to the call
)

// KindHTTP is the kind of a non-2xx answer, e.g. http_500.
func KindHTTP(status int) string { return "http_" + strconv.Itoa(status) }

// KindRPC is the kind of a JSON-RPC error, e.g. jsonrpc_-32602.
func KindRPC(code int) string { return "jsonrpc_" + strconv.Itoa(code) }

// outcome is how one call ended.
type outcome struct {
	kind string // "" when the call succeeded
	msg  string // a sample of what went wrong
	at   time.Time
	in   int // response bytes
	// version is the negotiated protocol version (initialize only).
	version string
}

func failed(kind, msg string) outcome {
	return outcome{kind: kind, msg: clip(msg), at: time.Now()}
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// judge classifies a decoded response.
func judge(m *message, raw []byte) outcome {
	switch {
	case m.Error != nil:
		return outcome{kind: KindRPC(m.Error.Code), msg: clip(m.Error.Message)}
	case m.Result == nil:
		return outcome{kind: KindBadResponse, msg: clip("neither result nor error: " + string(raw))}
	case m.Result.IsError:
		return outcome{kind: KindToolError, msg: clip(toolErrorText(raw))}
	}
	return outcome{version: m.Result.ProtocolVersion}
}

// toolErrorText digs out the first text content of an isError result (error path only).
func toolErrorText(raw []byte) string {
	var r struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if json.Unmarshal(raw, &r) == nil && len(r.Result.Content) > 0 {
		return r.Result.Content[0].Text
	}
	return string(raw)
}

// lineReader reads lines (without their end) from a bufio.Reader, reusing one buffer for lines
// longer than the reader's own.
type lineReader struct {
	br   *bufio.Reader
	long []byte
}

// errLineTooLong guards against a peer that never ends a line.
var errLineTooLong = errors.New("line longer than 64 MiB")

func (l *lineReader) line() ([]byte, error) {
	b, err := l.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		l.long = append(l.long[:0], b...)
		for err == bufio.ErrBufferFull {
			b, err = l.br.ReadSlice('\n')
			l.long = append(l.long, b...)
			if len(l.long) > 64<<20 {
				return nil, errLineTooLong
			}
		}
		b = l.long
	}
	if err != nil && (err != io.EOF || len(b) == 0) {
		return nil, err
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r")), nil
}

// sseReader yields the data of each server-sent event (multi-line data joined with "\n").
type sseReader struct {
	lr   lineReader
	data []byte
	n    int // bytes read, for the report
}

func (s *sseReader) reset(r io.Reader) {
	s.lr.br.Reset(r)
	s.n = 0
}

// next returns the next event's data; events without data (comments, retry hints, priming
// events with an empty data line) are skipped.
func (s *sseReader) next() ([]byte, error) {
	s.data = s.data[:0]
	has := false
	for {
		line, err := s.lr.line()
		if err != nil {
			if err == io.EOF && has && len(s.data) > 0 {
				return s.data, nil
			}
			return nil, err
		}
		s.n += len(line) + 1
		if len(line) == 0 {
			if has && len(s.data) > 0 {
				return s.data, nil
			}
			s.data, has = s.data[:0], false
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		if string(field) != "data" {
			continue // event:, id:, retry:, ": comment"
		}
		value = bytes.TrimPrefix(value, []byte(" "))
		if has {
			s.data = append(s.data, '\n')
		}
		s.data = append(s.data, value...)
		has = true
	}
}

var jsonUnmarshal = json.Unmarshal

package homeassistant

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// inbound is any message HA sends on the WebSocket: auth_* during the handshake, then result,
// pong and event messages that carry the id of the command they answer.
type inbound struct {
	ID        int64           `json:"id"`
	Type      string          `json:"type"`
	Success   bool            `json:"success"`
	Result    json.RawMessage `json:"result"`
	Error     *wsError        `json:"error"`
	Event     json.RawMessage `json:"event"`
	HAVersion string          `json:"ha_version"`
	Message   string          `json:"message"`
}

type wsError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// decodeFrame parses one text frame. With coalesce_messages enabled HA may pack several
// messages into a JSON array; otherwise a frame is a single object. A malformed element is
// reported but does not hide the well-formed ones around it.
func decodeFrame(data []byte) ([]inbound, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, errors.New("empty frame")
	}
	switch data[0] {
	case '{':
		var m inbound
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("malformed message: %w", err)
		}
		return []inbound{m}, nil
	case '[':
		var parts []json.RawMessage
		if err := json.Unmarshal(data, &parts); err != nil {
			return nil, fmt.Errorf("malformed message array: %w", err)
		}
		out := make([]inbound, 0, len(parts))
		var errs []error
		for i, p := range parts {
			var m inbound
			if err := json.Unmarshal(p, &m); err != nil || !isObject(p) {
				errs = append(errs, fmt.Errorf("array element %d is not a message object", i))
				continue
			}
			out = append(out, m)
		}
		return out, errors.Join(errs...)
	default:
		return nil, errors.New("frame is neither a JSON object nor an array")
	}
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// encodeCommand builds `{"id":N,"type":T,...payload}`. payload must encode to a JSON object (or
// be nil); when msgType is empty the type comes from the payload's own "type" member, which is
// how Subscribe receives its messages.
func encodeCommand(id int64, msgType string, payload any) ([]byte, error) {
	fields := map[string]json.RawMessage{}
	if payload != nil {
		raw, err := json.Marshal(payload)
		if err != nil {
			return nil, fmt.Errorf("encoding %s payload: %w", msgType, err)
		}
		if !bytes.Equal(raw, []byte("null")) {
			if err := json.Unmarshal(raw, &fields); err != nil {
				return nil, fmt.Errorf("%s payload must be a JSON object, got %s", msgType, kindOf(raw))
			}
		}
	}
	if _, ok := fields["id"]; ok {
		return nil, errors.New(`message must not set "id": the client assigns ids`)
	}
	if t, ok := fields["type"]; ok {
		var s string
		if err := json.Unmarshal(t, &s); err != nil || s == "" {
			return nil, errors.New(`message "type" must be a non-empty string, e.g. "subscribe_events"`)
		}
		if msgType != "" && s != msgType {
			return nil, fmt.Errorf("payload type %q conflicts with message type %q", s, msgType)
		}
		msgType = s
		delete(fields, "type")
	}
	if msgType == "" {
		return nil, errors.New(`message has no "type", e.g. "get_states"`)
	}
	typ, _ := json.Marshal(msgType)
	var b bytes.Buffer
	b.WriteString(`{"id":`)
	b.WriteString(strconv.FormatInt(id, 10))
	b.WriteString(`,"type":`)
	b.Write(typ)
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		name, _ := json.Marshal(k)
		b.WriteByte(',')
		b.Write(name)
		b.WriteByte(':')
		b.Write(fields[k])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func kindOf(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	default:
		return "a number"
	}
}

// replyError converts a failed result into an APIError (Status 0: it came over the WebSocket).
func replyError(m inbound) *APIError {
	e := &APIError{Code: "unknown_error", Message: "Home Assistant reported failure without details"}
	if m.Error != nil {
		// Test after cleaning: a code of control characters alone cleans to nothing.
		if c := clean(m.Error.Code); c != "" {
			e.Code = c
		}
		if msg := clean(m.Error.Message); msg != "" {
			e.Message = msg
		}
	}
	return e
}

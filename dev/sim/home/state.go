package home

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"time"
)

// Context is HA's event/state context: who or what caused a change.
type Context struct {
	ID       string  `json:"id"`
	ParentID *string `json:"parent_id"`
	UserID   *string `json:"user_id"`
}

// State is one immutable snapshot of an entity. Never mutate a State (or its
// Attributes) that Home handed out: it is shared with every reader.
type State struct {
	EntityID     string
	State        string
	Attributes   map[string]any
	LastChanged  time.Time
	LastReported time.Time
	LastUpdated  time.Time
	Context      Context
}

// Domain is the part of the entity id before the dot.
func (s *State) Domain() string { d, _, _ := strings.Cut(s.EntityID, "."); return d }

// ObjectID is the part of the entity id after the dot.
func (s *State) ObjectID() string { _, o, _ := strings.Cut(s.EntityID, "."); return o }

// Name is the friendly name, falling back to the object id like HA does.
func (s *State) Name() string {
	if n, ok := s.Attributes["friendly_name"].(string); ok && n != "" {
		return n
	}
	return strings.ReplaceAll(s.ObjectID(), "_", " ")
}

// ISOTime formats t like Python's datetime.isoformat() for an aware UTC value:
// microseconds only when non-zero, and "+00:00" rather than "Z".
func ISOTime(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1000 == 0 {
		return t.Format("2006-01-02T15:04:05") + "+00:00"
	}
	return t.Format("2006-01-02T15:04:05.000000") + "+00:00"
}

// LocalISO formats t like isoformat() in the given zone ("+02:00" offsets).
func LocalISO(t time.Time, loc *time.Location) string {
	t = t.In(loc)
	if t.Nanosecond()/1000 == 0 {
		return t.Format("2006-01-02T15:04:05-07:00")
	}
	return t.Format("2006-01-02T15:04:05.000000-07:00")
}

// Epoch is the float seconds timestamp HA uses in compressed WS payloads.
func Epoch(t time.Time) float64 {
	us := t.UnixMicro()
	return math.Round(float64(us)) / 1e6
}

// MarshalJSON writes the state in HA's as_dict key order.
func (s *State) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"entity_id":`)
	writeJSON(&b, s.EntityID)
	b.WriteString(`,"state":`)
	writeJSON(&b, s.State)
	b.WriteString(`,"attributes":`)
	if s.Attributes == nil {
		b.WriteString("{}")
	} else if err := writeJSONErr(&b, s.Attributes); err != nil {
		return nil, err
	}
	b.WriteString(`,"last_changed":`)
	writeJSON(&b, ISOTime(s.LastChanged))
	b.WriteString(`,"last_reported":`)
	writeJSON(&b, ISOTime(s.LastReported))
	b.WriteString(`,"last_updated":`)
	writeJSON(&b, ISOTime(s.LastUpdated))
	b.WriteString(`,"context":`)
	writeJSON(&b, s.Context)
	b.WriteByte('}')
	return b.Bytes(), nil
}

func writeJSON(b *bytes.Buffer, v any) { _ = writeJSONErr(b, v) }

func writeJSONErr(b *bytes.Buffer, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b.Write(raw)
	return nil
}

// compressedContext is the id alone when nothing else is set, as HA sends it.
func (c Context) compressed() any {
	if c.ParentID == nil && c.UserID == nil {
		return c.ID
	}
	return c
}

// Compressed is the subscribe_entities form of a state ("s","a","c","lc","lu").
func (s *State) Compressed() map[string]any {
	attrs := s.Attributes
	if attrs == nil {
		attrs = map[string]any{}
	}
	m := map[string]any{
		"s":  s.State,
		"a":  attrs,
		"c":  s.Context.compressed(),
		"lc": Epoch(s.LastChanged),
	}
	if !s.LastChanged.Equal(s.LastUpdated) {
		m["lu"] = Epoch(s.LastUpdated)
	}
	return m
}

// Diff is HA's _state_diff: the "+"/"-" change record between two states of
// one entity, as sent in subscribe_entities "c" events.
func Diff(old, cur *State) map[string]any {
	add := map[string]any{}
	diff := map[string]any{"+": add}
	if old.State != cur.State {
		add["s"] = cur.State
	}
	if !old.LastChanged.Equal(cur.LastChanged) {
		add["lc"] = Epoch(cur.LastChanged)
	} else if !old.LastUpdated.Equal(cur.LastUpdated) {
		add["lu"] = Epoch(cur.LastUpdated)
	}
	ctx := map[string]any{}
	if !ptrEq(old.Context.ParentID, cur.Context.ParentID) {
		ctx["parent_id"] = cur.Context.ParentID
	}
	if !ptrEq(old.Context.UserID, cur.Context.UserID) {
		ctx["user_id"] = cur.Context.UserID
	}
	if old.Context.ID != cur.Context.ID {
		if len(ctx) > 0 {
			ctx["id"] = cur.Context.ID
		} else {
			add["c"] = cur.Context.ID
		}
	}
	if len(ctx) > 0 {
		add["c"] = ctx
	}
	changed := map[string]any{}
	for k, v := range cur.Attributes {
		if ov, ok := old.Attributes[k]; !ok || !ValuesEqual(ov, v) {
			changed[k] = v
		}
	}
	if len(changed) > 0 {
		add["a"] = changed
	}
	var removed []string
	for k := range old.Attributes {
		if _, ok := cur.Attributes[k]; !ok {
			removed = append(removed, k)
		}
	}
	if len(removed) > 0 {
		diff["-"] = map[string]any{"a": removed}
	}
	return diff
}

func ptrEq(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// ValuesEqual compares JSON-like values by their JSON form, so 5 and 5.0 (int
// from the model, float64 from a decoded request) count as equal like in Python.
func ValuesEqual(a, b any) bool {
	ra, err1 := json.Marshal(a)
	rb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ra, rb)
}

// attrsEqual reports whether two attribute maps hold the same values.
func attrsEqual(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !ValuesEqual(v, w) {
			return false
		}
	}
	return true
}

// cloneAttrs makes a shallow copy a handler may change before it becomes a new State.
func cloneAttrs(a map[string]any) map[string]any {
	m := make(map[string]any, len(a)+4)
	for k, v := range a {
		m[k] = v
	}
	return m
}

// ValidEntityID mirrors HA's valid_entity_id: lower-case slug domain, a dot,
// and a lower-case slug object id, no leading/trailing underscores, no "__".
func ValidEntityID(id string) bool {
	d, o, ok := strings.Cut(id, ".")
	if !ok || d == "" || o == "" || strings.Contains(o, ".") || strings.Contains(id, "__") {
		return false
	}
	if d[0] == '_' || d[len(d)-1] == '_' {
		return false
	}
	for _, s := range []string{d, o} {
		for _, r := range s {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
				return false
			}
		}
	}
	return o[0] != '_' && o[len(o)-1] != '_'
}

package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// auditGate grants everything and keeps what Record saw.
type auditGate struct {
	mu   sync.Mutex
	seen []audited
}

type audited struct {
	tool, kind, outcome string
	undo                *Undo
}

func (g *auditGate) Authorize(ctx context.Context, c *Call, summary string) error { return nil }

func (g *auditGate) Record(ctx context.Context, c *Call, summary, outcome string, took time.Duration, detail string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.seen = append(g.seen, audited{c.Tool, c.Kind, outcome, c.UndoInfo()})
}

func TestAuditRecordsEveryChangeWithKindAndUndo(t *testing.T) {
	type args struct {
		EntityID string `json:"entity_id"`
		Fail     bool   `json:"fail,omitempty"`
	}
	def := func(name, toolset string, readOnly bool, cat Category, kind string, undo *Undo) *Tool {
		return Define(Spec[args, map[string]string]{
			Name: name, Toolset: toolset, Description: name, ReadOnly: readOnly, Category: cat, Kind: kind,
			Summary: func(a args) string { return a.EntityID },
			Handler: func(ctx context.Context, c *Call, a args) (map[string]string, error) {
				if undo != nil {
					c.Undoable(*undo)
				}
				if a.Fail {
					return nil, errors.New("it broke")
				}
				return map[string]string{"ok": a.EntityID}, nil
			},
		})
	}
	stateUndo := UndoOf("state", map[string]string{"light.a": "off"}, "turns light.a off again")
	tools := []*Tool{
		def("t_service", "states", false, "", "", &stateUndo),
		def("t_automation", "automations", false, "", "", nil),
		def("t_write", "files", false, Filesystem, "", nil),
		def("t_read", "states", true, "", "", nil),
		def("t_read_file", "files", true, Filesystem, "", nil),
		def("t_hub_rule", "hubitat_rules", false, "", "", nil),
		def("t_hub_admin", "hubitat_admin", false, "hub_admin", "", nil),
		def("t_sql", "database", false, DatabaseWrite, "", nil),
		def("t_declared", "states", false, "", KindConfig, nil),
	}
	for _, reads := range []bool{false, true} {
		gate := &auditGate{}
		cs := testServer(t, &Env{Gate: gate, AuditReads: reads}, tools...)
		for _, tc := range []struct {
			tool     string
			fail     bool
			recorded bool
			kind     string
			undo     bool
		}{
			{"t_service", false, true, KindDevice, true},
			{"t_service", true, true, KindDevice, false}, // failed: nothing to undo
			{"t_automation", false, true, KindConfig, false},
			{"t_write", false, true, KindFile, false},
			{"t_read", false, reads, "", false},
			{"t_read_file", false, true, KindFile, false}, // privileged reads are always recorded
			{"t_hub_rule", false, true, KindConfig, false},
			{"t_hub_admin", false, true, KindHub, false},
			{"t_sql", false, true, KindDatabase, false},
			{"t_declared", false, true, KindConfig, false},
		} {
			before := len(gate.seen)
			call(t, cs, false, tc.tool, map[string]any{"entity_id": "light.a", "fail": tc.fail})
			got := gate.seen[before:]
			if !tc.recorded {
				if len(got) != 0 {
					t.Errorf("reads=%v %s: recorded %+v, want nothing", reads, tc.tool, got)
				}
				continue
			}
			if len(got) != 1 {
				t.Errorf("reads=%v %s (fail=%v): %d records, want 1", reads, tc.tool, tc.fail, len(got))
				continue
			}
			if got[0].kind != tc.kind {
				t.Errorf("%s: kind %q, want %q", tc.tool, got[0].kind, tc.kind)
			}
			if (got[0].undo != nil && got[0].undo.Possible()) != tc.undo {
				t.Errorf("%s (fail=%v): undo %+v, want possible=%v", tc.tool, tc.fail, got[0].undo, tc.undo)
			}
			if read := strings.HasPrefix(tc.tool, "t_read"); read != (got[0].undo != nil && got[0].undo.Read) {
				t.Errorf("%s: undo %+v, want marked as a read: %v", tc.tool, got[0].undo, read)
			}
			if tc.undo && (got[0].undo.Type != "state" || string(got[0].undo.Ref) != `{"light.a":"off"}`) {
				t.Errorf("%s: undo %+v", tc.tool, got[0].undo)
			}
		}
	}
}

func TestUndoOfAndNotUndoable(t *testing.T) {
	c := &Call{}
	if c.UndoInfo() != nil {
		t.Fatal("a new call has an undo")
	}
	c.NotUndoable("a sent notification cannot be taken back")
	if u := c.UndoInfo(); u == nil || u.Possible() || u.Note == "" {
		t.Errorf("NotUndoable = %+v, want a note and no type", u)
	}
	bad := UndoOf("config", func() {}, "")
	if bad.Possible() || bad.Note == "" {
		t.Errorf("an unmarshalable ref gave %+v, want a not-undoable note", bad)
	}
	good := UndoOf("config", map[string]any{"item": "script:x", "version": 2}, "back to version 2")
	var ref map[string]any
	if !good.Possible() || json.Unmarshal(good.Ref, &ref) != nil || ref["item"] != "script:x" {
		t.Errorf("UndoOf = %+v", good)
	}
}

package recorder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	simrec "github.com/hamcp/hamcp/dev/sim/recorder"
)

// recorded is what the test wrote through the simulator's recorder: the
// independent expectation StateHistory is checked against.
type recorded struct {
	entityID string
	state    string
	attrs    map[string]any
	lc, lu   time.Time
}

var (
	historyOnce sync.Once
	historyPath string
	historyRows []recorded
	historyErr  error
)

// recordHistory writes 3 days of two entities the way HA's recorder does
// (once per test binary) and returns every row written, in order.
func recordHistory(t *testing.T) (string, []recorded) {
	t.Helper()
	historyOnce.Do(func() {
		dir, err := os.MkdirTemp("", "hamcp-recorder-history-")
		if err != nil {
			historyErr = err
			return
		}
		cleanups = append(cleanups, func() { os.RemoveAll(dir) })
		historyPath = filepath.Join(dir, "home-assistant_v2.db")
		historyRows, historyErr = writeHistory(historyPath)
	})
	if historyErr != nil {
		t.Fatal(historyErr)
	}
	return historyPath, historyRows
}

func writeHistory(path string) ([]recorded, error) {
	rec, err := simrec.Create(path)
	if err != nil {
		return nil, err
	}
	defer rec.Close()
	var out []recorded
	base := fixedNow.Add(-72 * time.Hour)
	prevTemp := ""
	for i := 0; i < 600; i++ {
		lu := base.Add(time.Duration(i) * 7 * time.Minute).Add(time.Duration(i%5) * 137 * time.Microsecond)
		r := recorded{entityID: "sensor.a_temp", lu: lu,
			attrs: map[string]any{"unit_of_measurement": "°C", "friendly_name": "A", "n": i % 3}}
		// Every fourth row changes only attributes: same state, old last_changed.
		if i%4 == 3 {
			r.state = prevTemp
		} else {
			r.state = fmt.Sprintf("%.1f", 20+float64(i%17)/2)
		}
		if i%9 == 0 && i > 0 {
			r.state = "unavailable"
		}
		if i == 599 {
			r.state, r.attrs = "", nil // the entity was removed
		}
		prevTemp = r.state
		out = append(out, r)
		// A thermostat whose current temperature changes while its mode stays: attribute-only
		// rows, which HA's history keeps even for significant changes only.
		if i%10 == 0 {
			out = append(out, recorded{entityID: "climate.c", state: []string{"heat", "heat", "off"}[i/10%3], lu: lu.Add(2 * time.Second),
				attrs: map[string]any{"current_temperature": 18 + i%7, "temperature": 21}})
		}
		if i%6 == 0 {
			out = append(out, recorded{entityID: "light.b", state: []string{"on", "off"}[i/6%2], lu: lu.Add(time.Second),
				attrs: map[string]any{"brightness": i % 255}})
		}
	}
	lastChange := map[string]time.Time{}
	lastState := map[string]string{}
	for i := range out {
		r := &out[i]
		r.lc = r.lu
		if prev, ok := lastState[r.entityID]; ok && prev == r.state {
			r.lc = lastChange[r.entityID]
		}
		lastState[r.entityID], lastChange[r.entityID] = r.state, r.lc
		s := simrec.State{EntityID: r.entityID, State: r.state, Attributes: r.attrs, LastUpdated: r.lu}
		if !r.lc.Equal(r.lu) {
			s.LastChanged = r.lc
		}
		if err := rec.RecordState(context.Background(), s); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func expect(all []recorded, entity string, start, end time.Time, significant bool) []recorded {
	var out []recorded
	for _, r := range all {
		if r.entityID == entity && !r.lu.Before(start) && r.lu.Before(end) && (!significant || r.lc.Equal(r.lu) || strings.HasPrefix(entity, "climate.")) {
			out = append(out, r)
		}
	}
	return out
}

func sameAttrs(t *testing.T, got json.RawMessage, want map[string]any) {
	t.Helper()
	if want == nil {
		want = map[string]any{}
	}
	var g, w map[string]any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("attributes %s: %v", got, err)
	}
	b, _ := json.Marshal(want)
	json.Unmarshal(b, &w)
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("attributes %s, want %s", got, b)
	}
}

func TestStateHistory(t *testing.T) {
	path, all := recordHistory(t)
	db := openDB(t, path, Options{})
	first, last := all[0].lu, all[len(all)-1].lu
	tests := []struct {
		name        string
		entity      string
		start, end  time.Time
		opts        []HistoryOption
		pageSize    int
		significant bool
	}{
		{"everything, paged by 50, with attributes", "sensor.a_temp", first, last.Add(time.Hour), []HistoryOption{WithAttributes}, 50, false},
		{"one day", "sensor.a_temp", fixedNow.Add(-48 * time.Hour), fixedNow.Add(-24 * time.Hour), nil, 100, false},
		{"start inclusive, end exclusive", "sensor.a_temp", all[10].lu, all[40].lu, nil, 7, false},
		{"significant changes only", "sensor.a_temp", first, last.Add(time.Hour), []HistoryOption{SignificantOnly, WithAttributes}, 1000, true},
		{"second entity", "light.b", first, last.Add(time.Hour), []HistoryOption{WithAttributes}, 13, false},
		{"significant changes only keep a thermostat's attribute changes", "climate.c", first, last.Add(time.Hour), []HistoryOption{SignificantOnly, WithAttributes}, 1000, true},
		{"nothing in range", "light.b", first.Add(-48 * time.Hour), first.Add(-24 * time.Hour), nil, 10, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := expect(all, tc.entity, tc.start, tc.end, tc.significant)
			var got []StateRow
			for offset := 0; ; offset += tc.pageSize {
				page, total, err := db.StateHistory(context.Background(), tc.entity, tc.start, tc.end, tc.pageSize, offset, tc.opts...)
				if err != nil {
					t.Fatal(err)
				}
				if total != len(want) {
					t.Fatalf("total = %d, want %d", total, len(want))
				}
				got = append(got, page...)
				if offset+tc.pageSize >= total {
					break
				}
			}
			if len(got) != len(want) {
				t.Fatalf("%d rows, want %d", len(got), len(want))
			}
			withAttrs := len(tc.opts) > 0 && tc.opts[len(tc.opts)-1] == WithAttributes
			for i, g := range got {
				w := want[i]
				if g.EntityID != w.entityID || g.State != w.state || !g.LastUpdated.Equal(w.lu) || !g.LastChanged.Equal(w.lc) {
					t.Fatalf("row %d = %+v, want %+v", i, g, w)
				}
				if withAttrs {
					sameAttrs(t, g.Attributes, w.attrs)
				} else if g.Attributes != nil {
					t.Fatalf("row %d has attributes without WithAttributes", i)
				}
				if i > 0 && g.LastUpdated.Before(got[i-1].LastUpdated) {
					t.Fatalf("row %d is older than row %d", i, i-1)
				}
			}
		})
	}
}

func TestStateHistoryStartState(t *testing.T) {
	path, all := recordHistory(t)
	db := openDB(t, path, Options{})
	start, end := all[100].lu, all[130].lu
	inRange := expect(all, "sensor.a_temp", start, end, false)
	var before recorded
	for _, r := range all {
		if r.entityID == "sensor.a_temp" && r.lu.Before(start) {
			before = r
		}
	}
	tests := []struct {
		name          string
		limit, offset int
		want          []recorded
		wantFlag      bool
	}{
		{"first page starts with the state at start", 5, 0, append([]recorded{before}, inRange[:4]...), true},
		{"second page continues in range", 5, 5, inRange[4:9], false},
		{"limit 1 is just the start state", 1, 0, []recorded{before}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows, total, err := db.StateHistory(context.Background(), "sensor.a_temp", start, end, tc.limit, tc.offset, WithStartState)
			if err != nil {
				t.Fatal(err)
			}
			if total != len(inRange)+1 {
				t.Errorf("total = %d, want %d", total, len(inRange)+1)
			}
			if len(rows) != len(tc.want) {
				t.Fatalf("%d rows, want %d", len(rows), len(tc.want))
			}
			for i, r := range rows {
				if r.State != tc.want[i].state || !r.LastUpdated.Equal(tc.want[i].lu) {
					t.Fatalf("row %d = %+v, want %+v", i, r, tc.want[i])
				}
			}
			if rows[0].BeforeStart != tc.wantFlag {
				t.Errorf("BeforeStart = %v, want %v", rows[0].BeforeStart, tc.wantFlag)
			}
		})
	}
	// After the last row: nothing in range, but the last state still holds.
	rows, total, err := db.StateHistory(context.Background(), "light.b", fixedNow.Add(time.Hour), fixedNow.Add(2*time.Hour), 10, 0, WithStartState)
	if err != nil || total != 1 || len(rows) != 1 || !rows[0].BeforeStart {
		t.Fatalf("after the data: rows=%+v total=%d err=%v, want the last state", rows, total, err)
	}
}

func TestStateHistoryErrors(t *testing.T) {
	db := openDB(t, generated(t), Options{})
	day := fixedNow.Add(-24 * time.Hour)
	tests := []struct {
		name          string
		entity        string
		start, end    time.Time
		limit, offset int
		want          string
		is            error
	}{
		{"unknown entity", "sensor.nope", day, fixedNow, 10, 0, "sensor.nope", ErrNotFound},
		{"bad entity id", "Sensor Kitchen", day, fixedNow, 10, 0, "entity_id", nil},
		{"sql in entity id", "sensor.x' OR 1=1 --", day, fixedNow, 10, 0, "entity_id", nil},
		{"end before start", "sensor.kitchen_temperature", fixedNow, day, 10, 0, "end", nil},
		{"missing start", "sensor.kitchen_temperature", time.Time{}, fixedNow, 10, 0, "start", nil},
		{"negative limit", "sensor.kitchen_temperature", day, fixedNow, -1, 0, "limit", nil},
		{"negative offset", "sensor.kitchen_temperature", day, fixedNow, 10, -5, "offset", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := db.StateHistory(context.Background(), tc.entity, tc.start, tc.end, tc.limit, tc.offset)
			if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Fatalf("err = %v, want one naming %q", err, tc.want)
			}
		})
	}
	capped := openDB(t, generated(t), Options{MaxRows: 100})
	rows, total, err := capped.StateHistory(context.Background(), "sensor.kitchen_temperature", day, fixedNow, 5000, 0)
	if err != nil || len(rows) != 100 || total <= 100 {
		t.Fatalf("limit above MaxRows: %d rows of %d, %v; want the cap of 100", len(rows), total, err)
	}
}

// TestStateHistoryPlan: every history statement runs on HA's
// (metadata_id, last_updated_ts) index without a sort.
func TestStateHistoryPlan(t *testing.T) {
	db := openDB(t, generated(t), Options{})
	for _, attrs := range []bool{false, true} {
		for _, sig := range []bool{false, true} {
			q := historySQL(attrs, sig)
			for name, stmt := range map[string]string{"before": q.before, "count": q.count, "page": q.page} {
				res, err := db.Query(context.Background(), "EXPLAIN QUERY PLAN "+stmt, []any{1, 2, 3, 4, 5}[:strings.Count(stmt, "?")], 0, 0)
				if err != nil {
					t.Fatal(err)
				}
				plan := fmt.Sprint(res.Rows)
				if !strings.Contains(plan, "ix_states_metadata_id_last_updated_ts") || strings.Contains(plan, "TEMP B-TREE") {
					t.Errorf("attrs=%v significant=%v %s: plan %s", attrs, sig, name, plan)
				}
			}
		}
	}
}

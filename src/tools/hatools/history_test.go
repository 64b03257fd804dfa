package hatools_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hamcp/hamcp/dev/sim"
	"github.com/hamcp/hamcp/dev/testkit/tooltest"
	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/recorder"
	"github.com/hamcp/hamcp/src/toolkit"
	"github.com/hamcp/hamcp/src/tools/dbtools"
	"github.com/hamcp/hamcp/src/tools/hatools"
)

// historyDays of recorder history behind the history tests (periods may reach past it).
const historyDays = 1

var (
	historyOnce sync.Once
	historyFx   *tooltest.Fixture
	historyErr  error
)

// historyFixture is one simulated home with its recorder file, started on first use and shared
// by the history tests (closed in TestMain).
func historyFixture(t testing.TB) *tooltest.Fixture {
	t.Helper()
	historyOnce.Do(func() {
		historyFx, historyErr = tooltest.Start(tooltest.Options{HistoryDays: historyDays, Tools: func(f *tooltest.Fixture) []*toolkit.Tool { return nil }})
	})
	if historyErr != nil {
		t.Fatal(historyErr)
	}
	return historyFx
}

func TestMain(m *testing.M) {
	code := m.Run()
	if historyFx != nil {
		historyFx.Close()
	}
	os.Exit(code)
}

// spyRecorder is the real recorder file (through dbtools' opener, as src/app wires it) that
// remembers which entities reached it.
type spyRecorder struct {
	rec   hatools.Recorder
	calls atomic.Int64
	mu    sync.Mutex
	ids   []string
}

func (s *spyRecorder) StateHistory(ctx context.Context, id string, start, end time.Time, limit, offset int, opts ...recorder.HistoryOption) ([]recorder.StateRow, int, error) {
	s.calls.Add(1)
	s.mu.Lock()
	s.ids = append(s.ids, id)
	s.mu.Unlock()
	return s.rec.StateHistory(ctx, id, start, end, limit, offset, opts...)
}

// historyView serves ha_get_history over ha, reading the recorder file at path (none when "").
func historyView(t *testing.T, f *tooltest.Fixture, ha *homeassistant.Client, path string) (*tooltest.Session, *spyRecorder) {
	t.Helper()
	d := hatools.Deps{HA: ha}
	var spy *spyRecorder
	if path != "" {
		o := &dbtools.Opener{Options: recorder.Options{Path: path, MaxResultBytes: toolkit.DefaultMaxResponseBytes}}
		t.Cleanup(func() { o.Close() })
		spy = &spyRecorder{rec: o}
		d.Recorder = spy
	}
	var tools []*toolkit.Tool
	for _, tool := range hatools.Tools(d) {
		if tool.Name() == "ha_get_history" {
			tools = append(tools, tool)
		}
	}
	return f.Serving(tools).Session(t), spy // a session without any grant
}

// deadHA is a client of a Home Assistant that is not running: its port refuses connections.
func deadHA(t *testing.T) *homeassistant.Client {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ha, err := homeassistant.New(homeassistant.Config{BaseURL: "http://" + addr, Token: "token-of-a-stopped-home"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ha.Close() })
	return ha
}

type histRow struct {
	State      string         `json:"state"`
	At         string         `json:"at"`
	Attributes map[string]any `json:"attributes"`
}

type histResult struct {
	Start    string `json:"start"`
	End      string `json:"end"`
	Source   string `json:"source"`
	Note     string `json:"note"`
	Entities []struct {
		EntityID   string    `json:"entity_id"`
		Total      int       `json:"total"`
		Offset     int       `json:"offset"`
		NextOffset *int      `json:"next_offset"`
		Rows       []histRow `json:"rows"`
	} `json:"entities"`
	Missing []string `json:"no_data"`
}

// histSensor is a numeric sensor of the simulated home with recorded history.
const histSensor = "sensor.kitchen_temperature"

func TestHistoryDeclaresNoGrant(t *testing.T) {
	t.Parallel()
	for _, tool := range hatools.Tools(hatools.Deps{}) {
		if tool.Name() == "ha_get_history" && (tool.Category() != "" || len(tool.Grants()) != 0 || !tool.ReadOnly()) {
			t.Errorf("ha_get_history: category %q grants %v read-only %v", tool.Category(), tool.Grants(), tool.ReadOnly())
		}
	}
}

// Which way ha_get_history reads: through HA; from the recorder file when HA is down or for few
// entities over a long period; HA alone without a file. No session holds any grant.
func TestHistorySources(t *testing.T) {
	t.Parallel()
	f := historyFixture(t)
	path := f.Home.RecorderPath()
	six := []string{histSensor, "sensor.living_room_temperature", "sensor.bedroom_temperature", "light.hallway", "sun.sun", "cover.bedroom_blinds"}
	for _, c := range []struct {
		name     string
		ha       func(*testing.T) *homeassistant.Client
		path     string
		args     map[string]any
		source   string
		recCalls int64
		note     bool
	}{
		{"a day through HA", nil, path, map[string]any{"entity_ids": []string{histSensor}}, "home_assistant", 0, false},
		{"one entity over 72 h from the file", nil, path, map[string]any{"entity_ids": []string{histSensor}, "hours": 72}, "recorder", 1, false},
		{"five entities over four days from the file", nil, path, map[string]any{"entity_ids": six[:5], "hours": 96}, "recorder", 5, false},
		{"six entities over four days through HA", nil, path, map[string]any{"entity_ids": six, "hours": 96}, "home_assistant", 0, false},
		{"71 hours through HA", nil, path, map[string]any{"entity_ids": []string{histSensor}, "hours": 71}, "home_assistant", 0, false},
		{"a long period without a file through HA", nil, "", map[string]any{"entity_ids": []string{histSensor}, "hours": 96}, "home_assistant", 0, false},
		{"a file that is missing: HA answers", nil, filepath.Join(t.TempDir(), "home-assistant_v2.db"), map[string]any{"entity_ids": []string{histSensor}, "hours": 96}, "home_assistant", 1, false},
		{"HA down: the file answers", deadHA, path, map[string]any{"entity_ids": []string{histSensor}}, "recorder", 1, true},
		{"HA down, long period", deadHA, path, map[string]any{"entity_ids": six, "hours": 96}, "recorder", 6, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ha := f.HA
			if c.ha != nil {
				ha = c.ha(t)
			}
			s, spy := historyView(t, f, ha, c.path)
			var r histResult
			s.OK(t, "ha_get_history", c.args, &r)
			var calls int64
			if spy != nil {
				calls = spy.calls.Load()
			}
			if r.Source != c.source || calls != c.recCalls || (r.Note != "") != c.note || len(r.Entities) == 0 || len(r.Entities[0].Rows) == 0 {
				t.Errorf("source %q (want %q), %d recorder calls (want %d), note %q, %d entities", r.Source, c.source, calls, c.recCalls, r.Note, len(r.Entities))
			}
		})
	}
	t.Run("HA down without a file", func(t *testing.T) {
		t.Parallel()
		s, _ := historyView(t, f, deadHA(t), "")
		tooltest.ErrCase{Tool: "ha_get_history", Args: map[string]any{"entity_ids": []string{histSensor}}, Code: "backend_unavailable", Contains: "Home Assistant"}.Check(t, s)
	})
	t.Run("HA down and the file missing", func(t *testing.T) {
		t.Parallel()
		s, _ := historyView(t, f, deadHA(t), filepath.Join(t.TempDir(), "home-assistant_v2.db"))
		tooltest.ErrCase{Tool: "ha_get_history", Args: map[string]any{"entity_ids": []string{histSensor}}, Code: "backend_unavailable", Contains: "recorder file cannot be read"}.Check(t, s)
	})
}

// Both ways give the same rows for the same question: the state at start dated start, then each
// change; paging, attributes on request and significant_changes_only behave alike.
func TestHistorySameOnBothPaths(t *testing.T) {
	t.Parallel()
	f := historyFixture(t)
	viaHA, _ := historyView(t, f, f.HA, "")
	viaFile, _ := historyView(t, f, deadHA(t), f.Home.RecorderPath())
	// A fixed period in the past (the live home keeps recording), not on a whole second.
	end := time.Now().UTC().Add(-time.Minute).Truncate(time.Second).Add(-300 * time.Millisecond)
	start := end.Add(-20 * time.Hour)
	period := map[string]any{"start": start.Format(time.RFC3339Nano), "end": end.Format(time.RFC3339Nano)}
	with := func(kv ...any) map[string]any {
		m := map[string]any{"entity_ids": []string{histSensor, "light.hallway"}}
		for k, v := range period {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	var all histResult
	viaHA.OK(t, "ha_get_history", with("limit", 1000), &all)
	if len(all.Entities) != 2 || all.Entities[0].Total < 5 {
		t.Fatalf("20 h of two entities: %+v", all)
	}
	for _, c := range []struct {
		name  string
		args  map[string]any
		check func(histResult) bool
	}{
		{"every row", with("limit", 1000), func(r histResult) bool {
			return r.Entities[0].Rows[0].At == all.Start && r.Entities[0].NextOffset == nil
		}},
		{"a page", with("limit", 3), func(r histResult) bool {
			n := r.Entities[0].NextOffset
			return len(r.Entities[0].Rows) == 3 && n != nil && *n == 3 && r.Entities[0].Total == all.Entities[0].Total &&
				reflect.DeepEqual(r.Entities[0].Rows, all.Entities[0].Rows[:3])
		}},
		{"the next page", with("limit", 3, "offset", 3), func(r histResult) bool {
			return r.Entities[0].Offset == 3 && reflect.DeepEqual(r.Entities[0].Rows, all.Entities[0].Rows[3:6])
		}},
		{"past the last row", with("offset", 5000), func(r histResult) bool {
			return len(r.Entities) == 2 && len(r.Entities[0].Rows) == 0 && r.Entities[0].Total == all.Entities[0].Total
		}},
		{"attributes on request", with("limit", 2, "include_attributes", true), func(r histResult) bool {
			return r.Entities[0].Rows[0].Attributes["unit_of_measurement"] != nil && r.Entities[0].Rows[1].Attributes != nil
		}},
		{"repeated states stay dropped", with("limit", 1000, "significant_changes_only", false), func(r histResult) bool {
			return r.Entities[1].Total == all.Entities[1].Total
		}},
		{"every update", with("limit", 1000, "significant_changes_only", false, "minimal_response", false), func(r histResult) bool {
			return r.Entities[1].Total > all.Entities[1].Total // the light's attribute-only updates
		}},
		{"an entity without history", map[string]any{"entity_ids": []string{histSensor, "sensor.never_recorded"}, "start": period["start"], "end": period["end"]}, func(r histResult) bool {
			return len(r.Entities) == 1 && slices.Equal(r.Missing, []string{"sensor.never_recorded"})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var a, b histResult
			viaHA.OK(t, "ha_get_history", c.args, &a)
			viaFile.OK(t, "ha_get_history", c.args, &b)
			if a.Source != "home_assistant" || b.Source != "recorder" || !c.check(a) {
				t.Fatalf("through HA (%s): %+v", a.Source, a)
			}
			a.Source, a.Note, b.Source, b.Note = "", "", "", ""
			if !reflect.DeepEqual(a, b) {
				t.Errorf("the two ways differ:\nHA:   %.2000s\nfile: %.2000s", fmt.Sprint(a), fmt.Sprint(b))
			}
		})
	}
}

// The no-grant path reads only the states of the entities asked for: an entity id written like
// SQL is refused by validation before anything reaches the file, and a table's name that looks
// like an entity id finds no entity.
func TestHistoryRecorderReadsOnlyStates(t *testing.T) {
	t.Parallel()
	f := historyFixture(t)
	for _, c := range []struct {
		name string
		id   string
	}{
		{"a quote", "sensor.x' OR '1'='1"},
		{"a second statement", "sensor.x; SELECT * FROM event_data"},
		{"a comment", "sensor.x--"},
		{"a union", "sensor.x UNION SELECT shared_data FROM event_data"},
		{"no domain", "event_data"},
		{"upper case", "Sensor.Kitchen_Temperature"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s, spy := historyView(t, f, deadHA(t), f.Home.RecorderPath())
			tooltest.ErrCase{Tool: "ha_get_history", Args: map[string]any{"entity_ids": []string{histSensor, c.id}, "hours": 96}, Code: "invalid_argument", Field: "entity_ids[1]"}.Check(t, s)
			if n := spy.calls.Load(); n != 0 {
				t.Errorf("%d calls reached the recorder", n)
			}
		})
	}
	t.Run("table names as entity ids", func(t *testing.T) {
		t.Parallel()
		s, spy := historyView(t, f, deadHA(t), f.Home.RecorderPath())
		var r histResult
		s.OK(t, "ha_get_history", map[string]any{"entity_ids": []string{"events.event_data", "event_data.shared_data", "sqlite_master.sql"}, "hours": 96}, &r)
		if r.Source != "recorder" || len(r.Entities) != 0 || len(r.Missing) != 3 || !slices.Equal(spy.ids, []string{"events.event_data", "event_data.shared_data", "sqlite_master.sql"}) {
			t.Errorf("%+v (recorder asked for %v)", r, spy.ids)
		}
	})
}

func TestHistoryArguments(t *testing.T) {
	t.Parallel()
	f := historyFixture(t)
	s, _ := historyView(t, f, f.HA, f.Home.RecorderPath())
	for _, c := range []tooltest.ErrCase{
		{Name: "no entities", Args: map[string]any{}, Code: "invalid_argument", Field: "entity_ids"},
		{Name: "21 entities", Args: map[string]any{"entity_ids": slices.Repeat([]string{histSensor}, 21)}, Code: "invalid_argument", Field: "entity_ids"},
		{Name: "hours over ten years", Args: map[string]any{"entity_ids": []string{histSensor}, "hours": 87601}, Code: "invalid_argument", Field: "hours"},
		{Name: "start after end", Args: map[string]any{"entity_ids": []string{histSensor}, "start": "2026-02-01T00:00:00Z", "end": "2026-01-01T00:00:00Z"}, Code: "invalid_argument", Field: "start"},
		{Name: "limit over 1000", Args: map[string]any{"entity_ids": []string{histSensor}, "limit": 1001}, Code: "invalid_argument", Field: "limit"},
	} {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			c.Tool = "ha_get_history"
			c.Check(t, s)
		})
	}
	// Ten years are accepted (the recorder keeps what it keeps).
	var r histResult
	s.OK(t, "ha_get_history", map[string]any{"entity_ids": []string{histSensor}, "hours": 87600, "limit": 1}, &r)
	if r.Source != "recorder" || len(r.Entities) != 1 || !strings.HasPrefix(r.Entities[0].Rows[0].At, "20") {
		t.Errorf("ten years: %+v", r)
	}
}

// BenchmarkHistorySources measures what the long-period rule decides: one busy sensor's history
// read through HA's history API (every row of the period in one answer, paged by hamcp) and
// from the recorder file (count on the index, read one page of 100).
// HAMCP_BENCH_HISTORY_DAYS sets the home's history (default 7).
func BenchmarkHistorySources(b *testing.B) {
	days := 7
	if v := os.Getenv("HAMCP_BENCH_HISTORY_DAYS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			b.Fatal(err)
		}
		days = n
	}
	home, err := sim.Start(context.Background(), sim.Options{HistoryDays: days, Seed: 7})
	if err != nil {
		b.Fatal(err)
	}
	defer home.Close()
	ha, err := homeassistant.New(homeassistant.Config{BaseURL: home.URL(), Token: home.Token()})
	if err != nil {
		b.Fatal(err)
	}
	defer ha.Close()
	rec, err := recorder.Open(recorder.Options{Path: home.RecorderPath()})
	if err != nil {
		b.Fatal(err)
	}
	defer rec.Close()
	end := time.Now().UTC()
	five := []string{histSensor, "sensor.living_room_temperature", "sensor.bedroom_temperature", "sensor.outdoor_temperature", "sensor.house_power"}
	for _, c := range []struct {
		ids   []string
		hours int
	}{{five[:1], 24}, {five[:1], 72}, {five[:1], 168}, {five, 72}, {five, 168}} {
		start := end.Add(-time.Duration(c.hours) * time.Hour)
		name := fmt.Sprintf("%d_entities_%dh", len(c.ids), c.hours)
		b.Run(name+"/home_assistant", func(b *testing.B) {
			var rows int
			for b.Loop() {
				res, err := ha.History(context.Background(), homeassistant.HistoryQuery{EntityIDs: c.ids, Start: start, End: end, MinimalResponse: true, NoAttributes: true, SignificantChangesOnly: true})
				if err != nil || len(res) != len(c.ids) {
					b.Fatal(err, len(res))
				}
				rows = 0
				for _, r := range res {
					rows += len(r)
				}
			}
			b.ReportMetric(float64(rows), "rows")
		})
		b.Run(name+"/recorder", func(b *testing.B) {
			var rows int
			for b.Loop() {
				rows = 0
				for _, id := range c.ids {
					_, n, err := rec.StateHistory(context.Background(), id, start, end, 100, 0, recorder.WithStartState, recorder.SignificantOnly)
					if err != nil {
						b.Fatal(err)
					}
					rows += n
				}
			}
			b.ReportMetric(float64(rows), "rows")
		})
	}
}

package recorder

import (
	"container/heap"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"time"
)

func (o GenerateOptions) validate() error {
	if len(o.Entities) == 0 {
		return errors.New("entities: at least one entity is required (SyntheticEntities(n) makes a plausible set)")
	}
	if o.Days < 1 || o.Days > 3650 {
		return fmt.Errorf("days: %d is out of range; use 1..3650", o.Days)
	}
	if o.Rows < 0 {
		return fmt.Errorf("rows: %d is negative; use 0 for natural density or a target count", o.Rows)
	}
	seen := map[string]bool{}
	for i, e := range o.Entities {
		if err := e.validate(); err != nil {
			return fmt.Errorf("entities[%d]: %w", i, err)
		}
		if seen[e.EntityID] {
			return fmt.Errorf("entities[%d]: entity_id %s appears twice", i, e.EntityID)
		}
		seen[e.EntityID] = true
	}
	return nil
}

func (e EntitySpec) validate() error {
	if !validEntityID(e.EntityID) {
		return fmt.Errorf("entity_id %q: must be domain.object_id in lowercase, e.g. sensor.kitchen_temperature", e.EntityID)
	}
	if e.Every < 0 {
		return fmt.Errorf("every of %s: %s is negative", e.EntityID, e.Every)
	}
	for _, v := range e.Values {
		if v == "" || len(v) > maxStateLen {
			return fmt.Errorf("values of %s: each state must be 1..%d characters", e.EntityID, maxStateLen)
		}
	}
	switch e.Kind {
	case "numeric":
		if math.IsInf(e.Min, 0) || math.IsInf(e.Max, 0) {
			return fmt.Errorf("min/max of %s: must be finite numbers", e.EntityID)
		}
		if !(e.Max > e.Min) {
			return fmt.Errorf("min/max of %s: max (%g) must be greater than min (%g)", e.EntityID, e.Max, e.Min)
		}
		switch e.StateClass {
		case "", "measurement", "total", "total_increasing", "measurement_angle":
		default:
			return fmt.Errorf("state_class of %s: %q is not one of measurement, total, total_increasing, measurement_angle", e.EntityID, e.StateClass)
		}
	case "binary":
		if len(e.Values) != 0 && len(e.Values) != 2 {
			return fmt.Errorf("values of %s: a binary entity has exactly 2 states, e.g. [\"off\",\"on\"]", e.EntityID)
		}
	case "enum":
		if len(e.Values) < 2 {
			return fmt.Errorf("values of %s: an enum entity needs at least 2 states", e.EntityID)
		}
	case "static":
	default:
		return fmt.Errorf("kind of %s: %q is not one of numeric, binary, enum, static", e.EntityID, e.Kind)
	}
	return nil
}

// hasStatistics reports whether HA's sensor platform compiles statistics for
// the entity, and how.
func (e EntitySpec) hasStatistics() (ok, hasSum bool, meanType int) {
	if e.Kind != "numeric" {
		return false, false, MeanNone
	}
	switch e.StateClass {
	case "measurement":
		return true, false, MeanArithmetic
	case "measurement_angle":
		return true, false, MeanCircular
	case "total", "total_increasing":
		return true, true, MeanNone
	}
	return false, false, MeanNone
}

// sampleCounts decides how many rows each entity gets: its natural count
// (span / every), or with rows > 0 that target split by change rate.
func sampleCounts(ents []EntitySpec, span time.Duration, rows int64) []int {
	n := make([]int, len(ents))
	var weights []float64
	total := 0.0
	statics := int64(0)
	for i, e := range ents {
		if e.Kind == "static" {
			n[i] = 1
			statics++
			weights = append(weights, 0)
			continue
		}
		w := float64(span) / float64(defaultEvery(e))
		weights = append(weights, w)
		total += w
		n[i] = max(1, int(w))
	}
	if rows <= 0 || total == 0 {
		return n
	}
	target := rows - statics
	assigned := int64(0)
	for i, w := range weights {
		if w > 0 {
			n[i] = max(1, int(float64(target)*w/total))
			assigned += int64(n[i])
		}
	}
	for i := 0; assigned < target; i = (i + 1) % len(n) {
		if weights[i] > 0 {
			n[i]++
			assigned++
		}
	}
	return n
}

// streamHeap merges entity streams by next timestamp (ties by entity order),
// so state_ids grow with time as in a real recorder.
type streamHeap []*stream

func (h streamHeap) Len() int { return len(h) }
func (h streamHeap) Less(i, j int) bool {
	if h[i].cur.ts != h[j].cur.ts {
		return h[i].cur.ts < h[j].cur.ts
	}
	return h[i].idx < h[j].idx
}
func (h streamHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *streamHeap) Push(x any)   { *h = append(*h, x.(*stream)) }
func (h *streamHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Generate creates a recorder database at path (which must not exist) holding
// Days of realistic history ending at Now: states, attributes, events and
// compiled statistics. It bulk-loads with the journal off and builds the
// indexes afterwards, then switches the file to WAL like a live HA database.
func Generate(ctx context.Context, path string, o GenerateOptions) (GenerateStats, error) {
	if err := o.validate(); err != nil {
		return GenerateStats{}, fmt.Errorf("recorder: generate: %w", err)
	}
	if _, err := os.Stat(path); err == nil {
		return GenerateStats{}, fmt.Errorf("recorder: generate: %s already exists; remove it or pick a new path", path)
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	o.Now = o.Now.UTC()
	g, err := newGenerator(path, o)
	if err != nil {
		return GenerateStats{}, err
	}
	stats, err := g.run(ctx)
	if cerr := g.conn.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		removeDB(path)
		return GenerateStats{}, fmt.Errorf("recorder: generate %s: %w", path, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return GenerateStats{}, err
	}
	stats.Bytes = fi.Size()
	return stats, nil
}

type generator struct {
	o    GenerateOptions
	conn *sql.DB
	now  int64
	span int64
}

func newGenerator(path string, o GenerateOptions) (*generator, error) {
	if _, err := dsn(path, true); err != nil {
		return nil, err
	}
	// Bulk-load settings: no journal, no fsync, exclusive lock, a 128 MB cache.
	// Index sorts spill to temp files rather than RAM, so memory stays bounded.
	conn, err := sql.Open("sqlite", path+"?_pragma=journal_mode(OFF)&_pragma=synchronous(OFF)&_pragma=locking_mode(EXCLUSIVE)"+
		"&_pragma=cache_size(-131072)&_pragma=foreign_keys(0)")
	if err != nil {
		return nil, err
	}
	conn.SetMaxOpenConns(1)
	span := int64(o.Days) * 24 * oneHour
	return &generator{o: o, conn: conn, now: o.Now.UnixMicro(), span: span}, nil
}

func (g *generator) run(ctx context.Context) (GenerateStats, error) {
	var st GenerateStats
	startT := g.o.Now.Add(-time.Duration(g.span) * time.Microsecond)
	if err := initSchema(ctx, g.conn, g.o.Now, false); err != nil {
		return st, err
	}
	w, err := newBulkWriter(ctx, g.conn)
	if err != nil {
		return st, err
	}
	defer w.close()
	statMeta, err := w.writeMeta(g.o.Entities)
	if err != nil {
		return st, err
	}
	if err := g.loadStates(ctx, w, statMeta, &st); err != nil {
		return st, err
	}
	n, err := w.writeEvents(generateEvents(g.o, startT))
	if err != nil {
		return st, err
	}
	st.Events = n
	if err := w.writeRuns(startT, g.o.Now); err != nil {
		return st, err
	}
	if err := w.commit(); err != nil {
		return st, err
	}
	for _, s := range indexDDL() {
		if _, err := g.conn.ExecContext(ctx, s); err != nil {
			return st, fmt.Errorf("build index: %w (%s)", err, s)
		}
	}
	// Leave the file as a live HA database is: WAL, normal sync.
	for _, s := range []string{"PRAGMA locking_mode=NORMAL", "PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL"} {
		if _, err := g.conn.ExecContext(ctx, s); err != nil {
			return st, fmt.Errorf("%s: %w", s, err)
		}
	}
	return st, nil
}

// loadStates runs the producer (stream merge + statistics compile) in its own
// goroutine so it overlaps with SQLite inserts on the writer.
func (g *generator) loadStates(ctx context.Context, w *bulkWriter, statMeta map[int]int64, st *GenerateStats) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan *batch, 4)
	go g.produce(ctx, statMeta, batches)
	for b := range batches {
		if err := w.writeBatch(b); err != nil {
			cancel()
			for range batches { // drain so the producer exits
			}
			return err
		}
		st.States += int64(len(b.states))
		st.Attributes += int64(len(b.attrs))
		st.Statistics += int64(len(b.hourly) + len(b.short))
	}
	return ctx.Err()
}

type attrRow struct {
	id   int64
	json string
}

type stateRow struct {
	id, old, attrID, meta int64
	state                 string
	lu, lc                int64 // lc 0 => NULL
	ctx                   []byte
}

type batch struct {
	attrs         []attrRow
	states        []stateRow
	short, hourly []statRow
}

const batchRows = 4096

func (g *generator) produce(ctx context.Context, statMeta map[int]int64, out chan<- *batch) {
	defer close(out)
	ents := g.o.Entities
	start := g.now - g.span
	counts := sampleCounts(ents, time.Duration(g.span)*time.Microsecond, g.o.Rows)
	b := &batch{}
	send := func() bool {
		select {
		case out <- b:
			b = &batch{}
			return true
		case <-ctx.Done():
			return false
		}
	}
	accs := make([]*statAcc, len(ents))
	for i, e := range ents {
		ok, hasSum, mt := e.hasStatistics()
		if !ok {
			continue
		}
		accs[i] = &statAcc{meta: statMeta[i], hasSum: hasSum, circular: mt == MeanCircular, now: g.now,
			emitShort: func(r statRow) { b.short = append(b.short, r) },
			emitHour:  func(r statRow) { b.hourly = append(b.hourly, r) }}
	}
	h := make(streamHeap, 0, len(ents))
	for i, e := range ents {
		s := newStream(e, i, g.o.Seed, start, g.span, counts[i])
		if s.next() {
			h = append(h, s)
		}
	}
	heap.Init(&h)
	attrIDs := map[string]int64{}
	lastID := make([]int64, len(ents))
	var stateID int64
	for h.Len() > 0 {
		s := h[0]
		c := s.cur
		attrID, ok := attrIDs[c.attrs]
		if !ok {
			attrID = int64(len(attrIDs) + 1)
			attrIDs[c.attrs] = attrID
			b.attrs = append(b.attrs, attrRow{attrID, c.attrs})
		}
		stateID++
		row := stateRow{id: stateID, old: lastID[s.idx], attrID: attrID, meta: int64(s.idx + 1), state: c.state, lu: c.ts, ctx: c.ctx}
		if c.lastChanged != c.ts {
			row.lc = c.lastChanged
		}
		lastID[s.idx] = stateID
		b.states = append(b.states, row)
		if a := accs[s.idx]; a != nil {
			a.add(c.ts, c.value)
		}
		if s.next() {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
		if len(b.states) >= batchRows && !send() {
			return
		}
	}
	for _, a := range accs {
		if a != nil {
			a.finish()
		}
	}
	send()
}

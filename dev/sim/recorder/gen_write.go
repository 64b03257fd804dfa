package recorder

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// bulkWriter inserts generated rows with prepared multi-row statements inside
// long transactions: per-statement overhead, not SQLite, dominates otherwise.
type bulkWriter struct {
	ctx   context.Context
	conn  *sql.DB
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
	rows  int // rows since the last commit
	args  []any
}

const (
	multiRows   = 512       // rows per multi-row INSERT
	commitEvery = 1_000_000 // rows per transaction
)

func newBulkWriter(ctx context.Context, conn *sql.DB) (*bulkWriter, error) {
	w := &bulkWriter{ctx: ctx, conn: conn, stmts: map[string]*sql.Stmt{}}
	return w, w.begin()
}

func (w *bulkWriter) begin() error {
	tx, err := w.conn.BeginTx(w.ctx, nil)
	if err != nil {
		return err
	}
	w.tx = tx
	clear(w.stmts)
	return nil
}

func (w *bulkWriter) commit() error {
	for _, s := range w.stmts {
		s.Close()
	}
	clear(w.stmts)
	if w.tx == nil {
		return nil
	}
	err := w.tx.Commit()
	w.tx = nil
	return err
}

func (w *bulkWriter) close() {
	if w.tx != nil {
		w.tx.Rollback()
	}
}

// insert writes rows of ncols values each from w.args with INSERT INTO head
// VALUES (...),(...): full chunks through a cached statement.
func (w *bulkWriter) insert(head string, ncols int) error {
	args := w.args
	group := "(" + placeholders(ncols) + ")"
	for len(args) > 0 {
		n := min(len(args)/ncols, multiRows)
		key := fmt.Sprintf("%s/%d", head, n)
		st, ok := w.stmts[key]
		if !ok {
			q := head + " VALUES " + strings.TrimSuffix(strings.Repeat(group+",", n), ",")
			var err error
			if st, err = w.tx.PrepareContext(w.ctx, q); err != nil {
				return err
			}
			w.stmts[key] = st
		}
		if _, err := st.ExecContext(w.ctx, args[:n*ncols]...); err != nil {
			return fmt.Errorf("%s: %w", head, err)
		}
		args = args[n*ncols:]
		w.rows += n
	}
	w.args = w.args[:0]
	return nil
}

func nullTS(us int64) any {
	if us == 0 {
		return nil
	}
	return float64(us) / 1e6
}

func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

func nullF(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func (w *bulkWriter) writeBatch(b *batch) error {
	for _, a := range b.attrs {
		w.args = append(w.args, a.id, fnv1a32([]byte(a.json)), a.json)
	}
	if err := w.insert("INSERT INTO state_attributes (attributes_id, hash, shared_attrs)", 3); err != nil {
		return err
	}
	for _, s := range b.states {
		w.args = append(w.args, s.id, s.state, nullTS(s.lc), float64(s.lu)/1e6, nullID(s.old), s.attrID, 0, s.ctx, s.meta)
	}
	if err := w.insert("INSERT INTO states (state_id, state, last_changed_ts, last_updated_ts, old_state_id, attributes_id, origin_idx, context_id_bin, metadata_id)", 9); err != nil {
		return err
	}
	if err := w.writeStats("statistics_short_term", b.short); err != nil {
		return err
	}
	if err := w.writeStats("statistics", b.hourly); err != nil {
		return err
	}
	if w.rows >= commitEvery {
		w.rows = 0
		if err := w.commit(); err != nil {
			return err
		}
		return w.begin()
	}
	return nil
}

// writeStats inserts compiled periods; created_ts is when HA would have
// compiled them, 10 s after the period ended.
func (w *bulkWriter) writeStats(tbl string, rows []statRow) error {
	for _, r := range rows {
		length := fiveMin
		if tbl == "statistics" {
			length = oneHour
		}
		w.args = append(w.args, float64(r.start+length)/1e6+10, r.meta, float64(r.start)/1e6,
			nullF(r.mean), nullF(r.min), nullF(r.max), nullF(r.state), nullF(r.sum))
	}
	return w.insert("INSERT INTO "+tbl+" (created_ts, metadata_id, start_ts, mean, min, max, state, sum)", 8)
}

// writeMeta inserts states_meta (metadata_id = entity index + 1) and
// statistics_meta for entities with a state_class; it returns entity index →
// statistics_meta id.
func (w *bulkWriter) writeMeta(ents []EntitySpec) (map[int]int64, error) {
	for i, e := range ents {
		w.args = append(w.args, int64(i+1), e.EntityID)
	}
	if err := w.insert("INSERT INTO states_meta (metadata_id, entity_id)", 2); err != nil {
		return nil, err
	}
	out := map[int]int64{}
	for i, e := range ents {
		ok, hasSum, meanType := e.hasStatistics()
		if !ok {
			continue
		}
		id := int64(len(out) + 1)
		out[i] = id
		var unit any
		if e.Unit != "" {
			unit = e.Unit
		}
		w.args = append(w.args, id, e.EntityID, "recorder", unit, unitClass(e.Unit), meanType == MeanArithmetic, hasSum, nil, meanType)
	}
	return out, w.insert("INSERT INTO statistics_meta (id, statistic_id, source, unit_of_measurement, unit_class, has_mean, has_sum, name, mean_type)", 9)
}

// writeRuns adds the recorder run that has been going since the history
// began and the statistics runs HA keeps for the purge window.
func (w *bulkWriter) writeRuns(start, now time.Time) error {
	if _, err := w.tx.ExecContext(w.ctx, `INSERT INTO recorder_runs (start, "end", closed_incorrect, created) VALUES (?, NULL, 0, ?)`,
		sqliteDatetime(start), sqliteDatetime(start)); err != nil {
		return err
	}
	last := now.Truncate(5 * time.Minute).Add(-5 * time.Minute)
	first := now.Add(-time.Duration(keepShort) * time.Microsecond).Truncate(5 * time.Minute)
	if first.Before(start) {
		first = start.Truncate(5 * time.Minute)
	}
	for t := first; t.Before(last); t = t.Add(5 * time.Minute) {
		w.args = append(w.args, sqliteDatetime(t))
	}
	return w.insert("INSERT INTO statistics_runs (start)", 1)
}

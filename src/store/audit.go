package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Outcomes written to the audit log. Callers may use others; these are the ones hamcp's own packages
// write, so filters in ha_get_audit_log can name them.
const (
	OutcomeOK                 = "ok"                  // the privileged call ran and succeeded
	OutcomeError              = "error"               // the call ran and failed
	OutcomePartial            = "partial"             // it failed part way: some of its changes were made
	OutcomeDenied             = "denied"              // refused by policy or by the user
	OutcomePermissionRequired = "permission_required" // refused until the user grants the category
	OutcomeGranted            = "granted"             // the user (or a code) granted a category
	OutcomeCodeRejected       = "code_rejected"       // a wrong or expired one-time code was presented
	// A confirmation covers one action once (design §5b): its outcomes are not a category's.
	OutcomeConfirmationRequired = "confirmation_required" // one action waits for the user's yes
	OutcomeConfirmedOnce        = "confirmed_once"        // the user let that one action run once
	OutcomeConfirmationRefused  = "confirmation_refused"  // the user refused that one action
)

// Column caps keep one noisy caller from growing the log without bound. Summaries are meant to be short.
const (
	maxShortField = 200
	maxSummary    = 1000
	maxDetail     = 2000
	maxUndo       = 64 << 10 // an undo reference names what was kept; it never carries the content
)

// Audit list paging follows the tools' convention (design §4).
const (
	DefaultAuditLimit = 100
	MaxAuditLimit     = 1000
)

// AuditEntry is one line of the audit log. ArgsSummary and Detail must already be free of secrets.
type AuditEntry struct {
	ID          int64     `json:"id"`
	Time        time.Time `json:"time"`
	SessionID   string    `json:"session_id"`
	Client      string    `json:"client,omitempty"`
	Tool        string    `json:"tool"`
	Category    string    `json:"category,omitempty"`
	ArgsSummary string    `json:"args_summary,omitempty"`
	Outcome     string    `json:"outcome"`
	Detail      string    `json:"detail,omitempty"`
	DurationMS  int64     `json:"duration_ms"`
	// Kind is what the call changed (device, config, file, database, command, hub, permission),
	// "" for a read and for rows written before kinds were kept.
	Kind string `json:"kind,omitempty"`
	// Principal names who was signed in (the Home Assistant user, the OAuth client, the SSH key), when known.
	Principal string `json:"principal,omitempty"`
	// Undo is how the change can be taken back, as JSON only the undoer reads; "" when it cannot.
	Undo     string    `json:"-"`
	UndoneAt time.Time `json:"undone_at,omitzero"`
	UndoneBy string    `json:"undone_by,omitempty"`
}

// Undone reports whether the entry's change was taken back.
func (e AuditEntry) Undone() bool { return !e.UndoneAt.IsZero() }

// AuditQuery filters ListAudit. Empty fields do not filter; results are newest first.
type AuditQuery struct {
	SessionID string
	Client    string
	Tool      string
	Category  string
	Outcome   string
	Kind      string
	Since     time.Time // entries at or after this time; zero means all
	Until     time.Time // entries before this time; zero means up to now
	Limit     int       // 0 means DefaultAuditLimit; at most MaxAuditLimit
	Offset    int
}

const insertAuditSQL = `INSERT INTO audit_log
	(time, session_id, client, tool, category, args_summary, outcome, detail, duration_ms, kind, principal, undo, undone_at, undone_by)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

const auditColumns = `id, time, session_id, client, tool, category, args_summary, outcome, detail, duration_ms,
	kind, principal, undo, undone_at, undone_by`

// AppendAudit writes one entry. A zero Time means now.
func (s *Store) AppendAudit(ctx context.Context, e AuditEntry) error {
	return s.appendAudit(ctx, s.insertAudit, e)
}

// AppendAudits writes entries in one transaction: all or none. A busy server's audit writer
// hands over what queued up while it was writing, so a burst of privileged calls costs one
// commit instead of one each.
func (s *Store) AppendAudits(ctx context.Context, entries []AuditEntry) error {
	if len(entries) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: append audit entries: %w", err)
	}
	defer tx.Rollback()
	stmt := tx.StmtContext(ctx, s.insertAudit)
	for _, e := range entries {
		if err := s.appendAudit(ctx, stmt, e); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: append audit entries: %w", err)
	}
	return nil
}

func (s *Store) appendAudit(ctx context.Context, stmt *sql.Stmt, e AuditEntry) error {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	_, err := stmt.ExecContext(ctx,
		Millis(e.Time),
		Clip(e.SessionID, maxShortField),
		Clip(e.Client, maxShortField),
		Clip(e.Tool, maxShortField),
		Clip(e.Category, maxShortField),
		Clip(e.ArgsSummary, maxSummary),
		Clip(e.Outcome, maxShortField),
		Clip(e.Detail, maxDetail),
		max(e.DurationMS, 0),
		Clip(e.Kind, maxShortField),
		Clip(e.Principal, maxShortField),
		undoText(e.Undo),
		undoneMillis(e.UndoneAt),
		Clip(e.UndoneBy, maxShortField),
	)
	if err != nil {
		return fmt.Errorf("store: append audit entry: %w", err)
	}
	return nil
}

// ListAudit returns one page of entries matching q, newest first, and how many match in all.
func (s *Store) ListAudit(ctx context.Context, q AuditQuery) ([]AuditEntry, int, error) {
	switch {
	case q.Limit < 0 || q.Limit > MaxAuditLimit:
		return nil, 0, fmt.Errorf("store: audit query limit %d is out of range: use 1 to %d (0 means %d)", q.Limit, MaxAuditLimit, DefaultAuditLimit)
	case q.Offset < 0:
		return nil, 0, fmt.Errorf("store: audit query offset %d is negative: use 0 for the first page", q.Offset)
	}
	if q.Limit == 0 {
		q.Limit = DefaultAuditLimit
	}
	where, args := auditWhere(q)

	// A read-only transaction gives the count and the page the same snapshot, so total never
	// disagrees with the rows returned while writers keep appending.
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, 0, fmt.Errorf("store: list audit: %w", err)
	}
	defer tx.Rollback()

	var total int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM audit_log`+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("store: count audit: %w", err)
	}
	if total == 0 || q.Offset >= total {
		return []AuditEntry{}, total, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+auditColumns+` FROM audit_log`+where+` ORDER BY time DESC, id DESC LIMIT ? OFFSET ?`,
		append(args, q.Limit, q.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("store: list audit: %w", err)
	}
	defer rows.Close()
	out := make([]AuditEntry, 0, min(q.Limit, total-q.Offset))
	for rows.Next() {
		e, err := scanAudit(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("store: list audit: %w", err)
	}
	return out, total, nil
}

func auditWhere(q AuditQuery) (string, []any) {
	var conds []string
	var args []any
	add := func(cond string, v any) {
		conds = append(conds, cond)
		args = append(args, v)
	}
	if q.SessionID != "" {
		add("session_id = ?", q.SessionID)
	}
	if q.Client != "" {
		add("client = ?", q.Client)
	}
	if q.Tool != "" {
		add("tool = ?", q.Tool)
	}
	if q.Category != "" {
		add("category = ?", q.Category)
	}
	if q.Outcome != "" {
		add("outcome = ?", q.Outcome)
	}
	if q.Kind != "" {
		add("kind = ?", q.Kind)
	}
	if !q.Since.IsZero() {
		add("time >= ?", Millis(q.Since))
	}
	if !q.Until.IsZero() {
		add("time < ?", Millis(q.Until))
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

func scanAudit(row interface{ Scan(...any) error }) (AuditEntry, error) {
	var e AuditEntry
	var ms, undone int64
	if err := row.Scan(&e.ID, &ms, &e.SessionID, &e.Client, &e.Tool, &e.Category, &e.ArgsSummary,
		&e.Outcome, &e.Detail, &e.DurationMS, &e.Kind, &e.Principal, &e.Undo, &undone, &e.UndoneBy); err != nil {
		return AuditEntry{}, fmt.Errorf("store: read audit row: %w", err)
	}
	e.Time = TimeOf(ms)
	if undone != 0 {
		e.UndoneAt = TimeOf(undone)
	}
	return e, nil
}

// ErrNoAuditEntry: no entry has that id (it never existed, or it was pruned).
var ErrNoAuditEntry = errors.New("no such audit entry")

// ErrAlreadyUndone: the entry's change was taken back already.
var ErrAlreadyUndone = errors.New("already undone")

// GetAudit reads one entry.
func (s *Store) GetAudit(ctx context.Context, id int64) (AuditEntry, error) {
	e, err := scanAudit(s.db.QueryRowContext(ctx, `SELECT `+auditColumns+` FROM audit_log WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return AuditEntry{}, fmt.Errorf("store: audit entry %d: %w", id, ErrNoAuditEntry)
	}
	return e, err
}

// MarkUndone records that entry id's change was taken back by by at at. Only the first mark holds:
// a second undo of the same change is refused with ErrAlreadyUndone, so two clicks cannot both run.
func (s *Store) MarkUndone(ctx context.Context, id int64, by string, at time.Time) error {
	res, err := s.db.ExecContext(ctx, `UPDATE audit_log SET undone_at = ?, undone_by = ? WHERE id = ? AND undone_at = 0`,
		undoneMillis(at), Clip(by, maxShortField), id)
	if err != nil {
		return fmt.Errorf("store: mark audit entry %d undone: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return nil
	}
	if _, err := s.GetAudit(ctx, id); err != nil {
		return err
	}
	return fmt.Errorf("store: audit entry %d: %w", id, ErrAlreadyUndone)
}

// undoneMillis stores "not undone" as 0, so the column needs no NULLs; a moment is at least 1.
func undoneMillis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return max(Millis(t), 1)
}

// undoText keeps an undo reference whole or not at all: a clipped reference would name something
// else, so one too long to keep is dropped and the entry reads as not undoable.
func undoText(u string) string {
	if len(u) > maxUndo || !utf8.ValidString(u) {
		return ""
	}
	return u
}

// PruneAudit deletes entries older than olderThan and reports how many went.
func (s *Store) PruneAudit(ctx context.Context, olderThan time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM audit_log WHERE time < ?`, Millis(olderThan))
	if err != nil {
		return 0, fmt.Errorf("store: prune audit: %w", err)
	}
	return res.RowsAffected()
}

const truncMark = "…[truncated]"

// Clip bounds s to n bytes on a rune boundary, marking the cut. Invalid UTF-8 is replaced so the
// stored text always reads back as valid JSON-safe UTF-8. Integrations storing text of their own
// in hamcp's store use it too.
func Clip(s string, n int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) <= n {
		return s
	}
	cut := n - len(truncMark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + truncMark
}

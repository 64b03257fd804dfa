package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"
)

// Migration is one schema step. Steps only ever add (tables, columns, indexes), so an older hamcp can
// still open a file a newer one has migrated.
//
// Versions are one sequence for the whole file, shared by the store's own steps (migrations) and those
// an integration brings (Store.Migrate): schema_migrations records the number alone, so a number is
// taken for good by whoever shipped it first. Taken so far: 1–4 and 9 (the list below), 5–7 (the
// Hubitat integration's tables, src/integrations/hubitat/hubstore, which were steps of this list when
// they shipped) and 8 (src/confighistory). A new step, here or in an integration, takes the next number
// after the highest one taken anywhere: 10.
type Migration struct {
	Version int
	Name    string
	Up      func(ctx context.Context, tx *sql.Tx) error
}

// migrations is the store's ordered schema history, applied by Open. To add a table: write one function
// like createAuditLog and append it here with the next version. Never edit or reorder an entry that has
// shipped, and skip the numbers integrations took (see Migration).
var migrations = []Migration{
	{1, "audit_log", createAuditLog},
	{2, "permission_grants", createPermissionGrants},
	{3, "oauth", createOAuth},
	{4, "oauth_quotas_and_refresh_grace", addOAuthQuotasAndGrace},
	{9, "audit_kind_and_undo", addAuditKindAndUndo},
}

// Migrate applies the steps an integration brings to its own tables, in the file's one sequence: each
// step at most once, in version order, each in its own transaction like the store's own steps. A
// version the store's own list uses, or one given twice, is a programming error and refused before
// anything is applied.
func (s *Store) Migrate(ctx context.Context, steps ...Migration) error {
	seen := map[int]string{}
	for _, m := range migrations {
		seen[m.Version] = "the store's " + m.Name
	}
	for _, m := range steps {
		switch {
		case m.Version <= 0 || m.Name == "" || m.Up == nil:
			return fmt.Errorf("store: migration %d (%q) needs a positive version, a name and an Up function", m.Version, m.Name)
		case seen[m.Version] != "":
			return fmt.Errorf("store: migration %d (%s) takes a version already taken by %s: use the next free one", m.Version, m.Name, seen[m.Version])
		}
		seen[m.Version] = m.Name
	}
	sorted := slices.Clone(steps)
	slices.SortFunc(sorted, func(a, b Migration) int { return a.Version - b.Version })
	if err := migrate(ctx, s.db, sorted); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

func createAuditLog(ctx context.Context, tx *sql.Tx) error {
	return ExecAll(ctx, tx,
		`CREATE TABLE audit_log (
			id           INTEGER PRIMARY KEY AUTOINCREMENT,
			time         INTEGER NOT NULL, -- Unix milliseconds, UTC
			session_id   TEXT    NOT NULL DEFAULT '',
			client       TEXT    NOT NULL DEFAULT '',
			tool         TEXT    NOT NULL DEFAULT '',
			category     TEXT    NOT NULL DEFAULT '',
			args_summary TEXT    NOT NULL DEFAULT '',
			outcome      TEXT    NOT NULL DEFAULT '',
			detail       TEXT    NOT NULL DEFAULT '',
			duration_ms  INTEGER NOT NULL DEFAULT 0
		)`,
		`CREATE INDEX audit_log_time ON audit_log (time)`,
		`CREATE INDEX audit_log_session_time ON audit_log (session_id, time)`,
		`CREATE INDEX audit_log_tool_time ON audit_log (tool, time)`,
		`CREATE INDEX audit_log_category_time ON audit_log (category, time)`,
	)
}

func createPermissionGrants(ctx context.Context, tx *sql.Tx) error {
	return ExecAll(ctx, tx,
		`CREATE TABLE permission_grants (
			grant_key  TEXT    NOT NULL,
			category   TEXT    NOT NULL,
			via        TEXT    NOT NULL,
			granted_at INTEGER NOT NULL, -- Unix milliseconds, UTC
			expires_at INTEGER NOT NULL,
			PRIMARY KEY (grant_key, category)
		) WITHOUT ROWID`,
		`CREATE INDEX permission_grants_expires ON permission_grants (expires_at)`,
	)
}

// createOAuth holds hamcp's own OAuth server state. Secrets (client secrets, codes, tokens) are stored
// only as SHA-256 hashes; a family is one grant (one consent) and every refresh and access token it
// ever issued, so reuse of an old refresh token or code can revoke all of them at once.
func createOAuth(ctx context.Context, tx *sql.Tx) error {
	return ExecAll(ctx, tx,
		`CREATE TABLE oauth_clients (
			client_id        TEXT    PRIMARY KEY,
			secret_hash      TEXT    NOT NULL DEFAULT '',
			name             TEXT    NOT NULL DEFAULT '',
			redirect_uris    TEXT    NOT NULL, -- JSON array
			grant_types      TEXT    NOT NULL, -- space separated
			auth_method      TEXT    NOT NULL,
			application_type TEXT    NOT NULL,
			scope            TEXT    NOT NULL DEFAULT '',
			metadata         TEXT    NOT NULL DEFAULT '{}', -- the registration answer, without the secret
			created_at       INTEGER NOT NULL, -- Unix milliseconds, UTC
			last_used_at     INTEGER NOT NULL DEFAULT 0
		)`,
		`CREATE INDEX oauth_clients_unused ON oauth_clients (last_used_at, created_at)`,
		`CREATE TABLE oauth_families (
			family_id  TEXT    PRIMARY KEY,
			client_id  TEXT    NOT NULL,
			user_id    TEXT    NOT NULL,
			user_name  TEXT    NOT NULL DEFAULT '',
			scope      TEXT    NOT NULL,
			resource   TEXT    NOT NULL,
			refresh    INTEGER NOT NULL DEFAULT 1, -- whether refresh tokens are issued
			created_at INTEGER NOT NULL,
			revoked_at INTEGER NOT NULL DEFAULT 0
		) WITHOUT ROWID`,
		`CREATE TABLE oauth_codes (
			code_hash      TEXT    PRIMARY KEY,
			client_id      TEXT    NOT NULL,
			redirect_uri   TEXT    NOT NULL,
			redirect_given INTEGER NOT NULL,
			code_challenge TEXT    NOT NULL,
			scope          TEXT    NOT NULL,
			resource       TEXT    NOT NULL,
			user_id        TEXT    NOT NULL,
			user_name      TEXT    NOT NULL DEFAULT '',
			refresh        INTEGER NOT NULL DEFAULT 1,
			expires_at     INTEGER NOT NULL,
			used_at        INTEGER NOT NULL DEFAULT 0,
			family_id      TEXT    NOT NULL DEFAULT ''
		) WITHOUT ROWID`,
		`CREATE INDEX oauth_codes_expires ON oauth_codes (expires_at)`,
		`CREATE TABLE oauth_refresh_tokens (
			token_hash TEXT    PRIMARY KEY,
			family_id  TEXT    NOT NULL,
			expires_at INTEGER NOT NULL,
			used_at    INTEGER NOT NULL DEFAULT 0
		) WITHOUT ROWID`,
		`CREATE INDEX oauth_refresh_tokens_family ON oauth_refresh_tokens (family_id)`,
		`CREATE INDEX oauth_refresh_tokens_expires ON oauth_refresh_tokens (expires_at)`,
		`CREATE TABLE oauth_access_tokens (
			token_hash TEXT    PRIMARY KEY,
			family_id  TEXT    NOT NULL,
			expires_at INTEGER NOT NULL
		) WITHOUT ROWID`,
		`CREATE INDEX oauth_access_tokens_family ON oauth_access_tokens (family_id)`,
		`CREATE INDEX oauth_access_tokens_expires ON oauth_access_tokens (expires_at)`,
	)
}

// addOAuthQuotasAndGrace records where a client registered from, so registration quotas evict
// per address, and keeps, for a few seconds after a rotation, the successor token pair encrypted
// under a key only the presenter of the old refresh token can derive, so a client's concurrent or
// retried refresh gets the same pair instead of revoking its grant.
func addOAuthQuotasAndGrace(ctx context.Context, tx *sql.Tx) error {
	return ExecAll(ctx, tx,
		`ALTER TABLE oauth_clients ADD COLUMN registered_from TEXT NOT NULL DEFAULT ''`,
		`CREATE INDEX oauth_clients_from ON oauth_clients (registered_from, last_used_at, created_at)`,
		`ALTER TABLE oauth_refresh_tokens ADD COLUMN successor TEXT NOT NULL DEFAULT ''`,
		// Eviction asks, per client, whether it holds a grant or a live code.
		`CREATE INDEX oauth_families_client ON oauth_families (client_id)`,
		`CREATE INDEX oauth_codes_client ON oauth_codes (client_id)`,
	)
}

// addAuditKindAndUndo lets the audit log hold every change an assistant makes, not only privileged
// calls: what kind of change it was (the Activity page filters on it), who was signed in, how it can
// be taken back, and whether it was. Rows written before it keep working: they have no kind and no
// undo, which reads as "cannot be undone from here".
func addAuditKindAndUndo(ctx context.Context, tx *sql.Tx) error {
	return ExecAll(ctx, tx,
		`ALTER TABLE audit_log ADD COLUMN kind TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE audit_log ADD COLUMN principal TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE audit_log ADD COLUMN undo TEXT NOT NULL DEFAULT ''`, // JSON, opaque to the store
		`ALTER TABLE audit_log ADD COLUMN undone_at INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE audit_log ADD COLUMN undone_by TEXT NOT NULL DEFAULT ''`,
		`CREATE INDEX audit_log_kind_time ON audit_log (kind, time)`,
		`CREATE INDEX audit_log_client_time ON audit_log (client, time)`,
	)
}

// ExecAll runs a migration step's statements in order, stopping at the first that fails.
func ExecAll(ctx context.Context, tx *sql.Tx, stmts ...string) error {
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// migrate applies every step the file lacks, each in its own write transaction together with its
// schema_migrations row, so a crash leaves the file at a step boundary and two processes opening the
// same file never apply a step twice.
func migrate(ctx context.Context, db *sql.DB, steps []Migration) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at INTEGER NOT NULL
	)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	applied, err := appliedVersions(ctx, db)
	if err != nil {
		return err
	}
	for _, m := range steps {
		if applied[m.Version] {
			continue // the common case on every start: no write lock taken
		}
		if err := apply(ctx, db, m); err != nil {
			return fmt.Errorf("migration %d (%s): %w", m.Version, m.Name, err)
		}
	}
	return nil
}

func appliedVersions(ctx context.Context, db *sql.DB) (map[int]bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	defer rows.Close()
	applied := map[int]bool{}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		applied[v] = true
	}
	return applied, rows.Err()
}

// apply re-checks inside the write transaction because another process may have applied m since
// appliedVersions looked.
func apply(ctx context.Context, db *sql.DB, m Migration) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, m.Version).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	if err := m.Up(ctx, tx); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		m.Version, m.Name, Millis(time.Now())); err != nil {
		return err
	}
	return tx.Commit()
}

// SchemaVersion is the highest migration recorded in the file (it may be newer than this build's).
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&v)
	return int(v.Int64), err
}

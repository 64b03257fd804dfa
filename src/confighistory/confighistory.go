// Package confighistory keeps the earlier versions of what an assistant changed in Home Assistant
// (automations, scripts, scenes, dashboards, helpers, registry entries, configuration files), in
// hamcp's own store, so that nothing an assistant edits or deletes is lost: each version can be read
// back and restored (ha_config_history). It knows nothing about MCP or Home Assistant's API: a
// version is an item's name and the JSON it had before the change.
package confighistory

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hamcp/hamcp/src/store"
)

// Limits of what is kept. A dashboard with many views is the largest item in practice (a few hundred
// KB); an item changed many times keeps its latest versions.
const (
	MaxConfigBytes = 4 << 20
	KeepPerItem    = 50
)

// Changes a version records: what the assistant did to the item that made hamcp keep it.
const (
	Updated  = "update"  // Config is what the item was before it was overwritten
	Deleted  = "delete"  // Config is the item as it was when deleted
	Created  = "create"  // the item did not exist before (Config is null): restoring it deletes it
	Restored = "restore" // Config is what a restore replaced
)

// Version is one kept version of an item.
type Version struct {
	// Item names the item as kind:id, e.g. "script:morning_lights", "dashboard:lovelace-home",
	// "entity:light.kitchen", "file:/config/configuration.yaml".
	Item   string          `json:"item"`
	N      int             `json:"version"` // 1, 2, … per item, in the order they were kept
	Title  string          `json:"title,omitempty"`
	Change string          `json:"change"`
	Config json.RawMessage `json:"config,omitempty"` // null: the item did not exist
	Tool   string          `json:"tool,omitempty"`
	Client string          `json:"client,omitempty"`
	At     time.Time       `json:"at"`
	Size   int             `json:"size"` // bytes of Config
}

// Kind is the part of Item before the first colon.
func (v Version) Kind() string { k, _, _ := strings.Cut(v.Item, ":"); return k }

// ID is the part of Item after the first colon.
func (v Version) ID() string { _, id, _ := strings.Cut(v.Item, ":"); return id }

// Item names an item of a kind.
func Item(kind, id string) string { return kind + ":" + id }

// ErrNotFound: no such item or version.
var ErrNotFound = errors.New("no such version")

// Store keeps versions in hamcp's database.
type Store struct {
	db  *sql.DB
	now func() time.Time
}

// Migrations are the store steps this package's table needs (store.Migration's numbering: 8).
func Migrations() []store.Migration {
	return []store.Migration{{Version: 8, Name: "config_versions", Up: func(ctx context.Context, tx *sql.Tx) error {
		return store.ExecAll(ctx, tx, `CREATE TABLE config_versions (
			id      INTEGER PRIMARY KEY,
			item    TEXT    NOT NULL,
			n       INTEGER NOT NULL,
			title   TEXT    NOT NULL DEFAULT '',
			change  TEXT    NOT NULL,
			config  BLOB,
			tool    TEXT    NOT NULL DEFAULT '',
			client  TEXT    NOT NULL DEFAULT '',
			at      INTEGER NOT NULL,
			UNIQUE (item, n)
		)`, `CREATE INDEX config_versions_at ON config_versions (at)`)
	}}}
}

// Open brings the store's schema up to date for versions and returns the keeper.
func Open(ctx context.Context, st *store.Store) (*Store, error) {
	if err := st.Migrate(ctx, Migrations()...); err != nil {
		return nil, err
	}
	return &Store{db: st.DB(), now: time.Now}, nil
}

// Keep records v (Item, Change, Config, and optionally Title, Tool, Client) as the item's next
// version and returns it numbered. Older versions past KeepPerItem are dropped in the same
// transaction. A config over MaxConfigBytes is refused: the change it belongs to must not go ahead
// unrecorded.
func (s *Store) Keep(ctx context.Context, v Version) (Version, error) {
	kind, id, ok := strings.Cut(v.Item, ":")
	if !ok || kind == "" || id == "" {
		return Version{}, fmt.Errorf("confighistory: item %q is not kind:id", v.Item)
	}
	if len(v.Config) == 0 {
		v.Config = json.RawMessage("null")
	}
	if !json.Valid(v.Config) {
		return Version{}, fmt.Errorf("confighistory: %s: the config to keep is not JSON", v.Item)
	}
	if len(v.Config) > MaxConfigBytes {
		return Version{}, fmt.Errorf("confighistory: %s is %d bytes, more than the %d hamcp keeps", v.Item, len(v.Config), MaxConfigBytes)
	}
	v.At = s.now().UTC().Truncate(time.Millisecond)
	v.Title = store.Clip(v.Title, 200)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Version{}, err
	}
	defer tx.Rollback()
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(n), 0) + 1 FROM config_versions WHERE item = ?`, v.Item).Scan(&v.N); err != nil {
		return Version{}, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO config_versions (item, n, title, change, config, tool, client, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		v.Item, v.N, v.Title, v.Change, []byte(v.Config), v.Tool, store.Clip(v.Client, 200), store.Millis(v.At)); err != nil {
		return Version{}, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM config_versions WHERE item = ? AND n <= ?`, v.Item, v.N-KeepPerItem); err != nil {
		return Version{}, err
	}
	if err := tx.Commit(); err != nil {
		return Version{}, err
	}
	v.Size = len(v.Config)
	return v, nil
}

// Forget removes one version: the change it was kept for did not happen after all.
func (s *Store) Forget(ctx context.Context, item string, n int) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM config_versions WHERE item = ? AND n = ?`, item, n)
	return err
}

// Query selects versions for List.
type Query struct {
	Item   string // one item's versions; "" = every item
	Kind   string // with Item "", only this kind's items
	Limit  int
	Offset int
}

// List returns versions newest first without their configs (Size says how large each is), and how
// many match.
func (s *Store) List(ctx context.Context, q Query) ([]Version, int, error) {
	where, args := "1 = 1", []any{}
	switch {
	case q.Item != "":
		where, args = "item = ?", append(args, q.Item)
	case q.Kind != "":
		where, args = "item >= ? AND item < ?", append(args, q.Kind+":", q.Kind+";")
	}
	var total int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM config_versions WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	if q.Limit <= 0 {
		q.Limit = 100
	}
	rows, err := s.db.QueryContext(ctx, `SELECT item, n, title, change, length(config), tool, client, at FROM config_versions WHERE `+where+
		` ORDER BY at DESC, id DESC LIMIT ? OFFSET ?`, append(args, q.Limit, q.Offset)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []Version
	for rows.Next() {
		var v Version
		var at int64
		if err := rows.Scan(&v.Item, &v.N, &v.Title, &v.Change, &v.Size, &v.Tool, &v.Client, &at); err != nil {
			return nil, 0, err
		}
		v.At = store.TimeOf(at)
		out = append(out, v)
	}
	return out, total, rows.Err()
}

// Get returns one version with its config; n 0 is the item's latest.
func (s *Store) Get(ctx context.Context, item string, n int) (Version, error) {
	q := `SELECT item, n, title, change, config, tool, client, at FROM config_versions WHERE item = ? AND n = ?`
	args := []any{item, n}
	if n == 0 {
		q = `SELECT item, n, title, change, config, tool, client, at FROM config_versions WHERE item = ? ORDER BY n DESC LIMIT 1`
		args = args[:1]
	}
	var v Version
	var cfg []byte
	var at int64
	err := s.db.QueryRowContext(ctx, q, args...).Scan(&v.Item, &v.N, &v.Title, &v.Change, &cfg, &v.Tool, &v.Client, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return Version{}, ErrNotFound
	}
	if err != nil {
		return Version{}, err
	}
	v.Config, v.At, v.Size = cfg, store.TimeOf(at), len(cfg)
	return v, nil
}

package hubstore_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hamcp/hamcp/src/integrations/hubitat/hubstore"
	"github.com/hamcp/hamcp/src/rules"
	"github.com/hamcp/hamcp/src/store"
)

// testdata/earlier-layout.db.gz is a file written by the build in which the store applied the
// Hubitat tables itself (steps 5–7 of its own list), with a row in every table: an audit entry, a
// grant, a rule variable, a capture, the debug log's level and an entry, a hub backup, a rule, a
// deleted rule in the trash and a pending delay. Opened as the app opens it now (store.Open, then
// the integration's Migrations), it gets no step applied again and keeps every row, readable
// through the accessors and the rule engine.
func TestFileOfEarlierLayoutKeepsEverything(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hamcp.db")
	unpack(t, "testdata/earlier-layout.db.gz", path)
	before := steps(t, path)
	if len(before) != 7 {
		t.Fatalf("the fixture records %d steps, want 7: %v", len(before), before)
	}

	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	hs, err := hubstore.Open(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range hubstore.Migrations() {
		if !strings.HasPrefix(before[m.Version], m.Name+" ") {
			t.Errorf("step %d %s: the earlier build recorded %q under that version", m.Version, m.Name, before[m.Version])
		}
	}
	// Steps added since (the store's 9) are applied; none recorded before is applied again.
	after := steps(t, path)
	for v, was := range before {
		if after[v] != was {
			t.Errorf("schema_migrations changed on open:\nbefore %v\nafter  %v", before, after)
			break
		}
	}

	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	engine := rules.New(rules.Options{Store: hs})
	defer engine.Close()
	sum := sha256.Sum256([]byte("backup"))
	checks := []struct {
		what string
		ok   func() (bool, error)
	}{
		{"audit entry", func() (bool, error) {
			_, n, err := st.ListAudit(ctx, store.AuditQuery{SessionID: "old"})
			return n == 1, err
		}},
		{"grant", func() (bool, error) {
			g, err := st.LoadGrants(ctx, at)
			return len(g) == 1 && g[0].Category == "hub_admin", err
		}},
		{"rule variable", func() (bool, error) {
			v, ok, err := hs.RuleVariable(ctx, "away")
			return ok && v.Value == "true" && v.UpdatedAt.Equal(at), err
		}},
		{"captured state", func() (bool, error) {
			cs, ok, err := hs.CapturedState(ctx, "evening")
			return ok && cs.Devices["1"]["switch"] == "on" && cs.Devices["1"]["level"] == "40", err
		}},
		{"debug log level", func() (bool, error) {
			lvl, err := hs.DebugLogLevel(ctx)
			return lvl == "info", err
		}},
		{"debug log entry", func() (bool, error) {
			es, err := hs.DebugLogs(ctx, hubstore.DebugQuery{Level: "warn"})
			return len(es) == 1 && es[0].Message == "written before", err
		}},
		{"hub backup", func() (bool, error) {
			b, ok, err := hs.LastHubBackup(ctx)
			return ok && b.TakenAt.Equal(at) && b.SHA256 == hex.EncodeToString(sum[:]), err
		}},
		{"rule", func() (bool, error) {
			rs, err := engine.List(ctx)
			return len(rs) == 1 && rs[0].Name == "Porch" && len(rs[0].Actions) == 1, err
		}},
		{"deleted rule", func() (bool, error) {
			tr, err := engine.Trash(ctx)
			return len(tr) == 1 && tr[0].Rule.Name == "Old rule", err
		}},
		{"pending delay", func() (bool, error) {
			var n int
			err := hs.DB().QueryRowContext(ctx, `SELECT count(*) FROM hubitat_rule_delays WHERE delay_id = 'porch-off'`).Scan(&n)
			return n == 1, err
		}},
	}
	for _, c := range checks {
		if ok, err := c.ok(); !ok || err != nil {
			t.Errorf("the %s written by the earlier build is gone or changed (%v)", c.what, err)
		}
	}

	// And the tables take new rows.
	if err := hs.SetRuleVariable(ctx, "home", "yes", at); err != nil {
		t.Error(err)
	}
	if _, probs, err := engine.Create(ctx, rules.Rule{Name: "New", Triggers: []rules.Trigger{{Type: "periodic", Interval: 1, Unit: "hours"}},
		Actions: []rules.Action{{Type: "log", Message: "tick"}}}); err != nil || len(probs) > 0 {
		t.Errorf("a new rule: %v %v", probs, err)
	}
}

// A fresh file gets the Hubitat tables once: opening it again applies nothing.
func TestMigrationsApplyOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hamcp.db")
	for range 2 {
		st, err := store.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := hubstore.Open(ctx, st); err != nil {
			st.Close()
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
	got := steps(t, path)
	for _, m := range hubstore.Migrations() {
		if got[m.Version] == "" {
			t.Errorf("step %d (%s) not recorded", m.Version, m.Name)
		}
	}
}

func unpack(t *testing.T, gz, to string) {
	t.Helper()
	raw, err := os.ReadFile(gz)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// steps reads schema_migrations straight from the file: version -> "name applied_at".
func steps(t *testing.T, path string) map[int]string {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT version, name, applied_at FROM schema_migrations`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int]string{}
	for rows.Next() {
		var v int
		var name string
		var at int64
		if err := rows.Scan(&v, &name, &at); err != nil {
			t.Fatal(err)
		}
		out[v] = fmt.Sprintf("%s %d", name, at)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

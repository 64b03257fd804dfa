package recorder

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"modernc.org/sqlite"

	simrec "github.com/hamcp/hamcp/dev/sim/recorder"
)

func TestClassifyAccepts(t *testing.T) {
	tests := []struct {
		sql      string
		kind     Kind
		verb     string
		readOnly bool
		hasLimit bool
	}{
		{"SELECT 1", KindRead, "SELECT", true, false},
		{"select * from states limit 5", KindRead, "SELECT", true, true},
		{"  -- comment\nSELECT 1;  ", KindRead, "SELECT", true, false},
		{"SELECT 1; -- trailing comment", KindRead, "SELECT", true, false},
		{"SELECT ';' AS semi, \"a;b\", [c;d], `e;f` FROM t /* ; */", KindRead, "SELECT", true, false},
		{"SELECT * FROM (SELECT * FROM states LIMIT 3)", KindRead, "SELECT", true, false},
		{"VALUES (1), (2)", KindRead, "VALUES", true, false},
		{"WITH r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r LIMIT 10) SELECT n FROM r", KindRead, "WITH", true, false},
		{"WITH RECURSIVE x AS (VALUES(1)) SELECT * FROM x LIMIT 1", KindRead, "WITH", true, true},
		{"WITH x AS (SELECT 1) DELETE FROM states WHERE state_id IN (SELECT * FROM x)", KindWrite, "WITH", false, false},
		{"EXPLAIN QUERY PLAN SELECT * FROM states WHERE metadata_id = 1", KindRead, "EXPLAIN", true, false},
		{"EXPLAIN UPDATE states SET state = 'x'", KindWrite, "EXPLAIN", false, false},
		{"INSERT INTO states_meta (entity_id) VALUES ('a.b')", KindWrite, "INSERT", false, false},
		{"replace into states_meta (entity_id) values ('a.b')", KindWrite, "REPLACE", false, false},
		{"UPDATE states SET state = 'on' WHERE state_id = 1", KindWrite, "UPDATE", false, false},
		{"DELETE FROM states WHERE state_id = 1", KindWrite, "DELETE", false, false},
		{"CREATE INDEX ix_test ON states (state)", KindDDL, "CREATE", false, false},
		{"DROP INDEX ix_test", KindDDL, "DROP", false, false},
		{"ANALYZE", KindDDL, "ANALYZE", false, false},
		{"BEGIN IMMEDIATE", KindTransaction, "BEGIN", false, false},
		{"COMMIT", KindTransaction, "COMMIT", false, false},
		{"VACUUM", KindOther, "VACUUM", false, false},
		{"PRAGMA table_info(states)", KindPragma, "PRAGMA", true, false},
		{"PRAGMA main.index_list('states')", KindPragma, "PRAGMA", true, false},
		{"pragma TABLE_INFO = \"states\"", KindPragma, "PRAGMA", true, false},
		{"PRAGMA schema_version", KindPragma, "PRAGMA", true, false},
		{"PRAGMA journal_mode", KindPragma, "PRAGMA", true, false},
		{"SELECT * FROM states WHERE state = 'attach'", KindRead, "SELECT", true, false},
		{"SELECT \"attach\" FROM t", KindRead, "SELECT", true, false},
		{"SELECT x'0102', 1.5e-3, ?1, :name, @v, $w", KindRead, "SELECT", true, false},
	}
	for _, tc := range tests {
		t.Run(tc.sql, func(t *testing.T) {
			st, err := Classify(tc.sql)
			if err != nil {
				t.Fatalf("Classify: %v", err)
			}
			if st.Kind != tc.kind || st.Verb != tc.verb || st.ReadOnly != tc.readOnly || st.HasLimit != tc.hasLimit {
				t.Errorf("got %+v, want kind=%s verb=%s readOnly=%v hasLimit=%v", st, tc.kind, tc.verb, tc.readOnly, tc.hasLimit)
			}
			if err := st.RequireRead(); (err == nil) != tc.readOnly {
				t.Errorf("RequireRead() = %v, want nil only for reads", err)
			}
		})
	}
}

// nastySQL is the seed corpus: every way we know to sneak a refused
// construct past a text guard.
var nastySQL = []struct {
	sql, want string // want: a substring the refusal must contain
}{
	{"", "empty"},
	{"  -- only a comment", "empty"},
	{";;", "empty"},
	{"SELECT 1; SELECT 2", "2 statements"},
	{"SELECT 1;DELETE FROM states", "2 statements"},
	{"SELECT ';'; DROP TABLE states", "2 statements"},
	{"SELECT 1 /* ; */ ; UPDATE states SET state='x'", "2 statements"},
	// Found by FuzzClassify: SQLite reads a bare "/*" at the very end as the operators / and *,
	// not as a comment, so this is a second (failing) statement.
	{"SELECT 0;/*", "2 statements"},
	{"SELECT $a(x'y) ; DROP TABLE states; --'", "2 statements"},
	{"UPDATE states SET state = :v(';') ; DELETE FROM states --", "2 statements"},
	{"ATTACH DATABASE '/tmp/x.db' AS x", "ATTACH"},
	{"attach '/tmp/x.db' as x", "ATTACH"},
	{"AtTaCh '/tmp/x.db' AS x", "ATTACH"},
	{"/* hi */ ATTACH/**/'/tmp/x.db'/**/AS/**/x", "ATTACH"},
	{"DETACH x", "DETACH"},
	{"EXPLAIN ATTACH 'x' AS y", "ATTACH"},
	{"SELECT load_extension('/tmp/evil.so')", "load_extension"},
	{"SELECT LOAD_EXTENSION('/tmp/evil.so')", "load_extension"},
	{"SELECT \"load_extension\"('/tmp/evil.so')", "load_extension"},
	{"SELECT [load_extension]('/tmp/evil.so')", "load_extension"},
	{"SELECT `Load_Extension`('/tmp/evil.so')", "load_extension"},
	{"SELECT load_extension/**/('/tmp/evil.so')", "load_extension"},
	{"SELECT load_extension -- x\n('/tmp/evil.so')", "load_extension"},
	{"SELECT 1 -- load_extension('x')", "load_extension"},
	{"SELECT 'load_extension'", "load_extension"},
	{"SELECT readfile('/etc/passwd')", "readfile"},
	{"SELECT writefile('/tmp/x', 'y')", "writefile"},
	{"SELECT fts3_tokenizer('simple')", "fts3_tokenizer"},
	{"VACUUM INTO '/tmp/copy.db'", "VACUUM INTO"},
	{"vacuum main into '/tmp/copy.db'", "VACUUM INTO"},
	{"PRAGMA writable_schema = ON", "writable_schema"},
	{"PRAGMA writable_schema", "writable_schema"},
	{"PRAGMA journal_mode = DELETE", "journal_mode with a value"},
	{"PRAGMA journal_mode(OFF)", "journal_mode with a value"},
	{"PRAGMA main.journal_mode=WAL", "journal_mode with a value"},
	{"PRAGMA query_only = 0", "query_only with a value"},
	{"PRAGMA query_only(false)", "query_only with a value"},
	{"PRAGMA schema_version = 1", "schema_version with a value"},
	{"PRAGMA user_version = 7", "user_version with a value"},
	{"PRAGMA wal_checkpoint(TRUNCATE)", "wal_checkpoint"},
	{"PRAGMA wal_checkpoint", "wal_checkpoint"},
	{"PRAGMA optimize", "optimize"},
	{"PRAGMA cache_size = -1000000", "cache_size with a value"},
	{"PRAGMA \"writable_schema\" = 1", "writable_schema"},
	{"PRAGMA table_info(states) garbage", "takes one table"},
	{"PRAGMA", "needs a name"},
	{"CREATE TRIGGER t AFTER INSERT ON states BEGIN DELETE FROM states; END", "2 statements"},
	{"CREATE TRIGGER t AFTER INSERT ON states BEGIN SELECT 1 END", "CREATE TRIGGER"},
	{"create temp trigger t after insert on states begin select 1 end", "CREATE TRIGGER"},
	{"SELECT 'unterminated", "unterminated string"},
	{"SELECT \"unterminated", "unterminated quoted name"},
	{"SELECT [unterminated", "unterminated [quoted name]"},
	{"SELECT 1\x00; DROP TABLE states", "NUL"},
	{"SELECT '\x00'", "NUL"},
	{"SELECT 1 /* \x00 */", "NUL"},
	{"GRANT ALL", "not a SQL statement"},
	{"(SELECT 1)", "not a SQL statement"},
	{"EXPLAIN", "needs a statement"},
	{"WITH x AS (SELECT 1)", "not followed by"},
}

func TestClassifyRefuses(t *testing.T) {
	for _, tc := range nastySQL {
		t.Run(tc.sql, func(t *testing.T) {
			st, err := Classify(tc.sql)
			if err == nil {
				t.Fatalf("Classify accepted it as %+v", st)
			}
			if !errors.Is(err, ErrRefused) {
				t.Errorf("error %v does not wrap ErrRefused", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not name %q", err, tc.want)
			}
		})
	}
}

// TestStatementCountAgreesWithSQLite: where Classify puts statement
// boundaries is where SQLite's parser puts them, for the tokenizer's
// trickiest corners.
func TestStatementCountAgreesWithSQLite(t *testing.T) {
	o := getOracle(t, t.TempDir())
	for _, q := range []string{
		"SELECT $a(x'y) ; DROP TABLE states; --'",
		"SELECT $a(x'y)",
		"SELECT :a::b(;) FROM states",
		"SELECT @v(1 ; SELECT 2",
		"SELECT #x(';'); SELECT 1",
		"SELECT x'ab''; DELETE FROM states; --'",
		"SELECT 'a'';'; SELECT 1",
		"SELECT \"a\"\";\" FROM states; DELETE FROM states",
		"SELECT [a;b] FROM states",
		"SELECT 1e--5; SELECT 2",
		"SELECT 1 /* ; */",
		"SELECT 1 -- ; DELETE FROM states",
		"SELECT 1 /*",
		"SELECT ?1; SELECT ?2",
		"SELECT 0x1e+5; SELECT 1",
	} {
		_, err := Classify(q)
		multi := err != nil && strings.Contains(err.Error(), "statements separated")
		n := o.split.statements(q)
		// n == 0: SQLite cannot compile the first statement, so nothing runs
		// and a refusal costs nothing.
		if multi && n == 1 || !multi && n > 1 {
			t.Errorf("%q: Classify says multiple=%v (%v), SQLite runs %d statements", q, multi, err, n)
		}
	}
}

// oracle prepares statements on a real recorder schema with an authorizer
// that records what SQLite itself says a statement would do: the check is
// independent of our tokenizer.
type oracle struct {
	db    *sql.DB
	split *sqliteSplitter
	mu    sync.Mutex
	// bad collects the actions seen while preparing that a read must not
	// contain.
	bad []string
}

var (
	oracleOnce sync.Once
	theOracle  *oracle
	oracleErr  error
)

func getOracle(t testing.TB, dir string) *oracle {
	oracleOnce.Do(func() {
		path := filepath.Join(dir, "oracle.db")
		var rec *simrec.DB
		if rec, oracleErr = simrec.Create(path); oracleErr != nil {
			return
		}
		rec.Close()
		o := &oracle{}
		if o.split, oracleErr = newSplitter(path); oracleErr != nil {
			return
		}
		d := &sqlite.Driver{}
		d.RegisterConnectionHook(func(c sqlite.ExecQuerierContext, _ string) error {
			return c.(sqlite.AuthorizerRegisterer).RegisterAuthorizer(func(a sqlite.AuthorizerActionCode, arg1, arg2, _, _ string) sqlite.AuthorizerReturnCode {
				ok := a == sqlite.AuthSelect || a == sqlite.AuthRead || a == sqlite.AuthRecursive ||
					a == sqlite.AuthFunction && !strings.Contains(asciiLower(arg2), "load_extension") ||
					a == sqlite.AuthPragma && pragmaAllowed(arg1, arg2 != "")
				if !ok {
					o.mu.Lock()
					o.bad = append(o.bad, arg1+" "+arg2)
					o.mu.Unlock()
				}
				return sqlite.AuthorizerDeny // prepare only; never run anything
			})
		})
		o.db = sql.OpenDB(connector{d, "file:" + path + "?mode=ro"})
		o.db.SetMaxOpenConns(1)
		theOracle = o
	})
	if oracleErr != nil {
		t.Fatalf("oracle db: %v", oracleErr)
	}
	return theOracle
}

// violations prepares sqlText and returns the non-read actions SQLite saw.
func (o *oracle) violations(sqlText string) []string {
	o.mu.Lock()
	o.bad = nil
	o.mu.Unlock()
	if st, err := o.db.PrepareContext(context.Background(), sqlText); err == nil {
		st.Close()
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.bad...)
}

// FuzzClassify: Classify never panics; whatever it accepts is one statement
// to SQLite's own parser too; and whatever it accepts as read-only (1) is
// one statement when re-tokenised, (2) mentions no forbidden function
// anywhere in its text, (3) holds no ATTACH/DETACH keyword, (4) as a PRAGMA
// is allow-listed, and (5) compiles in SQLite itself to nothing but reads.
func FuzzClassify(f *testing.F) {
	for _, tc := range nastySQL {
		f.Add(tc.sql)
	}
	for _, s := range []string{
		"SELECT * FROM states WHERE metadata_id = 1 ORDER BY last_updated_ts LIMIT 10",
		"WITH a AS (SELECT 1) SELECT * FROM a",
		"PRAGMA table_info(states)",
		"SELECT * FROM pragma_table_info('states')",
		"EXPLAIN QUERY PLAN SELECT 1",
		"SELECT x'00', 'it''s', \"q\"\"q\", [b]",
		"SELECT x'ab''; DELETE FROM states; --'",
		"SELECT $a(x'y); DELETE FROM states",
	} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, s string) {
		st, err := Classify(s)
		if err != nil {
			return
		}
		if n := getOracle(t, dir).split.statements(s); n > 1 {
			t.Fatalf("accepted %q as one statement but SQLite runs %d", s, n)
		}
		if !st.ReadOnly {
			return
		}
		toks, terr := tokenize(s)
		if terr != nil {
			t.Fatalf("accepted %q but it does not re-tokenise: %v", s, terr)
		}
		groups, inGroup := 0, false
		for _, tk := range toks {
			if tk.kind == tokSemicolon {
				inGroup = false
				continue
			}
			if !inGroup {
				inGroup = true
				if groups++; groups > 1 {
					t.Fatalf("accepted %q holding a second statement", s)
				}
			}
			if tk.is("ATTACH") || tk.is("DETACH") {
				t.Fatalf("accepted %q containing %s", s, tk.text)
			}
		}
		lower := strings.ToLower(s)
		for _, name := range forbiddenNames {
			if strings.Contains(lower, name) {
				t.Fatalf("accepted %q mentioning %s", s, name)
			}
		}
		hasArg := false
		for _, tk := range toks {
			hasArg = hasArg || tk.kind == tokLParen || tk.text == "="
		}
		if st.Kind == KindPragma && !pragmaAllowed(st.Pragma, hasArg) {
			t.Fatalf("accepted pragma %q (%s) outside the allow-list", s, st.Pragma)
		}
		if bad := getOracle(t, dir).violations(s); len(bad) > 0 {
			t.Fatalf("accepted %q as read-only but SQLite compiles it to %v", s, bad)
		}
	})
}

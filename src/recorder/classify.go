package recorder

import (
	"errors"
	"fmt"
	"strings"
)

// Kind is what a statement does to the database.
type Kind string

// Statement kinds reported by Classify.
const (
	KindRead        Kind = "read"        // SELECT, VALUES, WITH … SELECT, EXPLAIN of a read
	KindWrite       Kind = "write"       // INSERT, REPLACE, UPDATE, DELETE (also behind WITH)
	KindDDL         Kind = "ddl"         // CREATE, DROP, ALTER, REINDEX, ANALYZE
	KindPragma      Kind = "pragma"      // PRAGMA (only read-only ones pass Classify)
	KindAttach      Kind = "attach"      // ATTACH, DETACH (always refused)
	KindTransaction Kind = "transaction" // BEGIN, COMMIT, END, ROLLBACK, SAVEPOINT, RELEASE
	KindOther       Kind = "other"       // VACUUM
)

// Statement is what Classify found out about one SQL statement.
type Statement struct {
	Kind Kind   `json:"kind"`
	Verb string `json:"verb"` // first keyword, upper case (EXPLAIN for EXPLAIN …)
	// ReadOnly is true when the statement can change neither the database
	// nor the connection: reads, and the allow-listed read-only PRAGMAs.
	ReadOnly bool `json:"read_only"`
	// HasLimit is true when the statement has a LIMIT clause of its own (not
	// only inside a subquery or CTE).
	HasLimit bool   `json:"has_limit"`
	Pragma   string `json:"pragma,omitempty"` // lower-case pragma name for KindPragma
}

// ErrRefused marks every error of the SQL guard: the statement was not run.
var ErrRefused = errors.New("statement refused")

func refuse(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, a...))
}

// forbiddenNames are SQL functions that reach outside the database: loading
// native code, reading or writing arbitrary files (the sqlite3 shell's
// readfile/writefile/edit), or swapping FTS3 tokenizer pointers. They are
// refused wherever the text appears — in comments and string literals too —
// so no quoting or spacing trick can smuggle one past the guard.
var forbiddenNames = []string{"load_extension", "readfile", "writefile", "fts3_tokenizer"}

// readPragmas may be run without an argument: each only reports a value.
// Any of them with "= value" or "(value)" would set it and is refused.
var readPragmas = map[string]bool{
	"application_id": true, "auto_vacuum": true, "busy_timeout": true, "cache_size": true,
	"collation_list": true, "compile_options": true, "data_version": true, "database_list": true,
	"encoding": true, "foreign_key_check": true, "foreign_keys": true, "freelist_count": true,
	"function_list": true, "integrity_check": true, "journal_mode": true, "journal_size_limit": true,
	"max_page_count": true, "module_list": true, "page_count": true, "page_size": true,
	"pragma_list": true, "query_only": true, "quick_check": true, "schema_version": true,
	"synchronous": true, "table_list": true, "temp_store": true, "user_version": true,
	"wal_autocheckpoint": true,
}

// argPragmas take a table or index name and only describe it.
var argPragmas = map[string]bool{
	"table_info": true, "table_xinfo": true, "index_list": true, "index_info": true,
	"index_xinfo": true, "foreign_key_list": true, "foreign_key_check": true, "table_list": true,
}

// pragmaAllowed is the one pragma policy, shared by Classify and the
// connection authorizer.
func pragmaAllowed(name string, hasArg bool) bool {
	name = asciiLower(name)
	if hasArg {
		return argPragmas[name]
	}
	return readPragmas[name]
}

// Classify is the SQL guard. It checks that sql is exactly one statement
// (semicolons inside strings, quoted names and comments do not count), tells
// its kind, and refuses what must never run against Home Assistant's
// database whatever the caller was granted: ATTACH/DETACH, load_extension and
// the file functions, VACUUM INTO, CREATE TRIGGER, and any PRAGMA outside the
// read-only allow-list (every pragma assignment included). Refusals wrap
// ErrRefused and name the construct. Read-only mode is checked separately by
// Statement.RequireRead.
func Classify(sql string) (Statement, error) {
	toks, err := tokenize(sql)
	if err != nil {
		return Statement{}, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	lower := asciiLower(sql)
	for _, name := range forbiddenNames {
		if strings.Contains(lower, name) {
			return Statement{}, refuse("%s is not allowed: it reaches outside the database (native code or files); remove every mention of it, comments included", name)
		}
	}
	stmt, err := single(toks)
	if err != nil {
		return Statement{}, err
	}
	for _, t := range stmt {
		if t.is("ATTACH") || t.is("DETACH") {
			return Statement{Kind: KindAttach, Verb: t.upper()}, refuse("%s is not allowed: database tools work on the recorder database only", t.upper())
		}
	}
	return classifyTokens(stmt)
}

// single returns the tokens of the only statement in toks.
func single(toks []token) ([]token, error) {
	var stmts [][]token
	cur := []token{}
	for _, t := range toks {
		if t.kind == tokSemicolon {
			if len(cur) > 0 {
				stmts = append(stmts, cur)
			}
			cur = []token{}
			continue
		}
		cur = append(cur, t)
	}
	if len(cur) > 0 {
		stmts = append(stmts, cur)
	}
	switch len(stmts) {
	case 0:
		return nil, refuse("sql is empty: give one SQL statement, e.g. SELECT entity_id FROM states_meta LIMIT 10")
	case 1:
		return stmts[0], nil
	}
	return nil, refuse("sql holds %d statements separated by ';': send one statement per call", len(stmts))
}

func classifyTokens(toks []token) (Statement, error) {
	first := toks[0]
	verb := first.upper()
	st := Statement{Verb: verb, HasLimit: topLevelLimit(toks)}
	switch verb {
	case "SELECT", "VALUES":
		st.Kind, st.ReadOnly = KindRead, true
	case "WITH":
		main, err := afterCTEs(toks)
		if err != nil {
			return st, err
		}
		st.Kind, st.ReadOnly = verbKind(main), main == "SELECT" || main == "VALUES"
	case "INSERT", "REPLACE", "UPDATE", "DELETE":
		st.Kind = KindWrite
	case "CREATE":
		if isTrigger(toks) {
			return Statement{Kind: KindDDL, Verb: verb}, refuse("CREATE TRIGGER is not allowed: a trigger would run inside Home Assistant's own writes")
		}
		st.Kind = KindDDL
	case "DROP", "ALTER", "REINDEX", "ANALYZE":
		st.Kind = KindDDL
	case "BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE":
		st.Kind = KindTransaction
	case "VACUUM":
		st.Kind = KindOther
		for _, t := range toks[1:] {
			if t.is("INTO") {
				return st, refuse("VACUUM INTO is not allowed: it writes a copy of the database to another file")
			}
		}
	case "PRAGMA":
		return classifyPragma(toks)
	case "EXPLAIN":
		rest := toks[1:]
		if len(rest) >= 2 && rest[0].is("QUERY") && rest[1].is("PLAN") {
			rest = rest[2:]
		}
		if len(rest) == 0 {
			return st, refuse("EXPLAIN needs a statement after it, e.g. EXPLAIN QUERY PLAN SELECT …")
		}
		inner, err := classifyTokens(rest)
		if err != nil {
			return inner, err
		}
		inner.Verb = "EXPLAIN"
		return inner, nil
	default:
		return st, refuse("statement starts with %q, which is not a SQL statement this tool runs: start with SELECT, WITH, VALUES, EXPLAIN or PRAGMA (a write needs the write tool)", first.text)
	}
	return st, nil
}

func verbKind(verb string) Kind {
	if verb == "SELECT" || verb == "VALUES" {
		return KindRead
	}
	return KindWrite
}

// afterCTEs finds the statement a WITH clause belongs to: the first of
// SELECT/VALUES/INSERT/REPLACE/UPDATE/DELETE outside parentheses. A CTE
// named like a write keyword makes the answer a write, which only ever
// refuses a read, never lets a write through.
func afterCTEs(toks []token) (string, error) {
	depth := 0
	for _, t := range toks[1:] {
		switch t.kind {
		case tokLParen:
			depth++
		case tokRParen:
			depth--
		case tokWord:
			if depth != 0 {
				continue
			}
			switch v := t.upper(); v {
			case "SELECT", "VALUES", "INSERT", "REPLACE", "UPDATE", "DELETE":
				return v, nil
			}
		}
	}
	return "", refuse("WITH is not followed by SELECT, VALUES, INSERT, UPDATE or DELETE")
}

func topLevelLimit(toks []token) bool {
	depth := 0
	for _, t := range toks {
		switch {
		case t.kind == tokLParen:
			depth++
		case t.kind == tokRParen:
			depth--
		case depth == 0 && t.is("LIMIT"):
			return true
		}
	}
	return false
}

// isTrigger: CREATE [TEMP|TEMPORARY] TRIGGER.
func isTrigger(toks []token) bool {
	for _, t := range toks[1:min(len(toks), 3)] {
		if t.is("TRIGGER") {
			return true
		}
		if !t.is("TEMP") && !t.is("TEMPORARY") {
			return false
		}
	}
	return false
}

// classifyPragma accepts PRAGMA [schema.]name, and PRAGMA [schema.]name(arg)
// or = arg only for the pragmas that describe a table or index.
func classifyPragma(toks []token) (Statement, error) {
	st := Statement{Kind: KindPragma, Verb: "PRAGMA"}
	rest := toks[1:]
	name, rest, ok := pragmaName(rest)
	if !ok {
		return st, refuse("PRAGMA needs a name, e.g. PRAGMA table_info(states)")
	}
	if len(rest) >= 2 && rest[0].kind == tokPunct && rest[0].text == "." {
		name, rest, ok = pragmaName(rest[1:])
		if !ok {
			return st, refuse("PRAGMA schema.name: the name after '.' is missing")
		}
	}
	st.Pragma = asciiLower(name)
	hasArg := len(rest) > 0
	if !pragmaAllowed(st.Pragma, hasArg) {
		if hasArg && readPragmas[st.Pragma] {
			return st, refuse("PRAGMA %s with a value is not allowed: it would change the database or the connection; PRAGMA %s without a value only reads it", st.Pragma, st.Pragma)
		}
		return st, refuse("PRAGMA %s is not allowed: only read-only pragmas run here (e.g. table_info, index_list, index_info, database_list, schema_version, page_count)", st.Pragma)
	}
	if hasArg {
		ok := len(rest) == 2 && rest[0].kind == tokPunct && rest[0].text == "=" && isName(rest[1]) ||
			len(rest) == 3 && rest[0].kind == tokLParen && isName(rest[1]) && rest[2].kind == tokRParen
		if !ok {
			return st, refuse("PRAGMA %s takes one table or index name, e.g. PRAGMA %s(states)", st.Pragma, st.Pragma)
		}
	}
	st.ReadOnly = true
	return st, nil
}

func pragmaName(toks []token) (string, []token, bool) {
	if len(toks) == 0 || !isName(toks[0]) {
		return "", toks, false
	}
	return toks[0].value(), toks[1:], true
}

func isName(t token) bool {
	return t.kind == tokWord || t.kind == tokQuotedID || t.kind == tokString
}

// RequireRead refuses a statement that is not read-only; the read-only
// connection runs nothing else.
func (s Statement) RequireRead() error {
	if s.ReadOnly {
		return nil
	}
	return refuse("%s is a %s statement and this call is read-only: use SELECT/WITH/VALUES/EXPLAIN or a read-only PRAGMA here; a write needs the write tool", s.Verb, s.Kind)
}

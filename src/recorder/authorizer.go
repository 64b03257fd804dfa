package recorder

import (
	"context"
	"database/sql/driver"
	"fmt"

	"modernc.org/sqlite"
)

// SQLite's authorizer is the engine-level half of the guard: Classify
// rejects text, the authorizer rejects what the compiled statement would
// actually do. Each policy lives on a private Driver, so the hook touches our
// connections only and never the rest of the process's SQLite use.
var (
	readDriver  = guardedDriver(false)
	writeDriver = guardedDriver(true)
)

func guardedDriver(write bool) *sqlite.Driver {
	d := &sqlite.Driver{}
	d.RegisterConnectionHook(func(c sqlite.ExecQuerierContext, _ string) error {
		r, ok := c.(sqlite.AuthorizerRegisterer)
		if !ok {
			return fmt.Errorf("recorder: the SQLite driver cannot install an authorizer; refusing to open without it")
		}
		return r.RegisterAuthorizer(func(action sqlite.AuthorizerActionCode, arg1, arg2, _, _ string) sqlite.AuthorizerReturnCode {
			if authorize(write, action, arg1, arg2) {
				return sqlite.AuthorizerOK
			}
			return sqlite.AuthorizerDeny
		})
	})
	return d
}

// authorize is the policy. Reads: SELECT, reading columns, recursive CTEs,
// functions other than the forbidden ones, and the read-only pragmas.
// Writes add row changes, schema changes and our own BEGIN/COMMIT/ROLLBACK;
// never ATTACH, triggers, virtual tables or savepoints.
func authorize(write bool, action sqlite.AuthorizerActionCode, arg1, arg2 string) bool {
	switch action {
	case sqlite.AuthSelect, sqlite.AuthRead, sqlite.AuthRecursive:
		return true
	case sqlite.AuthFunction:
		name := asciiLower(arg2)
		for _, f := range forbiddenNames {
			if name == f {
				return false
			}
		}
		return true
	case sqlite.AuthPragma:
		// modernc passes a NULL argument as "": "PRAGMA x" and "PRAGMA x('')"
		// look alike here, which is why query_only and mode=ro stay on too.
		return pragmaAllowed(arg1, arg2 != "")
	case sqlite.AuthInsert, sqlite.AuthUpdate, sqlite.AuthDelete, sqlite.AuthTransaction,
		sqlite.AuthCreateIndex, sqlite.AuthCreateTable, sqlite.AuthCreateView,
		sqlite.AuthCreateTempIndex, sqlite.AuthCreateTempTable, sqlite.AuthCreateTempView,
		sqlite.AuthDropIndex, sqlite.AuthDropTable, sqlite.AuthDropView,
		sqlite.AuthDropTempIndex, sqlite.AuthDropTempTable, sqlite.AuthDropTempView,
		sqlite.AuthAlterTable, sqlite.AuthReindex, sqlite.AuthAnalyze:
		return write
	}
	return false
}

// connector opens connections to one DSN through one of our drivers.
type connector struct {
	d   *sqlite.Driver
	dsn string
}

func (c connector) Connect(context.Context) (driver.Conn, error) { return c.d.Open(c.dsn) }
func (c connector) Driver() driver.Driver                        { return c.d }

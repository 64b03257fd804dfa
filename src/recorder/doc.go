// Package recorder reads Home Assistant's recorder database
// (home-assistant_v2.db): a WAL-mode SQLite file written by HA's single
// recorder thread, which caches ids in memory and fails a commit after
// waiting ~5 s on a lock.
//
// So this package reads with mode=ro, PRAGMA query_only, a busy timeout and
// an authorizer, one short autocommit statement at a time (paging re-runs a
// query instead of keeping a cursor open), and never holds a transaction or
// lock between calls. Classify is the SQL guard every caller-supplied
// statement passes first. Writes (Exec) happen only when the caller allows
// them, on a connection opened for the call, in one bounded transaction.
// PurgeOffline deletes old history like HA's purge, for when HA is stopped.
//
// It knows nothing of MCP; the database toolset wraps it.
package recorder

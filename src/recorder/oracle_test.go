package recorder

import (
	"fmt"
	"sync"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// sqliteSplitter asks SQLite's own parser where statements end, through
// sqlite3_prepare_v2's tail pointer on a raw handle (database/sql hides
// the tail). It is the independent judge of Classify's single-statement
// check.
type sqliteSplitter struct {
	mu  sync.Mutex
	tls *libc.TLS
	db  uintptr
	// out receives the C out-parameters (db or statement, tail). It lives
	// in this heap object, which the GC never moves, so its address can
	// be handed to the C code as a uintptr.
	out [2]uintptr
}

func (o *sqliteSplitter) outPtr(i int) uintptr { return uintptr(unsafe.Pointer(&o.out[i])) }

func newSplitter(path string) (*sqliteSplitter, error) {
	o := &sqliteSplitter{tls: libc.NewTLS()}
	name, err := libc.CString(path)
	if err != nil {
		return nil, err
	}
	defer libc.Xfree(o.tls, name)
	if rc := sqlite3.Xsqlite3_open_v2(o.tls, name, o.outPtr(0), sqlite3.SQLITE_OPEN_READONLY, 0); rc != sqlite3.SQLITE_OK {
		return nil, fmt.Errorf("sqlite3_open_v2 %s: rc %d", path, rc)
	}
	o.db = o.out[0]
	return o, nil
}

// statements reports how many statements SQLite would run from s, in
// order, until one fails to compile: more than 1 means text after the
// first statement would run too. (An unknown table stops it at 0.)
func (o *sqliteSplitter) statements(s string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	z, err := libc.CString(s)
	if err != nil {
		return 0
	}
	defer libc.Xfree(o.tls, z)
	n := 0
	for cur := z; ; {
		o.out = [2]uintptr{}
		rc := sqlite3.Xsqlite3_prepare_v2(o.tls, o.db, cur, -1, o.outPtr(0), o.outPtr(1))
		if stmt := o.out[0]; stmt != 0 {
			sqlite3.Xsqlite3_finalize(o.tls, stmt)
			n++
		}
		if rc != sqlite3.SQLITE_OK {
			if n > 0 {
				n++ // a later statement failed to compile, but earlier ones would run
			}
			return n
		}
		tail := o.out[1]
		if tail <= cur || int(tail-z) >= len(s) {
			return n
		}
		cur = tail
	}
}

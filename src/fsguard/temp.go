package fsguard

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// Temp files and directories (for atomic writes, restores and moves between roots) are created next to
// their target under a recognisable name, and noted in TrashDir/pending first, so a New after a crash
// removes exactly the leftovers without scanning the roots.

const tempPrefix = ".hamcp-tmp-"

func newTempName() string { return fmt.Sprintf("%s%016x", tempPrefix, rand.Uint64()) }

func isTempName(name string) bool {
	hex, ok := strings.CutPrefix(name, tempPrefix)
	if !ok || len(hex) != 16 {
		return false
	}
	for i := 0; i < len(hex); i++ {
		if !('0' <= hex[i] && hex[i] <= '9' || 'a' <= hex[i] && hex[i] <= 'f') {
			return false
		}
	}
	return true
}

// journalEntry is one pending temp file.
type journalEntry struct {
	Alias string `json:"alias"`
	Rel   string `json:"rel"`
}

// parseJournal reads a pending note, accepting only a temp name under a well-formed path.
func parseJournal(data []byte) (journalEntry, error) {
	var e journalEntry
	if err := json.Unmarshal(data, &e); err != nil {
		return e, err
	}
	alias, rel, reason := splitPath(e.Alias + "/" + e.Rel)
	if reason != "" || alias != e.Alias || rel != e.Rel {
		return e, errors.New("pending note names a malformed path")
	}
	if _, name := parentRel(rel); !isTempName(name) {
		return e, errors.New("pending note names something other than a temp file")
	}
	return e, nil
}

// startTemp picks a temp name in dirRel and notes it as pending. done removes the note; call it once the
// temp is renamed into place or removed.
func (f *FS) startTemp(r *rootEntry, dirRel string) (tmpRel string, done func(), err error) {
	name := newTempName()
	tmpRel = joinRel(dirRel, name)
	note := filepath.Join(f.trash.pending, name+".json")
	// Not fsynced: a process crash keeps it (the page cache survives); a power cut can lose it together
	// with the temp's directory entry, or leak one hidden temp file, never a user's data.
	data, _ := json.Marshal(journalEntry{Alias: r.cfg.Alias, Rel: tmpRel})
	if err := os.WriteFile(note, data, 0o600); err != nil {
		return "", nil, fmt.Errorf("noting the temp file: %w", err)
	}
	return tmpRel, func() { os.Remove(note) }, nil
}

// cleanPending removes temp files a crashed process left behind.
func (f *FS) cleanPending() {
	entries, err := os.ReadDir(f.trash.pending)
	if err != nil {
		return
	}
	for _, de := range entries {
		note := filepath.Join(f.trash.pending, de.Name())
		data, err := os.ReadFile(note)
		if err != nil {
			continue
		}
		if e, err := parseJournal(data); err == nil {
			r := f.byAlias[e.Alias]
			if r == nil {
				continue // the root is not mounted now; keep the note for a later start
			}
			if !r.cfg.ReadOnly && r.root.RemoveAll(e.Rel) != nil {
				continue // keep the note and try again next time
			}
		}
		os.Remove(note)
	}
}

package fstools

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/hamcp/hamcp/src/fsguard"
	"github.com/hamcp/hamcp/src/toolkit"
)

// UndoFile is the type of the undo the file tools register (FileUndo).
const UndoFile = "file"

// File undo operations: what taking a change back does.
const (
	UndoRestore = "restore" // bring TrashID back to Path (the earlier content, or a deleted file)
	UndoDelete  = "delete"  // move Path to the trash (a file the change created)
	UndoMove    = "move"    // move Path back to To
)

// FileUndo is the reference of a UndoFile undo.
type FileUndo struct {
	Op      string `json:"op"`
	Path    string `json:"path"`
	TrashID string `json:"trash_id,omitempty"`
	To      string `json:"to,omitempty"`
	// Overwrite: the restore replaces what is at Path now (which goes to the trash in turn).
	Overwrite bool `json:"overwrite,omitempty"`
}

func (u FileUndo) undo(note string) toolkit.Undo { return toolkit.UndoOf(UndoFile, u, note) }

// writeUndo: an overwritten file comes back from the trash; a created one goes to it.
func writeUndo(res fsguard.WriteResult) toolkit.Undo {
	if res.Created || res.PreviousVersionID == "" {
		return FileUndo{Op: UndoDelete, Path: res.Path}.undo("Undo moves " + res.Path + " to the trash: it did not exist before.")
	}
	return FileUndo{Op: UndoRestore, Path: res.Path, TrashID: res.PreviousVersionID, Overwrite: true}.
		undo("Undo puts the earlier " + res.Path + " back from the trash; the current one goes to the trash.")
}

func deleteUndo(item fsguard.TrashItem) toolkit.Undo {
	return FileUndo{Op: UndoRestore, Path: item.Path, TrashID: item.ID}.undo("Undo brings " + item.Path + " back from the trash.")
}

func moveUndo(from, to string, overwrite bool) toolkit.Undo {
	note := "Undo moves " + to + " back to " + from + "."
	if overwrite {
		note += " A file it replaced stays in the trash (ha_restore_file)."
	}
	return FileUndo{Op: UndoMove, Path: to, To: from}.undo(note)
}

func restoreUndo(item fsguard.TrashItem) toolkit.Undo {
	return FileUndo{Op: UndoDelete, Path: item.RestoredTo}.undo("Undo moves " + item.RestoredTo + " to the trash again.")
}

// ApplyUndo takes a file change back and returns how to take the undo back in turn: nothing is lost
// either way, since whatever the undo replaces or removes goes to the trash first.
func ApplyUndo(f *fsguard.FS, u FileUndo) (toolkit.Undo, error) {
	if f == nil {
		return toolkit.Undo{}, errors.New("the file tools are off in this hamcp")
	}
	switch u.Op {
	case UndoRestore:
		item, err := f.Restore(u.TrashID, u.Path, u.Overwrite)
		if err != nil {
			return toolkit.Undo{}, undoError(err)
		}
		if !u.Overwrite {
			return restoreUndo(item), nil
		}
		// What the restore replaced went to the trash: the newest version kept for the path.
		if items, err := f.Trash(item.RestoredTo); err == nil && len(items) > 0 {
			return FileUndo{Op: UndoRestore, Path: item.RestoredTo, TrashID: items[0].ID, Overwrite: true}.
				undo("Undo puts back the " + item.RestoredTo + " this undo replaced."), nil
		}
		return toolkit.Undo{Note: "The replaced " + item.RestoredTo + " is in the trash (ha_restore_file)."}, nil
	case UndoDelete:
		item, err := f.Delete(u.Path, false)
		if err != nil {
			return toolkit.Undo{}, undoError(err)
		}
		return deleteUndo(item), nil
	case UndoMove:
		if err := f.Move(u.Path, u.To, false); err != nil {
			return toolkit.Undo{}, undoError(err)
		}
		return moveUndo(u.Path, u.To, false), nil
	}
	return toolkit.Undo{}, fmt.Errorf("unknown file undo %q", u.Op)
}

// undoError says what stands in the way in words for the user, who is not the model.
func undoError(err error) error {
	switch {
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("a file is there now, and undo does not replace it: %w", err)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("what undo needs is gone (the trash keeps files for a limited time): %w", err)
	}
	return err
}

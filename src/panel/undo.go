package panel

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
)

// UndoFunc takes back the change audit entry id recorded, for the panel user named by. approved is
// the Digest of the confirmation the user answered ("" on the first press): an undo the user must
// confirm (it moves a lock, an alarm, a garage door, or restores a configuration that reaches one)
// changes nothing until approved equals the digest of what it would do now, and answers with the
// question instead. An error says why nothing was undone.
type UndoFunc func(ctx context.Context, id int64, by User, approved string) (UndoResult, error)

// UndoResult is what an undo did, or what it asks first.
type UndoResult struct {
	// Done says what was put back ("light.kitchen is back: on, brightness 120").
	Done string
	// Confirm, when set, is the question to ask: nothing was done.
	Confirm *UndoConfirm
	// Partial, when set, says an undo stopped part way: what ran, what failed. What ran is in the
	// log as an entry of its own that can be undone; the entry undone is not marked.
	Partial string
}

// UndoConfirm is the confirmation a sensitive undo needs: the question, in plain words ("Undo will
// open the garage door cover.garage. Undo?"), and the digest that binds the user's yes to exactly
// that effect.
type UndoConfirm struct {
	Question string
	Digest   string
}

// undoInfo is what the panel reads of an entry's undo reference (toolkit.Undo as JSON): whether it
// can be undone and the sentence that says what undo does, or why it cannot.
type undoInfo struct {
	Type string `json:"type"`
	Note string `json:"note"`
	Read bool   `json:"read"` // the call only read
}

func parseUndo(raw string) undoInfo {
	var u undoInfo
	if raw == "" || json.Unmarshal([]byte(raw), &u) != nil {
		return undoInfo{}
	}
	return u
}

// cannotUndo says plainly why an entry offers no Undo, when its tool did not say.
var cannotUndo = map[string]string{
	"device":     "hamcp cannot put back what this did.",
	"config":     "hamcp kept no earlier version of this.",
	"file":       "hamcp kept nothing to put back.",
	"database":   "hamcp keeps no copy of the rows a statement changed.",
	"command":    "What a command did cannot be taken back.",
	"hub":        "Hub administration cannot be taken back from here.",
	"permission": "Grants are revoked on Approvals.",
}

// undoPost is POST /activity/{id}/undo: the Undo button, and the confirmation's yes (approved).
func (p *Panel) undoPost(w http.ResponseWriter, r *http.Request) {
	u, ok := p.checkPost(w, r)
	if !ok {
		return
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		p.notFound(w, r)
		return
	}
	if p.o.Undo == nil {
		p.activityWith(w, r, activityNote{Error: "Undo is not available in this hamcp."})
		return
	}
	res, err := p.o.Undo(r.Context(), id, u, r.PostForm.Get("approved"))
	switch {
	case err != nil:
		p.log.Info("panel: undo refused", "entry", id, "user", u.ID, "err", err)
		p.activityWith(w, r, activityNote{Error: "Not undone: " + err.Error()})
	case res.Confirm != nil:
		p.activityWith(w, r, activityNote{Confirm: &confirmView{ID: id, UndoConfirm: *res.Confirm}})
	case res.Partial != "":
		p.log.Info("panel: partly undone", "entry", id, "user", u.ID)
		p.activityWith(w, r, activityNote{Error: "Partly undone: " + res.Partial})
	default:
		p.log.Info("panel: undone", "entry", id, "user", u.ID)
		done(w, r, "activity", "undone")
	}
}

package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hamcp/hamcp/src/confighistory"
	"github.com/hamcp/hamcp/src/panel"
	"github.com/hamcp/hamcp/src/store"
	"github.com/hamcp/hamcp/src/toolkit"
	"github.com/hamcp/hamcp/src/tools/fstools"
	"github.com/hamcp/hamcp/src/tools/hatools"
)

// undoMu runs one undo at a time: between reading that an entry is not undone yet and marking it,
// no second press may start the same undo.
var undoMu sync.Mutex

// panelUndo is the panel's Undo (panel.Options.Undo): it takes back the change audit entry id
// recorded, records the undo itself in the audit log (undoable in turn), and marks the entry undone.
func (a *App) panelUndo(ctx context.Context, id int64, by panel.User, approved string) (panel.UndoResult, error) {
	undoMu.Lock()
	defer undoMu.Unlock()
	e, err := a.Store.GetAudit(ctx, id)
	if errors.Is(err, store.ErrNoAuditEntry) {
		return panel.UndoResult{}, errors.New("that entry is not in the log any more")
	}
	if err != nil {
		return panel.UndoResult{}, err
	}
	var u toolkit.Undo
	switch {
	case e.Undone():
		return panel.UndoResult{}, fmt.Errorf("%s undid it already, at %s", e.UndoneBy, e.UndoneAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	case e.Outcome != store.OutcomeOK && e.Outcome != store.OutcomePartial:
		return panel.UndoResult{}, errors.New("the call did not succeed, so there is nothing to undo")
	case e.Undo == "" || json.Unmarshal([]byte(e.Undo), &u) != nil || !u.Possible():
		why := "hamcp kept nothing to undo it with"
		if u.Note != "" {
			why = u.Note
		}
		return panel.UndoResult{}, errors.New("it cannot be undone: " + why)
	}
	undoer, ok := a.undoers()[u.Type]
	if !ok {
		return panel.UndoResult{}, fmt.Errorf("this hamcp cannot undo %q changes", u.Type)
	}
	plan, err := undoer(ctx, u.Ref)
	if err != nil {
		return panel.UndoResult{}, err
	}
	if plan.question != "" && approved != plan.digest {
		return panel.UndoResult{Confirm: &panel.UndoConfirm{Question: plan.question, Digest: plan.digest}}, nil
	}
	next, err := plan.apply(ctx, by.Label())
	entry := store.AuditEntry{Time: time.Now().UTC(), Client: "hamcp panel", Principal: by.Label(), Tool: "undo", Kind: e.Kind,
		ArgsSummary: fmt.Sprintf("#%d %s %s", e.ID, e.Tool, e.ArgsSummary), Outcome: store.OutcomeOK, Detail: plan.what}
	if plan.question != "" {
		entry.Detail += " (confirmed in the panel)"
	}
	partial := err != nil && next.Possible()
	switch {
	case partial:
		// Some of it ran: the entry says so and takes back what ran; the entry undone stays as it is.
		entry.Outcome, entry.Detail = store.OutcomePartial, err.Error()
	case err != nil:
		entry.Outcome, entry.Detail = store.OutcomeError, err.Error()
	}
	if (err == nil || partial) && (next.Type != "" || next.Note != "") {
		raw, _ := json.Marshal(next)
		entry.Undo = string(raw)
	}
	// The log is written before the answer: the page the user is sent back to shows the undo.
	if aerr := a.Store.AppendAudit(context.WithoutCancel(ctx), entry); aerr != nil {
		a.Logger.Error("undo: not written to the audit log", "entry", id, "err", aerr)
	}
	if partial {
		return panel.UndoResult{Partial: err.Error() + ". What ran is listed first below; its Undo takes it back."}, nil
	}
	if err != nil {
		return panel.UndoResult{}, err
	}
	if err := a.Store.MarkUndone(context.WithoutCancel(ctx), id, by.Label(), time.Now()); err != nil {
		a.Logger.Error("undo: done but not marked in the audit log", "entry", id, "err", err)
	}
	return panel.UndoResult{Done: plan.what}, nil
}

// undoPlan is what an undo will do, read before anything changes.
type undoPlan struct {
	what string
	// question, when set, is asked in the panel first; digest binds the user's yes to this plan.
	question, digest string
	// apply does it and returns how to undo the undo. An error with a possible Undo means it
	// stopped part way: the Undo takes back what ran.
	apply func(ctx context.Context, by string) (toolkit.Undo, error)
}

// undoers plan an undo from its reference, one per toolkit.Undo type.
func (a *App) undoers() map[string]func(ctx context.Context, ref json.RawMessage) (undoPlan, error) {
	return map[string]func(ctx context.Context, ref json.RawMessage) (undoPlan, error){
		hatools.UndoConfig: a.planConfigUndo,
		fstools.UndoFile:   a.planFileUndo,
		hatools.UndoState:  a.planStateUndo,
	}
}

func (a *App) undoDeps(ctx context.Context) (hatools.Deps, error) {
	// Opening is the migration check (applied already) and a handle on the shared database.
	h, err := confighistory.Open(ctx, a.Store)
	if err != nil {
		return hatools.Deps{}, err
	}
	return hatools.Deps{HA: a.HA, Files: a.Files, SensitiveEntities: a.Config.SensitiveEntities, History: h}, nil
}

func (a *App) planConfigUndo(ctx context.Context, raw json.RawMessage) (undoPlan, error) {
	var ref hatools.ConfigUndo
	if err := json.Unmarshal(raw, &ref); err != nil {
		return undoPlan{}, fmt.Errorf("the undo reference is unreadable: %w", err)
	}
	d, err := a.undoDeps(ctx)
	if err != nil {
		return undoPlan{}, err
	}
	p, err := hatools.PlanConfigUndo(ctx, d, ref)
	if err != nil {
		return undoPlan{}, err
	}
	plan := undoPlan{what: p.What, apply: func(ctx context.Context, by string) (toolkit.Undo, error) {
		next, err := hatools.ApplyConfigUndo(ctx, d, ref, by)
		if err != nil || next.Version == 0 {
			return toolkit.Undo{}, err
		}
		return toolkit.UndoOf(hatools.UndoConfig, next, "Undo puts "+next.Item+" back as it was before this undo."), nil
	}}
	if len(p.Sensitive) > 0 {
		plan.question = p.What + " What it restores can " + strings.Join(p.Sensitive, "; ") + ". Undo?"
		plan.digest = p.Digest
	}
	return plan, nil
}

func (a *App) planFileUndo(ctx context.Context, raw json.RawMessage) (undoPlan, error) {
	var ref fstools.FileUndo
	if err := json.Unmarshal(raw, &ref); err != nil {
		return undoPlan{}, fmt.Errorf("the undo reference is unreadable: %w", err)
	}
	what := map[string]string{
		fstools.UndoRestore: ref.Path + " is back from the trash.",
		fstools.UndoDelete:  ref.Path + " is in the trash (it did not exist before).",
		fstools.UndoMove:    ref.Path + " is back at " + ref.To + ".",
	}[ref.Op]
	if what == "" {
		return undoPlan{}, fmt.Errorf("unknown file undo %q", ref.Op)
	}
	return undoPlan{what: what, apply: func(ctx context.Context, by string) (toolkit.Undo, error) {
		return fstools.ApplyUndo(a.Files, ref)
	}}, nil
}

// serviceCall is one call that puts an entity back.
type serviceCall struct {
	Domain  string         `json:"domain"`
	Service string         `json:"service"`
	Data    map[string]any `json:"data"`
}

func (a *App) planStateUndo(ctx context.Context, raw json.RawMessage) (undoPlan, error) {
	var ref hatools.StateUndo
	if err := json.Unmarshal(raw, &ref); err != nil || len(ref.Entities) == 0 {
		return undoPlan{}, errors.New("the undo reference names no entity")
	}
	d, err := a.undoDeps(ctx)
	if err != nil {
		return undoPlan{}, err
	}
	sensitive, err := hatools.SensitiveEntities(ctx, d)
	if err != nil {
		// Not knowing what is sensitive is not a reason to move it unasked.
		return undoPlan{}, fmt.Errorf("hamcp could not read which entities are sensitive, so it changed nothing: %w", err)
	}
	isSensitive := map[string]bool{}
	for _, s := range sensitive {
		isSensitive[s.EntityID] = true
	}
	var calls []serviceCall
	var of []int // of[i]: the entity calls[i] puts back
	var whats, touches []string
	var now []hatools.EarlierState
	for _, e := range ref.Entities {
		// Every entity is read and every call worked out before the first runs: one that cannot be
		// put back stops the undo before anything changed.
		cur, err := a.HA.State(ctx, e.EntityID)
		if err != nil {
			return undoPlan{}, fmt.Errorf("%s cannot be read now, so nothing was changed: %w", e.EntityID, err)
		}
		cs, what, err := restoreCalls(e)
		if err != nil {
			return undoPlan{}, err
		}
		for range cs {
			of = append(of, len(now))
		}
		calls = append(calls, cs...)
		whats = append(whats, what)
		now = append(now, hatools.EarlierStateOf(cur))
		if isSensitive[e.EntityID] {
			touches = append(touches, what)
		}
	}
	plan := undoPlan{what: "Put back: " + strings.Join(whats, "; ") + "."}
	// What the calls reach is decided as ha_call_service decides it: a sensitive entity, or a script
	// or one of the user's automations the change starts. Not knowing is not a reason to go ahead.
	hc := make([]hatools.ServiceCall, 0, len(calls))
	for _, c := range calls {
		id, _ := c.Data["entity_id"].(string)
		hc = append(hc, hatools.ServiceCall{Domain: c.Domain, Service: c.Service, EntityID: id, Data: c.Data})
	}
	ask, err := hatools.CallsAsk(ctx, d, "Undo will "+strings.Join(whats, "; ")+".", hc)
	if err != nil {
		return undoPlan{}, fmt.Errorf("hamcp could not tell what this undo would reach, so it changed nothing: %w", err)
	}
	// Moving a sensitive entity either way (closing the garage the assistant opened) is the user's
	// call too, even where the move itself is harmless.
	switch {
	case len(ask.Classes) > 0:
		plan.question = ask.Question + " Undo?"
	case len(touches) > 0:
		plan.question = "Undo will " + strings.Join(touches, "; ") + ". Undo?"
	}
	if plan.question != "" {
		sum, _ := json.Marshal(calls)
		h := sha256.Sum256(append(sum, ask.Digest...))
		plan.digest = hex.EncodeToString(h[:16])
	}
	plan.apply = func(ctx context.Context, by string) (toolkit.Undo, error) {
		for i, c := range calls {
			if _, _, err := a.HA.CallService(ctx, c.Domain, c.Service, c.Data, false); err != nil {
				if i == 0 {
					return toolkit.Undo{}, fmt.Errorf("%s.%s failed, nothing was changed: %w", c.Domain, c.Service, err)
				}
				// The entities whose calls ran, the one cut short included, can go back to how they
				// were before this undo; the user decides, from the entry this leaves.
				touched := now[:of[i-1]+1]
				ids := make([]string, len(touched))
				for j, e := range touched {
					ids[j] = e.EntityID
				}
				return toolkit.UndoOf(hatools.UndoState, hatools.StateUndo{Entities: touched}, "Undo puts "+strings.Join(ids, ", ")+" back as before this undo."),
					fmt.Errorf("%s.%s failed after %d of %d calls had run, so %s changed and the rest did not: %w",
						c.Domain, c.Service, i, len(calls), strings.Join(ids, ", "), err)
			}
		}
		return toolkit.UndoOf(hatools.UndoState, hatools.StateUndo{Entities: now}, "Undo puts them back as they were before this undo."), nil
	}
	return plan, nil
}

// restoreCalls are the service calls that put e back, where its domain allows it, and the words
// that say what they do.
func restoreCalls(e hatools.EarlierState) ([]serviceCall, string, error) {
	id := e.EntityID
	domain, _, _ := strings.Cut(id, ".")
	attr := e.Attributes
	call := func(service string, data map[string]any) serviceCall {
		if data == nil {
			data = map[string]any{}
		}
		data["entity_id"] = id
		return serviceCall{Domain: domain, Service: service, Data: data}
	}
	onOff := func(extra map[string]any, detail string) ([]serviceCall, string, error) {
		switch e.State {
		case "on":
			return []serviceCall{call("turn_on", extra)}, "turn " + id + " on" + detail, nil
		case "off":
			return []serviceCall{call("turn_off", nil)}, "turn " + id + " off", nil
		}
		return nil, "", fmt.Errorf("%s was %q, which hamcp cannot put back", id, e.State)
	}
	switch domain {
	case "switch", "input_boolean":
		return onOff(nil, "")
	case "light":
		data, detail := lightData(attr)
		return onOff(data, detail)
	case "fan":
		if p, ok := attr["percentage"]; ok && p != nil && e.State == "on" {
			return onOff(map[string]any{"percentage": p}, fmt.Sprintf(" at %v%%", p))
		}
		return onOff(nil, "")
	case "cover":
		if pos, ok := attr["current_position"]; ok && pos != nil && supports(attr, 4) {
			return []serviceCall{call("set_cover_position", map[string]any{"position": pos})}, fmt.Sprintf("move %s to position %v", id, pos), nil
		}
		switch e.State {
		case "open", "opening":
			return []serviceCall{call("open_cover", nil)}, "open " + id, nil
		case "closed", "closing":
			return []serviceCall{call("close_cover", nil)}, "close " + id, nil
		}
		return nil, "", fmt.Errorf("%s was %q, which hamcp cannot put back", id, e.State)
	case "climate":
		calls := []serviceCall{call("set_hvac_mode", map[string]any{"hvac_mode": e.State})}
		what := "set " + id + " to " + e.State
		switch {
		case attr["temperature"] != nil:
			calls = append(calls, call("set_temperature", map[string]any{"temperature": attr["temperature"]}))
			what += fmt.Sprintf(" at %v°", attr["temperature"])
		case attr["target_temp_low"] != nil && attr["target_temp_high"] != nil:
			calls = append(calls, call("set_temperature", map[string]any{"target_temp_low": attr["target_temp_low"], "target_temp_high": attr["target_temp_high"]}))
			what += fmt.Sprintf(" at %v–%v°", attr["target_temp_low"], attr["target_temp_high"])
		}
		return calls, what, nil
	case "media_player":
		var calls []serviceCall
		if v := attr["volume_level"]; v != nil {
			calls = append(calls, call("volume_set", map[string]any{"volume_level": v}))
		}
		if m := attr["is_volume_muted"]; m != nil {
			calls = append(calls, call("volume_mute", map[string]any{"is_volume_muted": m}))
		}
		if len(calls) == 0 {
			return nil, "", fmt.Errorf("hamcp kept no volume of %s to put back", id)
		}
		return calls, fmt.Sprintf("set %s's volume back to %v", id, attr["volume_level"]), nil
	}
	return nil, "", fmt.Errorf("hamcp cannot put back the state of %s: it restores lights, switches, fans, covers, climate and media volume", id)
}

// lightData is a light's brightness and colour as turn_on takes them, by its colour mode: the
// attribute of the mode it was in, not every colour attribute it reported.
func lightData(attr map[string]any) (map[string]any, string) {
	data := map[string]any{}
	var detail []string
	if b := attr["brightness"]; b != nil {
		data["brightness"] = b
		detail = append(detail, fmt.Sprintf("brightness %v", b))
	}
	mode, _ := attr["color_mode"].(string)
	key := map[string]string{"hs": "hs_color", "xy": "xy_color", "rgb": "rgb_color", "rgbw": "rgbw_color",
		"rgbww": "rgbww_color", "color_temp": "color_temp_kelvin"}[mode]
	if v := attr[key]; key != "" && v != nil {
		data[key] = v
		detail = append(detail, fmt.Sprintf("%s %v", strings.TrimSuffix(key, "_color"), v))
	}
	if len(detail) == 0 {
		return data, ""
	}
	return data, " (" + strings.Join(detail, ", ") + ")"
}

// supports reports whether the entity's supported_features has bit.
func supports(attr map[string]any, bit int) bool {
	f, ok := attr["supported_features"].(float64)
	return ok && int(f)&bit != 0
}

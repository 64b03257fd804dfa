package hubitattools

import (
	"context"
	"fmt"

	"github.com/hamcp/hamcp/src/integrations/hubitat/hubstore"
	"github.com/hamcp/hamcp/src/toolkit"
)

// SetCaptured is the toolset of the captured device states the rules' capture_state and
// restore_state actions share.
const SetCaptured = "hubitat_captured_states"

// MaxCapturedStates is how many captures are kept (upstream's maxCapturedStates default); a
// capture under a new id beyond it evicts the oldest.
const MaxCapturedStates = hubstore.DefaultMaxCapturedStates

func capturedTools(d Deps) []*toolkit.Tool {
	return []*toolkit.Tool{listCapturedStates(d), deleteCapturedState(d), clearCapturedStates(d)}
}

type capturedRow struct {
	StateID     string `json:"stateId"`
	DeviceCount int    `json:"deviceCount"`
	Timestamp   int64  `json:"timestamp"` // Unix milliseconds, as upstream
	CapturedAt  string `json:"capturedAt"`
}

type capturedList struct {
	CapturedStates []capturedRow `json:"capturedStates"`
	Count          int           `json:"count"`
	MaxLimit       int           `json:"maxLimit"`
	Warning        string        `json:"warning,omitempty"`
}

// capacityWarning is upstream's: at the limit, or within 4 of it.
func capacityWarning(count, limit int) string {
	switch {
	case count >= limit:
		return fmt.Sprintf("At maximum capacity (%d). New captures will delete the oldest entry.", limit)
	case count >= limit-4:
		return fmt.Sprintf("Approaching limit: %d/%d slots used. Consider cleaning up unused captures.", count, limit)
	}
	return ""
}

func listCapturedStates(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[noArgs, capturedList]{
		Name: "hubitat_list_captured_states", Toolset: SetCaptured, Title: "List captured Hubitat device states",
		Description: "List the device-state snapshots rules saved with their capture_state action (for restore_state), newest " +
			"first: stateId, how many devices, when. Says the limit (" + fmt.Sprint(MaxCapturedStates) + ") and warns near it: " +
			"a capture under a new id at the limit deletes the oldest. Not the devices' current states (hubitat_list_devices).",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, _ noArgs) (capturedList, error) {
			all, err := d.Store.CapturedStates(ctx)
			if err != nil {
				return capturedList{}, storeError(err)
			}
			out := capturedList{CapturedStates: make([]capturedRow, 0, len(all)), Count: len(all), MaxLimit: MaxCapturedStates,
				Warning: capacityWarning(len(all), MaxCapturedStates)}
			for _, cs := range all {
				out.CapturedStates = append(out.CapturedStates, capturedRow{StateID: cs.ID, DeviceCount: len(cs.Devices),
					Timestamp: cs.CapturedAt.UnixMilli(), CapturedAt: stamp(cs.CapturedAt)})
			}
			return out, nil
		},
	})
}

type stateIDArgs struct {
	StateID string `json:"stateId" jsonschema:"the capture's id as hubitat_list_captured_states shows it" validate:"required,max=100"`
}

type deletedCapture struct {
	Success   bool   `json:"success"`
	Message   string `json:"message"`
	Remaining int    `json:"remaining"`
}

func deleteCapturedState(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[stateIDArgs, deletedCapture]{
		Name: "hubitat_delete_captured_state", Toolset: SetCaptured, Title: "Delete a captured Hubitat device state",
		Description: "Delete one device-state snapshot by stateId. A rule whose restore_state names it then has nothing to " +
			"restore, so check with the user which rules use it. Changes no device.",
		Destructive: true, Idempotent: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a stateIDArgs) (deletedCapture, error) {
			ok, err := d.Store.DeleteCapturedState(ctx, a.StateID)
			if err != nil {
				return deletedCapture{}, storeError(err)
			}
			if !ok {
				return deletedCapture{}, &toolkit.Error{Code: "not_found", Field: "stateId",
					Message: fmt.Sprintf("captured state %q not found", a.StateID), Hint: "hubitat_list_captured_states lists the ids"}
			}
			all, err := d.Store.CapturedStates(ctx)
			if err != nil {
				return deletedCapture{}, storeError(err)
			}
			return deletedCapture{Success: true, Message: fmt.Sprintf("Captured state '%s' deleted", a.StateID), Remaining: len(all)}, nil
		},
	})
}

type clearedCaptures struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
	Cleared int    `json:"cleared"`
}

func clearCapturedStates(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[noArgs, clearedCaptures]{
		Name: "hubitat_clear_captured_states", Toolset: SetCaptured, Title: "Clear captured Hubitat device states",
		Description: "Delete every device-state snapshot. Rules that restore one then have nothing to restore; only when the " +
			"user asks to clean them all up (hubitat_delete_captured_state removes one). Changes no device.",
		Destructive: true, Idempotent: true,
		Handler: func(ctx context.Context, c *toolkit.Call, _ noArgs) (clearedCaptures, error) {
			n, err := d.Store.ClearCapturedStates(ctx)
			if err != nil {
				return clearedCaptures{}, storeError(err)
			}
			return clearedCaptures{Success: true, Message: fmt.Sprintf("Cleared %d captured state(s)", n), Cleared: n}, nil
		},
	})
}

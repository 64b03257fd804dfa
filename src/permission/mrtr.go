package permission

import "errors"

// askedOnRetry reports whether an Elicit callback's error means the question went back to the client
// to be answered on a retry of the call (MCP 2026-07-28 input_required, see toolkit/mrtr.go), not that
// the client failed to ask. Then nothing is decided and no approval request is posted: the retry
// carries the user's answer to the same callback.
func askedOnRetry(err error) bool {
	var e interface{ InputRequired() bool }
	return errors.As(err, &e) && e.InputRequired()
}

package hatools

import "github.com/hamcp/hamcp/src/toolkit"

// updateTools: being written (issue 21).
func updateTools(d Deps) []*toolkit.Tool { return nil }

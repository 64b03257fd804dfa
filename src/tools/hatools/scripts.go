package hatools

import "github.com/hamcp/hamcp/src/toolkit"

// scriptTools: being written (issue 21).
func scriptTools(d Deps) []*toolkit.Tool { return nil }

package hatools

import "github.com/hamcp/hamcp/src/toolkit"

// serviceListTools: being written (issue 21).
func serviceListTools(d Deps) []*toolkit.Tool { return nil }

package hatools

import "github.com/hamcp/hamcp/src/toolkit"

// inputHelperTools: being written (issue 21).
func inputHelperTools(d Deps) []*toolkit.Tool { return nil }

package hatools

import "github.com/hamcp/hamcp/src/toolkit"

// integrationTools: being written (issue 21).
func integrationTools(d Deps) []*toolkit.Tool { return nil }
